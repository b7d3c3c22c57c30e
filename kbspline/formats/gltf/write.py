"""glTF 2.0 export of keyframe tracks (``pip install kbspline[gltf]``).

Rotations go out as LINEAR samplers (glTF replays them by slerp between
neighbouring keys; its cubic rotation sampler is a normalised Hermite curve
on the quaternion components, not squad) with keys placed by
`kbspline.formats.adaptive.linear_keys`, so that playback stays within an
angle tolerance of the spline at every time.  Translations and scales go
out as LINEAR keys within a distance tolerance too, which every importer
plays as written (Blender turns glTF's CUBICSPLINE into its own Bezier
curves, centimetres off on a walk).  On request (``cubic=True``) they go
out as CUBICSPLINE samplers: a KB spline without ease is a cubic Hermite
curve in time, which is what glTF's cubic sampler is, so they are exact up
to glTF's float32 storage.  `rate=` bakes rotations at a fixed rate instead.  Every channel's
largest deviation from the spline is measured on what was written and
reported.

Outside the keys glTF holds the end values, as ``extrapolate='clamp'``
does.  glTF times are float32 seconds from zero: shift later clips with
`time_offset` rather than lose precision.
"""
from __future__ import annotations

import base64
import dataclasses
import os
import pathlib
import warnings
from collections.abc import Mapping
from typing import Any, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

from ..._checks import _check_positive
from ...motion.clip import POSITION_CHANNELS, Motion, check_motion
from ...motion.kinematics import local_offsets
from ...position import PositionSpline
from ...rotation import RotationSpline
from ..adaptive import MIN_KEY_SPACING, linear_keys
from ..report import missed_channels
from ..scene import _looped_node
from .tracks import (CHECKS_PER_INTERVAL, _ChannelTrack, _is_channel, _shortest_path,  # noqa: F401
                     _Track)

__all__ = ["export_gltf", "motion_to_gltf", "reduction_to_gltf", "GltfExport",
           "CHECKS_PER_INTERVAL", "DEFAULT_ANGLE_TOLERANCE"]

# The default angle tolerance (radians): 0.006 degrees, a hundredth of a
# pixel's turn at a 1000-pixel field of view of 60 degrees.
DEFAULT_ANGLE_TOLERANCE = 1e-4
# Where a position channel must go out LINEAR (ease) and no distance
# tolerance is given: this fraction of the channel's extent.
_RELATIVE_DISTANCE_TOLERANCE = 1e-6

@dataclasses.dataclass(frozen=True)
class GltfExport:
    """What `export_gltf` wrote.

    Attributes
    ----------
    gltf : pygltflib.GLTF2
        The document, its binary blob set.
    interpolation : dict
        ``{(node, path): "CUBICSPLINE" or "LINEAR"}``.
    max_error : dict
        ``{(node, path): error}``, the largest distance between the spline
        and glTF's playback of the channel, at the stored keys and
        CHECKS_PER_INTERVAL points between each two: in the channel's units
        for translations and scales, radians of rotation for rotations.
    key_counts : dict
        ``{(node, path): the number of keys written}``.
    tolerances : dict
        ``{(node, path): tolerance}`` each LINEAR channel placed its keys
        within, in `max_error`'s units (none for CUBICSPLINE or `rate=`).
    """
    gltf: Any
    interpolation: dict[tuple[str, str], str]
    max_error: dict[tuple[str, str], float]
    key_counts: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    tolerances: dict[tuple[str, str], float] = dataclasses.field(default_factory=dict)

    @property
    def missed(self) -> dict[tuple[str, str], float]:
        """``{(node, path): error}`` of the channels beyond their tolerance."""
        return {key: error for key, error in self.max_error.items()
                if key in self.tolerances and error > self.tolerances[key] * (1 + 1e-6)}


Channel = Union[PositionSpline, RotationSpline, "tuple[Any, Any]"]


