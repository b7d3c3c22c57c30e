"""Pivots in the scene model: a 3D Studio pivot places only its node's own
mesh (lib3ds's node matrix is T R S, and children hang from it; Assimp moves
only the mesh), a LightWave pivot is part of the item's frame (Assimp's LWS
importer hangs children below the -pivot shift).  Checked on a generated
.3ds file whose children sit under parents with non-zero pivots, through
Scene.to_motion, BVH and glTF (played by the specification's sampler rules)."""
import dataclasses

import numpy as np
import pygltflib as gl
import pytest
from scipy.spatial.transform import Rotation

from kbspline.formats.convert import convert, scene_to_gltf
from kbspline.formats.threeds import read_3ds
from kbspline.motion import read_bvh
from kbspline.motion.kinematics import world_positions
from test_gltf import accessor, spec_play
from threeds_writer import f32, random_track, write_3ds

Z_UP = np.array([[1, 0, 0], [0, 0, 1], [0, -1, 0]], dtype=float)   # 3DS -> glTF axes
# 1e-4 rad on each of three rotations, at up to 100 units from their centres;
# a pivot applied or left out wrongly moves a point by about a unit
LEVER = 3 * 100 * 1e-4
PIVOTS = f32([[1.5, -2.0, 0.5], [0.3, 0.2, -0.7], [-1.0, 0.4, 2.0]])


def chain_file(tmp_path):
    """Parent > Child > Grandchild, each with a pivot and random tracks from frame 0."""
    rng = np.random.default_rng(52)
    nodes = []
    for i, name in enumerate(("Parent", "Child", "Grandchild")):
        tracks = {kind: random_track(rng, kind, int(rng.integers(2, 5)))
                  for kind in ("position", "rotation", "scale")}
        for track in tracks.values():
            track["frames"] = track["frames"] - track["frames"][0]
            track["ease_to"][:] = track["ease_from"][:] = 0.0   # glTF's cubics play them exactly
        tracks["scale"]["values"] = f32(rng.uniform(0.5, 2.0, tracks["scale"]["values"].shape))
        nodes.append({"tag": "object", "name": name, "parent": i - 1 if i else None,
                      "tracks": tracks, "pivot": PIVOTS[i]})
    path = tmp_path / "pivots.3ds"
    path.write_bytes(write_3ds(nodes, objects=[(n["name"], "mesh") for n in nodes]))
    return path


def frames(scene, t, inherited):
    """{node: ((M, 4, 4) node frame T R S on its parent's, (M, 4, 4) its mesh's
    frame: the node frame then T(-pivot))}, composed with SciPy down the
    chain; a child hangs from its parent's mesh frame when `inherited`."""
    out, above = {}, None
    for node in scene.nodes:
        tracks = scene.tracks[node.name]
        turn = Rotation.from_quat(tracks["rotation"](t)[:, [1, 2, 3, 0]]).as_matrix()
        local = np.tile(np.eye(4), (len(t), 1, 1))
        local[:, :3, :3] = turn * tracks["scale"](t)[:, None, :]
        local[:, :3, 3] = tracks["position"](t)
        frame = local if above is None else above @ local
        mesh = frame.copy()
        mesh[:, :3, 3] -= frame[:, :3, :3] @ node.pivot
        out[node.name] = frame, mesh
        above = mesh if inherited else frame
    return out


def gltf_world(doc, t):
    """{node name: (4, 4) world matrix} at time t, glTF channels played by the
    specification's rules, static nodes by their TRS."""
    values = {}
    for channel in doc.animations[0].channels:
        sampler = doc.animations[0].samplers[channel.sampler]
        times = accessor(doc, sampler.input)[:, 0]
        values[channel.target.node, channel.target.path] = spec_play(
            times, accessor(doc, sampler.output), sampler.interpolation, t)
    parent = {c: i for i, n in enumerate(doc.nodes) for c in (n.children or [])}
    world = {}

    def matrix(i):
        if i in world:
            return world[i]
        node = doc.nodes[i]
        m = np.eye(4)
        quat = values.get((i, "rotation"), node.rotation or [0, 0, 0, 1])
        m[:3, :3] = Rotation.from_quat(quat).as_matrix() * \
            np.asarray(values.get((i, "scale"), node.scale or [1, 1, 1]))
        m[:3, 3] = values.get((i, "translation"), node.translation or [0, 0, 0])
        world[i] = m if i not in parent else matrix(parent[i]) @ m
        return world[i]
    return {node.name: matrix(i) for i, node in enumerate(doc.nodes)}


@pytest.mark.parametrize("inherited", [False, True])
def test_to_motion_and_gltf_agree_on_the_pivot_rule(tmp_path, inherited):
    scene = read_3ds(chain_file(tmp_path))
    assert [node.pivot_inherited for node in scene.nodes] == [False] * 3
    if inherited:            # the LightWave rule on the same nodes
        scene = dataclasses.replace(scene, nodes=[dataclasses.replace(n, pivot_inherited=True)
                                                  for n in scene.nodes])
    with pytest.warns(UserWarning, match="BVH has no scale"):   # the scales differ per axis
        motion = scene.to_motion("TESTSCENE", fps=30.0)
    got, _ = world_positions(motion)
    want = frames(scene, motion.times, inherited)
    names = [joint.name for joint in motion.joints]
    for name, (frame, mesh) in want.items():   # a joint is the frame its children hang from
        joint = mesh if inherited else frame
        np.testing.assert_allclose(got[:, names.index(name)], joint[:, :3, 3], atol=1e-9)

    out = tmp_path / "pivots.glb"
    scene_to_gltf(scene, out, angle_tolerance=1e-4)   # positions: exact cubics
    doc = gl.GLTF2().load(str(out))
    t = np.linspace(0.0, motion.times[-1], 61)
    want = frames(scene, t, inherited)
    for k, x in enumerate(t):
        world = gltf_world(doc, x)
        for name, (frame, mesh) in want.items():
            assert np.abs(world[name][:3, 3] - Z_UP @ frame[k, :3, 3]).max() < LEVER, (name, x)
            assert np.abs(world[f"{name}.pivot"][:3, 3] - Z_UP @ mesh[k, :3, 3]).max() < LEVER


def test_bvh_joints_are_lib3ds_node_origins(tmp_path):
    source = chain_file(tmp_path)
    with pytest.warns(UserWarning, match="BVH has no scale"):
        convert(source, tmp_path / "pivots.bvh", fps=30.0)
    motion = read_bvh(tmp_path / "pivots.bvh")
    got, _ = world_positions(motion)
    want = frames(read_3ds(source), motion.times, inherited=False)
    names = [joint.name for joint in motion.joints]
    for name, (frame, _) in want.items():
        np.testing.assert_allclose(got[:, names.index(name)], frame[:, :3, 3] @ Z_UP.T,
                                   atol=1e-6)
