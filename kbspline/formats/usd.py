"""USD export of motion clips as UsdSkel (``pip install kbspline[usd]``,
which installs Pixar's ``usd-core`` wheel).

A clip becomes a SkelRoot holding a Skeleton (a joint per BVH joint and one
per End Site, joint paths following the hierarchy, rest and bind transforms
from the offsets with every rotation at rest) and a SkelAnimation bound to
it: joint rotations as quatf time samples, translations as float3 samples,
scales 1.  Joint names become USD identifiers (ASCII letters, digits and
'_', not starting with a digit; an End Site is ``<joint>_end``), made
unique among siblings by a suffix ``_2``, ``_3``...; the Skeleton's
``jointNames`` keeps the clip's own names.

A SkelAnimation stores every joint per time sample, so all joints share one
increasing list of sample times, never closer than
`kbspline.formats.adaptive.MIN_KEY_SPACING` unless two frames are: those of
`kbspline.formats.adaptive.linear_keys` for the rotations and the animated
translations together, where USD's linear interpolation (slerp of
neighbouring quaternion samples along the shorter arc, lerp of
translations) stays within `angle_tolerance` of the squad splines through
the frames and within `distance_tolerance` of the KB splines of the
translations.  Where float32 cannot hold a root's translations to that
tolerance (a clip far from the origin), the Skeleton's own transform, a
double-precision translate, carries the clip's centre and the samples
what is left.  Time codes are frames: timeCodesPerSecond is the clip's
frame rate, so sample times between frames are fractional codes.
"""
from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import re
import warnings
from typing import Optional, Union

import numpy as np
from numpy.typing import NDArray

from .._checks import _check_positive
from ..motion.clip import POSITION_CHANNELS, Motion, check_motion
from ..motion.kinematics import local_offsets
from ..position import PositionSpline
from ..rotation import RotationSpline
from .adaptive import CHECKS, MIN_KEY_SPACING, _check, linear_keys
from .gltf import DEFAULT_ANGLE_TOLERANCE
from .report import missed_channels

__all__ = ["motion_to_usd", "UsdExport"]

_SUFFIXES = (".usda", ".usdc", ".usd")
# float32 storage and USD's float32 lerp of a root's translations (about
# three float32 spacings) may take at most ~1/20 of distance_tolerance,
# else the Skeleton's transform takes the centre of the clip.
_SPACINGS_PER_TOLERANCE = 64
# Rounds of placing rotation then translation keys in the shared list
# (keys only split intervals; a second round rarely adds any).
_SAMPLE_ROUNDS = 3
# Float64 values evaluated at once when measuring translation playback.
_BLOCK_VALUES = 1 << 22
# UsdSkel interpolates quatf samples by GfSlerp, which lerps without
# normalising where 1 - cos(angle between the quaternions) is at most this.
_GF_SLERP_LERP = 1e-5


@dataclasses.dataclass(frozen=True)
class UsdExport:
    """What `motion_to_usd` wrote.

    Attributes
    ----------
    path : pathlib.Path
        The file.
    joints : list of str
        The Skeleton's joint paths, End Sites included.
    times : ndarray (N,)
        The sample times, seconds (time codes are times x fps).
    max_angle : ndarray (J,)
        Per BVH joint, radians: how far UsdSkel's joint rotation moves a
        unit vector from the rotation spline's, at most, measured densely
        between samples.  Beside the slerp of float32 samples it counts
        GfSlerp's lerp of nearly equal samples, which UsdSkel turns into a
        matrix ``|q|^2 R + (1 - |q|^2) I`` without normalising (up to 1e-5 from
        a rotation); the float32 rounding of that matrix (about 1e-7) aside.
    max_distance : float
        The largest distance between UsdSkel's playback of animated
        translations (float32 samples, float32 lerp, plus the Skeleton's
        translate) and their splines (0 without position channels).
    max_error : dict
        ``{(joint name, "rotation" or "translation"): error}`` per animated
        channel, as `GltfExport.max_error` has it: radians for rotations, the
        clip's units for translations (of joints sharing a name, the
        largest).
    tolerances : dict
        ``{(joint name, path): tolerance}`` for the same channels, in the
        same units.
    joint_names : list of str
        The clip's own names for `joints` (``<joint>_end`` for End Sites),
        also written as the Skeleton's ``jointNames``.
    origin : ndarray (3,)
        The Skeleton's translate (zero unless float32 could not hold the
        clip's root translations to the tolerance).
    """
    path: pathlib.Path
    joints: list[str]
    times: NDArray[np.float64]
    max_angle: NDArray[np.float64]
    max_distance: float
    max_error: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict)
    tolerances: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict)
    joint_names: list[str] = dataclasses.field(default_factory=list)
    origin: NDArray[np.float64] = dataclasses.field(default_factory=lambda: np.zeros(3))

    @property
    def missed(self) -> dict[tuple[str, str], float]:
        """``{(joint name, path): error}`` of the channels beyond their tolerance."""
        return {key: error for key, error in self.max_error.items()
                if error > self.tolerances[key] * (1 + 1e-6)}


