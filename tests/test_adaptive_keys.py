"""Adaptive LINEAR keys (kbspline.formats.adaptive) against an independent
playback: slerp / lerp written here from their definitions, between the
spline's values at the keys rounded to float32, compared with the spline at
many random times, not the sampler's own check points."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import PositionSpline, RotationSpline, quat_from_axis_angle
from kbspline.formats.adaptive import MIN_KEY_SPACING, SPLIT_ANGLE, linear_keys, playback_error

TIMINGS = ["kb", "parabolic", "average", "3ds"]
ENDS = ["natural", "reflect", "clamped", "closed"]


def slerp_playback(times, q, t):
    """Shorter-arc slerp of the rows q (K, 4) at times t, from its formula."""
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    s = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0, 1)[:, None]
    p0, p1 = q[k], q[k + 1]
    dot = np.sum(p0 * p1, axis=1, keepdims=True)
    p1 = np.where(dot < 0, -p1, p1)
    theta = np.arccos(np.clip(np.abs(dot), -1, 1))
    small = theta < 1e-6
    sin = np.where(small, 1.0, np.sin(theta))
    w0 = np.where(small, 1 - s, np.sin((1 - s) * theta) / sin)
    w1 = np.where(small, s, np.sin(s * theta) / sin)
    out = w0 * p0 + w1 * p1
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def lerp_playback(times, v, t):
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    s = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0, 1)[:, None]
    return (1 - s) * v[k] + s * v[k + 1]


def angles(p, q):
    chord = np.minimum(np.linalg.norm(p - q, axis=-1), np.linalg.norm(p + q, axis=-1))
    return 4 * np.arcsin(np.minimum(1.0, chord / 2))


def probe_times(keys, n, rng):
    """Random times plus points just inside every interval's ends."""
    inner = np.concatenate([keys[:-1] + 1e-3 * np.diff(keys), keys[1:] - 1e-3 * np.diff(keys)])
    return np.concatenate([rng.uniform(keys[0], keys[-1], n), inner])


def worst_rotation(spline, keys, track, rng, n=4000):
    t = probe_times(keys, n, rng)
    stored = spline(keys)[track].astype(np.float32).astype(np.float64)
    return float(angles(slerp_playback(keys, stored, t), spline(t)[track]).max())


