"""How far `convert X.lws -o X.glb` strays from the LightWave scene, on the
real scenes of ../shared/data/legacy (when present) and one generated scene
with every span type, continuity 0.9 and every behaviour over -3 s .. 6.7 s:

    PYTHONPATH=$PWD python benchmarks/lws_to_gltf.py

For each file: glTF keys summed over channels, the largest distance
(rotations: radians) between glTF's LINEAR playback (the specification's
rules) and the reader's channels at 200001 points of each channel's
written range, 1 ms or more away from value jumps, and warnings raised;
tolerances 1e-3.
"""
import pathlib
import sys
import tempfile
import warnings

import numpy as np
import pygltflib as gl
from scipy.spatial.transform import Rotation, Slerp

from kbspline.formats.convert import convert
from kbspline.formats.lightwave import read_lws

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from lws_writer import write_lws  # noqa: E402

MIRROR = np.diag([1.0, 1.0, -1.0])


def spans_scene(path):
    rng = np.random.default_rng(61)
    spans = ["tcb", "hermite", "bezier", "linear", "stepped", "bezier2d", "tcb"]
    behaviours = ["reset", "constant", "repeat", "oscillate", "offset_repeat", "linear"]
    items = []
    for p in range(6):
        keys = [(0.0, 0.0, "tcb", 0, 0, 0, 0, 0, 0)]
        for k, span in enumerate(spans, start=1):
            params = (0.2, 0.9, -0.3, 0.4, -0.2, 0.0) if span != "bezier2d" else \
                (-0.1, 0.3, 0.1, -0.2, 0.0, 0.0)
            keys.append((float(rng.normal(0, 1.5)), 0.4 * k, span, *params))
        channels = {ch: (keys, behaviours[p], behaviours[(p + 3) % 6]) for ch in range(6)}
        items.append({"kind": "null", "name": f"n{p}", "parent": -1, "channels": channels,
                      "pivot": (0.0, 0.0, 0.0)})
    write_lws(path, items, 3)
    path.write_text(path.read_text().replace("FirstFrame 1", "FirstFrame -90\nLastFrame 200"))


def linear(doc, node, path):
    """(times, output) of glTF's sampler for node.path, or None."""
    names = [n.name for n in doc.nodes]
    blob = doc.binary_blob()

    def read(i):
        acc = doc.accessors[i]
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc.type]
        view = doc.bufferViews[acc.bufferView]
        return np.frombuffer(blob, "<f4", acc.count * width, view.byteOffset).reshape(
            acc.count, width).astype(np.float64)
    for channel in doc.animations[0].channels:
        if names[channel.target.node] == node and channel.target.path == path:
            sampler = doc.animations[0].samplers[channel.sampler]
            return read(sampler.input)[:, 0], read(sampler.output)
    return None


def played(times, output, t, rotation):
    if not rotation:
        return np.stack([np.interp(t, times, output[:, k]) for k in range(3)], axis=1)
    xyzw = Slerp(times, Rotation.from_quat(output))(np.clip(t, times[0], times[-1])).as_quat()
    return np.column_stack([xyzw[:, 3], xyzw[:, :3]])


def worst(path):
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = pathlib.Path(tmp) / "x.glb"
        convert(path, out, angle_tolerance=1e-3, distance_tolerance=1e-3)
        doc = gl.GLTF2().load(str(out))
    scene = read_lws(path)
    channels = next(iter(scene.animations.values()))
    starts = [c.times[0] for c in channels.values()]
    starts += [first / scene.fps for first, _ in getattr(scene, "frame_ranges", ())]
    offset = min(0.0, *starts)
    error, keys = 0.0, 0
    for (node, kind), channel in channels.items():
        found = linear(doc, node, kind)
        if found is None:
            continue
        times, output = found
        keys += len(times)
        t = np.linspace(times[0], times[-1], 200001)
        truth = channel(t + offset)
        if kind == "rotation":       # LightWave's axes mirrored in z: (w, -x, -y, z)
            truth = truth * [1, -1, -1, 1]
            got = played(times, output, t, True)
            chord = np.minimum(np.linalg.norm(got - truth, axis=1),
                               np.linalg.norm(got + truth, axis=1))
            gap = 4 * np.arcsin(np.minimum(chord / 2, 1.0))
            step = np.linalg.norm(np.diff(truth, axis=0), axis=1)
        else:
            truth = truth @ (MIRROR if kind == "translation" else np.eye(3))
            gap = np.linalg.norm(played(times, output, t, False) - truth, axis=1)
            step = np.linalg.norm(np.diff(truth, axis=0), axis=1)
        near = np.zeros(len(t), dtype=bool)
        for i in np.flatnonzero(step > 1e-3):
            near |= np.abs(t - t[i]) < 1e-3
        error = max(error, float(gap[~near].max()))
    return keys, error, len(caught)


def main():
    files = sorted((ROOT.parent / "shared/data/legacy").glob("*.lws"))
    with tempfile.TemporaryDirectory() as tmp:
        generated = pathlib.Path(tmp) / "spans.lws"
        spans_scene(generated)
        print(f"{'file':32s} {'keys':>6s} {'worst':>9s} warnings")
        for path in [*files, generated]:
            keys, error, warned = worst(path)
            print(f"{path.name:32s} {keys:6d} {error:9.3g} {warned}")


if __name__ == "__main__":
    main()
