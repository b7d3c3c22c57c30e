"""Tangent keys in one forward sweep (csrc/motion/reduce/kb_reduce_sweep.c,
_core.reduce_sweep): every frame within the tolerances by an independent
oracle, the public RotationSpline and PositionSpline through the keys with
the returned tangents on both sides, and by reduce_rebuild's own errors
(the curves the world search measures); on real clips and on random legal
input; bad input refused
as reduce_drop refuses it."""
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import PositionSpline, RotationSpline
from kbspline import _kbspline as core
from kbspline.motion import read_bvh
from kbspline.quaternion import _angle_between
from mocap import MISSING, MOCAP

HERE = pathlib.Path(__file__).resolve().parent
WALK30 = MOCAP / "bandai-namco-1_walk_normal_001.bvh"


@pytest.fixture(scope="module")
def cmu131():
    return read_bvh(HERE / "data" / "cmu" / "131_01.bvh")


def joint_frames(clip, j):
    return (clip.times, np.ascontiguousarray(clip.rotations()[j:j + 1]),
            np.ascontiguousarray(clip.translations()[j:j + 1]))


def assert_within(times, q, x, angle, distance):
    """reduce_sweep's keys and tangents on one joint's frames, checked:
    keys from the first frame to the last, ascending; every frame within
    the tolerances by the public splines through them (unit frames; the
    angle within rounding of the oracle's own) and exactly by
    reduce_rebuild's errors with tangent_keys.  The keys, returned."""
    keys, rrows, trows = core.reduce_sweep(times, q, x, angle, distance)
    F = len(times)
    assert keys.dtype == np.intp and keys[0] == 0 and keys[-1] == F - 1
    assert np.all(np.diff(keys) > 0)
    assert rrows.shape == trows.shape == (len(keys), 3)
    assert np.isfinite(rrows).all() and np.isfinite(trows).all()
    unit = q[0] / np.abs(q[0]).max(axis=-1, keepdims=True)  # no underflow at 1e-200
    unit /= np.linalg.norm(unit, axis=-1, keepdims=True)
    rotation = RotationSpline(times[keys], q[0][keys], tangents=(rrows, rrows))(times)
    position = PositionSpline(times[keys], x[0][keys], tangents=(trows, trows))(times)
    if np.isfinite(angle):
        assert _angle_between(rotation, unit).max() <= angle * (1 + 1e-9) + 1e-15
    if np.isfinite(distance):
        assert np.linalg.norm(position - x[0], axis=1).max() <= distance * (1 + 1e-12)
    _, _, angles, distances = core.reduce_rebuild(times, q, x, keys, rrows, trows, True, True,
                                                  None, True)
    if np.isfinite(angle):
        assert angles.max() <= angle
    if np.isfinite(distance):
        assert distances.max() <= distance
    return keys


@pytest.mark.parametrize("degrees, distance", [(0.1, 0.01), (0.5, 0.05), (2.0, np.inf),
                                               (np.inf, 0.02)])
def test_cmu_131_01_within_the_tolerances(cmu131, degrees, distance):
    for j in range(len(cmu131.joints)):
        assert_within(*joint_frames(cmu131, j), np.radians(degrees), distance)


@pytest.mark.parametrize("degrees, distance", [(0.1, 0.01), (1.0, 0.1)])
def test_the_30_hz_walk_within_the_tolerances(degrees, distance):
    if not WALK30.exists():
        pytest.skip(MISSING)
    clip = read_bvh(WALK30)
    for j in range(len(clip.joints)):
        assert_within(*joint_frames(clip, j), np.radians(degrees), distance)


def test_a_uniform_turn_on_a_line_is_two_keys():
    t = np.arange(40) * 0.05
    q = np.stack([np.cos(t / 2), 0 * t, 0 * t, np.sin(t / 2)], axis=-1)[None]
    x = np.stack([t, 2 * t, 0 * t + 1], axis=-1)[None]
    keys, rrows, trows = core.reduce_sweep(t, q, x, 1e-9, 1e-9)
    np.testing.assert_array_equal(keys, [0, 39])
    np.testing.assert_allclose(rrows, [[0, 0, 0.5]] * 2, atol=1e-5)
    np.testing.assert_allclose(trows, [[1, 2, 0]] * 2, atol=1e-9)


