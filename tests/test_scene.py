"""The scene model every reader returns, `read_scene`, and the module layout
around them (aliases, no import cycle)."""
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kbspline
from gltf_files import Gltf, z_turn
from kbspline.formats import (FormatError, READERS, BvhError, GltfError, read_gltf,
                              read_scene)
from kbspline.formats.scene import Channel, Node, Scene, Skin
from kbspline.motion import Joint, Motion, world_positions, write_bvh
from kbspline.quaternion import quat_to_matrix

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "gltf"
# the folder the kbspline under test comes from: the source tree or site-packages
IMPORTED_FROM = pathlib.Path(kbspline.__file__).resolve().parents[1]


def run_python(code, tmp_path):
    """`code` in a fresh interpreter, started outside any source tree."""
    env = {**os.environ, "PYTHONPATH": str(IMPORTED_FROM)}   # LD_PRELOAD etc. kept
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tmp_path)


def arm(path):
    """A root sliding along x (0 -> 2 in 1 s), its child 1 up turning 0 -> 90
    degrees about z, and a static grandchild 1 along the child's x; no skin."""
    g = Gltf()
    g.node("root", children=[1])
    g.node("elbow", children=[2], translation=[0, 1, 0])
    g.node("hand", translation=[1, 0, 0])
    g.animation("move", [(0, "translation", [0, 1], [[0, 0, 0], [2, 0, 0]], "LINEAR"),
                         (1, "rotation", [0, 1], [z_turn(0), z_turn(np.pi / 2)], "LINEAR")])
    return g.write(path)


# -- the model on Khronos samples --------------------------------------------------

@pytest.mark.parametrize("name", ["Fox.glb", "CesiumMan.glb", "BoxAnimated.glb",
                                  "AnimatedCube.gltf", "SimpleSkin.gltf"])
def test_khronos_samples_read_as_scenes(name):
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"needs the Khronos sample {name} in {SAMPLES}")
    scene = read_gltf(path)
    assert isinstance(scene, Scene) and scene.source == "gltf"
    assert (scene.up_axis, scene.handedness) == ("Y", "right")
    joints = {j for skin in scene.skins for j in skin.joints}
    assert len({node.name for node in scene.nodes}) == len(scene.nodes)
    for i, node in enumerate(scene.nodes):
        assert isinstance(node, Node)
        assert (node.kind == "joint") == (i in joints)
        np.testing.assert_allclose(np.linalg.norm(node.rotation), 1, atol=1e-6)
        assert node.pivot.tolist() == [0, 0, 0]
        for child in node.children:
            assert scene.nodes[child].parent == i
    for channels in scene.animations.values():
        for (node, path), channel in channels.items():
            assert isinstance(channel, Channel) and channel.path == path
            out = channel(np.linspace(channel.times[0], channel.times[-1], 7))
            if path == "rotation":
                np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1, atol=1e-9)


# -- to_motion without a skin -----------------------------------------------------

def test_unskinned_scene_becomes_the_hierarchy_of_its_animated_nodes(tmp_path):
    scene = read_gltf(arm(tmp_path / "arm.gltf"))
    assert scene.skins == [] and [n.kind for n in scene.nodes] == ["node"] * 3
    motion = scene.to_motion("move", 4.0)
    assert [j.name for j in motion.joints] == ["root", "elbow"]
    assert [j.parent for j in motion.joints] == [-1, 0]
    positions, rotations = world_positions(motion)
    t = np.arange(5) / 4.0
    np.testing.assert_allclose(positions[:, 0], np.c_[2 * t, 0 * t, 0 * t], atol=1e-6)
    np.testing.assert_allclose(positions[:, 1], np.c_[2 * t, 1 + 0 * t, 0 * t], atol=1e-6)
    half = np.pi / 4 * t          # slerp from 0 to 90 degrees: half-angle linear in t
    want = np.c_[np.cos(half), 0 * t, 0 * t, np.sin(half)]
    np.testing.assert_allclose(np.abs(np.sum(rotations[1] * want, axis=1)), 1, atol=1e-6)


