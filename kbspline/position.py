"""PositionSpline: Kochanek-Bartels splines for batches of vector tracks."""
from __future__ import annotations

import math
import operator
from typing import Any, Optional

import numpy as np

from . import _kbspline as _core
from ._checks import out_keyword, _check_float_array, _check_scalar, _index_text, _per_row, _prepare_out
from ._keyed import KeyedSpline
from ._threads import get_num_threads
from ._typing import ArrayLike, FloatArray, OutArray


def _alpha_times(keys, alpha, batch_shape):
    """Key times (B, K) from key-to-key distances raised to `alpha` (0.5
    centripetal, 1 chordal), starting at 0, one row per track."""
    K, D = keys.shape[-2:]
    flat = np.ascontiguousarray(np.reshape(keys, (-1, K, D)))
    try:
        return _core.alpha_times(flat, alpha)
    except _core.CoreError as exc:
        reason, _, track, index, _ = exc.args
        where = _index_text(batch_shape, track, index, True)
        if reason == "must be strictly increasing":
            reason = (f"repeats the key before it, so alpha={alpha} gives two keys the "
                      f"same time; pass times= instead")
        elif reason == "out of range":
            with np.errstate(over="ignore", invalid="ignore"):
                far = not np.max(np.abs(flat[track, index] - flat[track, index - 1])) < 1.0
            reason = ("is too far from the key before it: their distance or its time "
                      "overflows" if far else
                      f"is too near the key before it: with alpha={alpha} their times would "
                      f"be less than the smallest normal double apart") + "; pass times= instead"
        raise ValueError(f"values{where} {reason}") from None