def export_gltf(channels: Mapping[str, Mapping[str, Channel]],
                path: Union[str, os.PathLike[str], None] = None, *,
                rate: Optional[float] = None, angle_tolerance: Optional[float] = None,
                distance_tolerance: Optional[float] = None, time_offset: float = 0.0,
                parents: Optional[Mapping[str, str]] = None,
                offsets: Optional[Mapping[str, ArrayLike]] = None,
                name: str = "kbspline",
                skin: Optional[Sequence[str]] = None, cubic: bool = False,
                min_key_spacing: float = MIN_KEY_SPACING,
                channel_range: Optional[tuple[float, float]] = None,
                rest: Optional[Mapping[str, Mapping[str, ArrayLike]]] = None) -> GltfExport:
    """Writes splines as one glTF 2.0 animation.

    Parameters
    ----------
    channels : dict
        ``{node name: {path: spline or (spline, index) or channel}}``, path
        one of ``"translation"``, ``"scale"`` (PositionSpline, D = 3) or
        ``"rotation"`` (RotationSpline); `index` picks one track of a batched
        spline.  A scene `kbspline.formats.scene.Channel` (rotations unit
        (w, x, y, z)) goes out as LINEAR keys by
        `kbspline.formats.adaptive.channel_keys` over `channel_range`; where
        its value jumps, the pair of keys either side is the one interval
        its `max_error` leaves out.
    path : str or os.PathLike, optional
        Where to save, ``.gltf`` (JSON, data embedded) or ``.glb``; None to
        only return the document.
    rate : float, optional
        Instead of tolerances, samples per second for LINEAR channels (which
        also keep every key time), for tools that want a fixed rate.
    angle_tolerance : float, optional
        Radians: rotations are written as LINEAR keys placed so that glTF's
        playback (slerp between keys, float32 storage) stays within it of the
        spline at every time.  Default DEFAULT_ANGLE_TOLERANCE (1e-4 rad).
    distance_tolerance : float, optional
        In the channels' units: translations and scales are LINEAR keys
        within it.  Default: `angle_tolerance` times the channel's extent
        (its largest coordinate range or magnitude).
    time_offset : float
        Subtracted from spline times to give glTF times, which must not be
        negative.
    parents : dict, optional
        ``{child node: parent node}`` for a hierarchy; parents without
        channels become plain nodes.
    offsets : dict, optional
        ``{node: (3,) translation}``, a node's fixed translation from its
        parent (a bone's offset) where no channel animates it.
    name : str
        The animation's name.
    skin : sequence of str, optional
        Nodes that a skin lists as its joints (a skin without a mesh, legal
        glTF), so that readers find the skeleton; they must share one root.
    cubic : bool
        Translations and scales as exact CUBICSPLINE keys instead (position
        splines with ease, which glTF's cubic cannot follow, still go out
        LINEAR, within a millionth of the channel's extent).
    min_key_spacing : float
        Seconds: added keys never come closer (default
        `kbspline.formats.adaptive.MIN_KEY_SPACING`, what importers keep).
    channel_range : (float, float), optional
        Seconds (before `time_offset`) over which scene channels are keyed;
        default each channel's first to last key time.
    rest : dict, optional
        ``{node: {path: value}}``, a node's fixed translation (3,), rotation
        (4,) as glTF's unit (x, y, z, w), or scale (3,) where no channel
        animates that path (a translation here wins over `offsets`).

    Returns
    -------
    GltfExport
        The document and each channel's error and key count.

    Raises
    ------
    ValueError
        For both `rate` and tolerances, a non-positive tolerance or rate, a
        bad path suffix, names or hierarchies that do not fit, or times that
        float32 cannot keep increasing, naming the channel.
    TypeError
        For channels that are not a dict of dicts of splines.

    Warns
    -----
    UserWarning
        One, naming every channel that misses its tolerance (rotations in
        degrees), where meeting it would need keys closer than
        `min_key_spacing`; `missed` lists them, `max_error` has what each
        reached.
    """
    import pygltflib as gl

    plan = _Plan(rate, angle_tolerance, distance_tolerance, float(time_offset), cubic,
                 min_key_spacing)
    if not isinstance(channels, Mapping) or not channels:
        raise TypeError("channels must be a non-empty dict {node: {path: spline}}")
    parents = dict(parents or {})
    offsets = {node: _check_offset(node, value) for node, value in (offsets or {}).items()}
    rests = _check_rest(rest or {}, offsets)
    if channel_range is not None:
        channel_range = _check_range(channel_range)
    nodes = list(dict.fromkeys([*channels, *parents.values(), *offsets, *rests]))
    for child, parent in parents.items():
        if child not in nodes:
            raise ValueError(f"parents names {child!r}, which is not a node")
    _check_acyclic(parents)

    blob = _Blob()
    samplers, anim_channels, interpolation, max_error, key_counts = [], [], {}, {}, {}
    tolerances = {}
    for node, paths in channels.items():
        if not isinstance(paths, Mapping):
            raise TypeError(f"channels[{node!r}] must be a dict {{path: spline}}")
        for target, entry in paths.items():
            track = _ChannelTrack(node, target, entry, channel_range) \
                if _is_channel(entry) else _Track(node, target, entry)
            times, output, kind, error = track.sampled(plan.times(track), plan.offset)
            if kind == "LINEAR" and plan.rate is None:
                tolerances[node, target] = plan.tolerance(track)
            sampler = gl.AnimationSampler(
                input=blob.add(gl, times, gl.SCALAR, with_bounds=True),
                output=blob.add(gl, output, gl.VEC4 if target == "rotation" else gl.VEC3),
                interpolation=kind)
            samplers.append(sampler)
            anim_channels.append(gl.AnimationChannel(
                sampler=len(samplers) - 1,
                target=gl.AnimationChannelTarget(node=nodes.index(node), path=target)))
            interpolation[node, target] = kind
            max_error[node, target] = error
            key_counts[node, target] = len(times)
    if not samplers:
        raise ValueError("channels has no spline to export (glTF animations need one)")

    skins = [_skin(gl, nodes, parents, skin)] if skin is not None else None
    children = {n: [nodes.index(c) for c, p in parents.items() if p == n] for n in nodes}
    gltf_nodes = [gl.Node(name=n, children=children[n] or None,  # None: omitted
                          **{path: value for path, value in rests.get(n, {}).items()
                             if path not in channels.get(n, {})}) for n in nodes]
    doc = gl.GLTF2(
        asset=gl.Asset(generator="kbspline", version="2.0"), scene=0,
        scenes=[gl.Scene(nodes=[i for i, n in enumerate(nodes) if n not in parents])],
        nodes=gltf_nodes, skins=skins, animations=[gl.Animation(
            name=name, samplers=samplers, channels=anim_channels)],
        accessors=blob.accessors, bufferViews=blob.views,
        buffers=[gl.Buffer(byteLength=len(blob.data))])
    doc.set_binary_blob(bytes(blob.data))
    if path is not None:
        _save(gl, doc, pathlib.Path(path))
    report = GltfExport(doc, interpolation, max_error, key_counts, tolerances)
    _warn_misses(report, plan.min_spacing)
    return report


