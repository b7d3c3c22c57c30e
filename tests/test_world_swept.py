"""The world-space search with tangent keys in C (kb_reduce_world_swept,
_core.reduce_world_swept): the search 53cf024 ran in Python
(world_swept_oracle), to the bit, on the real clips and on random ones over
every option; the same on any number of threads; the pieces of new keys
that hold kept; progress numbered on from the sweeps to the loosening, and
an exception from it stopping the search; bad arguments refused."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import _kbspline as _core, set_num_threads
from kbspline.motion import Joint, Motion, read_bvh, reduce_keys
from kbspline.motion import reduce as reduce_module
from mocap import CLIPS, MISSING
from test_reduce_world import random_clips, world_error
from world_swept_oracle import same, world_swept


@pytest.mark.skipif(not CLIPS, reason=MISSING)
@pytest.mark.parametrize("tolerance", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem.split("_")[1])
def test_real_clips_reduce_as_the_python_search_did(path, tolerance):
    clip = read_bvh(path)
    assert same(reduce_keys(clip, position_tolerance=tolerance),
                world_swept(clip, tolerance)[0])


@settings(max_examples=60, deadline=None)
@given(clip=random_clips(), tolerance=st.floats(1e-3, 10.0),
       virtual=st.sampled_from([None, 1.0, 20.0]),
       angle=st.sampled_from([None, 1e-3, 0.05]), distance=st.sampled_from([None, 0.01, 1.0]))
def test_random_clips_reduce_as_the_python_search_did(clip, tolerance, virtual, angle, distance):
    try:
        oracle = world_swept(clip, tolerance, virtual, angle, distance)
    except ValueError:  # a cap below what the splines reproduce: refused either way
        with pytest.raises(ValueError):
            reduce_keys(clip, angle, distance, position_tolerance=tolerance,
                        virtual_distance=virtual)
        return
    try:
        result = reduce_keys(clip, angle, distance, position_tolerance=tolerance,
                             virtual_distance=virtual)
    except ValueError as e:  # the caps refused after the search
        assert "below what the splines reproduce" in str(e)
        return
    if oracle is not None:  # else the greedy search took over, as before
        assert same(result, oracle[0])
    assert result.max_position.max() <= tolerance


@pytest.mark.skipif(not CLIPS, reason=MISSING)
def test_the_same_on_any_threads():
    walk = read_bvh(CLIPS[-1])
    assert walk.num_frames >= reduce_module.FIT_THREADS_FROM
    previous = set_num_threads(1)
    try:
        one = reduce_keys(walk, position_tolerance=0.3)
        set_num_threads(2)
        two = reduce_keys(walk, position_tolerance=0.3)
    finally:
        set_num_threads(previous)
    assert same(one, two)


@pytest.mark.skipif(not CLIPS, reason=MISSING)
def test_the_search_keeps_pieces_of_new_keys():
    """Where a joint's new tangent keys take some frame past the bound, the
    loosening keeps the pieces of them that hold: within the bound, fewer
    keys than keeping each joint's new keys whole or not at all."""
    walk = read_bvh(CLIPS[-1])
    pieces = reduce_keys(walk, position_tolerance=0.3)
    whole = world_swept(walk, 0.3, merge=False)[0]
    assert world_error(walk, pieces).max() <= 0.3 and world_error(walk, whole).max() <= 0.3
    assert pieces.num_keys < whole.num_keys


@pytest.mark.skipif(not CLIPS, reason=MISSING)
def test_progress_counts_on_from_the_sweeps_and_can_stop_the_search():
    walk = read_bvh(CLIPS[-1])
    calls = []
    reduce_keys(walk, position_tolerance=0.5, progress=lambda *a: calls.append(a))
    total = (reduce_module.SEARCH_PASSES + reduce_module.FIT_PASSES + 1
             + len(reduce_module.TANGENT_LOOSEN_FACTORS))
    done = [k for k, _ in calls]
    first = reduce_module.SEARCH_PASSES + reduce_module.FIT_PASSES
    assert done[0] == 1 and done[-1] == total and all(t == total for _, t in calls)
    assert done[done.index(first):] == list(range(first, total + 1))

    def stop(done, total):
        if done > first:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        reduce_keys(walk, position_tolerance=0.5, progress=stop)


