"""glTF 2.0: export of keyframe tracks (``pip install kbspline[gltf]``) and
reading animations back (NumPy only).

Rotations go out as LINEAR samplers (glTF replays them by slerp between
neighbouring keys; its cubic rotation sampler is a normalised Hermite curve
on the quaternion components, not squad) with keys placed by
`kbspline.formats.adaptive.linear_keys`, so that playback stays within an
angle tolerance of the spline at every time.  Translations and scales go
out as CUBICSPLINE samplers: a KB spline without ease is a cubic Hermite
curve in time, which is what glTF's cubic sampler is, so they are exact up
to glTF's float32 storage; with a distance tolerance (or ease) they go out
LINEAR within it.  `rate=` bakes at a fixed rate instead.  Every channel's
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
from typing import Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from .._checks import _check_positive
from ..motion.clip import POSITION_CHANNELS, Joint, Motion, check_motion
from ..motion.kinematics import local_offsets
from ..position import PositionSpline
from ..quaternion import _angle_between, slerp
from ..rotation import RotationSpline
from .adaptive import MIN_KEY_SPACING, SPLIT_ANGLE, linear_keys

__all__ = ["export_gltf", "motion_to_gltf", "reduction_to_gltf", "GltfExport",
           "CHECKS_PER_INTERVAL", "DEFAULT_ANGLE_TOLERANCE", "read_gltf", "GltfError",
           "GltfScene", "GltfChannel", "GltfNode", "GltfSkin"]

# Points per stored interval where what glTF will play back is compared
# with the spline (besides the stored keys themselves).
CHECKS_PER_INTERVAL = 16

# The default angle tolerance (radians): 0.006 degrees, a hundredth of a
# pixel's turn at a 1000-pixel field of view of 60 degrees.
DEFAULT_ANGLE_TOLERANCE = 1e-4
# Where a position channel must go out LINEAR (ease) and no distance
# tolerance is given: this fraction of the channel's extent.
_RELATIVE_DISTANCE_TOLERANCE = 1e-6

_PATHS: dict[str, type[Any]] = {"translation": PositionSpline, "scale": PositionSpline, "rotation": RotationSpline}


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
    """
    gltf: Any
    interpolation: dict[tuple[str, str], str]
    max_error: dict[tuple[str, str], float]
    key_counts: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)


Channel = Union[PositionSpline, RotationSpline, "tuple[Any, Any]"]


def export_gltf(channels: Mapping[str, Mapping[str, Channel]],
                path: Union[str, os.PathLike[str], None] = None, *,
                rate: Optional[float] = None, angle_tolerance: Optional[float] = None,
                distance_tolerance: Optional[float] = None, time_offset: float = 0.0,
                parents: Optional[Mapping[str, str]] = None,
                offsets: Optional[Mapping[str, ArrayLike]] = None,
                name: str = "kbspline") -> GltfExport:
    """Writes splines as one glTF 2.0 animation.

    Parameters
    ----------
    channels : dict
        ``{node name: {path: spline or (spline, index)}}``, path one of
        ``"translation"``, ``"scale"`` (PositionSpline, D = 3) or
        ``"rotation"`` (RotationSpline); `index` picks one track of a batched
        spline.
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
        In the channels' units: with it, translations and scales are LINEAR
        keys within it too, otherwise exact CUBICSPLINE (position splines
        with ease, which glTF's cubic cannot follow, then use a millionth of
        the channel's extent).
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
        Where a tolerance would need keys closer than
        `kbspline.formats.adaptive.MIN_KEY_SPACING` (0.5 ms, which importers
        keep); the error reached shows in `max_error`.
    """
    import pygltflib as gl

    plan = _Plan(rate, angle_tolerance, distance_tolerance, float(time_offset))
    if not isinstance(channels, Mapping) or not channels:
        raise TypeError("channels must be a non-empty dict {node: {path: spline}}")
    parents = dict(parents or {})
    offsets = {node: _check_offset(node, value) for node, value in (offsets or {}).items()}
    nodes = list(dict.fromkeys([*channels, *parents.values(), *offsets]))
    for child, parent in parents.items():
        if child not in nodes:
            raise ValueError(f"parents names {child!r}, which is not a node")
    _check_acyclic(parents)

    blob = _Blob()
    samplers, anim_channels, interpolation, max_error, key_counts = [], [], {}, {}, {}
    for node, paths in channels.items():
        if not isinstance(paths, Mapping):
            raise TypeError(f"channels[{node!r}] must be a dict {{path: spline}}")
        for target, entry in paths.items():
            track = _Track(node, target, entry)
            times, output, kind, error = track.sampled(plan.times(track), plan.offset)
            plan.check(track, error)
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

    children = {n: [nodes.index(c) for c, p in parents.items() if p == n] for n in nodes}
    gltf_nodes = [gl.Node(name=n, children=children[n] or None,  # None: omitted
                          translation=offsets.get(n)) for n in nodes]
    doc = gl.GLTF2(
        asset=gl.Asset(generator="kbspline", version="2.0"), scene=0,
        scenes=[gl.Scene(nodes=[i for i, n in enumerate(nodes) if n not in parents])],
        nodes=gltf_nodes, animations=[gl.Animation(name=name, samplers=samplers,
                                                   channels=anim_channels)],
        accessors=blob.accessors, bufferViews=blob.views,
        buffers=[gl.Buffer(byteLength=len(blob.data))])
    doc.set_binary_blob(bytes(blob.data))
    if path is not None:
        _save(gl, doc, pathlib.Path(path))
    return GltfExport(doc, interpolation, max_error, key_counts)


