"""Scenes (3DS, LightWave) as USD transform hierarchies with cameras
(``pip install kbspline[usd]``).

Every node becomes a ``UsdGeom.Xform`` under its parent's prim, in glTF's
and USD's axes (Y up, right-handed: `convert.upright`), named as USD
identifiers made unique among siblings (`usd._usd_name`).  Its transform is
``xformOp:translate`` (double3), ``xformOp:orient`` (quatd) and
``xformOp:scale`` (double3), time-sampled where the scene animates them;
a pivot that the node's children inherit (LightWave) is a last op
``xformOp:translate:pivot`` at minus the pivot, and one that places only
the node's own mesh (3D Studio) is a child Xform ``pivot`` there.  USD
replays time samples linearly, quaternions by slerp along the shorter arc
(usd-core's ``UsdAttribute.Get`` between samples), so the samples are those
of `linear_samples.channel_samples` within the tolerances.

A camera node also holds a ``UsdGeom.Camera`` prim ``camera`` (USD cameras
look down -Z with +Y up) turned by a constant orient from that frame to the
tool's (none for LightWave, whose cameras look down +Z in its left-handed
axes, which the mirror turns into -Z; a quarter turn about X for 3D Studio's
look-at frame after its Z-up axes become Y up).  Its ``verticalAperture``
is the film height the file states (LightWave's ``ApertureHeight``, else
24 mm), ``horizontalAperture`` that times the frame's aspect, and
``focalLength`` is time-sampled so that its field of view follows the
scene's within the angle tolerance.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import warnings
from typing import Optional, Union

import numpy as np

from .._checks import _check_positive
from .camera import camera_turn, vertical_fov
from .convert import axes_to_gltf, scene_range, upright
from .gltf import DEFAULT_ANGLE_TOLERANCE
from .adaptive import _channel_keys
from .linear_samples import CHECKS, sample_error
from .usd import _SUFFIXES, _unique, _usd_name

__all__ = ["scene_to_usd", "UsdSceneExport", "DEFAULT_FILM_HEIGHT"]

DEFAULT_FILM_HEIGHT = 24.0      # mm: 35 mm film's height, where a file states none
_PATHS = ("translation", "rotation", "scale")


@dataclasses.dataclass(frozen=True)
class UsdSceneExport:
    """What `scene_to_usd` wrote.

    Attributes
    ----------
    path : pathlib.Path
    prims : dict
        ``{node name: prim path}``.
    cameras : dict
        ``{node name: UsdGeom.Camera prim path}``.
    times : dict
        ``{(node name, path): sample times in seconds}`` per animated channel
        (path "translation", "rotation", "scale" or "fov").
    max_error : dict
        Per channel, USD's linear playback error measured densely between
        samples: radians for rotations and fov, the scene's units otherwise.
    tolerances : dict
        Per channel, in the same units.
    fps : float
        timeCodesPerSecond: a time code is seconds times fps.
    """
    path: pathlib.Path
    prims: dict
    cameras: dict
    times: dict
    max_error: dict
    tolerances: dict
    fps: float

    @property
    def missed(self) -> dict:
        """``{(node, path): error}`` of the channels beyond their tolerance."""
        return {key: error for key, error in self.max_error.items()
                if error > self.tolerances[key] * (1 + 1e-6)}


def scene_to_usd(scene, path: Union[str, os.PathLike[str]], *, animation: Optional[str] = None,
                 angle_tolerance: Optional[float] = None,
                 distance_tolerance: Optional[float] = None,
                 fps: Optional[float] = None, meters_per_unit: float = 1.0) -> UsdSceneExport:
    """Writes a scene as a USD stage of Xforms and Cameras (.usda, .usdc, .usd).

    Parameters
    ----------
    scene : Scene
        Any scene whose channels are callables of seconds (3DS, LightWave,
        glTF); its axes are converted to Y up, right-handed.
    path : str or os.PathLike
    animation : str, optional
        Which animation (default: the scene's only one; none: a still stage).
    angle_tolerance : float, optional
        Radians (default 1e-4): how far USD's playback of rotations and
        fields of view may stray from the scene's.
    distance_tolerance : float, optional
        The scene's units: translations and scales (default: the angle
        tolerance times each channel's extent, at least 1e-9).
    fps : float, optional
        timeCodesPerSecond (default the scene's ``fps``, else 24).
    meters_per_unit : float
        The stage's metersPerUnit (LightWave's unit is the metre; a .3ds
        file states none).

    Returns
    -------
    UsdSceneExport

    Raises
    ------
    ValueError
        For a bad suffix, an unknown animation, or tolerances, fps or
        meters_per_unit that are not positive.
    ImportError
        Without the ``usd`` extra (usd-core).
    """
    from pxr import Gf, Usd, UsdGeom

    path = pathlib.Path(path)
    if path.suffix.lower() not in _SUFFIXES:
        raise ValueError(f"path must end in one of {_SUFFIXES}, not {path.suffix!r}")
    angle = _check_positive("angle_tolerance", angle_tolerance, DEFAULT_ANGLE_TOLERANCE)
    if distance_tolerance is not None:
        distance_tolerance = _check_positive("distance_tolerance", distance_tolerance)
    fps = _check_positive("fps", fps, float(getattr(scene, "fps", 24.0) or 24.0))
    meters_per_unit = _check_positive("meters_per_unit", meters_per_unit)
    if animation is None and len(scene.animations) > 1:
        raise ValueError(f"animation must name one of {sorted(scene.animations)}")
    if animation is None:
        animation = next(iter(scene.animations), None)
    elif animation not in scene.animations:
        raise ValueError(f"animation {animation!r} is not one of {sorted(scene.animations)}")
    axes = axes_to_gltf(scene.up_axis, scene.handedness)
    moved = upright(scene)
    channels = moved.animations.get(animation, {}) if animation is not None else {}
    start, end = scene_range(scene, animation) if animation is not None else (0.0, 0.0)

    stage = Usd.Stage.CreateInMemory()      # exported below: an open layer is no obstacle
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, meters_per_unit)
    stage.SetTimeCodesPerSecond(fps)
    stage.SetFramesPerSecond(fps)
    stage.SetStartTimeCode(start * fps)
    stage.SetEndTimeCode(end * fps)
    root = UsdGeom.Xform.Define(stage, "/" + _usd_name(animation or path.stem))
    stage.SetDefaultPrim(root.GetPrim())

    prims: dict = {}
    cameras: dict = {}
    times: dict = {}
    errors: dict = {}
    tolerances: dict = {}
    names = _prim_names(moved.nodes)
    for i in _parents_first(moved.nodes):
        node = moved.nodes[i]
        above = str(root.GetPath()) if node.parent < 0 else prims[moved.nodes[node.parent].name]
        prim_path = f"{above}/{names[i]}"
        xform = UsdGeom.Xform.Define(stage, prim_path)
        prims[node.name] = prim_path
        ops = {"translation": xform.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble),
               "rotation": xform.AddOrientOp(UsdGeom.XformOp.PrecisionDouble),
               "scale": xform.AddScaleOp(UsdGeom.XformOp.PrecisionDouble)}
        for target, op in ops.items():
            channel = channels.get((node.name, target))
            if channel is None:
                op.Set(_value(Gf, target, getattr(node, target)))
                continue
            tolerance = angle if target == "rotation" else distance_tolerance
            try:
                at, values, error, tolerance = _samples(channel, tolerance, angle, start, end)
            except ValueError as problem:       # name the channel (MAX_KEYS passed)
                raise ValueError(f"{node.name} {target}: {problem}") from None
            for t, value in zip(at, values):
                op.Set(_value(Gf, target, value), Usd.TimeCode(t * fps))
            key = (node.name, target)
            times[key], errors[key], tolerances[key] = at, error, tolerance
        pivot = np.asarray(node.pivot, dtype=np.float64)
        if np.any(pivot != 0) and node.pivot_inherited:
            xform.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble, "pivot").Set(Gf.Vec3d(*-pivot))
        elif np.any(pivot != 0):
            shift = UsdGeom.Xform.Define(stage, f"{prim_path}/{_child_name(names, i, 'pivot')}")
            shift.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*-pivot))
        facts = node.extras.get("camera")
        if node.kind == "camera" and facts is not None:
            camera_path = f"{prim_path}/{_child_name(names, i, 'camera')}"
            cameras[node.name] = camera_path
            fov = scene.animations[animation].get((node.name, "fov")) if channels else None
            fov = fov if fov is not None and len(fov.times) > 1 else None   # one key: constant
            out = _write_camera(stage, camera_path, node.name, facts, fov, axes, angle,
                               start, end, fps)
            if out is not None:
                key = (node.name, "fov")
                times[key], errors[key], tolerances[key] = out
    if not stage.GetRootLayer().Export(str(path)):
        raise OSError(f"USD could not write {path}")
    report = UsdSceneExport(path, prims, cameras, times, errors, tolerances, fps)
    if report.missed:       # said, never silent (convert's CLI exits 1 on it)
        warnings.warn(f"USD's playback misses the tolerance on {len(report.missed)} "
                      f"channel(s): " + ", ".join(f"{node} {what} {error:.3g}" for
                                                  (node, what), error in report.missed.items())
                      + " (keys would need to be closer than 0.0005 s)", UserWarning,
                      stacklevel=3)
    return report


def _samples(channel, tolerance, angle, start, end):
    """(times, values, measured error, tolerance) of one channel."""
    if tolerance is None:          # the angle tolerance times the channel's extent
        probe = np.asarray(channel(np.linspace(start, end, 257)), dtype=np.float64)
        extent = float(np.max(np.ptp(probe, axis=0))) if len(probe) else 0.0
        tolerance = max(angle * extent, 1e-9)
    at, _, jumps, _ = _channel_keys(channel, tolerance, start, end)
    values = np.asarray(channel(at), dtype=np.float64).reshape(len(at), -1)
    return at, values, _measured(channel, at, values, jumps), tolerance


def _measured(channel, at, values, jumps):
    """USD's playback error measured at 4 CHECKS points between samples,
    but for a jump's interval (`jumps`, from the keyer: a short interval
    at the key-spacing floor is measured, not taken for a jump)."""
    u = np.arange(1, 4 * CHECKS) / (4 * CHECKS)
    wide = np.flatnonzero(~jumps)
    if not len(wide):
        return 0.0
    t = (at[wide, None] + u * (at[wide + 1] - at[wide])[:, None]).ravel()
    step = 1 << 16        # in chunks: memory stays bounded however many samples
    return max(float(np.max(sample_error(channel, at, t[i:i + step], channel.path == "rotation",
                                         values))) for i in range(0, len(t), step))


def _value(Gf, target, value):
    value = np.asarray(value, dtype=np.float64).reshape(-1)
    if target == "rotation":
        return Gf.Quatd(float(value[0]), Gf.Vec3d(*value[1:4].tolist()))
    return Gf.Vec3d(*value[:3].tolist())


def _parents_first(nodes):
    order, pending = [], [i for i, n in enumerate(nodes) if n.parent < 0][::-1]
    while pending:
        i = pending.pop()
        order.append(i)
        pending += nodes[i].children[::-1]
    return order


def _prim_names(nodes):
    """Each node's USD name, unique among its siblings."""
    names = [""] * len(nodes)
    groups = {}           # parent index: its children's indices
    for i, node in enumerate(nodes):
        groups.setdefault(node.parent, []).append(i)
    for members in groups.values():
        for i, name in zip(members, _unique([_usd_name(nodes[i].name) for i in members])):
            names[i] = name
    return names


