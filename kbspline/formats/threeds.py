"""3D Studio keyframer files (.3ds) played as 3D Studio played them (SPEC 9c).

`read_3ds` reads the keyframer (KFDATA) of a .3ds file: its nodes, their
hierarchy, pivots and instance names, and every track with its keys as
stored.  Tracks evaluate as seed 002 (3D Studio's KXP spline code) does:
CompDeriv / CompAB tangents (kbspline's ``timing="3ds"``), end keys by
CompAB's rule for a key without a neighbour (``ends="reflect"``) and Ease.
The splines are kbspline's, so the evaluation runs in the C core; this file
only turns the file's conventions into their arguments.
"""
from __future__ import annotations

import dataclasses
import numbers
import os
from typing import Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from ..position import PositionSpline
from ..rotation import RotationSpline
from ..quaternion import quat_from_matrix
from .camera import FieldOfView, camera_facts
from .scene import Channel, Node, Scene, _looped_node
from .threeds_chunks import KEY_FIELDS, RawNode, RawTrack, ThreeDSError, parse

__all__ = ["read_3ds", "ThreeDSError", "ThreeDSScene", "Track", "LookAt"]

SPIN = 2 * np.pi - 1e-5      # CompAB's test: a key turning more sweeps every turn
TICKS_PER_FRAME = 160        # 3ds Max's 4800 ticks a second at 30 frames a second
# A camera's fov in degrees is this over its lens in mm (lib3ds; every real
# file's fov track and MDATA lens agree: 45 deg, 53.33 mm).
LENS_TIMES_FOV = 2400.0
# 3D Studio's fov spans the frame's width (3ds Max's default, Assimp's
# mHorizontalFOV); the file keeps no render size, so 3ds Max's default 640 x 480.
FOV_AXIS, DEFAULT_ASPECT = "horizontal", 4.0 / 3.0
_PATHS = {"position": "translation", "rotation": "rotation", "scale": "scale",
          "roll": "roll", "fov": "fov"}
_KINDS = {"object": "mesh", "camera": "camera", "target": "target", "light": "light",
          "spotlight": "light", "light_target": "target", "ambient": "light"}