def motion_to_usd(motion: Motion, path: Union[str, os.PathLike[str]], *,
                  angle_tolerance: Optional[float] = None,
                  distance_tolerance: Optional[float] = None,
                  meters_per_unit: float = 0.01, tension: float = 0.0,
                  continuity: float = 0.0, bias: float = 0.0) -> UsdExport:
    """Writes a clip as a UsdSkel stage (.usda text, .usdc or .usd binary).

    Parameters
    ----------
    motion : Motion
        The clip, of at least 2 frames.
    path : str or os.PathLike
        The file to write.
    angle_tolerance : float, optional
        Radians (default DEFAULT_ANGLE_TOLERANCE, 1e-4): how far USD's
        playback of joint rotations may stray from the squad splines through
        the frames, at any time.
    distance_tolerance : float, optional
        In the clip's units, for animated translations (default:
        angle_tolerance times the skeleton's reach, the distance its farthest
        joint stands from the root at rest, so that both errors move the
        joints alike).
    meters_per_unit : float
        The stage's metersPerUnit (BVH clips are mostly in centimetres: 0.01).
        upAxis is Y, as in BVH.
    tension, continuity, bias : float
        Of the splines through the frames.

    Returns
    -------
    UsdExport
        With the error of every animated channel as UsdSkel plays it.

    Warns
    -----
    UserWarning
        One line naming the channels whose playback misses its tolerance
        (keys would have had to come closer than MIN_KEY_SPACING, or float32
        cannot hold it), in degrees and in the clip's units.

    Raises
    ------
    ValueError
        For a bad suffix, a clip of fewer than 2 frames, a non-positive
        tolerance, a joint name USD cannot store (a NUL character, a lone
        surrogate) or translations beyond float32 once centred.
    ImportError
        Without the ``usd`` extra (usd-core).
    """
    check_motion(motion, "motion")
    from pxr import Gf, Usd, UsdGeom, UsdSkel, Vt

    path = pathlib.Path(path)
    if path.suffix not in _SUFFIXES:
        raise ValueError(f"path must end in one of {_SUFFIXES}, not {path.suffix!r}")
    if motion.num_frames < 2:
        raise ValueError("motion_to_usd needs a clip of at least 2 frames")
    meters_per_unit = _check_positive("meters_per_unit", meters_per_unit)
    angle = _check_positive("angle_tolerance", angle_tolerance, DEFAULT_ANGLE_TOLERANCE)
    paths, names = _joint_paths(motion)
    offsets = local_offsets(motion)                                      # (J, F, 3)
    rest = np.array([j.offset for j in motion.joints])
    ends = [j for j, joint in enumerate(motion.joints) if joint.end_site is not None]
    end_offsets = np.array([motion.joints[j].end_site for j in ends]).reshape(-1, 3)
    roots = _roots(motion, ends)
    bind = _rest_world(motion, np.concatenate([rest, end_offsets]), ends)
    reach = float(np.linalg.norm(bind - bind[roots], axis=-1).max())
    distance = _check_positive("distance_tolerance", distance_tolerance, angle * max(reach, 1e-300))

    moving = [j for j, joint in enumerate(motion.joints)
              if any(c in POSITION_CHANNELS for c in joint.channels)]
    origin = _origin(motion, offsets, distance)
    is_root = np.array([joint.parent < 0 for joint in motion.joints])
    rest[is_root] -= origin
    offsets[is_root] -= origin
    bind -= origin
    rotations = RotationSpline(motion.times, motion.rotations(), tension, continuity, bias)
    translations = (PositionSpline(motion.times, offsets[moving], tension, continuity, bias)
                    if moving else None)
    times = _sample_times(rotations, angle, translations, distance)

    quats = _sign_continuous(rotations(times))                           # (J, N, 4) wxyz
    moved = np.broadcast_to(rest[:, None, :], (len(rest), len(times), 3)).copy()
    if translations is not None:
        moved[moving] = translations(times)
    sites = np.broadcast_to(end_offsets[:, None], (len(ends),) + moved.shape[1:])
    stored = _as_float32(np.concatenate([moved, sites]), names)         # (J + E, N, 3)

    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    fps = 1.0 / motion.frame_time
    stage.SetTimeCodesPerSecond(fps)
    stage.SetFramesPerSecond(fps)
    stage.SetStartTimeCode(0.0)
    stage.SetEndTimeCode((motion.num_frames - 1))
    root = UsdSkel.Root.Define(stage, "/Root")
    stage.SetDefaultPrim(root.GetPrim())
    skeleton = UsdSkel.Skeleton.Define(stage, "/Root/Skeleton")
    if np.any(origin):
        skeleton.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*origin.tolist()))
    animation = UsdSkel.Animation.Define(stage, "/Root/Skeleton/Animation")
    tokens = Vt.TokenArray(paths)
    skeleton.CreateJointsAttr(tokens)
    skeleton.CreateJointNamesAttr(Vt.TokenArray(names))
    all_rest = np.concatenate([rest, end_offsets])
    skeleton.CreateRestTransformsAttr(Vt.Matrix4dArray(
        [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*row)) for row in all_rest.tolist()]))
    skeleton.CreateBindTransformsAttr(Vt.Matrix4dArray(
        [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*row)) for row in bind.tolist()]))
    animation.CreateJointsAttr(tokens)
    rotation_attr = animation.CreateRotationsAttr()
    translation_attr = animation.CreateTranslationsAttr()
    identity = np.tile([1.0, 0.0, 0.0, 0.0], (len(ends), 1))
    for i, t in enumerate(times):
        code = Usd.TimeCode(float(t) * fps)
        q = np.concatenate([quats[:, i], identity])
        rotation_attr.Set(Vt.QuatfArray([Gf.Quatf(*row) for row in q.tolist()]), code)
        translation_attr.Set(Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(stored[:, i])), code)
    animation.CreateScalesAttr(Vt.Vec3hArray([Gf.Vec3h(1, 1, 1)] * len(paths)))
    UsdSkel.BindingAPI.Apply(skeleton.GetPrim()).CreateAnimationSourceRel().SetTargets(
        [animation.GetPath()])
    UsdSkel.BindingAPI.Apply(root.GetPrim()).CreateSkeletonRel().SetTargets(
        [skeleton.GetPath()])
    if not stage.GetRootLayer().Export(str(path)):
        raise OSError(f"could not write {path}")

    max_angle = _rotation_errors(rotations, quats, times)
    max_error: dict[tuple[str, str], float] = {}
    tolerances: dict[tuple[str, str], float] = {}
    _note(max_error, tolerances, [j.name for j in motion.joints], "rotation", max_angle, angle)
    max_distance = 0.0
    if translations is not None:
        played = _translation_errors(translations, stored[moving], times)
        _note(max_error, tolerances, [motion.joints[j].name for j in moving], "translation",
              played, distance)
        max_distance = float(played.max())
    report = UsdExport(path, paths, times, max_angle, max_distance, max_error, tolerances,
                       names, origin)
    _warn_misses(report)
    return report