def _child_name(names, i, wanted):
    """`wanted`, or with an underscore more, apart from node i's children's names."""
    return wanted if wanted not in names else f"{wanted}_{i}"


def _write_camera(stage, camera_path, name, facts, fov, axes, angle, start, end, fps):
    """The Camera prim; (times, error, tolerance) of an animated fov."""
    from pxr import Gf, Usd, UsdGeom
    camera = UsdGeom.Camera.Define(stage, camera_path)
    turn = camera_turn(facts, axes)
    camera.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(
        Gf.Quatd(float(turn[0]), Gf.Vec3d(*turn[1:].tolist())))
    camera.CreateProjectionAttr(UsdGeom.Tokens.perspective)
    height = float(facts.get("aperture", DEFAULT_FILM_HEIGHT))
    aspect = float(facts["aspect"])
    camera.CreateVerticalApertureAttr(height)
    camera.CreateHorizontalApertureAttr(height * aspect)
    focal = camera.CreateFocalLengthAttr()

    def focal_length(vertical):
        return 0.5 * height / np.tan(0.5 * vertical)

    vertical = vertical_fov(facts["fov"], aspect, facts["fov_axis"], name)
    focal.Set(float(focal_length(vertical)))
    if fov is None:
        return None
    lens = _FocalLength(fov, aspect, focal_length, name)
    # |d focal / d fov| >= height / 4, so focal lengths within angle * height / 4
    # keep the fov within the angle (to first order; measured below)
    at, _, jumps, _ = _channel_keys(lens, angle * height / 4, start, end)
    values = lens.focal(at)
    for t, value in zip(at, values[:, 0]):
        focal.Set(float(value), Usd.TimeCode(t * fps))
    u = np.arange(1, 4 * CHECKS) / (4 * CHECKS)
    t = (at[:-1, None] + u * np.diff(at)[:, None])          # (K - 1, checks)
    replayed = np.interp(t.ravel(), at, values[:, 0]).reshape(t.shape)
    error = np.abs(2 * np.arctan(0.5 * height / replayed) - lens.vertical(t.ravel())
                   .reshape(t.shape))
    wide = ~jumps                                           # not a jump's pair
    return at, float(np.max(error[wide], initial=0.0)), angle


class _FocalLength:
    """A fov channel seen as the focal lengths USD lerps."""
    path = "focalLength"

    def __init__(self, fov, aspect, focal_length, camera):
        self.fov, self.aspect, self._focal = fov, aspect, focal_length
        self.times, self.interpolation = fov.times, fov.interpolation
        self.camera = camera

    def vertical(self, t):
        return vertical_fov(self.fov(t), self.aspect, self.fov.axis, self.camera)

    def focal(self, t):
        return self._focal(self.vertical(t))

    def __call__(self, t):
        return self.focal(t)
