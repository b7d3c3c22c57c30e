"""PositionSpline: Kochanek-Bartels splines for batches of vector tracks."""
import math

import numpy as np

from . import _kbspline as _core
from ._checks import (ENDS, EXTRAPOLATIONS, MIN_KEYS, TIMINGS, Queries, _check_float_array,
                      _check_option, _check_scalar, _index_text, _per_row, _prepare_out,
                      _reword_build_error)

_BUILD_NAMES = {"start_tangent": "start_velocity", "end_tangent": "end_velocity"}


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
        raise ValueError(f"values{where} {reason}") from None


class PositionSpline:
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
        How tangents account for uneven key spacing (see the README).
    ends : {'natural', 'phantom', 'reflect', 'clamped', 'closed'}
        End condition (see the README).
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

    def __init__(self, times, values, tension=0.0, continuity=0.0, bias=0.0, *,
                 timing="kb", ends="natural", start_velocity=None, end_velocity=None,
                 ease_from=0.0, ease_to=0.0, extrapolate=None, alpha=None):
        timing_code = _check_option("timing", timing, TIMINGS)
        ends_code = _check_option("ends", ends, ENDS)
        if extrapolate is None:
            extrapolate = "periodic" if ends == "closed" else "clamp"
        extrap_code = _check_option("extrapolate", extrapolate, EXTRAPOLATIONS)

        values = _check_float_array("values", values)
        if values.ndim == 0:
            raise ValueError("values must have shape (K,) or (..., K, D), not ()")
        scalar = values.ndim == 1
        keys = values[:, None] if scalar else values
        batch_shape, (K, D) = keys.shape[:-2], keys.shape[-2:]
        if D < 1:
            raise ValueError(f"values of shape {values.shape} has no dimensions (D = 0)")
        if K < MIN_KEYS[ends]:
            raise ValueError(f"values has {K} keys; ends={ends!r} needs at least "
                             f"{MIN_KEYS[ends]}")
        n_tracks = math.prod(batch_shape)

        if times is None:
            if alpha is None:
                key_times = np.arange(K, dtype=np.float64)
            else:
                alpha = _check_scalar("alpha", alpha, low=0.0)
                key_times = _alpha_times(keys, alpha, batch_shape)
                if not batch_shape:
                    key_times = key_times[0]
        else:
            if alpha is not None:
                raise TypeError("pass times or alpha, not both")
            times = _check_float_array("times", times)
            if times.ndim == 0 or times.shape[-1] != K:
                raise ValueError(f"times of shape {times.shape} must have K = {K} "
                                 f"entries along its last axis, as values has keys")
            key_times = _per_row("times", times, batch_shape, K)

        if ends != "clamped" and (start_velocity is not None or end_velocity is not None):
            raise ValueError(f"start_velocity and end_velocity need ends='clamped', "
                             f"not ends={ends!r}")
        end_tangents = [None if v is None else _per_row(name, v, batch_shape, D)
                        for name, v in (("start_velocity", start_velocity),
                                        ("end_velocity", end_velocity))]
        params = {name: _per_row(name, value, batch_shape, K)
                  for name, value in (("tension", tension), ("continuity", continuity),
                                      ("bias", bias), ("ease_from", ease_from),
                                      ("ease_to", ease_to))}
        with_ease = bool(np.any(params["ease_from"]) or np.any(params["ease_to"]))
        flat = np.ascontiguousarray(np.reshape(keys, (n_tracks, K, D)))

        try:
            tan_in, tan_out, coef, ease = _core.tcb_build(
                key_times, flat, params["tension"], params["continuity"], params["bias"],
                params["ease_from"], params["ease_to"], *end_tangents, timing_code,
                ends_code, with_ease)
        except _core.CoreError as exc:
            per_track = {name: arr.ndim == 2 for name, arr in params.items()}
            per_track["times"] = key_times.ndim == 2
            per_track["start_tangent"] = end_tangents[0] is not None and end_tangents[0].ndim == 2
            per_track["end_tangent"] = end_tangents[1] is not None and end_tangents[1].ndim == 2
            raise _reword_build_error(exc, batch_shape, per_track, _BUILD_NAMES) from None

        first = 1 if ends == "phantom" else 0
        n_seg = coef.shape[1]
        # a copy: key_times may share memory with the caller's array
        self._knots = np.array(key_times[..., first:first + n_seg + 1], order="C")
        self._coef, self._ease = coef, ease
        self._tan_in, self._tan_out = tan_in, tan_out
        for arr in (self._knots, coef, ease, tan_in, tan_out):
            if arr is not None:
                arr.flags.writeable = False
        self._scalar = scalar
        self._batch_shape, self._dim, self._num_keys = tuple(batch_shape), D, K
        self._timing, self._ends, self._extrapolate = timing, ends, extrapolate
        self._extrap_code = extrap_code
        # Constructor arguments for pickling, copied so that later changes to
        # the caller's arrays cannot change what a pickle rebuilds.
        copy = lambda a: None if a is None else np.array(a, dtype=np.float64)
        self._state = dict(times=copy(times), values=values.copy(), tension=copy(tension),
                           continuity=copy(continuity), bias=copy(bias), timing=timing,
                           ends=ends, start_velocity=copy(start_velocity),
                           end_velocity=copy(end_velocity), ease_from=copy(ease_from),
                           ease_to=copy(ease_to), extrapolate=extrapolate, alpha=alpha)

    # -- evaluation ---------------------------------------------------------

    def _evaluate(self, t, nu, out):
        queries = Queries("t", t, self._batch_shape)
        tail = () if self._scalar else (self._dim,)
        result = _prepare_out(out, queries.lead + tail)
        flat = result.reshape(math.prod(self._batch_shape), queries.n_eval, self._dim)
        try:
            _core.curve_eval(self._knots, self._coef, self._ease, self._extrap_code, nu,
                             queries.values, flat)
        except _core.CoreError as exc:
            raise queries.reword(exc, self._track_domain) from None
        if out is None and result.ndim == 0:
            return result[()]
        return result

    def position(self, t, out=None):
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
        """
        return self._evaluate(t, 0, out)

    __call__ = position

    def velocity(self, t, out=None):
        """First derivative with respect to t (per unit time); see `position`."""
        return self._evaluate(t, 1, out)

    def acceleration(self, t, out=None):
        """Second derivative with respect to t; see `position`.

        Ease makes the acceleration jump where the ease curve changes piece."""
        return self._evaluate(t, 2, out)

    # -- properties ---------------------------------------------------------

    def _track_domain(self, track):
        row = self._knots[track] if self._knots.ndim == 2 and track >= 0 else self._knots
        if row.ndim == 2:
            row = row[0]
        return float(row[0]), float(row[-1])

    def _batched(self, arr, inner):
        """A (B, ...) core array in the user's shape (without D for scalars)."""
        shaped = arr.reshape(self._batch_shape + inner)
        return shaped[..., 0] if self._scalar else shaped

    @property
    def domain(self):
        """(start, end): floats, or arrays of the batch shape for per-track times."""
        if self._knots.ndim == 1:
            return float(self._knots[0]), float(self._knots[-1])
        k = self._knots.reshape(self._batch_shape + self._knots.shape[-1:])
        return k[..., 0].copy(), k[..., -1].copy()

    @property
    def breakpoints(self):
        """Segment boundaries: (S+1,) or (..., S+1) for per-track times."""
        if self._knots.ndim == 1:
            return self._knots
        return self._knots.reshape(self._batch_shape + self._knots.shape[-1:])

    @property
    def coefficients(self):
        """(..., S, 4, D): segment n is c0 + c1 u + c2 u^2 + c3 u^3 for
        u = (t - t_n) / (t_(n+1) - t_n) in [0, 1], before ease."""
        return self._batched(self._coef, self._coef.shape[1:])

    @property
    def tangents(self):
        """(incoming, outgoing), each (..., K, D), per unit time.  An end key's
        unused side repeats its used one; the two phantom keys have NaN."""
        inner = (self._num_keys, self._dim)
        return self._batched(self._tan_in, inner), self._batched(self._tan_out, inner)

    batch_shape = property(lambda self: self._batch_shape, doc="Leading shape of the tracks.")
    dim = property(lambda self: self._dim, doc="D, the dimension of each key.")
    num_keys = property(lambda self: self._num_keys, doc="K, the number of keys.")
    timing = property(lambda self: self._timing, doc="The timing convention.")
    ends = property(lambda self: self._ends, doc="The end condition.")
    extrapolate = property(lambda self: self._extrapolate, doc="Behaviour outside the domain.")

    # -- protocol -----------------------------------------------------------

    def __getstate__(self):
        return self._state

    def __setstate__(self, state):
        self.__init__(**state)

    def __repr__(self):
        return (f"PositionSpline(batch_shape={self._batch_shape}, dim={self._dim}, "
                f"num_keys={self._num_keys}, timing={self._timing!r}, ends={self._ends!r})")
