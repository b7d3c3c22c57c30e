"""Key reduction: for each joint, the fewest key frames whose squad and KB
splines stay within a tolerance of every original frame."""
from __future__ import annotations

import dataclasses
import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _kbspline as _core
from .._checks import _check_positive
from .._threads import get_num_threads
from ..position import PositionSpline
from ..rotation import RotationSpline
from .clip import Motion, check_motion
from .world_error import WorldError, moves


@dataclasses.dataclass
class Reduction:
    """Each joint's key frames chosen from a clip, and its worst errors.

    Attributes
    ----------
    names : list of str
        Joint names.
    frame_time : float
        The clip's frame time.
    num_frames : int
        The clip's frame count.
    key_frames : list of ndarray
        Per joint, (K_j,) frame indices, ascending, first and last kept.
    rotations : list of ndarray
        Per joint, (K_j, 4) local rotations at its keys, (w, x, y, z).
    translations : list of ndarray
        Per joint, (K_j, 3) local translations at its keys.
    max_angle : ndarray (J,)
        Worst rotation error over all frames, radians.
    max_distance : ndarray (J,)
        Worst translation error over all frames.
    max_position : ndarray (J,) or None
        Worst world-space distance, over all frames, of the joint's origin,
        End Site and virtual vertices from where the clip puts them (None
        when read from JSON that lacks it).
    rotation_tcb, translation_tcb : list of ndarray or None
        Per joint, (K_j, 3) tension, continuity and bias of its keys, as
        fitted; None where all are zero.
    rotation_tangents, translation_tangents : list of ndarray or None
        Per joint, (K_j, 3) each key's fitted tangent per unit time, the
        same arriving and leaving (C1 Hermite keys: see the `tangents`
        argument of `RotationSpline` and `PositionSpline`); None where the
        keys carry TCB instead.
    """

    names: list[str]
    frame_time: float
    num_frames: int
    key_frames: list[NDArray[np.intp]]
    rotations: list[NDArray[np.float64]]
    translations: list[NDArray[np.float64]]
    max_angle: NDArray[np.float64]
    max_distance: NDArray[np.float64]
    max_position: Optional[NDArray[np.float64]] = None
    rotation_tcb: Optional[list[NDArray[np.float64]]] = None
    translation_tcb: Optional[list[NDArray[np.float64]]] = None
    rotation_tangents: Optional[list[NDArray[np.float64]]] = None
    translation_tangents: Optional[list[NDArray[np.float64]]] = None

    @property
    def num_keys(self) -> int:
        return sum(len(k) for k in self.key_frames)

    @property
    def ratio(self) -> float:
        """Keys kept per original joint-frame."""
        return self.num_keys / (len(self.names) * self.num_frames)

    def rebuild(self, times: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The clip's local rotations and translations, rebuilt from the keys.

        Parameters
        ----------
        times : array_like (M,)
            Seconds, 0 at the first frame.

        Returns
        -------
        rotations : ndarray (J, M, 4)
            By a RotationSpline through each joint's keys, with their TCB
            or tangents.
        translations : ndarray (J, M, 3)
            By a PositionSpline through each joint's keys, with their TCB
            or tangents.
        """
        curves = [self.splines(j) for j in range(len(self.names))]
        return (np.stack([rotation(times) for rotation, _ in curves]),
                np.stack([translation(times) for _, translation in curves]))

    def splines(self, j: int, scale: float = 1.0) -> tuple[RotationSpline, PositionSpline]:
        """Joint j's splines through its keys, with their TCB or tangents.

        Parameters
        ----------
        j : int
            The joint's index.
        scale : float
            Multiplies the translations (and their tangents).

        Returns
        -------
        rotation : RotationSpline
        translation : PositionSpline
            Both in seconds from 0 at the first frame.
        """
        _check_fitted_rows(self)
        key_times = self.key_frames[j] * self.frame_time
        q, x = self.rotations[j], self.translations[j] * scale
        if self.rotation_tangents is not None and self.translation_tangents is not None:
            rotation, translation = self.rotation_tangents[j], self.translation_tangents[j] * scale
            return (RotationSpline(key_times, q, tangents=(rotation, rotation)),
                    PositionSpline(key_times, x, tangents=(translation, translation)))
        zero = np.zeros((len(key_times), 3))
        rtcb = zero if self.rotation_tcb is None else self.rotation_tcb[j]
        ttcb = zero if self.translation_tcb is None else self.translation_tcb[j]
        return RotationSpline(key_times, q, *rtcb.T), PositionSpline(key_times, x, *ttcb.T)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reduction:
        """The Reduction that `to_json` wrote.

        Parameters
        ----------
        data : dict
            As ``json.load`` gives it back.

        Returns
        -------
        Reduction

        Raises
        ------
        ValueError
            Naming what is missing or malformed.
        """
        _check_json_version(data)
        try:
            joints = data["joints"]
            if data.get("quaternion_order", "wxyz") != "wxyz":
                raise ValueError(f"quaternion_order {data['quaternion_order']!r} is not 'wxyz'")

            def rows(name, width):
                return [np.asarray(j[name], dtype=np.float64).reshape(-1, width) for j in joints]

            def column(name):
                return np.array([float(j[name]) for j in joints])

            def given(name):
                return all(name in j for j in joints)

            out = cls(
                names=[str(j["name"]) for j in joints], frame_time=float(data["frame_time"]),
                num_frames=int(data["num_frames"]),
                key_frames=[np.asarray(j["key_frames"], dtype=np.intp) for j in joints],
                rotations=rows("rotations", 4), translations=rows("translations", 3),
                # radians where written (exact), else degrees (older files)
                max_angle=np.array([float(j["max_angle"]) if "max_angle" in j
                                    else math.radians(float(j["max_angle_deg"]))
                                    for j in joints]),
                max_distance=column("max_distance"),
                max_position=column("max_position") if given("max_position") else None,
                **{name: rows(name, 3) if given(name) else None for name in _FITTED_ROWS})
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a reduction written by Reduction.to_json: {exc!r}") from None
        _check_fitted_rows(out)
        for j, (name, keys, q, x) in enumerate(zip(out.names, out.key_frames, out.rotations,
                                                  out.translations)):
            fitted = [getattr(out, n)[j] for n in _FITTED_ROWS if getattr(out, n) is not None]
            if (keys.ndim != 1 or len(keys) < 2 or len(q) != len(keys) or len(x) != len(keys)
                    or any(len(t) != len(keys) or not np.isfinite(t).all() for t in fitted)
                    or keys[0] != 0 or keys[-1] != out.num_frames - 1
                    or np.any(np.diff(keys) <= 0)):
                raise ValueError(f"joint {name!r}: its key frames must rise from 0 to "
                                 f"num_frames - 1, with a rotation, translation and any "
                                 f"TCB or tangents each, finite")
        return out

    def to_gltf(self, motion: Motion, path: Any = None, **options: Any) -> Any:
        """Writes the reduced curves as glTF; see
        `kbspline.formats.gltf.reduction_to_gltf` (the same arguments after
        this reduction).

        Parameters
        ----------
        motion : Motion
            The clip this reduces (its hierarchy).
        path : str or os.PathLike, optional
            ``.gltf`` or ``.glb``; None to only return the document.
        **options
            ``angle_tolerance``, ``scale``.

        Returns
        -------
        GltfExport
        """
        from ..formats.gltf import reduction_to_gltf
        return reduction_to_gltf(self, motion, path, **options)

    def to_json(self) -> dict[str, Any]:
        """A dict for json.dump: per joint, its key frames, values and TCB or
        tangents."""
        optional = {name: getattr(self, name) for name in _FITTED_ROWS}
        return {"format": JSON_FORMAT, "version": JSON_VERSION,
                "frame_time": self.frame_time, "num_frames": self.num_frames,
                "ratio": self.ratio, "quaternion_order": "wxyz",
                "joints": [{"name": n, "key_frames": k.tolist(), "rotations": q.tolist(),
                            "translations": x.tolist(), "max_angle": float(a),
                            "max_angle_deg": float(np.degrees(a)),
                            "max_distance": float(d),
                            **({} if self.max_position is None
                               else {"max_position": float(self.max_position[j])}),
                            **{name: rows[j].tolist() for name, rows in optional.items()
                               if rows is not None}}
                           for j, (n, k, q, x, a, d) in enumerate(zip(
                               self.names, self.key_frames, self.rotations, self.translations,
                               self.max_angle, self.max_distance))]}


# What Reduction.to_json writes: version 1 (no version field) carries TCB
# rows alone, 2 tangents too; a reader of 1 would take tangent keys for
# zero TCB, so from_json refuses versions above its own.
JSON_FORMAT = "kbspline.reduction"
JSON_VERSION = 2
# A joint's fitted rows, written and read where every joint has them.
_FITTED_ROWS = ("rotation_tcb", "translation_tcb", "rotation_tangents", "translation_tangents")


def _check_json_version(data):
    """Refuses JSON of another format, or of a later version of this one
    (which may carry rows this reader would drop unseen)."""
    if not isinstance(data, dict):
        raise ValueError(f"not a reduction written by Reduction.to_json: a "
                         f"{type(data).__name__}, not a dict")
    if data.get("format", JSON_FORMAT) != JSON_FORMAT:
        raise ValueError(f"format {data['format']!r} is not {JSON_FORMAT!r}")
    version = data.get("version", 1)
    if type(version) is not int or not 1 <= version <= JSON_VERSION:
        raise ValueError(f"version {version!r} of {JSON_FORMAT!r}: this kbspline reads "
                         f"versions 1 to {JSON_VERSION}; a later kbspline wrote it?")


def _check_fitted_rows(reduction):
    """Refuses fitted rows that do not come as a pair of one kind: TCB of
    both channels or tangents of both, not one alone nor both kinds (a
    rebuild would otherwise take other curves than the reduction's)."""
    rotation_tcb, translation_tcb, rotation_tangents, translation_tangents = (
        getattr(reduction, name) is not None for name in _FITTED_ROWS)
    if (rotation_tcb != translation_tcb or rotation_tangents != translation_tangents
            or (rotation_tcb and rotation_tangents)):
        raise ValueError("a reduction's fitted rows come as rotation_tcb with translation_tcb, "
                         "or rotation_tangents with translation_tangents, for every joint: "
                         "not one of a pair, nor both kinds")


def _key_joint(frames, tolerances, fit, moving):
    """One joint's keys in local mode, from its frames (times, (1, F, 4)
    rotations, (1, F, 3) translations) and tolerances (angle, distance):
    (keys, rotation rows, translation rows, then its rebuilt curves (F, 4)
    and (F, 3) and their errors at every frame, kb_reduce_rebuild's).  The
    rows are tangents (None for greedy keys); the translation curve None
    where the joint does not move, as forward kinematics takes its OFFSET."""
    if not fit:  # the frame worst out of tolerance keyed in turn
        choice = (_core.reduce_greedy(*frames, *np.array(tolerances)[:, None])[0][0], None, None)
    else:  # swept in one pass, then keys dropped with their neighbours refitted
        choice = _core.reduce_sweep(*frames, *tolerances)
        if len(choice[0]) > 2:
            choice = _core.reduce_drop(*frames, *tolerances, *choice, False)[:3]
    return choice + _core.reduce_rebuild(*frames, *choice, True, moving, None, fit)


def _each_joint(work, J, threads, progress=None):
    """[work(j) for j in range(J)] on up to `threads` threads (the core
    releases the GIL and the joints are independent: the results are the
    same on any number), progress(done, J) as each is done, in joint
    order.  Stopped (an error, Ctrl-C), it runs none of the joints queued
    on, and raises once those running are done."""
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    results = []
    try:
        for result in (pool.map if pool else map)(work, range(J)):
            results.append(result)
            if progress:
                progress(len(results), J)
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    return results


GREEDY_THREADS_FROM = 100  # frames from which local greedy keys run on threads
FIT_THREADS_FROM = 50      # frames from which local fitted keys run on threads


def _local_reduction(motion, rotations, translations, tolerances, fit, progress):
    """reduce_keys without `position_tolerance`: each joint keyed alone
    under `tolerances` (angle, distance), then its world error measured."""
    moving = [moves(joint) for joint in motion.joints]
    J, threads_from = len(moving), FIT_THREADS_FROM if fit else GREEDY_THREADS_FROM
    chosen = _each_joint(
        lambda j: _key_joint((motion.times, rotations[j:j + 1], translations[j:j + 1]),
                             tolerances, fit, moving[j]),
        J, min(get_num_threads(), J) if motion.num_frames >= threads_from else 1, progress)
    keys, rotation_rows, translation_rows, curve_q, curve_x, angle, distance = (
        list(column) for column in zip(*chosen))
    result = _keyed(motion, rotations, translations, keys, np.array([a.max() for a in angle]),
                    # a joint its OFFSET places has no translation curve: no distance error
                    np.array([d.max() if m else 0.0 for d, m in zip(distance, moving)]),
                    WorldError(motion, rotations, translations).errors(zip(curve_q, curve_x)),
                    rotation_rows if fit else None, translation_rows if fit else None)
    for name, tolerance, worst in zip(("angle_tolerance", "distance_tolerance"), tolerances,
                                      (result.max_angle, result.max_distance)):
        if not worst.max() <= tolerance:  # every frame a key: rounding's errors
            raise ValueError(f"{name}={tolerance!r} is below what the splines reproduce even "
                             f"keyed at every frame ({worst.max():.3g}): give a larger one")
    return result


def _keyed(motion, rotations, translations, keys, angle, distance, position,
           rotation_rows=None, translation_rows=None):
    """The Reduction of these keys per joint of the clip's rotations and
    translations, with their worst errors and fitted tangents (None for
    greedy keys)."""
    return Reduction([j.name for j in motion.joints], motion.frame_time, motion.num_frames,
                     keys, [q[k] for q, k in zip(rotations, keys)],
                     [x[k] for x, k in zip(translations, keys)], angle, distance, position,
                     None, None, rotation_rows, translation_rows)


def reduce_keys(motion: Motion, angle_tolerance: Optional[float] = None,
                distance_tolerance: Optional[float] = None,
                progress: Optional[Callable[[int, int], None]] = None, *,
                position_tolerance: Optional[float] = None,
                virtual_distance: Optional[float] = None,
                fit: Union[bool, str] = True) -> Reduction:
    """Keeps, per joint, few key frames whose splines stay within a
    tolerance of every original frame.

    Parameters
    ----------
    motion : Motion
        The clip, of at least two frames.
    angle_tolerance : float, optional
        Largest rotation error of any joint's local rotation, radians.
    distance_tolerance : float, optional
        Largest error of any joint's local translation, in the clip's units.
    progress : callable, optional
        ``progress(done, total)``, called as joints finish, in joint order
        (local mode), or as the passes of the world-space search finish.
        An exception it raises (or Ctrl-C) stops the reduction.
    position_tolerance : float, optional
        Largest world-space error, in the clip's units, of every joint,
        End Site and virtual vertex in every frame, by forward kinematics.
        With it, `angle_tolerance` and `distance_tolerance` are optional
        local caps on top.
    virtual_distance : float, optional
        With `position_tolerance`: also measure at three virtual vertices
        per joint, this far along its local axes (as ACL does), so that a
        joint's own turn counts even where nothing hangs below it.
    fit : bool or {'tangents', 'tcb'}
        True or 'tangents' (the default) fits each kept key's tangent by
        least squares (C1 Hermite keys, `Reduction.rotation_tangents` and
        `translation_tangents`) and keeps fewer keys; False keeps the
        greedy choice (Kochanek-Bartels keys with zero TCB).  'tcb' is
        deprecated: it runs the tangent fit (tangent keys keep fewer keys
        in less time; see docs/guide/motion.md).

    Returns
    -------
    Reduction
        The key frames and values, the worst local errors, and the worst
        world-space error of each joint's points (`max_position`).

    Raises
    ------
    ValueError
        A tolerance that is not positive and finite, or below what the
        splines reproduce even keyed at every frame (rounding's errors),
        neither `position_tolerance` nor both local tolerances, a clip of
        fewer than two frames or of no joints, or a frame that is not finite.

    Notes
    -----
    Local mode keys each joint alone: greedy keys add the frame worst out
    of tolerance until every frame is within both tolerances; tangent keys
    are swept in one pass from the first frame (each segment as long as a
    cubic with a fitted end tangent stays within tolerance), then each key
    is dropped whose frames stay within tolerance once the keys beside it
    are refitted.

    World mode splits `position_tolerance` into per-joint local tolerances
    that bound the world error to first order, and scales them all alike:
    tangent keys are swept at twice them, halved until every point of every
    frame stays within `position_tolerance` by forward kinematics; then
    each joint in turn, most keys first, drops keys under its tolerances
    loosened by 2, then 1.68, then as they are, keeping the pieces of the
    new keys that hold the bound.  Greedy keys (``fit=False``, or where no
    swept scale holds) search the largest common scale by halving,
    doubling and bisecting, then loosen each joint by 2, 1.41, 1.19 and
    1.09 where the bound holds.  Both searches run in C.  Neither is
    guaranteed minimal; the bound is guaranteed.
    """
    check_motion(motion, "motion")
    angle_tolerance = _check_positive("angle_tolerance", angle_tolerance)
    distance_tolerance = _check_positive("distance_tolerance", distance_tolerance)
    position_tolerance = _check_positive("position_tolerance", position_tolerance)
    virtual_distance = _check_positive("virtual_distance", virtual_distance)
    if position_tolerance is None and (angle_tolerance is None or distance_tolerance is None):
        raise ValueError("give position_tolerance (world space), or both angle_tolerance and "
                         "distance_tolerance (local)")
    if virtual_distance is not None and position_tolerance is None:
        raise ValueError("virtual_distance needs position_tolerance")
    if motion.num_frames < 2:
        raise ValueError(f"the clip has {motion.num_frames} frame(s); reducing needs at least 2")
    if not motion.joints:
        raise ValueError("the clip has no joints: reducing needs at least one")
    if not np.isfinite(motion.frames).all():
        frame, column = np.argwhere(~np.isfinite(motion.frames))[0]
        raise ValueError(f"motion.frames[{frame}, {column}] is {motion.frames[frame, column]}: "
                         f"reducing needs finite frames")
    if not isinstance(fit, (bool, np.bool_)) and fit not in ("tangents", "tcb"):
        raise TypeError(f"fit must be True, False, 'tangents' or 'tcb', not {fit!r}")
    if fit == "tcb":
        warnings.warn("fit='tcb' is deprecated and runs the tangent fit (fit=True), which "
                      "keeps fewer keys in less time", DeprecationWarning, stacklevel=2)
    fit = fit is not False and fit is not np.False_
    rotations = np.ascontiguousarray(motion.rotations())
    translations = np.ascontiguousarray(motion.translations())
    if position_tolerance is None:
        return _local_reduction(motion, rotations, translations,
                                (angle_tolerance, distance_tolerance), fit, progress)
    # caps given with it that no frame keyed reaches are refused in C too
    return _world_reduction(motion, rotations, translations, position_tolerance,
                            angle_tolerance, distance_tolerance, virtual_distance, fit, progress)


def _world_reduction(motion, rotations, translations, position_tolerance, angle_cap,
                     distance_cap, virtual_distance, fit, progress):
    """reduce_keys with `position_tolerance`, in C (kb_reduce_clip): the
    swept search with tangent keys, else (or with fit False) the greedy
    search, else every frame a key.  progress(done, total) as passes end:
    the swept passes count from 1 and their loosening ends at `total`; the
    greedy passes count on from the swept ones tried."""
    joints = motion.joints
    sites = [joint.end_site for joint in joints if joint.end_site is not None]
    keys, rotation_rows, translation_rows, position, angle, distance = _core.reduce_clip(
        rotations, translations, motion.frame_time,
        np.array([joint.parent for joint in joints], dtype=np.intp),
        np.array([moves(joint) for joint in joints]),
        np.array([joint.offset for joint in joints], dtype=np.float64),
        np.array([joint.end_site is not None for joint in joints], dtype=np.intp),
        np.array(sites, dtype=np.float64).reshape(-1, 3), position_tolerance,
        angle_cap or 0.0, distance_cap or 0.0, virtual_distance or 0.0, not fit,
        min(get_num_threads(), len(joints)), progress)
    return _keyed(motion, rotations, translations, keys, angle, distance, position,
                  rotation_rows, translation_rows)