def _warn_misses(report, min_spacing):
    """One warning naming the channels beyond their tolerance, rotations in
    degrees, translations and scales in the channels' units."""
    if not report.missed:
        return
    warnings.warn(f"glTF's playback misses the tolerance on {len(report.missed)} channel(s): "
                  f"{missed_channels(report)}; meeting it would need keys closer than "
                  f"{min_spacing:g} s (min_key_spacing)", UserWarning, stacklevel=3)


def motion_to_gltf(motion: Motion, path: Union[str, os.PathLike[str], None] = None, *,
                   angle_tolerance: Optional[float] = None,
                   distance_tolerance: Optional[float] = None, rate: Optional[float] = None,
                   scale: float = 1.0, tension: float = 0.0, continuity: float = 0.0,
                   bias: float = 0.0, cubic: bool = False,
                   min_key_spacing: float = MIN_KEY_SPACING) -> GltfExport:
    """Writes a clip as glTF.

    A node per joint in the BVH hierarchy (and one per End Site, named
    ``"<joint>_end"``, or ``"<joint>_end_2"``... where a joint has that
    name), a skin listing the joints (for a clip with one root; no mesh, so
    that readers such as `read_gltf(...).to_motion` find the skeleton), bone
    offsets as the nodes' fixed translations, joint
    rotations as squad splines through the frames written as LINEAR keys
    within `angle_tolerance`, and joints with position channels as LINEAR
    translations within `distance_tolerance` (exact CUBICSPLINE ones with
    ``cubic=True``).

    Parameters
    ----------
    motion : Motion
        The clip, of at least 2 frames.
    path : str or os.PathLike, optional
        ``.gltf`` or ``.glb``; None to only return the document.
    angle_tolerance : float, optional
        Radians, default DEFAULT_ANGLE_TOLERANCE.
    distance_tolerance : float, optional
        In glTF's units, after `scale`.  Default: `angle_tolerance` times
        each channel's extent.
    rate : float, optional
        Instead of tolerances, bake rotations at this many samples per second
        (every frame kept), as earlier versions did at the clip's rate.
    scale : float
        Multiplies every length, e.g. 0.01 for a centimetre clip in glTF's
        metres.
    tension, continuity, bias : float
        Of the splines through the frames.
    cubic, min_key_spacing
        As for `export_gltf`.

    Returns
    -------
    GltfExport
        Its `max_error` says how far glTF's playback strays from the splines,
        measured densely between keys.

    Raises
    ------
    ValueError
        For a clip of fewer than 2 frames, joint names that are not unique, a
        non-positive scale, or arguments `export_gltf` refuses.
    TypeError
        For a scale that is not a number.
    """
    check_motion(motion, "motion")
    if motion.num_frames < 2:
        raise ValueError("motion_to_gltf needs a clip of at least 2 frames")
    scale = _check_positive("scale", scale)
    joints = motion.joints
    names = [joint.name for joint in joints]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"the clip's joint names are not unique (glTF nodes are written by "
                         f"name): {', '.join(map(repr, twice))} name several joints")
    times = motion.times
    rotations = RotationSpline(times, motion.rotations(), tension, continuity, bias)
    moving = _moving(motion)
    translations = (PositionSpline(times, local_offsets(motion)[moving] * scale, tension,
                                   continuity, bias) if moving else None)
    channels = _skeleton_channels(motion, lambda j: (rotations, j),
                                  lambda j: (translations, moving.index(j)))
    roots = [joint for joint in joints if joint.parent < 0]
    return export_gltf(channels, path, rate=rate, angle_tolerance=angle_tolerance,
                       distance_tolerance=distance_tolerance, **_skeleton_nodes(motion, scale),
                       name="bvh", skin=names if len(roots) == 1 else None, cubic=cubic,
                       min_key_spacing=min_key_spacing)


