"""3DS scenes to glTF (kbspline.formats.convert): played back by the glTF
specification's sampler rules (test_gltf.spec_play, not kbspline's reader),
every channel stays within the tolerance of the 3DS track in glTF's axes."""
import math
import warnings

import numpy as np
import pygltflib as gl
import pytest

from kbspline.formats.convert import axes_to_gltf, convert, scene_to_gltf
from kbspline.formats.threeds import read_3ds
from test_gltf import angle, played, spec_play
from threeds_writer import random_scene, random_track, write_3ds

Z_UP = np.array([[1, 0, 0], [0, 0, 1], [0, -1, 0]], dtype=float)   # glTF (x, y, z) = (x, z, -y)


def scene_file(tmp_path, seed, flags=0):
    rng = np.random.default_rng([52, 7, seed])
    nodes, objects = random_scene(rng)
    for node in nodes:            # one period of every track: no repeats here
        for track in node["tracks"].values():
            track["flags"] = flags
            if flags & 3 == 0:
                for name in ("tension", "continuity", "bias", "ease_to", "ease_from"):
                    track[name] = track[name].copy()
    path = tmp_path / "scene.3ds"
    path.write_bytes(write_3ds(nodes, objects=objects))
    return path


def in_gltf_axes(path, values):
    if path == "translation":
        return values @ Z_UP.T
    if path == "scale":
        return values @ np.abs(Z_UP).T
    # det +1: q' = (w, A v), in glTF's order (x, y, z, w)
    return np.column_stack([values[:, 1:] @ Z_UP.T, values[:, 0]])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("distance", [None, 1e-3])
def test_round_trip_within_the_tolerance(tmp_path, seed, distance):
    source = scene_file(tmp_path, seed)
    out = tmp_path / "scene.glb"
    with pytest.warns(UserWarning) as caught:
        report = convert(source, out, angle_tolerance=1e-4, distance_tolerance=distance)
    assert not any("Cam.fov" in str(w.message) for w in caught)   # a camera's (test_gltf_cameras)
    doc = gl.GLTF2().load(str(out))
    scene = read_3ds(source)
    rng = np.random.default_rng(seed)
    for (node, path), track in scene.animations["TESTSCENE"].items():
        if path not in ("translation", "rotation", "scale") or track.interpolation == "LOOKAT":
            continue
        times, output, interpolation = played(doc, node, path)
        lo, hi = track.times[0], track.times[-1]
        t = np.concatenate([track.times, rng.uniform(lo, hi, 200)])
        want = in_gltf_axes(path, track(t))
        got = np.array([spec_play(times, output, interpolation, x) for x in t])
        if path == "rotation":
            err = max(angle(p, q) for p, q in zip(got, want))
            assert err <= max(1e-4, report.max_error[node, path]) * 1.01 + 1e-6, (node, err)
        else:       # LINEAR within the distance, by default 1e-4 times the channel's extent
            err = np.abs(got - want).max()
            scale = 1.0 + np.abs(want).max()
            bound = max(report.tolerances[node, path], report.max_error[node, path])
            assert err <= bound * 1.01 + 2e-6 * scale, (node, path, err)
        stated = report.tolerances[node, path]
        if report.max_error[node, path] > stated * (1 + 1e-6):   # said, and only where it holds
            assert any(f" {node} {path} " in str(w.message) for w in caught)
    names = [n.name for n in doc.nodes]
    for node in scene.nodes:            # the hierarchy and the pivots
        if node.parent >= 0:
            parent = doc.nodes[names.index(scene.nodes[node.parent].name)]
            assert names.index(node.name) in parent.children
        pivot = doc.nodes[names.index(node.name + ".pivot")] if np.any(node.pivot) else None
        if pivot is not None:
            np.testing.assert_allclose(pivot.translation, -Z_UP @ node.pivot, rtol=1e-6)


def test_axes():
    np.testing.assert_array_equal(axes_to_gltf("Z", "right"), Z_UP)
    np.testing.assert_array_equal(axes_to_gltf("Y", "right"), np.eye(3))
    assert np.linalg.det(axes_to_gltf("Y", "left")) == -1.0
    with pytest.raises(ValueError, match="up_axis 'X'"):
        axes_to_gltf("X", "right")