def motion_to_gltf(motion: Motion, path: Union[str, os.PathLike[str], None] = None, *,
                   angle_tolerance: Optional[float] = None,
                   distance_tolerance: Optional[float] = None, rate: Optional[float] = None,
                   scale: float = 1.0, tension: float = 0.0, continuity: float = 0.0,
                   bias: float = 0.0) -> GltfExport:
    """Writes a clip as glTF.

    A node per joint in the BVH hierarchy (and one per End Site, named
    ``"<joint>_end"``), bone offsets as the nodes' fixed translations, joint
    rotations as squad splines through the frames written as LINEAR keys
    within `angle_tolerance`, and joints with position channels as exact
    cubic translations (LINEAR within `distance_tolerance` when given).

    Parameters
    ----------
    motion : Motion
        The clip, of at least 2 frames.
    path : str or os.PathLike, optional
        ``.gltf`` or ``.glb``; None to only return the document.
    angle_tolerance : float, optional
        Radians, default DEFAULT_ANGLE_TOLERANCE.
    distance_tolerance : float, optional
        In glTF's units, after `scale`.
    rate : float, optional
        Instead of tolerances, bake rotations at this many samples per second
        (every frame kept), as earlier versions did at the clip's rate.
    scale : float
        Multiplies every length, e.g. 0.01 for a centimetre clip in glTF's
        metres.
    tension, continuity, bias : float
        Of the splines through the frames.

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
    """
    check_motion(motion, "motion")
    if motion.num_frames < 2:
        raise ValueError("motion_to_gltf needs a clip of at least 2 frames")
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive number, not {scale}")
    joints = motion.joints
    names = [joint.name for joint in joints]
    if len(set(names)) != len(names):
        raise ValueError("the clip's joint names are not unique")
    times = motion.times
    rotations = RotationSpline(times, motion.rotations(), tension, continuity, bias)
    moving = _moving(motion)
    translations = (PositionSpline(times, local_offsets(motion)[moving] * scale, tension,
                                   continuity, bias) if moving else None)
    channels = _skeleton_channels(motion, lambda j: (rotations, j),
                                  lambda j: (translations, moving.index(j)))
    return export_gltf(channels, path, rate=rate, angle_tolerance=angle_tolerance,
                       distance_tolerance=distance_tolerance, **_skeleton_nodes(motion, scale),
                       name="bvh")


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
    Sites (a node "<joint>_end" each)."""
    names = [joint.name for joint in motion.joints]
    moving = _moving(motion)
    parents, offsets = {}, {}
    for j, joint in enumerate(motion.joints):
        if j not in moving:
            offsets[joint.name] = joint.offset * scale
        if joint.parent >= 0:
            parents[joint.name] = names[joint.parent]
        if joint.end_site is not None:
            parents[f"{joint.name}_end"] = joint.name
            offsets[f"{joint.name}_end"] = joint.end_site * scale
    return {"parents": parents, "offsets": offsets}


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
    return export_gltf(channels, path, angle_tolerance=angle_tolerance,
                       **_skeleton_nodes(motion, scale), name="reduced")


class _Plan:
    """How channels are sampled: the spline's own cubic keys, LINEAR keys
    at a fixed rate, or LINEAR keys within a tolerance (placed once per
    spline for all of its tracks)."""

    def __init__(self, rate, angle_tolerance, distance_tolerance, offset):
        if rate is not None and (angle_tolerance is not None or distance_tolerance is not None):
            raise ValueError("give rate= (a fixed rate) or tolerances, not both")
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
        if not (track.target == "rotation" or track.spline._ease is not None
                or self.distance is not None):
            return None
        if self.rate is not None:
            return track.baked_times(self.rate)
        tolerance = self.tolerance(track)
        cached = self._keys.get((id(track.spline), tolerance))
        if cached is None:
            cached = (track.spline, linear_keys(track.spline, tolerance,
                                                round_times=self._float32_times))
            self._keys[id(track.spline), tolerance] = cached
        return cached[1][track.flat_index]

    def tolerance(self, track):
        if track.target == "rotation":
            return self.angle
        if self.distance is not None:
            return self.distance
        values = track(track.knots)
        return _RELATIVE_DISTANCE_TOLERANCE * max(np.ptp(values, axis=0).max(),
                                                  np.abs(values).max(), 1e-300)

    def check(self, track, error):
        """Warns when a channel misses its tolerance (keys would have had to
        come closer than importers keep)."""
        if self.rate is None and self.times(track) is not None:
            tolerance = self.tolerance(track)
            if error > tolerance * (1 + 1e-6):
                warnings.warn(f"{track.where}: glTF playback strays up to {error:.3g} from "
                              f"the spline, beyond the tolerance {tolerance:.3g}: it would "
                              f"need keys closer than {MIN_KEY_SPACING} s", stacklevel=3)

    def _float32_times(self, t):
        return (t - self.offset).astype(np.float32).astype(np.float64) + self.offset


def _check_offset(node, value):
    offset = np.asarray(value, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.all(np.isfinite(offset.astype(np.float32)))
    if offset.shape != (3,) or not finite:
        raise ValueError(f"offsets[{node!r}] must be 3 numbers finite as float32 "
                         f"(|x| < 3.4e38), not {value!r}")
    return offset.tolist()


def _as_float32(what, rows, times):
    """`rows` (one per time) as glTF's float32, or a ValueError naming the
    first row that is not finite there: accessors must not hold inf or NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        stored = np.asarray(rows).astype(np.float32)
    finite = np.isfinite(stored).reshape(len(stored), -1).all(axis=1)
    if not finite.all():
        i = int(np.argmin(finite))
        raise ValueError(f"{what} {float(times[i])!r} (row {i}) is not finite as glTF's "
                         f"float32 (|x| < 3.4e38): {np.asarray(rows)[i].tolist()}")
    return stored


