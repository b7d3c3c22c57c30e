"""Key reduction in NumPy: the oracles of the C core's kb_reduce_greedy and
kb_fit_tcb / kb_reduce_fit (csrc/motion/reduce/kb_reduce.c), the first implementation of
the same algorithms, kept here to check the C one against.

Greedy: from the first and last frames, key the frame worst out of
tolerance until none is, evaluating again only the frames beside a new key.
Fit: each key's TCB by Levenberg-Marquardt on the (dense) normal equations,
with the Jacobian in closed form (closed_jacobian; forward_jacobian, by
forward differences a class of keys four apart at a time, checks it); then
keys added where a frame is out of tolerance and dropped where none would
be.
"""
import bisect
import heapq
import itertools

import numpy as np
from scipy.spatial.transform import Rotation

from kbspline import PositionSpline, RotationSpline
from kbspline.quaternion import _angle_between as rotation_error
from kbspline.quaternion import quat_conjugate, quat_multiply

STEP = 1e-5       # forward-difference step of a TCB parameter
LIMIT = 1.0       # fitted parameters stay in [-1, 1], the usual TCB range


def _rotation_residual(times, frames, keys, tcb):
    """(F, 3) twice the vector part of frame* spline (about the rotation
    vector from each frame to the spline) and (F,) the exact angles."""
    spline = RotationSpline(times[keys], frames[keys], tcb[:, 0], tcb[:, 1], tcb[:, 2])
    d = quat_multiply(quat_conjugate(frames), spline(times))
    vector = d[:, 1:] * np.where(d[:, :1] < 0, -2.0, 2.0)
    half = np.minimum(np.linalg.norm(d[:, 1:], axis=1), 1.0)
    return vector, 2.0 * np.arcsin(half)


def _position_residual(times, frames, keys, tcb):
    spline = PositionSpline(times[keys], frames[keys], tcb[:, 0], tcb[:, 1], tcb[:, 2])
    vector = spline(times) - frames
    return vector, np.linalg.norm(vector, axis=1)


class Track:
    """One channel of one joint: its frames and how far a spline is from them."""

    def __init__(self, times, frames, rotation):
        self.times, self.frames = times, frames
        self.residual = _rotation_residual if rotation else _position_residual

    def __call__(self, keys, tcb):
        return self.residual(self.times, self.frames, keys, tcb)


def _shaped(keys, index):
    """[start, stop) frames shaped by each key in `index` (its TCB or its presence)."""
    last = len(keys) - 1
    return keys[np.maximum(index - 2, 0)], keys[np.minimum(index + 2, last)] + 1


def _owners(starts, stops, frames):
    """(F,) which of these disjoint frame ranges holds each frame, -1 none."""
    owner = np.full(frames, -1)
    for n, (a, b) in enumerate(zip(starts, stops)):
        owner[a:b] = n
    return owner


def forward_jacobian(track, keys, tcb, vector):
    """The residual's derivatives in each key's TCB by forward differences:
    (F, 3, 4, 3) for the four keys that shape each frame's segment (keys
    s-1 .. s+2 for segment s), and (F, 4) those keys' indices (-1 none).
    Keys four apart shape disjoint frames: twelve spline builds in all."""
    F, K = len(track.times), len(keys)
    segment = np.clip(np.searchsorted(keys, np.arange(F), side="right") - 1, 0, K - 2)
    slots = segment[:, None] + np.arange(-1, 3)
    slots = np.where((slots >= 0) & (slots < K), slots, -1)
    jac = np.zeros((F, 3, 4, 3))
    for first in range(4):
        index = np.arange(first, K, 4)
        owner = _owners(*_shaped(keys, index), F)
        inside = np.flatnonzero(owner >= 0)
        key = index[owner[inside]]
        slot = key - segment[inside] + 1
        for p in range(3):
            step = np.where(tcb[index, p] + STEP > LIMIT, -STEP, STEP)
            trial = tcb.copy()
            trial[index, p] += step
            change = (track(keys, trial)[0][inside] - vector[inside]) / step[owner[inside], None]
            jac[inside, :, slot, p] = change
    return jac, slots


