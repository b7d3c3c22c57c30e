"""3D Studio's track evaluation transcribed from seed 002, in plain NumPy.

CompDeriv (positions and every other non-rotation track), CompAB with its
spin branch (rotations), Ease, the Hermite and squad segments, played in
frames on the keys as the writer stored them (float32 values).  It calls
none of kbspline's splines.  What the seed leaves out follows SPEC 9c: an
end key takes CompAB's rule for a key without a neighbour (its missing slope
is the other one, fp = fn = 1), a loop runs its tangents across the seam
(lib3ds's loop: the key before the last precedes the first), rotation keys
turn the drawn orientation by -angle in the parent's axes (the saved mesh
matrices show it), and a segment of more than 2 pi - 1e-5 is kbspline's
documented spin construction (the seed has no evaluation code for it).
"""
import numpy as np

from test_rotation_segments import log_near, qconj, qexp, qlog, qmul

SPIN = 2 * np.pi - .00001


def ease(u, a, b):
    """Seed 002's Ease(u, a, b)."""
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
    u = 1.0 - u
    if b == 0.0:       # only u = 1 gets here, where the seed's float code makes 0 * inf
        return 1.0
    return 1.0 - (k / b) * u * u


def _weights(prev, cur, nxt):
    """fp, fn and the four TCB weights of CompDeriv / CompAB at `cur`."""
    fp = fn = 1.0
    if prev is not None and nxt is not None:
        dt = 0.5 * (nxt["frame"] - prev["frame"])
        fp = (cur["frame"] - prev["frame"]) / dt
        fn = (nxt["frame"] - cur["frame"]) / dt
        c = abs(cur["cont"])
        fp = fp + c - c * fp
        fn = fn + c - c * fn
    cm = 1.0 - cur["cont"]
    tm = 0.5 * (1.0 - cur["tens"])
    cp = 2.0 - cm
    bm = 1.0 - cur["bias"]
    bp = 2.0 - bm
    tmcm, tmcp = tm * cm, tm * cp
    return tmcm * bp * fp, tmcp * bm * fp, tmcp * bp * fn, tmcm * bm * fn


def comp_deriv(prev, cur, nxt):
    """(ds, dd): arriving and departing derivatives per unit u."""
    delm = cur["value"] - prev["value"] if prev is not None else None
    delp = nxt["value"] - cur["value"] if nxt is not None else None
    delm = delp if delm is None else delm
    delp = delm if delp is None else delp
    ksm, ksp, kdm, kdp = _weights(prev, cur, nxt)
    return ksm * delm + ksp * delp, kdm * delm + kdp * delp


def _chord(a, b):
    """CompAB's log from key a to key b (Q form): b's spin branch, else qlndif
    of the nearer sign."""
    if b["angle"] > SPIN:
        return 0.5 * np.pi * b["axis"]        # qlog of the pure quaternion (axis, 0)
    qb = b["quat"] if np.dot(a["quat"], b["quat"]) >= 0 else -b["quat"]
    return qlog(qmul(qconj(a["quat"]), qb))


def comp_ab(prev, cur, nxt):
    """The logs (qa, qb) of CompAB at `cur`: a = q exp(qa), b = q exp(qb)."""
    qm = _chord(prev, cur) if prev is not None else None
    qp = _chord(cur, nxt) if nxt is not None else None
    qm = qp if qm is None else qm
    qp = qm if qp is None else qp
    ksm, ksp, kdm, kdp = _weights(prev, cur, nxt)
    ksm, ksp, kdp = 1.0 - ksm, -ksp, kdp - 1.0
    return 0.5 * (kdm * qm + kdp * qp), 0.5 * (ksm * qm + ksp * qp)


def _keys(track, kind):
    """The writer's track as seed-style key dicts (Q: 3D Studio's own quaternions,
    each key turned by +angle in its own frame; the drawn orientation is Q*)."""
    keys, q = [], np.array([1.0, 0.0, 0.0, 0.0])
    for k, frame in enumerate(track["frames"]):
        key = {"frame": float(frame), "tens": 0.0, "cont": 0.0, "bias": 0.0}
        for src, dst in (("tension", "tens"), ("continuity", "cont"), ("bias", "bias")):
            if src in track:
                key[dst] = float(track[src][k])
        for name in ("ease_to", "ease_from"):
            key[name] = float(track[name][k]) if name in track else 0.0
        value = np.asarray(track["values"][k], dtype=np.float64)
        if kind == "rotation":
            angle, axis = value[0], value[1:]
            n = np.linalg.norm(axis)
            angle, axis = (angle, axis / n) if n > 0 else (0.0, np.array([1.0, 0.0, 0.0]))
            q = qmul(q, np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis]))
            key.update(angle=angle, axis=axis, quat=q)
        else:
            key["value"] = value
        keys.append(key)
    return keys


def _rotate(q, v):
    return qmul(qmul(q, np.concatenate([[0.0], v])), qconj(q))[1:]


