"""Key reduction: for each joint, the fewest key frames whose squad and KB
splines stay within a tolerance of every original frame."""
from __future__ import annotations

import bisect
import dataclasses
import heapq
import itertools
from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..position import PositionSpline
from ..quaternion import _angle_between as rotation_error
from ..rotation import RotationSpline
from .clip import Motion, check_motion


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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reduction:
        """The Reduction that `to_json` wrote (as json.load gives it back);
        a ValueError names what is missing or malformed."""
        try:
            joints = data["joints"]
            if data.get("quaternion_order", "wxyz") != "wxyz":
                raise ValueError(f"quaternion_order {data['quaternion_order']!r} is not 'wxyz'")
            out = cls(
                names=[str(j["name"]) for j in joints], frame_time=float(data["frame_time"]),
                num_frames=int(data["num_frames"]),
                key_frames=[np.asarray(j["key_frames"], dtype=np.intp) for j in joints],
                rotations=[np.asarray(j["rotations"], dtype=np.float64).reshape(-1, 4)
                           for j in joints],
                translations=[np.asarray(j["translations"], dtype=np.float64).reshape(-1, 3)
                              for j in joints],
                max_angle=np.radians([float(j["max_angle_deg"]) for j in joints]),
                max_distance=np.array([float(j["max_distance"]) for j in joints]))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a reduction written by Reduction.to_json: {exc!r}") from None
        for name, keys, q, x in zip(out.names, out.key_frames, out.rotations, out.translations):
            if (len(keys) < 2 or len(q) != len(keys) or len(x) != len(keys)
                    or keys[0] != 0 or keys[-1] != out.num_frames - 1
                    or np.any(np.diff(keys) <= 0)):
                raise ValueError(f"joint {name!r}: its key frames must rise from 0 to "
                                 f"num_frames - 1, with a rotation and translation each")
        return out

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


def _errors(times, rotations, translations, windows):
    """(B, M) rotation and translation errors of the splines through each
    window's keys over its frames, for windows (joint, keys, frames: a slice)
    with as many keys each: one batched spline of each kind for all.  M is
    the longest window; shorter ones repeat their last frame."""
    joints = np.array([joint for joint, _, _ in windows])[:, None]
    keys = np.array([keys for _, keys, _ in windows])
    width = max(frames.stop - frames.start for _, _, frames in windows)
    frames = np.array([np.minimum(np.arange(f.start, f.start + width), f.stop - 1)
                       for _, _, f in windows])
    t = times[frames]
    angle = rotation_error(RotationSpline(times[keys], rotations[joints, keys])(t),
                           rotations[joints, frames])
    distance = np.linalg.norm(PositionSpline(times[keys], translations[joints, keys])(t)
                              - translations[joints, frames], axis=-1)
    return angle, distance


class _JointKeys:
    """One joint's greedy reduction: from the first and last frames, key the
    frame worst out of tolerance (relative to its tolerance) until none is.

    A segment of either spline depends on its two keys and one more on each
    side (KB tangents; natural ends through the tangent next to them), so a
    new key changes the two segments on each side of it only: `add_key`
    names those frames and the keys that shape them, `update` takes their
    new errors, and a heap of each segment's worst frame finds the next key."""

    def __init__(self, frames, tolerances):
        self.keys = [0, frames - 1] if frames > 1 else [0]
        self.angle, self.distance, self.score = np.zeros((3, frames))
        self.tolerances = tolerances
        self.heap = []  # (-score, frame, entry, first key): each segment's worst frame
        self.latest = {}  # a segment's first key -> its current entry
        self.entries = itertools.count()
        self.changed_segments = (0, len(self.keys) - 1)
        self.start = (list(self.keys), slice(0, frames)) if frames > 1 else None

    def _score(self, angle, distance):
        return np.maximum(angle / self.tolerances[0], distance / self.tolerances[1])

    def _push_segments(self):
        first, last = self.changed_segments
        for a, b in zip(self.keys[first:last], self.keys[first + 1:last + 1]):
            worst = a + int(np.argmax(self.score[a:b]))
            self.latest[a] = next(self.entries)
            heapq.heappush(self.heap, (-self.score[worst], worst, self.latest[a], a))

    def add_key(self):
        """Keys the worst frame; returns the keys shaping the frames that
        changed and those frames (a slice), or None when every frame is
        within tolerance.  The first call names every frame, keyed at both ends."""
        if self.start is not None:
            window, self.start = self.start, None
            return window
        while self.heap:
            worst_score, worst, entry, a = heapq.heappop(self.heap)
            if self.latest[a] != entry:
                continue  # the segment was split or scored again since
            n = bisect.bisect_left(self.keys, worst)
            if -worst_score <= 1.0 or self.keys[n] == worst:
                return None
            self.keys.insert(n, worst)
            last = len(self.keys) - 1
            self.changed_segments = (max(0, n - 2), min(last, n + 2))
            changed = slice(self.keys[max(0, n - 2)], self.keys[min(last, n + 2)] + 1)
            return self.keys[max(0, n - 3):n + 4], changed
        return None  # a single frame

    def update(self, frames, angle, distance):
        self.angle[frames], self.distance[frames] = angle, distance
        self.score[frames] = self._score(angle, distance)
        self._push_segments()


def reduce_keys(motion: Motion, angle_tolerance: float, distance_tolerance: float,
                progress: Optional[Callable[[int, int], None]] = None) -> Reduction:
    """Per joint, greedy key reduction so that the rebuilt rotation of every
    frame is within `angle_tolerance` radians of the original and its
    translation within `distance_tolerance` (the clip's units).  Greedy
    (worst frame first) is not guaranteed minimal, but every frame ends
    within both tolerances.  `progress(done, total)` is called as joints
    finish.

    The joints are reduced side by side, a key each per round, and a round
    evaluates only the frames next to the new keys, by one batched spline of
    each kind: the rounds are as many as the most keys a joint gets, so the
    cost is near-linear in frames (the whole clip after every key was
    quadratic at tight tolerances)."""
    check_motion(motion, "motion")
    if not (angle_tolerance > 0 and distance_tolerance > 0):
        raise ValueError("angle_tolerance and distance_tolerance must be positive")
    if motion.num_frames == 0:
        raise ValueError("the clip has no frames")
    rotations, translations = motion.rotations(), motion.translations()
    times, J, F = motion.times, len(motion.joints), motion.num_frames
    keys, max_angle, max_distance = [np.empty(0, dtype=np.intp)] * J, np.zeros(J), np.zeros(J)
    active = {j: _JointKeys(F, (angle_tolerance, distance_tolerance)) for j in range(J)}
    while active:
        by_size: dict[int, list] = {}
        for j, joint in list(active.items()):
            window = joint.add_key()
            if window is None:
                keys[j] = np.array(joint.keys)
                max_angle[j], max_distance[j] = joint.angle.max(), joint.distance.max()
                del active[j]
                if progress:
                    progress(J - len(active), J)
            else:
                by_size.setdefault(len(window[0]), []).append((j, *window))
        for windows in by_size.values():
            angle, distance = _errors(times, rotations, translations, windows)
            for (j, _, frames), a, d in zip(windows, angle, distance):
                count = frames.stop - frames.start
                active[j].update(frames, a[:count], d[:count])
    return Reduction([j.name for j in motion.joints], motion.frame_time, F, keys,
                     [rotations[j][k] for j, k in enumerate(keys)],
                     [translations[j][k] for j, k in enumerate(keys)], max_angle, max_distance)