def test_spline_in_mirrored_axes_is_the_mirrored_track(tmp_path):
    """A left-handed change (det -1) mirrors the drawn orientation: R' = A R A^T."""
    from kbspline.quaternion import quat_to_matrix
    rng = np.random.default_rng(4)
    stored = random_track(rng, "rotation", 9)
    path = tmp_path / "r.3ds"
    path.write_bytes(write_3ds([{"tag": "object", "name": "A", "tracks": {"rotation": stored}}]))
    track = read_3ds(path).tracks["A"]["rotation"]
    t = np.linspace(track.times[0], track.times[-1], 50)
    for axes in (axes_to_gltf("Y", "left"), axes_to_gltf("Z", "right"), axes_to_gltf("Z", "left")):
        moved = quat_to_matrix(track.spline_in(axes)(t))
        np.testing.assert_allclose(moved, axes @ quat_to_matrix(track(t)) @ axes.T, atol=1e-12)


def test_repeats_play_over_the_whole_segment(tmp_path):
    source = scene_file(tmp_path, 0, flags=2)
    scene = read_3ds(source)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="glTF gets no")
        report = scene_to_gltf(scene, angle_tolerance=1e-3, distance_tolerance=1e-3)
    track = scene.animations["TESTSCENE"]["Obj0", "translation"]
    times, output, interpolation = played(report.gltf, "Obj0", "translation")
    assert times[-1] == pytest.approx(100 / 30) and len(track.times) > 1
    t = np.linspace(0.0, 100 / 30, 997)
    period = track.times[-1] - track.times[0]
    seams = track.times[0] + period * np.arange(1, 100)    # where a repeat jumps back
    t = t[np.all(np.abs(t[:, None] - seams[None]) > 1e-3, axis=1)]
    got = np.array([spec_play(times, output, interpolation, x) for x in t])
    assert np.abs(got - in_gltf_axes("translation", track(t))).max() <= 1e-3


def test_bad_conversions(tmp_path):
    with pytest.raises(ValueError, match="no reader for extension '.obj'"):
        convert(tmp_path / "a.obj", tmp_path / "a.glb")
    with pytest.raises(ValueError, match="cannot write '.fbx'"):
        convert(tmp_path / "a.3ds", tmp_path / "a.fbx")
    source = scene_file(tmp_path, 1)
    with pytest.raises(ValueError, match="animation 'x' is not one of"):
        scene_to_gltf(read_3ds(source), animation="x")


def test_cli(tmp_path):
    from kbspline.__main__ import main
    source = scene_file(tmp_path, 2)
    out = tmp_path / "cli.glb"
    # random keys turn faster than keys 0.5 ms apart follow: the miss is accepted
    assert main(["convert", str(source), "-o", str(out), "--angle-tolerance", "0.01",
                 "--accept-miss"]) == 0
    doc = gl.GLTF2().load(str(out))
    assert doc.animations[0].name == "TESTSCENE"
    scene = read_3ds(source)
    track = scene.tracks["Obj0"]["rotation"]
    times, output, interpolation = played(doc, "Obj0", "rotation")
    t = np.linspace(track.times[0], track.times[-1], 97)
    want = in_gltf_axes("rotation", track(t))
    err = max(angle(spec_play(times, output, interpolation, x), q) for x, q in zip(t, want))
    assert err <= math.radians(0.01) * 1.01 + 1e-6
    assert main(["convert", str(tmp_path / "none.3ds"), "-o", str(out)]) == 1


def world_points(scene, t):
    """{node: (M, 3) world origin} by composing T(position) R(rotation) S(scale)
    down the hierarchy (lib3ds's node matrices), in the file's axes."""
    from kbspline.quaternion import quat_to_matrix
    out = {}
    for i, node in enumerate(scene.nodes):     # the writer puts parents first
        tracks = scene.tracks[node.name]
        rot = quat_to_matrix(tracks["rotation"](t)) if "rotation" in tracks \
            else np.tile(np.eye(3), (len(t), 1, 1))
        scale = tracks["scale"](t) if "scale" in tracks else np.ones((len(t), 3))
        local = np.tile(np.eye(4), (len(t), 1, 1))
        local[:, :3, :3] = rot * scale[:, None, :]
        local[:, :3, 3] = tracks["position"](t)
        out[i] = local if node.parent < 0 else out[node.parent] @ local
    return {scene.nodes[i].name: m[:, :3, 3] for i, m in out.items()}