def random_rotations(rng, tracks, n_keys, timing, ends, spin=False):
    times = np.cumsum(rng.uniform(0.1, 1.0, n_keys)) - 0.05
    tcb = rng.uniform(-1, 1, (3, tracks, n_keys))
    axes = rng.normal(size=(tracks, n_keys, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    if spin:
        return RotationSpline.from_relative(times, axes, rng.uniform(-20, 20, (tracks, n_keys)),
                                            *tcb, timing=timing, ends=ends)
    angles_ = rng.uniform(-2, 2, (tracks, n_keys))
    if ends == "closed":  # the last key repeats the first, its parameters too
        angles_[:, -1], axes[:, -1], tcb[..., -1] = angles_[:, 0], axes[:, 0], tcb[..., 0]
    q = quat_from_axis_angle(axes, angles_)
    return RotationSpline(times, q, *tcb, timing=timing, ends=ends)


@pytest.mark.parametrize("timing", TIMINGS)
@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("shared", [False, True])
def test_rotation_playback_stays_within_tolerance(timing, ends, shared):
    rng = np.random.default_rng(len(timing) * 7 + len(ends) + shared)
    for tolerance in (1e-2, 1e-3, 1e-4):
        spline = random_rotations(rng, 3, 6, timing, ends)
        keys = linear_keys(spline, tolerance, shared=shared)
        assert len(keys) == (1 if shared else 3)
        for track in range(3):
            mine = keys[0 if shared else track]
            assert np.all(np.isin(spline.breakpoints, mine))   # every key kept
            gaps = np.diff(mine)
            assert np.all((gaps >= MIN_KEY_SPACING * (1 - 1e-9))
                          | np.isin(mine[1:], spline.breakpoints))
            assert worst_rotation(spline, mine, track, rng) <= tolerance
        measured = playback_error(spline, keys)
        assert measured.shape == (3,) and np.all(measured <= tolerance)


def test_keys_are_dense_where_the_rotation_bends():
    # a slow turn then a fast wiggle: the wiggle's key interval needs more keys
    times = [0.0, 1.0, 2.0, 2.2, 2.4]
    q = quat_from_axis_angle([0, 0, 1], [0.0, 0.1, 0.2, 1.5, 0.0])
    spline = RotationSpline(times, q)
    (keys,) = linear_keys(spline, 1e-4)
    slow = np.sum((keys > 0) & (keys < 1))
    fast = np.sum((keys > 2.2) & (keys < 2.4))
    assert fast > 4 * max(slow, 1)


@pytest.mark.parametrize("timing", TIMINGS)
def test_spins_keep_keys_within_a_quarter_turn(timing):
    rng = np.random.default_rng(5)
    spline = random_rotations(rng, 2, 5, timing, "natural", spin=True)
    keys = linear_keys(spline, 1e-3)
    for track in range(2):
        swept = spline.angle(keys[track])[track]
        assert np.all(np.diff(swept) < np.pi)  # less than half a turn apart
        assert worst_rotation(spline, keys[track], track, rng) <= 1e-3


def test_five_turns_between_two_keys_play_back():
    spline = RotationSpline.from_relative([0, 1, 2], [[0, 0, 1]] * 3, [0, 10 * np.pi, 0.5])
    (keys,) = linear_keys(spline, 1e-4)
    t = np.linspace(0, 2, 20001)
    stored = spline(keys).astype(np.float32).astype(np.float64)
    assert angles(slerp_playback(keys, stored, t), spline(t)).max() <= 1e-4
    # the playback's own swept angle (sum of its steps) is the spline's 5.08 turns
    steps = angles(slerp_playback(keys, stored, t)[1:], slerp_playback(keys, stored, t)[:-1])
    assert steps.sum() == pytest.approx(spline.total_angle, abs=1e-3)


@pytest.mark.parametrize("shared", [False, True])
def test_position_playback_stays_within_tolerance(shared):
    rng = np.random.default_rng(3)
    times = np.cumsum(rng.uniform(0.1, 1.0, 7))
    spline = PositionSpline(times, rng.normal(size=(4, 7, 3)) * 10,
                            *rng.uniform(-1, 1, (3, 4, 7)), ease_from=0.3, timing="parabolic")
    keys = linear_keys(spline, 1e-3, shared=shared)
    for track in range(4):
        mine = keys[0 if shared else track]
        t = probe_times(mine, 4000, rng)
        stored = spline(mine)[track].astype(np.float32).astype(np.float64)
        error = np.linalg.norm(lerp_playback(mine, stored, t) - spline(t)[track], axis=1)
        assert error.max() <= 1e-3


def test_float32_rounding_of_times():
    spline = RotationSpline([1000.0, 1000.3, 1000.7], quat_from_axis_angle([1, 0, 0], [0, 1, 2]))
    offset = 999.0

    def to_float32(t):
        return (t - offset).astype(np.float32).astype(np.float64) + offset

    (keys,) = linear_keys(spline, 1e-4, round_times=to_float32)
    # all but the domain's ends, which stay on it
    assert np.array_equal(to_float32(keys[1:-1]), keys[1:-1])
    assert keys[0] == 1000.0 and keys[-1] == 1000.7
    assert worst_rotation(spline, keys, (), np.random.default_rng(0)) <= 1e-4


def test_a_tolerance_beyond_reach_stops_at_the_closest_spacing():
    spline = RotationSpline([0, 0.01, 0.02], quat_from_axis_angle([1, 0, 0], [0, 1, 0]))
    (keys,) = linear_keys(spline, 1e-9)
    assert np.diff(keys).min() >= MIN_KEY_SPACING * (1 - 1e-9)
    assert playback_error(spline, [keys])[0] > 1e-9


@pytest.mark.parametrize("tolerance", [0, -1, np.nan, np.inf, "x"])
def test_bad_tolerance(tolerance):
    spline = RotationSpline([0, 1], [[1, 0, 0, 0], [0, 1, 0, 0]])
    with pytest.raises((ValueError, TypeError), match="tolerance"):
        linear_keys(spline, tolerance)


def test_not_a_spline():
    with pytest.raises(TypeError, match="RotationSpline or PositionSpline"):
        linear_keys(np.zeros(3), 1e-3)


def test_scalar_last_splines_get_the_same_keys():
    rng = np.random.default_rng(8)
    times, q = np.cumsum(rng.uniform(0.1, 1, 5)), rng.normal(size=(2, 5, 4))
    first = RotationSpline(times, q, 0.3, -0.2, 0.1)
    last = RotationSpline(times, q[..., [1, 2, 3, 0]], 0.3, -0.2, 0.1, scalar_first=False)
    for a, b in zip(linear_keys(first, 1e-4), linear_keys(last, 1e-4)):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), tolerance=st.sampled_from([1e-2, 1e-3, 1e-4]),
       timing=st.sampled_from(TIMINGS), ends=st.sampled_from(ENDS),
       spin=st.booleans(), ease=st.floats(0, 1), shared=st.booleans())
def test_any_rotation_spline_plays_back_within_tolerance(seed, tolerance, timing, ends, spin,
                                                         ease, shared):
    rng = np.random.default_rng(seed)
    if spin:
        times = np.cumsum(rng.uniform(0.1, 1.0, 5))
        axes = rng.normal(size=(2, 5, 3))
        spline = RotationSpline.from_relative(times, axes, rng.uniform(-15, 15, (2, 5)),
                                              timing=timing, ease_from=ease)
    else:
        spline = random_rotations(rng, 2, 5, timing, ends)
    keys = linear_keys(spline, tolerance, shared=shared)
    for track in range(2):
        mine = keys[0 if shared else track]
        gaps = np.diff(mine)
        if gaps.min() >= 2 * MIN_KEY_SPACING:   # not held back by the spacing floor
            assert worst_rotation(spline, mine, track, rng, n=2000) <= tolerance


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), tolerance=st.sampled_from([1e-2, 1e-3]))
def test_start_keys_are_kept_and_only_split(seed, tolerance):
    """Keys another spline placed (start=) stay; new ones only split the
    intervals between them, never closer than MIN_KEY_SPACING to them."""
    rng = np.random.default_rng(seed)
    spline = random_rotations(rng, 2, 5, "kb", "natural")
    lo, hi = spline.breakpoints[..., 0].min(), spline.breakpoints[..., -1].max()
    start = np.sort(rng.uniform(lo, hi, 30))
    start = start[np.diff(start, prepend=lo) >= MIN_KEY_SPACING]
    (keys,) = linear_keys(spline, tolerance, shared=True, start=np.append(start, hi + 5.0))
    assert np.all(np.isin(start, keys)) and keys[-1] == hi   # outside the domain: dropped
    added = np.setdiff1d(keys, np.union1d(start, spline.breakpoints.ravel()))
    near = np.abs(added[:, None] - np.union1d(start, keys)[None, :])
    assert np.all(np.where(near == 0, np.inf, near).min(axis=1) >= MIN_KEY_SPACING * (1 - 1e-9))
    if np.diff(keys).min() >= 2 * MIN_KEY_SPACING:
        for track in range(2):
            assert worst_rotation(spline, keys, track, rng, n=2000) <= tolerance
