"""glTF cameras for a scene's camera nodes, their field of view animated
through ``KHR_animation_pointer``.

Each camera node ``<name>`` gets a child node ``<name>.camera`` holding a
perspective camera (glTF cameras look down -Z with +Y up): the child's
rotation turns that frame into the tool's, seen in glTF's axes (none for
LightWave, a quarter turn about X for 3D Studio's look-at frame once Z up
becomes Y up).  ``yfov`` is the vertical field of view at the animation's
start, ``aspectRatio`` the frame's, ``znear`` `ZNEAR` (neither file format
stores a clipping range kbspline reads) and no ``zfar`` (an infinite
projection).  An animated field of view is a LINEAR sampler on the pointer
``/cameras/<i>/perspective/yfov``, keyed by
`kbspline.formats.adaptive.channel_keys` within the angle tolerance; the
extension is used, not required, so viewers without it show the first
field of view.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..camera import camera_turn, vertical_fov
from ..adaptive import DENSE_CHECKS, _channel_keys

__all__ = ["add_cameras", "ZNEAR", "POINTER"]

ZNEAR = 0.01
POINTER = "KHR_animation_pointer"


class _VerticalFov:
    """A fov channel seen as the vertical field of view glTF's yfov takes."""
    path = "yfov"

    def __init__(self, fov, camera):
        self.fov, self.times, self.interpolation = fov, fov.times, fov.interpolation
        self.camera = camera

    def __call__(self, t):
        return vertical_fov(self.fov(t), self.fov.aspect, self.fov.axis, self.camera)


def add_cameras(report: Any, scene: Any, animation: str, axes: np.ndarray,
                angle_tolerance: float, time_offset: float,
                span: "tuple[float, float]") -> dict:
    """Adds the scene's cameras to an exported document (`GltfExport.gltf`).

    Parameters
    ----------
    report : GltfExport
        From `export_gltf`, before saving; its `max_error`, `key_counts` and
        `tolerances` gain ``(camera, "fov")`` for an animated fov.
    scene : Scene
    animation : str
    axes : ndarray (3, 3)
        The file's axes to glTF's (`convert.axes_to_gltf`).
    angle_tolerance : float
        Radians: how far the replayed yfov may stray.
    time_offset : float
        Seconds subtracted from times, as `export_gltf` did.
    span : (float, float)
        The seconds keyed (`convert.scene_range`).

    Returns
    -------
    dict
        ``{camera node name: camera index}``.
    """
    import pygltflib as gl
    doc = report.gltf
    names = [node.name for node in doc.nodes]
    channels = scene.animations.get(animation, {})
    start, end = span
    added: dict = {}
    for node in scene.nodes:
        facts = node.extras.get("camera")
        if node.kind != "camera" or facts is None or node.name not in names:
            continue
        aspect = float(facts["aspect"])
        yfov = float(vertical_fov(facts["fov"], aspect, facts["fov_axis"], node.name))
        fov = channels.get((node.name, "fov"))
        fov = fov if fov is not None and len(fov.times) > 1 else None     # one key: constant
        fov = _VerticalFov(fov, node.name) if fov is not None else None
        if fov is not None:
            yfov = float(fov(start)[0, 0])
        index = len(doc.cameras)
        lens = gl.Perspective(yfov=yfov, aspectRatio=aspect, znear=ZNEAR)
        doc.cameras.append(gl.Camera(type="perspective", name=node.name, perspective=lens))
        turn = camera_turn(facts, axes)
        holder = gl.Node(name=f"{node.name}.camera", camera=index,
                         rotation=[float(v) for v in (*turn[1:], turn[0])])
        parent = doc.nodes[names.index(node.name)]
        doc.nodes.append(holder)
        parent.children = [*(parent.children or []), len(doc.nodes) - 1]
        added[node.name] = index
        if fov is not None:
            _animate(gl, doc, report, node.name, index, fov, angle_tolerance,
                     start, end, time_offset)
    return added


def _animate(gl, doc, report, name, index, channel, tolerance, start, end, time_offset):
    times, _, jumps, _ = _channel_keys(channel, tolerance, start, end)
    values = np.asarray(channel(times), dtype=np.float64).reshape(len(times), -1)
    between = _between(times, jumps)
    played = channel(between)[:, 0]
    inputs = np.asarray(times - time_offset, dtype="<f4")
    outputs = np.asarray(values[:, 0], dtype="<f4")
    blob = bytearray(doc.binary_blob() or b"")
    accessors = []
    for array, bounds in ((inputs, True), (outputs, False)):
        blob += b"\0" * (-len(blob) % 4)
        doc.bufferViews.append(gl.BufferView(buffer=0, byteOffset=len(blob),
                                             byteLength=array.nbytes))
        blob += array.tobytes()
        extra = {"min": [float(array.min())], "max": [float(array.max())]} if bounds else {}
        doc.accessors.append(gl.Accessor(bufferView=len(doc.bufferViews) - 1,
                                         componentType=gl.FLOAT, count=len(array),
                                         type=gl.SCALAR, **extra))
        accessors.append(len(doc.accessors) - 1)
    doc.buffers[0].byteLength = len(blob)
    doc.set_binary_blob(bytes(blob))
    target = doc.animations[0]
    target.samplers.append(gl.AnimationSampler(input=accessors[0], output=accessors[1],
                                               interpolation="LINEAR"))
    target.channels.append(gl.AnimationChannel(
        sampler=len(target.samplers) - 1,
        target=gl.AnimationChannelTarget(path="pointer", extensions={POINTER: {
            "pointer": f"/cameras/{index}/perspective/yfov"}})))
    if POINTER not in doc.extensionsUsed:
        doc.extensionsUsed.append(POINTER)
    replay = np.interp(between, times, values[:, 0])
    report.max_error[name, "fov"] = float(np.max(np.abs(replay - played), initial=0.0))
    report.key_counts[name, "fov"] = len(times)
    report.tolerances[name, "fov"] = tolerance
    if report.max_error[name, "fov"] > tolerance * (1 + 1e-6):   # said, never silent
        warnings.warn(f"glTF's playback misses the tolerance on camera {name!r}'s field of "
                      f"view: {np.degrees(report.max_error[name, 'fov']):.3g} deg",
                      UserWarning, stacklevel=4)


def _between(times, jumps, per=DENSE_CHECKS):
    """Points between neighbouring samples (but inside a jump's pair,
    `jumps` from the keyer: an interval at the key-spacing floor counts)."""
    wide = np.flatnonzero(~jumps)
    u = np.arange(1, per) / per
    return (times[wide, None] + u * (times[wide + 1] - times[wide])[:, None]).ravel()
