"""Adaptive LINEAR keys: where to sample a spline so that a format's linear
playback stays within a tolerance of it at every time.

glTF's LINEAR sampler and USD's time samples replay a rotation by slerp
between neighbouring keys and a vector by lerp.  `linear_keys` starts from
the spline's own key times (every key kept) and splits each interval whose
error bound exceeds the tolerance into as many equal pieces as the error's
quadratic decay asks for, or, for rotations, that sweeps more than a
quarter turn (so playback, which takes the shorter way, replays every turn
of a spin), until every interval passes.  Keys end up dense
where the motion bends and sparse where it does not.  An interval that
still fails but is too short to halve (keys stay `min_spacing` apart)
has its neighbourhood respaced as densely as that spacing allows (evenly,
or with all pieces that short but one where the bound prefers it),
so a tolerance is missed only where keys that close cannot meet it.
`channel_keys` runs the same refinement on any scene channel (a function
of time: LightWave envelopes, look-ats, repeats) over a range, with a
pair of keys `min_spacing` apart around each jump of its value.

The bound of an interval: its playback error is measured at CHECKS + 1
equally spaced points, with keys' values rounded to float32 as both formats
store them; between two checks the error vector (rotation vector of the
playback's difference from the spline, or the difference of positions) is
within ``h^2/8 max|v''|`` of the line through its values there, and
``|v''|`` is estimated from the checks' second differences, with a factor of two to
spare.  The swept angle of an interval is the sum of the angles between
neighbouring checks.  When every interval passes, each is checked once more
with the bound taken on DENSE_CHECKS + 1 points (its curvature term 16
times smaller), failing ones split again, so a feature the coarse grid
stepped over is keyed; the exporters measure their error on that grid too.
"""
from __future__ import annotations

from typing import Callable, Optional, Union

import numpy as np
from numpy.typing import NDArray

from .. import _kbspline as _core
from .._checks import _check_positive
from ..position import PositionSpline
from ..rotation import RotationSpline

__all__ = ["linear_keys", "channel_keys", "key_times_in", "playback_error", "MIN_KEY_SPACING",
           "CHECKS", "DENSE_CHECKS", "MAX_KEYS", "SPLIT_ANGLE"]

# Checks per interval (the bound's grid); playback_error measures on a
# finer, different grid.
CHECKS = 16
# The final check's grid: every interval's bound is taken again on it, and
# the exporters measure their error there.
DENSE_CHECKS = 4 * CHECKS
_VERIFY_ROUNDS = 4
# The most keys one call places (all tracks together).
MAX_KEYS = 1_000_000
# Times evaluated at once while checking intervals (bounds memory).
_CHUNK_POINTS = 1 << 16
# The closest two added keys come (seconds): importers merge keys closer
# than 0.01 frame (Blender), which at 24 frames per second is 0.42 ms.
MIN_KEY_SPACING = 5e-4
# The largest swept angle between neighbouring rotation keys (radians).
SPLIT_ANGLE = np.pi / 2
# An interval is split so that its pieces' bound lands near this fraction
# of the tolerance (the bound falls with the square of the length).
_AIM = 0.5
_SAFETY = 2.0
_MAX_ROUNDS = 40
# How far around a failing interval too short to halve keys are respaced
# (in key spacings), and by how much at least that must shorten it.
_REACH = 8
_PROGRESS = 0.99

Spline = Union[RotationSpline, PositionSpline]
FloatArray = NDArray[np.float64]


