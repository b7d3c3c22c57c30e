"""Resampling a clip to another frame rate with rotation and position splines."""
from __future__ import annotations

import numpy as np

from ..position import PositionSpline
from ..rotation import RotationSpline
from .clip import Motion, check_motion

#: A duration within this relative distance of a whole number of new frames
#: is that number, so the last frame is kept despite the frame time's rounding.
WHOLE_FRAMES_TOLERANCE = 1e-5


def resample(motion: Motion, fps: float, tension: float = 0.0, continuity: float = 0.0,
             bias: float = 0.0, *, keep_end: bool = False) -> Motion:
    """The motion at another frame rate.

    Joint rotations are resampled by one batched RotationSpline, translations
    by one PositionSpline (KB tangents with the given TCB, natural ends).

    Parameters
    ----------
    motion : Motion
        The clip.
    fps : float
        Frames per second of the result.
    tension, continuity, bias : float
        The TCB of every key.
    keep_end : bool
        Keep the last original frame too.

    Returns
    -------
    Motion
        The frame time is exactly 1 / fps and the first frame is kept; the
        clip ends at the last whole frame within its duration (the last
        original frame itself when the duration is a whole number of new
        frames to a relative 1e-5, as for 30 -> 60 or 120 fps with the frame
        time rounded in the file).  With ``keep_end=True`` the frame
        time is the duration divided into the whole number of steps nearest
        1 / fps (24 fps from a 30 fps clip of 195 frames: 23.68).

    Raises
    ------
    ValueError
        For an fps that is not positive and finite.
    """
    check_motion(motion, "motion")
    fps = float(fps)
    if not np.isfinite(fps) or fps <= 0:
        raise ValueError(f"fps must be a positive number, not {fps}")
    times = motion.times
    duration = times[-1]
    if motion.num_frames < 2:
        return Motion(motion.joints, 1.0 / fps, motion.frames.copy())
    if keep_end:
        steps = max(1, int(round(duration * fps)))
        frame_time = duration / steps
    else:
        frame_time = 1.0 / fps
        # a BVH's frame time has about six digits (0.0333333): 194 of them at
        # 60 fps make 387.9992 frames, which are 388 whole ones and the last
        exact = duration * fps
        steps = int(round(exact))
        if abs(exact - steps) > WHOLE_FRAMES_TOLERANCE * max(exact, 1.0):
            steps = int(np.floor(exact))
    new_times = np.arange(steps + 1) * frame_time
    ends_on_last = keep_end or abs(new_times[-1] - duration) <= (
        WHOLE_FRAMES_TOLERANCE * max(duration * fps, 1.0) * frame_time)
    if ends_on_last:
        new_times[-1] = duration
    rotations = RotationSpline(times, motion.rotations(), tension, continuity, bias)(new_times)
    translations = PositionSpline(times, motion.translations(), tension, continuity,
                                  bias)(new_times)
    out = motion.with_frames(rotations, translations, frame_time)
    # Euler angles are unwrapped along time; start them on the same turn as
    # the original channels, which may lie outside [-180, 180]
    out.align_turns(0, motion.frames[0])
    out.frames[0] = motion.frames[0]
    if ends_on_last:
        out.frames[-1] = motion.frames[-1]
    return out
