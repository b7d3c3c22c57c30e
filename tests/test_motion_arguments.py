"""Motion utilities refuse bad arguments by name and value (issue 51 item 13),
and find_cycle turns seconds into frames without losing a loop of exactly
max_seconds to rounding."""
import numpy as np
import pytest

from kbspline.motion import Motion, find_cycle, make_loop, transition
from test_motion import periodic_clip, uniform_clip


@pytest.fixture(scope="module")
def walk():
    return periodic_clip(frames=195)


@pytest.mark.parametrize("which", ["a", "b"])
@pytest.mark.parametrize("frames", [0, 1])
def test_transition_names_a_clip_too_short(which, frames):
    clip = uniform_clip(30)
    short = Motion(clip.joints, clip.frame_time, clip.frames[:frames])
    a, b = (short, clip) if which == "a" else (clip, short)
    with pytest.raises(ValueError, match=f"^{which} has {frames} frame.*at least 2 frames"):
        transition(a, b)


def test_transition_of_two_frame_clips_works():
    clip = uniform_clip(2)
    assert transition(clip, clip, 3).num_frames == 7


@pytest.mark.parametrize("frames, error, words", [
    (np.nan, ValueError, "frames must be a whole number >= 1, not nan"),
    (2.5, ValueError, "frames must be a whole number >= 1, not 2.5"),
    (0, ValueError, "frames must be a whole number >= 1, not 0"),
    (-3, ValueError, "not -3"),
    ("6", TypeError, "frames must be a whole number, not str"),
    (True, TypeError, "frames must be a whole number, not bool"),
])
def test_transition_frames_checked(frames, error, words):
    clip = uniform_clip(10)
    with pytest.raises(error, match=words):
        transition(clip, clip, frames)


def test_transition_frames_whole_float_and_numpy_int():
    clip = uniform_clip(10)
    whole = transition(clip, clip, 4.0).num_frames
    assert whole == transition(clip, clip, np.int64(4)).num_frames == 24


@pytest.mark.parametrize("args, error, words", [
    ((np.nan,), ValueError, "min_seconds must be a finite number >= 0.0, not nan"),
    ((np.inf,), ValueError, "min_seconds must be a finite number >= 0.0, not inf"),
    ((-1.0,), ValueError, "min_seconds must be a finite number >= 0.0, not -1.0"),
    (("half",), TypeError, "min_seconds must be a real number"),
    ((1.0, 0.5), ValueError, r"max_seconds must be a number >= min_seconds=1.0 .* not 0.5"),
    ((0.5, np.nan), ValueError, "max_seconds must be a number >= min_seconds=0.5 .* not nan"),
    ((0.5, "long"), TypeError, "max_seconds must be a number or None, not 'long'"),
    # a range between two frames: 0.51 s to 0.52 s at 30 fps holds no whole frame count
    ((0.51, 0.52), ValueError, "no loop of a whole number of frames .* min_seconds=0.51"),
    ((1e300,), ValueError, "too short for a loop of at least 1e\\+300 s"),
    ((6.5,), ValueError, "the clip has 195 frames: too short for a loop of at least 6.5 s "
                         r"\(195 frames\), which needs 197"),
])
def test_find_cycle_names_argument_and_value(walk, args, error, words):
    with pytest.raises(error, match=words):
        find_cycle(walk, *args)


def test_find_cycle_without_a_longest_loop(walk):
    # inf and None both mean no limit, and a huge limit is no overflow
    want = find_cycle(walk, 0.5)
    assert find_cycle(walk, 0.5, np.inf) == find_cycle(walk, 0.5, 1e300) == want
    assert (want[1] - want[0]) % 40 == 0


@pytest.mark.parametrize("fps", [24, 25, 30, 60, 120])
def test_loop_of_exactly_the_bounds_is_found(fps):
    """min_seconds = max_seconds = k frames: the loop of k frames, though
    k / fps * fps rounds just below k (7 / 24 s is 6.999999999999999 frames)."""
    clip = periodic_clip(frames=3 * 40, frame_time=1 / fps)
    for k in (7, 14, 25, 40):
        start, end, _ = find_cycle(clip, k / fps, k / fps)
        assert end - start == k, (fps, k)


def test_bvh_frame_times_count_whole_frames():
    """BVH prints 1/30 s as 0.0333333: 0.2 s is 6.000006 of those frames,
    and a loop of 0.2 s is the 6-frame one."""
    clip = periodic_clip(period_frames=6, frames=40, frame_time=0.0333333)
    start, end, _ = find_cycle(clip, 0.2, 0.2)
    assert end - start == 6


def test_find_cycle_of_the_shortest_clip(walk):
    clip = Motion(walk.joints, walk.frame_time, walk.frames[:17])
    start, end, _ = find_cycle(clip, 0.5)     # 15 frames, and the frame after
    assert (start, end) == (0, 15)
    with pytest.raises(ValueError, match="has 16 frames: too short"):
        find_cycle(Motion(walk.joints, walk.frame_time, walk.frames[:16]), 0.5)


@pytest.mark.parametrize("start, end, error, words", [
    (2.5, 40, ValueError, "start must be a whole number >= 0, not 2.5"),
    (0, 40.5, ValueError, "end must be a whole number >= 0, not 40.5"),
    ("0", 40, TypeError, "start must be a whole number, not str"),
    (-1, 40, ValueError, "start must be a whole number >= 0, not -1"),
    (10, 11, ValueError, "need 0 <= start < end - 1 < 195, not start=10, end=11"),
    (0, 195, ValueError, "not start=0, end=195"),
])
def test_make_loop_names_argument_and_value(walk, start, end, error, words):
    with pytest.raises(error, match=words):
        make_loop(walk, start, end)


def test_make_loop_takes_whole_floats(walk):
    loop = make_loop(walk, 0.0, np.int64(40))
    assert loop.period == pytest.approx(40 * walk.frame_time)
