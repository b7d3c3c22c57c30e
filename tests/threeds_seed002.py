"""A second, independent transcription of seed 002 (3D Studio's KXP spline
code) for the review tests: CompDeriv, CompAB with its spin branch, Ease and
the Hermite, key by key in plain Python, with the end and spin rules of SPEC
9c.  Written from the seed, not from tests/threeds_oracle.py or the reader."""
import math

import numpy as np

SPIN = 2 * math.pi - 1e-5


def ease(u, a, b):
    """Seed 002's Ease(u, easeFrom of key n, easeTo of key n + 1)."""
    s = a + b
    if s == 0.0:
        return u
    if s > 1.0:
        a, b = a / s, b / s
    k = 1.0 / (2.0 - a - b)
    if u < a:
        return (k / a) * u * u
    if u < 1.0 - b:
        return k * (2 * u - a)
    if b == 0.0:                       # u == 1: the seed's 0 * inf, whose limit is 1
        return 1.0
    u = 1.0 - u
    return 1.0 - (k / b) * u * u


def _weights(key, frames, tcb, speed):
    """(ksm, ksp, kdm, kdp) as CompDeriv computes them; `speed` False at an end key."""
    t, c, b = (x[key] for x in tcb)
    fp = fn = 1.0
    if speed:
        dt = 0.5 * (frames[key + 1] - frames[key - 1])
        fp = (frames[key] - frames[key - 1]) / dt
        fn = (frames[key + 1] - frames[key]) / dt
        fp, fn = fp + abs(c) - abs(c) * fp, fn + abs(c) - abs(c) * fn
    cm, tm = 1.0 - c, 0.5 * (1.0 - t)
    cp, bm = 2.0 - cm, 1.0 - b
    bp = 2.0 - bm
    return tm * cm * bp * fp, tm * cp * bm * fp, tm * cp * bp * fn, tm * cm * bm * fn


def _segment(frames, frame, ease_from, ease_to):
    """(n, eased u) of the segment holding `frame` (inside the keys)."""
    n = min(max(int(np.searchsorted(frames, frame, side="right")) - 1, 0), len(frames) - 2)
    u = (frame - frames[n]) / (frames[n + 1] - frames[n])
    return n, ease(u, ease_from[n], ease_to[n + 1])


def position(frames, values, tcb, ease_to, ease_from, frame):
    """A position-like track at `frame` (within its keys), end keys reflected."""
    values = np.asarray(values, float)
    K = len(frames)
    if K == 1:
        return values[0]
    ds, dd = np.empty_like(values), np.empty_like(values)
    for k in range(K):
        inner = 0 < k < K - 1
        delm = values[k] - values[k - 1] if k > 0 else values[1] - values[0]
        delp = values[k + 1] - values[k] if k < K - 1 else values[k] - values[k - 1]
        ksm, ksp, kdm, kdp = _weights(k, frames, tcb, inner)
        ds[k], dd[k] = ksm * delm + ksp * delp, kdm * delm + kdp * delp
    n, u = _segment(frames, frame, ease_from, ease_to)
    h1, h2 = 2 * u**3 - 3 * u**2 + 1, -2 * u**3 + 3 * u**2
    h3, h4 = u**3 - 2 * u**2 + u, u**3 - u**2
    return h1 * values[n] + h2 * values[n + 1] + h3 * dd[n] + h4 * ds[n + 1]


def qmul(p, q):
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def qinv(q):
    return np.array([q[0], -q[1], -q[2], -q[3]])


def qlog(q):
    v = np.linalg.norm(q[1:])
    if v < 1e-300:
        return np.zeros(4)
    return np.concatenate([[0.0], math.atan2(v, q[0]) * q[1:] / v])


def qexp(q):
    v = np.linalg.norm(q[1:])
    if v < 1e-300:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[math.cos(v)], math.sin(v) * q[1:] / v])


def slerp(p, q, u):
    return qmul(p, qexp(u * qlog(qmul(qinv(p), q))))


def absolute_keys(values):
    """Drawn orientations from stored keys, D_n = R(-a_n, u_n) D_(n-1) (the
    reader's documented convention, settled by the saved mesh matrices), with
    each key's turn in D_(n-1)'s frame: (quats, local axes, angles, spins)."""
    quats, local, angles, spins = [], [], [], []
    drawn = np.array([1.0, 0.0, 0.0, 0.0])
    for angle, *axis in np.asarray(values, float):
        axis = np.array(axis)
        norm = np.linalg.norm(axis)
        spin = norm > 0 and angle > SPIN
        if norm == 0:
            angle, axis = 0.0, np.array([1.0, 0.0, 0.0])
        else:
            axis = axis / norm
        # -u in the parent's axes is -D^-1 u in D's own axes
        mine = -qmul(qmul(qinv(drawn), np.concatenate([[0.0], axis])), drawn)[1:]
        drawn = qmul(drawn, np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * mine]))
        quats.append(drawn)
        local.append(mine)
        angles.append(angle)
        spins.append(spin)
    return np.array(quats), np.array(local), np.array(angles), np.array(spins)


def rotation_controls(frames, values, tcb):
    """(quats, a, b, spins) per key by CompAB, spin branch included."""
    q, local, _, spins = absolute_keys(values)
    K = len(q)
    a, b = np.empty_like(q), np.empty_like(q)
    for k in range(K):
        qm = qp = None
        if k > 0:
            if spins[k]:
                qm = qlog(np.concatenate([[0.0], local[k]]))
            else:
                prev = q[k - 1] if q[k - 1] @ q[k] >= 0 else -q[k - 1]
                qm = qlog(qmul(qinv(prev), q[k]))
        if k < K - 1:
            if spins[k + 1]:
                qp = qlog(np.concatenate([[0.0], local[k + 1]]))
            else:
                nxt = q[k + 1] if q[k + 1] @ q[k] >= 0 else -q[k + 1]
                qp = qlog(qmul(qinv(q[k]), nxt))
        qm = qp if qm is None else qm
        qp = qm if qp is None else qp
        ksm, ksp, kdm, kdp = _weights(k, frames, tcb, 0 < k < K - 1)
        ksm, ksp, kdp = 1.0 - ksm, -ksp, kdp - 1.0
        a[k] = qmul(q[k], qexp(0.5 * (kdm * qm + kdp * qp)))
        b[k] = qmul(q[k], qexp(0.5 * (ksm * qm + ksp * qp)))
    return q, a, b, spins


def rotation(frames, values, tcb, ease_to, ease_from, frame):
    """(quaternion, segment) at `frame` by squad on the ordinary segments;
    a spin segment (key n + 1 spins) gives None for the quaternion."""
    if len(frames) == 1:
        return absolute_keys(values)[0][0], -1
    q, a, b, spins = rotation_controls(frames, values, tcb)
    n, u = _segment(frames, frame, ease_from, ease_to)
    if spins[n + 1]:
        return None, n
    nxt, bn = (q[n + 1], b[n + 1]) if q[n] @ q[n + 1] >= 0 else (-q[n + 1], -b[n + 1])
    outer, inner = slerp(q[n], nxt, u), slerp(a[n], bn, u)
    return slerp(outer, inner, 2 * u * (1 - u)), n
