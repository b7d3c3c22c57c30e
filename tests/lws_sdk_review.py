"""A second, independent reading of the LightWave SDK's envelope evaluation
(the LWO2 sample's envelope.c: evalEnvelope, hermite, bezier, bez2,
outgoing, incoming, range), written by the reviewer from the SDK source and
SPEC 9c alone, in plain float64 Python, one time at a time.

SPEC 9c's corrections: behaviours count cycles from the first key's time
(the sample's range() counted them from time 0), and a 2-D Bezier span's
time curve is solved for its parameter to the last bit (bisection run to
float64's end rather than to 1e-4).  Keys are (value, time, shape, p1..p6)
as the .lws Key line stores them; the SDK's four ``param`` slots are p1..p4
for a 2-D Bezier key and (p4, p5) for any other (the LWSC 3 layout).
"""
import math

RESET, CONSTANT, REPEAT, OSCILLATE, OFFSET, LINEAR = (
    "reset", "constant", "repeat", "oscillate", "offset_repeat", "linear")


def _param(key):
    value, time, shape, *p = key
    p = list(p) + [0.0] * (6 - len(p))
    return p[:4] if shape == "bezier2d" else [p[3], p[4], 0.0, 0.0]


def _tcb(key):
    p = list(key[3:]) + [0.0] * 3
    return p[0], p[1], p[2]


def _wrap(time, lo, hi):
    """range(), counted from lo: (time in [lo, hi), whole cycles)."""
    r = hi - lo
    n = math.floor((time - lo) / r)
    # rounding may land a hair past hi: hold it there, as the SDK's loop must
    return min(max(lo + ((time - lo) - n * r), lo), hi), n


def _out(keys, i):
    """outgoing(key i, key i+1): by key i's own shape."""
    k0, k1 = keys[i], keys[i + 1]
    prev = keys[i - 1] if i > 0 else None
    shape, d = k0[2], k1[0] - k0[0]
    scale = None if prev is None else (k1[1] - k0[1]) / (k1[1] - prev[1])
    if shape == "tcb":
        ten, con, bia = _tcb(k0)
        a = (1 - ten) * (1 + con) * (1 + bia)
        b = (1 - ten) * (1 - con) * (1 - bia)
        return b * d if prev is None else scale * (a * (k0[0] - prev[0]) + b * d)
    if shape == "linear":
        return d if prev is None else scale * (k0[0] - prev[0] + d)
    if shape in ("hermite", "bezier"):
        out = _param(k0)[1]
        return out if prev is None else out * scale
    if shape == "bezier2d":
        p = _param(k0)
        out = p[3] * (k1[1] - k0[1])
        return out / p[2] if abs(p[2]) > 1e-5 else out * 1e5
    return 0.0


def _in(keys, i):
    """incoming(key i-1, key i): by key i's own shape."""
    k0, k1 = keys[i - 1], keys[i]
    nxt = keys[i + 1] if i + 1 < len(keys) else None
    shape, d = k1[2], k1[0] - k0[0]
    scale = None if nxt is None else (k1[1] - k0[1]) / (nxt[1] - k0[1])
    if shape == "linear":
        return d if nxt is None else scale * (nxt[0] - k1[0] + d)
    if shape == "tcb":
        ten, con, bia = _tcb(k1)
        a = (1 - ten) * (1 - con) * (1 + bia)
        b = (1 - ten) * (1 + con) * (1 - bia)
        return a * d if nxt is None else scale * (b * (nxt[0] - k1[0]) + a * d)
    if shape in ("hermite", "bezier"):
        tan = _param(k1)[0]
        return tan if nxt is None else tan * scale
    if shape == "bezier2d":
        p = _param(k1)
        tan = p[1] * (k1[1] - k0[1])
        return tan / p[0] if abs(p[0]) > 1e-5 else tan * 1e5
    return 0.0


def _bez(x0, x1, x2, x3, u):
    c = 3 * (x1 - x0)
    b = 3 * (x2 - x1) - c
    a = x3 - x0 - c - b
    return a * u ** 3 + b * u * u + c * u + x0


def _bez2(keys, i, time):
    k0, k1 = keys[i], keys[i + 1]
    p0, p1 = _param(k0), _param(k1)
    if k0[2] == "bezier2d":
        x, y = k0[1] + p0[2], k0[0] + p0[3]
    else:
        x, y = k0[1] + (k1[1] - k0[1]) / 3, k0[0] + p0[1] / 3
    # the time curve from key0's time on (absolute times would round away
    # the bits of a short span far from zero)
    x1, x2, x3, time = x - k0[1], k1[1] + p1[0] - k0[1], k1[1] - k0[1], time - k0[1]
    lo, hi = 0.0, 1.0
    while True:  # bisection to float64's last bit (the SDK stops at 1e-4)
        mid = lo + (hi - lo) * 0.5
        if mid <= lo or mid >= hi:
            break
        if _bez(0.0, x1, x2, x3, mid) > time:
            hi = mid
        else:
            lo = mid
    return _bez(k0[0], y, k1[0] + p1[1], k1[0], mid)


def sdk_envelope(keys, pre, post, time):
    """The value at `time` of an envelope of `keys` with behaviours pre, post."""
    if len(keys) == 1:
        return keys[0][0]
    first, last = keys[0], keys[-1]
    offset = 0.0
    for outside, beh in ((time < first[1], pre), (time > last[1], post)):
        if not outside:
            continue
        if beh == RESET:
            return 0.0
        if beh == CONSTANT:
            return first[0] if time < first[1] else last[0]
        if beh == LINEAR:
            if time < first[1]:
                slope = _out(keys, 0) / (keys[1][1] - first[1])
                return slope * (time - first[1]) + first[0]
            slope = _in(keys, len(keys) - 1) / (last[1] - keys[-2][1])
            return slope * (time - last[1]) + last[0]
        time, n = _wrap(time, first[1], last[1])
        if beh == OSCILLATE and n % 2:
            time = min(max(first[1] + last[1] - time, first[1]), last[1])
        if beh == OFFSET:
            offset = n * (last[0] - first[0])
        break
    i = 0
    while time > keys[i + 1][1]:
        i += 1
    k0, k1 = keys[i], keys[i + 1]
    if time == k0[1]:
        return k0[0] + offset
    if time == k1[1]:
        return k1[0] + offset
    t = (time - k0[1]) / (k1[1] - k0[1])
    shape = k1[2]
    if shape in ("tcb", "hermite", "bezier"):
        out, inc = _out(keys, i), _in(keys, i + 1)
        h2 = 3 * t * t - 2 * t ** 3
        h1 = 1 - h2
        h4 = t ** 3 - t * t
        h3 = h4 - t * t + t
        return h1 * k0[0] + h2 * k1[0] + h3 * out + h4 * inc + offset
    if shape == "bezier2d":
        return _bez2(keys, i, time) + offset
    if shape == "linear":
        return k0[0] + t * (k1[0] - k0[0]) + offset
    if shape == "stepped":
        return k0[0] + offset
    return offset