class Track:
    """One keyframer track: its keys as stored and `track(t)` as 3D Studio played it.

    Attributes
    ----------
    kind : str
        ``"position"``, ``"rotation"``, ``"scale"``, ``"roll"``, ``"fov"``,
        ``"color"``, ``"hotspot"``, ``"falloff"``, ``"hide"`` or ``"morph"``.
    frames : ndarray (K,)
        Key frames (integers).
    values : ndarray (K, n)
        Key values as stored; rotation keys (angle, x, y, z): a turn of angle
        radians about the axis relative to the previous key.  Roll and fov in
        degrees.  Hide and morph keys have no values (morph: `names`).
    tension, continuity, bias, ease_to, ease_from : ndarray (K,)
        Per key; 0 where the key's flag word does not store them.
    key_flags : ndarray (K,)
        The flag word of each key.
    flags : int
        The track's flags: ``flags & 3`` is 0 (hold the end keys), 2 (repeat)
        or 3 (loop).
    fps : float
        Frames a second; `times` is ``frames / fps``.
    """

    def __init__(self, raw: RawTrack, fps: float):
        self.kind, self.flags, self.fps = raw.kind, raw.flags, fps
        self.frames, self.values, self.key_flags = raw.frames, raw.values, raw.key_flags
        self.names = raw.names
        self.tension, self.continuity, self.bias = (raw.tcb[name] for name in KEY_FIELDS[:3])
        self.ease_to, self.ease_from = raw.tcb["ease_to"], raw.tcb["ease_from"]
        self.path = _PATHS.get(self.kind, self.kind)
        self.interpolation = "TCB"
        self.times = self.frames / fps
        self._closed = False
        self._spline = None if len(self.frames) < 2 or self.kind in ("hide", "morph") \
            else self._build()

    def _build(self):
        if self.flags & 3 == 3 and len(self.frames) >= 3:
            try:           # a loop whose last key repeats the first runs across the seam
                spline = self._make("closed", np.eye(3))
                self._closed = True
                return spline
            except ValueError:
                pass       # any other loop repeats (SPEC 9c; the docs say so)
        return self._make("reflect", np.eye(3))

    def spline_in(self, axes: ArrayLike):
        """The track's spline in other axes.

        Parameters
        ----------
        axes : array_like (3, 3)
            Orthogonal: a position p becomes axes @ p, a rotation's log
            det(axes) axes @ log, a scale abs(axes) @ s (axes must then permute
            the axes, signs allowed); other tracks are unchanged.

        Returns
        -------
        PositionSpline or RotationSpline or None
            A one-key track is a constant two-key spline over its key and
            the next second; hide and morph tracks have none (None).
        """
        axes = np.asarray(axes, dtype=np.float64)
        if axes.shape != (3, 3) or not np.allclose(axes @ axes.T, np.eye(3), atol=1e-12):
            raise ValueError("axes must be an orthogonal (3, 3) matrix")
        if self.kind == "scale" and not np.allclose(np.abs(axes).sum(axis=1), 1.0, atol=1e-12):
            raise ValueError("a scale changes axes only by a signed permutation")
        if self.kind in ("hide", "morph"):
            return None
        return self._make("closed" if self._closed else "reflect", axes)

    def _make(self, ends: str, axes: np.ndarray):
        times, values = self.times, self.values
        tcb = (self.tension, self.continuity, self.bias)
        common = dict(timing="3ds", ends=ends, ease_from=self.ease_from, ease_to=self.ease_to)
        if len(times) == 1:
            times, values = np.array([times[0], times[0] + 1.0]), np.repeat(values, 2, axis=0)
            tcb, common = (0.0, 0.0, 0.0), dict(timing="3ds", ends="reflect")
        if self.kind == "rotation":
            turn_axes, angles = relative_turns(values)
            angles[1:] *= len(self.times) > 1          # one key: no second turn
            return RotationSpline.from_relative(times, np.linalg.det(axes) * turn_axes @ axes.T,
                                                angles, *tcb, **common)
        if self.kind == "scale":
            values = values @ np.abs(axes).T
        elif self.kind == "position":
            values = values @ axes.T
        return PositionSpline(times, values, *tcb, **common)      # roll, fov, colour ...

    def spline(self):
        """(spline, ()) when the track is exactly one kbspline spline (two or more
        keys, no repeat or loop), else None."""
        if self._spline is None or self.flags & 3:
            return None
        return self._spline, ()

    def key_times(self, start: float, end: float) -> np.ndarray:
        """Key times within [start, end], with their images in every
        period after the last key where the track repeats or loops.

        Parameters
        ----------
        start, end : float
            Seconds.

        Returns
        -------
        ndarray
            Increasing seconds.
        """
        times, (first, last) = self.times, (self.times[:1], self.times[-1:])
        if len(times) > 1 and self.flags & 3 and end > last[0] > first[0]:
            period = last[0] - first[0]
            cycles = np.arange(1, np.ceil((end - first[0]) / period) + 1)
            if len(cycles) * len(times) > 10_000_000:
                raise ValueError(f"{start}..{end} s holds more than 10000000 repeated "
                                 f"key times of {self!r}")
            times = np.concatenate([times, (times[None] + period * cycles[:, None]).ravel()])
        times = np.unique(times)
        return times[(times >= start) & (times <= end)]

    def _frames_played(self, t: np.ndarray) -> np.ndarray:
        """Seconds t mapped into the keys: held before the first, and after the
        last held, or wrapped when the track repeats or loops."""
        first, last = self.times[0], self.times[-1]
        if self.flags & 3 and last > first:
            wrapped = first + np.fmod(t - first, last - first)
            t = np.where(t > last, wrapped, t)
        return np.clip(t, first, last)

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """The track at seconds `t`.

        Parameters
        ----------
        t : float or array_like (M,)
            Seconds (frame = t * fps).  Before the first key the track holds
            it; after the last it holds, or repeats when ``flags & 3``.

        Returns
        -------
        ndarray (M, n)
            Rotations (M, 4) unit (w, x, y, z); hide (M, 1) 1.0 where hidden
            (each key passed toggles, as lib3ds plays it: shown before the first);
            morph (M, 1) the index of the key in effect (its name in `names`).
        """
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        if t.ndim != 1 or not np.all(np.isfinite(t)):
            raise ValueError("t must be finite seconds, a scalar or shape (M,)")
        if not len(self.frames):
            raise ValueError(f"this {self.kind} track has no keys")
        played = self._frames_played(t)
        if self.kind in ("hide", "morph"):   # keys passed so far; hide toggles at each
            passed = np.searchsorted(self.times, np.where(t < self.times[0], t, played),
                                     side="right")
            out = (passed % 2 == 1) if self.kind == "hide" else np.maximum(passed - 1, 0)
            return out.astype(np.float64)[:, None]
        if self._spline is not None:
            return np.asarray(self._spline(played)).reshape(len(t), -1)
        if self.kind == "rotation":
            axes, angles = relative_turns(self.values)
            return np.repeat(_turn(axes[0], angles[0])[None], len(t), axis=0)
        return np.repeat(self.values[:1], len(t), axis=0)

    def __repr__(self) -> str:
        return (f"Track({self.kind!r}, keys={len(self.frames)}, flags={self.flags}, "
                f"frames={self.frames[0] if len(self.frames) else None}.."
                f"{self.frames[-1] if len(self.frames) else None})")


