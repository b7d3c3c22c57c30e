"""Quaternion utilities, vectorised over any leading shape, computed in C.

IMPORTANT: quaternions are (w, x, y, z) unless ``scalar_first=False``, which
reads and writes (x, y, z, w) as SciPy does.  Hamilton product; a unit q
rotates v as q v q*.  Functions that take rotations normalise them and give
the same result at any finite scale, subnormal to 1e308; a zero-norm
quaternion, NaN or infinity in any argument, or a result too large for
float64 is a ValueError naming the argument and index.  Arguments broadcast
against each other over their leading axes.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import _kbspline as _core
from ._checks import _check_float_array, _index_text
from ._typing import ArrayLike, FloatArray

__all__ = ["quat_multiply", "quat_conjugate", "quat_log", "quat_exp", "slerp", "squad",
           "quat_from_axis_angle", "quat_to_axis_angle", "quat_from_matrix",
           "quat_to_matrix", "quat_from_euler", "quat_to_euler"]

_TO_SCALAR_FIRST = [3, 0, 1, 2]
_TO_SCALAR_LAST = [1, 2, 3, 0]


def _element(name, value, width):
    """`value` as float64 with a trailing axis of `width` (none for width 0)."""
    arr = _check_float_array(name, value)
    if width and (arr.ndim == 0 or arr.shape[-1] != width):
        raise ValueError(f"{name} must have shape (..., {width}), not {arr.shape}")
    return arr


def _run(op, inputs, out_widths, axes=(0, 1, 2), extrinsic=False,
         out_of_range="is too large: the result overflows float64"):
    """Runs utility `op` on named inputs [(name, array, width)], broadcast
    over their leading shapes; returns the outputs (width 0: no trailing axis).
    `out_of_range` says what the core's KB_ERANGE means ({where}: the index)."""
    leads = [arr.shape[:arr.ndim - (1 if w else 0)] for _, arr, w in inputs]
    try:
        shape = np.broadcast_shapes(*leads)
    except ValueError:
        described = ", ".join(f"{name} {lead}" for (name, _, _), lead in zip(inputs, leads))
        raise ValueError(f"leading shapes do not broadcast: {described}") from None
    n = math.prod(shape)
    flat = [np.ascontiguousarray(np.broadcast_to(arr, shape + ((w,) if w else ())))
            for _, arr, w in inputs]
    outs = [np.empty(shape + ((w,) if w else ())) for w in out_widths]
    try:
        _core.quat_util(op, n, tuple(flat), tuple(outs), tuple(axes), extrinsic)
    except _core.CoreError as exc:
        reason, _, operand, index, _ = exc.args
        name = inputs[operand][0] if 0 <= operand < len(inputs) else "input"
        where = _index_text(shape, index, -1, True) if shape else ""
        if reason == "out of range":
            reason = out_of_range.format(where=where)
        raise ValueError(f"{name}{where} {reason}") from None
    return outs


def _qin(name, q, scalar_first):
    arr = _element(name, q, 4)
    return arr if scalar_first else arr[..., _TO_SCALAR_FIRST]


def _angle_between(p, q):
    """Rotation angles between unit quaternions (either order of components,
    the same for both): 4 asin(min |p -+ q| / 2), accurate near zero where
    2 acos |p.q| is not."""
    chord = np.minimum(np.linalg.norm(p - q, axis=-1), np.linalg.norm(p + q, axis=-1))
    return 4.0 * np.arcsin(np.minimum(chord / 2.0, np.sqrt(0.5)))


def _qout(q, scalar_first):
    return q if scalar_first else np.ascontiguousarray(q[..., _TO_SCALAR_LAST])


def quat_multiply(p: ArrayLike, q: ArrayLike, scalar_first: bool = True) -> FloatArray:
    """Hamilton product p q.

    Parameters
    ----------
    p, q : array_like (..., 4)
        Quaternions; leading shapes broadcast.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)

    Examples
    --------
    >>> quat_multiply([0, 1, 0, 0], [0, 0, 1, 0])
    array([0., 0., 0., 1.])
    """
    (out,) = _run(_core.Q_MULTIPLY, [("p", _qin("p", p, scalar_first), 4),
                                     ("q", _qin("q", q, scalar_first), 4)], [4],
                  out_of_range="times q{where} overflows float64")
    return _qout(out, scalar_first)


def quat_conjugate(q: ArrayLike, scalar_first: bool = True) -> FloatArray:
    """The conjugate ``q* = (w, -x, -y, -z)``.

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternions.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)

    Examples
    --------
    >>> quat_conjugate([1.0, 2.0, 3.0, 4.0])
    array([ 1., -2., -3., -4.])
    """
    (out,) = _run(_core.Q_CONJUGATE, [("q", _qin("q", q, scalar_first), 4)], [4])
    return _qout(out, scalar_first)