def linear_keys(spline: Spline, tolerance: float, *, shared: bool = False,
                round_times: Optional[Callable[[FloatArray], FloatArray]] = None,
                start: Optional[FloatArray] = None,
                min_spacing: float = MIN_KEY_SPACING,
                lerp_within: float = 0.0) -> list[FloatArray]:
    """Key times at which to sample a spline for linear playback within a tolerance.

    Parameters
    ----------
    spline : RotationSpline or PositionSpline
        The spline, batched or not.
    tolerance : float
        Radians for a RotationSpline, the spline's units for a PositionSpline:
        playback stays within it at every time of the domain.
    shared : bool
        One list of times for every track (a format that stores all tracks
        per sample, as a UsdSkel animation does); otherwise one per track, in
        the batch's C order.
    round_times : callable, optional
        Maps times to the nearest the format can store (glTF: float32
        seconds); keys are placed there and the bound holds for the stored
        times.
    start : array_like, optional
        Times kept as keys besides the spline's own (those inside its
        domain), for instance the keys another spline placed in a list both
        share; new keys only split the intervals between them.
    min_spacing : float
        Seconds: added keys never come closer (default MIN_KEY_SPACING,
        what importers keep); lower it for importers that keep closer keys.
    lerp_within : float
        Rotations only: playback lerps two samples without normalising where
        ``1 - |q0 . q1|`` is at most this (UsdSkel's GfSlerp: 1e-5), which
        moves a vector up to ``(1 - |q|^2) |I - R|`` more; the bound counts it.

    Returns
    -------
    list of ndarray
        Increasing float64 times, one array when shared, else one per track.
        Keys are never closer than `min_spacing` unless two of the spline's
        keys are; where the bound would need them closer (a tolerance below
        what float32 or that spacing allows), the interval is kept and
        `playback_error` reports what it reaches.

    Raises
    ------
    ValueError
        For a tolerance that is not positive and finite, or a negative
        `lerp_within`.
    TypeError
        For a tolerance that is not a number, or another kind of spline.
    """
    tolerance = _check_positive("tolerance", tolerance)
    min_spacing = _check_positive("min_spacing", min_spacing)
    if not isinstance(spline, (RotationSpline, PositionSpline)):
        raise TypeError(f"spline must be a RotationSpline or PositionSpline, "
                        f"not {type(spline).__name__}")
    if not 0 <= lerp_within < np.inf:
        raise ValueError(f"lerp_within must be a finite number >= 0, not {lerp_within!r}")
    rounding = round_times or (lambda t: t)
    keys = _start_keys(spline, shared, rounding, start)
    done = [np.zeros(len(k) - 1, dtype=bool) for k in keys]
    return _place(spline, keys, done, tolerance, rounding, min_spacing, lerp_within)


def _place(spline, keys, done, tolerance, rounding, min_spacing, lerp_within=0.0):
    """The refinement: `keys` (one list per track, or one shared) with new
    keys where their intervals' bounds ask; intervals flagged in `done`
    are never split (a jump's pair of keys).  `spline` is a kbspline
    spline or a `_Curve`."""
    fixed = [k.copy() for k in keys]
    jumps = [k[:-1][d] for k, d in zip(keys, done)]
    verified = 0
    for _ in range(_MAX_ROUNDS):
        _check_count(keys)
        starts, ends, owner = _open_intervals(keys, done)
        if not len(starts):
            if verified == _VERIFY_ROUNDS:
                break
            verified += 1
            keys, done, again = _verify(spline, keys, jumps, tolerance, rounding,
                                        min_spacing, lerp_within)
            if not again:
                break
            continue
        pieces = _pieces(spline, starts, ends, owner, len(keys), tolerance, lerp_within)
        for g in range(len(keys)):
            mine = owner == g

            def worst(s, e, g=g):   # the dense bound of intervals (s, e) of key list g
                bound = _bound(spline, s, e, np.full(len(s), g), len(keys), lerp_within,
                               DENSE_CHECKS + 1)[0]
                return bound.max(axis=0) if bound.ndim == 2 else bound
            keys[g], done[g] = _refine(keys[g], fixed[g], done[g], starts[mine], ends[mine],
                                       pieces[mine], rounding, worst, min_spacing, tolerance)
    return [_distinct_stored(k, rounding) for k in keys]


