"""Resampling a clip to another frame rate with rotation and position splines."""
from __future__ import annotations

import numpy as np

from ..position import PositionSpline
from ..rotation import RotationSpline
from .bvh import Motion


def resample(motion: Motion, fps: float, tension: float = 0.0, continuity: float = 0.0,
             bias: float = 0.0) -> Motion:
    """`motion` at `fps` frames per second: joint rotations by one batched
    RotationSpline, translations by one PositionSpline (KB tangents with the
    given TCB, natural ends).

    The first and last frames are kept exactly, so the frame time is the
    clip's duration divided into a whole number of steps as close to 1/fps
    as possible (for 30 -> 60 fps exactly 1/60).
    """
    fps = float(fps)
    if not np.isfinite(fps) or fps <= 0:
        raise ValueError(f"fps must be a positive number, not {fps}")
    times = motion.times
    duration = times[-1]
    if motion.num_frames < 2:
        return Motion(motion.joints, 1.0 / fps, motion.frames.copy())
    steps = max(1, int(round(duration * fps)))
    new_times = np.linspace(0.0, duration, steps + 1)
    rotations = RotationSpline(times, motion.rotations(), tension, continuity, bias)(new_times)
    translations = PositionSpline(times, motion.translations(), tension, continuity,
                                  bias)(new_times)
    out = motion.with_frames(rotations, translations, duration / steps)
    # Euler angles are unwrapped along time; start them on the same turn as
    # the original channels, which may lie outside [-180, 180]
    out.align_turns(0, motion.frames[0])
    out.frames[0] = motion.frames[0]
    out.frames[-1] = motion.frames[-1]
    return out
