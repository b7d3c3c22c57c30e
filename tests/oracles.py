"""Slow, obviously-correct references transcribed from the seeds.

Each follows its source line by line (in float64, not the seeds' float32)
and shares no code with kbspline.
"""
import numpy as np


# -- Seed 000: Wild Magic 2 PosSpline (Eberly) -------------------------------

class SeedPosSpline:
    """PosSpline.cpp: keys 0 and K-1 only shape tangents; clamps t."""

    def __init__(self, times, points, tension, continuity, bias):
        P = np.asarray(points, float)
        t = np.asarray(times, float)
        self.polys = []
        for i0 in range(len(t) - 3):
            i1, i2, i3 = i0 + 1, i0 + 2, i0 + 3
            diff10 = P[i1] - P[i0]
            diff21 = P[i2] - P[i1]
            diff32 = P[i3] - P[i2]
            omt0 = 1 - tension[i1]
            omc0 = 1 - continuity[i1]
            opc0 = 1 + continuity[i1]
            omb0 = 1 - bias[i1]
            opb0 = 1 + bias[i1]
            adj0 = 2 * (t[i2] - t[i1]) / (t[i2] - t[i0])
            out0 = 0.5 * adj0 * omt0 * opc0 * opb0
            out1 = 0.5 * adj0 * omt0 * omc0 * omb0
            tout = out1 * diff21 + out0 * diff10
            omt1 = 1 - tension[i2]
            omc1 = 1 - continuity[i2]
            opc1 = 1 + continuity[i2]
            omb1 = 1 - bias[i2]
            opb1 = 1 + bias[i2]
            adj1 = 2 * (t[i2] - t[i1]) / (t[i3] - t[i1])
            in0 = 0.5 * adj1 * omt1 * omc1 * opb1
            in1 = 0.5 * adj1 * omt1 * opc1 * omb1
            tin = in1 * diff32 + in0 * diff21
            C = [P[i1], tout, 3 * diff21 - 2 * tout - tin, -2 * diff21 + tout + tin]
            self.polys.append((t[i1], t[i2], 1 / (t[i2] - t[i1]), C))

    def _lookup(self, time):
        polys = self.polys
        if polys[0][0] < time:
            if time < polys[-1][1]:
                for i, p in enumerate(polys):
                    if time < p[1]:
                        break
                return i, (time - polys[i][0]) * polys[i][2]
            return len(polys) - 1, 1.0
        return 0, 0.0

    def position(self, time):
        i, u = self._lookup(time)
        C = self.polys[i][3]
        return C[0] + u * (C[1] + u * (C[2] + u * C[3]))

    def velocity(self, time):
        """d/du, as the seed returns it."""
        i, u = self._lookup(time)
        C = self.polys[i][3]
        return C[1] + u * (2 * C[2] + 3 * u * C[3])

    def acceleration(self, time):
        """d2/du2, as the seed returns it."""
        i, u = self._lookup(time)
        C = self.polys[i][3]
        return 2 * C[2] + 6 * u * C[3]

    def segment_duration(self, time):
        i, _ = self._lookup(time)
        return self.polys[i][1] - self.polys[i][0]


# -- Seed 002: 3D Studio KXP CompDeriv and Ease ------------------------------

def comp_deriv(keyp, key, keyn):
    """CompDeriv: (ds, dd), the arriving and departing per-u derivatives of
    `key`; keys are dicts with frame, pos, tens, cont, bias."""
    dt = 0.5 * (keyn["frame"] - keyp["frame"])
    fp = (key["frame"] - keyp["frame"]) / dt
    fn = (keyn["frame"] - key["frame"]) / dt
    c = abs(key["cont"])
    fp = fp + c - c * fp
    fn = fn + c - c * fn
    cm = 1.0 - key["cont"]
    tm = 0.5 * (1.0 - key["tens"])
    cp = 2.0 - cm
    bm = 1.0 - key["bias"]
    bp = 2.0 - bm
    tmcm = tm * cm
    tmcp = tm * cp
    ksm = tmcm * bp * fp
    ksp = tmcp * bm * fp
    kdm = tmcp * bp * fn
    kdp = tmcm * bm * fn
    delm = key["pos"] - keyp["pos"]
    delp = keyn["pos"] - key["pos"]
    ds = ksm * delm + ksp * delp
    dd = kdm * delm + kdp * delp
    return ds, dd


