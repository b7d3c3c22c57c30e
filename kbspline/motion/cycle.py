"""Cycle extraction: the best loop of a locomotion clip, as closed splines."""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._checks import _check_count, _check_scalar
from ..position import PositionSpline
from ..rotation import RotationSpline
from .clip import Motion, check_motion
from .resample import WHOLE_FRAMES_TOLERANCE


_BLOCK_VALUES = 1 << 22  # joint-pair angles computed at once: 32 MiB of float64
# Seconds are turned into frames with resample's relative slack, so that a
# loop of exactly max_seconds is considered: 7 / 24 s is 6.999999999999999
# frames, and BVH prints frame times to 6 digits (0.2 s is 6.000006 frames of
# 0.0333333 s).


def pose_distances(p, q):
    """(M, N) sum over joints of the rotation angle between the poses p (J, M, 4)
    and q (J, N, 4)."""
    angles = np.einsum("jfc,jgc->jfg", p, q)
    np.abs(angles, out=angles)
    np.clip(angles, 0.0, 1.0, out=angles)
    np.arccos(angles, out=angles)
    angles *= 2.0
    return angles.sum(axis=0)


def find_cycle(motion: Motion, min_seconds: float = 0.5,
               max_seconds: Optional[float] = None) -> tuple[int, int, float]:
    """The frames that best close a loop.

    Parameters
    ----------
    motion : Motion
        The clip, with joints below its roots; it needs at least
        ``ceil(min_seconds / frame_time) + 2`` frames (a loop's end and the
        frame after it, which the cost compares too).
    min_seconds : float
        The shortest loop considered, finite and >= 0 (a loop is at least
        one frame long).
    max_seconds : float, optional
        The longest loop considered, >= min_seconds; None or inf for no
        limit.

    Returns
    -------
    start, end : int
        The loop's frames, ``end > start``.
    cost : float
        The pair's cost.

    Notes
    -----
    The cost of a pair is the distance between the poses at the two frames
    plus that between the next frames (so the motion also continues the same
    way), summed over every joint but the roots, whose rotation carries the
    heading.  Of equal costs, the earliest start wins, then the earliest end.
    Memory is O(frames): the pairs are compared a block of starts at a time.

    Raises
    ------
    ValueError
        For a clip with no joints below its roots, a negative or non-finite
        min_seconds, a max_seconds below min_seconds or NaN, a range that
        holds no whole number of frames, or a clip too short for any loop
        in the range.
    """
    check_motion(motion, "motion")
    min_seconds = _check_scalar("min_seconds", min_seconds, 0.0)
    limit = math.inf if max_seconds is None else _check_limit(max_seconds, min_seconds)
    joints = [j for j, joint in enumerate(motion.joints) if joint.parent >= 0]
    if not joints:
        raise ValueError("the clip has no joints below its roots to compare poses by")
    q = motion.rotations()[joints]
    F = motion.num_frames
    in_frames = 1.0 / motion.frame_time
    # frame counts as floats first: seconds far beyond the clip are no overflow
    least = max(1.0, float(np.ceil(min_seconds * in_frames * (1 - WHOLE_FRAMES_TOLERANCE))))
    most = float(np.floor(limit * in_frames * (1 + WHOLE_FRAMES_TOLERANCE)))
    shortest, longest = int(min(least, F)), int(min(most, F))
    if most < least:
        raise ValueError(f"no loop of a whole number of frames ({motion.frame_time:.6g} s each) "
                         f"lies between min_seconds={min_seconds} and max_seconds={max_seconds}")
    rows = max(1, _BLOCK_VALUES // (len(joints) * F))
    best = None
    for first in range(0, F - 1, rows):
        last = min(first + rows, F - 1) - 1                   # starts first..last
        lo, hi = first + shortest, min(last + longest, F - 2)  # ends lo..hi
        if lo > hi:
            continue
        D = pose_distances(q[:, first:last + 2], q[:, lo:hi + 2])
        cost = D[:-1, :-1] + D[1:, 1:]                        # [start - first, end - lo]
        lag = np.arange(lo, hi + 1)[None, :] - np.arange(first, last + 1)[:, None]
        cost[(lag < shortest) | (lag > longest)] = np.inf
        i, j = np.unravel_index(np.argmin(cost), cost.shape)
        if best is None or cost[i, j] < best[2]:
            best = (first + int(i), lo + int(j), float(cost[i, j]))
    if best is None or best[2] == np.inf:
        raise ValueError(f"the clip has {F} frames: too short for a loop of at least "
                         f"{min_seconds} s ({least:.0f} frames), which needs {least + 2:.0f}")
    return best


def _check_limit(max_seconds, min_seconds):
    """max_seconds as a float >= min_seconds (inf allowed), or a clear error."""
    try:
        limit = float(max_seconds)
    except (TypeError, ValueError):
        raise TypeError(f"max_seconds must be a number or None, not {max_seconds!r}") from None
    if math.isnan(limit) or limit < min_seconds:
        raise ValueError(f"max_seconds must be a number >= min_seconds={min_seconds} "
                         f"(inf or None for no limit), not {max_seconds!r}")
    return limit


@dataclasses.dataclass
class Loop:
    """A clip's cycle as closed splines.

    Joint rotations loop exactly; the root translations loop after their
    drift over one cycle is taken out, and `sample` puts the drift back, so
    the loop can walk on for ever.

    Attributes
    ----------
    rotations : RotationSpline
        Closed, one track per joint.
    translations : PositionSpline
        Closed, one track per joint, drift taken out.
    drift : ndarray (J, 3)
        Each joint's translation over one cycle.
    period : float
        The cycle's duration, seconds.
    """

    rotations: RotationSpline     # closed, (J,) tracks
    translations: PositionSpline  # closed, (J,) tracks, drift removed
    drift: NDArray[np.float64]    # (J, 3) translation gained per cycle
    period: float

    def sample(self, times: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Rotations and translations at any times.

        Parameters
        ----------
        times : array_like (M,)
            Seconds; 0 is the loop's first frame.

        Returns
        -------
        rotations : ndarray (J, M, 4)
        translations : ndarray (J, M, 3)
        """
        times = np.asarray(times, dtype=float)
        turns = np.floor(times / self.period)
        phase = times - turns * self.period
        laps = (turns + phase / self.period)[..., None]              # (M, 1)
        tr = self.translations(phase) + self.drift[:, None, :] * laps
        return self.rotations(times), tr


def make_loop(motion: Motion, start: int, end: int, tension: float = 0.0,
              continuity: float = 0.0, bias: float = 0.0) -> Loop:
    """A `Loop` of frames start..end-1, the last key repeating frame start.

    Parameters
    ----------
    motion : Motion
        The clip, of at least 3 frames.
    start, end : int
        The loop's frames, as `find_cycle` gives them: whole numbers with
        ``0 <= start``, ``end - start >= 2`` and ``end < num_frames`` (the
        loop's last key repeats frame start).
    tension, continuity, bias : float
        The TCB of every key.

    Returns
    -------
    Loop
    """
    check_motion(motion, "motion")
    start, end = _check_count("start", start, 0), _check_count("end", end, 0)
    if not 0 <= start < end < motion.num_frames or end - start < 2:
        raise ValueError(f"need 0 <= start < end - 1 < {motion.num_frames}, "
                         f"not start={start}, end={end}")
    rotations, translations = motion.rotations(), motion.translations()
    frames = np.arange(start, end)
    times = np.append(frames - start, end - start) * motion.frame_time
    period = times[-1]
    q = np.concatenate([rotations[:, frames], rotations[:, start:start + 1]], axis=1)
    drift = translations[:, end] - translations[:, start]
    x = translations[:, frames] - drift[:, None, :] * (times[:-1, None] / period)
    x = np.concatenate([x, x[:, :1]], axis=1)
    return Loop(RotationSpline(times, q, tension, continuity, bias, ends="closed"),
                PositionSpline(times, x, tension, continuity, bias, ends="closed"),
                drift, period)