def _squad(p, a, b, q, u):
    def slerp(x, y, s):
        return qmul(x, qexp(s * qlog(qmul(qconj(x), y))))
    return slerp(slerp(p, q, u), slerp(a, b, u), 2 * u * (1 - u))


def play(track, kind, frame, cumulative=()):
    """The track's value at `frame` as 3D Studio played it: (n,) or the drawn
    rotation (4,) (w, x, y, z), up to sign.  Rotation segments listed in
    `cumulative` are kbspline's cumulative cubic with CompAB's tangents
    instead of squad (where kbspline finds squad ill-conditioned)."""
    keys = _keys(track, kind)
    K, flags = len(keys), track.get("flags", 0)
    if K == 1:
        return qconj(keys[0]["quat"]) if kind == "rotation" else keys[0]["value"]
    first, last = keys[0]["frame"], keys[-1]["frame"]
    if flags & 3 and frame > last:
        frame = first + np.fmod(frame - first, last - first)
    frame = min(max(frame, first), last)
    n = min(np.searchsorted([k["frame"] for k in keys], frame, side="right") - 1, K - 2)
    loop = flags & 3 == 3 and K >= 3
    period = last - first

    def neighbours(m):
        prev = keys[m - 1] if m > 0 else None
        nxt = keys[m + 1] if m < K - 1 else None
        if loop and m in (0, K - 1):      # the seam: key K-1 is key 0
            prev = dict(keys[K - 2], frame=keys[K - 2]["frame"] - (period if m == 0 else 0))
            nxt = dict(keys[1], frame=keys[1]["frame"] + (period if m == K - 1 else 0))
            seam = dict(keys[K - 1], frame=keys[m]["frame"]) if kind == "rotation" else keys[m]
            return prev, seam, nxt
        return prev, keys[m], nxt

    k0, k1 = keys[n], keys[n + 1]
    u = (frame - k0["frame"]) / (k1["frame"] - k0["frame"])
    u = ease(u, k0["ease_from"], k1["ease_to"])
    if kind != "rotation":
        _, dd0 = comp_deriv(*neighbours(n))
        ds1, _ = comp_deriv(*neighbours(n + 1))
        h = np.array([2 * u**3 - 3 * u**2 + 1, -2 * u**3 + 3 * u**2, u**3 - 2 * u**2 + u,
                      u**3 - u**2])
        return h[0] * k0["value"] + h[1] * k1["value"] + h[2] * dd0 + h[3] * ds1
    p0, c0, n0 = neighbours(n)
    p1, c1, n1 = neighbours(n + 1)
    qa, _ = comp_ab(p0, c0, n0)
    _, qb = comp_ab(p1, c1, n1)
    q0 = k0["quat"]
    q1 = k1["quat"] if k1["angle"] > SPIN or np.dot(q0, k1["quat"]) >= 0 else -k1["quat"]
    if k1["angle"] <= SPIN and n not in cumulative:
        return qconj(_squad(q0, qmul(q0, qexp(qa)), qmul(q1, qexp(qb)), q1, u))
    if k1["angle"] <= SPIN:      # the cumulative cubic, drawn orientation D = Q*
        chord = _chord(k0, k1)
        w1, w3 = -_rotate(q0, 2 * qa + chord) / 3, -_rotate(q1, chord - 2 * qb) / 3
        d0, d1 = qconj(q0), qconj(q1)
        L = qlog(qmul(qconj(d0), d1))
        w2 = log_near(qmul(qmul(qexp(-w1), qmul(qconj(d0), d1)), qexp(-w3)), L - w1 - w3,
                      np.linalg.norm(w1) + np.linalg.norm(L) + np.linalg.norm(w3))
        b1, b2, b3 = 1 - (1 - u) ** 3, 3 * u ** 2 - 2 * u ** 3, u ** 3
        return qmul(qmul(qmul(d0, qexp(b1 * w1)), qexp(b2 * w2)), qexp(b3 * w3))
    # a spinning segment, in the drawn orientation D = Q*: D0 exp(uL) exp(B1 c1) ...
    chord = _chord(k0, k1)
    t0 = 2 * qa + chord                        # per-u outgoing tangent at k0 (Q frame)
    t1 = chord - 2 * qb                        # per-u incoming tangent at k1
    L = -_rotate(q0, 0.5 * k1["angle"] * k1["axis"])
    t0, t1 = -_rotate(q0, t0), -_rotate(k1["quat"], t1)
    e1, e3 = (t0 - L) / 3, (t1 - L) / 3
    e2 = log_near(qmul(qexp(-e1), qexp(-e3)), -(e1 + e3), np.inf)
    b1, b2, b3 = 1 - (1 - u) ** 3, 3 * u ** 2 - 2 * u ** 3, u ** 3
    out = qmul(qconj(q0), qexp(u * L))
    for b, e in ((b1, e1), (b2, e2), (b3, e3)):
        out = qmul(out, qexp(b * e))
    return out
