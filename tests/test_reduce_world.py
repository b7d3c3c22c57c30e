"""Key reduction within a world-space tolerance: every joint, End Site and
virtual vertex of every frame stays within it, by an independent forward
kinematics (SciPy's rotation matrices from the BVH Euler angles)."""
import collections
import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

from kbspline import _kbspline as _core
from kbspline.motion import Joint, Motion, Reduction, read_bvh, reduce_keys
from kbspline.motion.clip import POSITION_CHANNELS
from mocap import CLIPS, MISSING


def oracle_points(motion, matrices, translations, virtual_distance=None):
    """(F, V, 3) points and (V,) owners: joint origins, End Sites, virtual
    vertices, from (J, F, 3, 3) local rotation matrices."""
    F = motion.num_frames
    world, origin, points, owner = {}, {}, [], []
    for j, joint in enumerate(motion.joints):
        moves = any(c in POSITION_CHANNELS for c in joint.channels)
        offset = translations[j] if moves else np.tile(joint.offset, (F, 1))
        if joint.parent < 0:
            world[j], origin[j] = matrices[j], offset
        else:
            p = joint.parent
            world[j] = np.matmul(world[p], matrices[j])
            origin[j] = origin[p] + np.matmul(world[p], offset[..., None])[..., 0]
        sites = [np.zeros(3)] + ([] if joint.end_site is None else [joint.end_site])
        if virtual_distance:
            sites += list(virtual_distance * np.eye(3))
        for site in sites:
            points.append(origin[j] + world[j] @ site)
            owner.append(j)
    return np.stack(points, axis=1), np.array(owner)


def euler_matrices(motion):
    """(J, F, 3, 3) from the frames' Euler angles (intrinsic, degrees)."""
    out = np.tile(np.eye(3), (len(motion.joints), motion.num_frames, 1, 1))
    for j, joint in enumerate(motion.joints):
        order = motion.rotation_order(j)
        if order:
            base = motion.channel_slice(j).start
            cols = [base + k for k, c in enumerate(joint.channels) if c.endswith("rotation")]
            out[j] = Rotation.from_euler(order, motion.frames[:, cols], degrees=True).as_matrix()
    return out


def world_error(motion, result, virtual_distance=None):
    """(J,) worst distance of each joint's points, rebuilt against original."""
    rotations, translations = result.rebuild(motion.times)
    rebuilt = Rotation.from_quat(rotations[..., [1, 2, 3, 0]].reshape(-1, 4)).as_matrix()
    rebuilt = rebuilt.reshape(rotations.shape[:2] + (3, 3))
    got, owner = oracle_points(motion, rebuilt, translations, virtual_distance)
    want, _ = oracle_points(motion, euler_matrices(motion), motion.translations(),
                            virtual_distance)
    error = np.linalg.norm(got - want, axis=-1).max(axis=0)
    return np.array([error[owner == j].max() for j in range(len(motion.joints))])


@pytest.fixture(scope="module")
def walk():
    if not CLIPS:
        pytest.skip(MISSING)
    return read_bvh(next(p for p in CLIPS if "walk" in p.name))


@pytest.mark.parametrize("tolerance, virtual, fit", [(0.1, None, True), (1.0, None, False),
                                                     (0.1, 5.0, False)])
def test_every_point_of_every_frame_within_the_tolerance(walk, tolerance, virtual, fit):
    result = reduce_keys(walk, position_tolerance=tolerance, virtual_distance=virtual, fit=fit)
    error = world_error(walk, result, virtual)
    assert error.max() <= tolerance
    np.testing.assert_allclose(result.max_position, error, rtol=1e-9, atol=1e-12)


def test_world_space_keeps_fewer_keys_than_local_at_equal_error(walk):
    local = reduce_keys(walk, np.radians(0.1), 0.01, fit=False)
    world = reduce_keys(walk, position_tolerance=local.max_position.max(), fit=False)
    assert world.max_position.max() <= local.max_position.max()
    assert world.num_keys < 0.85 * local.num_keys


def test_local_caps_hold_beside_the_world_bound(walk):
    result = reduce_keys(walk, np.radians(0.2), position_tolerance=1.0, fit=False)
    assert result.max_angle.max() <= np.radians(0.2)
    assert result.max_position.max() <= 1.0
    loose = reduce_keys(walk, position_tolerance=1.0, fit=False)
    assert loose.max_angle.max() > np.radians(0.2)  # so the cap did something


def test_local_mode_reports_world_error_too(walk):
    result = reduce_keys(walk, np.radians(0.5), 0.1, fit=False)
    np.testing.assert_allclose(result.max_position, world_error(walk, result),
                               rtol=1e-9, atol=1e-12)