def quat_log(q: ArrayLike, scalar_first: bool = True) -> FloatArray:
    """Quaternion logarithm.

    For ``q = |q| (cos theta + sin theta n)`` with theta in [0, pi], the log is
    ``(ln |q|, theta n)``; for a unit q the vector part is half the rotation
    vector.

    Parameters
    ----------
    q : array_like (..., 4)
        Nonzero quaternions.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)
        A negative real ``q = -s`` gives ``(ln s, pi, 0, 0)``: the axis x,
        which `quat_to_axis_angle` gives the identity, and the limit from the
        +x side.

    Examples
    --------
    >>> np.round(quat_log([0.0, 0.0, 0.0, 1.0]), 6)
    array([0.      , 0.      , 0.      , 1.570796])
    """
    (out,) = _run(_core.Q_LOG, [("q", _qin("q", q, scalar_first), 4)], [4])
    return _qout(out, scalar_first)


def quat_exp(q: ArrayLike, scalar_first: bool = True) -> FloatArray:
    """Quaternion exponential, the inverse of `quat_log`.

    ``exp(w, v) = e^w (cos |v|, sin |v| v / |v|)``.

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternions (w, v).
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)

    Raises
    ------
    ValueError
        Where w exceeds ln(max float64) = 709.78, or the norm of the vector
        part overflows.

    Examples
    --------
    >>> np.round(quat_exp([0.0, 0.0, 0.0, np.pi / 2]), 6)
    array([0., 0., 0., 1.])
    """
    (out,) = _run(_core.Q_EXP, [("q", _qin("q", q, scalar_first), 4)], [4])
    return _qout(out, scalar_first)


def slerp(p: ArrayLike, q: ArrayLike, u: ArrayLike, scalar_first: bool = True) -> FloatArray:
    """Spherical linear interpolation along the shorter arc.

    Parameters
    ----------
    p, q : array_like (..., 4)
        The rotations at u = 0 and u = 1.
    u : float or array_like
        Parameters; broadcast with the leading shapes.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)

    Examples
    --------
    >>> np.round(slerp([1, 0, 0, 0], [0, 0, 0, 1], [0.0, 0.5]), 6)
    array([[1.      , 0.      , 0.      , 0.      ],
           [0.707107, 0.      , 0.      , 0.707107]])
    """
    (out,) = _run(_core.Q_SLERP, [("p", _qin("p", p, scalar_first), 4),
                                  ("q", _qin("q", q, scalar_first), 4),
                                  ("u", _element("u", u, 0), 0)], [4])
    return _qout(out, scalar_first)


def squad(p: ArrayLike, a: ArrayLike, b: ArrayLike, q: ArrayLike, u: ArrayLike,
          scalar_first: bool = True) -> FloatArray:
    """Shoemake's squad.

    ``squad(p, a, b, q; u) = slerp(2u(1-u), slerp(u, p, q), slerp(u, a, b))``,
    with no slerp taking a shorter arc (as inside `RotationSpline`).

    Parameters
    ----------
    p, a, b, q : array_like (..., 4)
        The segment's end rotations p and q and its inner points a and b.
    u : float or array_like
        Parameters in [0, 1]; broadcast with the leading shapes.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)

    Examples
    --------
    >>> np.round(squad([1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 1], 1.0), 6)
    array([0., 0., 0., 1.])
    """
    named = [("p", p), ("a", a), ("b", b), ("q", q)]
    inputs = [(name, _qin(name, v, scalar_first), 4) for name, v in named]
    (out,) = _run(_core.Q_SQUAD, inputs + [("u", _element("u", u, 0), 0)], [4])
    return _qout(out, scalar_first)


def quat_from_axis_angle(axis: ArrayLike, angle: ArrayLike,
                         scalar_first: bool = True) -> FloatArray:
    """Rotations by `angle` radians about `axis`.

    Parameters
    ----------
    axis : array_like (..., 3)
        Axes of any nonzero length.
    angle : float or array_like (...)
        Angles in radians.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)

    Examples
    --------
    >>> np.round(quat_from_axis_angle([0, 0, 2], np.pi), 6)
    array([0., 0., 0., 1.])
    """
    (out,) = _run(_core.Q_FROM_AXIS_ANGLE, [("axis", _element("axis", axis, 3), 3),
                                            ("angle", _element("angle", angle, 0), 0)], [4])
    return _qout(out, scalar_first)


def quat_to_axis_angle(q: ArrayLike,
                       scalar_first: bool = True) -> tuple[FloatArray, FloatArray]:
    """Axis and angle of rotations.

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternions.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    axis : ndarray (..., 3)
        Unit axes; the identity gets (1, 0, 0).
    angle : ndarray (...)
        Angles in [0, pi].

    Examples
    --------
    >>> axis, angle = quat_to_axis_angle([0.0, 0.0, 0.0, 1.0])
    >>> axis, float(angle)
    (array([0., 0., 1.]), 3.141592653589793)
    """
    axis, angle = _run(_core.Q_TO_AXIS_ANGLE, [("q", _qin("q", q, scalar_first), 4)], [3, 0])
    return axis, (angle[()] if angle.ndim == 0 else angle)


