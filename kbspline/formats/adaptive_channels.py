"""LINEAR keys for any scene channel within a tolerance (`channel_keys`):
`kbspline.formats.adaptive`'s refinement fed a channel as a function of
time, every key time of the channel kept, and a pair of keys around each
jump in value, at a key time or between keys.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .._checks import _check_positive
from .adaptive import (DENSE_CHECKS, MIN_KEY_SPACING, FloatArray, _bound, _check_count,
                       _place)

__all__ = ["channel_keys", "key_times_in"]


def channel_keys(channel, tolerance: float, *, start: float, end: float,
                 min_spacing: float = MIN_KEY_SPACING,
                 round_times: Optional[Callable[[FloatArray], FloatArray]] = None
                 ) -> tuple[FloatArray, FloatArray]:
    """LINEAR keys for any scene channel, within a tolerance over [start, end].

    Parameters
    ----------
    channel : Channel
        A `kbspline.formats.scene.Channel`: a callable of times (M,) giving
        values (M, n), rotations (path ``"rotation"``) as unit (w, x, y, z),
        with `times`; `key_times_in` says which times it keeps as keys.
    tolerance : float
        Radians for a rotation channel, the channel's units otherwise:
        playback (slerp between rotation keys, lerp between others, values
        and times as float32 where `round_times` says so) stays within it at
        every time of [start, end] but inside a jump's interval.
    start, end : float
        Seconds, finite, ``start <= end``: the range keyed (a repeating or
        looping channel is keyed over all of it, not one period).
    min_spacing : float
        Seconds: added keys never come closer, and a jump's pair of keys are
        this far apart.
    round_times : callable, optional
        Maps times to those the format stores (as for `linear_keys`).

    Returns
    -------
    times : ndarray (K,)
        Increasing seconds: `start`, `end`, every key time of the channel
        between them (`key_times_in`), and keys where the error asks.
    values : ndarray (K, n)
        The channel at `times` (float64; the bound assumed float32 storage).

    Notes
    -----
    Where the value jumps at a key time (a stepped span, a reset behaviour,
    a repeat whose last key differs from its first, a 3DS hide toggle),
    the keys are a pair `min_spacing` apart, one on each side of the jump,
    each stored (`round_times`) on its own side; linear playback between
    them cannot follow a jump, so that interval is the one place the
    tolerance is not met, besides places where keys would need to be
    closer than `min_spacing` (as for `linear_keys`).  Jumps are looked for
    at key times (`key_times_in`) and, where refinement leaves an interval
    failing at the `min_spacing` floor, inside it (a 3DS look-at flipping
    half a turn as its target passes straight over the camera): the
    interval is bisected down to nanoseconds, and a change there above the
    tolerance and much larger than the channel's own nearby is a jump,
    keyed as above; a steep but continuous motion stays a miss.  Jumps
    whose pairs touch or overlap (closer than `min_spacing`, as a repeat
    shorter than it, or a value of its own at a key time) cannot be shown
    apart: those intervals are no jump's, but measured like any other, a
    miss where they fail.
    """
    times, values, _, _ = _channel_keys(channel, tolerance, start, end, min_spacing,
                                        round_times)
    return times, values


def _channel_keys(channel, tolerance, start, end, min_spacing=MIN_KEY_SPACING,
                  round_times=None):
    """`channel_keys`, plus whether each interval is a jump's, (K - 1,), and
    the channel as keyed (a `_Curve`, its times clipped to the range)."""
    tolerance = _check_positive("tolerance", tolerance)
    min_spacing = _check_positive("min_spacing", min_spacing)
    start, end = _check_range(start, end)
    if not callable(channel) or not hasattr(channel, "times"):
        raise TypeError(f"channel must be a scene Channel (a callable with times), "
                        f"not {type(channel).__name__}")
    rotation = getattr(channel, "path", None) == "rotation"
    if start == end:
        curve = _Curve(channel, start, end, rotation)
        return np.array([start]), curve(np.array([start])), np.zeros(0, bool), curve
    rounding = round_times or (lambda t: t)
    breaks = key_times_in(channel, start, end)
    for _ in range(_JUMP_ROUNDS):   # again with the jumps found between keys as breaks
        _check_count([breaks])
        keys, jump, curve = _jump_pairs(channel, breaks, tolerance, min_spacing, rounding,
                                        rotation)
        jump_starts = keys[:-1][jump]       # no key ever lands inside a jump's interval
        keys = _place(curve, [keys], [jump], tolerance, rounding, min_spacing)[0]
        jump = np.isin(keys[:-1], jump_starts)
        found = _jumps_between(channel, curve, keys, jump, tolerance, min_spacing, rotation)
        found = found[~np.isin(found, breaks)]      # a jump at the range's end stays
        if not len(found):
            break
        breaks = np.union1d(breaks, found)
    return keys, curve(keys), jump, curve


def key_times_in(channel, start: float, end: float) -> FloatArray:
    """The times a channel keeps as keys within [start, end]: its own
    ``key_times(start, end)`` where it offers one (a repeating behaviour's
    keys in every period), else its `times` there; `start` and `end` too.

    Parameters
    ----------
    channel : Channel
    start, end : float

    Returns
    -------
    ndarray
        Increasing unique seconds, from `start` to `end`.
    """
    start, end = _check_range(start, end)
    if hasattr(channel, "key_times"):
        times = np.asarray(channel.key_times(start, end), dtype=np.float64)
    else:
        times = np.asarray(channel.times, dtype=np.float64)
    times = times[(times > start) & (times < end)]
    return np.unique(np.concatenate([[start, end], times]))


def _check_range(start, end):
    try:
        start, end = float(start), float(end)
    except (TypeError, ValueError):
        raise TypeError(f"start and end must be numbers, not {start!r}, {end!r}") from None
    if not (np.isfinite(start) and np.isfinite(end) and start <= end):
        raise ValueError(f"start and end must be finite with start <= end, not "
                         f"{start!r}, {end!r}")
    return start, end


def _values(channel, times):
    values = np.asarray(channel(times), dtype=np.float64)
    return values.reshape(len(times), -1)


class _Curve:
    """A channel seen by the refinement as an unbatched spline on [start, end]."""
    batch_shape = ()
    scalar_first = True

    def __init__(self, channel, start, end, rotation):
        self.channel, self.rotation = channel, rotation
        self.breakpoints = np.array([start, end])

    def __call__(self, t):
        t = np.clip(np.asarray(t, dtype=np.float64), *self.breakpoints)
        return _values(self.channel, t.ravel()).reshape(t.shape + (-1,))


# A jump is a change between a key time and times this close to it (in
# seconds, or _JUMP_ULPS float64 steps of the time where that is more: never
# scaled by the time, so a motion is judged alike at 1 s and at 1000 s) of
# more than _JUMP_SHARE of the tolerance and _JUMP_RATIO times the change
# over the same step just beside it.
_JUMP_STEP = 1e-8
_JUMP_ULPS = 4096.0
_JUMP_SHARE = 1e-3
_JUMP_RATIO = 16.0
# Keyings of a channel at most: the first, and again with the jumps found
# between its keys (one more finds what the first's refinement hid).
_JUMP_ROUNDS = 3


def _distance(a, b, rotation):
    if rotation:
        chord = np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))
        return 4 * np.arcsin(np.minimum(chord / 2, 1.0))
    return np.linalg.norm(a - b, axis=-1)


def _jump_pairs(channel, breaks, tolerance, spacing, rounding, rotation):
    """The key times `breaks` as stored (`rounding`, but for the ends), with
    a pair of keys around each jump: `spacing` before a key the value jumps
    to, or after one it jumps from, the key itself stored on its own side of
    the jump; and whether each interval is such a jump's."""
    start, end = breaks[0], breaks[-1]
    into, out_of = _jumps(channel, breaks, tolerance, rotation)
    curve = _Curve(channel, start, end, rotation)
    firsts = np.concatenate([rounding(breaks[into] - spacing),
                             _stored_beside(rounding, breaks[out_of], -1)])
    lasts = np.concatenate([_stored_beside(rounding, breaks[into], 1),
                            rounding(breaks[out_of] + spacing)])
    firsts, lasts = np.maximum(firsts, start), np.minimum(lasts, end)
    plain = rounding(breaks[1:-1][~(into | out_of)[1:-1]])
    inner = np.concatenate([plain, firsts, lasts])
    lo, hi = rounding(np.array([start, end]))
    # inner keys stored apart from the ends, as those are
    inner = inner[(inner > max(lo, start)) & (inner < min(hi, end))]
    keys = np.unique(np.concatenate([[start, end], inner]))
    spans = np.searchsorted(keys, np.column_stack([firsts, lasts]))
    jump = np.zeros(len(keys) - 1, dtype=bool)
    for i, j in spans:
        jump[i:j] = True
    return keys, jump & ~_crowded(jump, spans, breaks[into], breaks[out_of]), curve