def chain_clip(frames=30, end_site=False):
    """A root that moves and turns, and two joints below it; the last has no
    End Site unless asked, so its own turn moves no measured point."""
    t = np.linspace(0, 1, frames)
    joints = [Joint("root", -1, np.zeros(3), list(POSITION_CHANNELS) + ["Zrotation"]),
              Joint("upper", 0, np.array([0.0, 10.0, 0.0]), ["Zrotation", "Xrotation"]),
              Joint("tip", 1, np.array([0.0, 10.0, 0.0]), ["Zrotation"],
                    np.array([0.0, 5.0, 0.0]) if end_site else None)]
    columns = [5 * t, np.zeros(frames), np.sin(3 * t), 40 * np.sin(4 * t),
               30 * np.sin(5 * t), 20 * np.cos(2 * t), 90 * np.sin(7 * t)]
    return Motion(joints, 1 / 30, np.stack(columns, axis=1))


def test_a_joint_that_carries_nothing_keeps_two_keys():
    free = reduce_keys(chain_clip(), position_tolerance=0.01)
    assert len(free.key_frames[2]) == 2
    assert free.max_position.max() <= 0.01
    carried = reduce_keys(chain_clip(end_site=True), position_tolerance=0.01)
    assert len(carried.key_frames[2]) > 2
    virtual = reduce_keys(chain_clip(), position_tolerance=0.01, virtual_distance=5.0)
    assert len(virtual.key_frames[2]) > 2


@pytest.mark.parametrize("fit", [False, True])
def test_a_tolerance_below_rounding_is_refused(walk, fit):
    """Every frame a key still leaves rounding's errors (about 1e-14 of the
    clip's size): a tolerance below them cannot be kept, so it is refused
    (the reduction returned them as within it, a review found), and the
    search's progress had reached the end."""
    calls = []
    with pytest.raises(ValueError, match="position_tolerance=1e-300 is below"):
        reduce_keys(walk, position_tolerance=1e-300, fit=fit,
                    progress=lambda *a: calls.append(a))
    assert calls[-1][0] == calls[-1][1]
    with pytest.raises(ValueError, match="angle_tolerance=1e-300 is below"):
        reduce_keys(walk, 1e-300, 1.0, fit=fit)



@pytest.mark.parametrize("fit", [False, True])
@pytest.mark.parametrize("cap", ["angle_tolerance", "distance_tolerance"])
def test_a_cap_below_rounding_is_refused_beside_the_world_bound(fit, cap):
    """Local tolerances given with position_tolerance are caps; one below
    the rounding that every frame as a key leaves is refused, as in local
    mode (the world reduction returned a max_angle of 1e-16 for a cap of
    1e-300, unremarked, a review found); caps it holds are kept."""
    with pytest.raises(ValueError, match=f"{cap}=1e-300 is below"):
        reduce_keys(chain_clip(), position_tolerance=0.5, fit=fit, **{cap: 1e-300})
    result = reduce_keys(chain_clip(), position_tolerance=0.5, fit=fit, **{cap: 1e-3})
    worst = result.max_angle if cap == "angle_tolerance" else result.max_distance
    assert worst.max() <= 1e-3 and result.max_position.max() <= 0.5

def test_json_keeps_the_world_error(walk, tmp_path):
    result = reduce_keys(walk, position_tolerance=0.5, fit=False)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result.to_json()))
    back = Reduction.from_json(json.loads(path.read_text()))
    np.testing.assert_array_equal(back.max_position, result.max_position)
    data = result.to_json()
    for joint in data["joints"]:
        del joint["max_position"]
    assert Reduction.from_json(data).max_position is None


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, ValueError, "give position_tolerance"),
    ({"angle_tolerance": 0.1}, ValueError, "give position_tolerance"),
    ({"position_tolerance": 0.0}, ValueError, "position_tolerance must be a positive number"),
    ({"position_tolerance": -1.0}, ValueError, "position_tolerance must be a positive number"),
    ({"position_tolerance": np.inf}, ValueError, "position_tolerance must be a positive number"),
    ({"position_tolerance": np.nan}, ValueError, "position_tolerance must be a positive number"),
    ({"position_tolerance": "1cm"}, TypeError, "position_tolerance must be a number"),
    ({"angle_tolerance": np.nan, "distance_tolerance": 1.0}, ValueError, "angle_tolerance"),
    ({"angle_tolerance": 0.1, "distance_tolerance": 0.0}, ValueError, "distance_tolerance"),
    ({"position_tolerance": 1.0, "virtual_distance": -2.0}, ValueError, "virtual_distance"),
    ({"angle_tolerance": 0.1, "distance_tolerance": 0.1, "virtual_distance": 2.0},
     ValueError, "virtual_distance needs position_tolerance"),
    ({"position_tolerance": 1.0, "tolerance": 1.0}, TypeError, "tolerance"),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        reduce_keys(chain_clip(), **kwargs)


