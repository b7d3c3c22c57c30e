"""The glTF reader and `to_motion` to the letter of the spec (issue 51, items
1-8): each case a small file written by the test, as other tools write them."""
import json
import warnings

import numpy as np
import pytest

from gltf_files import Gltf, glb_bytes, z_turn
from kbspline.formats.gltf import GltfError, read_gltf
from kbspline.motion import world_positions
from kbspline.quaternion import quat_to_matrix

X_TURN = [np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4)]     # 90 degrees about x, (x, y, z, w)
STILL = [(0, "rotation", [0, 1], [z_turn(0), z_turn(0)], "LINEAR")]


def positions_by_name(motion):
    positions, _ = world_positions(motion)
    return {joint.name: positions[:, j] for j, joint in enumerate(motion.joints)}


def write_json(tmp_path, doc, name="doc.gltf"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# -- 1, 2: to_motion carries nodes between joints and their scale -----------------------

def test_a_node_between_two_joints_is_carried(tmp_path):
    g = Gltf()
    g.node("j0", children=[1])
    g.node("mid", children=[2], translation=[0, 2, 0], rotation=X_TURN)
    g.node("j2", children=[3], translation=[1, 0, 0])
    g.node("j3", translation=[0, 0, 1])
    g.skin([0, 2, 3])
    g.animation("still", STILL)
    motion = read_gltf(g.write(tmp_path / "mid.glb")).to_motion("still", 1.0)
    assert [j.name for j in motion.joints] == ["j0", "j2", "j3"]
    at = positions_by_name(motion)
    np.testing.assert_allclose(at["j2"], [[1, 2, 0]] * 2, atol=1e-12)
    np.testing.assert_allclose(at["j3"], [[1, 1, 0]] * 2, atol=1e-12)


def test_a_static_scale_on_a_joint_scales_its_children(tmp_path):
    g = Gltf()
    g.node("j0", children=[1])
    g.node("j1", children=[2], translation=[0, 1, 0], scale=[2, 2, 2])
    g.node("j2", translation=[1, 0, 0])
    g.skin([0, 1, 2])
    g.animation("still", STILL)
    scene = read_gltf(g.write(tmp_path / "scaled.glb"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # uniform scale is exact: nothing to warn of
        motion = scene.to_motion("still", 1.0)
    np.testing.assert_allclose(positions_by_name(motion)["j2"], [[2, 1, 0]] * 2, atol=1e-12)


def test_an_animated_scale_moves_the_children_through_position_channels(tmp_path):
    g = Gltf()
    g.node("j0", children=[1])
    g.node("j1", translation=[1, 0, 0])
    g.skin([0, 1])
    g.animation("grow", [(0, "scale", [0, 1], [[1, 1, 1], [3, 3, 3]], "LINEAR")])
    motion = read_gltf(g.write(tmp_path / "grow.glb")).to_motion("grow", 2.0)
    assert motion.joints[1].channels[:3] == ["Xposition", "Yposition", "Zposition"]
    np.testing.assert_allclose(positions_by_name(motion)["j1"], [[1, 0, 0], [2, 0, 0],
                                                                 [3, 0, 0]], atol=1e-12)


def test_a_stretched_joint_warns_that_bvh_has_no_scale(tmp_path):
    g = Gltf()
    g.node("j0", children=[1], scale=[1, 2, 1])
    g.node("j1", translation=[1, 1, 0])
    g.skin([0, 1])
    g.animation("still", STILL)
    with pytest.warns(UserWarning, match="j0, j1: BVH has no scale"):
        motion = read_gltf(g.write(tmp_path / "stretch.glb")).to_motion("still", 1.0)
    np.testing.assert_allclose(positions_by_name(motion)["j1"], [[1, 2, 0]] * 2, atol=1e-12)


# -- 3: every animation kept ------------------------------------------------------------

def test_animations_with_repeated_or_missing_names_are_all_kept(tmp_path):
    g = Gltf()
    g.node("n")
    for k, name in enumerate(["Take 001", "Take 001", None, "2"]):
        g.animation(name, [(0, "translation", [0, 1], [[k, 0, 0], [k, 0, 0]], "LINEAR")])
    scene = read_gltf(g.write(tmp_path / "takes.gltf"))
    assert list(scene.animations) == ["Take 001", "Take 001#1", "2#2", "2"]
    for k, key in enumerate(scene.animations):
        assert scene.animations[key]["n", "translation"](0.5)[0, 0] == k


# -- 4: required extensions and GLB buffers ----------------------------------------------

def meshopt_glb():
    """Rotations in buffer 1, a meshopt fallback buffer without a uri."""
    g = Gltf()
    g.node("n")
    g.animation("a", [(0, "translation", [0, 1], [[0, 0, 0], [1, 0, 0]], "LINEAR"),
                      (0, "rotation", [0, 1], [z_turn(0), z_turn(1)], "LINEAR")])
    doc = json.loads(json.dumps(g.doc))
    doc["buffers"] = [{"byteLength": len(g.blob)}, {"byteLength": len(g.blob)}]
    doc["bufferViews"][-1]["buffer"] = 1
    return doc, bytes(g.blob)


def test_a_required_extension_that_is_not_implemented_is_refused_by_name(tmp_path):
    doc, blob = meshopt_glb()
    doc["extensionsUsed"] = doc["extensionsRequired"] = ["EXT_meshopt_compression"]
    (tmp_path / "m.glb").write_bytes(glb_bytes(doc, blob))
    with pytest.raises(GltfError, match="requires the extension EXT_meshopt_compression"):
        read_gltf(tmp_path / "m.glb")


def test_only_buffer_0_is_the_glb_binary_chunk(tmp_path):
    doc, blob = meshopt_glb()
    (tmp_path / "m.glb").write_bytes(glb_bytes(doc, blob))
    with pytest.raises(GltfError, match="buffer 1 has no uri; only buffer 0"):
        read_gltf(tmp_path / "m.glb")


def test_required_mesh_only_extensions_do_not_stop_reading_animations(tmp_path):
    g = Gltf()
    g.node("n")
    g.animation("a", STILL)
    doc = g.json()
    doc["extensionsUsed"] = doc["extensionsRequired"] = ["KHR_draco_mesh_compression",
                                                         "KHR_mesh_quantization"]
    assert list(read_gltf(write_json(tmp_path, doc)).animations) == ["a"]


# -- 5: node cycles ----------------------------------------------------------------------

@pytest.mark.parametrize("children, words", [
    ([[1], [0]], "node 0 is its own ancestor"),
    ([[0]], "node 0 is its own ancestor"),
    ([[1], [2], [0]], "node 0 is its own ancestor"),
    ([[2], [2], []], "node 2 has two parents, 0 and 1"),
])
def test_node_cycles_and_second_parents_are_refused(tmp_path, children, words):
    g = Gltf()
    for i, c in enumerate(children):
        g.node(f"n{i}", children=c)
    g.skin(range(len(children)))
    g.animation("a", STILL)
    with pytest.raises(GltfError, match=words):
        read_gltf(write_json(tmp_path, g.json()))


# -- 6: malformed JSON names the field ---------------------------------------------------

def small():
    g = Gltf()
    g.node("n")
    g.animation("a", [(0, "rotation", [0, 1], [z_turn(0), z_turn(1)], "LINEAR")])
    doc = g.json()
    doc["nodes"].append({"name": "m"})
    return doc


def add_sparse(doc, offset):
    doc["accessors"][1]["sparse"] = {"count": 1, "indices": {"bufferView": 0, "componentType":
                                                             5125, "byteOffset": offset},
                                     "values": {"bufferView": 1}}


MALFORMED = [
    (lambda d: d["animations"][0].update(samplers=["LINEAR"]),
     "animation 0: samplers\\[0\\] is 'LINEAR', not an object"),
    (lambda d: d["animations"][0].update(samplers={"0": d["animations"][0]["samplers"][0]}),
     "animation 0: 'samplers' is .*, not a list"),
    (lambda d: d["accessors"][0].update(componentType=[5126]),
     "accessor 0: 'componentType' is \\[5126\\], not an integer"),
    (lambda d: d["bufferViews"][1].update(byteStride="12"),
     "bufferView 1: 'byteStride' is '12', not an integer"),
    (lambda d: d["nodes"][0].update(children=3), "node 0: 'children' is 3, not a list"),
    (lambda d: d["nodes"][0].update(rotation=None), "node 0: 'rotation' must be 4 finite"),
    (lambda d: add_sparse(d, -4), "accessor 1 sparse indices: 'byteOffset' is -4"),
    (lambda d: d["nodes"][1].update(name=7), "node 1: 'name' is 7, not a string"),
    (lambda d: d["nodes"][0].update(translation=[1e400, 0, 0]), "'translation' must be 3"),
    (lambda d: d["nodes"][0].update(scale=[True, 1, 1]), "'scale' must be 3 finite"),
    (lambda d: d["accessors"][0].update(count=2 ** 70), "accessor 0: 1180591620717411303424"),
    (lambda d: d.update(asset={"version": "1.0"}), "asset: 'version' is '1.0'"),
    (lambda d: d["animations"][0]["channels"].append(d["animations"][0]["channels"][0]),
     "channel 1: node 0's rotation is animated twice"),
    (lambda d: d["buffers"][0].update(uri="/dev/zero"), "buffer 0: uri '/dev/zero' is not"),
    (lambda d: d["buffers"][0].update(uri="."), "buffer 0: '.' is not a file"),
    (lambda d: d["nodes"][1].update(matrix=[1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
     "node 1: its matrix's last row is not"),
    (lambda d: d["nodes"][1].update(matrix=[1e308, 0, 0, 0, 0, 1e308, 0, 0, 0, 0, 1e308, 0,
                                            0, 0, 0, 1]), "node 1: its matrix has a zero or inf"),
]


@pytest.mark.parametrize("change, words", MALFORMED)
def test_malformed_documents_raise_gltf_errors_naming_the_field(tmp_path, change, words):
    doc = small()
    change(doc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no NumPy overflow warnings on the way
        with pytest.raises(GltfError, match=words):
            read_gltf(write_json(tmp_path, doc))


def test_deeply_nested_json_is_a_gltf_error(tmp_path):
    (tmp_path / "deep.gltf").write_text('{"nodes": ' + "[" * 100_000)
    with pytest.raises(GltfError, match="the JSON does not parse"):
        read_gltf(tmp_path / "deep.gltf")


def test_a_world_transform_that_overflows_is_named(tmp_path):
    g = Gltf()
    g.node("far", children=[1], translation=[1e308, 0, 0])
    g.node("farther", translation=[1e308, 0, 0])
    g.skin([0, 1])
    g.animation("a", STILL)
    scene = read_gltf(write_json(tmp_path, g.json()))
    with pytest.raises(ValueError, match="node 'farther': its world transform overflows"):
        scene.to_motion("a", 1.0)


# -- 7: mirrored matrices ----------------------------------------------------------------

def test_a_mirrored_matrix_reads_as_a_negative_scale(tmp_path):
    turn = quat_to_matrix([np.cos(0.3), 0.2, np.sin(0.3) * 0.6, -0.4] /
                          np.linalg.norm([np.cos(0.3), 0.2, np.sin(0.3) * 0.6, -0.4]))
    mirror = np.eye(4)
    mirror[:3, :3] = turn @ np.diag([-2.0, 1.5, 0.5])
    mirror[:3, 3] = [1, 2, 3]
    g = Gltf()
    g.node("flip", matrix=np.diag([-1.0, 1, 1, 1]).ravel())
    g.node("trs", scale=[-1, 1, 1])
    g.node("turned", matrix=mirror.T.ravel())                 # glTF is column-major
    nodes = read_gltf(write_json(tmp_path, g.json())).nodes
    for key in ("translation", "rotation", "scale"):
        np.testing.assert_allclose(getattr(nodes[0], key), getattr(nodes[1], key), atol=1e-15)
    back = np.eye(4)
    back[:3, :3] = quat_to_matrix(nodes[2].rotation) * nodes[2].scale
    back[:3, 3] = nodes[2].translation
    np.testing.assert_allclose(back, mirror, atol=1e-12)


# -- 8: non-finite query times -----------------------------------------------------------

@pytest.mark.parametrize("interpolation", ["STEP", "LINEAR", "CUBICSPLINE"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_channels_refuse_non_finite_times(tmp_path, interpolation, bad):
    g = Gltf()
    g.node("n")
    values = [[0, 0, 0], [1, 0, 0]] if interpolation != "CUBICSPLINE" else np.zeros((6, 3))
    g.animation("a", [(0, "translation", [0, 1], values, interpolation)])
    channel = read_gltf(write_json(tmp_path, g.json())).animations["a"]["n", "translation"]
    with pytest.raises(ValueError, match="t must be finite"):
        channel([0.5, bad])