def _check_acyclic(parents):
    for start in parents:
        seen, node = {start}, parents[start]
        while node in parents:
            if node in seen:
                raise ValueError(f"parents has a cycle through {node!r}")
            seen.add(node)
            node = parents[node]


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


class _Track:
    """One channel: a single track of a spline, checked against its path."""

    def __init__(self, node, target, entry):
        where = f"channels[{node!r}][{target!r}]"
        if target not in _PATHS:
            raise ValueError(f"{where}: the path must be one of {sorted(_PATHS)}")
        spline, index = entry if isinstance(entry, tuple) else (entry, ())
        if not isinstance(spline, _PATHS[target]):
            raise TypeError(f"{where} must be a {_PATHS[target].__name__}, "
                            f"not {type(spline).__name__}")
        index = index if isinstance(index, tuple) else (index,)
        try:
            one_track = np.ndim(np.empty(spline.batch_shape)[index]) == 0
        except (IndexError, TypeError, ValueError):
            one_track = False
        if not one_track:
            raise ValueError(f"{where}: index {index} does not pick one track of a batch "
                             f"of shape {spline.batch_shape}")
        if isinstance(spline, PositionSpline) and spline.dim != 3:
            raise ValueError(f"{where}: a {target} needs D = 3, not D = {spline.dim}")
        self.where, self.target, self.spline, self.index = where, target, spline, index
        self.flat_index = int(np.arange(np.prod(spline.batch_shape, dtype=int))
                              .reshape(spline.batch_shape)[index])
        knots = spline.breakpoints
        self.knots = knots[index] if knots.ndim > 1 else knots

    def __call__(self, t):
        return self.spline(t)[self.index]

    def sampled(self, times, offset):
        """(glTF times, output rows, interpolation, measured max error):
        LINEAR keys at `times`, or the spline's own keys as CUBICSPLINE
        when `times` is None."""
        cubic = times is None
        times = self.knots if cubic else times
        stored = _as_float32(f"{self.where}: time", times - offset, times)
        if stored[0] < 0:
            raise ValueError(f"{self.where}: times start at {times[0]}, before time_offset "
                             f"{offset}; glTF times cannot be negative")
        if not np.all(np.diff(stored) > 0):
            raise ValueError(f"{self.where}: key times are too close to stay increasing "
                             f"as glTF's float32 (pass a time_offset near the start)")
        if cubic:
            output = _as_float32(f"{self.where}: the key (in-tangent, value, out-tangent) "
                                 f"at time", self._hermite_rows(), times)
            play = _play_cubic
        else:
            output = self(times)
            if self.target == "rotation":
                output = _shortest_path(output if not self.spline.scalar_first
                                        else output[..., [1, 2, 3, 0]])
            output = _as_float32(f"{self.where}: the sample at time", output, times)
            play = _play_slerp if self.target == "rotation" else _play_linear
        error = self._max_error(stored.astype(np.float64), output.astype(np.float64), play,
                                offset)
        return stored, output, "CUBICSPLINE" if cubic else "LINEAR", error

    def baked_times(self, rate):
        """Every key time and a grid of `rate` per second."""
        t0, t1 = float(self.knots[0]), float(self.knots[-1])
        grid = t0 + np.arange(int(np.floor((t1 - t0) * rate)) + 1) / rate
        # keep every key time; drop grid points that would nearly repeat one
        k = np.clip(np.searchsorted(self.knots, grid), 1, len(self.knots) - 1)
        gap = np.minimum(grid - self.knots[k - 1], self.knots[k] - grid)
        times = np.union1d(grid[np.abs(gap) >= 1e-3 / rate], self.knots)
        return self._split_spins(times) if self.target == "rotation" else times

    def _split_spins(self, times):
        """`times` with more where the spline turns by more than a quarter
        turn between two, at equal steps of the angle it sweeps, so that
        glTF's slerp, which takes the shorter way between neighbouring keys,
        replays every turn of a spin."""
        swept = self.spline.angle(times)[self.index]
        steps = np.ceil(np.diff(swept) / SPLIT_ANGLE).astype(int)
        extra = [swept[i] + (swept[i + 1] - swept[i]) * np.arange(1, n) / n
                 for i, n in enumerate(steps) if n > 1]
        if not extra:
            return times
        return np.union1d(times, self.spline.time_at_angle(np.concatenate(extra))[self.index])

    def _hermite_rows(self):
        """(K, 3, 3): glTF's (in-tangent, value, out-tangent) per key, the
        tangents per second (glTF multiplies them by the key interval)."""
        coef = self.spline.coefficients[self.index]          # (S, 4, 3) in u
        dt = np.diff(self.knots)[:, None]
        rows = np.zeros((len(self.knots), 3, 3))
        rows[:-1, 1] = coef[:, 0]
        rows[-1, 1] = coef[-1].sum(axis=0)
        rows[:-1, 2] = coef[:, 1] / dt                        # d/dt at the segment's start
        rows[1:, 0] = (coef[:, 1] + 2 * coef[:, 2] + 3 * coef[:, 3]) / dt  # and at its end
        return rows

    def _max_error(self, times, output, play, offset):
        u = np.arange(CHECKS_PER_INTERVAL + 1) / (CHECKS_PER_INTERVAL + 1)
        probe = np.append((times[:-1, None] + np.diff(times)[:, None] * u).ravel(), times[-1])
        # float32 key times can round just past the spline's domain
        truth = self(np.clip(probe + offset, self.knots[0], self.knots[-1]))
        played = play(times, output, probe)
        if self.target == "rotation":
            if self.spline.scalar_first:
                truth = truth[..., [1, 2, 3, 0]]
            return float(np.max(_angle_between(played, truth)))
        return float(np.max(np.linalg.norm(played - truth, axis=-1)))


