"""read_3ds's tracks against a second transcription of seed 002
(tests/threeds_seed002.py, written for the review without the first one):
random keys with TCB and ease at their extremes, keys one frame apart, one and
two keys, spins, long-way steps, zero axes, repeats, loops, other frame rates."""
import numpy as np
import pytest

from kbspline.formats.threeds import read_3ds
from threeds_seed002 import SPIN, position, rotation
from threeds_writer import FIELDS, f32, random_track, write_3ds


def one_track(tmp_path, kind, stored, fps=30.0):
    path = tmp_path / "one.3ds"
    path.write_bytes(write_3ds([{"tag": "object", "name": "O", "tracks": {kind: stored}}]))
    return read_3ds(path, fps=fps).tracks["O"][kind]


def extreme_track(rng, kind):
    """Keys whose TCB sit at -1, 0 or 1, eases at 0, 0.7 or 1 (sums past 1),
    often one frame apart."""
    K = int(rng.integers(1, 8))
    stored = random_track(rng, kind, K)
    if rng.random() < 0.5:
        for name in FIELDS[:3]:
            stored[name] = rng.choice([-1.0, 0.0, 1.0], K)
        for name in FIELDS[3:]:
            stored[name] = f32(rng.choice([0.0, 0.7, 1.0], K))
    if rng.random() < 0.5:
        stored["frames"] = np.arange(K) + int(rng.integers(0, 3))
    return stored


def seed_002(stored, kind, frame):
    frames = np.asarray(stored["frames"], float)
    tcb = [np.asarray(stored[name], float) for name in FIELDS[:3]]
    eases = [np.asarray(stored[name], float) for name in FIELDS[3:]]
    play = rotation if kind == "rotation" else position
    return play(frames, stored["values"], tcb, *eases, frame)


@pytest.mark.parametrize("fps", [30.0, 24.0, 7.5])
@pytest.mark.parametrize("kind", ["position", "scale", "roll", "rotation"])
def test_tracks_play_as_a_second_transcription_of_seed_002(tmp_path, kind, fps):
    rng = np.random.default_rng(hash((kind, fps)) % 2**32)
    compared = 0
    for _ in range(25):
        stored = extreme_track(rng, kind)
        track = one_track(tmp_path, kind, stored, fps)
        frames = np.asarray(stored["frames"], float)
        at = np.concatenate([frames, rng.uniform(frames[0], frames[-1], 12)])
        squad = track.spline_in(np.eye(3)).squad_segments \
            if kind == "rotation" and len(frames) > 1 else None
        for frame, got in zip(at, track(at / fps)):
            want = seed_002(stored, kind, frame)
            if kind == "rotation":
                want, segment = want
                if want is None or (squad is not None and not squad[segment]):
                    continue        # spins (SPEC 9c) and SPEC 3's no-glitch cubic
                want = want * np.sign(want @ got)
            compared += 1
            assert np.abs(got - want).max() <= 1e-11 * (1 + np.abs(want).max()), (stored, frame)
    assert compared > 200


@pytest.mark.parametrize("flags", [1, 2, 3])
def test_repeats_and_loops_wrap_after_the_last_key(tmp_path, flags):
    rng = np.random.default_rng(flags)
    for kind in ("position", "roll", "rotation"):
        stored = random_track(rng, kind, 5, flags=flags)
        track = one_track(tmp_path, kind, stored)
        first, last = stored["frames"][0], stored["frames"][-1]
        later = rng.uniform(last, last + 3 * (last - first), 20)
        wrapped = first + np.fmod(later - first, last - first)
        assert np.allclose(track(later / 30), track(wrapped / 30), atol=1e-11)
        assert np.allclose(track(first / 30 - 2.0), track(first / 30), atol=1e-15)


def test_loop_tangents_run_across_the_seam(tmp_path):
    rng = np.random.default_rng(3)
    for kind in ("position", "roll"):
        for K in (3, 4, 6):
            stored = random_track(rng, kind, K, flags=3)
            track = one_track(tmp_path, kind, stored)
            f = np.asarray(stored["frames"], float)
            # the loop as an open track with one key more on each side of the seam
            pad = lambda x: np.concatenate([x[-2:-1], x, x[1:2]])        # noqa: E731
            frames = np.concatenate([[f[0] - (f[-1] - f[-2])], f, [f[-1] + f[1] - f[0]]])
            tcb = [pad(np.asarray(stored[name], float)) for name in FIELDS[:3]]
            eases = [pad(np.asarray(stored[name], float)) for name in FIELDS[3:]]
            for frame in rng.uniform(f[0], f[-1], 15):
                want = position(frames, pad(np.asarray(stored["values"], float)), tcb, *eases,
                                frame)
                assert np.allclose(track(frame / 30)[0], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("angle, spins", [(3 * 2 * np.pi + 0.5, True), (2 * np.pi - 1e-6, True),
                                          (2 * np.pi - 2e-5, False), (-(4 * np.pi + 0.5), False)])
def test_only_keys_past_the_spin_threshold_keep_their_turns(tmp_path, angle, spins):
    stored = {"frames": np.array([0, 10]), "flags": 0,
              "values": f32([[0.0, 0.0, 0.0, 1.0], [angle, 0.0, 0.0, 1.0]])}
    track = one_track(tmp_path, "rotation", stored)
    spline = track.spline_in(np.eye(3))
    stored_angle = float(f32(angle))
    assert (stored_angle > SPIN) == spins
    swept = stored_angle if spins else abs(np.remainder(stored_angle + np.pi, 2 * np.pi) - np.pi)
    assert spline.angle(np.array([10 / 30]))[0] == pytest.approx(swept, rel=1e-9)


def test_rotation_loops_run_across_the_seam(tmp_path):
    """A loop's rotation keys (one axis, turns summing to zero) against the
    open track padded with the keys on both sides of the seam; squad is
    invariant under a fixed left turn, so the padded track's start is free."""
    from threeds_seed002 import absolute_keys, qinv, qmul
    compared = 0
    for seed in range(12):
        rng = np.random.default_rng([52, seed])
        stored = random_track(rng, "rotation", int(rng.integers(3, 7)), flags=3)
        track = one_track(tmp_path, "rotation", stored)
        f = np.asarray(stored["frames"], float)
        v = np.asarray(stored["values"], float)
        pad = lambda x: np.concatenate([x[-2:-1], x, x[1:2]])        # noqa: E731
        values = np.concatenate([[[0.0, 1.0, 0.0, 0.0]], v[-1:], v[1:], v[1:2]])
        frames = np.concatenate([[f[0] - (f[-1] - f[-2])], f, [f[-1] + f[1] - f[0]]])
        tcb = [pad(np.asarray(stored[name], float)) for name in FIELDS[:3]]
        eases = [pad(np.asarray(stored[name], float)) for name in FIELDS[3:]]
        turn = qmul(absolute_keys(v)[0][0], qinv(absolute_keys(values)[0][1]))
        squad = track.spline_in(np.eye(3)).squad_segments
        for frame in rng.uniform(f[0], f[-1], 15):
            want, segment = rotation(frames, values, tcb, *eases, frame)
            if want is None or not squad[segment - 1]:
                continue
            want, got = qmul(turn, want), track(frame / 30)[0]
            assert np.abs(got - want * np.sign(got @ want)).max() < 1e-11
            compared += 1
    assert compared > 100
