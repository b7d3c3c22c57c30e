"""LINEAR keys for any scene channel (kbspline.formats.adaptive.channel_keys)
against an independent playback: lerp / slerp written here from their
definitions between float32 keys, compared with the channel densely (50
points per key interval and points just either side of every key), and the
jumps against the LightWave oracle (tests/lws_oracle.py)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline.formats.adaptive import MIN_KEY_SPACING, _channel_keys, channel_keys, key_times_in
from kbspline.formats.lightwave import LwsChannel
from kbspline.formats.lightwave_envelope import BEHAVIOURS, SPAN_TYPES, Envelope
from kbspline.formats.threeds import read_3ds

import lws_oracle
import lws_writer
from threeds_writer import random_scene, write_3ds

ZERO = (0.0,) * 6


def play(times, values, t, rotation):
    """glTF's LINEAR playback of float32 keys at t, from the formulas."""
    values = values.astype(np.float32).astype(np.float64)
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    s = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0, 1)[:, None]
    a, b = values[k], values[k + 1]
    if not rotation:
        return (1 - s) * a + s * b
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    dot = np.sum(a * b, axis=1, keepdims=True)
    b, dot = np.where(dot < 0, -b, b), np.abs(dot)
    theta = np.arccos(np.minimum(dot, 1.0))
    small = theta < 1e-7
    sin = np.where(small, 1.0, np.sin(theta))
    q = np.where(small, (1 - s) * a + s * b,
                 (np.sin((1 - s) * theta) * a + np.sin(s * theta) * b) / sin)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def distance(p, q, rotation):
    if not rotation:
        return np.linalg.norm(p - q, axis=1)
    chord = np.minimum(np.linalg.norm(p - q, axis=1), np.linalg.norm(p + q, axis=1))
    return 4 * np.arcsin(np.minimum(chord / 2, 1.0))


def dense(times, skip):
    """50 points inside every interval not skipped, and points just either side of each key."""
    u = np.linspace(0, 1, 52)[1:-1]
    inner = (times[:-1, None] + np.diff(times)[:, None] * u)[~skip].ravel()
    near = np.diff(times).min() * 1e-3
    beside = np.concatenate([times[1:][~skip] - near, times[:-1][~skip] + near])
    return np.concatenate([inner, beside, times])


def worst(channel, times, values, jumps, rotation):
    t = dense(times, jumps)
    return float(distance(play(times, values, t, rotation), channel(t), rotation).max())


def misses_only_at_the_floor(channel, times, values, jumps, rotation, tolerance, fixed):
    """Playback is within `tolerance` everywhere but in jump intervals and at
    the floor: an interval shorter than two MIN_KEY_SPACING among keys
    packed that close (1.5 spacings apart on average within eight spacings
    of it, or the channel's keys `fixed` there), where the motion moves too
    fast for keys that close."""
    skip = jumps.copy()
    fixed = np.union1d(fixed, np.concatenate([times[:-1][jumps], times[1:][jumps]]))
    s = MIN_KEY_SPACING
    for i in np.flatnonzero(~jumps):
        a, b = times[i], times[i + 1]
        t = a + (b - a) * np.linspace(0, 1, 52)[1:-1]
        err = distance(play(times, values, t, rotation), channel(t), rotation).max()
        if err > tolerance:
            lo = max(fixed[fixed <= a].max(), a - 8 * s)
            hi = min(fixed[fixed >= b].min(), b + 8 * s)
            near = times[(times >= lo) & (times <= hi)]
            mean = np.ptp(near) / (len(near) - 1)
            # (two of the channel's own keys under 2 spacings apart: no key fits between)
            own = np.isin([a, b], fixed).all()
            assert b - a < 2 * s and (mean <= 1.5 * s or own), (a, b, err)
            skip[i] = True
    return worst(channel, times, values, skip, rotation) <= tolerance


def envelope_keys(spans, continuity=0.0):
    """Keys 0.5 s apart with the given incoming span types, values up and down."""
    keys = [(0.0, 0.0, "tcb", ZERO)]
    for k, span in enumerate(spans, start=1):
        params = (0.3, continuity, -0.2, 0.5, -0.4, 0.0) if span != "bezier2d" else \
            (-0.1, 0.4, 0.1, -0.3, 0.0, 0.0)
        keys.append(((-1) ** k * 1.5 + 0.3 * k, 0.5 * k, span, params))
    return keys


@pytest.mark.parametrize("pre", BEHAVIOURS)
@pytest.mark.parametrize("post", BEHAVIOURS)
def test_every_span_and_behaviour_within_tolerance(pre, post):
    # rotations on half the pairs, translations on the other half
    path = "rotation" if (BEHAVIOURS.index(pre) + BEHAVIOURS.index(post)) % 2 else "translation"
    spans = list(SPAN_TYPES) + ["tcb"]
    x = Envelope(envelope_keys(spans, continuity=0.8), pre, post)
    y = Envelope(envelope_keys(spans[::-1]), post, pre)
    z = Envelope([(0.2, 0.0, "tcb", ZERO)])
    channel = LwsChannel(path, (x, y, z), False)
    rotation = path == "rotation"
    period = x.times[-1] - x.times[0]
    start, end = -3 * period - 0.1, x.times[-1] + 3 * period + 0.1
    tolerance = 1e-4 if rotation else 1e-3
    times, values, jumps, _ = _channel_keys(channel, tolerance, start, end)
    assert times[0] == start and times[-1] == end and np.all(np.diff(times) > 0)
    assert np.array_equal(values, channel(times))
    assert worst(channel, times, values, jumps, rotation) <= tolerance
    # every key time of every period is a key
    assert np.isin(key_times_in(channel, start, end), times).all()
    # a jump's interval is MIN_KEY_SPACING long, and the oracle's envelope jumps there
    assert np.allclose(np.diff(times)[jumps], MIN_KEY_SPACING, rtol=1e-9)
    oracle = [lambda t, e=e: lws_oracle.evaluate([(k.value, k.time, k.span, k.params)
                                                  for k in e.keys], e.pre, e.post, t)
              for e in (x, y)]
    for a, b in zip(times[:-1][jumps], times[1:][jumps]):
        assert max(abs(f(a) - f(b)) for f in oracle) > 1e-3