def quat_to_matrix(q: ArrayLike, scalar_first: bool = True) -> FloatArray:
    """Rotation matrices acting on column vectors.

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternions.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 3, 3)

    Examples
    --------
    >>> np.round(quat_to_matrix(quat_from_axis_angle([0, 0, 1], np.pi / 2)), 6) + 0.0
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    (out,) = _run(_core.Q_TO_MATRIX, [("q", _qin("q", q, scalar_first), 4)], [9])
    return out.reshape(out.shape[:-1] + (3, 3))


def quat_from_matrix(matrix: ArrayLike, scalar_first: bool = True) -> FloatArray:
    """Unit quaternions from rotation matrices (Shepperd's method).

    Parameters
    ----------
    matrix : array_like (..., 3, 3)
        Rotation matrices.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)
        With w >= 0.

    Raises
    ------
    ValueError
        For a matrix that is not a rotation.

    Examples
    --------
    >>> quat_from_matrix(np.eye(3))
    array([1., 0., 0., 0.])
    """
    m = _check_float_array("matrix", matrix)
    if m.ndim < 2 or m.shape[-2:] != (3, 3):
        raise ValueError(f"matrix must have shape (..., 3, 3), not {m.shape}")
    (out,) = _run(_core.Q_FROM_MATRIX, [("matrix", m.reshape(m.shape[:-2] + (9,)), 9)], [4],
                  out_of_range="must be a rotation matrix (orthonormal, determinant 1)")
    return _qout(out, scalar_first)


def _parse_order(order):
    """(axes, extrinsic) of an Euler order such as 'ZXY' (intrinsic) or
    'xyz' (extrinsic), as SciPy and BVH channel lists spell them."""
    if not isinstance(order, str):
        raise TypeError(f"order must be a string such as 'ZXY', not {type(order).__name__}")
    if (len(order) != 3 or not (order.isupper() or order.islower())
            or set(order.lower()) - set("xyz") or order[0] == order[1]
            or order[1] == order[2]):
        raise ValueError(f"order must be three of x, y, z, all upper case (intrinsic) or all "
                         f"lower case (extrinsic), no axis twice in a row; not {order!r}")
    return tuple("xyz".index(c) for c in order.lower()), order.islower()


def quat_from_euler(angles: ArrayLike, order: str, degrees: bool = False,
                    scalar_first: bool = True) -> FloatArray:
    """Rotations from Euler angles.

    Parameters
    ----------
    angles : array_like (..., 3)
        The three angles, in the order of `order`.
    order : str
        Three axes: upper case intrinsic (moving axes), lower case extrinsic
        (fixed axes), as in SciPy.
    degrees : bool
        Angles in degrees rather than radians.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 4)

    Warns
    -----
    UserWarning
        When ``degrees=False`` and every angle's magnitude exceeds 2 pi: they
        were probably given in degrees.

    Examples
    --------
    >>> np.round(quat_from_euler([90, 0, 0], "ZXY", degrees=True), 6)
    array([0.707107, 0.      , 0.      , 0.707107])
    """
    axes, extrinsic = _parse_order(order)
    a = _element("angles", angles, 3)
    if degrees:
        a = np.radians(a)
    elif a.size and np.all(np.abs(a) > 2 * np.pi):   # NaN compares False: no warning
        warnings.warn("every angle exceeds a full turn in magnitude: degrees given without "
                      "degrees=True are read as radians", stacklevel=2)
    (out,) = _run(_core.Q_FROM_EULER, [("angles", a, 3)], [4], axes, extrinsic)
    return _qout(out, scalar_first)


def quat_to_euler(q: ArrayLike, order: str, degrees: bool = False,
                  scalar_first: bool = True) -> FloatArray:
    """Euler angles of rotations.

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternions.
    order : str
        As for `quat_from_euler`.
    degrees : bool
        Return degrees rather than radians.
    scalar_first : bool
        True: quaternions are (w, x, y, z); False: (x, y, z, w), as SciPy.

    Returns
    -------
    ndarray (..., 3)
        Each angle in [-pi, pi]; at gimbal lock the last extrinsic angle is 0.

    Examples
    --------
    >>> np.round(quat_to_euler([0.707107, 0, 0, 0.707107], "ZXY", degrees=True), 3) + 0.0
    array([90.,  0.,  0.])
    """
    axes, extrinsic = _parse_order(order)
    (out,) = _run(_core.Q_TO_EULER, [("q", _qin("q", q, scalar_first), 4)], [3], axes,
                  extrinsic)
    return np.degrees(out) if degrees else out