def _distinct_stored(keys, rounding):
    """`keys` but for inner ones stored (`rounding`) at the time of the key
    before them or of the last key: the ends are kept unrounded, and where
    stored times are coarse (float32 seconds near 10^4 s step by 0.5 ms) a
    key placed beside an end can round onto it."""
    stored = rounding(keys.copy())
    keep = np.ones(len(keys), dtype=bool)
    keep[1:] = np.diff(stored) > 0
    keep[:-1] &= stored[:-1] < stored[-1]
    keep[[0, -1]] = True
    return keys[keep]


def _check_count(keys):
    """A ValueError once the keys pass MAX_KEYS (a long range of fast or
    repeating motion), before memory and time run away."""
    count = sum(len(k) for k in keys)
    if count > MAX_KEYS:
        lo = min(k[0] for k in keys)
        hi = max(k[-1] for k in keys)
        raise ValueError(f"{lo:g}..{hi:g} s needs more than MAX_KEYS = {MAX_KEYS} keys "
                         f"({count} so far) for this tolerance; shorten the range "
                         f"(a scene's LastFrame or KFSEG) or raise the tolerance")


def _verify(spline, keys, jumps, tolerance, rounding, spacing, lerp_within):
    """The final check: every interval but a jump's, its bound taken on the
    DENSE_CHECKS grid (its curvature term 16 times smaller than CHECKS');
    failing ones long enough are split evenly and left open for another
    round.  Returns (keys, accepted flags, whether any was split)."""
    every = [np.zeros(len(k) - 1, dtype=bool) for k in keys]
    starts, ends, owner = _open_intervals(keys, every)
    pieces = _pieces(spline, starts, ends, owner, len(keys), tolerance, lerp_within,
                     DENSE_CHECKS + 1)
    pieces = np.maximum(pieces, np.where(pieces >= 2, 2, 1))
    pieces = np.minimum(pieces, np.floor((ends - starts) / spacing))
    pieces[np.isin(starts, np.concatenate(jumps))] = 1
    again, out_keys, out_done = False, [], []
    for g, k in enumerate(keys):
        mine = (owner == g) & (pieces >= 2)
        added = _even_points(starts[mine], ends[mine], pieces[mine], rounding)
        added = added[~np.isin(added, k)]
        merged = np.union1d(k, added)
        again |= len(added) > 0
        out_keys.append(merged)
        # an interval stays accepted while no key landed inside it
        out_done.append(np.isin(merged[:-1], k) & np.isin(merged[1:], k))
    return out_keys, out_done, again


def _rotational(spline):
    return isinstance(spline, RotationSpline) or getattr(spline, "rotation", False)


def playback_error(spline: Spline, times: list[FloatArray],
                   checks: int = 4 * CHECKS - 1) -> FloatArray:
    """The largest distance between a spline and linear playback of its samples.

    Parameters
    ----------
    spline : RotationSpline or PositionSpline
        The spline.
    times : list of ndarray
        Sample times as `linear_keys` returns them; values are stored as
        float32, as the formats store them.
    checks : int
        Points measured inside every interval, beside the keys.

    Returns
    -------
    ndarray (tracks,)
        Radians for rotations, the spline's units for positions.
    """
    tracks = int(np.prod(spline.batch_shape))
    starts, ends, owner = _open_intervals(times, [np.zeros(len(t) - 1, bool) for t in times])
    worst, _, _ = _check(spline, starts, ends, owner, len(times), checks + 2)
    if len(times) == 1:   # shared: (tracks, intervals), or (intervals,) unbatched
        return worst.reshape(tracks, -1).max(axis=-1)
    out = np.zeros(tracks)
    np.maximum.at(out, owner, worst)
    return out