def _shortest_path(q):
    """Flips quaternions so that each is within 90 degrees of the previous
    one: slerp between neighbours then takes the short way round."""
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    flips = np.cumsum(np.sum(q[1:] * q[:-1], axis=-1) < 0) % 2
    q[1:][flips == 1] *= -1
    return q


def _locate(times, t):
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    u = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0.0, 1.0)[:, None]
    return k, u


def _play_linear(times, values, t):
    k, u = _locate(times, t)
    return (1 - u) * values[k] + u * values[k + 1]


def _play_slerp(times, q, t):
    k, u = _locate(times, t)
    return slerp(q[k], q[k + 1], u[:, 0], scalar_first=False)


def _play_cubic(times, rows, t):
    k, u = _locate(times, t)
    d = (times[k + 1] - times[k])[:, None]
    u2, u3 = u * u, u * u * u
    return ((2 * u3 - 3 * u2 + 1) * rows[k, 1] + d * (u3 - 2 * u2 + u) * rows[k, 2]
            + (-2 * u3 + 3 * u2) * rows[k + 1, 1] + d * (u3 - u2) * rows[k + 1, 0])


# -- reading -----------------------------------------------------------------
#
# glTF 2.0 files are parsed here without pygltflib, so that every length,
# offset and count is checked before bytes are read: a malformed file is a
# GltfError naming the accessor, buffer view or field, never an IndexError.

class GltfError(ValueError):
    """A malformed glTF file; the message names the file and what is wrong."""


_GLB_MAGIC, _JSON_CHUNK, _BIN_CHUNK = 0x46546C67, 0x4E4F534A, 0x004E4942
_DATA_URIS = ("data:application/octet-stream;base64,", "data:application/gltf-buffer;base64,")
_COMPONENTS = {5120: ("<i1", 127.0), 5121: ("<u1", 255.0), 5122: ("<i2", 32767.0),
               5123: ("<u2", 65535.0), 5125: ("<u4", None), 5126: ("<f4", None)}
_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")
_TARGET_WIDTHS = {"translation": 3, "rotation": 4, "scale": 3}
_MAX_ZERO_ELEMENTS = 1 << 24


@dataclasses.dataclass(frozen=True)
class GltfChannel:
    """One animation channel, evaluated as the glTF 2.0 sampler rules say.

    Attributes
    ----------
    times : ndarray (K,)
        Key times, seconds.
    values : ndarray (K, n) or (3K, n)
        Key values, or for CUBICSPLINE (in-tangent, value, out-tangent) per
        key; rotations as stored, (x, y, z, w).
    interpolation : str
        ``"STEP"``, ``"LINEAR"`` or ``"CUBICSPLINE"``.
    path : str
        ``"translation"``, ``"rotation"``, ``"scale"`` or ``"weights"``.
    """
    times: np.ndarray
    values: np.ndarray
    interpolation: str
    path: str

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """The channel's values at times `t`, clamped outside the keys as viewers do.

        Parameters
        ----------
        t : float or array_like (M,)
            Seconds.

        Returns
        -------
        ndarray (M, n)
            Rotations (M, 4) as unit (w, x, y, z).
        """
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        keys, cubic = self.times, self.interpolation == "CUBICSPLINE"
        points = self.values[1::3] if cubic else self.values
        if len(keys) == 1:
            out = np.repeat(points[:1], len(t), axis=0)
            return self._as_output(out)
        k = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 2)
        span = keys[k + 1] - keys[k]
        s = np.clip((t - keys[k]) / span, 0.0, 1.0)[:, None]
        if self.interpolation == "STEP":
            out = np.where(s < 1.0, points[k], points[k + 1])
        elif cubic:
            d = span[:, None]
            s2, s3 = s * s, s * s * s
            out = ((2 * s3 - 3 * s2 + 1) * points[k] + d * (s3 - 2 * s2 + s) * self.values[3 * k + 2]
                   + (-2 * s3 + 3 * s2) * points[k + 1] + d * (s3 - s2) * self.values[3 * k + 3])
        elif self.path == "rotation":
            return slerp(points[k], points[k + 1], s[:, 0], scalar_first=False)[:, [3, 0, 1, 2]]
        else:
            out = (1 - s) * points[k] + s * points[k + 1]
        return self._as_output(out)

    def _as_output(self, out):
        if self.path != "rotation":
            return out
        return (out / np.linalg.norm(out, axis=1, keepdims=True))[:, [3, 0, 1, 2]]