class LookAt:
    """A camera's drawn orientation, the "rotation" channel of a camera node:
    it looks from its position track's point at its target's, its local -z
    along the view, +y up (world Z up; looking straight up or down, -X up, as
    lib3ds; at its target, along +Y), turned by its roll about its back
    axis (+z), that is by minus the roll about the view direction, as
    lib3ds's camera matrix and Assimp's 3DS importer turn it.

    Attributes
    ----------
    path : str
        ``"rotation"``.
    times : ndarray
        Every key time of the position, target and roll tracks.
    interpolation : str
        ``"LOOKAT"``: derived from those tracks, not one spline.
    """
    path = "rotation"
    interpolation = "LOOKAT"

    def __init__(self, position: Track, target: Track, roll: Optional[Track]):
        self.position, self.target, self.roll = position, target, roll
        self.times = np.unique(np.concatenate([track.times for track in (position, target, roll)
                                               if track is not None]))

    def key_times(self, start: float, end: float) -> np.ndarray:
        """The position, target and roll tracks' `Track.key_times`.

        Parameters
        ----------
        start, end : float
            Seconds.

        Returns
        -------
        ndarray
            Increasing seconds.
        """
        return np.unique(np.concatenate([track.key_times(start, end) for track in
                                         (self.position, self.target, self.roll)
                                         if track is not None]))

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """The orientation at seconds `t`.

        Parameters
        ----------
        t : float or array_like (M,)
            Seconds.

        Returns
        -------
        ndarray (M, 4)
            Unit (w, x, y, z).
        """
        look = self.target(t) - self.position(t)
        length = np.linalg.norm(look, axis=1, keepdims=True)
        look = np.where(length > 0, look / np.where(length > 0, length, 1.0), [0.0, 1.0, 0.0])
        level = np.hypot(look[:, 0], look[:, 1]) > 0
        up = np.where(level[:, None], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0])
        right = np.cross(look, up)
        right /= np.linalg.norm(right, axis=1, keepdims=True)
        frame = np.stack([right, np.cross(-look, right), -look], axis=2)
        if self.roll is not None:   # roll turns about the back axis (lib3ds, Assimp)
            angle = np.radians(self.roll(t)[:, 0])
            c, s = np.cos(angle), np.sin(angle)
            zero, one = np.zeros_like(c), np.ones_like(c)
            about_back = np.stack([np.stack([c, -s, zero], 1), np.stack([s, c, zero], 1),
                                   np.stack([zero, zero, one], 1)], 1)
            frame = frame @ about_back
        return np.asarray(quat_from_matrix(frame))


