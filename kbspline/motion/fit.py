"""Fitted keys: each kept key's tension, continuity and bias chosen by least
squares against the frames it shapes, then keys added where a frame is out
of tolerance and dropped where none would be.

A key's TCB moves its two tangents only, so it shapes the two segments
beside it, and through the natural end tangents at most one more on each
side: the frames from key k-2 to key k+2.  Keys four apart shape disjoint
frames, so each of four classes (k mod 4) is one batch of independent
three-parameter problems: a Gauss-Newton step with forward differences
(three spline builds for the whole class), a key taking its step only where
its frames' squared error falls.  Removing keys works the same way on keys
five apart: each is dropped where the frames it shaped stay in tolerance.
"""
from __future__ import annotations

import numpy as np

from ..position import PositionSpline
from ..quaternion import quat_conjugate, quat_multiply
from ..rotation import RotationSpline

STEP = 1e-5       # forward-difference step of a TCB parameter
LIMIT = 1.0       # fitted parameters stay in [-1, 1], the usual TCB range
LOOSER = 3.0      # the selection before fitting runs at this times the tolerance


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


def _jacobian(track, keys, tcb, vector):
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


def fit_tcb(track, keys, tcb, iterations=10):
    """TCB (K, 3) fitted from `tcb` by Levenberg-Marquardt on all keys at
    once, each step clipped to [-LIMIT, LIMIT] and taken only where it lowers
    the squared error (else the damping grows tenfold)."""
    tcb = tcb.copy()
    K = len(keys)
    vector, _ = track(keys, tcb)
    error = np.sum(vector ** 2)
    damping = 1e-3
    for _ in range(iterations):
        jac, slots = _jacobian(track, keys, tcb, vector)
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