@dataclasses.dataclass(frozen=True)
class GltfNode:
    """A node of the scene.

    Attributes
    ----------
    name : str
        Its name, ``node<i>`` when unnamed.
    parent : int
        Parent index, -1 for a root.
    children : list of int
        Child indices.
    translation : ndarray (3,)
        Rest translation.
    rotation : ndarray (4,)
        Rest rotation, (w, x, y, z).
    scale : ndarray (3,)
        Rest scale (a node's matrix is decomposed into these three).
    """
    name: str
    parent: int
    children: list[int]
    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray


@dataclasses.dataclass(frozen=True)
class GltfSkin:
    """A skin: the skeleton a mesh is bound to.

    Attributes
    ----------
    name : str
        Its name.
    joints : list of int
        The joints' node indices.
    """
    name: str
    joints: list[int]


@dataclasses.dataclass(frozen=True)
class GltfScene:
    """What `read_gltf` read.

    Attributes
    ----------
    nodes : list of GltfNode
        Every node, in file order.
    skins : list of GltfSkin
        Every skin.
    animations : dict
        ``{animation name: {(node name, path): GltfChannel}}``, an unnamed
        animation named by its index as a string.
    """
    nodes: list[GltfNode]
    skins: list[GltfSkin]
    animations: dict[str, dict[tuple[str, str], GltfChannel]]

    def to_motion(self, animation: str, fps: float, skin: int = 0) -> Motion:
        """A skin's skeleton animated by `animation`, as a BVH-style Motion.

        Parameters
        ----------
        animation : str
            The animation's name, a key of `animations`.
        fps : float
            Frames per second, sampled from the animation's first key time to its
            last (frame 0 at the first).
        skin : int
            Which skin.

        Returns
        -------
        Motion
            Its joints are the skin's joints (parents first), offsets their rest
            translations; every joint has rotation channels (ZXY Euler), and the
            roots and joints whose translation is animated have position
            channels.  The root carries its ancestors' transforms (e.g. a Y-up
            correction).

        Raises
        ------
        ValueError
            For an unknown animation, a skin index out of range, or an animation
            without channels.

        Warns
        -----
        UserWarning
            BVH has no scale: uniform scale of the ancestors multiplies lengths;
            scale channels, and scale that is not uniform, are ignored with a
            warning where they differ from 1 by more than 1e-3.
        """
        return _skin_motion(self, animation, fps, skin)


def read_gltf(path: Union[str, os.PathLike[str]]) -> GltfScene:
    """Reads a glTF 2.0 file's nodes, skins and animations.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.gltf`` (embedded data URIs or external buffers) or ``.glb``.

    Returns
    -------
    GltfScene

    Raises
    ------
    GltfError
        For a malformed file, naming the accessor, buffer view or field.
    """
    path = pathlib.Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GltfError(f"{path}: {exc.strerror or exc}") from None
    return _Reader(path, data).scene()


