"""Baking batches larger than memory with Dask (``pip install kbspline[dask]``).

Keys arrive as a Dask array chunked over tracks; each chunk becomes a spline
and is evaluated at the same query times with ``dask.array.map_blocks``, so
the result is a Dask array chunked over the same tracks.  The C core
releases the GIL, so Dask's threaded scheduler scales with cores; a
distributed cluster ships the key chunks and the (small) arguments to its
workers.  Give kbspline one thread per Dask thread (``set_num_threads(1)``
in each worker) so that the two do not oversubscribe the cores.

>>> import dask.array as da, numpy as np
>>> from kbspline import PositionSpline
>>> keys = da.random.default_rng(0).normal(size=(10_000, 16, 3), chunks=(1_000, 16, 3))
>>> t = np.linspace(0.0, 15.0, 500)
>>> baked = bake(PositionSpline, None, keys, t, tension=0.2)
>>> baked.shape, baked.chunksize
((10000, 500, 3), (1000, 500, 3))
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .position import PositionSpline
from .rotation import RotationSpline

__all__ = ["bake"]

_TAIL: dict[tuple[type[Any], str], Optional[int]] = {  # (class, method) -> result width
    (PositionSpline, "position"): None, (PositionSpline, "velocity"): None,
    (PositionSpline, "acceleration"): None, (PositionSpline, "length"): 0,
    (RotationSpline, "__call__"): 4, (RotationSpline, "angular_velocity"): 3,
    (RotationSpline, "angular_acceleration"): 3, (RotationSpline, "angle"): 0,
}


def bake(spline_class: type[Any], times: Any, keys: Any, t: ArrayLike, *,
         method: Optional[str] = None, dtype: DTypeLike = np.float64, **options: Any) -> Any:
    """Evaluates splines through `keys` at `t`, chunk by chunk, lazily.

    Parameters
    ----------
    spline_class : type
        PositionSpline or RotationSpline.
    times : None, array_like (K,) or (..., K)
        Shared key times, or per-track times as a Dask or NumPy array
        (chunked like `keys` over the tracks).
    keys : dask.array.Array or array_like
        (..., K, D) values or (..., K, 4) quaternions (anything
        ``dask.array.asarray`` takes); chunks split tracks only.
    t : array_like (M,)
        Query times shared by every track (a NumPy array).
    method : str, optional
        What to evaluate: ``position`` (default), ``velocity``,
        ``acceleration`` or ``length`` of a PositionSpline; ``__call__``
        (default), ``angular_velocity``, ``angular_acceleration`` or ``angle``
        of a RotationSpline.
    dtype : float64 or float32
        The result's type.
    **options
        The spline's other arguments (tension, timing, ends, ...), scalars or
        per-key (K,) arrays shared by every track.

    Returns
    -------
    dask.array.Array
        (..., M, D | 4 | 3), or (..., M) for length and angle, chunked over
        the tracks as `keys` is.  Results equal evaluating one spline over the
        whole batch, bit for bit.

    Raises
    ------
    TypeError
        For another spline class, or a dtype other than float32 or float64.
    ValueError
        For a method the class does not have, or shapes of `t`, `keys` or
        `times` that do not fit.
    """
    import dask.array as da

    if spline_class not in (PositionSpline, RotationSpline):
        raise TypeError("spline_class must be PositionSpline or RotationSpline, "
                        f"not {spline_class!r}")
    method = method or ("position" if spline_class is PositionSpline else "__call__")
    if (spline_class, method) not in _TAIL:
        raise ValueError(f"method {method!r} is not one bake evaluates for "
                         f"{spline_class.__name__}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64, not {dtype}")
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1:
        raise ValueError(f"t must have shape (M,), not {t.shape}")
    keys = da.asarray(keys)
    if keys.ndim < 3:
        raise ValueError(f"keys must have shape (..., K, D) with a batch axis, "
                         f"not {keys.shape}")
    n_batch = keys.ndim - 2
    keys = keys.rechunk(keys.chunks[:n_batch] + (-1, -1))
    per_track = times is not None and np.ndim(times) > 1
    if per_track:
        times = da.asarray(times)
        if times.shape != keys.shape[:-1]:
            raise ValueError(f"per-track times must have shape {keys.shape[:-1]}, "
                             f"not {times.shape}")
        # (..., K, 1): blocks line up with the keys' axis by axis
        times = times[..., None].rechunk(keys.chunks[:-1] + (1,))

    width = _TAIL[spline_class, method]
    width = keys.shape[-1] if width is None else width
    tail = ((len(t),),) + (((width,),) if width else ())

    def one_chunk(block, block_times=None):
        spline = spline_class(block_times[..., 0] if per_track else times, block, **options)
        out = np.empty(block.shape[:-2] + (len(t),) + ((width,) if width else ()), dtype)
        getattr(spline, method)(t, out=out)
        return out

    args = (keys, times) if per_track else (keys,)
    kwargs = {} if width else {"drop_axis": keys.ndim - 1}
    return da.map_blocks(one_chunk, *args, dtype=dtype, chunks=keys.chunks[:n_batch] + tail,
                         meta=np.empty((0,) * (n_batch + len(tail)), dtype), **kwargs)