def _skin(gl, nodes, parents, joints):
    """A glTF skin listing `joints` (identity inverse bind matrices: no mesh
    is bound), its skeleton the root they share."""
    joints = list(joints)
    unknown = [n for n in joints if n not in nodes]
    if unknown or not joints:
        raise ValueError(f"skin must name nodes of the export, not {unknown or joints}")
    roots = set()
    for n in joints:
        while n in parents:
            n = parents[n]
        roots.add(n)
    if len(roots) != 1:
        raise ValueError(f"skin's joints must share one root, not {sorted(roots)}")
    return gl.Skin(name="skeleton", joints=[nodes.index(n) for n in joints],
                   skeleton=nodes.index(roots.pop()))


def _moving(motion):
    """Indices of the joints with position channels."""
    return [j for j, joint in enumerate(motion.joints)
            if any(c in POSITION_CHANNELS for c in joint.channels)]


def _skeleton_channels(motion, rotation, translation):
    """export_gltf's channels for a clip's joints: rotation(j) for each joint
    with rotation channels, translation(j) for each with position channels."""
    moving = _moving(motion)
    channels = {}  # {joint: {path: spline or (spline, track)}}
    for j, joint in enumerate(motion.joints):
        channels[joint.name] = {}
        if motion.rotation_order(j):
            channels[joint.name]["rotation"] = rotation(j)
        if j in moving:
            channels[joint.name]["translation"] = translation(j)
    return channels


def _skeleton_nodes(motion, scale):
    """export_gltf's parents and fixed offsets for a clip's joints and End
    Sites (a node each, named by _end_site_names)."""
    names = [joint.name for joint in motion.joints]
    moving = _moving(motion)
    parents, offsets = {}, {}
    for j, joint in enumerate(motion.joints):
        if j not in moving:
            offsets[joint.name] = joint.offset * scale
        if joint.parent >= 0:
            parents[joint.name] = names[joint.parent]
    for j, name in _end_site_names(motion).items():
        parents[name] = names[j]
        offsets[name] = motion.joints[j].end_site * scale
    return {"parents": parents, "offsets": offsets}