def _start_keys(spline, shared, rounding, start):
    """The spline's key times and `start`'s, rounded but for the domain's ends."""
    tracks = int(np.prod(spline.batch_shape))
    knots = np.asarray(spline.breakpoints, dtype=np.float64).reshape(-1, spline.breakpoints.shape[-1])
    knots = np.broadcast_to(knots, (tracks, knots.shape[-1]))
    extra = np.zeros(0) if start is None else np.asarray(start, dtype=np.float64).ravel()
    out = []
    for k in (knots.ravel()[None] if shared else knots):
        lo, hi = k.min(), k.max()
        k = np.concatenate([k, extra[np.isfinite(extra)]])
        inner = np.clip(rounding(k[(k > lo) & (k < hi)]), lo, hi)
        out.append(np.unique(np.concatenate([[lo, hi], inner[(inner > lo) & (inner < hi)]])))
    return out


def _open_intervals(keys, done):
    """(starts, ends, owner) of every interval not yet accepted."""
    starts, ends, owner = [], [], []
    for g, (k, ok) in enumerate(zip(keys, done)):
        open_ = ~ok
        starts.append(k[:-1][open_])
        ends.append(k[1:][open_])
        owner.append(np.full(int(open_.sum()), g))
    return np.concatenate(starts), np.concatenate(ends), np.concatenate(owner)


def _pieces(spline, starts, ends, owner, groups, tolerance, lerp_within=0.0, m=CHECKS + 1):
    """How many pieces each interval asks to be split into (1: it passes):
    enough for the error bound to fall to _AIM of the tolerance and, for
    rotations, for a piece to sweep at most SPLIT_ANGLE; the largest over
    tracks when they share intervals."""
    bound, swept = _bound(spline, starts, ends, owner, groups, lerp_within, m)
    with np.errstate(invalid="ignore", over="ignore"):
        pieces = np.where(bound > tolerance, np.ceil(np.sqrt(bound / (_AIM * tolerance))), 1)
        pieces = np.maximum(pieces, np.ceil(swept / SPLIT_ANGLE))
    # non-finite values (beyond float32) pass here; the exporter refuses them
    pieces = np.where(np.isfinite(pieces), pieces, 1)
    return pieces.max(axis=0) if pieces.ndim == 2 else pieces


def _bound(spline, starts, ends, owner, groups, lerp_within, m=CHECKS + 1):
    """(error bound, swept angle) of each interval's playback (see the
    module's docstring), per track when they share intervals."""
    size, bend, swept = _check(spline, starts, ends, owner, groups, m)
    with np.errstate(invalid="ignore", over="ignore"):
        bound = size + _SAFETY * bend / 8.0
    if lerp_within > 0 and _rotational(spline):
        bound = bound + _lerp_shortfall(spline, starts, ends, owner, groups, lerp_within)
    return bound, swept


def _lerp_shortfall(spline, starts, ends, owner, groups, within):
    """How much more than slerp a vector moves where playback lerps the
    interval's end samples q0, q1 unnormalised: the matrix |q|^2 R +
    (1 - |q|^2) I at the lerp's middle, where 1 - |q|^2 = (1 - c) / 2 with
    c = |q0 . q1|, times |I - R| <= 2 min(1, |end's vector part| + sin)."""
    ends_q = _evaluate(spline, np.stack([starts, ends], axis=1), owner, groups)
    q = ends_q.astype(np.float32).astype(np.float64)
    if not spline.scalar_first:
        q = q[..., [3, 0, 1, 2]]
    c = np.minimum(np.abs(np.sum(q[..., 0, :] * q[..., 1, :], axis=-1)), 1.0)
    turn = np.sqrt(np.sum(q[..., 1:] ** 2, axis=-1)).max(axis=-1)
    reach = 2 * np.minimum(1.0, turn + np.sqrt(1 - c * c))
    return np.where(1 - c <= within * (1 + 1e-3), (1 - c) / 2 * reach, 0.0)