@pytest.mark.parametrize("seed", range(3))
def test_bvh_and_usd_are_the_scene_upright(tmp_path, seed):
    from kbspline.motion import read_bvh
    from kbspline.motion.kinematics import world_positions
    rng = np.random.default_rng([52, 8, seed])
    nodes, objects = random_scene(rng)
    for node in nodes:
        node["pivot"] = None                   # lib3ds's matrices: no pivot
        for track in node["tracks"].values():
            track["flags"] = 0
    source = tmp_path / "s.3ds"
    source.write_bytes(write_3ds(nodes, objects=objects))
    convert(source, tmp_path / "s.bvh", fps=30.0)
    motion = read_bvh(tmp_path / "s.bvh")
    positions, _ = world_positions(motion)
    scene = read_3ds(source)
    t = motion.times + min(c.times[0] for c in scene.animations["TESTSCENE"].values())
    want = world_points(scene, t)
    names = [j.name for j in motion.joints]
    for name, points in want.items():
        np.testing.assert_allclose(positions[:, names.index(name)], points @ Z_UP.T,
                                   atol=1e-6 * (1 + np.abs(points).max()))
    pytest.importorskip("pxr")
    convert(source, tmp_path / "s.usda", fps=30.0)
    text = (tmp_path / "s.usda").read_text()     # Xforms and a Camera (test_usd_scene)
    assert "SkelAnimation" not in text and text.count('def Camera "camera"') == 1


HOP = """LWSC
5
LoadObjectLayer 1 10000000 Objects/ball.lwo
ObjectMotion
NumChannels 4
Channel 0
{ Envelope
  3
  Key 0 0 0 0 0 0 0 0 0
  Key 2 0.5 0 0.5 0 0 0 0 0
  Key 0 1 3 0 0 0 0 0 0
  Behaviors 1 1
}
Channel 1
{ Envelope
  1
  Key 0.5 0 0 0 0 0 0 0 0
  Behaviors 1 1
}
Channel 2
{ Envelope
  2
  Key 1 0 0 0 0 0 0 0 0
  Key 3 1 0 0 0 0 0 0 0
  Behaviors 1 1
}
Channel 3
{ Envelope
  2
  Key 0 0 0 0 0 0 0 0 0
  Key 1.2 1 0 0 0 0 0 0 0
  Behaviors 1 1
}
LoadObjectLayer 1 10000001 Objects/child.lwo
ParentItem 10000000
ObjectMotion
NumChannels 3
Channel 0
{ Envelope
  2
  Key 0 0 0 0 0 0 0 0 0
  Key 0.3 1 0 0 0 0 0 0 0
  Behaviors 1 1
}
Channel 1
{ Envelope
  1
  Key 0 0 0 0 0 0 0 0 0
  Behaviors 1 1
}
Channel 2
{ Envelope
  1
  Key 2 0 0 0 0 0 0 0 0
  Behaviors 1 1
}
"""


@pytest.mark.parametrize("suffix", [".bvh", ".glb"])
def test_a_left_handed_scene_is_mirrored(tmp_path, suffix):
    """LightWave (Y up, left-handed) to BVH or glTF: every world point p
    becomes (x, y, -z), the hierarchy's turns included."""
    from kbspline.formats import read_lws
    from kbspline.motion import read_bvh
    from kbspline.motion.kinematics import world_positions
    source = tmp_path / "hop.lws"
    source.write_text(HOP)
    mirror = np.diag([1.0, 1.0, -1.0])
    np.testing.assert_array_equal(axes_to_gltf("Y", "left"), mirror)
    own, _ = world_positions(read_lws(source).to_motion(next(iter(read_lws(source).animations)),
                                                         30.0))
    convert(source, tmp_path / f"hop{suffix}", fps=30.0, angle_tolerance=1e-6,
            distance_tolerance=1e-6)
    if suffix == ".bvh":
        got, _ = world_positions(read_bvh(tmp_path / "hop.bvh"))
        np.testing.assert_allclose(got, own @ mirror, atol=1e-9)
    else:
        doc = gl.GLTF2().load(str(tmp_path / "hop.glb"))
        times, output, interpolation = played(doc, doc.nodes[0].name, "translation")
        got = np.array([spec_play(times, output, interpolation, t) for t in np.arange(31) / 30])
        np.testing.assert_allclose(got, own[:, 0] @ mirror, atol=1e-5)
    assert np.ptp(own[:, 1, 2]) > 0.1         # the child swings in z: the mirror shows
