"""What position and rotation splines share: options, key times, per-key
parameters, the segment knots, query handling, properties and pickling."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import _kbspline as _core
from ._checks import (ENDS, EXTRAPOLATIONS, MIN_KEYS, TIMINGS, Queries, _check_broadcast,
                      _check_float_array, _check_option, _per_row, _prepare_out,
                      _reword_build_error)

PARAMS = ("tension", "continuity", "bias", "ease_from", "ease_to")


class KeyedSpline:
    """Base of PositionSpline and RotationSpline (not public)."""

    _end_names: dict[str, str] = {}  # core argument names -> the class's own, where they differ

    _batch_shape: tuple[int, ...]
    _num_keys: int
    _knots: NDArray[np.float64]
    _timing: str
    _ends: str
    _extrapolate: str
    _state: dict[str, Any]

    def _parse_options(self, timing, ends, extrapolate):
        self._timing_code = _check_option("timing", timing, TIMINGS)
        self._ends_code = _check_option("ends", ends, ENDS)
        if extrapolate is None:
            extrapolate = "periodic" if ends == "closed" else "clamp"
        self._extrap_code = _check_option("extrapolate", extrapolate, EXTRAPOLATIONS)
        self._timing, self._ends, self._extrapolate = timing, ends, extrapolate

    def _check_key_count(self, name, n_keys):
        if n_keys < MIN_KEYS[self._ends]:
            raise ValueError(f"{name} has {n_keys} keys; ends={self._ends!r} needs at least "
                             f"{MIN_KEYS[self._ends]}")

    @staticmethod
    def _key_times(times, batch_shape, n_keys):
        """Times as the core takes them: (K,) shared or (B, K) per track."""
        if times is None:
            return np.arange(n_keys, dtype=np.float64)
        times = _check_float_array("times", times)
        if times.ndim == 0 or times.shape[-1] != n_keys:
            raise ValueError(f"times of shape {times.shape} must have K = {n_keys} entries "
                             f"along its last axis, one per key")
        return _per_row("times", times, batch_shape, n_keys)

    @staticmethod
    def _key_params(batch_shape, n_keys, **params):
        return {name: _per_row(name, value, batch_shape, n_keys)
                for name, value in params.items()}

    def _given_tangents(self, tangents, key_shape, flat_shape, tcb):
        """Given tangents (incoming, outgoing) as the core takes them: each
        `flat_shape` (B, K, D), contiguous, or (None, None) for tangents
        from the TCB and ends.  Each side broadcasts to `key_shape`, the
        keys' shape as passed (less a quaternion's fourth component); `tcb`
        are the TCB as passed, which given tangents leave unused, so they
        must be zero."""
        if tangents is None:
            return None, None
        if not (isinstance(tangents, (tuple, list)) or isinstance(tangents, np.ndarray)
                and tangents.ndim > 0) or len(tangents) != 2:
            raise TypeError("tangents must be a pair (incoming, outgoing) of per-key "
                            "tangents per unit time, as the tangents property gives them")
        if any(np.any(np.asarray(p) != 0) for p in tcb):
            raise ValueError("tangents are given: tension, continuity and bias, which shape "
                             "tangents computed from the keys, must be 0")
        if self._timing != "kb" or self._ends != "natural":
            raise ValueError(f"tangents are given, at every key including the ends: timing "
                             f"must be 'kb' and ends 'natural' (their defaults), not "
                             f"timing={self._timing!r}, ends={self._ends!r}")
        given = []
        for name, side in zip(("incoming", "outgoing"), tangents):
            raw = _check_float_array(f"tangents' {name} side", side)
            arr = _check_broadcast(f"tangents' {name} side", raw, key_shape)
            bad = np.argwhere(~np.isfinite(raw))  # named in the shape as given
            if len(bad):
                where = "[" + ", ".join(map(str, bad[0].tolist())) + "]" if raw.ndim else ""
                raise ValueError(f"tangents' {name} side{where} is {raw[tuple(bad[0])]}: "
                                 f"tangents must be finite")
            given.append(np.ascontiguousarray(arr).reshape(flat_shape))
        return tuple(given)

    def _build(self, build, key_times, keys, params, end_tangents, batch_shape, *flags):
        """Calls a core builder, rewording its errors in the user's terms."""
        with_ease = bool(np.any(params["ease_from"]) or np.any(params["ease_to"]))
        try:
            return build(key_times, keys, *(params[p] for p in PARAMS), *end_tangents,
                         self._timing_code, self._ends_code, with_ease, *flags)
        except _core.CoreError as exc:
            per_track = {name: arr.ndim == 2 for name, arr in params.items()}
            per_track["times"] = key_times.ndim == 2
            for name, arr in zip(("start_tangent", "end_tangent"), end_tangents):
                per_track[name] = arr is not None and arr.ndim == 2
            raise _reword_build_error(exc, batch_shape, per_track, self._end_names,
                                      key_times) from None

    def _set_knots(self, key_times, n_seg):
        first = 1 if self._ends == "phantom" else 0
        # a copy: key_times may share memory with the caller's array
        self._knots = np.array(key_times[..., first:first + n_seg + 1], order="C")
        self._knots.flags.writeable = False

    def _evaluate(self, evaluate, t, out, tail, width, *args, name="t", domain=None,
                  writes_float32=True):
        """Runs a core evaluator over queries `t` into `out` (or a new array)
        of shape batch + query + tail; the core sees (B, M, width), or (B, M)
        for width 0.  An evaluator that writes only float64 fills a float32
        `out` through a float64 array."""
        queries = Queries(name, t, self._batch_shape)
        result = _prepare_out(out, queries.lead + tail)
        shape = (math.prod(self._batch_shape), queries.n_eval) + ((width,) if width else ())
        flat = result.reshape(shape)
        target = flat if writes_float32 or flat.dtype == np.float64 else np.empty(shape)
        # the core reads queries while it writes: an `out` over them is
        # written after they are copied
        values = queries.values
        if np.may_share_memory(values, target):
            values = values.copy()
        try:
            evaluate(*args, values, target)
        except _core.CoreError as exc:
            raise queries.reword(exc, domain or self._track_domain) from None
        if target is not flat:  # past float32's range: infinite, as the core stores it
            with np.errstate(over="ignore"):
                flat[...] = target
        if out is None and result.ndim == 0:
            return result[()]
        return result

    # -- integrals of speed (arc length, swept angle), tabulated lazily -----

    def _table(self):
        """(seg_start, panels) of the integral of speed, built on first use."""
        if getattr(self, "_integral", None) is None:
            seg_start, panels = self._table_fn(*self._curve())
            seg_start.flags.writeable = panels.flags.writeable = False
            self._integral = (seg_start, panels)
        return self._integral

    def _totals(self):
        """(B,) integral over each track's whole domain."""
        seg_start, panels = self._table()
        n_seg = self._knots.shape[-1] - 1
        return panels[seg_start[n_seg::n_seg] - 1, 3]

    def _total(self):
        total = self._totals().reshape(self._batch_shape)
        return float(total) if total.ndim == 0 else total.copy()

    def _integral_at(self, t, out):
        return self._evaluate(self._query_fn, t, out, (), 0, *self._curve(), 1, *self._table(),
                              writes_float32=False)

    def _time_at_integral(self, s, out):
        totals = self._totals()
        return self._evaluate(self._query_fn, s, out, (), 0, *self._curve(), 2, *self._table(),
                              name="s", domain=lambda track: (0.0, float(totals[max(track, 0)])),
                              writes_float32=False)

    def _track_domain(self, track):
        row = self._knots[track] if self._knots.ndim == 2 and track >= 0 else self._knots
        if row.ndim == 2:
            row = row[0]
        return float(row[0]), float(row[-1])

    @property
    def domain(self) -> tuple[Any, Any]:
        """(start, end): floats, or arrays of the batch shape for per-track times."""
        if self._knots.ndim == 1:
            return float(self._knots[0]), float(self._knots[-1])
        k = self._knots.reshape(self._batch_shape + self._knots.shape[-1:])
        return k[..., 0].copy(), k[..., -1].copy()

    @property
    def breakpoints(self) -> NDArray[np.float64]:
        """Segment boundaries: (S+1,) or (..., S+1) for per-track times."""
        if self._knots.ndim == 1:
            return self._knots
        return self._knots.reshape(self._batch_shape + self._knots.shape[-1:])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading shape of the tracks."""
        return self._batch_shape

    @property
    def num_keys(self) -> int:
        """K, the number of keys."""
        return self._num_keys

    @property
    def timing(self) -> str:
        """The timing convention."""
        return self._timing

    @property
    def ends(self) -> str:
        """The end condition."""
        return self._ends

    @property
    def extrapolate(self) -> str:
        """Behaviour outside the domain."""
        return self._extrapolate

    def _remember(self, **kwargs):
        """Keeps the constructor's arguments for pickling, arrays copied so
        that later changes to the caller's arrays change nothing."""
        self._state = {k: (np.array(v, dtype=np.float64)
                           if v is not None and not isinstance(v, (str, bool)) else v)
                       for k, v in kwargs.items()}

    def __getstate__(self) -> dict[str, Any]:
        return self._state  # tables are rebuilt on demand

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]  # each subclass takes its own state