class _FalsyRecorder(list):
    """A progress that is false while empty (a list that records its calls)."""
    def __call__(self, done, total):
        self.append((done, total))


def test_a_false_progress_is_not_called_as_before_the_search_moved_to_c():
    """reduce_keys calls progress only where it is true (passed's `if
    progress`), as d0e4762 did: the core's one-argument report must not
    reach a progress that is false (an empty list that records), which
    raised TypeError (missing 'total') after cf60041."""
    t = np.arange(20) / 30.0
    joints = [Joint("root", -1, [0, 0, 0], ["Xposition", "Yposition", "Zposition",
                                            "Zrotation", "Xrotation", "Yrotation"], None),
              Joint("arm", 0, [0, 10, 0], ["Zrotation", "Xrotation", "Yrotation"], [0, 5, 0])]
    clip = Motion(joints, 1 / 30, np.column_stack([np.sin(3 * t + k) * 20 for k in range(9)]))
    recorder = _FalsyRecorder()
    assert same(reduce_keys(clip, position_tolerance=0.5, progress=recorder),
                reduce_keys(clip, position_tolerance=0.5))
    assert recorder == []


def _clip_args(clip, tolerance):
    """reduce_world_swept's clip arguments for `clip` at `tolerance`."""
    captured = []
    search = _core.reduce_world_swept

    def capture(*args):
        captured.append(args)
        return search(*args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reduce_module._core, "reduce_world_swept", capture)
        reduce_keys(clip, position_tolerance=tolerance)
    return list(captured[0][:11])


def test_scales_changed_by_progress_change_nothing():
    """A progress that overwrites the scales array (the binding reads the
    caller's) once a pass has held: the same keys as without.  Before, the
    search read the scale of the pass that held again, NaN, left the keys
    unwritten and the binding read them all the same (an uninitialised
    count: 'array is too big', or rows read past the clip)."""
    t = np.arange(12) / 30.0
    joints = [Joint("root", -1, [0, 0, 0], ["Xposition", "Yposition", "Zposition",
                                            "Zrotation", "Xrotation", "Yrotation"], None),
              Joint("arm", 0, [0, 10, 0], ["Zrotation", "Xrotation", "Yrotation"], [0, 5, 0])]
    frames = np.column_stack([np.sin(3 * t + k) * 20 for k in range(9)])
    args = _clip_args(Motion(joints, 1 / 30, frames), 0.05)
    plain = _core.reduce_world_swept(*args, 0.05, np.array([2.0, 1.0]), np.array([2.0]),
                                     None, 1)
    scales = np.array([2.0, 1.0])

    def spoil(done):
        scales[:] = np.nan
    spoiled = _core.reduce_world_swept(*args, 0.05, scales, np.array([2.0]), spoil, 1)
    assert plain is not None and spoiled is not None and spoiled[-1] == plain[-1] == 2.0
    for a, b in zip(plain[:3], spoiled[:3]):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
    for a, b in zip(plain[3:6], spoiled[3:6]):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("change, error, match", [
    ({11: np.nan}, ValueError, "position_tolerance"),
    ({12: np.array([])}, ValueError, "scales must be a non-empty array"),
    ({12: np.array([2.0, -1.0])}, ValueError, "scales"),
    ({13: np.array([np.inf])}, ValueError, "factors must be an array"),
    ({14: 3}, TypeError, "progress must be callable"),
    ({15: 0}, ValueError, "n_threads"),
    ({3: np.array([0, 0, 1])}, ValueError, "parents"),
    ({9: np.zeros((3, 2))}, ValueError, "tolerances"),
])
def test_bad_arguments(change, error, match):
    t = np.arange(12) / 30.0
    joints = [Joint("root", -1, [0, 0, 0], ["Xposition", "Yposition", "Zposition",
                                            "Zrotation", "Xrotation", "Yrotation"], None),
              Joint("arm", 0, [0, 10, 0], ["Zrotation", "Xrotation", "Yrotation"], [0, 5, 0])]
    frames = np.column_stack([np.sin(3 * t + k) * 20 for k in range(9)])
    args = _clip_args(Motion(joints, 1 / 30, frames), 0.5)
    args += [0.5, np.array([2.0, 1.0]), np.array([2.0]), None, 1]
    for index, value in change.items():
        args[index] = value
    with pytest.raises(error, match=match):
        _core.reduce_world_swept(*args)