class PositionSpline(KeyedSpline):
    """Kochanek-Bartels (tension / continuity / bias) spline through keys.

    Evaluates a batch of tracks at once: ``values`` holds K keys of
    dimension D for every track of any leading batch shape.  Each segment is
    a cubic Hermite curve whose end tangents follow Kochanek & Bartels
    (1984) under the chosen timing convention and end condition.

    Parameters
    ----------
    times : array_like (K,) or (..., K), or None
        Strictly increasing key times, shared by all tracks or one row per
        track.  None means 0, 1, ..., K-1, or with ``alpha`` the cumulative
        key-to-key distances raised to ``alpha``.
    values : array_like (..., K, D) or (K,)
        The keys.  A 1-D array is one scalar track, and results drop the
        trailing D axis.
    tension, continuity, bias : float or array_like broadcastable to (..., K)
        The TCB parameters of each key, usually in [-1, 1].
    timing : {'kb', 'parabolic', '3ds', 'average'}
        How tangents account for uneven key spacing: the documentation's
        "Timing conventions" page (docs/guide/timing.md in the repository).
    ends : {'natural', 'phantom', 'reflect', 'clamped', 'closed'}
        End condition: the documentation's "End conditions and
        extrapolation" page (docs/guide/ends.md in the repository).
    start_velocity, end_velocity : array_like (D,) or (..., D), optional
        End tangents per unit time for ``ends='clamped'`` (zero if omitted).
    ease_from, ease_to : float or array_like broadcastable to (..., K)
        3D Studio ease in [0, 1]: segment n is evaluated at
        Ease(u, ease_from[n], ease_to[n+1]).
    extrapolate : {'clamp', 'linear', 'periodic', 'error'}, optional
        Outside the domain.  Default 'periodic' for closed splines, else
        'clamp' (every quantity is the one at the nearest end, as in the
        seed code).
    alpha : float, optional
        With ``times=None``: 0.5 centripetal, 1 chordal parameterisation.
    tangents : pair of array_like, optional
        (incoming, outgoing), each broadcastable to the shape of
        ``values``: every key's tangents per unit time, as the `tangents`
        property gives them, instead of tangents from the TCB (which must
        then be 0) and ends (which must be 'natural'): cubic Hermite keys,
        as glTF's CUBICSPLINE and fitted reductions have them.  Ease
        applies after them: an eased side of a key is at rest.

    Notes
    -----
    Derivatives are with respect to t, per unit of t.  Segment n covers
    ``[t(n), t(n+1))``; the last segment is closed.  Queries may be sorted
    or not.

    References
    ----------
    D. Kochanek, R. Bartels, "Interpolating splines with local tension,
    continuity, and bias control", SIGGRAPH 1984.
    D. Eberly, "Key Frame Interpolation via Splines and Quaternions".

    Examples
    --------
    >>> import numpy as np
    >>> from kbspline import PositionSpline
    >>> keys = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 1.0], [4.0, 3.0]])
    >>> spline = PositionSpline([0.0, 1.0, 2.0, 3.0], keys, tension=0.5)
    >>> spline(1.0)
    array([1., 2.])
    >>> spline([0.5, 2.5]).shape
    (2, 2)
    """

    _end_names = {"start_tangent": "start_velocity", "end_tangent": "end_velocity"}

    def __init__(self, times: Optional[ArrayLike], values: ArrayLike,
                 tension: ArrayLike = 0.0, continuity: ArrayLike = 0.0, bias: ArrayLike = 0.0,
                 *, timing: str = "kb", ends: str = "natural",
                 start_velocity: Optional[ArrayLike] = None,
                 end_velocity: Optional[ArrayLike] = None, ease_from: ArrayLike = 0.0,
                 ease_to: ArrayLike = 0.0, extrapolate: Optional[str] = None,
                 alpha: Optional[float] = None,
                 tangents: Optional[tuple[ArrayLike, ArrayLike]] = None) -> None:
        self._parse_options(timing, ends, extrapolate)
        values = _check_float_array("values", values)
        if values.ndim == 0:
            raise ValueError("values must have shape (K,) or (..., K, D), not ()")
        self._scalar = values.ndim == 1
        keys = values[:, None] if self._scalar else values
        batch_shape, (K, D) = keys.shape[:-2], keys.shape[-2:]
        if D < 1:
            raise ValueError(f"values of shape {values.shape} has no dimensions (D = 0)")
        n_times = _length_of_flat(times)
        if n_times not in (None, K) and values.ndim == 2 and D == n_times:
            raise ValueError(f"values of shape {values.shape} holds {K} keys of dimension {D}, "
                             f"but times has {n_times}: values is (K, D), one row per key "
                             f"(transposed? pass values.T)")
        self._check_key_count("values", K)

        if times is None and alpha is not None:
            alpha = _check_scalar("alpha", alpha, low=0.0)
            key_times = _alpha_times(keys, alpha, batch_shape)
            if not batch_shape:
                key_times = key_times[0]
        elif alpha is not None:
            raise TypeError("pass times or alpha, not both")
        else:
            key_times = self._key_times(times, batch_shape, K)

        if ends != "clamped" and (start_velocity is not None or end_velocity is not None):
            raise ValueError(f"start_velocity and end_velocity need ends='clamped', "
                             f"not ends={ends!r}")
        end_tangents = [None if v is None else _per_row(name, v, batch_shape, D)
                        for name, v in (("start_velocity", start_velocity),
                                        ("end_velocity", end_velocity))]
        params = self._key_params(batch_shape, K, tension=tension, continuity=continuity,
                                  bias=bias, ease_from=ease_from, ease_to=ease_to)
        flat = np.ascontiguousarray(np.reshape(keys, (math.prod(batch_shape), K, D)))
        given = self._given_tangents(tangents, values.shape, flat.shape,
                                     (tension, continuity, bias))
        tan_in, tan_out, coef, ease = self._build(_core.tcb_build, key_times, flat, params,
                                                  end_tangents, batch_shape,
                                                  self._keep_tangents, get_num_threads(),
                                                  *given)
        self._set_knots(key_times, coef.shape[1])
        self._coef, self._ease = coef, ease
        self._tan_in, self._tan_out = tan_in, tan_out
        for arr in (coef, ease, tan_in, tan_out):
            if arr is not None:
                arr.flags.writeable = False
        self._batch_shape, self._dim, self._num_keys = tuple(batch_shape), D, K
        self._remember(times=times, values=values, tension=tension, continuity=continuity,
                       bias=bias, timing=timing, ends=ends, start_velocity=start_velocity,
                       end_velocity=end_velocity, ease_from=ease_from, ease_to=ease_to,
                       extrapolate=extrapolate, alpha=alpha,
                       tangents=None if given[0] is None else np.stack(given).reshape(
                           (2,) + values.shape))

    def _eval(self, t, nu, out):
        tail = () if self._scalar else (self._dim,)
        return self._evaluate(_core.curve_eval, t, out, tail, self._dim, self._knots,
                              self._coef, self._ease, self._extrap_code, nu,
                              get_num_threads())

    @out_keyword
    def position(self, t: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """Position at times `t`.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times: one time, the same M times for every track, or one
            row of times per track (leading shape broadcasting to the batch).
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray (..., D), (..., M, D) or without D for a scalar track.

        Examples
        --------
        >>> s = PositionSpline([0.0, 1.0, 3.0], [[0.0, 0.0], [1.0, 1.0], [3.0, 0.0]])
        >>> s.position([0.0, 1.0]).tolist()
        [[0.0, 0.0], [1.0, 1.0]]
        """
        return self._eval(t, 0, out)

    __call__ = position

    @out_keyword
    def velocity(self, t: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """First derivative with respect to t, per unit time.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times, as for `position`.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            (..., D), (..., M, D), or without D for a scalar track.

        Examples
        --------
        >>> float(PositionSpline([0.0, 2.0], [0.0, 4.0]).velocity(1.0))
        2.0
        """
        return self._eval(t, 1, out)

    @out_keyword
    def acceleration(self, t: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """Second derivative with respect to t.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times, as for `position`.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            (..., D), (..., M, D), or without D for a scalar track.

        Notes
        -----
        Ease makes the acceleration jump where the ease curve changes piece.

        Examples
        --------
        >>> PositionSpline([0.0, 1.0, 2.0], [0.0, 1.0, 0.0]).acceleration([0.0, 2.0])
        array([0., 0.])
        """
        return self._eval(t, 2, out)

    # -- properties ---------------------------------------------------------

    # -- arc length ---------------------------------------------------------

    _table_fn = staticmethod(_core.length_table)
    _query_fn = staticmethod(_core.length_query)

    def _curve(self):
        return (self._knots, self._coef, self._ease, self._extrap_code)

    @property
    def total_length(self) -> Any:  # float, or (...,) for a batch: the shape decides
        """Arc length over the domain: float, or (...,) for a batch."""
        return self._total()

    @out_keyword
    def length(self, t: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """Arc length from the domain start to `t`.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times, as for `position`.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray or float
            Shapes as for `position` without the D axis.  Outside the domain the
            length follows ``extrapolate``.

        Notes
        -----
        Per-track tables of 10-point Gauss-Legendre panels, built on first use,
        hold every length to about 1e-13 of its segment's (tests check 1e-10 of
        the total against SciPy's quad).

        Examples
        --------
        >>> s = PositionSpline([0.0, 1.0], [[0.0, 0.0], [3.0, 4.0]])
        >>> round(float(s.length(0.5)), 12), round(s.total_length, 12)
        (2.5, 5.0)
        """
        return self._integral_at(t, out)

    @out_keyword
    def time_at_length(self, s: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """The time at which `length` reaches `s`.

        Parameters
        ----------
        s : float or array_like (M,) or (..., M)
            Arc lengths, in the shapes `position` takes for times; a shared `s`
            gives each track its own times.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray or float
            Times, (..., M) for shared lengths.  The domain's ends at s = 0 and
            `total_length`; where the curve rests, the earliest time; `s` outside
            [0, total_length] follows ``extrapolate``.

        Notes
        -----
        Bracketed Newton inside one panel, falling back to bisection: it never
        diverges, including where the speed is zero (tension 1, repeated keys).

        Examples
        --------
        >>> s = PositionSpline([0.0, 2.0], [[0.0, 0.0], [3.0, 4.0]])
        >>> round(float(s.time_at_length(2.5)), 12)
        1.0
        """
        return self._time_at_integral(s, out)

    @out_keyword
    def position_at_length(self, s: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """Position at arc length `s`: ``position(time_at_length(s))``.

        Parameters
        ----------
        s : float or array_like (M,) or (..., M)
            Arc lengths, as for `time_at_length`.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            (..., D) or (..., M, D), without D for a scalar track.

        Examples
        --------
        >>> s = PositionSpline([0.0, 2.0], [[0.0, 0.0], [3.0, 4.0]])
        >>> np.round(s.position_at_length(2.5), 12)
        array([1.5, 2. ])
        """
        x, scalar = self._at_length(s, 0)
        return self._finish(x, scalar, out)

    def _at_length(self, s, *nus):
        """The time derivatives `nus` of position at arc lengths `s`, each
        (..., M, D) with M = 1 for a scalar `s`, and whether `s` was scalar.
        A scalar's times come one per track, (...), which evaluation would
        take for M times shared by every track: they go in as rows (..., 1)."""
        s = _check_float_array("s", s)
        t = self.time_at_length(s.reshape(1) if s.ndim == 0 else s)
        results = [self._eval(t, nu, None) for nu in nus]
        return [r[..., None] if self._scalar else r for r in results] + [s.ndim == 0]

    @out_keyword
    def velocity_at_length(self, s: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """dX/ds at arc length `s`: the unit tangent.

        Parameters
        ----------
        s : float or array_like (M,) or (..., M)
            Arc lengths, as for `time_at_length`.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            Unit vectors, shaped as `position_at_length`.  Where the curve stops
            (zero speed) it is the direction it leaves in, that of the
            acceleration; zero if that vanishes too.

        Examples
        --------
        >>> s = PositionSpline([0.0, 2.0], [[0.0, 0.0], [3.0, 4.0]])
        >>> np.round(s.velocity_at_length(1.0), 12)
        array([0.6, 0.8])
        """
        v, a, scalar = self._at_length(s, 1, 2)
        speed = np.linalg.norm(v, axis=-1, keepdims=True)
        direction = np.where(speed > 0, v, a)
        norm = np.linalg.norm(direction, axis=-1, keepdims=True)
        unit = np.divide(direction, norm, out=np.zeros_like(direction), where=norm > 0)
        return self._finish(unit, scalar, out)

    @out_keyword
    def acceleration_at_length(self, s: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """d2X/ds2 at arc length `s`: the curvature vector.

        Parameters
        ----------
        s : float or array_like (M,) or (..., M)
            Arc lengths, as for `time_at_length`.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            Shaped as `position_at_length`: perpendicular to `velocity_at_length`,
            of length 1 / radius.  NaN where the speed is exactly zero (the
            curvature of a stop is not defined by V and A).

        Examples
        --------
        >>> s = PositionSpline([0.0, 2.0], [[0.0, 0.0], [3.0, 4.0]])
        >>> np.round(s.acceleration_at_length(1.0), 12) + 0.0
        array([0., 0.])
        """
        v, a, scalar = self._at_length(s, 1, 2)
        speed2 = np.sum(v * v, axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            normal = (a - v * np.sum(a * v, axis=-1, keepdims=True) / speed2) / speed2
        return self._finish(normal, scalar, out)

    def _finish(self, values, scalar, out):
        """Values (..., M, D) of `_at_length` in the user's shape, in `out`."""
        values = values[..., 0, :] if scalar else values
        values = values[..., 0] if self._scalar else values
        if out is None:
            return values[()] if values.ndim == 0 else values
        result = _prepare_out(out, values.shape)
        result[...] = values
        return result

    def equal_length_times(self, n: int) -> FloatArray:
        """Times of n samples at equal steps of arc length.

        ``spline(spline.equal_length_times(n))`` moves at constant speed, the most
        common step of a camera-path pipeline.

        Parameters
        ----------
        n : int
            Number of samples, at least 2, from the start to the end of each track.

        Returns
        -------
        ndarray
            (..., n) times.  A track that does not move (length 0) gets equal
            steps of time instead.

        Raises
        ------
        ValueError
            If `n` is less than 2.

        Examples
        --------
        >>> s = PositionSpline([0.0, 1.0, 3.0], [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
        >>> np.round(s(s.equal_length_times(3))[:, 0], 9)
        array([0., 1., 2.])
        """
        n = operator.index(n)
        if n < 2:
            raise ValueError(f"n must be at least 2, not {n}")
        steps = np.linspace(0.0, 1.0, n)
        total = np.asarray(self.total_length)
        times = self.time_at_length(np.multiply.outer(total, steps) if total.ndim else
                                    steps * float(total))
        start, end = (np.asarray(v) for v in self.domain)
        still = np.multiply.outer(start, 1 - steps) + np.multiply.outer(end, steps)
        return np.where((total == 0)[..., None], still, times)

    # -- interop --------------------------------------------------------------

    def to_ppoly(self) -> Any:
        """The same curve as a `scipy.interpolate.PPoly` over t.

        Coefficients are moved to SciPy's layout, (4, S, ..., D) in powers of
        (t - t_n) from the cubic down; the PPoly extrapolates its end cubics
        rather than following ``extrapolate``.  Ease cannot be written as a
        cubic in t, and per-track times have no single breakpoint list, so
        both raise ValueError.  Needs SciPy.

        >>> s = PositionSpline([0.0, 1.0, 3.0], [[0.0, 0.0], [1.0, 1.0], [3.0, 0.0]])
        >>> bool(np.allclose(s.to_ppoly()([0.5, 2.0]), s([0.5, 2.0])))
        True
        """
        from scipy.interpolate import PPoly
        if self._ease is not None:
            raise ValueError("a spline with ease is not a piecewise cubic in t: to_ppoly "
                             "needs ease_from = ease_to = 0")
        if self._knots.ndim != 1:
            raise ValueError("to_ppoly needs times shared by every track")
        dt = np.diff(self._knots)
        # c_k u^k with u = (t - t_n) / dt  ->  (c_k / dt^k) (t - t_n)^k, cubic first
        scale = dt[None, :] ** -np.arange(4)[:, None]                  # (4, S)
        coef = np.moveaxis(self._coef, 2, 0)                            # (4, B, S, D)
        coef = np.moveaxis(coef, 2, 1)                                  # (4, S, B, D)
        coef = coef * scale[:, :, None, None]
        coef = coef[::-1].reshape((4, len(dt)) + self._batch_shape + (self._dim,))
        if self._scalar:
            coef = coef[..., 0]
        return PPoly(coef, self._knots, extrapolate=True)

    def _batched(self, arr, inner):
        """A (B, ...) core array in the user's shape (without D for scalars)."""
        shaped = arr.reshape(self._batch_shape + inner)
        return shaped[..., 0] if self._scalar else shaped

    @property
    def coefficients(self) -> FloatArray:
        """(..., S, 4, D): segment n is c0 + c1 u + c2 u^2 + c3 u^3 for
        u = (t - t_n) / (t_(n+1) - t_n) in [0, 1], before ease."""
        return self._batched(self._coef, self._coef.shape[1:])

    # Construction skips the tangents (a third of what it writes); the
    # first use of `tangents` builds them from the remembered keys.
    _keep_tangents = False

    @property
    def tangents(self) -> tuple[FloatArray, FloatArray]:
        """(incoming, outgoing), each (..., K, D), per unit time.  An end key's
        unused side repeats its used one (given tangents come back as
        given); the two phantom keys have NaN."""
        if self._tan_in is None:
            twin = object.__new__(type(self))
            twin._keep_tangents = True
            PositionSpline.__init__(twin, **self._state)
            self._tan_in, self._tan_out = twin._tan_in, twin._tan_out
        inner = (self._num_keys, self._dim)
        return self._batched(self._tan_in, inner), self._batched(self._tan_out, inner)

    @property
    def dim(self) -> int:
        """D, the dimension of each key."""
        return self._dim

    # -- protocol -----------------------------------------------------------

    def __repr__(self) -> str:
        return (f"PositionSpline(batch_shape={self._batch_shape}, dim={self._dim}, "
                f"num_keys={self._num_keys}, timing={self._timing!r}, ends={self._ends!r})")


def _length_of_flat(times):
    """len(times) for a flat sequence of times, else None (the checks that
    follow word the errors of anything else)."""
    try:
        given = np.asarray(times, dtype=float)
    except (TypeError, ValueError):
        return None
    return len(given) if given.ndim == 1 else None