def _chords(track, keys):
    """(K - 1, 3) each segment's chord in the space of its tangents: the
    translation's difference, or the log of the rotation between its keys
    (half the rotation vector, by SciPy)."""
    values = track.frames[keys]
    if track.residual is _position_residual:
        return np.diff(values, axis=0)
    xyzw = Rotation.from_quat(values[:, [1, 2, 3, 0]])
    return 0.5 * (xyzw[:-1].inv() * xyzw[1:]).as_rotvec()


def closed_jacobian(track, keys, tcb, vector=None):
    """The residual's derivatives in each key's TCB in closed form, laid out
    as forward_jacobian's: each segment's curve taken as the cubic Hermite of its
    chord and per-u tangents (the translation's exactly; the rotation's
    log, whose change the residual, twice the log's, doubles), the tangents
    (a d_prev + b d_next) / (dt_prev + dt_next) and (c d_prev + d d_next) /
    (dt_prev + dt_next) with a = (1 - T)(1 + C)(1 + B), b = (1 - T)(1 - C)(1
    - B), c = (1 - T)(1 - C)(1 + B), d = (1 - T)(1 + C)(1 - B), and natural
    ends, out(0) = 3/2 d_0 / dt_0 - in(1) / 2 and in(K-1) = 3/2 d_(K-2) /
    dt_(K-2) - out(K-2) / 2."""
    times, F, K = track.times, len(track.times), len(keys)
    chord, dt = _chords(track, keys), np.diff(times[keys])
    scale = 1.0 if track.residual is _position_residual else 2.0
    # d(out)/d(TCB) and d(in)/d(TCB) of each inner key: (K, 3 params, 3)
    d_out, d_in = np.zeros((K, 3, 3)), np.zeros((K, 3, 3))
    for k in range(1, K - 1):
        T, C, B = tcb[k]
        a = np.array([-(1 + C) * (1 + B), (1 - T) * (1 + B), (1 - T) * (1 + C)])
        b = np.array([-(1 - C) * (1 - B), -(1 - T) * (1 - B), -(1 - T) * (1 - C)])
        c = np.array([-(1 - C) * (1 + B), -(1 - T) * (1 + B), (1 - T) * (1 - C)])
        d = np.array([-(1 + C) * (1 - B), (1 - T) * (1 - B), -(1 - T) * (1 + C)])
        total = dt[k - 1] + dt[k]
        d_out[k] = (np.outer(a, chord[k - 1]) + np.outer(b, chord[k])) / total
        d_in[k] = (np.outer(c, chord[k - 1]) + np.outer(d, chord[k])) / total
    segment = np.clip(np.searchsorted(keys, np.arange(F), side="right") - 1, 0, K - 2)
    slots = segment[:, None] + np.arange(-1, 3)
    slots = np.where((slots >= 0) & (slots < K), slots, -1)
    jac = np.zeros((F, 3, 4, 3))
    for f in range(F):
        s = segment[f]
        u = (times[f] - times[keys[s]]) / dt[s]
        h0, h1 = scale * u * (1 - u) ** 2 * dt[s], -scale * u * u * (1 - u) * dt[s]
        # key s (slot 1) moves the start tangent, and the end one at the last key
        start, end = d_out[s], (-0.5 * d_out[s] if s + 1 == K - 1 else 0.0)
        jac[f, :, 1, :] = (h0 * start + h1 * end).T
        # key s + 1 (slot 2) moves the end tangent, and the start one at the first key
        end, start = d_in[s + 1], (-0.5 * d_in[s + 1] if s == 0 else 0.0)
        jac[f, :, 2, :] = (h0 * start + h1 * end).T
    return jac, slots


