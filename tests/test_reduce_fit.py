"""Fitted key reduction: tangent keys swept and dropped with their
neighbours refitted, every frame still within the tolerances (by SciPy's
rotations from the BVH Euler angles), fewer keys than greedy selection
alone, the fitted curves rebuilt exactly."""
import dataclasses
import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

from kbspline import PositionSpline, RotationSpline
from kbspline.motion import Motion, Reduction, read_bvh, reduce_keys
from kbspline import _kbspline as core
from test_reduce_world import euler_matrices, random_clips

CMU = pathlib.Path(__file__).resolve().parent / "data" / "cmu"


@pytest.fixture(scope="module")
def walk120():
    """The first 2.5 s of CMU 131_01 (120 Hz)."""
    clip = read_bvh(CMU / "131_01.bvh")
    return Motion(clip.joints, clip.frame_time, clip.frames[:300])


def local_errors(clip, result):
    """(J,) worst rotation angle, by SciPy from the Euler frames, and (J,)
    worst translation distance, of the rebuilt clip."""
    rotations, translations = result.rebuild(clip.times)
    rebuilt = Rotation.from_quat(rotations[..., [1, 2, 3, 0]].reshape(-1, 4))
    truth = Rotation.from_matrix(euler_matrices(clip).reshape(-1, 3, 3))
    angle = (truth.inv() * rebuilt).magnitude().reshape(rotations.shape[:2]).max(axis=1)
    distance = np.linalg.norm(translations - clip.translations(), axis=-1).max(axis=1)
    return angle, distance


@pytest.mark.parametrize("joint", [0, 3])
@pytest.mark.parametrize("degrees, distance", [(0.3, 0.01), (1.0, np.inf)])
def test_reported_errors_are_the_rebuilt_curves_at_every_frame(walk120, joint, degrees,
                                                               distance):
    """The angle and distance kb_reduce_greedy, kb_reduce_sweep then
    kb_reduce_drop report are, bit for bit, those of their splines rebuilt
    at every frame (kb_reduce_rebuild), key frames too: there the search
    takes them as zero and evaluates them only for the report, and the
    splines give rounding's errors, not zero."""
    frames = (walk120.times, walk120.rotations()[joint:joint + 1],
              walk120.translations()[joint:joint + 1])
    angle = np.radians(degrees)
    greedy_keys, greedy_angle, greedy_distance = core.reduce_greedy(
        *frames, np.array([angle]), np.array([distance]))
    swept = core.reduce_sweep(*frames, angle, distance)
    dropped = core.reduce_drop(*frames, 1.5 * angle, 1.5 * distance, *swept[:3])
    cases = [(greedy_keys[0], None, None, greedy_angle[0], greedy_distance[0], False),
             (*dropped, True)]
    nonzero_at_keys = 0
    for keys, rtcb, ttcb, reported_angle, reported_distance, tangents in cases:
        _, _, rebuilt_angle, rebuilt_distance = core.reduce_rebuild(
            *frames, keys, rtcb, ttcb, True, True, None, tangents)
        assert reported_angle.tobytes() == rebuilt_angle.tobytes()
        assert reported_distance.tobytes() == rebuilt_distance.tobytes()
        nonzero_at_keys += np.count_nonzero(rebuilt_angle[keys])
    assert nonzero_at_keys  # else the keys' errors could be reported as zero unseen


def test_drops_skip_the_errors_alone_when_asked(walk120):
    """errors=False (the world search's): angle and distance None, the keys
    and tangents those with errors, to the bit."""
    frames = (walk120.times, walk120.rotations()[0:1], walk120.translations()[0:1])
    angle, distance = np.radians(0.5), 0.05
    swept = core.reduce_sweep(*frames, angle, distance)
    dropped = [core.reduce_drop(*frames, 1.5 * angle, 1.5 * distance, *swept[:3],
                                errors) for errors in (True, False)]
    for with_errors, without in (dropped,):
        assert with_errors[3] is not None and without[3:] == (None, None)
        for a, b in zip(with_errors[:3], without[:3]):
            assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("degrees, distance", [(0.3, 0.01), (1.0, 0.05)])
