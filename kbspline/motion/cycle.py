"""Cycle extraction: the best loop of a locomotion clip, as closed splines."""
from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..position import PositionSpline
from ..rotation import RotationSpline
from .bvh import Motion


def pose_distances(rotations, joints):
    """(F, F) sum over `joints` of the rotation angle between frames' poses."""
    q = rotations[joints]                                   # (J, F, 4)
    dots = np.abs(np.einsum("jfc,jgc->jfg", q, q)).clip(0.0, 1.0)
    return (2.0 * np.arccos(dots)).sum(axis=0)


def find_cycle(motion: Motion, min_seconds: float = 0.5,
               max_seconds: Optional[float] = None) -> tuple[int, int, float]:
    """(start, end, cost): the frames that best close a loop, end > start.

    The cost of a pair is the distance between the poses at the two frames
    plus that between the next frames (so the motion also continues the same
    way), summed over every joint but the roots, whose rotation carries the
    heading.  Loops shorter than `min_seconds` (or longer than
    `max_seconds`) are not considered."""
    joints = [j for j, joint in enumerate(motion.joints) if joint.parent >= 0]
    if not joints:
        raise ValueError("the clip has no joints below its roots to compare poses by")
    D = pose_distances(motion.rotations(), joints)
    F = motion.num_frames
    cost = D[:-1, :-1] + D[1:, 1:]
    idx = np.arange(F - 1)
    lag = idx[None, :] - idx[:, None]                               # [i, j] -> j - i
    shortest = max(1, int(np.ceil(min_seconds / motion.frame_time)))
    longest = F if max_seconds is None else int(max_seconds / motion.frame_time)
    allowed = (lag >= shortest) & (lag <= longest)
    if not allowed.any():
        raise ValueError(f"the clip has {F} frames: too short for a loop of at least "
                         f"{min_seconds} s")
    cost = np.where(allowed, cost, np.inf)
    start, end = np.unravel_index(np.argmin(cost), cost.shape)
    return int(start), int(end), float(cost[start, end])


@dataclasses.dataclass
class Loop:
    """A clip's cycle as closed splines: joint rotations loop exactly; the
    root translations loop after their drift over one cycle is taken out,
    and `sample` puts the drift back, so the loop can walk on for ever."""

    rotations: RotationSpline     # closed, (J,) tracks
    translations: PositionSpline  # closed, (J,) tracks, drift removed
    drift: NDArray[np.float64]    # (J, 3) translation gained per cycle
    period: float

    def sample(self, times: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(J, M, 4) rotations and (J, M, 3) translations at any times
        (0 is the loop's first frame)."""
        times = np.asarray(times, dtype=float)
        turns = np.floor(times / self.period)
        phase = times - turns * self.period
        laps = (turns + phase / self.period)[..., None]              # (M, 1)
        tr = self.translations(phase) + self.drift[:, None, :] * laps
        return self.rotations(times), tr


def make_loop(motion: Motion, start: int, end: int, tension: float = 0.0,
              continuity: float = 0.0, bias: float = 0.0) -> Loop:
    """A `Loop` of frames start..end-1, the last key repeating frame start."""
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