def _normal_equations(track, keys, tcb, vector, jacobian=closed_jacobian):
    """J^T J (dense), J^T r and the damping weights (J^T J's diagonal,
    kept off zero) of the residual `vector` at `tcb`."""
    K = len(keys)
    jac, slots = jacobian(track, keys, tcb, vector)
    F = len(jac)
    local = jac.reshape(F, 3, 12)
    columns = (slots[:, :, None] * 3 + np.arange(3)).reshape(F, 12)
    valid = (slots >= 0).repeat(3, axis=1)
    size = 3 * K + 1  # a spare last row and column for absent keys
    cols = np.where(valid, columns, 3 * K)
    normal = np.bincount((cols[:, :, None] * size + cols[:, None, :]).ravel(),
                         np.einsum("fki,fkj->fij", local, local).ravel(),
                         size * size).reshape(size, size)[:-1, :-1]
    gradient = np.bincount(cols.ravel(), np.einsum("fki,fk->fi", local, vector).ravel(),
                           size)[:-1]
    diagonal = np.diag(normal) + 1e-12 * (np.trace(normal) / (3 * K) + 1e-300)
    return normal, gradient, diagonal


def fit_tcb(track, keys, tcb, iterations=10, jacobian=closed_jacobian):
    """TCB (K, 3) fitted from `tcb` by Levenberg-Marquardt on all keys at
    once, each step clipped to [-LIMIT, LIMIT] and taken only where it lowers
    the squared error (else the damping grows tenfold); the Jacobian by
    closed_jacobian (as kb_fit_tcb) or forward_jacobian."""
    tcb = tcb.copy()
    K = len(keys)
    vector, _ = track(keys, tcb)
    error = np.sum(vector ** 2)
    damping = 3e-2  # FIT_FIRST_DAMPING
    for _ in range(iterations):
        normal, gradient, diagonal = _normal_equations(track, keys, tcb, vector, jacobian)
        while damping < 1e9:
            step = np.linalg.solve(normal + damping * np.diag(diagonal), -gradient)
            trial = np.clip(tcb + step.reshape(K, 3), -LIMIT, LIMIT)
            moved, _ = track(keys, trial)
            if np.sum(moved ** 2) < error:
                tcb, vector, error = trial, moved, np.sum(moved ** 2)
                damping = max(damping / 3, 1e-9)
                break
            damping *= 10
        else:
            break
    return tcb


def _tangents(track, keys, tcb):
    """(K, 3) each inner key's out and in tangents per time, as
    closed_jacobian takes them (zero at the natural ends)."""
    chord, dt = _chords(track, keys), np.diff(track.times[keys])
    out, into = np.zeros((len(keys), 3)), np.zeros((len(keys), 3))
    for k in range(1, len(keys) - 1):
        T, C, B = tcb[k]
        total = dt[k - 1] + dt[k]
        out[k] = ((1 - T) * (1 + C) * (1 + B) * chord[k - 1]
                  + (1 - T) * (1 - C) * (1 - B) * chord[k]) / total
        into[k] = ((1 - T) * (1 - C) * (1 + B) * chord[k - 1]
                   + (1 - T) * (1 + C) * (1 - B) * chord[k]) / total
    return out, into


def model_vector(track, keys, tcb, trial, vector):
    """The residual at `trial` of the model closed_jacobian differentiates,
    from its residual `vector` at `tcb`: each frame of segment s moves by
    h0 dT0 + h1 dT1 (scaled as closed_jacobian's), dT0 the change of key s's
    out tangent (at the first segment, minus half key 1's in tangent's), dT1
    that of key s + 1's in tangent (at the last, minus half key K - 2's out
    tangent's)."""
    times, K = track.times, len(keys)
    dt = np.diff(times[keys])
    scale = 1.0 if track.residual is _position_residual else 2.0
    (out0, in0), (out1, in1) = _tangents(track, keys, tcb), _tangents(track, keys, trial)
    d_out, d_in = out1 - out0, in1 - in0
    moved = vector.copy()
    for s in range(K - 1):
        f = np.arange(keys[s], keys[s + 1] + 1)
        u = (times[f] - times[keys[s]]) / dt[s]
        start = d_out[s] - (0.5 * d_in[1] if s == 0 else 0.0)
        end = d_in[s + 1] - (0.5 * d_out[s] if s + 1 == K - 1 else 0.0)
        h0, h1 = scale * dt[s] * u * (1 - u) ** 2, -scale * dt[s] * u * u * (1 - u)
        moved[f] = vector[f] + h0[:, None] * start + h1[:, None] * end
    return moved