@pytest.mark.parametrize("fit", [True, "tangents"])
def test_fitted_keys_keep_every_frame_within_the_tolerances(walk120, degrees, distance, fit):
    result = reduce_keys(walk120, np.radians(degrees), distance, fit=fit)
    angle, dist = local_errors(walk120, result)
    assert angle.max() <= np.radians(degrees) * (1 + 1e-9)
    assert dist.max() <= distance
    np.testing.assert_allclose(result.max_angle, angle, atol=1e-9)
    fitted, other = result.rotation_tangents, result.rotation_tcb
    assert fitted is not None and any(np.any(t) for t in fitted) and other is None


def test_fitting_keeps_fewer_keys(walk120):
    greedy = reduce_keys(walk120, np.radians(0.3), 0.01, fit=False)
    fitted = reduce_keys(walk120, np.radians(0.3), 0.01)
    assert fitted.num_keys < 0.85 * greedy.num_keys
    assert all(len(f) <= len(g) for f, g in zip(fitted.key_frames, greedy.key_frames))


def test_a_saved_tcb_reduction_rebuilds_and_survives_json(walk120, tmp_path):
    """Reductions saved with TCB keys (fit='tcb' before it was deprecated)
    still read and rebuild as the public splines with that TCB."""
    result = reduce_keys(walk120, np.radians(0.5), 0.02, fit=False)
    rng = np.random.default_rng(5)
    result.rotation_tcb = [rng.uniform(-1, 1, (len(k), 3)) for k in result.key_frames]
    result.translation_tcb = [rng.uniform(-1, 1, (len(k), 3)) for k in result.key_frames]
    j = 10
    keys = result.key_frames[j]
    tension, continuity, bias = result.rotation_tcb[j].T
    own = RotationSpline(keys * walk120.frame_time, walk120.rotations()[j][keys],
                         tension, continuity, bias)(walk120.times)
    np.testing.assert_array_equal(result.rebuild(walk120.times)[0][j], own)
    path = tmp_path / "fitted.json"
    path.write_text(json.dumps(result.to_json()))
    back = Reduction.from_json(json.loads(path.read_text()))
    for a, b in zip(back.rebuild(walk120.times), result.rebuild(walk120.times)):
        np.testing.assert_array_equal(a, b)
    data = result.to_json()
    data["joints"][3]["rotation_tcb"] = data["joints"][3]["rotation_tcb"][:-1]
    with pytest.raises(ValueError, match="TCB"):
        Reduction.from_json(data)


def test_rebuild_of_tangent_keys_is_the_hermite_curve_and_survives_json(walk120):
    """Tangent keys rebuild as the public splines through the keys with
    those tangents on both sides (C1), and survive JSON; a malformed or
    non-finite row is refused."""
    result = reduce_keys(walk120, np.radians(0.5), 0.02)
    assert result.rotation_tcb is None and result.translation_tcb is None
    rebuilt = result.rebuild(walk120.times)
    for j in (0, 10):
        keys = result.key_frames[j]
        t = keys * walk120.frame_time
        r, x = result.rotation_tangents[j], result.translation_tangents[j]
        own = (RotationSpline(t, walk120.rotations()[j][keys], tangents=(r, r)),
               PositionSpline(t, walk120.translations()[j][keys], tangents=(x, x)))
        np.testing.assert_array_equal(rebuilt[0][j], own[0](walk120.times))
        np.testing.assert_array_equal(rebuilt[1][j], own[1](walk120.times))
        inner = t[1:-1]  # C1: the angular velocity is continuous across keys
        np.testing.assert_allclose(own[0].angular_velocity(inner - 1e-9),
                                   own[0].angular_velocity(inner + 1e-9), atol=1e-5)
    back = Reduction.from_json(json.loads(json.dumps(result.to_json())))
    for a, b in zip(back.rebuild(walk120.times), rebuilt):
        np.testing.assert_array_equal(a, b)
    data = result.to_json()
    data["joints"][3]["translation_tangents"] = data["joints"][3]["translation_tangents"][:-1]
    with pytest.raises(ValueError, match="tangents"):
        Reduction.from_json(data)
    data = result.to_json()
    data["joints"][2]["rotation_tangents"][1][0] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        Reduction.from_json(data)
    # the rows come as a pair of one kind, else a rebuild would take other curves
    for drop, add in (("translation_tangents", None), ("rotation_tangents", None),
                      (None, "rotation_tcb")):
        data = result.to_json()
        for joint in data["joints"]:
            if drop:
                del joint[drop]
            if add:
                joint[add] = joint["rotation_tangents"]
                joint["translation_tcb"] = joint["translation_tangents"]
        with pytest.raises(ValueError, match="come as rotation_tcb with translation_tcb"):
            Reduction.from_json(data)
    half = dataclasses.replace(result, translation_tangents=None)
    with pytest.raises(ValueError, match="not one of a pair"):
        half.rebuild(walk120.times)


