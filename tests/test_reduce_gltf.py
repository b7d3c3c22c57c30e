"""A key reduction written as glTF: translations as CUBICSPLINE keys at the
reduced key frames with the fitted tangents, played back (by the test's own
glTF Hermite sampler, the specification's formula) as the rebuilt curves;
rotations within the angle tolerance; read back by read_gltf."""
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pygltflib = pytest.importorskip("pygltflib")

from kbspline.formats.gltf import read_gltf  # noqa: E402
from kbspline.motion import Motion, Reduction, read_bvh, reduce_keys  # noqa: E402
from kbspline.quaternion import _angle_between  # noqa: E402

CMU = pathlib.Path(__file__).resolve().parent / "data" / "cmu"


@pytest.fixture(scope="module")
def clip():
    whole = read_bvh(CMU / "131_01.bvh")
    return Motion(whole.joints, whole.frame_time, whole.frames[:240])


def hermite(times, values, t):
    """glTF 2.0's CUBICSPLINE sampler (spec, Appendix C), independent of the
    exporter: values are (in-tangent, value, out-tangent) per key."""
    a, v, b = values[0::3], values[1::3], values[2::3]
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    td = times[k + 1] - times[k]
    s = ((t - times[k]) / td)[:, None]
    return ((2 * s**3 - 3 * s**2 + 1) * v[k] + td[:, None] * (s**3 - 2 * s**2 + s) * b[k]
            + (-2 * s**3 + 3 * s**2) * v[k + 1] + td[:, None] * (s**3 - s**2) * a[k + 1])


def accessor(gltf, index):
    acc = gltf.accessors[index]
    view = gltf.bufferViews[acc.bufferView]
    data = gltf.binary_blob()[view.byteOffset + (acc.byteOffset or 0):]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc.type]
    return np.frombuffer(data, np.float32, acc.count * width).reshape(acc.count, width)


def test_fitted_translations_play_back_as_rebuilt(clip, tmp_path):
    result = reduce_keys(clip, np.radians(0.5), 0.01)
    path = tmp_path / "reduced.glb"
    # CMU's hands flip in 8 ms (375 rad/s between frames 191 and 192 of the
    # right thumb), and a fitted spline through the flip, within tolerance
    # at every frame, turns faster still between them
    export = result.to_gltf(clip, path, angle_tolerance=3e-2)
    rotations, translations = result.rebuild(clip.times)
    gltf = pygltflib.GLTF2().load(str(path))
    names = [n.name for n in gltf.nodes]
    root = names.index(clip.joints[0].name)
    animation = gltf.animations[0]
    channel = next(c for c in animation.channels
                   if c.target.node == root and c.target.path == "translation")
    sampler = animation.samplers[channel.sampler]
    assert sampler.interpolation == "CUBICSPLINE"
    times = accessor(gltf, sampler.input)[:, 0].astype(np.float64)
    np.testing.assert_allclose(times, result.key_frames[0] * clip.frame_time, rtol=1e-6)
    played = hermite(times, accessor(gltf, sampler.output).astype(np.float64), clip.times)
    scale = np.abs(translations[0]).max()
    assert np.abs(played - translations[0]).max() <= 1e-6 * scale
    assert max(export.max_error[(j.name, "rotation")] for j in clip.joints) <= 3e-2
    scene = read_gltf(path)
    for j in (0, 5, 20):
        channel = scene.animations["reduced"][(clip.joints[j].name, "rotation")]
        angle = _angle_between(channel(clip.times), rotations[j])
        assert angle.max() <= 3e-2 * 1.001


def test_reduce_command_writes_gltf(tmp_path):
    out = tmp_path / "walk.glb"
    subprocess.run([sys.executable, "-m", "kbspline", "reduce", str(CMU / "131_03.bvh"),
                    "--angle-tolerance", "2", "--distance-tolerance", "0.1", "--no-fit",
                    "-o", str(out)], check=True, capture_output=True)
    assert read_gltf(out).animations["reduced"]


def test_reduce_command_fits_tangents_even_with_the_deprecated_tcb(tmp_path):
    """The reduce command fits tangent keys by default, and with --tcb
    (deprecated: it once fitted TCB keys)."""
    kinds = {}
    for flag in ([], ["--tcb"]):
        out = tmp_path / f"hop{len(flag)}.json"
        subprocess.run([sys.executable, "-m", "kbspline", "reduce", str(CMU / "131_03.bvh"),
                        "--position-tolerance", "0.2", *flag, "-o", str(out)],
                       check=True, capture_output=True)
        joint = json.loads(out.read_text())["joints"][1]
        kinds[bool(flag)] = sorted(k for k in joint if k.endswith(("_tcb", "_tangents")))
    assert kinds == {False: ["rotation_tangents", "translation_tangents"],
                     True: ["rotation_tangents", "translation_tangents"]}


def test_reduction_of_another_clip_is_refused(clip):
    result = reduce_keys(clip, 0.1, 0.1, fit=False)
    other = Motion(clip.joints, clip.frame_time, clip.frames[:100])
    with pytest.raises(ValueError, match="not of this motion"):
        result.to_gltf(other)
    data = result.to_json()
    back = Reduction.from_json(json.loads(json.dumps(data)))
    assert back.to_gltf(clip, angle_tolerance=1e-2).gltf.animations
