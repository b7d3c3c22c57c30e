"""A BVH clip written as glTF: loaded back, its node hierarchy posed by the
specification's playback at every frame puts every joint where forward
kinematics of the clip puts it; and the gltf command."""
import subprocess
import sys

import numpy as np
import pytest

from kbspline import quat_to_matrix
from kbspline.motion import motion_to_gltf, read_bvh, world_positions
from mocap import CLIPS, MISSING

gl = pytest.importorskip("pygltflib")
from test_gltf import spec_play  # noqa: E402  (the specification's interpolation)


def node_transforms(doc, t):
    """{node: (translation, 3x3 rotation)} at time t, from the channels where
    a node has them, else from the node's own fixed TRS."""
    def data(index):
        acc = doc.accessors[index]
        view = doc.bufferViews[acc.bufferView]
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc.type]
        raw = np.frombuffer(doc.binary_blob(), "<f4", acc.count * width, view.byteOffset)
        return raw.astype(np.float64).reshape(acc.count, width)

    local = {i: [np.array(n.translation or [0.0, 0.0, 0.0]), np.eye(3)]
             for i, n in enumerate(doc.nodes)}
    animation = doc.animations[0]
    for channel in animation.channels:
        sampler = animation.samplers[channel.sampler]
        value = spec_play(data(sampler.input)[:, 0], data(sampler.output),
                          sampler.interpolation, t)
        if channel.target.path == "translation":
            local[channel.target.node][0] = value
        else:
            x, y, z, w = value
            local[channel.target.node][1] = quat_to_matrix([w, x, y, z])
    return local


def world(doc, t):
    """{node name: world position}, composing parents before children."""
    local = node_transforms(doc, t)
    out = {}

    def visit(i, parent_pos, parent_rot):
        translation, rotation = local[i]
        pos, rot = parent_pos + parent_rot @ translation, parent_rot @ rotation
        out[doc.nodes[i].name] = pos
        for child in doc.nodes[i].children or []:
            visit(child, pos, rot)

    for root in doc.scenes[doc.scene].nodes:
        visit(root, np.zeros(3), np.eye(3))
    return out


@pytest.mark.skipif(not CLIPS, reason=MISSING)
@pytest.mark.parametrize("rate", [None, 120.0])
def test_clip_poses_match_forward_kinematics(tmp_path, rate):
    clip = read_bvh(CLIPS[-1])  # walk
    clip.frames = clip.frames[:40]
    report = motion_to_gltf(clip, tmp_path / "walk.glb", rate=rate, scale=0.01)
    doc = gl.GLTF2().load(str(tmp_path / "walk.glb"))
    names = [joint.name for joint in clip.joints]
    assert [n.name for n in doc.nodes][:len(names)] == names
    ends = [j.name + "_end" for j in clip.joints if j.end_site is not None]
    assert sorted(n.name for n in doc.nodes[len(names):]) == sorted(ends)
    expected, _ = world_positions(clip)
    for f in range(0, clip.num_frames, 7):
        posed = world(doc, f * clip.frame_time)
        got = np.array([posed[name] for name in names])
        np.testing.assert_allclose(got, expected[f] * 0.01, atol=2e-6)
    worst = max(report.max_error.values())
    assert 0 < worst < (0.02 if rate else 0.1)


@pytest.mark.skipif(not CLIPS, reason=MISSING)
def test_gltf_command(tmp_path):
    out = tmp_path / "clip.gltf"
    result = subprocess.run([sys.executable, "-m", "kbspline", "gltf", str(CLIPS[0]), "-o",
                             str(out), "--scale", "0.01"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "largest rotation error" in result.stdout and out.stat().st_size > 0
    # a looser angle tolerance, in degrees, writes fewer keys and says so
    loose = subprocess.run([sys.executable, "-m", "kbspline", "gltf", str(CLIPS[0]), "--force",
                            "-o", str(out), "--angle-tolerance", "0.5"], capture_output=True,
                           text=True)
    assert loose.returncode == 0, loose.stderr
    keys = [int(r.stdout.split(" keys")[0].rsplit(" ", 1)[1]) for r in (result, loose)]
    assert keys[1] < keys[0]
    worst = float(loose.stdout.split("playback ")[1].split(" deg")[0])
    assert 0 < worst <= 0.5
    bad = subprocess.run([sys.executable, "-m", "kbspline", "gltf", str(CLIPS[0]), "-o",
                          str(tmp_path / "clip.fbx")], capture_output=True, text=True)
    assert bad.returncode == 2 and ".gltf or .glb" in bad.stderr   # before the work


def test_one_frame_and_bad_scale(tmp_path):
    from test_motion import CHAIN
    path = tmp_path / "chain.bvh"
    path.write_text(CHAIN)
    clip = read_bvh(path)
    with pytest.raises(ValueError, match="scale"):
        motion_to_gltf(clip, scale=0.0)
    with pytest.raises(TypeError, match="scale must be a number, not 'big'"):
        motion_to_gltf(clip, scale="big")
    clip.frames = clip.frames[:1]
    with pytest.raises(ValueError, match="2 frames"):
        motion_to_gltf(clip)


def test_lengths_beyond_float32_are_refused(tmp_path):
    """A scale that takes the clip's offsets past float32 is refused, not
    written as inf."""
    from test_motion import CHAIN
    path = tmp_path / "chain.bvh"
    path.write_text(CHAIN)
    clip = read_bvh(path)
    with pytest.raises(ValueError, match="float32"):
        motion_to_gltf(clip, scale=1e38)