def stepped_chain(frames=1500, degrees=90.0):
    """A root with position channels and three joints, every channel
    holding 0 and then `degrees` from the middle frame on: a step."""
    from kbspline.motion import Joint
    from kbspline.motion.clip import POSITION_CHANNELS
    turns = ["Zrotation", "Xrotation", "Yrotation"]
    joints = [Joint("root", -1, np.zeros(3), list(POSITION_CHANNELS) + turns)] + [
        Joint(f"j{i}", i - 1, np.array([0, 10.0, 0]), turns,
              np.array([0, 5.0, 0]) if i == 3 else None) for i in range(1, 4)]
    held = np.where(np.arange(frames)[:, None] >= frames // 2, degrees, 0.0)
    return Motion(joints, 1 / 120, held * np.ones((1, 15)))


@pytest.mark.parametrize("tolerance", [0.01, 1.0])
@pytest.mark.parametrize("world", [True, False])
def test_a_step_keeps_its_two_holds_and_the_jump(tolerance, world):
    """A step is four keys a joint (both ends and the two frames of the
    jump), each tangent about zero.  Regression: the keys at the jump
    started from the frames' central difference, half the jump, which no
    frame weighs while their neighbours are the frames beside them, so a
    drop beside them refitted from there and failed, keeping 20 keys at
    1 cm where TCB keys keep 16."""
    clip = stepped_chain()
    options = ({"position_tolerance": tolerance} if world
               else {"angle_tolerance": tolerance / 100, "distance_tolerance": tolerance})
    result = reduce_keys(clip, **options)
    assert [k.tolist() for k in result.key_frames] == [[0, 749, 750, 1499]] * 4
    for rows in (result.rotation_tangents, result.translation_tangents):
        assert np.abs(np.concatenate(rows)).max() < 1e-4   # per second: the holds


@pytest.mark.parametrize("degrees", [10.0, 90.0, 170.0])
def test_a_rotation_stepping_over_two_frames_keeps_its_holds(degrees):
    """A hold, a turn over two frames and a hold: four keys (the ends and
    the turn's two edges, within a frame) at 0.1 to 3 degrees.  The edges' tangents, half the turn's
    rate, turned them far over the holds' long segments once a drop put
    them there, beyond the reach of the refit's model: 6 keys (a review
    found)."""
    from kbspline.motion import Joint
    from kbspline.motion.clip import POSITION_CHANNELS
    turns = ["Zrotation", "Xrotation", "Yrotation"]
    joints = [Joint("root", -1, np.zeros(3), list(POSITION_CHANNELS) + turns),
              Joint("arm", 0, np.array([0, 10.0, 0]), turns, np.array([0, 5.0, 0]))]
    t = np.arange(300)
    turning = np.clip((t - 149) / 2, 0, 1) * degrees
    clip = Motion(joints, 1 / 30, np.c_[np.zeros((300, 6)), turning, 0 * t, 0 * t])
    for tolerance in (0.1, 0.3, 1.0, 3.0):
        result = reduce_keys(clip, np.radians(tolerance), tolerance / 10)
        keys = result.key_frames[1].tolist()
        assert len(keys) == 4 and keys[0] == 0 and keys[-1] == 299, tolerance
        assert 148 <= keys[1] <= 150 and 150 <= keys[2] <= 152, tolerance  # the edges
        assert local_errors(clip, result)[0].max() <= np.radians(tolerance)


def bouncing_ball(frames=300, arc=20, height=100.0):
    """A root moving on at one unit a frame and bouncing: parabolic arcs of
    `arc` frames, sharp at each contact, under one still joint."""
    from kbspline.motion import Joint
    from kbspline.motion.clip import POSITION_CHANNELS
    turns = ["Zrotation", "Xrotation", "Yrotation"]
    joints = [Joint("root", -1, np.zeros(3), list(POSITION_CHANNELS) + turns),
              Joint("top", 0, np.array([0, 10.0, 0]), turns, np.array([0, 5.0, 0]))]
    t = np.arange(frames)
    phase = (t % arc) / arc
    root = np.c_[1.0 * t, 4 * height * phase * (1 - phase), 0 * t]
    return Motion(joints, 1 / 30, np.c_[root, np.zeros((frames, 6))])


@pytest.mark.parametrize("distance", [1e-3, 1e-2])
def test_a_bouncing_ball_keys_its_contacts_in_local_mode(distance):
    """Two keys a contact (each arc is a cubic Hermite with fitted tangents
    on its ends) plus the ends: 30 for 14 contacts.  Greedy KB keys at five
    times the tolerance keep every frame here, and the fit's drops stalled
    near them (118 keys at 1e-3, a review found): a second start from
    greedy keys at a much looser tolerance reaches the contacts."""
    clip = bouncing_ball()
    result = reduce_keys(clip, np.radians(1.0), distance)
    _, translations = result.rebuild(clip.times)
    error = np.linalg.norm(translations[0] - clip.translations()[0], axis=-1).max()
    assert error <= distance and len(result.key_frames[0]) <= 32


def test_fit_must_be_a_bool_or_a_kind(walk120):
    with pytest.raises(TypeError, match="fit must be True, False, 'tangents' or 'tcb'"):
        reduce_keys(walk120, 0.1, 0.1, fit="yes")


@settings(max_examples=25, deadline=None)
@given(clip=random_clips(), degrees=st.floats(0.01, 5.0), distance=st.floats(1e-3, 1.0))
def test_random_clips_fitted_within_the_tolerances(clip, degrees, distance):
    """Within the tolerances with fitted tangent keys."""
    result = reduce_keys(clip, np.radians(degrees), distance)
    angle, dist = local_errors(clip, result)
    assert angle.max() <= np.radians(degrees) * (1 + 1e-9) + 1e-12
    assert dist.max() <= distance * (1 + 1e-12)


def greedy_keys(clip, joint, angle, distance):
    """The greedy keys of one joint under these tolerances."""
    return core.reduce_greedy(clip.times, clip.rotations()[joint:joint + 1],
                              clip.translations()[joint:joint + 1], np.array([angle]),
                              np.array([distance]))[0][0]


def swept_keys(clip, joint, angle, distance):
    """One joint's swept tangent keys (kb_reduce_sweep) and their rows."""
    return core.reduce_sweep(clip.times, clip.rotations()[joint:joint + 1],
                             clip.translations()[joint:joint + 1], angle, distance)[:3]


def spline_errors(clip, joint, keys, rows, translation_rows):
    """(F,) rotation angle by SciPy and (F,) translation distance of the
    joint's splines through keys with these tangents, from its frames."""
    times = clip.times
    rotations, translations = clip.rotations()[joint], clip.translations()[joint]
    spline = RotationSpline(times[keys], rotations[keys], tangents=(rows, rows))(times)
    rebuilt = Rotation.from_quat(spline[:, [1, 2, 3, 0]])
    truth = Rotation.from_quat(rotations[:, [1, 2, 3, 0]])
    moved = PositionSpline(times[keys], translations[keys],
                           tangents=(translation_rows, translation_rows))(times)
    return (truth.inv() * rebuilt).magnitude(), np.linalg.norm(moved - translations, axis=1)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([0, 3, 20]), st.floats(0.05, 2.0), st.booleans())
