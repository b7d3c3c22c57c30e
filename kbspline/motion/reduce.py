"""Key reduction: for each joint, the fewest key frames whose squad and KB
splines stay within a tolerance of every original frame."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..position import PositionSpline
from ..quaternion import _angle_between as rotation_error
from ..rotation import RotationSpline
from .bvh import Motion


@dataclasses.dataclass
class Reduction:
    """Each joint's key frames chosen from a clip, and its worst errors."""

    names: list[str]       # joint names
    frame_time: float
    num_frames: int
    key_frames: list[NDArray[np.intp]]  # per joint: (K_j,) frame indices, ascending, first and last kept
    rotations: list[NDArray[np.float64]]  # per joint: (K_j, 4) local rotations at its keys, (w, x, y, z)
    translations: list[NDArray[np.float64]]  # per joint: (K_j, 3) local translations at its keys
    max_angle: NDArray[np.float64]  # (J,) worst rotation error over all frames, radians
    max_distance: NDArray[np.float64]  # (J,) worst translation error over all frames

    @property
    def num_keys(self) -> int:
        return sum(len(k) for k in self.key_frames)

    @property
    def ratio(self) -> float:
        """Keys kept per original joint-frame."""
        return self.num_keys / (len(self.names) * self.num_frames)

    def rebuild(self, times: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(J, M, 4) rotations and (J, M, 3) translations at `times`."""
        rot, tr = [], []
        for keys, q, x in zip(self.key_frames, self.rotations, self.translations):
            key_times = keys * self.frame_time
            rot.append(RotationSpline(key_times, q)(times))
            tr.append(PositionSpline(key_times, x)(times))
        return np.stack(rot), np.stack(tr)

    def to_json(self) -> dict[str, Any]:
        """A dict for json.dump: per joint, its key frames and values."""
        return {"frame_time": self.frame_time, "num_frames": self.num_frames,
                "ratio": self.ratio, "quaternion_order": "wxyz",
                "joints": [{"name": n, "key_frames": k.tolist(), "rotations": q.tolist(),
                            "translations": x.tolist(), "max_angle_deg": float(np.degrees(a)),
                            "max_distance": float(d)}
                           for n, k, q, x, a, d in zip(self.names, self.key_frames,
                                                       self.rotations, self.translations,
                                                       self.max_angle, self.max_distance)]}


def _reduce_joint(times, q, x, angle_tolerance, distance_tolerance):
    """Greedy for one joint: from the first and last frames, key the frame
    worst out of tolerance (relative to its tolerance) until none is."""
    F = len(times)
    keys = [0, F - 1] if F > 1 else [0]
    while True:
        k = np.array(keys)
        if len(k) < 2:
            return k, 0.0, 0.0
        angle = rotation_error(RotationSpline(times[k], q[k])(times), q)
        distance = np.linalg.norm(PositionSpline(times[k], x[k])(times) - x, axis=-1)
        score = np.maximum(angle / angle_tolerance, distance / distance_tolerance)
        worst = int(np.argmax(score))
        if score[worst] <= 1.0 or worst in keys:
            return k, float(angle.max()), float(distance.max())
        keys = sorted(keys + [worst])


def reduce_keys(motion: Motion, angle_tolerance: float, distance_tolerance: float,
                progress: Optional[Callable[[int, int], None]] = None) -> Reduction:
    """Per joint, greedy key reduction so that the rebuilt rotation of every
    frame is within `angle_tolerance` radians of the original and its
    translation within `distance_tolerance` (the clip's units).  Greedy
    (worst frame first) is not guaranteed minimal, but every frame ends
    within both tolerances.  `progress(done, total)` is called per joint."""
    if not (angle_tolerance > 0 and distance_tolerance > 0):
        raise ValueError("angle_tolerance and distance_tolerance must be positive")
    rotations, translations = motion.rotations(), motion.translations()
    times = motion.times
    results = []
    for j in range(len(motion.joints)):
        results.append(_reduce_joint(times, rotations[j], translations[j], angle_tolerance,
                                     distance_tolerance))
        if progress:
            progress(j + 1, len(motion.joints))
    keys = [r[0] for r in results]
    return Reduction([j.name for j in motion.joints], motion.frame_time, motion.num_frames,
                     keys, [rotations[j][k] for j, k in enumerate(keys)],
                     [translations[j][k] for j, k in enumerate(keys)],
                     np.array([r[1] for r in results]), np.array([r[2] for r in results]))
