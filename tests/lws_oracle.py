"""An independent LightWave envelope evaluator for the tests: the LightWave
SDK's published evaluation (the LWO2 sample's envelope.c) transcribed key
by key in plain Python floats, with no kbspline code, and SPEC 9c's two
corrections: behaviours measure wavelengths from the first key's time (the
sample measured them from time 0; oscillate mirrors about the keys' range),
and a 2-D Bezier span's time curve is inverted to machine precision (here
by bisection to the last bit, where the sample stopped at 1e-4).

A key is (value, time, shape, params): shape one of "tcb", "hermite",
"bezier", "linear", "stepped", "bezier2d" (the span ending at the key);
params the file's p1..p6 (TCB: tension, continuity, bias first).
"""
import math

BEHAVIOURS = ("reset", "constant", "repeat", "oscillate", "offset_repeat", "linear")


def _tcb(key):
    return key[3][:3] if key[2] == "tcb" else (0.0, 0.0, 0.0)


def _param(key):
    """The SDK key's four params: a 2-D Bezier key's handles p1..p4; any
    other key's tangents (in, out) from p4, p5 (the LWSC 3 document's layout)."""
    value, time, shape, p = key
    if shape == "bezier2d":
        return list(p[:4])
    return [p[3], p[4], 0.0, 0.0]


def outgoing(prev, k0, k1):
    shape = k0[2]
    if shape == "tcb":
        ten, con, bia = _tcb(k0)
        a = (1.0 - ten) * (1.0 + con) * (1.0 + bia)
        b = (1.0 - ten) * (1.0 - con) * (1.0 - bia)
        d = k1[0] - k0[0]
        if prev is None:
            return b * d
        return (k1[1] - k0[1]) / (k1[1] - prev[1]) * (a * (k0[0] - prev[0]) + b * d)
    if shape == "linear":
        d = k1[0] - k0[0]
        if prev is None:
            return d
        return (k1[1] - k0[1]) / (k1[1] - prev[1]) * (k0[0] - prev[0] + d)
    if shape in ("hermite", "bezier"):
        out = _param(k0)[1]
        if prev is not None:
            out = out * (k1[1] - k0[1]) / (k1[1] - prev[1])
        return out
    if shape == "bezier2d":
        p = _param(k0)
        out = p[3] * (k1[1] - k0[1])
        return out / p[2] if abs(p[2]) > 1e-5 else out * 1e5
    return 0.0


def incoming(k0, k1, nxt):
    shape = k1[2]
    if shape == "linear":
        d = k1[0] - k0[0]
        if nxt is None:
            return d
        return (k1[1] - k0[1]) / (nxt[1] - k0[1]) * (nxt[0] - k1[0] + d)
    if shape == "tcb":
        ten, con, bia = _tcb(k1)
        a = (1.0 - ten) * (1.0 - con) * (1.0 + bia)
        b = (1.0 - ten) * (1.0 + con) * (1.0 - bia)
        d = k1[0] - k0[0]
        if nxt is None:
            return a * d
        return (k1[1] - k0[1]) / (nxt[1] - k0[1]) * (b * (nxt[0] - k1[0]) + a * d)
    if shape in ("hermite", "bezier"):
        tan = _param(k1)[0]
        if nxt is not None:
            tan = tan * (k1[1] - k0[1]) / (nxt[1] - k0[1])
        return tan
    if shape == "bezier2d":
        p = _param(k1)
        tan = p[1] * (k1[1] - k0[1])
        return tan / p[0] if abs(p[0]) > 1e-5 else tan * 1e5
    return 0.0


def _bez(x0, x1, x2, x3, u):
    s = 1.0 - u
    return s * s * s * x0 + 3 * s * s * u * x1 + 3 * s * u * u * x2 + u * u * u * x3


def _bezier2d(k0, k1, time):
    p0, p1 = _param(k0), _param(k1)
    if k0[2] == "bezier2d":
        x1, y1 = k0[1] + p0[2], k0[0] + p0[3]
    else:
        x1, y1 = k0[1] + (k1[1] - k0[1]) / 3.0, k0[0] + p0[1] / 3.0
    x2, y2 = k1[1] + p1[0], k1[0] + p1[1]
    lo, hi = 0.0, 1.0  # the time curve rises on [0, 1] (the writer keeps handles inside)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _bez(k0[1], x1, x2, k1[1], mid) > time:
            hi = mid
        else:
            lo = mid
    return _bez(k0[0], y1, y2, k1[0], 0.5 * (lo + hi))


def evaluate(keys, pre, post, time):
    """The envelope's value at `time` (seconds)."""
    if len(keys) == 1:
        return keys[0][0]
    first, last = keys[0], keys[-1]
    offset = 0.0
    outside = pre if time < first[1] else post if time > last[1] else None
    if outside is not None:
        if outside == "reset":
            return 0.0
        if outside == "constant":
            return first[0] if time < first[1] else last[0]
        if outside == "linear":
            if time < first[1]:
                slope = outgoing(None, first, keys[1]) / (keys[1][1] - first[1])
                return slope * (time - first[1]) + first[0]
            slope = incoming(keys[-2], last, None) / (last[1] - keys[-2][1])
            return slope * (time - last[1]) + last[0]
        length = last[1] - first[1]
        waves = math.floor((time - first[1]) / length)
        time = min(max(first[1] + ((time - first[1]) - waves * length), first[1]), last[1])
        if outside == "oscillate" and waves % 2:
            time = first[1] + last[1] - time
        if outside == "offset_repeat":
            offset = waves * (last[0] - first[0])
    k = 0
    while time > keys[k + 1][1]:
        k += 1
    k0, k1 = keys[k], keys[k + 1]
    prev = keys[k - 1] if k > 0 else None
    nxt = keys[k + 2] if k + 2 < len(keys) else None
    if time == k0[1]:
        return k0[0] + offset
    if time == k1[1]:
        return k1[0] + offset
    u = (time - k0[1]) / (k1[1] - k0[1])
    shape = k1[2]
    if shape in ("tcb", "hermite", "bezier"):
        out, inc = outgoing(prev, k0, k1), incoming(k0, k1, nxt)
        h2 = 3 * u * u - 2 * u ** 3
        h1, h4 = 1 - h2, u ** 3 - u * u
        h3 = h4 - u * u + u
        return h1 * k0[0] + h2 * k1[0] + h3 * out + h4 * inc + offset
    if shape == "bezier2d":
        return _bezier2d(k0, k1, time) + offset
    if shape == "linear":
        return k0[0] + u * (k1[0] - k0[0]) + offset
    if shape == "stepped":
        return k0[0] + offset
    return offset
