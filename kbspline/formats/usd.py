"""USD export of motion clips as UsdSkel (``pip install kbspline[usd]``,
which installs Pixar's ``usd-core`` wheel).

A clip becomes a SkelRoot holding a Skeleton (a joint per BVH joint and one
per End Site, named ``<joint>_end``, joint paths following the hierarchy,
rest and bind transforms from the offsets with every rotation at rest) and
a SkelAnimation bound to it: joint rotations as quatf time samples,
translations as float3 samples, scales 1.  A SkelAnimation stores every
joint per time sample, so all joints share sample times: those of
`kbspline.formats.adaptive.linear_keys` over the whole skeleton, where
USD's linear interpolation (slerp of neighbouring quaternion samples along
the shorter arc, lerp of translations) stays within `angle_tolerance` of
the squad splines through the frames and within `distance_tolerance` of
the root's KB spline.  Time codes are frames: timeCodesPerSecond is the
clip's frame rate, so sample times between frames are fractional codes.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Optional, Union

import numpy as np
from numpy.typing import NDArray

from .._checks import _check_positive
from ..motion.clip import POSITION_CHANNELS, Motion, check_motion
from ..motion.kinematics import local_offsets
from ..position import PositionSpline
from ..rotation import RotationSpline
from .adaptive import linear_keys, playback_error
from .gltf import DEFAULT_ANGLE_TOLERANCE

__all__ = ["motion_to_usd", "UsdExport"]

_SUFFIXES = (".usda", ".usdc", ".usd")


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
        Per BVH joint, the largest angle between USD's playback and the
        rotation splines, measured densely between samples.
    max_distance : float
        The largest distance between the playback of animated translations
        and their splines (0 without position channels).
    """
    path: pathlib.Path
    joints: list[str]
    times: NDArray[np.float64]
    max_angle: NDArray[np.float64]
    max_distance: float


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
        In the clip's units, for the root's translation (default:
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

    Raises
    ------
    ValueError
        For a bad suffix, a clip of fewer than 2 frames, a non-positive
        tolerance, or joint names that are not unique as USD paths.
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
    names = _joint_paths(motion)
    offsets = local_offsets(motion)                                      # (J, F, 3)
    rest = np.array([j.offset for j in motion.joints])
    ends = [j for j, joint in enumerate(motion.joints) if joint.end_site is not None]
    end_offsets = np.array([motion.joints[j].end_site for j in ends]).reshape(-1, 3)
    all_rest = np.concatenate([rest, end_offsets])
    bind = _rest_world(motion, all_rest, ends)
    roots = _roots(motion, ends)
    reach = float(np.linalg.norm(bind - bind[roots], axis=-1).max())
    distance = _check_positive("distance_tolerance", distance_tolerance, angle * max(reach, 1e-300))

    rotations = RotationSpline(motion.times, motion.rotations(), tension, continuity, bias)
    moving = [j for j, joint in enumerate(motion.joints)
              if any(c in POSITION_CHANNELS for c in joint.channels)]
    translations = (PositionSpline(motion.times, offsets[moving], tension, continuity, bias)
                    if moving else None)
    times = linear_keys(rotations, angle, shared=True)[0]
    if translations is not None:
        times = np.union1d(times, linear_keys(translations, distance, shared=True)[0])

    quats = _sign_continuous(rotations(times))                           # (J, N, 4) wxyz
    moved = np.broadcast_to(rest[:, None, :], (len(rest), len(times), 3)).copy()
    if translations is not None:
        moved[moving] = translations(times)

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
    animation = UsdSkel.Animation.Define(stage, "/Root/Skeleton/Animation")
    tokens = Vt.TokenArray(names)
    skeleton.CreateJointsAttr(tokens)
    skeleton.CreateRestTransformsAttr(Vt.Matrix4dArray(
        [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*row)) for row in all_rest.tolist()]))
    skeleton.CreateBindTransformsAttr(Vt.Matrix4dArray(
        [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*row)) for row in bind.tolist()]))
    animation.CreateJointsAttr(tokens)
    rotation_attr = animation.CreateRotationsAttr()
    translation_attr = animation.CreateTranslationsAttr()
    n_ends = len(ends)
    identity = np.tile([1.0, 0.0, 0.0, 0.0], (n_ends, 1))
    for i, t in enumerate(times):
        code = Usd.TimeCode(float(t) * fps)
        q = np.concatenate([quats[:, i], identity])
        rotation_attr.Set(Vt.QuatfArray([Gf.Quatf(*row) for row in q.tolist()]), code)
        x = np.concatenate([moved[:, i], end_offsets])
        translation_attr.Set(Vt.Vec3fArray.FromNumpy(x.astype(np.float32)), code)
    animation.CreateScalesAttr(Vt.Vec3hArray([Gf.Vec3h(1, 1, 1)] * len(names)))
    UsdSkel.BindingAPI.Apply(skeleton.GetPrim()).CreateAnimationSourceRel().SetTargets(
        [animation.GetPath()])
    UsdSkel.BindingAPI.Apply(root.GetPrim()).CreateSkeletonRel().SetTargets(
        [skeleton.GetPath()])
    if not stage.GetRootLayer().Export(str(path)):
        raise OSError(f"could not write {path}")
    max_distance = (float(playback_error(translations, [times]).max())
                    if translations is not None else 0.0)
    return UsdExport(path, names, times, playback_error(rotations, [times]), max_distance)


def _joint_paths(motion):
    """UsdSkel joint paths: each joint's ancestors' names and its own,
    joined by '/', then each End Site as '<joint path>/<joint>_end'."""
    paths = []
    for joint in motion.joints:
        name = _usd_name(joint.name)
        paths.append(name if joint.parent < 0 else f"{paths[joint.parent]}/{name}")
    ends = [f"{paths[j]}/{_usd_name(joint.name)}_end" for j, joint in enumerate(motion.joints)
            if joint.end_site is not None]
    if len(set(paths + ends)) != len(paths + ends):
        raise ValueError("the clip's joint paths are not unique as USD paths (joint names "
                         "become letters, digits and '_')")
    return paths + ends


def _usd_name(name):
    """A joint name as a USD path element: letters, digits and '_' only."""
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return safe if safe and not safe[0].isdigit() else "_" + safe


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
