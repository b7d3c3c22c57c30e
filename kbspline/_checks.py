"""Argument checks shared by the spline classes: options, arrays, shapes,
query times, ``out=`` arrays, and rewording core errors in the user's terms."""
from __future__ import annotations

import argparse
import functools
import inspect
import math
import warnings
from typing import Any, Callable, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _kbspline as _core

_Method = TypeVar("_Method", bound=Callable[..., Any])

TIMINGS = {
    "kb": _core.TIMING_KB,
    "3ds": _core.TIMING_3DS,
    "parabolic": _core.TIMING_PARABOLIC,
    "average": _core.TIMING_AVERAGE,
}
ENDS = {
    "natural": _core.ENDS_NATURAL,
    "phantom": _core.ENDS_PHANTOM,
    "reflect": _core.ENDS_REFLECT,
    "clamped": _core.ENDS_CLAMPED,
    "closed": _core.ENDS_CLOSED,
}
MIN_KEYS = {"natural": 2, "phantom": 4, "reflect": 2, "clamped": 2, "closed": 3}
EXTRAPOLATIONS = {
    "clamp": _core.EXTRAP_CLAMP,
    "linear": _core.EXTRAP_LINEAR,
    "periodic": _core.EXTRAP_PERIODIC,
    "error": _core.EXTRAP_ERROR,
}

_NUMERIC_KINDS = "biuf"


def _check_option(name, value, choices):
    """The core code of option string `value`, or a clear error."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {sorted(choices)}, "
                        f"not {type(value).__name__}")
    try:
        return choices[value]
    except KeyError:
        raise ValueError(f"{name} must be one of {sorted(choices)}, not {value!r}") from None


def _check_float_array(name: str, obj: ArrayLike) -> NDArray[np.float64]:
    """`obj` as an aligned, native float64 array; complex, object, string and
    other non-numeric input is a TypeError naming the argument."""
    try:
        arr = np.asarray(obj)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"{name} must be a numeric array: {exc}") from None
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"{name} must be real numbers, not an array of dtype {arr.dtype}")
    # copied only if needed: buffers read from files or sockets may be
    # unaligned (the core reads doubles in place)
    return np.require(arr, np.float64, "A")


def _check_broadcast(name: str, arr: NDArray[np.float64],
                     shape: tuple[int, ...]) -> NDArray[np.float64]:
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(f"{name} of shape {arr.shape} does not broadcast to "
                         f"{tuple(shape)}") from None


def _per_row(name: str, obj: ArrayLike, batch_shape: tuple[int, ...],
             n: int) -> NDArray[np.float64]:
    """A per-key (or per-dimension) parameter as the core takes it: a
    contiguous (n,) row shared by every track, or (B, n) one per track."""
    arr = _check_float_array(name, obj)
    if arr.ndim <= 1:
        return np.ascontiguousarray(_check_broadcast(name, arr, (n,)))
    full = _check_broadcast(name, arr, tuple(batch_shape) + (n,))
    return np.ascontiguousarray(full).reshape(math.prod(batch_shape), n)


def _check_scalar(name, value, low=-math.inf):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}") from None
    if not math.isfinite(value) or value < low:
        raise ValueError(f"{name} must be a finite number >= {low}, not {value}")
    return value


def _check_count(name, value, minimum):
    """A whole number >= `minimum` from an int or an integral float; bools,
    fractions, NaN and text are refused by name."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                       np.floating)):
        raise TypeError(f"{name} must be a whole number, not {type(value).__name__}")
    if not (math.isfinite(value) and float(value).is_integer()) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, not {value!r}")
    return int(value)


def _check_positive(name, value, default=None):
    """A positive finite float from `value`, or `default` for None."""
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, not {value!r}") from None
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive number, not {value!r}")
    return number


def _index_text(batch_shape, track, index, per_track):
    """'[i, j, k]' for entry `index` of flat `track` of a batch."""
    parts = []
    if per_track and track >= 0 and batch_shape:
        parts += [int(i) for i in np.unravel_index(track, batch_shape)]
    if index >= 0:
        parts.append(int(index))
    return "[" + ", ".join(map(str, parts)) + "]" if parts else ""


def _out_of_range_times(key_times, track, index):
    """Why times[index] of `track` (flat) is out of range: too close to the
    key before it (a subnormal spacing), or too far from the first."""
    row = key_times[track] if key_times.ndim == 2 else key_times
    spacing, tiny = float(row[index] - row[index - 1]), float(np.finfo(np.float64).tiny)
    if spacing < tiny:
        return (f"is {spacing!r} after the key before it: key times must be spaced at "
                f"least {tiny!r} (the smallest normal double) apart, or rates per unit "
                f"time overflow")
    return "is too far from the first time: differences of times overflow"


