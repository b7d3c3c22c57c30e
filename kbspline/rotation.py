"""RotationSpline: squad rotation splines with Kochanek-Bartels tangents."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from . import _kbspline as _core
from ._checks import out_keyword, _check_float_array, _check_option, _per_row
from ._keyed import KeyedSpline
from ._threads import get_num_threads
from ._typing import ArrayLike, FloatArray, OutArray

FRAMES = {"world": 0, "body": 1}
_TO_SCALAR_FIRST = [3, 0, 1, 2]
_TO_SCALAR_LAST = [1, 2, 3, 0]


def _first_bad(name: str, bad: NDArray[np.bool_], what: str) -> None:
    """ValueError naming the first entry of `name` flagged in `bad`."""
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}[{', '.join(map(str, index))}] {what}")


class RotationSpline(KeyedSpline):
    """Squad spline through unit-quaternion keys, with KB tangents.

    Segment n is squad(q_n, a_n, b_(n+1), q_(n+1); u) with inner points
    a_n = q_n exp((T0_n - L_n) / 2) and b_n = q_n exp((L_(n-1) - T1_n) / 2),
    where L_n = log(q_n^-1 q_(n+1)) and T0, T1 are the Kochanek-Bartels
    outgoing and incoming tangents computed on the logs (Eberly, equations
    1-4).  Keys are normalised and each is put on the side of its
    predecessor (q and -q are one rotation) before anything else.

    Parameters
    ----------
    times : array_like (K,) or (..., K), or None
        Strictly increasing key times (None: 0, 1, ..., K-1).
    quaternions : array_like (..., K, 4)
        Keys, (w, x, y, z) unless ``scalar_first=False``.  Any nonzero norm.
    tension, continuity, bias : float or array_like broadcastable to (..., K)
    timing, ends, ease_from, ease_to, extrapolate
        As for `PositionSpline`; ``ends='reflect'`` is 3D Studio's CompAB
        rule for a key without a neighbour.
    start_angular_velocity, end_angular_velocity : array_like (3,) or (..., 3)
        World-frame angular velocities (rad per unit time) for
        ``ends='clamped'``; zero if omitted.
    scalar_first : bool
        False reads and writes (x, y, z, w), as SciPy does.
    tangents : pair of array_like, optional
        (incoming, outgoing), each broadcastable to (..., K, 3): every
        key's log-space tangents T1, T0 per unit time, as the `tangents`
        property gives them, instead of tangents from the TCB (which must
        then be 0) and ends (which must be 'natural').  The body-frame
        angular velocity is then 2 T1 arriving at a key and 2 T0 leaving
        it, so the curve is C1 where T1 = T0 (ease applies after them:
        an eased side of a key is at rest).

    Notes
    -----
    No glitches: inside every segment the angular speed stays within
    ``2 max(|w(t_n+)|, |w(t_(n+1)-)|) + 2 pi / (t_(n+1) - t_n)``, times the
    ease's largest slope.  Where squad would break that (large tangents
    bring its inner curves near antipodal), the segment is the cumulative
    cubic of Kim, Kim & Shin (1995), q_n exp(B1 w1) exp(B2 w2) exp(B3 w3)
    with w1 = T0_n dt / 3, w3 = T1_(n+1) dt / 3, which has the same end
    orientations and end angular velocities; `squad_segments` says which.

    Angular velocity w satisfies dq/dt = w q / 2 in the world frame and
    q w / 2 in the body frame.  Rates are analytic: derivatives are carried
    through every slerp, log and exp of squad (see ``csrc/quat/kb_quat.h``).
    Results are unit quaternions, continuous in sign along t within the
    domain; a periodic loop whose keys come back as -q_0 changes sign where
    it wraps.

    References
    ----------
    K. Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985.
    D. Eberly, "Key Frame Interpolation via Splines and Quaternions".

    Examples
    --------
    >>> import numpy as np
    >>> from kbspline import RotationSpline, quat_from_axis_angle
    >>> keys = quat_from_axis_angle([0, 0, 1], [0.0, 1.0, 0.5, 2.0])
    >>> spline = RotationSpline([0, 1, 2, 3], keys, tension=0.2)
    >>> np.allclose(spline(1.0), keys[1])
    True
    >>> spline.angular_velocity([0.5, 2.5]).shape
    (2, 3)
    """

    _end_names = {"start_tangent": "start_angular_velocity",
                  "end_tangent": "end_angular_velocity", "values": "quaternions"}

    def __init__(self, times: Optional[ArrayLike], quaternions: ArrayLike,
                 tension: ArrayLike = 0.0, continuity: ArrayLike = 0.0, bias: ArrayLike = 0.0,
                 *, timing: str = "kb", ends: str = "natural",
                 start_angular_velocity: Optional[ArrayLike] = None,
                 end_angular_velocity: Optional[ArrayLike] = None,
                 ease_from: ArrayLike = 0.0, ease_to: ArrayLike = 0.0,
                 extrapolate: Optional[str] = None, scalar_first: bool = True,
                 tangents: Optional[tuple[ArrayLike, ArrayLike]] = None,
                 _chords: Optional[ArrayLike] = None) -> None:
        self._parse_options(timing, ends, extrapolate)
        if not isinstance(scalar_first, (bool, np.bool_)):
            raise TypeError(f"scalar_first must be True or False, not {scalar_first!r}")
        self._scalar_first = bool(scalar_first)
        quats = _check_float_array("quaternions", quaternions)
        if quats.ndim < 2 or quats.shape[-1] != 4:
            raise ValueError(f"quaternions must have shape (..., K, 4), not {quats.shape}")
        keys = quats if self._scalar_first else quats[..., _TO_SCALAR_FIRST]
        batch_shape, K = keys.shape[:-2], keys.shape[-2]
        self._check_key_count("quaternions", K)
        key_times = self._key_times(times, batch_shape, K)
        if ends != "clamped" and (start_angular_velocity is not None
                                  or end_angular_velocity is not None):
            raise ValueError(f"start_angular_velocity and end_angular_velocity need "
                             f"ends='clamped', not ends={ends!r}")
        omegas = [None if v is None else _per_row(name, v, batch_shape, 3)
                  for name, v in (("start_angular_velocity", start_angular_velocity),
                                  ("end_angular_velocity", end_angular_velocity))]
        params = self._key_params(batch_shape, K, tension=tension, continuity=continuity,
                                  bias=bias, ease_from=ease_from, ease_to=ease_to)
        flat = np.ascontiguousarray(np.reshape(keys, (math.prod(batch_shape), K, 4)))
        chords = None if _chords is None else np.ascontiguousarray(
            np.reshape(np.asarray(_chords, dtype=np.float64),
                       (math.prod(batch_shape), K - 1, 3)))
        given = self._given_tangents(tangents, keys.shape[:-1] + (3,), flat.shape[:-1] + (3,),
                                     (tension, continuity, bias))
        tan_in, tan_out, seg, ctrl, kind, ease = self._build(
            _core.rot_build, key_times, flat, params, omegas, batch_shape, get_num_threads(),
            chords, self._keep_all, *given)
        self._set_knots(key_times, seg.shape[1])
        self._seg, self._kind, self._ease = seg, kind, ease
        # evaluation reads only the segment records; the tangents and control
        # points are kept only if asked
        self._tan_in, self._tan_out, self._ctrl = (
            (tan_in, tan_out, ctrl) if self._keep_all else (None, None, None))
        for arr in (seg, ctrl, kind, ease, tan_in, tan_out):
            if arr is not None:
                arr.flags.writeable = False
        self._batch_shape, self._num_keys = tuple(batch_shape), K
        self._remember(times=times, quaternions=quats, tension=tension, continuity=continuity,
                       bias=bias, timing=timing, ends=ends,
                       start_angular_velocity=start_angular_velocity,
                       end_angular_velocity=end_angular_velocity, ease_from=ease_from,
                       ease_to=ease_to, extrapolate=extrapolate, scalar_first=scalar_first,
                       tangents=None if given[0] is None else np.stack(given).reshape(
                           (2,) + keys.shape[:-1] + (3,)),
                       _chords=_chords)

    def _eval(self, t, nu, frame, out):
        body = _check_option("frame", frame, FRAMES)
        width = 4 if nu == 0 else 3
        return self._evaluate(_core.rot_eval, t, out, (width,), width, self._knots,
                              self._seg, self._kind, self._ease, self._extrap_code, nu,
                              body, self._scalar_first, get_num_threads())

    @out_keyword
    def __call__(self, t: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """Unit quaternions at times `t`.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times: one time, the same M times for every track, or one row
            of times per track (as for `PositionSpline.position`).
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            (..., 4) or (..., M, 4), in the component order of ``scalar_first``.

        Examples
        --------
        >>> from kbspline import quat_from_axis_angle
        >>> s = RotationSpline([0.0, 1.0], quat_from_axis_angle([0, 0, 1], [0.0, np.pi / 2]))
        >>> np.round(s(0.5), 6)
        array([0.92388 , 0.      , 0.      , 0.382683])
        """
        return self._eval(t, 0, "world", out)

    @out_keyword
    def angular_velocity(self, t: ArrayLike, frame: str = "world",
                         *, out: OutArray = None) -> FloatArray:
        """Angular velocity in radians per unit time, analytic.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times: one time, the same M times for every track, or one row
            of times per track (as for `PositionSpline.position`).
        frame : {'world', 'body'}
            ``'world'``: dq/dt = w q / 2; ``'body'``: dq/dt = q w / 2.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            (..., 3) or (..., M, 3).

        Examples
        --------
        >>> from kbspline import quat_from_axis_angle
        >>> s = RotationSpline([0.0, 2.0], quat_from_axis_angle([0, 0, 1], [0.0, 1.0]))
        >>> np.round(s.angular_velocity(1.0), 12) + 0.0
        array([0. , 0. , 0.5])
        """
        return self._eval(t, 1, frame, out)

    @out_keyword
    def angular_acceleration(self, t: ArrayLike, frame: str = "world",
                             *, out: OutArray = None) -> FloatArray:
        """Time derivative of `angular_velocity` in the same frame, analytic.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times: one time, the same M times for every track, or one row
            of times per track (as for `PositionSpline.position`).
        frame : {'world', 'body'}
            ``'world'``: dq/dt = w q / 2; ``'body'``: dq/dt = q w / 2.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray
            (..., 3) or (..., M, 3), radians per unit time squared.

        Examples
        --------
        >>> from kbspline import quat_from_axis_angle
        >>> s = RotationSpline([0.0, 2.0], quat_from_axis_angle([0, 0, 1], [0.0, 1.0]))
        >>> np.round(s.angular_acceleration(1.0), 12) + 0.0
        array([0., 0., 0.])
        """
        return self._eval(t, 2, frame, out)

    # -- constant angular speed ---------------------------------------------

    _table_fn = staticmethod(_core.angle_table)
    _query_fn = staticmethod(_core.angle_query)

    def _curve(self):
        return (self._knots, self._seg, self._kind, self._ease, self._extrap_code)

    @property
    def total_angle(self) -> Any:  # float, or (...,) for a batch: the shape decides
        """The rotation angle swept over the domain, radians: float or (...,)."""
        return self._total()

    @out_keyword
    def angle(self, t: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """Rotation angle swept from the domain start to `t`.

        The integral of the angular speed ``|w|``, to a relative error of about
        1e-13 of each segment's.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times: one time, the same M times for every track, or one row
            of times per track (as for `PositionSpline.position`).
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray or float
            Shapes as for `__call__` without the last axis.

        Examples
        --------
        >>> from kbspline import quat_from_axis_angle
        >>> s = RotationSpline([0.0, 2.0], quat_from_axis_angle([1, 0, 0], [0.0, 1.0]))
        >>> round(float(s.angle(1.0)), 12), round(s.total_angle, 12)
        (0.5, 1.0)
        """
        return self._integral_at(t, out)

    @out_keyword
    def time_at_angle(self, s: ArrayLike, *, out: OutArray = None) -> FloatArray:
        """The time at which `angle` reaches `s`.

        Samples at equal steps of `s` turn at constant angular speed.

        Parameters
        ----------
        s : float or array_like (M,) or (..., M)
            Swept angles in radians, in the shapes `__call__` takes for times.
        out : ndarray, optional
            float64 or float32 array of the result's shape, written in place.

        Returns
        -------
        ndarray or float
            Times.  The domain's ends at 0 and `total_angle`; where the spline
            rests, the earliest time; `s` outside [0, total_angle] follows
            ``extrapolate``.  The search never diverges.

        Examples
        --------
        >>> from kbspline import quat_from_axis_angle
        >>> s = RotationSpline([0.0, 2.0], quat_from_axis_angle([1, 0, 0], [0.0, 1.0]))
        >>> round(float(s.time_at_angle(0.25)), 12)
        0.5
        """
        return self._time_at_integral(s, out)

    # -- multi-turn keys --------------------------------------------------------

    @classmethod
    def from_relative(cls, times: Optional[ArrayLike], axes: ArrayLike, angles: ArrayLike,
                      tension: ArrayLike = 0.0, continuity: ArrayLike = 0.0,
                      bias: ArrayLike = 0.0, *, start: Optional[ArrayLike] = None,
                      **keywords: Any) -> RotationSpline:
        """A spline through keys given as turns, as 3D Studio stores them.

        A key may turn by any number of revolutions: key 0 is `start` (default the
        identity) turned by ``angles[0]`` radians about ``axes[0]``; key n > 0 is
        key n-1 turned by ``angles[n]`` about ``axes[n]`` in key n-1's own frame.
        The segment from key n-1 to key n sweeps the whole angle, however many
        turns (its log is ``angles[n] / 2`` along the axis, never reduced).

        Parameters
        ----------
        times : array_like (K,) or (..., K), or None
            Strictly increasing key times (None: 0, 1, ..., K-1).
        axes : array_like (..., K, 3)
            Turn axes, any nonzero length.
        angles : array_like (..., K)
            Turns in radians, any sign and size.
        tension, continuity, bias : float or array_like broadcastable to (..., K)
            The TCB parameters of each key.
        start : array_like (4,) or (..., 4), optional
            The rotation the first turn starts from, in the component order of
            ``scalar_first``.
        **keywords
            The constructor's other keywords; with ``timing='3ds'`` the tangents
            follow 3D Studio's CompAB, whose keys of 2 pi - 1e-5 or more
            contribute half a turn about their axis.

        Returns
        -------
        RotationSpline

        Raises
        ------
        ValueError
            Non-finite or zero-length axes, non-finite angles, or shapes that do
            not match the times, naming the argument and index.

        Notes
        -----
        A segment of more than half a turn is the cumulative cubic on a uniform
        spin, ``q_n exp(u L_n) exp(B1 w1) exp(B2 w2) exp(B3 w3)``, with the
        tangents' end angular velocities: it turns at its mean rate plus at most
        twice the end rates' departure from it.

        Examples
        --------
        >>> wheel = RotationSpline.from_relative([0, 1, 2, 3], [[0, 0, 1]] * 4,
        ...                                      [0.0, 5 * np.pi, 5 * np.pi, 5 * np.pi])
        >>> round(wheel.total_angle / np.pi, 9)
        15.0
        >>> np.round(wheel.angular_velocity(0.3) / np.pi, 9) + 0.0
        array([0., 0., 5.])
        """
        from .quaternion import quat_from_axis_angle, quat_multiply
        axes_ = _check_float_array("axes", axes)
        angles_ = _check_float_array("angles", angles)
        if axes_.ndim < 2 or axes_.shape[-1] != 3:
            raise ValueError(f"axes must have shape (..., K, 3), not {axes_.shape}")
        if angles_.shape != axes_.shape[:-1]:
            raise ValueError(f"angles must have shape {axes_.shape[:-1]} to match axes, "
                             f"not {angles_.shape}")
        _first_bad("axes", ~np.all(np.isfinite(axes_), axis=-1), "is not finite")
        _first_bad("axes", ~np.any(axes_ != 0.0, axis=-1), "has zero length")
        _first_bad("angles", ~np.isfinite(angles_), "is not finite")
        scalar_first = keywords.get("scalar_first", True)
        scaled = axes_ / np.abs(axes_).max(axis=-1, keepdims=True)   # no overflow in the norm
        unit = scaled / np.linalg.norm(scaled, axis=-1, keepdims=True)
        turns = quat_from_axis_angle(unit, angles_)
        if start is None:
            first = turns[..., 0, :]
        else:
            start_ = _check_float_array("start", start)
            if start_.shape[-1:] != (4,):
                raise ValueError(f"start must have shape (4,) or (..., 4), not {start_.shape}")
            if not scalar_first:
                start_ = start_[..., _TO_SCALAR_FIRST]
            first = quat_multiply(start_, turns[..., 0, :])
        lead = np.broadcast_shapes(first.shape[:-1], turns.shape[:-2])
        keys = np.empty(lead + turns.shape[-2:])
        keys[..., 0, :] = first
        for n in range(1, axes_.shape[-2]):
            keys[..., n, :] = quat_multiply(keys[..., n - 1, :], turns[..., n, :])
        chords = 0.5 * angles_[..., 1:, None] * unit[..., 1:, :]
        if not scalar_first:
            keys = keys[..., _TO_SCALAR_LAST]
        return cls(times, keys, tension, continuity, bias,
                   _chords=np.broadcast_to(chords, keys.shape[:-2] + chords.shape[-2:]),
                   **keywords)

    # -- SciPy interop --------------------------------------------------------

    @classmethod
    def from_rotation(cls, times: Optional[ArrayLike], rotation: Any, *args: Any,
                      scalar_first: bool = False, **kwargs: Any) -> RotationSpline:
        """A spline through the keys of a `scipy.spatial.transform.Rotation`.

        Parameters
        ----------
        times : array_like (K,) or (..., K), or None
            Strictly increasing key times (None: 0, 1, ..., K-1).
        rotation : scipy.spatial.transform.Rotation
            K rotations, the keys.
        *args, **kwargs
            As for the constructor.
        scalar_first : bool
            The spline reads and writes SciPy's (x, y, z, w) unless True.

        Returns
        -------
        RotationSpline

        Examples
        --------
        >>> from scipy.spatial.transform import Rotation
        >>> keys = Rotation.from_euler("z", [[0], [45], [90]], degrees=True)
        >>> s = RotationSpline.from_rotation([0.0, 1.0, 2.0], keys)
        >>> np.round(s.as_rotation(1.0).as_euler("zyx", degrees=True), 6) + 0.0
        array([45.,  0.,  0.])
        """
        xyzw = np.asarray(rotation.as_quat())
        keys = xyzw[..., _TO_SCALAR_FIRST] if scalar_first else xyzw
        return cls(times, keys, *args, scalar_first=scalar_first, **kwargs)

    def as_rotation(self, t: ArrayLike) -> Any:
        """The spline at `t` as a `scipy.spatial.transform.Rotation`.

        Parameters
        ----------
        t : float or array_like (M,) or (..., M)
            Query times: one time, the same M times for every track, or one row
            of times per track (as for `PositionSpline.position`).

        Returns
        -------
        scipy.spatial.transform.Rotation
            All results, in C order, as one stack.  Needs SciPy.
        """
        from scipy.spatial.transform import Rotation
        q = np.asarray(self(t))
        xyzw = q if not self._scalar_first else q[..., _TO_SCALAR_LAST]
        return Rotation.from_quat(np.reshape(xyzw, (-1, 4)) if q.ndim > 1 else xyzw)

    # What a spline keeps per key is its segment records (128 bytes), its
    # kinds and its copy of the keys for pickling; the tangents and the
    # control points (96 and 128 bytes per key) are built again on first use.
    _keep_all = False
    _tan_in: Optional[FloatArray]
    _tan_out: Optional[FloatArray]
    _ctrl: Optional[FloatArray]

    def _build_the_rest(self) -> None:
        if self._ctrl is None:
            twin = object.__new__(type(self))
            twin._keep_all = True
            RotationSpline.__init__(twin, **self._state)
            self._tan_in, self._tan_out, self._ctrl = twin._tan_in, twin._tan_out, twin._ctrl

    @property
    def control_points(self) -> FloatArray:
        """(..., S, 4, 4): (q_n, a_n, b_(n+1), q_(n+1)) of each segment, unit,
        in the component order of ``scalar_first``."""
        self._build_the_rest()
        assert self._ctrl is not None
        ctrl = self._ctrl if self._scalar_first else self._ctrl[..., _TO_SCALAR_LAST]
        return ctrl.reshape(self._batch_shape + self._ctrl.shape[1:])

    @property
    def squad_segments(self) -> NDArray[np.bool_]:
        """(..., S) bool: True where a segment is squad, False where squad
        would be ill-conditioned and the segment is the cumulative cubic
        q_n exp(B1 w1) exp(B2 w2) exp(B3 w3) instead (see the class notes)."""
        return (self._kind == 0).reshape(self._batch_shape + self._kind.shape[1:])

    @property
    def tangents(self) -> tuple[FloatArray, FloatArray]:
        """(incoming, outgoing), each (..., K, 3): the KB tangents of the logs
        per unit time, in each key's own frame (half an angular velocity)."""
        self._build_the_rest()
        assert self._tan_in is not None and self._tan_out is not None
        inner = (self._num_keys, 3)
        return (self._tan_in.reshape(self._batch_shape + inner),
                self._tan_out.reshape(self._batch_shape + inner))

    @property
    def scalar_first(self) -> bool:
        """True for (w, x, y, z), False for (x, y, z, w)."""
        return self._scalar_first

    def __repr__(self) -> str:
        return (f"RotationSpline(batch_shape={self._batch_shape}, num_keys={self._num_keys}, "
                f"timing={self._timing!r}, ends={self._ends!r}, "
                f"scalar_first={self._scalar_first})")