def model_fit_tcb(track, keys, tcb, steps):
    """kb_fit_tcb_model's fit: Levenberg-Marquardt steps on model_vector
    (the Jacobian closed_jacobian's), up to `steps` or until one lowers the
    model's squared error by less than 1% or is shorter than 1e-5, then the
    track itself at the model's optimum, kept where it fits better than
    `tcb`."""
    K = len(keys)
    vector, _ = track(keys, tcb)
    start = error = np.sum(vector ** 2)
    at, damping, stepped = tcb.copy(), 3e-2, False
    for _ in range(steps):
        normal, gradient, diagonal = _normal_equations(track, keys, at, vector)
        taken = settled = False
        while damping < 1e9:
            step = np.linalg.solve(normal + damping * np.diag(diagonal), -gradient)
            trial = np.clip(at + step.reshape(K, 3), -LIMIT, LIMIT)
            if np.abs(trial - at).max() < 1e-5:
                settled = True
                break
            moved = model_vector(track, keys, at, trial, vector)
            if np.sum(moved ** 2) < error:
                settled = error - np.sum(moved ** 2) < 0.01 * error
                at, vector, error = trial, moved, np.sum(moved ** 2)
                damping = max(damping / 3, 1e-9)
                taken = stepped = True
                break
            damping *= 10
        if not taken or settled:
            break
    if stepped and np.sum(track(keys, at)[0] ** 2) < start:
        return at
    return tcb.copy()


class JointFit:
    """A joint's rotation and translation tracks under one set of keys."""

    def __init__(self, times, rotations, translations, angle_tolerance, distance_tolerance):
        self.tracks = [Track(times, rotations, True)]
        self.tolerances = [angle_tolerance]
        if np.isfinite(distance_tolerance):
            self.tracks.append(Track(times, translations, False))
            self.tolerances.append(distance_tolerance)

    def score(self, keys, tcbs):
        """(F,) the worst error relative to its tolerance, and each track's errors."""
        errors = [track(keys, tcb)[1] for track, tcb in zip(self.tracks, tcbs)]
        return np.max([e / tol for e, tol in zip(errors, self.tolerances)], axis=0), errors

    def fit(self, keys, tcbs, iterations=6):
        return [fit_tcb(track, keys, tcb, iterations) for track, tcb in zip(self.tracks, tcbs)]

    def refine(self, keys):
        """Fitted keys from a first choice: fit, key the worst frame of each
        segment out of tolerance until none is, then drop keys while every
        frame stays in it.  Returns keys, each track's TCB and errors."""
        keys = np.asarray(keys)
        tcbs = self.fit(keys, [np.zeros((len(keys), 3)) for _ in self.tracks])
        score, errors = self.score(keys, tcbs)
        while score.max() > 1.0:
            worst = [a + int(np.argmax(score[a:b + 1])) for a, b in zip(keys[:-1], keys[1:])]
            new = np.array([w for w in worst if score[w] > 1.0])
            at = np.searchsorted(keys, new)
            keys = np.insert(keys, at, new)
            tcbs = self.fit(keys, [np.insert(tcb, at, 0.0, axis=0) for tcb in tcbs], 3)
            score, errors = self.score(keys, tcbs)
        dropped = True
        while dropped and len(keys) > 2:
            dropped = False
            for first in range(1, 6):
                index = np.arange(first, len(keys) - 1, 5)
                if not len(index):
                    continue
                keep = np.ones(len(keys), bool)
                keep[index] = False
                trial_score, _ = self.score(keys[keep], [tcb[keep] for tcb in tcbs])
                starts, stops = _shaped(keys, index)
                fine = np.array([trial_score[a:b].max() <= 1.0 for a, b in zip(starts, stops)])
                if fine.any():
                    keep = np.ones(len(keys), bool)
                    keep[index[fine]] = False
                    keys, tcbs = keys[keep], [tcb[keep] for tcb in tcbs]
                    dropped = True
            refit = self.fit(keys, tcbs, 3)
            if self.score(keys, refit)[0].max() <= 1.0:
                tcbs = refit
        score, errors = self.score(keys, tcbs)
        return keys, tcbs, errors


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
