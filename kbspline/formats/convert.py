"""Scenes to glTF within a tolerance, axes converted (``python -m kbspline convert``).

A scene's channels are kbspline splines in the file's own axes; glTF wants
Y up and right-handed.  A change of axes by an orthogonal matrix A maps a
TCB spline onto a TCB spline exactly (positions are linear in the keys;
rotation logs turn by det(A) A, which commutes with squad), so each track
is rebuilt in glTF's axes and written by `export_gltf` within the
tolerances, rather than sampled.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import warnings
from typing import Any, Optional, Union

import numpy as np

from .._checks import positive_float
from .gltf import DEFAULT_ANGLE_TOLERANCE, GltfExport, export_gltf
from .gltf.cameras import add_cameras
from .gltf.write import save_gltf
from .load import read_scene
from .threeds import read_3ds

__all__ = ["axes_to_gltf", "scene_to_gltf", "scene_range", "upright", "convert"]

_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # z -> y, y -> -z
_MIRROR_Z = np.diag([1.0, 1.0, -1.0])


def axes_to_gltf(up_axis: str, handedness: str) -> np.ndarray:
    """The matrix taking a point in a scene's axes to glTF's (Y up, right-handed).

    Parameters
    ----------
    up_axis : str
        ``"Y"`` or ``"Z"``.
    handedness : str
        ``"right"`` or ``"left"`` (a left-handed scene is mirrored in z, as
        LightWave's Y-up left-handed axes meet glTF's).

    Returns
    -------
    ndarray (3, 3)
    """
    if up_axis not in ("Y", "Z") or handedness not in ("right", "left"):
        raise ValueError(f"unknown axes: up_axis {up_axis!r}, handedness {handedness!r} "
                         "(known: 'Y' or 'Z', 'right' or 'left')")
    out = _Z_UP if up_axis == "Z" else np.eye(3)
    return out @ _MIRROR_Z if handedness == "left" else out.copy()


def scene_to_gltf(scene, path: Union[str, os.PathLike[str], None] = None, *,
                  animation: Optional[str] = None, angle_tolerance: Optional[float] = None,
                  distance_tolerance: Optional[float] = None) -> GltfExport:
    """Writes a scene's animation as glTF 2.0, in glTF's axes, within tolerances.

    Parameters
    ----------
    scene : Scene
        Any scene (3DS, LightWave, or glTF and BVH in glTF's axes).
    path : str or os.PathLike, optional
        ``.gltf`` or ``.glb``; None to only return the document.
    animation : str, optional
        Which animation (default: the scene's only one).
    angle_tolerance, distance_tolerance : float, optional
        As for `export_gltf` (radians; the scene's units).

    Returns
    -------
    GltfExport

    Notes
    -----
    A channel that is one spline (a 3DS track that neither repeats nor
    loops) keeps its exact path, rebuilt in glTF's axes (``spline_in``).
    Every other translation, rotation and scale channel (LightWave's
    envelopes, a 3DS camera's look-at with its roll, repeating and looping
    tracks) goes out as LINEAR keys placed by
    `kbspline.formats.adaptive.channel_keys` in glTF's axes over the scene's
    range (`scene_range`), every period of a repeat included; where its
    value jumps (stepped spans, reset behaviours, a repeat that does not
    return), a pair of keys `MIN_KEY_SPACING` apart brackets the jump, the
    one interval where the tolerance is not met.
    The roll of a camera without a target (which core glTF cannot
    animate) is left out with a warning; each camera node gets a glTF
    camera, its fov animated through ``KHR_animation_pointer``
    (`kbspline.formats.gltf.cameras`).  A node's non-zero
    pivot becomes a child node ``<name>.pivot`` placed at minus the
    pivot, where the node's mesh hangs (and its children, where
    `Node.pivot_inherited`); its rest transform goes on the node where no
    channel animates it.
    """
    if animation is None:
        if len(scene.animations) != 1:
            raise ValueError(f"animation must name one of {sorted(scene.animations)}")
        animation = next(iter(scene.animations))
    if animation not in scene.animations:
        raise ValueError(f"animation {animation!r} is not one of {sorted(scene.animations)}")
    axes = axes_to_gltf(scene.up_axis, scene.handedness)
    span = scene_range(scene, animation)
    channels: dict = {}
    left_out = []
    animated = scene.animations[animation]
    for (node, target), channel in animated.items():
        aimed = getattr(animated.get((node, "rotation")), "interpolation", "") == "LOOKAT"
        if target == "fov" or (target == "roll" and aimed):   # cameras.py; the look-at
            continue
        if target not in ("translation", "rotation", "scale"):
            left_out.append(f"{node}.{target}")
            continue
        channels.setdefault(node, {})[target] = _entry(channel, axes)
    if left_out:
        warnings.warn("glTF gets no " + ", ".join(left_out), UserWarning, stacklevel=2)
    pivoted = {n.name for n in scene.nodes if np.any(np.asarray(n.pivot) != 0)}
    # a child hangs below its parent's pivot shift only where the format says so
    frame = {n.name: f"{n.name}.pivot" if n.name in pivoted and n.pivot_inherited else n.name
             for n in scene.nodes}
    names = [n.name for n in scene.nodes]
    parents = {n.name: frame[names[n.parent]] for n in scene.nodes if n.parent >= 0}
    offsets = {}
    for n in scene.nodes:
        if n.name in pivoted:
            parents[f"{n.name}.pivot"] = n.name
            offsets[f"{n.name}.pivot"] = -(axes @ np.asarray(n.pivot, dtype=np.float64))
    rest = {n.name: _rest(n, axes) for n in scene.nodes}
    starts = [np.min(s.domain[0]) for paths in channels.values() for s in paths.values()
              if hasattr(s, "domain")]
    offset = min([*starts, span[0], 0.0])
    report = export_gltf(channels, None, angle_tolerance=angle_tolerance,
                         distance_tolerance=distance_tolerance, parents=parents,
                         offsets=offsets, time_offset=offset, name=animation,
                         channel_range=span, rest=rest)
    add_cameras(report, scene, animation, axes, angle_tolerance or DEFAULT_ANGLE_TOLERANCE,
                offset, span)                    # camera objects, fov (gltf/cameras.py)
    if path is not None:
        save_gltf(report.gltf, path)
    return report


def scene_range(scene, animation: str) -> tuple[float, float]:
    """The seconds a scene's animation plays: its channels' first to last
    key time, widened to the scene's own range where it states one (3DS
    KFSEG; LightWave FirstFrame..LastFrame and the preview range).

    Parameters
    ----------
    scene : Scene
    animation : str

    Returns
    -------
    (float, float)
    """
    times = [t for c in scene.animations[animation].values()
             for t in np.asarray(c.times, dtype=np.float64)[[0, -1]]]
    fps = getattr(scene, "fps", None)
    for frames in (getattr(scene, "segment", None), *getattr(scene, "frame_ranges", ())):
        if frames is not None and fps:
            times += [frames[0] / fps, frames[1] / fps]
    return float(min(times)), float(max(times))


def _entry(channel, axes):
    """A spline in glTF's axes where the channel is one, else the channel seen there."""
    if hasattr(channel, "spline_in") and not getattr(channel, "flags", 0) & 3:
        made = channel.spline_in(axes)
        if made is not None:
            return made
    if np.allclose(axes, np.eye(3)) and hasattr(channel, "spline"):
        made = channel.spline()
        if made is not None:
            return made
    return _InAxes(channel, axes)


def _rest(node, axes):
    """A node's rest transform in glTF's axes and conventions."""
    rotation = _moved("rotation", np.asarray(node.rotation, dtype=np.float64), axes)
    return {"translation": axes @ np.asarray(node.translation, dtype=np.float64),
            "rotation": np.append(rotation[1:], rotation[0]),
            "scale": np.abs(axes) @ np.asarray(node.scale, dtype=np.float64)}


class _InAxes:
    """A channel seen in other axes A: translation A t, rotation log
    det(A) A v, scale ``|A| s``."""

    def __init__(self, channel, axes: np.ndarray):
        self.channel, self.axes = channel, axes
        self.path, self.times = channel.path, channel.times
        self.interpolation = channel.interpolation

    def __call__(self, t):
        return _moved(self.path, np.asarray(self.channel(t), dtype=np.float64), self.axes)

    def key_times(self, start, end):
        from .adaptive import key_times_in
        return key_times_in(self.channel, start, end)


def _moved(path, values, axes):
    if path == "translation":
        return values @ axes.T
    if path == "scale":
        return values @ np.abs(axes).T
    if path == "rotation":
        turned = np.linalg.det(axes) * values[..., 1:] @ axes.T
        return np.concatenate([values[..., :1], turned], axis=-1)
    return values


def upright(scene):
    """The scene in glTF's and BVH's axes (Y up, right-handed).

    Parameters
    ----------
    scene : Scene
        Any scene; `axes_to_gltf` of its axes is a signed permutation A.

    Returns
    -------
    Scene
        The same scene (and class) with every node's rest transform and
        channels conjugated by A (translations ``A t``, rotations ``A R A^T``,
        scales ``|A| s``), so every node's world point p becomes A p, a mirror
        (LightWave) included.  Meshes, which this does not touch, would need A too.
    """
    axes = axes_to_gltf(scene.up_axis, scene.handedness)
    nodes = [dataclasses.replace(node, translation=_moved("translation", node.translation, axes),
                                 rotation=_moved("rotation", node.rotation, axes),
                                 scale=_moved("scale", node.scale, axes),
                                 pivot=axes @ np.asarray(node.pivot, dtype=np.float64))
             for node in scene.nodes]
    animations = {title: {key: _InAxes(channel, axes) for key, channel in channels.items()}
                  for title, channels in scene.animations.items()}
    return dataclasses.replace(scene, nodes=nodes, animations=animations, up_axis="Y",
                               handedness="right")


def convert(source: Union[str, os.PathLike[str]], output: Union[str, os.PathLike[str]], *,
            angle_tolerance: Optional[float] = None,
            distance_tolerance: Optional[float] = None, fps: float = 30.0):
    """Reads a scene file and writes it as glTF, BVH or USD.

    3DS and LightWave scenes go to glTF by `scene_to_gltf`: every channel
    within the tolerances of the scene itself (its splines, envelopes,
    look-ats and repeats), but inside the interval of a value's jump.  BVH
    and glTF inputs, and BVH and USD outputs, go through the scene's
    `Scene.to_motion` at `fps` frames a second, upright (`upright`): glTF
    and USD within their tolerances of that motion's splines through the
    frames.

    Parameters
    ----------
    source : str or os.PathLike
        Any scene `read_scene` reads (.3ds with `fps`, .lws, .gltf, .glb,
        .bvh).
    output : str or os.PathLike
        A .gltf, .glb, .bvh, .usd, .usda or .usdc file.
    angle_tolerance, distance_tolerance : float, optional
        Radians; the scene's units.
    fps : float
        Frames a second of a 3DS keyframer, and of a BVH or USD output.

    Returns
    -------
    GltfExport, Motion (BVH) or UsdExport

    Raises
    ------
    ValueError
        For an output format it cannot write, an output that is the input
        file (under any name), or bad tolerances or fps.
    """
    source, output = pathlib.Path(source), pathlib.Path(output)
    kind = output.suffix.lower()
    if kind not in (".gltf", ".glb", ".bvh", ".usd", ".usda", ".usdc"):
        raise ValueError(f"output: cannot write {output.suffix!r} files (known: .gltf, .glb, .bvh, "
                         ".usd, .usda, .usdc)")
    if output.exists() and source.exists() and os.path.samefile(source, output):
        raise ValueError(f"output {str(output)!r} is the input file; convert never writes "
                         "over its input")
    scene = read_3ds(source, fps=fps) if source.suffix.lower() == ".3ds" else read_scene(source)
    if not scene.animations:     # read fine, but nothing moves: say so, not "one of []"
        raise ValueError(f"{source}: the scene holds no animation (no keyframer, or no "
                         f"item with motion); convert writes animations")
    if kind in (".gltf", ".glb") and scene.source in ("3ds", "lws"):
        return scene_to_gltf(scene, output, angle_tolerance=angle_tolerance,
                             distance_tolerance=distance_tolerance)
    if len(scene.animations) != 1:
        raise ValueError(f"the scene must hold one animation, not {sorted(scene.animations)}")
    if kind in (".usd", ".usda", ".usdc") and scene.source in ("3ds", "lws"):
        from .usd_scene import scene_to_usd      # Xforms and Cameras, not a skeleton
        return scene_to_usd(scene, output, angle_tolerance=angle_tolerance,
                            distance_tolerance=distance_tolerance)
    if kind == ".bvh":
        _warn_cameras(scene)
    motion = upright(scene).to_motion(next(iter(scene.animations)), fps)
    if kind in (".gltf", ".glb"):      # BVH and glTF: their frames are the data
        from .gltf import motion_to_gltf
        return motion_to_gltf(motion, output, angle_tolerance=angle_tolerance,
                              distance_tolerance=distance_tolerance)
    if kind == ".bvh":
        from .bvh import write_bvh
        write_bvh(motion, output)
        return motion
    from .usd import motion_to_usd
    return motion_to_usd(motion, output, angle_tolerance=angle_tolerance,
                         distance_tolerance=distance_tolerance)


def _warn_cameras(scene):
    """BVH has no cameras: one warning naming the scene's."""
    names = [node.name for node in scene.nodes if node.kind == "camera"]
    if names:
        warnings.warn(f"BVH has no cameras: {', '.join(names)} keep only their transform "
                      f"(a joint where animated), not their field of view", UserWarning,
                      stacklevel=3)


def cli_arguments(parser) -> None:
    """Adds the ``convert`` command's arguments (kbspline/__main__.py).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's sub-parser.
    """
    parser.add_argument("input", help="the scene to read (.3ds, .lws, .gltf, .glb, .bvh)")
    parser.add_argument("--angle-tolerance", type=positive_float, default=None, metavar="DEGREES",
                        help="how far glTF's playback of rotations may stray from the "
                             "scene's (default 0.0057, i.e. 1e-4 rad)")
    parser.add_argument("--distance-tolerance", type=positive_float, default=None, metavar="DISTANCE",
                        help="how far glTF's playback of translations and scales may stray, "
                             "in the scene's units (default: the angle tolerance in radians "
                             "times each channel's extent)")
    parser.add_argument("--fps", type=positive_float, default=30.0,
                        help="frames a second of a 3DS keyframer and of a BVH or USD output "
                             "(default 30)")
    parser.add_argument("-o", "--output", required=True,
                        help="the .gltf, .glb, .bvh, .usd, .usda or .usdc file to write")
    parser.add_argument("--accept-miss", action="store_true",
                        help="exit 0 where playback misses the tolerance (keys would need to "
                             "be closer than 0.0005 s)")


def cli_run(args) -> tuple[str, Any]:
    """Runs ``convert``.

    Parameters
    ----------
    args : argparse.Namespace
        As `cli_arguments` parses them.

    Returns
    -------
    (str, report)
        What the command prints (the file, channels, keys, largest error and
        the warnings), and the exporter's report (its `missed` channels), or
        None for BVH.
    """
    degrees = args.angle_tolerance
    if degrees is not None and not (np.isfinite(degrees) and degrees > 0):
        raise ValueError(f"--angle-tolerance must be a positive number of degrees, not {degrees}")
    angle = None if degrees is None else float(np.radians(degrees))
    distance = args.distance_tolerance
    if distance is not None and not (np.isfinite(distance) and distance > 0):
        raise ValueError(f"--distance-tolerance must be a positive number, not {distance}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = convert(args.input, args.output, angle_tolerance=angle,
                         distance_tolerance=args.distance_tolerance, fps=args.fps)
    # a missed tolerance is the command's one line (kbspline/__main__.py), not a note
    notes = "".join(f"\n{w.message}" for w in caught if "misses the tolerance" not in str(w.message))
    if hasattr(report, "cameras"):            # usd_scene.UsdSceneExport
        worst = max(report.max_error.values(), default=0.0)
        return (f"wrote {args.output}: {len(report.prims)} prims, {len(report.cameras)} "
                f"cameras, {sum(map(len, report.times.values()))} samples, largest error "
                f"{worst:.3g}{notes}"), report
    if not isinstance(report, GltfExport):
        return f"wrote {args.output}{notes}", report
    worst = max(report.max_error.values(), default=0.0)
    return (f"wrote {args.output}: {len(report.key_counts)} channels, "
            f"{sum(report.key_counts.values())} keys, largest error {worst:.3g}{notes}"), report
