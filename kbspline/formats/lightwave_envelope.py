"""LightWave envelopes: one animated channel of a scene, played as LightWave does.

The reference is the envelope evaluation the LightWave SDK published (the
LWO2 sample's ``envelope.c``: span shapes, tangents, pre/post behaviours),
with two corrections: behaviours repeat relative to the first key's time
(the sample's ``range`` measured wavelengths from time 0), and a 2-D Bezier
span is solved for its parameter exactly (a cubic root; the sample bisected
to 1e-4).  Spans that are cubic curves in time (TCB, Hermite, 1-D Bezier,
linear) run in the C core as a `PositionSpline` with LightWave's tangents;
stepped and 2-D Bezier spans and the behaviours are NumPy.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ..position import PositionSpline

SPAN_TYPES = ("tcb", "hermite", "bezier", "linear", "stepped", "bezier2d")
BEHAVIOURS = ("reset", "constant", "repeat", "oscillate", "offset_repeat", "linear")
_CUBIC_SPANS = frozenset({"tcb", "hermite", "bezier", "linear"})
_LAST_CUBIC = 3  # SPAN_TYPES up to linear are cubic curves in time
_MOST_KEY_TIMES = 10_000_000   # repeated key times `Envelope.key_times` lists at most


class LwsKey(NamedTuple):
    """One key as the file stores it.

    ``span`` is the shape of the span that ENDS at this key (LightWave's
    "incoming curve").  ``params`` are the six numbers after the span type
    (LWSC 3+: p1..p6; LWSC 1-2: tension, continuity, bias, 0, 0, 0), as the
    LWSC 3 format document says: TCB, Hermite and 1-D Bezier keys hold
    tension, continuity and bias in p1..p3 and the incoming and outgoing
    tangents in p4, p5 (per span, the SDK's units); 2-D Bezier keys hold the
    incoming handle (time, value offsets) in p1, p2 and the outgoing one in p3, p4.
    """
    value: float
    time: float
    span: str
    params: tuple

    @property
    def tension(self) -> float:
        return self.params[0] if self.span == "tcb" else 0.0

    @property
    def continuity(self) -> float:
        return self.params[1] if self.span == "tcb" else 0.0

    @property
    def bias(self) -> float:
        return self.params[2] if self.span == "tcb" else 0.0

    def sdk_params(self) -> tuple:
        """The four ``param`` slots of the SDK's key: a 2-D Bezier key's
        handles (p1..p4); any other key's incoming and outgoing tangents (p4,
        p5), which the SDK reads for Hermite and 1-D Bezier keys and for the
        start handle of a 2-D Bezier span after any key."""
        if self.span == "bezier2d":
            return tuple(self.params[:4])
        return (self.params[3], self.params[4], 0.0, 0.0)


def _outgoing(prev: Optional[LwsKey], key0: LwsKey, key1: LwsKey) -> float:
    """Outgoing tangent at key0 toward key1, per span (the SDK's rule, which
    follows key0's own shape)."""
    p = key0.sdk_params()
    tcb = ((1 - key0.tension) * (1 - key0.continuity) * (1 - key0.bias),
           (1 - key0.tension) * (1 + key0.continuity) * (1 + key0.bias))
    before = None if prev is None else (key0.value - prev.value, key1.time - prev.time)
    return _tangent(key0.span, key1.value - key0.value, key1.time - key0.time, before,
                    tcb, p[1], (p[3], p[2]))


def _incoming(key0: LwsKey, key1: LwsKey, nxt: Optional[LwsKey]) -> float:
    """Incoming tangent at key1 from key0 (the SDK's rule, by key1's shape)."""
    p = key1.sdk_params()
    tcb = ((1 - key1.tension) * (1 - key1.continuity) * (1 + key1.bias),
           (1 - key1.tension) * (1 + key1.continuity) * (1 - key1.bias))
    after = None if nxt is None else (nxt.value - key1.value, nxt.time - key0.time)
    return _tangent(key1.span, key1.value - key0.value, key1.time - key0.time, after,
                    tcb, p[0], (p[1], p[0]))


def _tangent(span: str, d: float, dt: float, neighbour: Optional[tuple[float, float]],
             tcb: tuple[float, float], handle: float, handle2d: tuple[float, float]) -> float:
    """A key's tangent over its span (value change `d` in `dt` seconds), by
    the key's `span` shape. `neighbour`: the other span's value change and
    the seconds both spans cover, None at an end; `tcb`: the TCB weights of
    (this span, the other); `handle`: a Hermite or 1-D Bezier key's tangent;
    `handle2d`: a 2-D Bezier handle's (value, time) offsets."""
    if span in ("hermite", "bezier"):
        return handle if neighbour is None else handle * (dt / neighbour[1])
    if span == "bezier2d":
        value, time = handle2d
        return value * dt / time if abs(time) > 1e-5 else value * dt * 1e5
    if span not in ("tcb", "linear"):
        return 0.0
    own, other = tcb if span == "tcb" else (1.0, 1.0)
    if neighbour is None:
        return own * d
    return dt / neighbour[1] * (other * neighbour[0] + own * d)


def _cubic_root(a: float, b: float, c: float, d: np.ndarray) -> np.ndarray:
    """The smallest root in [0, 1] of a u^3 + b u^2 + c u + d for each d
    (coefficients of order one): Cardano's or the trigonometric formula,
    then two Newton steps; a vanishing a or b falls back to the quadratic
    or linear root.  Where no root lies in [0, 1], the nearer end."""
    if abs(a) > 1e-12:
        B, C, D = b / a, c / a, d / a
        p = C - B * B / 3
        q = 2 * B ** 3 / 27 - B * C / 3 + D
        disc = (q / 2) ** 2 + (p / 3) ** 3
        roots = np.full(d.shape + (3,), np.nan)
        one = disc > 0
        sq = np.sqrt(np.where(one, disc, 0.0))
        roots[..., 0] = np.where(one, np.cbrt(-q / 2 + sq) + np.cbrt(-q / 2 - sq), np.nan)
        if p < 0:  # three real roots where disc <= 0
            r = 2 * np.sqrt(-p / 3)
            phi = np.arccos(np.clip(3 * q / (p * r), -1.0, 1.0)) / 3
            for k in range(3):
                trig = r * np.cos(phi - 2 * np.pi * k / 3)
                roots[..., k] = np.where(one, roots[..., k], trig)
        elif not one.all():  # p = 0 = q: a triple root
            roots[~one, 0] = np.cbrt(-q[~one])
        roots -= B / 3
    elif abs(b) > 1e-12:
        disc = np.sqrt(np.maximum(c * c - 4 * b * d, 0.0))
        roots = np.stack([(-c + disc) / (2 * b), (-c - disc) / (2 * b)], axis=-1)
    else:
        roots = (-d / c if c != 0 else np.zeros_like(d))[..., None]
    for _ in range(2):  # Newton polish on the cubic itself
        f = ((a * roots + b) * roots + c) * roots + d[..., None]
        df = (3 * a * roots + 2 * b) * roots + c
        roots = roots - np.where(df != 0, f / np.where(df != 0, df, 1.0), 0.0)
    inside = np.where((roots >= -1e-9) & (roots <= 1 + 1e-9), roots, np.inf)
    best = inside.min(axis=-1)
    nearest = np.where(np.abs(d) <= np.abs(a + b + c + d), 0.0, 1.0)
    return np.clip(np.where(np.isfinite(best), best, nearest), 0.0, 1.0)


def _bezier(x0, x1, x2, x3, t):
    c = 3 * (x1 - x0)
    b = 3 * (x2 - x1) - c
    a = x3 - x0 - c - b
    return ((a * t + b) * t + c) * t + x0


class Envelope:
    """One LightWave channel: keys, ``pre`` and ``post`` behaviours, and
    ``envelope(t)`` at seconds `t` as LightWave evaluates it.

    Values are in the file's units: angles (H, P, B) in degrees in LWSC 1-2
    files and in radians from LWSC 3 (``angle_unit`` says which; None for a
    position or scale channel).

    Parameters
    ----------
    keys : sequence of LwsKey or (value, time, span, params)
        In strictly increasing time; ``span`` one of `SPAN_TYPES`.
    pre, post : str
        Behaviour before the first key and after the last, one of
        `BEHAVIOURS`: reset, constant, repeat, oscillate, offset_repeat, linear.
    angle_unit : {None, 'degrees', 'radians'}
        What the values are, for the record.
    """

    def __init__(self, keys, pre: str = "constant", post: str = "constant",
                 angle_unit: Optional[str] = None) -> None:
        self.keys = tuple(LwsKey(*k) for k in keys)
        if not self.keys:
            raise ValueError("keys: an envelope needs at least one key")
        for name, b in (("pre", pre), ("post", post)):
            if b not in BEHAVIOURS:
                raise ValueError(f"{name} must be one of {BEHAVIOURS}, not {b!r}")
        for i, k in enumerate(self.keys):
            if k.span not in SPAN_TYPES:
                raise ValueError(f"keys[{i}].span must be one of {SPAN_TYPES}, not {k.span!r}")
            if i and not k.time > self.keys[i - 1].time:
                raise ValueError(f"keys[{i}].time {k.time} does not follow {self.keys[i - 1].time}")
        self.pre, self.post, self.angle_unit = pre, post, angle_unit
        self.times = np.array([k.time for k in self.keys])
        self.values = np.array([k.value for k in self.keys])
        self._codes = np.array([SPAN_TYPES.index(k.span) for k in self.keys[1:]] or [0])
        self._spline = self._cubic_spline()

    def __repr__(self) -> str:
        return (f"Envelope({len(self.keys)} keys, {self.times[0]:g}..{self.times[-1]:g} s, "
                f"pre={self.pre!r}, post={self.post!r})")

    def key_times(self, start: float, end: float) -> np.ndarray:
        """Key times within [start, end], with their images in every period a
        repeat, oscillate or offset repeat behaviour plays there.

        Parameters
        ----------
        start, end : float
            Seconds.

        Returns
        -------
        ndarray
            Increasing seconds.
        """
        t0, t1 = self.times[0], self.times[-1]
        out, period = [self.times], t1 - t0
        for side, lo, hi in (("pre", start, t0), ("post", t1, end)):
            behaviour = getattr(self, side)
            if period <= 0 or hi <= lo or behaviour not in ("repeat", "oscillate",
                                                            "offset_repeat"):
                continue
            first, last = np.floor((lo - t0) / period), np.ceil((hi - t0) / period)
            if (last - first) * len(self.times) > _MOST_KEY_TIMES:
                raise ValueError(f"{start}..{end} s holds more than {_MOST_KEY_TIMES} "
                                 f"repeated key times of {self!r}")
            cycles = np.arange(first, last + 1)[:, None]
            offsets = np.where(cycles % 2 != 0, t1 - self.times, self.times - t0) \
                if behaviour == "oscillate" else self.times - t0
            out.append((t0 + cycles * period + offsets).ravel())
        times = np.unique(np.concatenate(out))
        return times[(times >= start) & (times <= end)]

    def tangents(self):
        """(incoming, outgoing) per key, per second: the SDK's tangents
        divided by each span's length; a linear span's ends carry its slope
        (the SDK interpolates it straight), and 0 where no span uses them."""
        keys, n = self.keys, len(self.keys)
        t_in, t_out = np.zeros(n), np.zeros(n)
        for k in range(n - 1):
            dt = keys[k + 1].time - keys[k].time
            prev = keys[k - 1] if k > 0 else None
            nxt = keys[k + 2] if k + 2 < n else None
            if keys[k + 1].span == "linear":
                t_out[k] = t_in[k + 1] = (keys[k + 1].value - keys[k].value) / dt
            else:
                t_out[k] = _outgoing(prev, keys[k], keys[k + 1]) / dt
                t_in[k + 1] = _incoming(keys[k], keys[k + 1], nxt) / dt
        return t_in, t_out

    def _cubic_spline(self):
        if len(self.keys) < 2 or not any(k.span in _CUBIC_SPANS for k in self.keys[1:]):
            return None
        t_in, t_out = self.tangents()
        with np.errstate(all="ignore"):
            finite = np.all(np.isfinite(t_in)) and np.all(np.isfinite(t_out))
        if not finite:
            raise ValueError("keys: their tangents overflow (values or times too far apart)")
        return PositionSpline(self.times, self.values, tangents=(t_in, t_out))

    def _behave(self, t):
        """The behaviours: times mapped into the keys' range, the offsets
        they add (None for none), and where they set the value outright (a
        mask or None, and an array holding those values)."""
        t0, t1 = self.times[0], self.times[-1]
        v0, v1 = self.values[0], self.values[-1]
        mapped, offset, fixed, values = t, None, None, None
        for side, mask in (("pre", t < t0), ("post", t > t1)):
            if not mask.any():
                continue
            behaviour = getattr(self, side)
            if behaviour in ("reset", "constant", "linear"):
                if fixed is None:
                    fixed, values = np.zeros(t.shape, dtype=bool), np.empty_like(t)
                fixed |= mask
            if behaviour == "reset":
                values[mask] = 0.0
            elif behaviour == "constant":
                values[mask] = v0 if side == "pre" else v1
            elif behaviour == "linear":
                k = self.keys
                if side == "pre":
                    slope = _outgoing(None, k[0], k[1]) / (k[1].time - k[0].time)
                    values[mask] = slope * (t[mask] - t0) + v0
                else:
                    slope = _incoming(k[-2], k[-1], None) / (k[-1].time - k[-2].time)
                    values[mask] = slope * (t[mask] - t1) + v1
            else:
                cycles = np.floor((t[mask] - t0) / (t1 - t0))
                inside = np.clip(t[mask] - cycles * (t1 - t0), t0, t1)
                if behaviour == "oscillate":
                    inside = np.where(cycles % 2 != 0, t0 + t1 - inside, inside)
                elif behaviour == "offset_repeat":
                    if offset is None:
                        offset = np.zeros_like(t)
                    offset[mask] = cycles * (v1 - v0)
                if mapped is t:
                    mapped = t.copy()
                mapped[mask] = inside
        return mapped, offset, fixed, values

    def __call__(self, t) -> np.ndarray:
        """Values at seconds `t`.

        Parameters
        ----------
        t : float or array_like
            Finite times in seconds.

        Returns
        -------
        ndarray of the shape of `t`
        """
        t = np.asarray(t, dtype=np.float64)
        shape = t.shape
        t = t.reshape(-1)
        if not np.all(np.isfinite(t)):
            raise ValueError(f"t must be finite, not {t[~np.isfinite(t)][0]}")
        if len(self.keys) == 1:
            return np.full(shape, self.values[0])
        with np.errstate(over="ignore", invalid="ignore"):  # offsets far out may overflow
            mapped, offset, fixed, values = self._behave(t)
            inside = slice(None) if fixed is None else ~fixed
            vals = self._inside(mapped[inside])
            if offset is not None:
                vals += offset[inside]
        if fixed is None:
            return vals.reshape(shape)
        values[inside] = vals
        return values.reshape(shape)

    def _inside(self, t):
        """Values at times within the keys' range."""
        if self._codes.max() <= _LAST_CUBIC:
            vals = self._spline(t)
            vals[t == self.times[-1]] = self.values[-1]  # the SDK's own value at the last key
            return vals
        seg = np.clip(np.searchsorted(self.times, t, side="left") - 1, 0, len(self.keys) - 2)
        code = self._codes[seg]
        vals = np.empty_like(t)
        cubic = code <= _LAST_CUBIC
        if cubic.any():
            vals[cubic] = self._spline(t[cubic])
        step = code == SPAN_TYPES.index("stepped")
        vals[step] = self.values[seg[step]]
        bez = code == SPAN_TYPES.index("bezier2d")
        if bez.any():
            vals[bez] = self._bezier2d(seg[bez], t[bez])
        # keys' own times give the keys' own values (the SDK's first test)
        at0, at1 = t == self.times[seg], t == self.times[seg + 1]
        vals[at0] = self.values[seg[at0]]
        vals[at1] = self.values[seg[at1] + 1]
        return vals

    def _bezier2d(self, seg, t):
        """2-D Bezier spans: the time curve solved for its parameter, then
        the value curve at that parameter."""
        out = np.empty_like(t)
        for k in np.unique(seg):
            key0, key1 = self.keys[k], self.keys[k + 1]
            p0, p1 = key0.sdk_params(), key1.sdk_params()
            dt = key1.time - key0.time
            if key0.span == "bezier2d":
                x1, y1 = key0.time + p0[2], key0.value + p0[3]
            else:
                x1, y1 = key0.time + dt / 3, key0.value + p0[1] / 3
            x2, y2 = key1.time + p1[0], key1.value + p1[1]
            # the time curve on [0, 1] in units of the span, for a well-scaled cubic
            h1, h2 = (x1 - key0.time) / dt, (x2 - key0.time) / dt
            c = 3 * h1
            b = 3 * (h2 - h1) - c
            a = 1 - c - b
            sel = seg == k
            u = _cubic_root(a, b, c, -(t[sel] - key0.time) / dt)
            out[sel] = _bezier(key0.value, y1, y2, key1.value, u)
        return out