def _joint_paths(motion):
    """(paths, names): UsdSkel joint paths, each joint's ancestors' USD
    names and its own joined by '/', then each End Site's; and the clip's
    own names for them ('<joint>_end' for End Sites)."""
    joints = motion.joints
    for j, joint in enumerate(joints):
        if "\x00" in joint.name or not _utf8(joint.name):
            raise ValueError(f"joint {j}'s name {joint.name!r} has a NUL character or a lone "
                             f"surrogate, which USD's UTF-8 tokens cannot store")
    names = [j.name for j in joints] + [f"{j.name}_end" for j in joints if j.end_site is not None]
    owners = [j.parent for j in joints] + [j for j, joint in enumerate(joints)
                                           if joint.end_site is not None]
    usd = [""] * len(names)
    for parent in dict.fromkeys(owners):
        # a parent's joints come before its End Site, which yields its name
        mine = [i for i, owner in enumerate(owners) if owner == parent]
        for i, name in zip(mine, _unique([_usd_name(names[i]) for i in mine])):
            usd[i] = name
    paths = []
    for i, owner in enumerate(owners):
        paths.append(usd[i] if owner < 0 else f"{paths[owner]}/{usd[i]}")
    return paths, names


def _utf8(name):
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _usd_name(name):
    """A name as a USD identifier: ASCII letters, digits and '_', not
    starting with a digit (USD rejects 'arm²' though '²'.isalnum())."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return safe if safe and not safe[0].isdigit() else "_" + safe


def _unique(wanted):
    """`wanted` with each repeat given the first suffix _2, _3, ... that no
    other name takes or wants (a name wanted once, or first, is kept)."""
    taken, out = set(), []
    for name in wanted:
        chosen, k = name, 2
        while chosen in taken or (chosen != name and chosen in wanted):
            chosen, k = f"{name}_{k}", k + 1
        taken.add(chosen)
        out.append(chosen)
    return out


def _origin(motion, offsets, distance):
    """The Skeleton's translate: the centre of the root translations' range
    where float32 cannot hold them to the tolerance, else zero."""
    roots = [j for j, joint in enumerate(motion.joints) if joint.parent < 0]
    values = offsets[roots].reshape(-1, 3)
    # float32's spacing at the largest value: 2^(exponent - 24), 24 bits kept
    spacing = 2.0 ** (math.frexp(float(np.abs(values).max()))[1] - 24)
    if spacing * _SPACINGS_PER_TOLERANCE <= distance:
        return np.zeros(3)
    return 0.5 * (values.min(axis=0) + values.max(axis=0))


def _as_float32(translations, names):
    """(J + E, N, 3) translations as USD's float3, or a ValueError naming the
    first joint whose values float32 cannot hold."""
    with np.errstate(over="ignore"):
        stored = translations.astype(np.float32)
    finite = np.isfinite(stored).reshape(len(stored), -1).all(axis=1)
    if not finite.all():
        j = int(np.argmin(finite))
        raise ValueError(f"the translations of joint {names[j]!r} reach "
                         f"{np.abs(translations[j]).max():.3g} from the Skeleton's origin, beyond "
                         f"float32 (3.4e38), which UsdSkel stores them in")
    return stored


def _sample_times(rotations, angle, translations, distance):
    """One increasing list of sample times for the rotations and the
    translations: each spline's keys only split the intervals of the list so
    far (no two closer than MIN_KEY_SPACING), in turns until both accept it."""
    times = linear_keys(rotations, angle, shared=True, lerp_within=_GF_SLERP_LERP)[0]
    if translations is None:
        return times
    turns = [(rotations, angle), (translations, distance)]
    accepting = 1                   # splines in a row that added no key
    for turn in range(1, 2 * _SAMPLE_ROUNDS):
        if accepting == len(turns):
            break
        spline, tolerance = turns[turn % 2]
        grown = linear_keys(spline, tolerance, shared=True, start=times,
                            lerp_within=_GF_SLERP_LERP)[0]
        accepting = accepting + 1 if len(grown) == len(times) else 1
        times = grown
    return times


def _translation_errors(spline, stored, times, checks=4 * CHECKS - 1):
    """(K,) the largest distance between each translation spline and
    UsdSkel's playback of its float32 samples `stored` (K, N, 3): USD lerps
    float3 values as (1 - a) x lo + a x hi, each product and the sum in
    float32."""
    u = np.linspace(0.0, 1.0, checks + 2)
    worst = np.zeros(len(stored))
    block = max(1, _BLOCK_VALUES // (len(stored) * len(u) * 3))
    for first in range(0, len(times) - 1, block):
        lo_t, hi_t = times[first:first + block], times[first + 1:first + block + 1]
        lo_t = lo_t[:len(hi_t)]
        t = lo_t[:, None] + (hi_t - lo_t)[:, None] * u
        t[:, -1] = hi_t
        lo = stored[:, first:first + len(hi_t), None, :].astype(np.float64)
        hi = stored[:, first + 1:first + 1 + len(hi_t), None, :].astype(np.float64)
        a = u[None, None, :, None]
        played = (((1 - a) * lo).astype(np.float32) + (a * hi).astype(np.float32))
        truth = spline(t.ravel()).reshape(played.shape)
        error = np.linalg.norm(played.astype(np.float64) - truth, axis=-1)
        worst = np.maximum(worst, error.reshape(len(stored), -1).max(axis=-1))
    return worst


def _rotation_errors(rotations, quats, times):
    """(J,) how far UsdSkel's joint rotations move a unit vector from the
    splines', at most: per interval, slerp of the float32 samples against
    the spline (the core's check) plus, for the quaternion q UsdSkel
    builds a matrix from, |1 - |q|^2| times |I - R| (that matrix is
    |q|^2 R + (1 - |q|^2) I; GfSlerp's lerp branch leaves |q| < 1)."""
    starts, ends = times[:-1], times[1:]
    owner = np.zeros(len(starts), dtype=np.intp)
    worst = _check(rotations, starts, ends, owner, 1, 4 * CHECKS + 1)[0]
    worst = worst.reshape(len(quats), len(starts))
    q = quats.astype(np.float32).astype(np.float64)                     # as stored
    q0, q1 = q[:, :-1], q[:, 1:]
    a, b = np.sum(q0 * q0, axis=-1), np.sum(q1 * q1, axis=-1)
    c = np.sum(q0 * q1, axis=-1)
    lerps = 1.0 - np.abs(c) <= _GF_SLERP_LERP * (1 + 1e-3)   # float32 dot: either side
    # |q(alpha)|^2 of the lerp, a quadratic in alpha: its ends and its vertex
    c = np.abs(c)
    curve = a + b - 2 * c
    with np.errstate(invalid="ignore", divide="ignore"):
        vertex = np.clip(np.where(curve > 0, (a - c) / curve, 0.0), 0.0, 1.0)
    middle = (1 - vertex) ** 2 * a + 2 * vertex * (1 - vertex) * c + vertex ** 2 * b
    shrink = np.maximum(np.abs(1 - a), np.abs(1 - b))
    shrink = np.where(lerps, np.maximum(shrink, np.abs(1 - middle)), shrink)
    # |I - R| = 2 |sin(angle / 2)|: the larger end's, plus the interval's sweep
    turn = np.sqrt(np.maximum(np.sum(q0[..., 1:] ** 2, -1), np.sum(q1[..., 1:] ** 2, -1)))
    reach = 2 * np.minimum(1.0, turn + np.sqrt(np.maximum(0.0, 1 - c * c)))
    return (worst + shrink * reach).max(axis=-1)


def _note(max_error, tolerances, names, path, errors, tolerance):
    """Files each joint's error under (name, path), the largest for names
    shared by several joints."""
    for name, error in zip(names, np.asarray(errors, dtype=np.float64).tolist()):
        max_error[name, path] = max(error, max_error.get((name, path), 0.0))
        tolerances[name, path] = tolerance


def _warn_misses(report):
    """One warning naming the channels beyond their tolerance, in degrees
    and in the clip's units."""
    if not report.missed:
        return
    channels = missed_channels(report, units=", the clip's units")
    warnings.warn(f"{report.path}: UsdSkel's playback misses the tolerance on "
                  f"{len(report.missed)} channel(s): {channels}; meeting it would need keys "
                  f"closer than {MIN_KEY_SPACING} s or more precision than float32 holds",
                  UserWarning, stacklevel=3)


def _roots(motion, ends):
    """(J + E,) the root joint of each joint and End Site."""
    root = []
    for joint in motion.joints:
        root.append(len(root) if joint.parent < 0 else root[joint.parent])
    return np.array(root + [root[j] for j in ends])


def _rest_world(motion, all_rest, ends):
    """(J + E, 3) rest positions in the world: offsets summed up the chain."""
    world = np.zeros((len(all_rest), 3))
    for j, joint in enumerate(motion.joints):
        world[j] = all_rest[j] + (world[joint.parent] if joint.parent >= 0 else 0.0)
    for e, j in enumerate(ends):
        world[len(motion.joints) + e] = world[j] + all_rest[len(motion.joints) + e]
    return world


def _sign_continuous(q):
    """Each track's quaternions flipped to within 90 degrees of the one
    before, so that playback's slerp takes the same arc whichever way it
    treats signs."""
    q = q.copy()
    flips = np.cumsum(np.sum(q[:, 1:] * q[:, :-1], axis=-1) < 0, axis=1) % 2
    q[:, 1:][flips == 1] *= -1
    return q