def ease(u, a, b):
    """Ease(u, a, b) exactly as seed 002 writes it."""
    s = a + b
    if s == 0.0:
        return u
    if s > 1.0:
        a = a / s
        b = b / s
    k = 1.0 / (2.0 - a - b)
    if u < a:
        return (k / a) * u * u
    elif u < 1.0 - b:
        return k * (2 * u - a)
    else:
        u = 1.0 - u
        return 1.0 - (k / b) * u * u


def hermite(p0, p1, m0, m1, u):
    """The cubic Hermite basis on [0, 1] with per-u tangents."""
    h00 = 2 * u**3 - 3 * u**2 + 1
    h10 = u**3 - 2 * u**2 + u
    h01 = -2 * u**3 + 3 * u**2
    h11 = u**3 - u**2
    return h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1


class Seed3dsSpline:
    """3D Studio interpolation of keys 1..K-2 (CompDeriv needs both
    neighbours), each segment eased by Ease(u, ease_from[n], ease_to[n+1])."""

    def __init__(self, frames, points, tens, cont, bias, ease_from, ease_to):
        self.keys = [dict(frame=float(f), pos=np.asarray(p, float), tens=t, cont=c, bias=b,
                          ease_from=ef, ease_to=et)
                     for f, p, t, c, b, ef, et in zip(frames, points, tens, cont, bias,
                                                      ease_from, ease_to)]
        for i in range(1, len(self.keys) - 1):
            ds, dd = comp_deriv(self.keys[i - 1], self.keys[i], self.keys[i + 1])
            self.keys[i]["ds"], self.keys[i]["dd"] = ds, dd

    def position(self, frame):
        inner = self.keys[1:-1]
        frame = min(max(frame, inner[0]["frame"]), inner[-1]["frame"])
        n = 0
        while n < len(inner) - 2 and frame >= inner[n + 1]["frame"]:
            n += 1
        k0, k1 = inner[n], inner[n + 1]
        u = (frame - k0["frame"]) / (k1["frame"] - k0["frame"])
        u = ease(u, k0["ease_from"], k1["ease_to"])
        return hermite(k0["pos"], k1["pos"], k0["dd"], k1["ds"], u)


# -- Seed 004: Catmull-Rom with irregular key times ---------------------------

def seed004_position(kt, k, t):
    """Tangent: the mean of the slopes on either side, per unit time;
    evaluation: Hermite with the tangent multiplied by the interval dx.
    Keys 0 and K-1 only shape tangents (the article's loop needs i-1, i+1)."""
    i = 1
    while i < len(kt) - 3 and t >= kt[i + 1]:
        i += 1

    def slope(j):
        return 0.5 * ((k[j] - k[j - 1]) / (kt[j] - kt[j - 1])
                      + (k[j + 1] - k[j]) / (kt[j + 1] - kt[j]))

    dx = kt[i + 1] - kt[i]
    u = (t - kt[i]) / dx
    return hermite(k[i], k[i + 1], slope(i) * dx, slope(i + 1) * dx, u)


def random_keys(rng, n_keys, dim, uniform=False):
    """Random increasing times and values."""
    if uniform:
        times = np.arange(n_keys, dtype=float) * 0.75 - 1.0
    else:
        times = np.cumsum(rng.uniform(0.2, 2.0, n_keys)) - 3.0
    return times, rng.normal(size=(n_keys, dim)) * 3.0


def interior_times(rng, times, n, lo=1, hi=-2):
    return np.sort(rng.uniform(times[lo], times[hi], n))



# -- Seed 000: Wild Magic 2 RotSpline with its quaternion functions ----------
# Quaternions are numpy arrays (w, x, y, z).  Wild Magic's epsilon guards
# are kept, at a float64 size.

WM_EPSILON = 1e-12


def wm_mul(p, q):
    w0, x0, y0, z0 = p
    w1, x1, y1, z1 = q
    return np.array([w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
                     w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
                     w0 * y1 + y0 * w1 + z0 * x1 - x0 * z1,
                     w0 * z1 + z0 * w1 + x0 * y1 - y0 * x1])


def wm_conjugate(q):
    return np.array([q[0], -q[1], -q[2], -q[3]])


def wm_log(q):
    """log(cos A + sin A n) = A n."""
    result = np.zeros(4)
    if abs(q[0]) < 1.0:
        angle = np.arccos(q[0])
        sn = np.sin(angle)
        if abs(sn) >= WM_EPSILON:
            result[1:] = angle / sn * q[1:]
            return result
    result[1:] = q[1:]
    return result