def _end_site_names(motion):
    """{joint index: End Site node name}: "<joint>_end", or with the first
    suffix _2, _3... that no joint or other End Site has (nodes are keyed by
    name: a joint named so would be taken for the End Site)."""
    taken = {joint.name for joint in motion.joints}
    names = {}
    for j, joint in enumerate(motion.joints):
        if joint.end_site is not None:
            name, k = f"{joint.name}_end", 2
            while name in taken:
                name, k = f"{joint.name}_end_{k}", k + 1
            taken.add(name)
            names[j] = name
    return names


def reduction_to_gltf(reduction: Any, motion: Motion,
                      path: Union[str, os.PathLike[str], None] = None, *,
                      angle_tolerance: Optional[float] = None,
                      scale: float = 1.0) -> GltfExport:
    """Writes a key reduction's curves as glTF.

    Translations are CUBICSPLINE keys at the reduction's own key frames,
    with the fitted curves' tangents, so glTF plays back exactly the
    rebuilt curves (to float32); rotations are LINEAR keys within
    `angle_tolerance` of the rebuilt squad splines, as `motion_to_gltf`
    writes them.

    Parameters
    ----------
    reduction : Reduction
        From `kbspline.motion.reduce_keys` on `motion`.
    motion : Motion
        The clip it reduces: its hierarchy, offsets and End Sites.
    path : str or os.PathLike, optional
        ``.gltf`` or ``.glb``; None to only return the document.
    angle_tolerance : float, optional
        Radians, default DEFAULT_ANGLE_TOLERANCE.
    scale : float
        Multiplies every length.

    Returns
    -------
    GltfExport

    Raises
    ------
    ValueError
        For a reduction of other joints or another frame count, or
        arguments `export_gltf` refuses.
    """
    check_motion(motion, "motion")
    if (list(reduction.names) != [joint.name for joint in motion.joints]
            or reduction.num_frames != motion.num_frames):
        raise ValueError("the reduction is not of this motion: its joints or frame count "
                         "differ")
    scale = _check_positive("scale", scale)
    splines = [reduction.splines(j, scale) for j in range(len(reduction.names))]
    channels = _skeleton_channels(motion, lambda j: splines[j][0], lambda j: splines[j][1])
    # the reduction's own cubic keys, not LINEAR ones resampled from them
    return export_gltf(channels, path, angle_tolerance=angle_tolerance,
                       **_skeleton_nodes(motion, scale), name="reduced", cubic=True)


class _Plan:
    """How channels are sampled: the spline's own cubic keys, LINEAR keys
    at a fixed rate, or LINEAR keys within a tolerance (placed once per
    spline for all of its tracks)."""

    def __init__(self, rate, angle_tolerance, distance_tolerance, offset, cubic=False,
                 min_spacing=MIN_KEY_SPACING):
        if rate is not None and (angle_tolerance is not None or distance_tolerance is not None):
            raise ValueError("give rate= (a fixed rate) or tolerances, not both")
        if cubic and distance_tolerance is not None:
            raise ValueError("give cubic=True (exact cubic translations) or "
                             "distance_tolerance (LINEAR keys within it), not both")
        self.cubic = bool(cubic)
        self.min_spacing = _check_positive("min_key_spacing", min_spacing)
        self.rate = _check_positive("rate", rate)
        self.angle = _check_positive("angle_tolerance", angle_tolerance)
        if self.angle is None and self.rate is None:
            self.angle = DEFAULT_ANGLE_TOLERANCE
        self.distance = _check_positive("distance_tolerance", distance_tolerance)
        if not np.isfinite(offset):
            raise ValueError(f"time_offset must be finite, not {offset}")
        self.offset = offset
        self._keys = {}

    def times(self, track):
        """The channel's LINEAR key times, or None to keep it cubic."""
        if isinstance(track, _ChannelTrack):
            if self.rate is not None:
                raise ValueError(f"{track.where}: rate= bakes splines; a scene channel "
                                 f"goes out within the tolerances")
            return track.keys(self.tolerance(track), self._float32_times, self.min_spacing)
        if not (track.target == "rotation" or track.spline._ease is not None
                or self.distance is not None or not (self.cubic or self.rate)):
            return None
        if self.rate is not None:
            return track.baked_times(self.rate)
        tolerance = self.tolerance(track)
        cached = self._keys.get((id(track.spline), tolerance))
        if cached is None:
            cached = (track.spline, linear_keys(track.spline, tolerance,
                                                round_times=self._float32_times,
                                                min_spacing=self.min_spacing))
            self._keys[id(track.spline), tolerance] = cached
        return cached[1][track.flat_index]

    def tolerance(self, track):
        if track.target == "rotation":
            return self.angle
        if self.distance is not None:
            return self.distance
        values = track(track.knots)
        relative = _RELATIVE_DISTANCE_TOLERANCE if self.cubic else self.angle
        return relative * max(np.ptp(values, axis=0).max(), np.abs(values).max(), 1e-300)

    def _float32_times(self, t):
        return (t - self.offset).astype(np.float32).astype(np.float64) + self.offset