def test_drops_with_refits_keep_every_frame_within_tolerance(walk120, joint, degrees, moving):
    """kb_reduce_drop from swept keys: a subset of them, the first and last
    kept, no more, and every frame within both tolerances by SciPy's
    rotations and the splines rebuilt from the keys and tangents it returns
    (the errors it reports are those)."""
    angle, distance = np.radians(degrees), (0.01 if moving else np.inf)
    start, r0, t0 = swept_keys(walk120, joint, angle / 2, distance / 2)
    keys, rtcb, ttcb, angle_error, distance_error = core.reduce_drop(
        walk120.times, walk120.rotations()[joint:joint + 1],
        walk120.translations()[joint:joint + 1], angle, distance, start, r0, t0)
    assert set(keys) <= set(start) and keys[0] == 0 and keys[-1] == 299
    angles, distances = spline_errors(walk120, joint, keys, rtcb, ttcb)
    assert angles.max() <= angle * (1 + 1e-9)
    np.testing.assert_allclose(angle_error, angles, atol=1e-9)
    if moving:
        assert distances.max() <= distance * (1 + 1e-9)
        np.testing.assert_allclose(distance_error, distances, atol=1e-9)
    else:
        assert not ttcb.any()  # an infinite tolerance: no translation fit


def test_drops_with_refits_keep_fewer_keys(walk120):
    """Under a looser tolerance than the sweep's, refitting the neighbours
    of a dropped key lets go keys."""
    for joint in (3, 20):
        start, r0, t0 = swept_keys(walk120, joint, np.radians(0.25), np.inf)
        keys = core.reduce_drop(walk120.times, walk120.rotations()[joint:joint + 1],
                                walk120.translations()[joint:joint + 1], np.radians(0.5),
                                np.inf, start, r0, t0)[0]
        assert len(keys) < len(start)