def wm_exp(q):
    """exp(A n) = cos A + sin A n."""
    angle = np.sqrt(q[1] ** 2 + q[2] ** 2 + q[3] ** 2)
    sn = np.sin(angle)
    result = np.array([np.cos(angle), 0.0, 0.0, 0.0])
    if abs(sn) >= WM_EPSILON:
        result[1:] = sn / angle * q[1:]
    else:
        result[1:] = q[1:]
    return result


def wm_slerp(t, p, q):
    cs = np.clip(np.dot(p, q), -1.0, 1.0)
    angle = np.arccos(cs)
    if abs(angle) < WM_EPSILON:
        return p
    sn = np.sin(angle)
    return (np.sin((1 - t) * angle) * p + np.sin(t * angle) * q) / sn


def wm_squad(t, p, a, b, q):
    return wm_slerp(2 * t * (1 - t), wm_slerp(t, p, q), wm_slerp(t, a, b))


def wm_from_axis_angle(axis, angle):
    axis = np.asarray(axis, float)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


class SeedRotSpline:
    """RotSpline.cpp: keys 0 and K-1 only shape tangents; clamps t."""

    def __init__(self, times, quats, tension, continuity, bias):
        t = np.asarray(times, float)
        Q = [np.asarray(q, float) for q in quats]
        for i in range(1, len(Q)):
            if np.dot(Q[i], Q[i - 1]) < 0.0:
                Q[i] = -Q[i]
        self.polys = []
        for i0 in range(len(t) - 3):
            i1, i2, i3 = i0 + 1, i0 + 2, i0 + 3
            log10 = wm_log(wm_mul(wm_conjugate(Q[i0]), Q[i1]))
            log21 = wm_log(wm_mul(wm_conjugate(Q[i1]), Q[i2]))
            log32 = wm_log(wm_mul(wm_conjugate(Q[i2]), Q[i3]))
            omt0, omc0, opc0 = 1 - tension[i1], 1 - continuity[i1], 1 + continuity[i1]
            omb0, opb0 = 1 - bias[i1], 1 + bias[i1]
            adj0 = 2 * (t[i2] - t[i1]) / (t[i2] - t[i0])
            out0 = 0.5 * adj0 * omt0 * opc0 * opb0
            out1 = 0.5 * adj0 * omt0 * omc0 * omb0
            tout = out1 * log21 + out0 * log10
            omt1, omc1, opc1 = 1 - tension[i2], 1 - continuity[i2], 1 + continuity[i2]
            omb1, opb1 = 1 - bias[i2], 1 + bias[i2]
            adj1 = 2 * (t[i2] - t[i1]) / (t[i3] - t[i1])
            in0 = 0.5 * adj1 * omt1 * omc1 * opb1
            in1 = 0.5 * adj1 * omt1 * opc1 * omb1
            tin = in1 * log32 + in0 * log21
            a = wm_mul(Q[i1], wm_exp(0.5 * (tout - log21)))
            b = wm_mul(Q[i2], wm_exp(0.5 * (log21 - tin)))
            self.polys.append((t[i1], t[i2], 1 / (t[i2] - t[i1]), Q[i1], a, b, Q[i2]))

    def q(self, time):
        polys = self.polys
        if polys[0][0] < time:
            if time < polys[-1][1]:
                for i, p in enumerate(polys):
                    if time < p[1]:
                        break
                u = (time - polys[i][0]) * polys[i][2]
            else:
                i, u = len(polys) - 1, 1.0
        else:
            i, u = 0, 0.0
        _, _, _, p, a, b, q = polys[i]
        return wm_squad(u, p, a, b, q)


# -- Seed 002: 3D Studio CompAB ------------------------------------------------

TWOPI = 2 * np.pi


