"""Greedy key selection in NumPy: the oracle of the C core's
kb_reduce_greedy (csrc/motion/reduce/kb_reduce_greedy.c), its first implementation, kept here
to check the C one against: from the first and last frames, key the frame
worst out of tolerance until none is, evaluating again only the frames
beside a new key."""
import bisect
import heapq
import itertools

import numpy as np

from kbspline import PositionSpline, RotationSpline
from kbspline.quaternion import _angle_between as rotation_error



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


def select_keys(times, rotations, translations, angle_tolerances, distance_tolerances,
                 progress=None):
    """Each joint's greedy key frames under its own tolerances, with its
    worst rotation and translation errors."""
    J, F = rotations.shape[:2]
    keys, max_angle, max_distance = [np.empty(0, dtype=np.intp)] * J, np.zeros(J), np.zeros(J)
    active = {j: _JointKeys(F, (angle_tolerances[j], distance_tolerances[j])) for j in range(J)}
    while active:
        by_size = {}  # windows by their key count
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
    return keys, max_angle, max_distance