def test_negated_frames_give_the_same_keys_and_tangents(cmu131):
    t, q, x = joint_frames(cmu131, 3)
    signs = np.random.default_rng(1).choice([-1.0, 1.0], size=(1, len(t), 1))
    for a, b in zip(core.reduce_sweep(t, q, x, 1e-3, 0.01),
                    core.reduce_sweep(t, q * signs, x, 1e-3, 0.01)):
        np.testing.assert_array_equal(a, b)


@st.composite
def joints(draw):
    """One joint's legal frames: 2 to 80 at 1 ms to 10 s apart (far from
    zero or not); rotations smooth, rough (up to nearly half a turn a
    frame), held, stepping, or constant, each quaternion's sign at random
    (neighbours antipodal) and scaled off unit length or not;
    translations likewise at scales 1e-6 to 1e6; tolerances tiny to huge,
    either infinite."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    F = draw(st.integers(2, 80))
    dt = draw(st.sampled_from([1e-3, 1 / 120, 1 / 30, 10.0]))
    times = draw(st.sampled_from([0.0, 1e5])) + np.arange(F) * dt

    def curve(kind, width, step):
        u = np.linspace(0, 1, F)[:, None]
        if kind == "smooth":
            return rng.normal(size=width) * np.sin(rng.uniform(0, 12, width) * u +
                                                   rng.uniform(0, 6, width)) * step * 10
        if kind == "rough":
            return np.cumsum(rng.normal(size=(F, width)) * step, axis=0)
        if kind == "hold":
            return np.repeat(rng.normal(size=(4, width)) * step * 10,
                             -(-F // 4), axis=0)[:F]
        if kind == "step":
            return np.where(u < rng.uniform(), 0.0, 1.0) * rng.normal(size=width) * step * 10
        return np.zeros((F, width)) + rng.normal(size=width)

    kinds = ["smooth", "rough", "hold", "step", "constant"]
    step = draw(st.sampled_from([0.01, 0.1, 0.5, 1.5]))
    angles = curve(draw(st.sampled_from(kinds)), 3, step)
    half = np.linalg.norm(angles, axis=1, keepdims=True) / 2
    axis = angles / np.maximum(2 * half, 1e-300)
    q = np.hstack([np.cos(half), np.sin(half) * axis])
    if draw(st.booleans()):
        q *= rng.choice([-1.0, 1.0], size=(F, 1))
    if draw(st.booleans()):
        q *= rng.uniform(0.5, 2.0, size=(F, 1))
    scale = draw(st.sampled_from([1e-6, 1.0, 1e6]))
    x = curve(draw(st.sampled_from(kinds)), 3, 1.0) * scale
    angle = draw(st.sampled_from([1e-9, 1e-5, 1e-3, 0.05, 1.0, 10.0, np.inf]))
    distance = draw(st.sampled_from([1e-9, 1e-5, 1e-3, 0.1, 100.0, np.inf])) * scale
    return times, q[None], x[None], angle, distance


@settings(max_examples=300, deadline=None)
@given(joint=joints())
def test_random_joints_within_the_tolerances(joint):
    times, q, x, angle, distance = joint
    keys = assert_within(times, q, x, angle, distance)
    if not np.isfinite(angle) and not np.isfinite(distance):
        assert len(keys) == 2


@pytest.mark.parametrize("change, error, match", [
    (lambda t, q, x, a, d: (t[::-1].copy(), q, x, a, d), core.CoreError, "strictly increasing"),
    (lambda t, q, x, a, d: (t, np.where(q > 0.5, np.nan, q), x, a, d), core.CoreError,
     "must be finite"),
    (lambda t, q, x, a, d: (t, q, np.where(x > 1, np.inf, x), a, d), core.CoreError,
     "must be finite"),
    (lambda t, q, x, a, d: (t, np.where(np.arange(20)[:, None] == 7, 0.0, q), x, a, d),
     core.CoreError, "nonzero norm"),
    (lambda t, q, x, a, d: (t, q, x, np.nan, d), core.CoreError, "out of range"),
    (lambda t, q, x, a, d: (t, q, x, a, 0.0), core.CoreError, "out of range"),
    (lambda t, q, x, a, d: (t, q, x, -1.0, d), core.CoreError, "out of range"),
    (lambda t, q, x, a, d: (t[:1], q[:, :1], x[:, :1], a, d), core.CoreError,
     "size out of range"),
    (lambda t, q, x, a, d: (t, np.concatenate([q, q]), np.concatenate([x, x]), a, d),
     ValueError, "rotations"),
    (lambda t, q, x, a, d: (t, q, x[:, :, :2], a, d), ValueError, "translations"),
    (lambda t, q, x, a, d: (t, q.astype(np.float32), x, a, d), TypeError, "rotations"),
    (lambda t, q, x, a, d: (t, q, x, "a", d), TypeError, "real number"),
])
def test_bad_input_is_refused_as_reduce_drop_refuses_it(change, error, match):
    t = np.arange(20) * 0.1
    q = np.stack([np.cos(t / 2), 0 * t, 0 * t, np.sin(t / 2)], axis=-1)[None]
    x = np.stack([t, t ** 2, 0 * t], axis=-1)[None]
    args = change(t, q, x, 0.01, 0.01)
    with pytest.raises(error, match=match):
        core.reduce_sweep(*args)
    if error is core.CoreError:  # the same refusal, the same words
        with pytest.raises(error, match=match):
            ends = np.unique([0, len(args[0]) - 1])
            rows = np.zeros((len(ends), 3))
            core.reduce_drop(*args, ends, rows, rows)


def test_keys_between_adjacent_frames_take_finite_tangents_on_tiny_time_steps():
    """Regression (review of sweep-int): frames 1e-250 s apart keep every
    frame, the middle key between adjacent frames taking the
    Fritsch-Butland tangent, whose weights over the slopes (3e-250 / 1e250)
    underflowed to 0, so that its row came back infinite.  Now the finite
    mean of slopes of 1e250, and a tangent that overflows a double
    refused as reduce_drop refuses it."""
    t = np.array([0.0, 1e-250, 2e-250])
    q = np.array([[[1.0, 0, 0, 0], [np.cos(0.05), 0, 0, np.sin(0.05)],
                   [np.cos(0.1), 0, 0, np.sin(0.1)]]])
    x = np.array([[[0.0, 0, 0], [1, 0, 0], [2, 0, 0]]])
    keys, rrows, trows = core.reduce_sweep(t, q, x, 0.01, 0.01)
    np.testing.assert_array_equal(keys, [0, 1, 2])
    np.testing.assert_allclose(rrows[:, 2], 5e248, rtol=1e-12)
    np.testing.assert_allclose(trows[:, 0], 1e250, rtol=1e-12)
    with pytest.raises(core.CoreError, match="out of range"):
        core.reduce_sweep(t * 1e-60, q, x, 0.01, 0.01)  # slopes of 1e310


@pytest.mark.parametrize("scale", [1e-200, 1e-170, 1e160, 1e200])
def test_frames_far_from_unit_length_are_measured_as_unit_ones(scale):
    """Regression (review of sweep-int): the errors every reduction checks
    (kb_reduce_errors) took sqrt(v . v) of the rotation's vector part,
    which scales with the frame: at 1e-170 it underflowed to 0, every
    candidate passed the real check and reduce_sweep's keys strayed 40
    times past the tolerance (173 of 5000 random joints at 1e-200), the
    greedy keys kept 2 frames of 20; at 1e160 it overflowed, every error
    pi, every frame a key.  Frames are quaternions of any nonzero norm:
    the same keys as at unit length, within the tolerance by the public
    spline and by reduce_rebuild."""
    t = np.arange(20) * 0.1
    a = np.sin(3 * t)
    q = np.stack([np.cos(a / 2), 0 * t, 0 * t, np.sin(a / 2)], axis=-1)[None]
    x = np.zeros((1, 20, 3))
    unit = core.reduce_sweep(t, q, x, 1e-3, 1e-3)
    scaled = core.reduce_sweep(t, q * scale, x, 1e-3, 1e-3)
    np.testing.assert_array_equal(scaled[0], unit[0])
    assert len(unit[0]) < 20
    keys, rrows, trows = scaled
    rotation = RotationSpline(t[keys], (q[0] * scale)[keys], tangents=(rrows, rrows))(t)
    assert _angle_between(rotation, q[0]).max() <= 1e-3
    angles = core.reduce_rebuild(t, q * scale, x, keys, rrows, trows, True, True, None, True)[2]
    assert angles.max() <= 1e-3
    greedy = core.reduce_greedy(t, q * scale, x, np.array([1e-3]), np.array([1e-3]))[0][0]
    np.testing.assert_array_equal(
        greedy, core.reduce_greedy(t, q, x, np.array([1e-3]), np.array([1e-3]))[0][0])


def test_translations_of_tiny_magnitude_are_measured():
    """Regression (review of sweep-int): a distance below 1e-154 squared to
    0 in kb_reduce_errors, so translations of 1e-170 passed any curve."""
    t = np.arange(20) * 0.1
    q = np.tile([1.0, 0, 0, 0], (1, 20, 1))
    x = 1e-170 * np.stack([np.sin(3 * t), 0 * t, 0 * t], axis=-1)[None]
    keys = assert_within(t, q, x, 1e-3, 1e-173)
    assert len(keys) > 2


def keyframed_channel(rng, F, scale):
    """(F, 3) a keyframed channel: runs of holds, ramps, steps, one-frame
    spikes, slow sines and jitter, each starting where the last ended."""
    out, f, current = np.zeros((F, 3)), 0, rng.normal(size=3) * scale
    while f < F:
        n = int(rng.integers(1, max(2, F // 3)))
        kind = rng.integers(6)
        run = np.arange(n)[:, None]
        if kind == 0:    # hold
            values = np.repeat(current[None], n, 0)
        elif kind == 1:  # ramp
            values = current + run * rng.normal(size=3) * scale * 0.1
        elif kind == 2:  # sine
            values = current + scale * np.sin(run * rng.uniform(0.05, 0.8) + rng.uniform(0, 6, 3))
        elif kind == 3:  # step, then hold
            current = current + rng.normal(size=3) * scale
            values = np.repeat(current[None], n, 0)
        elif kind == 4:  # a one-frame spike in a hold
            values = np.repeat(current[None], n, 0)
            values[n // 2] += rng.normal(size=3) * scale
        else:            # jitter
            values = current + np.cumsum(rng.normal(size=(n, 3)) * scale * 0.05, 0)
        out[f:f + n] = values[:F - f]
        current = out[min(f + n, F) - 1].copy()
        f += n
    return out


@st.composite
def keyframed_joints(draw):
    """One joint's keyframed frames (keyframed_channel) for both channels:
    2 to 150 frames, evenly or unevenly spaced (some steps 1000 times
    shorter), from 0 or 1e6 s; rotations of up to nearly a turn a run,
    near a half turn or not, each quaternion's sign at random and scaled
    by 1, 1e-200 or 1e200; translations at 1e-8 to 1e8; tolerances tiny
    to huge, either infinite."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    F = draw(st.sampled_from([2, 3, 4, 5, 8, 20, 60, 150]))
    dt = draw(st.sampled_from([1 / 120, 1 / 30, 1.0]))
    steps = np.full(F, dt)
    if draw(st.booleans()):
        steps = steps * rng.uniform(0.01, 1, F) * np.where(rng.random(F) < 0.2, 1e-3, 1)
    times = draw(st.sampled_from([0.0, 1e6])) + np.cumsum(steps)
    v = keyframed_channel(rng, F, draw(st.sampled_from([1e-7, 1e-3, 0.05, 0.5, 3.1])))
    if draw(st.booleans()):  # near a half turn
        v = np.array([np.pi - 1e-4, 0, 0]) + v * 1e-3
    angle = np.linalg.norm(v, axis=1, keepdims=True)
    q = np.hstack([np.cos(angle / 2), np.sin(angle / 2) * v / np.maximum(angle, 1e-300)])
    q *= rng.choice([-1.0, 1.0], size=(F, 1)) * draw(st.sampled_from([1.0, 1e-200, 1e200]))
    scale = draw(st.sampled_from([1e-8, 1e-3, 1.0, 1e8]))
    x = keyframed_channel(rng, F, scale)
    angle = draw(st.sampled_from([1e-9, 1e-6, 1e-3, 0.01, 0.1, 1.0, 1e6, np.inf]))
    distance = draw(st.sampled_from([1e-9, 1e-6, 1e-3, 0.1, 1.0, 1e6, np.inf])) * scale
    return times, q[None], x[None], angle, distance