def relative_turns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit axes, angles) for `RotationSpline.from_relative` giving the drawn
    orientation D from stored rotation keys (angle a, axis u).

    The saved mesh matrices (RotatingCube.3DS, test1.3ds ...) show
    D_n = R(-a_n, u_n) D_(n-1): each key turns the node by -a about u in its
    parent's axes, which is D_(n-1) turned by a about -D_(n-1)^-1 u in its own.
    A key of more than 2 pi - 1e-5 keeps every turn (CompAB's spin branch);
    any other steps the short way; a zero axis is no turn."""
    angles = values[:, 0].copy()
    axes = values[:, 1:].copy()
    length = np.linalg.norm(axes, axis=1)
    still = length == 0.0
    axes[still] = (1.0, 0.0, 0.0)
    angles[still] = 0.0
    axes /= np.where(still, 1.0, length)[:, None]
    short = angles <= SPIN
    angles[short] = np.remainder(angles[short] + np.pi, 2 * np.pi) - np.pi
    local = np.empty_like(axes)
    drawn = np.array([1.0, 0.0, 0.0, 0.0])
    for n in range(len(angles)):
        local[n] = -_rotate(_conjugate(drawn), axes[n])
        drawn = _multiply(drawn, _turn(local[n], angles[n]))
    return local / np.linalg.norm(local, axis=1, keepdims=True), angles


def _conjugate(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def _multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    w1, v1, w2, v2 = p[0], p[1:], q[0], q[1:]
    return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """q v q* for a unit q."""
    w, u = q[0], q[1:]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def _turn(axis: np.ndarray, angle: float) -> np.ndarray:
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


@dataclasses.dataclass(frozen=True)
class ThreeDSScene(Scene):
    """A Scene read from a .3ds file, with its tracks as stored.

    Attributes
    ----------
    tracks : dict
        ``tracks[node name][kind]`` -> `Track`.
    segment : tuple or None
        KFSEG's (first, last) frame.
    current_frame : float or None
        KFCURTIME as a frame (3ds Max stores ticks: see `read_3ds`).
    fps : float
    """
    tracks: dict = dataclasses.field(default_factory=dict)
    segment: Optional[tuple] = None
    current_frame: Optional[float] = None
    fps: float = 30.0


def read_3ds(path: Union[str, os.PathLike[str]], *, fps: float = 30.0) -> ThreeDSScene:
    """Reads the keyframer of a 3D Studio .3ds file.

    Parameters
    ----------
    path : str or os.PathLike
    fps : float
        Frames a second: a key at frame f is at f / fps seconds.

    Returns
    -------
    ThreeDSScene
        Nodes in the keyframer's order, ``tracks[node][kind]``, and
        ``animations`` ({"<scene name>": {(node, path): Track}}, paths
        "translation", "rotation", "scale", "roll" (degrees) and "fov" (a
        `FieldOfView`: radians across the frame's width) in the file's
        own axes (Z up, right-handed).  A camera node's ``extras["camera"]``
        holds its rest fov (`kbspline.formats.camera`).  A file without a keyframer gives nodes
        for its named objects and no animation.

    Raises
    ------
    ThreeDSError
        (a FormatError, a ValueError) for a malformed file, naming the file,
        the chunk id in hex and its byte offset.
    """
    if isinstance(fps, bool) or not (isinstance(fps, numbers.Real) and np.isfinite(fps)
                                     and fps > 0):
        raise ValueError(f"fps must be a positive finite number, not {fps!r}")
    with open(path, "rb") as stream:
        data = stream.read()
    try:
        raw = parse(data)
        parents = _parents(raw.nodes)
    except ThreeDSError as exc:    # named by the file too, as the other readers' errors
        raise ThreeDSError(f"{os.fspath(path)}: {exc}") from None
    if not raw.keyframer:
        nodes = [_static_node(name, record) for name, record in raw.objects.items()]
        return ThreeDSScene(nodes=nodes, skins=[], animations={}, up_axis="Z",
                            handedness="right", source="3ds", fps=float(fps))
    names = _unique_names(raw.nodes)
    tracks = {name: {kind: Track(track, float(fps)) for kind, track in node.tracks.items()}
              for name, node in zip(names, raw.nodes)}
    start = raw.segment[0] / fps if raw.segment else 0.0
    aims = _look_ats(raw.nodes, names, tracks)
    children: list[list[int]] = [[] for _ in raw.nodes]
    for j, parent in enumerate(parents):
        if parent != -1:
            children[parent].append(j)
    nodes = []
    for i, (name, node) in enumerate(zip(names, raw.nodes)):
        nodes.append(_keyframer_node(name, node, parents[i], children[i], tracks[name],
                                     raw.objects.get(node.name, {}), start, aims.get(name)))
    animation: dict[tuple[str, str], Channel] = {
        (name, track.path): track for name in names
        for kind, track in tracks[name].items() if kind in _PATHS and len(track.frames)}
    animation.update({(name, "rotation"): aim for name, aim in aims.items()})
    animation.update({(name, "fov"): _field_of_view(tracks[name]["fov"]) for name in names
                      if (name, "fov") in animation})
    title = raw.scene_name or "keyframer"
    current: Optional[float] = raw.current_time
    if current is not None and raw.segment and current > raw.segment[1]:
        current = current / TICKS_PER_FRAME
    return ThreeDSScene(nodes=nodes, skins=[], animations={title: animation} if animation else {},
                        up_axis="Z", handedness="right", source="3ds", tracks=tracks,
                        segment=raw.segment, current_frame=current, fps=float(fps))


def _look_ats(nodes: list[RawNode], names: list[str], tracks: dict) -> dict:
    """{camera name: LookAt} for each camera with a position and a target."""
    targets = {node.name: name for node, name in zip(nodes, names) if node.tag == "target"}
    out = {}
    for node, name in zip(nodes, names):
        aim = targets.get(node.name)
        keyed = {key: track for key, track in tracks[name].items() if len(track.frames)}
        goal = tracks[aim].get("position") if aim is not None else None
        if node.tag == "camera" and "position" in keyed and goal is not None \
                and len(goal.frames):
            out[name] = LookAt(keyed["position"], goal, keyed.get("roll"))
    return out


def _unique_names(nodes: list[RawNode]) -> list[str]:
    """A camera's or spotlight's target is "<name>.target"; a dummy takes its
    instance name; a repeated name gets its instance name (or "#<n>") appended."""
    out: list[str] = []
    taken: set[str] = set()      # a set, not the list: files may hold 65536 nodes
    for i, node in enumerate(nodes):
        name = node.instance if node.name == "$$$DUMMY" and node.instance else node.name
        if node.tag in ("target", "light_target"):
            name += ".target"
        if name in taken:
            name = f"{name}.{node.instance}" if node.instance else f"{name}#{i}"
        while name in taken:
            name += f"#{i}"
        out.append(name)
        taken.add(name)
    return out


def _parents(nodes: list[RawNode]) -> list[int]:
    """Each node's parent index from NODE_HDR's parent id (NODE_ID's, or the
    node's position when the file has no NODE_ID chunks); -1 for a root."""
    ids = {}
    for i, node in enumerate(nodes):
        key = node.node_id if node.node_id is not None else i
        if key in ids:
            raise ThreeDSError(f"chunk 0x{0xB030:04X} in node at byte {node.offset}: "
                               f"node id {key} repeats")
        ids[key] = i
    parents = []
    for node in nodes:
        if node.parent_id == 0xFFFF:
            parents.append(-1)
        elif node.parent_id in ids:
            parents.append(ids[node.parent_id])
        else:
            raise ThreeDSError(f"chunk 0x{0xB010:04X} in node at byte {node.offset}: "
                               f"parent id {node.parent_id} names no node")
    looped = _looped_node(parents)
    if looped is not None:
        raise ThreeDSError(f"chunk 0x{0xB010:04X} in node at byte {nodes[looped].offset}: "
                           "the parents form a cycle")
    return parents


def _rest(tracks: dict, kind: str, start: float, default) -> np.ndarray:
    track = tracks.get(kind)
    return np.array(default, dtype=np.float64) if track is None or not len(track.frames) \
        else track(start)[0]


def _keyframer_node(name: str, node: RawNode, parent: int, children: list, tracks: dict,
                    record: dict, start: float, aim: Optional[LookAt]) -> Node:
    kind = _KINDS[node.tag]
    if node.tag == "object" and (node.name == "$$$DUMMY" or record.get("kind") == "null"):
        kind = "null"
    extras: dict = {"object": node.name, "instance": node.instance, "node_id": node.node_id,
              "node_flags": node.flags, "tag": node.tag}
    extras.update({key: value for key, value in record.items() if key not in ("kind", "offset")})
    if node.tag == "camera":
        extras["camera"] = _camera(tracks.get("fov"), record.get("lens"), start)
    return Node(name=name, parent=parent, children=children,
                translation=_rest(tracks, "position", start, [0.0, 0.0, 0.0]),
                rotation=_rest(tracks, "rotation", start, [1.0, 0.0, 0.0, 0.0]) if aim is None
                else aim(start)[0],
                scale=_rest(tracks, "scale", start, [1.0, 1.0, 1.0]), kind=kind,
                pivot=np.zeros(3) if node.pivot is None else node.pivot, extras=extras,
                pivot_inherited=False)


def _field_of_view(track: Track) -> FieldOfView:
    return FieldOfView(track, np.radians, FOV_AXIS, DEFAULT_ASPECT)


def _camera(track: Optional[Track], lens: Optional[float], start: float) -> dict:
    """A camera's facts: its fov at `start` from its track, else its lens."""
    if track is not None and len(track.frames):
        fov = float(np.radians(track(start)[0, 0]))
    elif lens:
        fov = float(np.radians(LENS_TIMES_FOV / lens))
    else:
        fov = float(np.radians(LENS_TIMES_FOV / 50.0))    # no track, no record: 50 mm
    return camera_facts(fov, FOV_AXIS, DEFAULT_ASPECT, False, view=(0.0, 0.0, -1.0),
                        up=(0.0, 1.0, 0.0), lens=lens if lens else None)


def _static_node(name: str, record: dict) -> Node:
    extras = {key: value for key, value in record.items() if key not in ("kind", "offset")}
    if record["kind"] == "camera":
        extras["camera"] = _camera(None, record.get("lens"), 0.0)
    return Node(name=name, parent=-1, children=[], translation=np.zeros(3),
                rotation=np.array([1.0, 0.0, 0.0, 0.0]), scale=np.ones(3),
                kind=record["kind"], extras=extras)
