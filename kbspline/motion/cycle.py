"""Cycle extraction: the best loop of a locomotion clip, as closed splines."""
from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..position import PositionSpline
from ..rotation import RotationSpline
from .clip import Motion, check_motion


_BLOCK_VALUES = 1 << 22  # joint-pair angles computed at once: 32 MiB of float64


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
        The clip.
    min_seconds, max_seconds : float
        The shortest and longest loops considered (no longest by default).

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
    """
    check_motion(motion, "motion")
    joints = [j for j, joint in enumerate(motion.joints) if joint.parent >= 0]
    if not joints:
        raise ValueError("the clip has no joints below its roots to compare poses by")
    q = motion.rotations()[joints]
    F = motion.num_frames
    shortest = max(1, int(np.ceil(min_seconds / motion.frame_time)))
    longest = F if max_seconds is None else int(max_seconds / motion.frame_time)
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
                         f"{min_seconds} s")
    return best


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
        The clip.
    start, end : int
        The loop's frames, as `find_cycle` gives them.
    tension, continuity, bias : float
        The TCB of every key.

    Returns
    -------
    Loop
    """
    check_motion(motion, "motion")
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