def _check_rest(rest, offsets):
    """{node: {path: list}}: `offsets` as translations, then `rest`, checked."""
    out = {node: {"translation": value} for node, value in offsets.items()}
    if not isinstance(rest, Mapping):
        raise TypeError("rest must be a dict {node: {path: value}}")
    for node, paths in rest.items():
        for path, value in paths.items():
            size = {"translation": 3, "rotation": 4, "scale": 3}.get(path)
            array = np.asarray(value, dtype=np.float64)
            if size is None or array.shape != (size,) or not np.all(np.isfinite(
                    array.astype(np.float32))):
                raise ValueError(f"rest[{node!r}][{path!r}] must be {size or 3} numbers "
                                 f"finite as float32, not {value!r}")
            out.setdefault(node, {})[path] = array.tolist()
    return out


def _check_range(span):
    try:
        start, end = (float(x) for x in span)
    except (TypeError, ValueError):
        raise TypeError(f"channel_range must be two numbers (start, end), not {span!r}") from None
    if not (np.isfinite(start) and np.isfinite(end) and start <= end):
        raise ValueError(f"channel_range must be finite with start <= end, not {span!r}")
    return start, end


def _check_offset(node, value):
    offset = np.asarray(value, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.all(np.isfinite(offset.astype(np.float32)))
    if offset.shape != (3,) or not finite:
        raise ValueError(f"offsets[{node!r}] must be 3 numbers finite as float32 "
                         f"(|x| < 3.4e38), not {value!r}")
    return offset.tolist()


def _check_acyclic(parents):
    """Refuses {child: parent} names that loop; a parent that is no child is a root."""
    children = list(parents)
    number = {name: i for i, name in enumerate(children)}
    looped = _looped_node([number.get(parents[name], -1) for name in children])
    if looped is not None:
        raise ValueError(f"parents has a cycle through {children[looped]!r}")


def save_gltf(doc, path) -> None:
    """Saves a document as .gltf (buffer embedded) or .glb."""
    import pygltflib as gl
    _save(gl, doc, pathlib.Path(path))


def _save(gl, doc, path):
    if path.suffix == ".glb":
        doc.save_binary(str(path))
    elif path.suffix == ".gltf":
        data = doc.binary_blob()
        doc.buffers[0].uri = ("data:application/octet-stream;base64,"
                              + base64.b64encode(data).decode("ascii"))
        doc.destroy_binary_blob()
        doc.save_json(str(path))
        doc.set_binary_blob(data)
        doc.buffers[0].uri = None
    else:
        raise ValueError(f"path must end in .gltf or .glb, not {path.suffix!r}")


class _Blob:
    """The binary buffer: one bufferView and accessor per float32 array."""

    def __init__(self):
        self.data, self.views, self.accessors = bytearray(), [], []

    def add(self, gl, array, kind, with_bounds=False):
        array = np.ascontiguousarray(array, dtype="<f4")
        self.views.append(gl.BufferView(buffer=0, byteOffset=len(self.data),
                                        byteLength=array.nbytes))
        self.data += array.tobytes()
        count = len(array) if kind == gl.SCALAR else array.size // (4 if kind == gl.VEC4 else 3)
        bounds = ({"min": [float(array.min())], "max": [float(array.max())]}
                  if with_bounds else {})
        self.accessors.append(gl.Accessor(bufferView=len(self.views) - 1,
                                          componentType=gl.FLOAT, count=count, type=kind,
                                          **bounds))
        return len(self.accessors) - 1