def test_a_drop_that_fails_restores_keys_and_tcb_exactly(walk120):
    """Under a tolerance that no frame near any key meets, every drop fails
    and puts back its key and its neighbours' tangents, to the bit."""
    joint = 3
    start = greedy_keys(walk120, joint, np.radians(1.0), np.inf)
    rng = np.random.default_rng(7)
    rtcb, ttcb = rng.uniform(-0.5, 0.5, (2, len(start), 3))
    keys, rotation_tcb, _, _, _ = core.reduce_drop(
        walk120.times, walk120.rotations()[joint:joint + 1],
        walk120.translations()[joint:joint + 1], 1e-12, np.inf, start, rtcb, ttcb)
    assert keys.tobytes() == start.tobytes()
    assert rotation_tcb.tobytes() == rtcb.tobytes()


@pytest.mark.parametrize("change, error", [
    (lambda tcb: tcb * np.inf, ValueError),       # not finite
    (lambda tcb: tcb[:-1], ValueError),           # one row short
    (lambda tcb: tcb.astype(np.float32), TypeError),
    (lambda tcb: tcb[::-1], ValueError),          # not C-contiguous
])
def test_drops_refuse_bad_tcb(walk120, change, error):
    start = greedy_keys(walk120, 3, np.radians(1.0), np.inf)
    tcb = np.full((len(start), 3), 0.5)
    with pytest.raises(error, match="tcb|finite"):
        core.reduce_drop(walk120.times, walk120.rotations()[3:4], walk120.translations()[3:4],
                         np.radians(1.0), np.inf, start, change(tcb), tcb)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_drops_name_a_tangent_key_not_finite(walk120, value):
    """The rows are tangents: one not finite is named as a tangent (with
    its key), whatever the tangent_keys flag says."""
    start = greedy_keys(walk120, 3, np.radians(1.0), np.inf)
    rows = np.zeros((len(start), 3))
    bad = rows.copy()
    bad[1, 2] = value
    frames = walk120.times, walk120.rotations()[3:4], walk120.translations()[3:4]
    with pytest.raises(ValueError, match="finite.*tangents', 0, 1"):
        core.reduce_drop(*frames, np.radians(1.0), np.inf, start, bad, rows)
    with pytest.raises(ValueError, match="finite.*tangents', 0, 1"):
        core.reduce_drop(*frames, np.radians(1.0), np.inf, start, bad, rows)
    huge = rows + 1e6   # large but finite tangents are legal
    core.reduce_drop(*frames, np.radians(1.0), np.inf, start, huge, rows)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([3, 20]), st.floats(0.1, 2.0))