def test_reduce_command_in_world_space(walk, tmp_path):
    import subprocess
    import sys
    out = tmp_path / "walk.json"
    run = subprocess.run([sys.executable, "-m", "kbspline", "reduce", str(CLIPS[0]),
                          "--position-tolerance", "0.2", "-o", str(out)],
                         capture_output=True, text=True, check=True)
    assert "in world space" in run.stdout
    result = Reduction.from_json(json.loads(out.read_text()))
    assert result.max_position.max() <= 0.2
    assert result.max_angle.max() > np.radians(0.5)  # the local default is not applied


@st.composite
def random_clips(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_joints, frames = draw(st.integers(1, 6)), draw(st.integers(2, 40))
    joints = []
    for j in range(n_joints):
        rotation = [f"{axis}rotation" for axis in rng.permutation(list("XYZ"))]
        channels = (list(POSITION_CHANNELS) if j == 0 or rng.random() < 0.2 else []) + rotation
        end = rng.normal(size=3) * 10 if rng.random() < 0.4 else None
        joints.append(Joint(f"j{j}", int(rng.integers(-1, j)) if j else -1,
                            rng.normal(size=3) * 10, channels, end))
    width = sum(len(j.channels) for j in joints)
    t = np.linspace(0, 1, frames)[:, None]
    amplitude = rng.uniform(0, 90, width) * (rng.random(width) < 0.8)
    columns = amplitude * np.sin(rng.uniform(0, 12, width) * t + rng.uniform(0, 6, width))
    columns += rng.normal(size=(frames, width)) * draw(st.sampled_from([0.0, 0.1, 3.0]))
    return Motion(joints, 1 / 30, columns)


@settings(max_examples=40, deadline=None)
@given(clip=random_clips(), tolerance=st.floats(1e-3, 10.0),
       virtual=st.sampled_from([None, 1.0, 20.0]), fit=st.sampled_from([False, True]))
def test_random_clips_keep_the_bound(clip, tolerance, virtual, fit):
    result = reduce_keys(clip, position_tolerance=tolerance, virtual_distance=virtual, fit=fit)
    error = world_error(clip, result, virtual)
    assert error.max() <= tolerance
    np.testing.assert_allclose(result.max_position, error, rtol=1e-7, atol=1e-9)
    for keys in result.key_frames:
        assert keys[0] == 0 and keys[-1] == clip.num_frames - 1


@settings(max_examples=40, deadline=None)
@given(clip=random_clips(), tolerance=st.floats(1e-3, 10.0),
       fit=st.sampled_from([False, True]), local=st.booleans())
def test_reported_local_errors_are_those_of_the_kept_curves(clip, tolerance, fit, local):
    """max_angle and max_distance, which the reduction takes from the curves
    its world check holds, are those of a whole rebuild through the kept
    keys and TCB or tangents, bit for bit, in either mode."""
    result = (reduce_keys(clip, np.radians(tolerance), tolerance / 3, fit=fit) if local
              else reduce_keys(clip, position_tolerance=tolerance, fit=fit))
    rotations = np.ascontiguousarray(clip.rotations())
    translations = np.ascontiguousarray(clip.translations())
    for j, keys in enumerate(result.key_frames):
        tangents = result.rotation_tangents is not None
        fitted = (result.rotation_tangents, result.translation_tangents) if tangents else (
            result.rotation_tcb, result.translation_tcb)
        rows = (None, None) if fitted[0] is None else (fitted[0][j], fitted[1][j])
        angle, distance = _core.reduce_rebuild(clip.times, rotations[j:j + 1],
                                               translations[j:j + 1],
                                               np.asarray(keys, np.intp), *rows, True, True,
                                               None, tangents)[2:]
        assert angle.max() == result.max_angle[j]
        assert distance.max() == result.max_distance[j]


CMU = pathlib.Path(__file__).resolve().parent / "data" / "cmu"
CM = 1 / 5.644  # the CMU clips' unit is 5.644 cm


def test_real_120_hz_walk():
    """CMU 131_01, 120 Hz: at 0.5 cm every point of every frame stays within
    it (by the independent FK), keeping fewer keys than the local mode needs
    for the same worst world error."""
    clip = read_bvh(CMU / "131_01.bvh")
    assert abs(1 / clip.frame_time - 120) < 1e-3
    result = reduce_keys(clip, position_tolerance=0.5 * CM, fit=False)
    assert world_error(clip, result).max() <= 0.5 * CM
    local = reduce_keys(clip, np.radians(0.3), 0.25 * CM, fit=False)  # 0.69 cm in world
    assert world_error(clip, local).max() > 0.5 * CM
    assert result.num_keys < local.num_keys
    assert len(clip.joints) * clip.num_frames / result.num_keys > 6


def quaternion_matrices(rotations):
    matrices = Rotation.from_quat(rotations[..., [1, 2, 3, 0]].reshape(-1, 4)).as_matrix()
    return matrices.reshape(rotations.shape[:2] + (3, 3))


@pytest.mark.parametrize("fit", [False, True])
@pytest.mark.parametrize("tolerances", [{"position_tolerance": 0.3},
                                        {"angle_tolerance": 0.005, "distance_tolerance": 0.5}],
                         ids=["world", "local"])
def test_threads_give_the_same_reduction(walk, fit, tolerances):
    """Joints are reduced on set_num_threads() threads; any number gives the
    same keys, TCB or tangents and errors, bit for bit."""
    from kbspline import set_num_threads
    previous = set_num_threads(1)
    try:
        one = reduce_keys(walk, fit=fit, **tolerances).to_json()
        set_num_threads(2)
        two = reduce_keys(walk, fit=fit, **tolerances).to_json()
    finally:
        set_num_threads(previous)
    assert one == two


def test_an_error_in_progress_leaves_no_joint_running():
    """Local mode's joints on threads: an exception from progress surfaces
    only once the joints its threads had started are done, so that none
    runs on after reduce_keys has returned (the fuzzer's random clip 12096
    raised 'must be strictly increasing' one run in three on two threads
    when a world pass once returned at once: two wrote one joint's keys)."""
    import threading
    import time
    from kbspline.motion import reduce as reduce_module
    running, lock, in_joint_1 = set(), threading.Lock(), threading.Event()

    def work(j):
        with lock:
            running.add(j)
        if j == 1:
            in_joint_1.set()
        time.sleep(0.0 if j == 0 else 0.05)
        with lock:
            running.discard(j)
        return j

    def stop(done, total):
        assert in_joint_1.wait(10)  # a thread is in joint 1 as the callback raises
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        reduce_module._each_joint(work, 6, 2, stop)
    with lock:
        assert running == set()


def test_an_interrupt_while_joints_are_queued_runs_none_on(monkeypatch):
    """Ctrl-C while the joints are queued (here at the third) cancels
    those queued and waits for the one running before it surfaces (the
    review found the queue outside the clean-up)."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor
    from kbspline.motion import reduce as reduce_module
    started, running, lock, in_joint_0 = [], set(), threading.Lock(), threading.Event()

    def work(j):
        with lock:
            started.append(j)
            running.add(j)
        in_joint_0.set()
        time.sleep(0.5)  # so that joint 1, queued behind it, is cancelled in time
        with lock:
            running.discard(j)
        return j

    class Interrupted(ThreadPoolExecutor):
        def __init__(self, threads):
            super().__init__(1)  # one thread, whatever is asked: joint 1 waits in the queue

        def submit(self, fn, j):
            if j == 2:  # with the one thread in joint 0
                assert in_joint_0.wait(10)
                raise KeyboardInterrupt
            return super().submit(fn, j)

    monkeypatch.setattr(reduce_module, "ThreadPoolExecutor", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        reduce_module._each_joint(work, 6, 2)
    with lock:
        assert running == set() and started == [0]


def test_an_error_in_progress_stops_the_joints_not_yet_started(walk, monkeypatch):
    """With threads, an exception from the progress callback (or Ctrl-C)
    propagates, and the joints queued behind it are not reduced.  Each
    joint takes a while here (it sleeps, releasing the GIL), so that the
    workers cannot run through the queue before the main thread's callback
    raises, however fast a joint's reduction or busy the machine."""
    import time
    from kbspline import set_num_threads
    from kbspline.motion import reduce as reduce_module
    calls = []
    key_joint = reduce_module._key_joint

    def slow_key_joint(*args):
        calls.append(args)
        time.sleep(0.02)
        return key_joint(*args)

    monkeypatch.setattr(reduce_module, "_key_joint", slow_key_joint)

    def stop(done, total):
        raise KeyboardInterrupt

    previous = set_num_threads(2)
    try:
        with pytest.raises(KeyboardInterrupt):
            reduce_keys(walk, 0.001, 0.01, fit=False, progress=stop)
    finally:
        set_num_threads(previous)
    assert 0 < len(calls) < len(walk.joints) // 2


def test_joint_world_refuses_bad_arrays():
    """The forward-kinematics core behind every world check names the
    argument it refuses."""
    from kbspline import _kbspline as core
    q, offset, sites = np.tile([1.0, 0, 0, 0], (5, 1)), np.zeros(3), np.zeros((1, 3))
    rot, origin, points, error = core.joint_world(None, None, q, offset, sites, None)
    assert points.shape == (5, 2, 3) and error is None and rot.shape == (5, 3, 3)
    assert core.joint_world(rot, origin, q, offset, sites, points)[3] == 0.0
    nan_truth = points.copy()
    nan_truth[1, 0, 0] = np.nan  # a NaN must fail the check, not vanish in a max
    assert np.isnan(core.joint_world(rot, origin, q, offset, sites, nan_truth)[3])
    for args, words in [((rot, None, q, offset, sites, None), "both or neither"),
                        ((None, None, q[:, :3].copy(), offset, sites, None), "rotations"),
                        ((None, None, q, np.zeros((4, 3)), sites, None), "offsets"),
                        ((None, None, q, np.zeros(2), sites, None), "offsets"),
                        ((None, None, q, offset, sites, points[:, :1].copy()), "truth"),
                        ((rot[:3].copy(), origin[:3].copy(), q, offset, sites, None),
                         "parent_rot")]:
        with pytest.raises(ValueError, match=words):
            core.joint_world(*args)
    with pytest.raises(TypeError, match="offsets must be a NumPy array"):
        core.joint_world(None, None, q, [0.0, 0.0, 0.0], sites, None)
    with pytest.raises(TypeError, match="float64"):
        core.joint_world(None, None, q.astype(np.float32), offset, sites, None)
    with pytest.raises(ValueError, match="C-contiguous"):
        core.joint_world(None, None, np.tile([1.0, 0, 0, 0, 0], (5, 1))[:, :4], offset, sites,
                         None)
    with pytest.raises(ValueError):  # a zero quaternion
        core.joint_world(None, None, np.zeros((5, 4)), offset, sites, None)


@pytest.mark.parametrize("F", [3, 9])  # the scalar frames alone; blocks of four, then two
def test_joint_world_frame_worst_keeps_a_nan(F):
    """frame_worst folds each frame's largest squared distance in as a max
    that keeps a NaN (as max_error does): one from an earlier call (the
    joint above) or from an earlier point of the same frame is not
    overwritten by a finite distance, so reduce_merge never takes such a
    frame as within the tolerance."""
    from kbspline import _kbspline as core
    q, sites = np.tile([1.0, 0, 0, 0], (F, 1)), np.array([[0.0, 1.0, 0.0]])
    truth = np.zeros((F, 2, 3))
    truth[:, 1, 1], truth[:, 0, 0] = 1.0, 0.5  # every origin 0.5 off
    frame_worst = np.zeros(F)
    frame_worst[[1, F - 1]] = np.nan
    core.joint_world(None, None, q, np.zeros(3), sites, truth, math.inf, frame_worst)
    assert np.isnan(frame_worst[[1, F - 1]]).all()
    assert (np.delete(frame_worst, [1, F - 1]) == 0.25).all()
    # the origin's distance NaN (inf - inf), the site's after it inf
    truth[0, 0, 0] = math.inf
    frame_worst = np.zeros(F)
    error = core.joint_world(None, None, q, np.array([math.inf, 0.0, 0.0]), sites, truth,
                             math.inf, frame_worst)[3]
    assert math.isnan(error) and math.isnan(frame_worst[0])


def reduce_clip_arguments(clip, monkeypatch, **options):
    """The arguments reduce_keys gives the core's world search
    (kb_reduce_clip) on this clip at 0.5 units."""
    from kbspline.motion import reduce as reduce_module
    seen, search = [], _core.reduce_clip

    def recorded(*args):
        seen.append(args)
        return search(*args)

    monkeypatch.setattr(reduce_module._core, "reduce_clip", recorded)
    reduce_keys(clip, position_tolerance=0.5, **options)
    monkeypatch.undo()
    (args,) = seen
    return list(args)


def test_world_search_refuses_bad_arguments(walk, monkeypatch):
    """The core's world search names the argument it refuses, and an
    exception from its progress callback stops it and propagates."""
    args = reduce_clip_arguments(walk, monkeypatch, fit=False)
    keys, rotation_rows, translation_rows, *_ = _core.reduce_clip(*args)
    assert len(keys) == len(walk.joints) and rotation_rows is translation_rows is None
    J = len(walk.joints)
    for index, value, error, words in [
            (0, np.zeros((J, 5, 3)), ValueError, "rotations"),
            (1, np.zeros((J, 5, 3)), ValueError, "translations"),
            (3, np.zeros(J - 1, dtype=np.intp), ValueError, "parents"),
            (4, np.ones(J + 1, dtype=bool), ValueError, "moves"),
            (5, np.zeros((J, 2)), ValueError, "offsets"),
            (6, np.zeros(J, dtype=np.intp), ValueError, "n_sites"),
            (6, np.full(J, -1, dtype=np.intp), ValueError, "n_sites"),
            (7, np.zeros((1, 2)), ValueError, "sites"),
            (8, np.nan, _core.CoreError, "range"),
            (14, 3, TypeError, "progress must be callable")]:
        bad = list(args)
        bad[index] = value
        with pytest.raises(error, match=words):
            _core.reduce_clip(*bad)
    bad = list(args)
    bad[3] = np.arange(J, dtype=np.intp)  # each joint its own parent
    with pytest.raises(_core.CoreError):
        _core.reduce_clip(*bad)
    # far below rounding's error: refused, naming the tolerance
    bad = list(args)
    bad[8] = 1e-300
    with pytest.raises(ValueError, match="position_tolerance=1e-300 is below what"):
        _core.reduce_clip(*bad)
    calls = []

    def stop(done, total):
        calls.append((done, total))
        if done == 3:
            raise KeyboardInterrupt

    bad = list(args)
    bad[14] = stop
    with pytest.raises(KeyboardInterrupt):
        _core.reduce_clip(*bad)
    assert calls == [(1, 12), (2, 12), (3, 12)]
    # the core reads its indices on every pass: a progress callback that
    # rewrites the caller's arrays meanwhile cannot reach them (it read out
    # of bounds before they were copied, a review found)
    parents, n_sites = args[3].copy(), args[6].copy()

    def hostile(done, total):
        parents[-1], n_sites[0] = 10 ** 6, 10 ** 6

    bad = list(args)
    bad[3], bad[6], bad[14] = parents, n_sites, hostile
    again = _core.reduce_clip(*bad)
    assert [k.tolist() for k in again[0]] == [k.tolist() for k in keys]
    # n_sites that wrap around when summed are refused, not summed
    bad = list(args)
    bad[6] = np.array([1, 2 ** 63 - 1, 2 ** 63 - 1, 2] + [0] * (J - 4), dtype=np.intp)
    with pytest.raises(ValueError, match="n_sites"):
        _core.reduce_clip(*bad)


def test_an_angle_cap_below_rounding_is_named(walk):
    """A cap below what every frame keyed reproduces is refused by name."""
    with pytest.raises(ValueError, match="angle_tolerance=1e-300 is below what"):
        reduce_keys(walk, 1e-300, position_tolerance=0.5)


def test_an_error_in_progress_stops_the_world_greedy_search(walk):
    calls = []

    def stop(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        reduce_keys(walk, position_tolerance=0.5, fit=False, progress=stop)
    assert calls == [1]


# A point this far off (x, y) from where the clip puts it: its squared
# distance rounds above fl(0.5 ** 2), yet the square root of that is 0.5.
LIMIT, D0, D1 = 0.5, 0.4609609452482717, 0.19368791122788198


def offsets_past_the_limit_at_its_root(frames=8):
    """Frame 0 on the limit to rounding (its square past fl(limit ** 2)),
    the frames after 100 off."""
    off = np.zeros((frames, 3))
    off[0, :2] = D0, D1
    off[1:, 0] = 100.0
    return off


def test_a_check_stops_only_past_the_limit_as_reported():
    """kb_joint_world's limit is on the distance it reports: a square past
    fl(limit ** 2) whose root is the limit does not stop it (a review found
    it stopping there and reporting the limit, which its callers read as a
    pass, the frames after unchecked)."""
    from kbspline import _kbspline as core
    assert D0 * D0 + D1 * D1 > LIMIT * LIMIT and np.sqrt(D0 * D0 + D1 * D1) == LIMIT
    off = offsets_past_the_limit_at_its_root()
    rot = np.tile([1.0, 0.0, 0.0, 0.0], (len(off), 1))
    truth, no_sites = np.zeros((len(off), 1, 3)), np.zeros((0, 3))
    assert core.joint_world(None, None, rot, off, no_sites, truth)[3] == 100.0
    assert core.joint_world(None, None, rot, off, no_sites, truth, LIMIT)[3] == 100.0
    assert core.joint_world(None, None, rot, off, no_sites, truth, 1.0)[3] == 100.0
    assert core.joint_world(None, None, rot[:1], off[:1], no_sites, truth[:1], LIMIT)[3] == LIMIT


def test_joint_world_refuses_a_world_rot_of_the_wrong_shape(walk):
    rotations = reduce_keys(walk, position_tolerance=1.0, fit=False).rebuild(walk.times)[0]
    F = walk.num_frames
    with pytest.raises(ValueError, match="world_rot"):
        _core.joint_world(None, None, rotations[0], np.zeros(3), np.zeros((0, 3)), None,
                          math.inf, None, (np.zeros((F - 1, 3, 3)), np.zeros((F, 3))))


@pytest.mark.parametrize("virtual", [None, 3.0])
def test_world_error_places_the_points_as_the_oracle_does(virtual):
    """WorldError's points are the independent forward kinematics' (SciPy's
    matrices from the Euler angles); the clip's own curves are no error
    from them, whatever translations are given for joints their OFFSET
    places; a root moved by (1, 1, 1) moves every point sqrt(3)."""
    from kbspline.motion.world_error import WorldError, vertex_positions
    clip = chain_clip(end_site=True)
    rotations, translations = clip.rotations(), clip.translations()
    got, owner = vertex_positions(clip, rotations, translations, virtual)
    want, want_owner = oracle_points(clip, euler_matrices(clip), translations, virtual)
    np.testing.assert_array_equal(owner, want_owner)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    world = WorldError(clip, rotations, translations, virtual)
    offset_placed = translations + np.array([0.0, 1.0, 1.0])[:, None, None]
    assert world.errors(zip(rotations, offset_placed)).tolist() == [0.0, 0.0, 0.0]
    moved = translations + np.array([1.0, 0.0, 0.0])[:, None, None]
    np.testing.assert_allclose(world.errors(zip(rotations, moved)), math.sqrt(3), rtol=1e-12)


def below(world):
    """Each joint of `world` and its descendants, ascending."""
    moved = [[j] for j in range(len(world.parents))]
    for j in reversed(range(len(world.parents))):
        if world.parents[j] >= 0:
            moved[world.parents[j]].extend(moved[j])
    return [sorted(m) for m in moved]


def per_joint_reach(world):
    """Each joint's farthest carried point, joint by joint in NumPy (as
    the tolerance split once found it)."""
    first = np.cumsum([0] + [p.shape[1] for p in world.truth])
    x, y, z = np.ascontiguousarray(np.concatenate(world.truth, axis=1).transpose(2, 1, 0))
    reach, moved = np.empty(len(world.truth)), below(world)
    for a in range(len(world.truth)):
        carried = np.concatenate([np.arange(first[b], first[b + 1]) for b in moved[a]])
        dx, dy, dz = x[carried] - x[first[a]], y[carried] - y[first[a]], z[carried] - z[first[a]]
        reach[a] = np.sqrt((dx * dx + dy * dy + dz * dz).max())
    return reach


@pytest.mark.parametrize("source", CLIPS + sorted(CMU.glob("*.bvh")), ids=lambda p: p.name)
@pytest.mark.parametrize("virtual", [None, 3.0])
def test_reach_is_the_per_joint_one_bit_for_bit(source, virtual):
    """The reach the tolerance split divides by (kb_joint_reach, from the
    points laid out flat) is the per-joint loop's in NumPy to the bit."""
    from kbspline.motion.world_error import WorldError
    clip = read_bvh(source)
    world = WorldError(clip, clip.rotations(), clip.translations(), virtual)
    parents, n_sites = np.array(world.parents), np.array([len(s) for s in world.sites])
    truth = np.concatenate([points.ravel() for points in world.truth])
    assert _core.joint_reach(parents, n_sites, truth).tobytes() == \
        per_joint_reach(world).tobytes()


def test_reach_keeps_a_nan_and_counts_every_ancestor():
    """kb_joint_reach on a chain of three and a sibling off the root: each
    joint's reach is over its own points and every point below it, a NaN
    point makes the reach of it and of every joint above it NaN, and the
    sibling's stays."""
    parents, n_sites = np.array([-1, 0, 1, 0]), np.array([0, 1, 0, 0])
    F = 2
    points = [np.zeros((F, 1, 3)), np.zeros((F, 2, 3)), np.zeros((F, 1, 3)), np.zeros((F, 1, 3))]
    points[1][:, 0] = [1.0, 0.0, 0.0]                    # joint 1 at x = 1
    points[1][1, 1] = [1.0, 5.0, 0.0]                    # its site 5 from it in frame 1
    points[2][:, 0] = [[1.0, 0.0, 2.0], [1.0, 0.0, 3.0]]  # joint 2, 3 from joint 1 at most
    points[3][:, 0] = [0.0, 0.0, -7.0]                   # a sibling branch off the root
    flat = np.concatenate([p.ravel() for p in points])
    reach = _core.joint_reach(parents, n_sites, flat)
    assert reach.tolist() == [7.0, 5.0, 0.0, 0.0]
    points[2][0, 0] = np.nan
    reach = _core.joint_reach(parents, n_sites, np.concatenate([p.ravel() for p in points]))
    assert np.isnan(reach[:3]).all() and reach[3] == 0.0


@pytest.mark.parametrize("parents, n_sites, size, error, match", [
    ([0], [0], 3, ValueError, r"parents\[0\] must be in \[-1, 0\)"),
    ([-1, 2, 1], [0, 0, 0], 9, ValueError, r"parents\[1\]"),
    ([-1], [-1], 3, ValueError, r"n_sites\[0\]"),
    ([-1], [2 ** 62], 3, ValueError, r"n_sites\[0\]"),
    ([-1, 0], [0], 6, ValueError, "n_sites"),
    ([-1], [1], 5, ValueError, "points must hold 6 numbers per frame"),
    ([-1], [0], 0, ValueError, "points must hold"),
    ([], [], 3, ValueError, "at least one"),
])
def test_reach_refuses_bad_arguments_by_name(parents, n_sites, size, error, match):
    with pytest.raises(error, match=match):
        _core.joint_reach(np.array(parents, dtype=np.intp), np.array(n_sites, dtype=np.intp),
                         np.zeros(size))


def test_reach_refuses_points_not_float64_and_indices_not_integers():
    with pytest.raises(TypeError, match="points must be float64"):
        _core.joint_reach(np.array([-1]), np.array([0]), np.zeros(3, dtype=np.float32))
    with pytest.raises(TypeError, match="parents must be a 1-D array of integers"):
        _core.joint_reach(np.array([-1.0, 0.5]), np.array([0, 0]), np.zeros(6))
    with pytest.raises(TypeError, match="n_sites must be a 1-D array of integers"):
        _core.joint_reach(np.array([-1]), np.array([0.7]), np.zeros(3))


def smooth_keyframed_chain(seed=11, draws=6, frames=400):
    """A root and two joints at 30 Hz, every Euler channel a ramp plus a
    slow sine (degrees), the root moving likewise: the last of `draws`
    such clips from one generator (a review's)."""
    rng = np.random.default_rng(seed)
    t = np.arange(frames)
    turns = ["Zrotation", "Xrotation", "Yrotation"]
    for _ in range(draws):
        rot = np.zeros((frames, 3, 3))
        for j in range(3):
            for a in range(3):
                rot[:, j, a] = (rng.uniform(-0.3, 0.3) * t + rng.uniform(0, 30)
                                * np.sin(t / rng.uniform(10, 80) + rng.uniform(0, 6)))
        pos = np.stack([rng.uniform(-1, 1) * t + rng.uniform(0, 20)
                        * np.sin(t / rng.uniform(10, 80)) for _ in range(3)], 1)
    joints = [Joint("root", -1, np.zeros(3), list(POSITION_CHANNELS) + turns)] + [
        Joint(f"j{i}", i - 1, np.array([0, 10.0, 0]), list(turns),
              np.array([0, 5.0, 0]) if i == 2 else None) for i in (1, 2)]
    return Motion(joints, 1 / 30, np.concatenate([pos, rot[:, 0], rot[:, 1], rot[:, 2]], axis=1))


@pytest.mark.parametrize("tolerance", [5.62e-7, 1e-6])
def test_greedy_keys_kept_by_a_fitted_search_are_measured_as_they_are(tolerance):
    """Where no fitted pass keeps fewer keys, the search goes on with the
    greedy keys (no rows: KB tangents) though the joints fit tangent keys;
    their curves, rebuilt since the last ones, were measured as if a key
    shaped only its own two segments, so drops passed the world check on
    stale curves: 27 times past the tolerance, 0.04 times reported (a
    review found it).  Within it, and reported as measured."""
    clip = smooth_keyframed_chain()
    result = reduce_keys(clip, position_tolerance=tolerance)
    error = world_error(clip, result)
    assert error.max() <= tolerance
    np.testing.assert_allclose(result.max_position, error, rtol=1e-6, atol=1e-3 * tolerance)


def test_a_fitted_search_does_not_fall_back_to_every_frame_where_the_first_order_scale_holds():
    """Regression (review of sweep-int): seven frames of a moving root
    that holds for five of them, a joint on it and a second root turning
    by whole turns (the Euler angles' +-360 degrees).  Greedy keys keep
    every frame at any scale; the swept tangent keys failed every fitted
    pass down to FIRST_SCALE / 2 (1.34 times the tolerance there), so the
    search fell back to the greedy keys: [7, 2, 7] keys, where fitted keys
    at the first-order scale hold (main's fit passed at FIRST_SCALE / 2:
    [4, 2, 4])."""
    joints = [Joint("j0", -1, np.array([8.8, -10.7, 2.7]),
                    ["Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation",
                     "Zrotation"], np.array([-11.9, 13.3, 14.1])),
              Joint("j1", 0, np.array([7.2, 1.3, 4.9]), ["Yrotation", "Xrotation", "Zrotation"]),
              Joint("j2", -1, np.array([12.5, 3.0, -4.5]), ["Yrotation", "Zrotation", "Xrotation"],
                    np.array([-3.0, -14.1, -7.1]))]
    held = [-7.66, 1.12, -12.43, 45.02, -10.35, 7.46]
    frames = np.array([
        [-7.41, 0.6, -9.42, 44.07, -10.83, 7.04, 9.74, 17.32, 382.53, 0.07, 360.54, -0.56],
        held + [9.74, 17.32, 22.53, -360.46, 358.86, 0.76],
        held + [-5.95, 11.03, -329.55, 359.37, 360.65, 0.36],
        held + [328.58, -356.22, 21.56, -2.06, -359.46, 362.48],
        held + [-391.42, 363.78, -338.44, 357.95, -359.43, -357.52],
        held + [-28.62, -357.23, -338.69, -1.75, -359.53, -358.79],
        [1.14, 12.08, -20.81, 50.35, -16.34, -49.07, -374.25, -317.46, -341.21, -361.8,
         -359.06, 360.09]])
    clip = Motion(joints, 1 / 120, frames)
    result = reduce_keys(clip, position_tolerance=0.001)
    assert world_error(clip, result).max() <= 0.001
    assert result.num_keys <= 11, [len(k) for k in result.key_frames]
