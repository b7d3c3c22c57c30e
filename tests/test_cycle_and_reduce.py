"""find_cycle in blocks and reduce_keys by segments give what the whole-clip
algorithms they replaced give (transcribed here as oracles)."""
import numpy as np
import pytest

from kbspline.motion import Motion, find_cycle, read_bvh, reduce_keys
from kbspline.motion import cycle as cycle_module
from kbspline.motion.resample import WHOLE_FRAMES_TOLERANCE
from kbspline.quaternion import _angle_between as rotation_error
from mocap import CLIPS, first_clip


def find_cycle_whole(motion, min_seconds=0.5, max_seconds=None):
    """The previous find_cycle: every (F, F) pair cost at once."""
    joints = [j for j, joint in enumerate(motion.joints) if joint.parent >= 0]
    q = motion.rotations()[joints]
    dots = np.abs(np.einsum("jfc,jgc->jfg", q, q)).clip(0.0, 1.0)
    D = (2.0 * np.arccos(dots)).sum(axis=0)
    F = motion.num_frames
    cost = D[:-1, :-1] + D[1:, 1:]
    idx = np.arange(F - 1)
    lag = idx[None, :] - idx[:, None]
    # seconds to frames as find_cycle documents it (a relative slack for
    # rounding and BVH's 6-digit frame times)
    slack = WHOLE_FRAMES_TOLERANCE
    shortest = max(1, int(np.ceil(min_seconds / motion.frame_time * (1 - slack))))
    longest = F if max_seconds is None else int(max_seconds / motion.frame_time * (1 + slack))
    allowed = (lag >= shortest) & (lag <= longest)
    if not allowed.any():
        return None
    cost = np.where(allowed, cost, np.inf)
    start, end = np.unravel_index(np.argmin(cost), cost.shape)
    return int(start), int(end), float(cost[start, end])


def perturbed(clip, seed):
    rng = np.random.default_rng(seed)
    return Motion(clip.joints, clip.frame_time, clip.frames + rng.normal(0, 2, clip.frames.shape))


@pytest.mark.parametrize("block", [1, 700, cycle_module._BLOCK_VALUES])
@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_find_cycle_as_whole_clip_oracle(path, block, monkeypatch):
    """Blocks of one start row, of a few rows, and the default size."""
    monkeypatch.setattr(cycle_module, "_BLOCK_VALUES", block)
    clip = read_bvh(path)
    for motion in (clip, perturbed(clip, 1)):
        for min_seconds, max_seconds in [(0.5, None), (0.1, 0.4), (0.0, None), (0.2, 0.2)]:
            want = find_cycle_whole(motion, min_seconds, max_seconds)
            if want is None:
                with pytest.raises(ValueError, match="too short for a loop"):
                    find_cycle(motion, min_seconds, max_seconds)
            else:
                assert find_cycle(motion, min_seconds, max_seconds) == want


def test_find_cycle_ties_go_to_the_earliest_pair(monkeypatch):
    """A clip standing still (identity rotations, so every pair costs
    exactly 0): the first pair in start-then-end order wins, across block
    boundaries too."""
    clip = first_clip()
    motion = Motion(clip.joints, 0.1, np.zeros((40, clip.frames.shape[1])))
    for block in (1, 50, cycle_module._BLOCK_VALUES):
        monkeypatch.setattr(cycle_module, "_BLOCK_VALUES", block)
        assert find_cycle(motion, 0.5) == find_cycle_whole(motion, 0.5) == (0, 5, 0.0)


def test_find_cycle_without_allowed_pairs():
    clip = first_clip()
    with pytest.raises(ValueError, match=f"the clip has {clip.num_frames} frames: too short"):
        find_cycle(clip, 10.0)
    # a range upside down is not the clip's fault (issue 51 item 13)
    for max_seconds in (0.3, -1.0):
        with pytest.raises(ValueError, match="max_seconds must be a number >= min_seconds=0.5"):
            find_cycle(clip, 0.5, max_seconds)


def reduce_joint_whole(times, q, x, angle_tolerance, distance_tolerance):
    """The previous greedy: both splines through all keys evaluated at every
    frame after each new key."""
    from kbspline import PositionSpline, RotationSpline
    keys = [0, len(times) - 1]
    while True:
        k = np.array(keys)
        angle = rotation_error(RotationSpline(times[k], q[k])(times), q)
        distance = np.linalg.norm(PositionSpline(times[k], x[k])(times) - x, axis=-1)
        score = np.maximum(angle / angle_tolerance, distance / distance_tolerance)
        worst = int(np.argmax(score))
        if score[worst] <= 1.0 or worst in keys:
            return k, float(angle.max()), float(distance.max())
        keys = sorted(keys + [worst])


@pytest.mark.parametrize("degrees, distance", [(0.01, 0.01), (0.5, 0.05), (5.0, 1.0)])
@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_reduce_keys_as_whole_clip_oracle(path, degrees, distance):
    """The same keys, and the same worst errors to rounding (the core takes
    angles by atan2, the oracle by the chord), as evaluating every frame
    after each new key."""
    clip = read_bvh(path)
    if clip.num_frames > 60:
        clip = Motion(clip.joints, clip.frame_time, clip.frames[:60])
    result = reduce_keys(clip, np.radians(degrees), distance, fit=False)
    rotations, translations = clip.rotations(), clip.translations()
    for j in range(len(clip.joints)):
        keys, angle, dist = reduce_joint_whole(clip.times, rotations[j], translations[j],
                                               np.radians(degrees), distance)
        np.testing.assert_array_equal(result.key_frames[j], keys)
        np.testing.assert_allclose([result.max_angle[j], result.max_distance[j]],
                                   [angle, dist], rtol=1e-12, atol=1e-14)
    rebuilt_rotations, rebuilt_translations = result.rebuild(clip.times)
    assert rotation_error(rebuilt_rotations, rotations).max() <= np.radians(degrees)
    assert np.linalg.norm(rebuilt_translations - translations, axis=-1).max() <= distance


def test_reduce_keys_short_clips_and_progress():
    clip = first_clip()
    calls = []
    motion = Motion(clip.joints, clip.frame_time, clip.frames[:2])
    result = reduce_keys(motion, 1e-9, 1e-9, progress=lambda *a: calls.append(a))
    assert [list(k) for k in result.key_frames] == [[0, 1]] * len(clip.joints)
    assert calls == [(j + 1, len(clip.joints)) for j in range(len(clip.joints))]
    for frames in (0, 1):
        with pytest.raises(ValueError, match=f"the clip has {frames} frame.s.; reducing needs"):
            reduce_keys(Motion(clip.joints, clip.frame_time, clip.frames[:frames]), 0.1, 0.1)
    for tolerances in ({"angle_tolerance": 0.1, "distance_tolerance": 0.1},
                       {"position_tolerance": 0.1}):  # each mode failed its own obscure way
        with pytest.raises(ValueError, match="the clip has no joints"):
            reduce_keys(Motion([], clip.frame_time, np.zeros((5, 0))), **tolerances)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_reduce_keys_refuses_frames_that_are_not_finite(value):
    clip = first_clip()
    frames = clip.frames.copy()
    frames[5, 7] = value
    motion = Motion(clip.joints, clip.frame_time, frames)
    for arguments in [dict(angle_tolerance=0.1, distance_tolerance=0.1),
                      dict(position_tolerance=0.5)]:
        with pytest.raises(ValueError, match=r"motion.frames\[5, 7\] is (nan|inf): reducing "
                                             r"needs finite frames"):
            reduce_keys(motion, **arguments)