def test_drops_hold_the_tolerance(walk120, joint, degrees):
    """The keys kept are a subset, first and last kept, and every frame
    stays within the tolerance by SciPy's rotations."""
    angle = np.radians(degrees)
    start, r0, t0 = swept_keys(walk120, joint, angle / 2, np.inf)
    keys, rtcb, ttcb, _, _ = core.reduce_drop(
        walk120.times, walk120.rotations()[joint:joint + 1],
        walk120.translations()[joint:joint + 1], angle, np.inf, start, r0, t0)
    assert set(keys) <= set(start) and keys[0] == 0 and keys[-1] == 299
    angles, _ = spline_errors(walk120, joint, keys, rtcb, ttcb)
    assert angles.max() <= angle * (1 + 1e-9)


def test_held_residuals_keep_their_keys_signs():
    """kb_reduce_drop's refits with tangent keys take the residuals of the
    segments they share with earlier refits from those held: only for the
    very unit keys (signs included) those were taken with.  Frames half a
    turn from the spline (identity keys, frames turned by pi about y) have
    a relative rotation whose w is +0 or -0 by the keys' signs, and the
    residual (on the side w >= 0) flips with it: held across windows that
    gave the keys opposite signs (the raw keys' signs alternate here), the
    refit's tangent came out negated (+120 where it is -120)."""
    q = np.array([[1, 0, 0, 0], [-1, 0, 0, 0], [0, 0, 1, 0], [0, 0, -1, 0], [0, 0, -1, 0],
                  [1, 0, 0, 0], [-1, 0, 0, 0], [0, 0, -1, 0], [-1, 0, 0, 0], [0, 0, 1, 0],
                  [-1, 0, 0, 0], [1, 0, 0, 0], [-1, 0, 0, 0], [1, 0, 0, 0]], dtype=float)
    x = np.array([[1, -2, -1], [1, 0, -2], [1, -1, -4], [2, 0, -3], [1, -1, -3], [3, -1, -2],
                  [3, -2, -2], [4, -3, -4], [4, -3, -3], [5, -4, -3], [4, -5, -4], [5, -5, -5],
                  [4, -4, -4], [4, -3, -5]], dtype=float)
    t = np.arange(14) / 30.0
    keys = np.array([0, 1, 6, 8, 10, 11, 12, 13], dtype=np.intp)
    zero = np.zeros((len(keys), 3))
    out, rtcb = core.reduce_drop(t, q[None], x[None], 3.2, 1.0, keys, zero, zero.copy(), True)[:2]
    assert out.tolist() == [0, 1, 6, 8, 10, 12, 13]
    np.testing.assert_allclose(rtcb[:, [0, 2]], 0.0)
    np.testing.assert_allclose(rtcb[:, 1], [0, 0, 0, -120.0, 0, 0, 0], atol=1e-6)
