"""The C core of key reduction (csrc/kb_reduce.c) against its NumPy oracle
(reduce_oracles.py, the first implementation): the same greedy keys on every
clip, and clear errors for input the core refuses."""
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import _kbspline as core
from kbspline.motion import read_bvh
from reduce_oracles import select_keys
from test_reduce_world import random_clips

HERE = pathlib.Path(__file__).resolve().parent
CLIPS = sorted((HERE.parents[1] / "shared" / "data" / "mocap").glob("*.bvh")) + sorted(
    (HERE / "data" / "cmu").glob("*.bvh"))


def greedy(times, rotations, translations, angle, distance):
    return core.reduce_greedy(np.ascontiguousarray(times), np.ascontiguousarray(rotations),
                              np.ascontiguousarray(translations), angle, distance)


def assert_same_greedy(times, rotations, translations, angle, distance):
    keys, max_angle, max_distance = select_keys(times, rotations, translations, angle, distance)
    ours, angles, distances = greedy(times, rotations, translations, angle, distance)
    for mine, theirs in zip(ours, keys):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_allclose(angles.max(axis=1), max_angle, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(distances.max(axis=1), max_distance, rtol=1e-12, atol=1e-14)
    return ours


@pytest.mark.parametrize("degrees, distance", [(0.05, 0.01), (1.0, 0.3)])
@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_greedy_keys_are_the_oracles(path, degrees, distance):
    if not path.exists():
        pytest.skip("no clip")
    clip = read_bvh(path)
    J = len(clip.joints)
    angle, dist = np.full(J, np.radians(degrees)), np.full(J, distance)
    angle[1::5], dist[::3] = np.inf, np.inf  # unchecked channels, as world mode gives
    assert_same_greedy(clip.times, clip.rotations(), clip.translations(), angle, dist)


@settings(max_examples=30, deadline=None)
@given(clip=random_clips(), degrees=st.floats(0.01, 20.0), distance=st.floats(1e-3, 1.0))
def test_random_clips_greedy_keys_are_the_oracles(clip, degrees, distance):
    J = len(clip.joints)
    assert_same_greedy(clip.times, clip.rotations(), clip.translations(),
                       np.full(J, np.radians(degrees)), np.full(J, distance))


def frames(F=20):
    t = np.arange(F) * 0.1
    q = np.zeros((1, F, 4))
    q[..., 0] = np.cos(t / 2)
    q[..., 3] = np.sin(t / 2)
    return t, q, np.stack([t, t ** 2, 0 * t], axis=-1)[None]


def test_a_uniform_turn_and_a_line_need_two_keys():
    t, q, x = frames()
    x[0, :, 1] = 0.0
    keys, angle, distance = greedy(t, q, x, np.array([1e-9]), np.array([1e-9]))
    np.testing.assert_array_equal(keys[0], [0, 19])
    assert angle.max() < 1e-12 and distance.max() < 1e-12


@pytest.mark.parametrize("change, match", [
    (lambda t, q, x, a, d: (t[::-1].copy(), q, x, a, d), "strictly increasing"),
    (lambda t, q, x, a, d: (t, np.where(q > 0.5, np.nan, q), x, a, d), "must be finite"),
    (lambda t, q, x, a, d: (t, q, x, np.array([np.nan]), d), "out of range"),
    (lambda t, q, x, a, d: (t, q, x, a, np.array([0.0])), "out of range"),
    (lambda t, q, x, a, d: (t[:1], q[:, :1], x[:, :1], a, d), "size out of range"),
])
def test_greedy_refuses_bad_input(change, match):
    t, q, x = frames()
    with pytest.raises(core.CoreError, match=match):
        greedy(*change(t, q, x, np.array([0.01]), np.array([0.01])))


@pytest.mark.parametrize("keys, error, match", [
    ([0, 5, 5, 19], core.CoreError, "strictly increasing"),
    ([1, 19], core.CoreError, "size out of range"),
    ([0, 18], core.CoreError, "size out of range"),
    (list(range(20)) + [19], ValueError, "more keys than frames"),
])
def test_fit_refuses_bad_keys(keys, error, match):
    t, q, x = frames()
    with pytest.raises(error, match=match):
        core.reduce_fit(t, q, x, 0.01, 0.01, np.array(keys))
    if error is core.CoreError:
        with pytest.raises(error, match=match):
            core.fit_tcb(t, q, x, True, np.array(keys), np.zeros((len(keys), 3)), 3, 1)


def test_fit_refuses_tcb_out_of_range():
    t, q, x = frames()
    with pytest.raises(core.CoreError, match="out of range"):
        core.fit_tcb(t, q, x, True, np.array([0, 19]), np.array([[0, 0, 0], [0, 1.5, 0.0]]), 3, 1)


@st.composite
def raw_tracks(draw):
    """One joint's frames at extreme but legal values: frame times from 1 ms
    to 10 s and far from zero, translations from 1e-6 to 1e6 units, turns
    of up to a half turn a frame, each quaternion's sign at random."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    F = draw(st.integers(2, 60))
    dt = draw(st.sampled_from([1e-3, 1 / 30, 10.0]))
    times = draw(st.sampled_from([0.0, 1e6])) + np.arange(F) * dt
    step = draw(st.sampled_from([0.0, 0.05, 0.5, 3.0]))
    angles = np.cumsum(rng.normal(size=(F, 3)) * step, axis=0)
    half = np.linalg.norm(angles, axis=1, keepdims=True) / 2
    axis = angles / np.maximum(2 * half, 1e-300)
    q = np.hstack([np.cos(half), np.sin(half) * axis])
    q *= rng.choice([-1.0, 1.0], size=(F, 1))
    scale = draw(st.sampled_from([1e-6, 1.0, 1e6]))
    x = np.cumsum(rng.normal(size=(F, 3)), axis=0) * scale
    angle = draw(st.sampled_from([1e-9, 1e-3, 0.1, np.inf]))
    distance = draw(st.sampled_from([1e-9, 1e-3, 0.1])) * scale
    return times, q[None], x[None], angle, distance


@settings(max_examples=100, deadline=None)
@given(track=raw_tracks())
def test_extreme_tracks_keep_their_tolerances(track):
    """Greedy and fitted keys keep every frame within the tolerances (as a
    RotationSpline and a PositionSpline through them evaluate it) and match
    the oracle's greedy keys."""
    from kbspline import PositionSpline, RotationSpline
    from kbspline.quaternion import _angle_between
    times, q, x, angle, distance = track
    keys = assert_same_greedy(times, q, x, np.array([angle]), np.array([distance]))[0]
    start = greedy(times, q, x, np.array([5 * angle]), np.array([5 * distance]))[0][0]
    fitted, rtcb, ttcb, angles, distances = core.reduce_fit(times, q, x, angle, distance, start)
    for k, r, t in [(keys, None, None), (fitted, rtcb, ttcb)]:
        zero = np.zeros((len(k), 3))
        r, t = zero if r is None else r, zero if t is None else t
        rot = RotationSpline(times[k], q[0][k], *r.T)(times)
        pos = PositionSpline(times[k], x[0][k], *t.T)(times)
        assert _angle_between(rot, q[0]).max() <= angle * (1 + 1e-9) + 1e-15
        assert np.linalg.norm(pos - x[0], axis=1).max() <= distance * (1 + 1e-12)
    assert np.all(np.abs(rtcb) <= 1) and np.all(np.abs(ttcb) <= 1)
    assert len(fitted) <= len(start) + len(times)


@settings(max_examples=25, deadline=None)
@given(clip=random_clips(), degrees=st.floats(0.01, 5.0), distance=st.floats(1e-3, 0.3),
       capped=st.booleans(), scales=st.lists(st.floats(0.3, 30.0), min_size=1, max_size=5),
       looser=st.sampled_from([1.0, 5.0]))
def test_greedy_keys_at_any_scale_from_one_order(clip, degrees, distance, capped, scales,
                                                 looser):
    """The world search's greedy keys at a scale of the base tolerances (a
    prefix of one run's order, kb_reduce_greedy_order) are the oracle's at
    those tolerances, in any order of scales, looser or capped."""
    from kbspline.motion.reduce import _JointFrames
    J = len(clip.joints)
    rotations = np.ascontiguousarray(clip.rotations())
    translations = np.ascontiguousarray(clip.translations())
    base = (np.full(J, np.radians(degrees)), np.full(J, distance))
    base[1][::2] = np.inf  # translations unchecked, as world mode has them for most joints
    caps = (np.full(J, np.radians(3 * degrees) if capped else np.inf),
            np.full(J, 2 * distance if capped else np.inf))
    translations[1::3] = translations[1::3, :1]  # constant: a cap on them never binds
    joints = [_JointFrames(clip.times, rotations, translations, base, caps, j, True)
              for j in range(J)]
    for scale in scales:
        for j, joint in enumerate(joints):
            angle, dist = (looser * t for t in joint.tolerances(scale))
            keys = select_keys(clip.times, rotations[j:j + 1], translations[j:j + 1],
                               np.array([angle]), np.array([dist]))[0][0]
            np.testing.assert_array_equal(joint.greedy(scale, looser), keys)


@settings(max_examples=25, deadline=None)
@given(clip=random_clips(), floors=st.lists(st.floats(0.05, 50.0), min_size=2, max_size=4))
def test_greedy_order_carried_on_is_one_run(clip, floors):
    """The order carried on from an earlier call's frames, floor after lower
    floor, is one run's to the last floor, bit for bit, scores and all."""
    floors = sorted(floors, reverse=True)
    frames = (clip.times, np.ascontiguousarray(clip.rotations()[:1]),
              np.ascontiguousarray(clip.translations()[:1]))
    order, score = np.empty(0, np.intp), np.empty(0)
    for floor in floors:
        more, more_score = core.reduce_greedy_order(*frames, 1e-3, 1e-2, floor, order)
        order, score = np.concatenate([order, more]), np.concatenate([score, more_score])
    whole, whole_score = core.reduce_greedy_order(*frames, 1e-3, 1e-2, floors[-1])
    np.testing.assert_array_equal(order, whole)
    assert whole_score.tobytes() == score.tobytes()


@pytest.mark.parametrize("keyed", [[0], [5, 5], [-1], [10 ** 6], [[1, 2]], ["a"],
                                   list(range(1, 1000))])
def test_greedy_order_refuses_frames_keyed_that_are_not_interior(keyed):
    clip = read_bvh(HERE / "data" / "cmu" / "131_01.bvh")
    frames = (clip.times, np.ascontiguousarray(clip.rotations()[:1]),
              np.ascontiguousarray(clip.translations()[:1]))
    with pytest.raises((ValueError, TypeError)):
        core.reduce_greedy_order(*frames, 1e-3, 1e-2, 1.0, keyed)