def test_skin_argument_is_checked(tmp_path):
    scene = read_gltf(arm(tmp_path / "arm.gltf"))
    with pytest.raises(ValueError, match="skin must index one of the 0 skins"):
        scene.to_motion("move", 4.0, skin=0)
    with pytest.raises(ValueError, match="animation 'walk' is not one of"):
        scene.to_motion("walk", 4.0)


def test_a_scene_built_by_hand_becomes_a_motion():
    """to_motion needs only the protocol: nodes, and channels that are callables."""
    class Slide:
        path, times, interpolation = "translation", np.array([0.0, 2.0]), "LINEAR"

        def __call__(self, t):
            return np.c_[np.atleast_1d(t), np.zeros(np.size(t)), np.zeros(np.size(t))]

    nodes = [Node("a", -1, [1], np.zeros(3), np.array([1.0, 0, 0, 0]), np.ones(3)),
             Node("b", 0, [], np.array([0, 0, 3.0]), np.array([1.0, 0, 0, 0]), np.ones(3))]
    scene = Scene(nodes, [Skin("s", [0, 1])], {"go": {("a", "translation"): Slide()}})
    positions, _ = world_positions(scene.to_motion("go", 2.0))
    np.testing.assert_allclose(positions[:, 1], [[0, 0, 3], [0.5, 0, 3], [1, 0, 3],
                                                 [1.5, 0, 3], [2, 0, 3]], atol=1e-12)


# -- read_scene ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["arm.gltf", "arm.glb", "ARM.GLB"])
def test_read_scene_dispatches_gltf(tmp_path, name):
    scene = read_scene(arm(tmp_path / name))
    assert scene.source == "gltf" and [n.name for n in scene.nodes] == ["root", "elbow", "hand"]


def test_read_scene_reads_bvh_as_a_scene_that_plays_the_clip(tmp_path):
    rng = np.random.default_rng(3)
    joints = [Joint("Hips", -1, np.zeros(3), ["Xposition", "Yposition", "Zposition",
                                               "Zrotation", "Xrotation", "Yrotation"]),
              Joint("Leg", 0, np.array([1.0, -2.0, 0.5]), ["Zrotation", "Xrotation", "Yrotation"],
                    end_site=np.array([0.0, -3.0, 0.0]))]
    clip = Motion(joints, 0.25, rng.uniform(-60, 60, (6, 9)))
    write_bvh(clip, tmp_path / "clip.bvh")
    scene = read_scene(tmp_path / "clip.bvh")
    assert scene.source == "bvh" and scene.skins[0].joints == [0, 1]
    assert scene.nodes[1].extras["end_site"].tolist() == [0, -3, 0]
    again = scene.to_motion("bvh", 4.0)
    want, _ = world_positions(clip)
    got, _ = world_positions(again)
    np.testing.assert_allclose(got, want, atol=1e-9)


def test_read_scene_refuses_unknown_extensions(tmp_path):
    for name in ["model.obj", "noextension"]:
        with pytest.raises(ValueError, match=r"extension .*known: (.*, )?\.bvh, \.glb, \.gltf"):
            read_scene(tmp_path / name)
    assert set(READERS) >= {".gltf", ".glb", ".bvh"}


def test_read_scene_raises_the_readers_errors(tmp_path):
    (tmp_path / "bad.glb").write_bytes(b"glTF\x02\0\0\0")
    (tmp_path / "bad.bvh").write_text("HIERARCHY\nROOT")
    with pytest.raises(GltfError):
        read_scene(tmp_path / "bad.glb")
    with pytest.raises(BvhError):
        read_scene(tmp_path / "bad.bvh")
    for error in (GltfError, BvhError):
        assert issubclass(error, FormatError) and issubclass(error, ValueError)


# -- layout: aliases and no import cycle -------------------------------------------------

def test_gltf_scene_names_are_aliases_of_the_model():
    from kbspline.formats import gltf
    assert (gltf.GltfScene, gltf.GltfNode, gltf.GltfSkin) == (Scene, Node, Skin)
    assert isinstance(gltf.GltfChannel, type)