def _check(spline, starts, ends, owner, groups, m):
    """(largest error, largest second difference of the error, swept angle)
    of each interval's playback, from the spline at m equally spaced
    points (the core's kb_playback_check); shared intervals (groups == 1)
    give every track's, (tracks, intervals); in chunks of intervals, so
    that memory stays bounded however many there are."""
    step = max(1, _CHUNK_POINTS // m)
    if len(starts) > step:
        parts = [_check(spline, starts[i:i + step], ends[i:i + step], owner[i:i + step],
                        groups, m) for i in range(0, len(starts), step)]
        return tuple(np.concatenate([p[k] for p in parts], axis=-1) for k in range(3))
    u = np.linspace(0.0, 1.0, m)
    times = starts[:, None] + (ends - starts)[:, None] * u
    times[:, -1] = ends
    truth = _evaluate(spline, times, owner, groups)            # (..., n, m, D)
    if _rotational(spline) and not spline.scalar_first:
        truth = truth[..., [3, 0, 1, 2]]
    flat = np.ascontiguousarray(truth).reshape(-1, m, truth.shape[-1])
    out = _core.playback_check(flat, u, _rotational(spline))
    return tuple(x.reshape(truth.shape[:-2]) for x in out)


def _evaluate(spline, times, owner, groups):
    """The spline at `times` (n, m): for shared intervals every track's,
    (tracks, n, m, D); otherwise each interval's own track's, (n, m, D)."""
    n, m = times.shape
    tracks = int(np.prod(spline.batch_shape))
    lo, hi = spline.breakpoints[..., 0].min(), spline.breakpoints[..., -1].max()
    flat = np.clip(times.ravel(), lo, hi)
    if groups == 1:
        values = np.asarray(spline(flat)).reshape(tracks, n, m, -1)
        return values if tracks > 1 or spline.batch_shape else values[0]
    # each track its own times: pad every track's list to the longest
    counts = np.bincount(owner, minlength=tracks)
    width = int(counts.max()) * m
    grid = np.repeat(flat[:1], tracks * width).reshape(tracks, width)
    cols = _ranks(owner)[:, None] * m + np.arange(m)
    grid[owner[:, None], cols] = times.reshape(n, m)
    grid = np.clip(grid, lo, hi)
    values = np.asarray(spline(grid.reshape(spline.batch_shape + (width,))))
    values = values.reshape(tracks, width, -1)
    return values[owner[:, None], cols]


def _ranks(owner):
    """The position of each entry among the entries with the same owner."""
    order = np.argsort(owner, kind="stable")
    sorted_owner = owner[order]
    first = np.searchsorted(sorted_owner, sorted_owner, side="left")
    rank = np.empty(len(owner), dtype=np.intp)
    rank[order] = np.arange(len(owner)) - first
    return rank


def _refine(keys, fixed, done, starts, ends, pieces, rounding, worst, spacing, tolerance):
    """Accepts the open intervals that pass, splits the others, and respaces
    the keys around a failing interval too short to halve (see `_windows`
    and `_window_keys`); returns the new keys and accepted flags."""
    length = ends - starts
    most = np.floor(length / spacing)
    stuck = (pieces >= 2) & (most < 2)
    pieces = np.minimum(pieces, most)
    split = pieces >= 2
    # interval i gains the points j / pieces[i] of its length, j = 1 .. pieces[i] - 1
    added = _even_points(starts[split], ends[split], pieces[split], rounding)
    # a split whose new keys all rounded onto its ends cannot go further
    landed = (np.searchsorted(added, ends, side="left")
              - np.searchsorted(added, starts, side="right"))
    lo, hi, count = _windows(keys, fixed, starts[stuck], ends[stuck], spacing)
    accepted = np.union1d(keys[:-1][done], starts[~split | (landed == 0)])
    kept = np.union1d(keys, added)
    kept = kept[~_inside(kept, lo, hi)]
    merged = np.union1d(kept, _window_keys(lo, hi, count, rounding, worst, spacing,
                                           tolerance))
    # an accepted interval stays so while no key lands inside it; a
    # window's pieces are final (their bounds chose the layout)
    flags = np.isin(merged[:-1], accepted) & np.isin(merged[1:], keys)
    return merged, flags | _inside(merged[:-1], lo, hi, closed=True)


def _even_points(starts, ends, pieces, rounding):
    """The points that split each interval into `pieces` equal parts, rounded."""
    inner = (pieces - 1).astype(np.intp)
    which = np.repeat(np.arange(len(starts)), inner)
    j = np.arange(len(which)) - np.repeat(np.cumsum(inner) - inner, inner) + 1
    length = ends - starts
    return np.unique(rounding(starts[which] + length[which] * j / pieces[which]))


def _window_keys(lo, hi, count, rounding, worst, spacing, tolerance):
    """The inner keys of each window (lo, hi) of `count` pieces: its even
    split where that meets the tolerance, or, if its worst piece then has a
    smaller bound `worst(starts, ends)`, pieces `spacing` long but one,
    which takes the slack where the even split's bound is least; windows of
    a size go together."""
    out = [np.zeros(0)]
    for n in np.unique(count).astype(np.intp):
        a, b = lo[count == n, None], hi[count == n, None]

        def layout(gaps):       # the keys of each window, (windows, n + 1)
            return np.hstack([a, rounding(a + np.cumsum(gaps, axis=1)[:, :-1]), b])

        def bounds(keys):       # the bound of each piece, (windows, n)
            return worst(keys[:, :-1].ravel(), keys[:, 1:].ravel()).reshape(len(a), n)
        even = layout(np.broadcast_to((b - a) / n, (len(a), n)))
        even_bound = bounds(even)
        gaps = np.full((len(a), n), spacing)
        gaps[np.arange(len(a)), np.argmin(even_bound, axis=1)] += (b - a)[:, 0] - n * spacing
        packed = layout(gaps)
        worst_even = even_bound.max(axis=1)
        better = (worst_even > tolerance) & (bounds(packed).max(axis=1) < worst_even)
        out += [even[~better, 1:-1].ravel(), packed[better, 1:-1].ravel()]
    return np.unique(np.concatenate(out))


def _windows(keys, fixed, starts, ends, spacing):
    """Where failing intervals too short to halve get denser keys: each
    interval's neighbourhood (_REACH spacings either side, within the
    spline's own keys, widened to the keys there), split into as many parts
    as the spacing allows, where that shortens the interval; windows
    that overlap are merged.  Returns their (lo, hi, parts)."""
    left = fixed[np.maximum(np.searchsorted(fixed, starts, side="right") - 1, 0)]
    right = fixed[np.minimum(np.searchsorted(fixed, ends, side="left"), len(fixed) - 1)]
    lo = np.maximum(left, starts - _REACH * spacing)
    hi = np.minimum(right, ends + _REACH * spacing)
    lo = keys[np.maximum(np.searchsorted(keys, lo, side="right") - 1, 0)]
    hi = keys[np.minimum(np.searchsorted(keys, hi, side="left"), len(keys) - 1)]
    with np.errstate(divide="ignore", invalid="ignore"):   # under a spacing: no window
        used = (hi - lo) / np.floor((hi - lo) / spacing) < _PROGRESS * (ends - starts)
    lo, hi = lo[used], hi[used]
    order = np.argsort(lo)
    lo, hi = lo[order], np.maximum.accumulate(hi[order]) if len(hi) else hi
    first = np.ones(len(lo), dtype=bool)
    first[1:] = lo[1:] >= hi[:-1]            # a window apart from the ones before
    lo = lo[first]
    hi = np.maximum.reduceat(hi, np.flatnonzero(first)) if len(hi) else hi
    return lo, hi, np.floor((hi - lo) / spacing)


def _inside(times, lo, hi, closed=False):
    """Whether each time lies inside one of the disjoint sorted windows
    (lo, hi), or [lo, hi) when closed."""
    at = np.searchsorted(lo, times, side="right" if closed else "left") - 1
    ok = at >= 0
    at = np.maximum(at, 0)
    return ok & (times < hi[at]) if len(lo) else np.zeros(len(times), dtype=bool)


# The channel keyer is built on the refinement above (its module imports it).
from .adaptive_channels import _channel_keys, channel_keys, key_times_in  # noqa: E402,F401
