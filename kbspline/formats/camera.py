"""Camera facts every reader states the same way: a field of view as a
channel (path ``"fov"``, radians) with the frame dimension it spans and the
aspect ratio that converts it to the others.

A camera node's ``extras["camera"]`` is a dict: ``fov`` (radians, at rest),
``fov_axis`` (``"horizontal"``, ``"vertical"`` or ``"diagonal"``), ``aspect``
(frame width over height, pixels' aspect included), ``aspect_stated``
(whether the file gives it or it is a stated default), ``view`` and ``up``
(the camera's viewing and up directions in its own frame, in the file's
axes) and, where the file has one, ``aperture`` (the film's height, mm) or
``lens`` (focal length, mm).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["FOV_AXES", "FieldOfView", "convert_fov", "vertical_fov", "camera_facts",
           "camera_turn"]

FOV_AXES = ("horizontal", "vertical", "diagonal")


def _half_span(axis: str, aspect: float) -> float:
    """The frame's half extent along `axis`, its half height being 1."""
    if axis not in FOV_AXES:
        raise ValueError(f"fov axis must be one of {FOV_AXES}, not {axis!r}")
    return {"horizontal": aspect, "vertical": 1.0, "diagonal": float(np.hypot(aspect, 1.0))}[axis]


def convert_fov(fov: ArrayLike, aspect: float, from_axis: str, to_axis: str) -> np.ndarray:
    """A pinhole camera's field of view across another dimension of its frame.

    Parameters
    ----------
    fov : array_like
        Radians, in (0, pi); NaN outside.
    aspect : float
        Frame width over height (positive).
    from_axis, to_axis : str
        ``"horizontal"``, ``"vertical"`` or ``"diagonal"``.

    Returns
    -------
    ndarray
        Radians: ``2 atan(tan(fov / 2) s_to / s_from)`` with s the frame's
        half extents (aspect, 1, hypot(aspect, 1)).
    """
    if not (np.isfinite(aspect) and aspect > 0):
        raise ValueError(f"aspect must be a positive number, not {aspect!r}")
    ratio = _half_span(to_axis, aspect) / _half_span(from_axis, aspect)
    fov = np.asarray(fov, dtype=np.float64)
    fov = np.where((fov > 0.0) & (fov < np.pi), fov, np.nan)   # no pinhole outside
    return 2.0 * np.arctan(np.tan(fov / 2.0) * ratio)


def vertical_fov(fov: ArrayLike, aspect: float, axis: str, camera: str) -> np.ndarray:
    """`convert_fov` to the vertical; a ValueError names `camera` and the
    first value outside (0, pi), which a file format cannot carry."""
    fov = np.asarray(fov, dtype=np.float64)
    outside = fov[~((fov > 0.0) & (fov < np.pi))]           # NaN too
    if np.isnan(outside).any():     # a channel's NaN: a zoom factor at or below 0
        raise ValueError(f"camera {camera!r}: field of view undefined at some time "
                         f"(a zoom factor at or below 0?)")
    if outside.size:
        raise ValueError(f"camera {camera!r}: field of view reaches "
                         f"{np.degrees(outside.flat[0]):g} degrees; it must lie strictly "
                         f"between 0 and 180")
    return convert_fov(fov, aspect, axis, "vertical")


class FieldOfView:
    """A camera's field of view as a scene channel (path ``"fov"``): radians
    across `axis` of a frame `aspect` wide for 1 high.

    Parameters
    ----------
    source : callable
        A channel of the file's own quantity (a 3DS fov track in degrees,
        a LightWave zoom factor envelope), with ``times``.
    to_radians : callable
        Maps `source`'s (M, 1) values to radians across `axis`.
    axis : str
        ``"horizontal"``, ``"vertical"`` or ``"diagonal"``.
    aspect : float
        Frame width over height.
    """
    path = "fov"

    def __init__(self, source: Any, to_radians: Callable[[np.ndarray], np.ndarray],
                 axis: str, aspect: float):
        _half_span(axis, aspect)
        self.source, self._to_radians = source, to_radians
        self.axis, self.aspect = axis, float(aspect)
        self.times = np.asarray(source.times, dtype=np.float64)
        self.interpolation = getattr(source, "interpolation", "")

    def __repr__(self) -> str:
        return f"FieldOfView({self.axis}, aspect {self.aspect:g}, {len(self.times)} key times)"

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """The field of view at seconds `t`.

        Parameters
        ----------
        t : float or array_like (M,)

        Returns
        -------
        ndarray (M, 1)
            Radians across `axis`.
        """
        t = np.atleast_1d(np.asarray(t, dtype=np.float64)).reshape(-1)
        values = np.asarray(self.source(t), dtype=np.float64).reshape(len(t), -1)[:, :1]
        return self._to_radians(values)

    def across(self, t: ArrayLike, axis: str) -> np.ndarray:
        """The field of view across another dimension of the frame.

        Parameters
        ----------
        t : float or array_like (M,)
            Seconds.
        axis : str
            ``"horizontal"``, ``"vertical"`` or ``"diagonal"``.

        Returns
        -------
        ndarray (M, 1)
            Radians.
        """
        return convert_fov(self(t), self.aspect, self.axis, axis)


def camera_facts(fov: float, axis: str, aspect: float, stated: bool, view, up,
                 **more: Optional[float]) -> dict:
    """The ``extras["camera"]`` dict of a camera node.

    Parameters
    ----------
    fov : float
        Radians at rest.
    axis : str
        The frame dimension `fov` spans.
    aspect : float
        Frame width over height.
    stated : bool
        Whether the file gives the aspect.
    view, up : array_like (3,)
        The camera's view and up directions in its own frame.
    **more : float or None
        Other facts (``aperture``, ``lens``, ``zoom``); None ones are left out.

    Returns
    -------
    dict
    """
    facts = {"fov": float(fov), "fov_axis": axis, "aspect": float(aspect),
             "aspect_stated": bool(stated), "view": np.asarray(view, dtype=np.float64),
             "up": np.asarray(up, dtype=np.float64)}
    facts.update({key: float(value) for key, value in more.items() if value is not None})
    return facts


def camera_turn(facts: dict, axes: np.ndarray) -> np.ndarray:
    """The turn from glTF's and USD's camera frame (-z view, +y up) to the
    tool's, in the axes `axes` maps the file's onto (node frames are
    conjugated by it: R' = A R A^T).

    Parameters
    ----------
    facts : dict
        A camera node's ``extras["camera"]`` (its ``view`` and ``up``).
    axes : ndarray (3, 3)
        The file's axes to glTF's (`convert.axes_to_gltf`).

    Returns
    -------
    ndarray (4,)
        Unit (w, x, y, z).
    """
    from ..quaternion import quat_from_matrix
    view = axes @ np.asarray(facts["view"], dtype=np.float64)
    up = axes @ np.asarray(facts["up"], dtype=np.float64)
    return np.asarray(quat_from_matrix(np.column_stack([np.cross(up, -view), up, -view])))