@settings(max_examples=300, deadline=None)
@given(joint=keyframed_joints())
def test_keyframed_joints_within_the_tolerances(joint):
    """Review of sweep-int: holds, steps, spikes, ramps and jitter, uneven
    steps, large times, quaternions of any length (1e-200 strayed 40
    times past the tolerance before kb_reduce_errors measured them
    without underflow)."""
    assert_within(*joint)


def test_a_hold_to_the_last_frame_does_not_move_the_last_key():
    """Regression (review of sweep-int): a ramp, then a hold to the end;
    where one segment from the first frame to the last passes, the end
    inside the hold moved back to the hold's first frame, so the sweep
    kept [0, 20, 39] even at tolerances of 1e6 (a key more, always, where
    that end is the last frame)."""
    t = np.arange(40) / 30
    a = np.clip(np.arange(40) / 20, 0, 1)
    q = np.stack([np.cos(a / 2), 0 * a, 0 * a, np.sin(a / 2)], -1)[None]
    x = np.stack([a, 0 * a, 0 * a], -1)[None]
    still = np.tile([1.0, 0, 0, 0], (1, 40, 1))
    for angle in (1.0, 1e6):
        np.testing.assert_array_equal(assert_within(t, q, np.zeros((1, 40, 3)), angle, 1.0),
                                      [0, 39])
        np.testing.assert_array_equal(assert_within(t, still, x, 1.0, angle), [0, 39])
    # where the segment to the last frame does not pass, the hold's edge is still keyed
    assert 20 in assert_within(t, q, np.zeros((1, 40, 3)), 0.01, 1.0)


@pytest.mark.parametrize("scale", [1e-100, 1e-60, 1e60, 1e100])
def test_the_keys_do_not_hang_on_the_unit_of_time(scale):
    """Regression (review of sweep-int): the rotation's 3x3 normal
    equations have entries of dt^2, so their determinant (dt^6)
    overflowed for frames 1e60 s apart and underflowed at 1e-60; every
    candidate then failed its fit and every frame was a key (60 against
    8).  The same keys from 1e-140 to 1e140 now."""
    t = np.arange(60) / 30
    a = np.sin(3 * t)
    q = np.stack([np.cos(a / 2), 0 * t, 0 * t, np.sin(a / 2)], axis=-1)[None]
    x = np.stack([np.cos(t), t, 0 * t], axis=-1)[None]
    unit = core.reduce_sweep(t, q, x, 1e-3, 1e-3)[0]
    assert len(unit) < 10
    np.testing.assert_array_equal(assert_within(t * scale, q, x, 1e-3, 1e-3), unit)