def _crowded(jump, spans, into, out_of):
    """The jump intervals whose run (touching pairs) holds more than one
    jump (times further apart than `_jump_step`): no key can show what lies
    between those jumps, so that run is measured (a miss), not skipped."""
    at = np.concatenate([into, out_of])
    order = np.argsort(at, kind="stable")
    apart = np.diff(at[order]) > _jump_step(at[order][1:])
    jump_id = np.empty(len(at), dtype=np.intp)
    jump_id[order] = np.cumsum(np.concatenate([[0], apart]))
    # a value of its own at a key time (jumps into and out of it): two jumps
    jump_id[len(into):][np.isin(out_of, into)] += len(at)
    run = np.cumsum(jump & ~np.concatenate([[False], jump[:-1]]))
    held = {}
    for (i, j), k in zip(spans, jump_id):
        if j > i:
            held.setdefault(run[i], set()).add(k)
    return jump & np.isin(run, [r for r, ids in held.items() if len(ids) > 1])


def _jump_step(times):
    """`_jumps`' step at `times`: `_JUMP_STEP`, or more where float64
    times are too coarse for it."""
    return np.maximum(_JUMP_STEP, _JUMP_ULPS * np.spacing(np.abs(times)))


def _jumps(channel, breaks, tolerance, rotation):
    """Whether the value jumps into each break (its value differs from the
    one just before) and out of it (from the one just after)."""
    step = _jump_step(breaks)
    at = _values(channel, np.concatenate([breaks + k * step for k in (-2, -1, 0, 1, 2)]))
    v = at.reshape(5, len(breaks), -1)
    floor = _JUMP_SHARE * tolerance
    into = _distance(v[2], v[1], rotation)
    out_of = _distance(v[3], v[2], rotation)
    into = (into > floor) & (into > _JUMP_RATIO * _distance(v[1], v[0], rotation))
    out_of = (out_of > floor) & (out_of > _JUMP_RATIO * _distance(v[4], v[3], rotation))
    into[0] = out_of[-1] = False     # the range starts and ends there
    return into, out_of