def comp_ab(prev, cur, nxt):
    """CompAB: (a, b) of key `cur`; keys are dicts with frame, quat, tens,
    cont, bias, and optionally the key's turn from its predecessor, angle
    (>= 0) and unit axis; prev or nxt may be None (a key without a
    neighbour).  A key whose angle exceeds 2 pi - 1e-5 contributes the log
    of the pure quaternion of its axis (the seed's spin branch)."""
    qm = qp = None
    if prev is not None:
        if cur.get("angle", 0.0) > TWOPI - .00001:
            qm = wm_log(np.concatenate([[0.0], cur["axis"]]))  # q = (axis, 0); qlog(q, qm)
        else:
            qprev = prev["quat"].copy()
            if np.dot(qprev, cur["quat"]) < 0:
                qprev = -qprev
            qm = wm_log(wm_mul(wm_conjugate(qprev), cur["quat"]))  # qlndif(qprev, cur)
    if nxt is not None:
        if nxt.get("angle", 0.0) > TWOPI - .00001:
            qp = wm_log(np.concatenate([[0.0], nxt["axis"]]))
        else:
            qnext = nxt["quat"].copy()
            if np.dot(qnext, cur["quat"]) < 0:
                qnext = -qnext
            qp = wm_log(wm_mul(wm_conjugate(cur["quat"]), qnext))  # qlndif(cur, qnext)
    if prev is None:
        qm = qp.copy()
    if nxt is None:
        qp = qm.copy()
    fp = fn = 1.0
    cm = 1.0 - cur["cont"]
    if prev is not None and nxt is not None:
        dt = 0.5 * (nxt["frame"] - prev["frame"])
        fp = (cur["frame"] - prev["frame"]) / dt
        fn = (nxt["frame"] - cur["frame"]) / dt
        c = abs(cur["cont"])
        fp = fp + c - c * fp
        fn = fn + c - c * fn
    tm = 0.5 * (1.0 - cur["tens"])
    cp = 2.0 - cm
    bm = 1.0 - cur["bias"]
    bp = 2.0 - bm
    tmcm = tm * cm
    tmcp = tm * cp
    ksm = 1.0 - tmcm * bp * fp
    ksp = -tmcp * bm * fp
    kdm = tmcp * bp * fn
    kdp = tmcm * bm * fn - 1.0
    qa = 0.5 * (kdm * qm + kdp * qp)
    qb = 0.5 * (ksm * qm + ksp * qp)
    return wm_mul(cur["quat"], wm_exp(qa)), wm_mul(cur["quat"], wm_exp(qb))


def random_quaternions(rng, n, spread=1.0):
    """n unit quaternions, each a random rotation of up to `spread` radians
    (per axis) from the one before."""
    q = [np.array([1.0, 0.0, 0.0, 0.0])]
    for _ in range(n - 1):
        step = wm_exp(np.concatenate([[0.0], rng.uniform(-spread, spread, 3) / 2]))
        q.append(wm_mul(q[-1], step) * (-1 if rng.random() < 0.3 else 1))
    return np.array(q)


# -- Seed 000: PosSpline's arc length (Length, InvertIntegral, PositionAL) ----

GL5_ROOT = [0.046910077, 0.230765345, 0.5, 0.769234655, 0.953089922]
GL5_COEFF = [0.118463442, 0.239314335, 0.284444444, 0.239314335, 0.118463442]


class SeedArcLength:
    """PosSpline's arc-length functions on its polynomials (d/du speeds):
    5-point Gauss-Legendre per [0, u], Newton to 1e-6 (float64 here)."""

    def __init__(self, seed_spline):
        self.s = seed_spline
        self.lengths = [0.0]
        for i in range(len(seed_spline.polys)):
            self.lengths.append(self.lengths[-1] + self.poly_length(i, 1.0))
        self.total = self.lengths[-1]

    def speed(self, i, u):
        C = self.s.polys[i][3]
        return np.linalg.norm(C[1] + u * (2 * C[2] + 3 * u * C[3]))

    def poly_length(self, i, u):
        return u * sum(c * self.speed(i, u * r) for r, c in zip(GL5_ROOT, GL5_COEFF))

    def invert(self, s):
        if s <= 0:
            return 0, 0.0
        if s >= self.total:
            return len(self.s.polys) - 1, 1.0
        for i in range(len(self.s.polys)):
            if s <= self.lengths[i + 1]:
                dist = s - self.lengths[i]
                u = dist / (self.lengths[i + 1] - self.lengths[i])
                break
        for _ in range(32):
            diff = self.poly_length(i, u) - dist
            if abs(diff) <= 1e-6:
                break
            u -= diff / self.speed(i, u)
        return i, u

    def position_al(self, s):
        i, u = self.invert(s)
        C = self.s.polys[i][3]
        return C[0] + u * (C[1] + u * (C[2] + u * C[3]))