def _reword_build_error(exc, batch_shape, per_track, names, key_times):
    """A core build error as a ValueError naming the user's argument and index.

    `per_track[arg]` says whether that argument had one row per track;
    `names` maps core argument names to the class's own; `key_times` are
    the times as the core had them."""
    reason, arg, track, index, _ = exc.args
    if reason == "out of range":
        reason = (_out_of_range_times(key_times, track, index) if arg == "times" else
                  "is too large, or its tangents or TCB are: the spline's coefficients "
                  "overflow" if arg == "values" else
                  "or the next key's are too large: the spline's coefficients overflow"
                  if arg == "tangents" else
                  "must be in [0, 1]")
    elif reason == "size out of range":
        reason = "has too many keys times dimensions: the sizes of its arrays overflow"
    name = names.get(arg, arg)
    where = _index_text(batch_shape, track, index, per_track.get(arg, True))
    return ValueError(f"{name}{where} {reason}")


class Queries:
    """Query times shaped for the core, and the shape of the result.

    ``t`` scalar gives ``batch + tail``; ``(M,)`` the same times for every
    track, ``batch + (M,) + tail``; ``(..., M)`` whose leading shape
    broadcasts to the batch shape, each track its own times."""

    def __init__(self, name, t, batch_shape):
        arr = _check_float_array(name, t)
        self.name = name
        self.scalar = arr.ndim == 0
        batch_shape = tuple(batch_shape)
        n_tracks = math.prod(batch_shape)
        if arr.ndim <= 1:
            self.values = np.ascontiguousarray(arr.reshape(-1))
            self.per_track = False
            self.lead = batch_shape if self.scalar else batch_shape + (arr.shape[0],)
        else:
            lead = arr.shape[:-1]
            try:
                ok = np.broadcast_shapes(lead, batch_shape) == batch_shape
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"{name} of shape {arr.shape}: its leading shape {lead} "
                                 f"must broadcast to the batch shape {batch_shape}")
            full = np.broadcast_to(arr, batch_shape + arr.shape[-1:])
            self.values = np.ascontiguousarray(full).reshape(n_tracks, arr.shape[-1])
            self.per_track = True
            self.lead = batch_shape + arr.shape[-1:]
        self.n_eval = self.values.shape[-1]
        self.batch_shape = batch_shape

    def reword(self, exc, domain):
        """A core error about these queries as a ValueError with the value."""
        reason, _, track, index, _ = exc.args
        row = self.values[track] if self.per_track and track >= 0 else self.values
        where = _index_text(self.batch_shape, track, index, self.per_track)
        if self.scalar:
            where = ""
        value = float(row[index])
        if reason == "outside the domain":
            lo, hi = domain(track)
            return ValueError(f"{self.name}{where} = {value!r} is outside the domain "
                              f"[{lo!r}, {hi!r}] (extrapolate='error')")
        return ValueError(f"{self.name}{where} {reason}, not {value!r}")


def out_keyword(method: _Method) -> _Method:
    """Makes `out` keyword-only: an array one place after the method's other
    arguments still works, with a DeprecationWarning; anything else there is
    a TypeError saying so (``path.length(0, 3)`` read 3 as `out`)."""
    names = [p.name for p in inspect.signature(method).parameters.values()
             if p.kind is p.POSITIONAL_OR_KEYWORD][1:]

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if len(args) > len(names):
            extra = args[len(names):]
            if len(extra) > 1 or "out" in kwargs or not isinstance(extra[0], np.ndarray):
                given = ", ".join(map(repr, extra))
                raise TypeError(f"{method.__name__}() takes {', '.join(names)} by position and "
                                f"out only by keyword (out=...), not {given}")
            warnings.warn(f"{method.__name__}(): pass out by keyword (out=...); by position "
                          f"it is deprecated", DeprecationWarning, stacklevel=2)
            args, kwargs = args[:len(names)], dict(kwargs, out=extra[0])
        return method(self, *args, **kwargs)
    return cast(_Method, wrapper)


def _prepare_out(out, shape):
    """A new float64 array of `shape`, or the user's `out` after checking
    that the core can write into it."""
    if out is None:
        return np.empty(shape)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array, not {type(out).__name__}")
    if out.dtype not in (np.float64, np.float32):
        raise TypeError(f"out must have dtype float64 or float32, not {out.dtype}")
    if out.shape != tuple(shape):
        raise ValueError(f"out has shape {out.shape}, expected {tuple(shape)}")
    if not (out.flags.c_contiguous and out.flags.aligned and out.flags.writeable
            and out.dtype.isnative):
        raise ValueError("out must be a writeable, C-contiguous, aligned, native-endian array")
    return out


def positive_float(text: str) -> float:
    """argparse type (the CLI's tolerances, rates and fps): a positive
    finite number, refused in the user's words (argparse exits 2)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text!r}")
    return value