def test_stepped_span_and_reset_keep_a_pair_of_keys():
    x = Envelope([(0.0, 0.0, "tcb", ZERO), (2.0, 1.0, "stepped", ZERO),
                  (3.0, 2.0, "linear", ZERO)], "constant", "reset")
    flat = Envelope([(0.0, 0.0, "tcb", ZERO)])
    channel = LwsChannel("translation", (x, flat, flat), False)
    times, values = channel_keys(channel, 1e-3, start=-1.0, end=3.0)
    # stepped: the old value up to 1 s, the new one at 1 s; reset: 3 at 2 s, 0 after
    assert np.allclose(times, [-1, 0, 1 - MIN_KEY_SPACING, 1, 2, 2 + MIN_KEY_SPACING, 3])
    assert np.allclose(values[:, 0], [0, 0, 0, 2, 3, 0, 0])


def test_3ds_tracks_loops_spins_and_look_at(tmp_path):
    rng = np.random.default_rng(5)
    for attempt in range(3):
        nodes, objects = random_scene(rng, n_objects=3)
        path = tmp_path / f"s{attempt}.3ds"
        path.write_bytes(write_3ds(nodes, objects=objects, segment=(0, 120)))
        scene = read_3ds(path)
        for (name, kind), channel in next(iter(scene.animations.values())).items():
            if kind not in ("translation", "rotation", "scale"):
                continue
            rotation = kind == "rotation"
            values = channel(channel.times)
            extent = max(np.ptp(values, axis=0).max(), np.abs(values).max(), 1.0)
            tolerance = 1e-4 if rotation else 1e-4 * extent
            times, keyed, jumps, _ = _channel_keys(channel, tolerance, 0.0, 4.0)
            assert misses_only_at_the_floor(channel, times, keyed, jumps, rotation, tolerance,
                                            key_times_in(channel, 0.0, 4.0))
            assert np.isin(key_times_in(channel, 0.0, 4.0), times).all()


def test_one_time_and_bad_arguments():
    x = Envelope([(0.0, 0.0, "tcb", ZERO), (1.0, 1.0, "tcb", ZERO)])
    channel = LwsChannel("translation", (x, x, x), False)
    times, values = channel_keys(channel, 1e-3, start=0.5, end=0.5)
    assert times.tolist() == [0.5] and values.shape == (1, 3)
    for kwargs, error, words in [
            (dict(start=1.0, end=0.0), ValueError, "start <= end"),
            (dict(start=0.0, end=np.inf), ValueError, "finite"),
            (dict(start="a", end=1.0), TypeError, "numbers"),
            (dict(start=0.0, end=1.0, min_spacing=0.0), ValueError, "min_spacing")]:
        with pytest.raises(error, match=words):
            channel_keys(channel, 1e-3, **kwargs)
    with pytest.raises(ValueError, match="tolerance"):
        channel_keys(channel, -1.0, start=0.0, end=1.0)
    with pytest.raises(TypeError, match="channel"):
        channel_keys(np.zeros(3), 1e-3, start=0.0, end=1.0)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["translation", "rotation"]))
def test_random_envelopes(seed, path):
    rng = np.random.default_rng(seed)
    envelopes = []
    for _ in range(3):
        keys = lws_writer.random_keys(rng, 3)
        envelopes.append(Envelope([(k[0], k[1], k[2], tuple(k[3:])) for k in keys],
                                  BEHAVIOURS[rng.integers(6)], BEHAVIOURS[rng.integers(6)]))
    channel = LwsChannel(path, tuple(envelopes), False)
    rotation = path == "rotation"
    tolerance = 1e-3 if rotation else 1e-2
    times, values, jumps, _ = _channel_keys(channel, tolerance, -4.0, 8.0)
    assert misses_only_at_the_floor(channel, times, values, jumps, rotation, tolerance,
                                    key_times_in(channel, -4.0, 8.0))


def test_a_3ds_hide_toggle_is_a_pair_of_keys_at_each_key(tmp_path):
    from threeds_writer import write_3ds as write
    hide = {"frames": np.array([6, 15, 24]), "flags": 0}
    path = tmp_path / "hide.3ds"
    path.write_bytes(write([{"tag": "object", "name": "A", "tracks": {"hide": hide}}]))
    track = read_3ds(path).tracks["A"]["hide"]
    times, values = channel_keys(track, 1e-3, start=0.0, end=1.0)
    # shown before frame 6, hidden from it, shown from 15, hidden from 24 (lib3ds)
    np.testing.assert_allclose(times, [0, 0.2 - MIN_KEY_SPACING, 0.2, 0.5 - MIN_KEY_SPACING,
                                       0.5, 0.8 - MIN_KEY_SPACING, 0.8, 1.0])
    np.testing.assert_array_equal(values[:, 0], [0, 0, 1, 1, 0, 0, 1, 1])