class _Reader:
    def __init__(self, path, data):
        self.path = path
        self.doc, self.glb_bin = self._parse(data)
        self.buffers = {}

    def fail(self, what):
        raise GltfError(f"{self.path}: {what}")

    def _parse(self, data):
        import json
        glb_bin = None
        if data[:4] == b"glTF":
            if len(data) < 20:
                self.fail("a GLB file needs a 12-byte header and a chunk")
            magic, version, length = np.frombuffer(data[:12], "<u4")
            if version != 2:
                self.fail(f"GLB version {version}, not 2")
            if length > len(data):
                self.fail(f"the GLB header says {length} bytes, the file has {len(data)}")
            chunks, offset = {}, 12
            while offset + 8 <= length:
                size, kind = (int(x) for x in np.frombuffer(data[offset:offset + 8], "<u4"))
                if offset + 8 + size > length:
                    self.fail(f"a GLB chunk of {size} bytes at byte {offset} runs past the end")
                chunks.setdefault(kind, data[offset + 8:offset + 8 + size])
                offset += 8 + size
            if _JSON_CHUNK not in chunks:
                self.fail("the GLB file has no JSON chunk")
            text, glb_bin = chunks[_JSON_CHUNK], chunks.get(_BIN_CHUNK)
        elif data[:1] in (b"{", b" ", b"\n", b"\r", b"\t", b"\xef"):
            text = data
        else:
            self.fail("neither a GLB file (magic 'glTF') nor glTF JSON")
        try:
            doc = json.loads(text.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            self.fail(f"the JSON does not parse: {exc}")
        if not isinstance(doc, dict):
            self.fail("the JSON is not an object")
        return doc, glb_bin

    def items(self, name):
        value = self.doc.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.fail(f"'{name}' must be a list of objects")
        return value

    def field(self, obj, key, where, kind=int, default=None):
        value = obj.get(key, default)
        if value is None or (kind is int and (isinstance(value, bool) or not isinstance(value, int)))\
                or (kind is not int and not isinstance(value, kind)):
            self.fail(f"{where}: '{key}' is missing or not a {kind.__name__}")
        return value

    def buffer(self, index):
        if index not in self.buffers:
            buffers = self.items("buffers")
            if not 0 <= index < len(buffers):
                self.fail(f"buffer {index} does not exist")
            uri = buffers[index].get("uri")
            if uri is None:
                if self.glb_bin is None:
                    self.fail(f"buffer {index} has no uri and there is no GLB binary chunk")
                data = self.glb_bin
            elif not isinstance(uri, str):
                self.fail(f"buffer {index}: uri is not a string")
            elif uri.startswith("data:"):
                prefix = next((p for p in _DATA_URIS if uri.startswith(p)), None)
                if prefix is None:
                    self.fail(f"buffer {index}: a data URI must be base64 of "
                              f"application/octet-stream or application/gltf-buffer")
                try:
                    data = base64.b64decode(uri[len(prefix):], validate=True)
                except ValueError:
                    self.fail(f"buffer {index}: its data URI is not valid base64")
            else:
                from urllib.parse import unquote
                try:
                    data = (self.path.parent / unquote(uri)).read_bytes()
                except OSError as exc:
                    self.fail(f"buffer {index}: cannot read {uri!r}: {exc.strerror or exc}")
            length = self.field(buffers[index], "byteLength", f"buffer {index}")
            if length > len(data):
                self.fail(f"buffer {index}: byteLength {length}, but only {len(data)} bytes")
            self.buffers[index] = data
        return self.buffers[index]

    def view(self, index, where):
        views = self.items("bufferViews")
        if not isinstance(index, int) or not 0 <= index < len(views):
            self.fail(f"{where}: bufferView {index} does not exist")
        view = views[index]
        data = self.buffer(self.field(view, "buffer", f"bufferView {index}"))
        start = self.field(view, "byteOffset", f"bufferView {index}", default=0)
        length = self.field(view, "byteLength", f"bufferView {index}")
        if start < 0 or length < 0 or start + length > len(data):
            self.fail(f"bufferView {index}: bytes {start}..{start + length} lie outside its "
                      f"buffer of {len(data)}")
        return data[start:start + length], view.get("byteStride")

    def accessor(self, index):
        """(count, width) float64 values of accessor `index`."""
        accessors = self.items("accessors")
        where = f"accessor {index}"
        if not isinstance(index, int) or not 0 <= index < len(accessors):
            self.fail(f"{where} does not exist")
        acc = accessors[index]
        count = self.field(acc, "count", where)
        kind = acc.get("componentType")
        width = _WIDTHS.get(acc.get("type"))
        if kind not in _COMPONENTS or width is None or count < 1:
            self.fail(f"{where}: componentType {kind}, type {acc.get('type')!r} or count "
                      f"{count} is not valid")
        dtype, scale = _COMPONENTS[kind]
        size = np.dtype(dtype).itemsize
        if "bufferView" not in acc and count > _MAX_ZERO_ELEMENTS:
            # zeros (for a sparse accessor) are the one thing not bounded by the file's size
            self.fail(f"{where}: count {count} without a bufferView exceeds "
                      f"{_MAX_ZERO_ELEMENTS}")
        if "bufferView" not in acc:
            out = np.zeros((count, width))
        else:
            data, stride = self.view(acc["bufferView"], where)
            offset = self.field(acc, "byteOffset", where, default=0)
            stride = stride or width * size
            end = offset + stride * (count - 1) + width * size
            if offset < 0 or stride < width * size or offset % size or stride % size \
                    or end > len(data):
                self.fail(f"{where}: {count} elements of {width * size} bytes (stride "
                          f"{stride}) from byte {offset} run past its bufferView of "
                          f"{len(data)} bytes")
            raw = np.lib.stride_tricks.as_strided(
                np.frombuffer(data, dtype, offset=offset, count=(end - offset) // size),
                (count, width), (stride, size))
            out = raw.astype(np.float64)
        if "sparse" in acc:
            out = self._sparse(acc["sparse"], out, dtype, where)
        if scale is not None and acc.get("normalized"):
            out = np.maximum(out / scale, -1.0)
        return out

    def _sparse(self, sparse, out, dtype, where):
        n = self.field(sparse, "count", f"{where} sparse")
        idx, vals = sparse.get("indices", {}), sparse.get("values", {})
        kind = idx.get("componentType")
        if kind not in (5121, 5123, 5125) or not isinstance(idx, dict):
            self.fail(f"{where}: sparse indices must be unsigned integers")
        index_bytes, _ = self.view(idx.get("bufferView"), f"{where} sparse indices")
        value_bytes, _ = self.view(vals.get("bufferView"), f"{where} sparse values")
        i_dtype = _COMPONENTS[kind][0]
        i_off = self.field(idx, "byteOffset", where, default=0)
        v_off = self.field(vals, "byteOffset", where, default=0)
        width, size = out.shape[1], np.dtype(dtype).itemsize
        if (i_off + n * np.dtype(i_dtype).itemsize > len(index_bytes)
                or v_off + n * width * size > len(value_bytes)):
            self.fail(f"{where}: its sparse indices or values run past their bufferViews")
        rows = np.frombuffer(index_bytes, i_dtype, n, i_off).astype(np.intp)
        if np.any(rows >= len(out)):
            self.fail(f"{where}: a sparse index is beyond its count {len(out)}")
        out = out.copy()
        out[rows] = np.frombuffer(value_bytes, dtype, n * width, v_off).reshape(n, width)
        return out

    def scene(self):
        nodes = self.nodes()
        skins = [GltfSkin(s.get("name") or f"skin{i}", self._joints(s, i, len(nodes)))
                 for i, s in enumerate(self.items("skins"))]
        animations = {}
        for a, anim in enumerate(self.items("animations")):
            name = anim.get("name") or str(a)
            animations[name] = self.animation(anim, a, nodes)
        return GltfScene(nodes, skins, animations)

    def _joints(self, skin, i, n_nodes):
        joints = skin.get("joints")
        if (not isinstance(joints, list) or not joints
                or not all(isinstance(j, int) and 0 <= j < n_nodes for j in joints)):
            self.fail(f"skin {i}: joints must be a list of node indices")
        return joints

    def nodes(self):
        raw = self.items("nodes")
        parent = [-1] * len(raw)
        for i, node in enumerate(raw):
            for child in node.get("children", []):
                if not isinstance(child, int) or not 0 <= child < len(raw) or parent[child] >= 0:
                    self.fail(f"node {i}: child {child!r} is not a node, or has two parents")
                parent[child] = i
        names, out = {}, []
        for i, node in enumerate(raw):
            name = node.get("name") or f"node{i}"
            if name in names:    # names are keys of the animations: keep them distinct
                name = f"{name}#{i}"
            names[name] = i
            out.append(GltfNode(name, parent[i], list(node.get("children", [])),
                                *self._rest(node, i)))
        return out

    def _rest(self, node, i):
        numbers = {"translation": 3, "rotation": 4, "scale": 3, "matrix": 16}
        for key, n in numbers.items():
            value = node.get(key)
            if value is not None and (not isinstance(value, list) or len(value) != n or not all(
                    isinstance(x, (int, float)) and np.isfinite(x) for x in value)):
                self.fail(f"node {i}: '{key}' must be {n} finite numbers")
        if "matrix" in node:
            m = np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T  # column-major
            scale = np.linalg.norm(m[:3, :3], axis=0)
            if np.any(scale == 0):
                self.fail(f"node {i}: its matrix has a zero scale")
            from ..quaternion import quat_from_matrix
            try:
                rotation = quat_from_matrix(m[:3, :3] / scale)
            except ValueError:
                self.fail(f"node {i}: its matrix is not translation, rotation and scale")
            return m[:3, 3].copy(), rotation, scale
        x, y, z, w = node.get("rotation", [0.0, 0.0, 0.0, 1.0])
        return (np.array(node.get("translation", [0.0, 0.0, 0.0]), dtype=np.float64),
                np.array([w, x, y, z], dtype=np.float64),
                np.array(node.get("scale", [1.0, 1.0, 1.0]), dtype=np.float64))

    def animation(self, anim, a, nodes):
        samplers = anim.get("samplers", [])
        channels = {}
        for c, channel in enumerate(anim.get("channels", [])):
            where = f"animation {a} channel {c}"
            target = channel.get("target", {}) if isinstance(channel, dict) else {}
            node, path = target.get("node"), target.get("path")
            if node is None:   # allowed by the spec (an extension's target): nothing to play
                continue
            if not isinstance(node, int) or not 0 <= node < len(nodes):
                self.fail(f"{where}: target node {node!r} does not exist")
            if path not in (*_TARGET_WIDTHS, "weights"):
                self.fail(f"{where}: target path {path!r} is not translation, rotation, "
                          f"scale or weights")
            s = channel.get("sampler")
            if not isinstance(s, int) or not 0 <= s < len(samplers):
                self.fail(f"{where}: sampler {s!r} does not exist")
            channels[nodes[node].name, path] = self.sampler(samplers[s], f"{where} sampler {s}",
                                                            path)
        return channels

    def sampler(self, sampler, where, path):
        interpolation = sampler.get("interpolation", "LINEAR")
        if interpolation not in _INTERPOLATIONS:
            self.fail(f"{where}: interpolation {interpolation!r} is not one of {_INTERPOLATIONS}")
        times = self.accessor(sampler.get("input"))
        if times.shape[1] != 1:
            self.fail(f"{where}: input accessor {sampler.get('input')} is not SCALAR")
        times = times[:, 0]
        if not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
            self.fail(f"{where}: input accessor {sampler.get('input')}: key times must be "
                      f"finite and increasing")
        values = self.accessor(sampler.get("output"))
        rows = len(times) * (3 if interpolation == "CUBICSPLINE" else 1)
        width = _TARGET_WIDTHS.get(path)
        if width is None:   # weights: scalars, as many per key as the mesh has targets
            if values.shape[1] != 1 or values.size % rows:
                self.fail(f"{where}: output accessor {sampler.get('output')} does not hold "
                          f"a whole number of weights per key")
            values = values.reshape(rows, -1)
        elif values.shape != (rows, width):
            self.fail(f"{where}: output accessor {sampler.get('output')} has shape "
                      f"{values.shape}, not ({rows}, {width}) for {len(times)} keys of {path}")
        if not np.all(np.isfinite(values)):
            self.fail(f"{where}: output accessor {sampler.get('output')} holds non-finite values")
        if path == "rotation" and np.any(np.linalg.norm(values[1::3] if rows > len(times)
                                                        else values, axis=1) == 0):
            self.fail(f"{where}: output accessor {sampler.get('output')} holds a zero quaternion")
        return GltfChannel(times, values, interpolation, path)


def _skin_motion(scene, animation, fps, skin):
    """GltfScene.to_motion: see its docstring."""
    from ..quaternion import quat_from_matrix, quat_to_matrix
    if animation not in scene.animations:
        raise ValueError(f"animation {animation!r} is not one of {sorted(scene.animations)}")
    fps = _check_positive("fps", fps)
    if not (isinstance(skin, int) and 0 <= skin < len(scene.skins)):
        raise ValueError(f"skin must index one of the {len(scene.skins)} skins, not {skin!r}")
    channels = scene.animations[animation]
    if not channels:
        raise ValueError(f"animation {animation!r} has no channels")
    start = min(c.times[0] for c in channels.values())
    end = max(c.times[-1] for c in channels.values())
    times = start + np.arange(int(np.floor((end - start) * fps + 1e-9)) + 1) / fps

    nodes, members = scene.nodes, set(scene.skins[skin].joints)

    def skeleton_parent(i):
        p = nodes[i].parent
        while p >= 0 and p not in members:
            p = nodes[p].parent
        return p

    order = []        # parents before children, each root's subtree in turn
    pending = [j for j in scene.skins[skin].joints if skeleton_parent(j) < 0][::-1]
    while pending:
        j = pending.pop()
        order.append(j)
        pending += [c for c in scene.skins[skin].joints if skeleton_parent(c) == j][::-1]

    def local(i, path):
        channel = channels.get((nodes[i].name, path))
        rest = getattr(nodes[i], path)
        return channel(times) if channel is not None else np.tile(rest, (len(times), 1))

    def matrices(i):
        m = np.tile(np.eye(4), (len(times), 1, 1))
        m[:, :3, :3] = quat_to_matrix(local(i, "rotation")) * local(i, "scale")[:, None, :]
        m[:, :3, 3] = local(i, "translation")
        return m

    unused = [n for (n, path), c in channels.items() if path == "scale"
              and np.abs(c(times) - 1).max() > 1e-3]
    if unused:
        warnings.warn(f"BVH has no scale: the scale channels of {unused} are ignored",
                      stacklevel=3)
    joints, rotations, translations = [], [], []
    index = {j: k for k, j in enumerate(order)}
    for j in order:
        parent = skeleton_parent(j)
        moving = (nodes[j].name, "translation") in channels
        if parent < 0:   # the root carries its ancestors' transforms
            world = matrices(j)
            a = nodes[j].parent
            while a >= 0:
                world = matrices(a) @ world
                a = nodes[a].parent
            scale = np.linalg.norm(world[:, :3, :3], axis=1)          # (F, 3)
            length = float(scale.mean())
            if np.abs(scale / length - 1).max() > 1e-3:
                warnings.warn(f"{nodes[j].name}: the skeleton's scale is not uniform or "
                              f"changes; lengths use its mean {length:.6g}", stacklevel=3)
            rotations.append(quat_from_matrix(world[:, :3, :3] / scale[:, None, :]))
            translations.append(world[:, :3, 3])
            offset = world[0, :3, 3]
        else:
            rotations.append(local(j, "rotation"))
            translations.append(local(j, "translation") * length)
            offset = nodes[j].translation * length
        channels_ = (list(POSITION_CHANNELS) if parent < 0 or moving else []) + \
            ["Zrotation", "Xrotation", "Yrotation"]
        name = "_".join(nodes[j].name.split()) or f"node{j}"
        joints.append(Joint(name, index.get(parent, -1), offset, channels_))
    width = sum(len(joint.channels) for joint in joints)
    template = Motion(joints, 1.0 / fps, np.zeros((1, width)))
    return template.with_frames(np.stack(rotations), np.stack(translations), 1.0 / fps)