def test_old_gltf_module_warns_and_names_the_new_home(tmp_path):
    out = run_python("import warnings\n"
                     "with warnings.catch_warnings(record=True) as w:\n"
                     "    warnings.simplefilter('always')\n"
                     "    from kbspline.gltf import export_gltf, read_gltf\n"
                     "import kbspline.formats.gltf as new\n"
                     "assert read_gltf is new.read_gltf\n"
                     "print([(x.category.__name__, str(x.message)) for x in w])", tmp_path)
    assert out.returncode == 0, out.stderr
    assert "DeprecationWarning" in out.stdout and "kbspline.formats.gltf" in out.stdout


def test_motion_does_not_import_formats(tmp_path):
    out = run_python("import sys, kbspline.motion\n"
                     "assert 'kbspline.formats' not in sys.modules, 'imported'\n"
                     "from kbspline.motion import read_bvh, BvhError, motion_to_gltf\n"
                     "import kbspline.formats.bvh as bvh\n"
                     "assert read_bvh is bvh.read_bvh and BvhError is bvh.BvhError\n"
                     "import kbspline.motion as m\n"
                     "assert 'motion_to_usd' in dir(m)\n"
                     "try:\n    m.no_such_name\nexcept AttributeError as e:\n    print(e)", tmp_path)
    assert out.returncode == 0, out.stderr
    assert "no_such_name" in out.stdout


# -- to_motion against matrices composed independently ----------------------------------

@st.composite
def random_scenes(draw):
    """A random tree with rest transforms (uniform scale), rotation and
    translation channels on some nodes, and a skin on a random subset."""
    from kbspline.formats.gltf import GltfChannel
    n = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    parents = [-1] + [int(rng.integers(-1, i)) for i in range(1, n)]
    nodes, channels = [], {}
    times = np.array([0.0, 0.4, 1.0])
    for i in range(n):
        q = rng.normal(size=4)
        nodes.append(Node(f"n{i}", parents[i], [c for c in range(n) if parents[c] == i],
                          rng.normal(size=3), q / np.linalg.norm(q),
                          np.full(3, rng.uniform(0.5, 2.0)) * (1 if i % 2 else -1)))
        if rng.random() < 0.6:
            channels[f"n{i}", "rotation"] = GltfChannel(times, rng.normal(size=(3, 4)),
                                                        "LINEAR", "rotation")
        if rng.random() < 0.3:
            channels[f"n{i}", "translation"] = GltfChannel(times, rng.normal(size=(3, 3)),
                                                           "LINEAR", "translation")
    if not channels:
        channels["n0", "translation"] = GltfChannel(times, np.zeros((3, 3)), "LINEAR",
                                                    "translation")
    joints = sorted(set(rng.choice(n, int(rng.integers(1, n + 1)), replace=False).tolist()))
    skins = [Skin("s", joints)] if draw(st.booleans()) else []
    return Scene(nodes, skins, {"a": channels})


def oracle_world(scene, i, t):
    """Node i's world matrix at time t, from SciPy's rotations."""
    from scipy.spatial.transform import Rotation
    channels, m = scene.animations["a"], np.eye(4)
    while i >= 0:
        node, local = scene.nodes[i], np.eye(4)
        values = {}
        for path in ("translation", "rotation", "scale"):
            c = channels.get((node.name, path))
            values[path] = c(t)[0] if c is not None else getattr(node, path)
        w, x, y, z = values["rotation"]
        local[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix() * values["scale"]
        local[:3, 3] = values["translation"]
        m, i = local @ m, node.parent
    return m


@settings(max_examples=60, deadline=None)
@given(scene=random_scenes())
def test_to_motion_places_every_joint_where_its_world_matrix_does(scene):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # the mirrors: positions stay exact
        motion = scene.to_motion("a", 5.0)
    positions, rotations = world_positions(motion)
    index = {node.name: i for i, node in enumerate(scene.nodes)}
    for f, t in enumerate(motion.times):
        for j, joint in enumerate(motion.joints):
            world = oracle_world(scene, index[joint.name], t)
            np.testing.assert_allclose(positions[f, j], world[:3, 3], atol=1e-9)
            if np.linalg.det(world[:3, :3]) > 0:     # a rotation times a uniform scale
                turn = world[:3, :3] / np.cbrt(np.linalg.det(world[:3, :3]))
                np.testing.assert_allclose(quat_to_matrix(rotations[j, f]), turn, atol=1e-9)