def _jumps_between(channel, curve, keys, jump, tolerance, spacing, rotation):
    """The times of jumps inside the intervals refinement left failing at
    the spacing floor: each such interval bisected, keeping the half whose
    ends differ more, down to a quarter of `_jumps`' step; a jump where
    `_jumps` finds one into the bracket's end (its change much more than
    the channel's own over the same step just before) and the bracket's
    ends differ by more than the tolerance."""
    lo, hi = keys[:-1], keys[1:]
    floor = ~jump & (hi - lo < 2 * spacing)
    lo, hi = lo[floor], hi[floor]
    if len(lo):
        bound = _bound(curve, lo, hi, np.zeros(len(lo), np.intp), 1, 0.0, DENSE_CHECKS + 1)[0]
        lo, hi = lo[bound > tolerance], hi[bound > tolerance]
    if not len(lo):
        return lo
    at_lo, at_hi = _values(channel, lo), _values(channel, hi)
    finest = _jump_step(hi) / 4
    rounds = int(np.ceil(np.log2(np.max((hi - lo) / finest))))
    for _ in range(max(rounds, 0)):
        mid = lo + (hi - lo) / 2
        at_mid = _values(channel, mid)
        left = _distance(at_lo, at_mid, rotation) >= _distance(at_mid, at_hi, rotation)
        hi, at_hi = np.where(left, mid, hi), np.where(left[:, None], at_mid, at_hi)
        lo, at_lo = np.where(left, lo, mid), np.where(left[:, None], at_lo, at_mid)
    into, _ = _jumps(channel, np.concatenate([hi[:1], hi]), tolerance, rotation)
    # a jump smaller than the tolerance is not what failed: the miss stays
    return np.unique(hi[into[1:] & (_distance(at_lo, at_hi, rotation) > tolerance)])


def _stored_beside(rounding, times, side):
    """The stored times nearest `times` on their `side` (+1: at or after,
    -1: at or before), nudging by growing steps."""
    out = rounding(times)
    step = 2.0 ** -24 * np.maximum(1.0, np.abs(times))
    for _ in range(60):
        wrong = side * (out - times) < 0
        if not wrong.any():
            break
        out[wrong] = rounding(times[wrong] + side * step[wrong])
        step[wrong] *= 2
    return out
