"""read_gltf against an independent reading: pygltflib parses the files,
NumPy decodes the accessors, and the glTF 2.0 specification's sampler
formulas are transcribed below, one time at a time.  Khronos sample models
from ../shared/data/gltf (never copied here), synthetic files for data URIs,
morph weights and every kind of bad file."""
import base64
import json
import math
import pathlib
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import quat_to_matrix
from kbspline.formats.gltf import GltfError, read_gltf
from kbspline.motion import world_positions

gl = pytest.importorskip("pygltflib")

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "gltf"
REQUIRED = ["InterpolationTest.glb", "Fox.glb", "CesiumMan.glb", "BoxAnimated.glb",
            "AnimatedCube.gltf", "SimpleSkin.gltf", "RiggedSimple.glb", "AnimatedTriangle.gltf"]


def sample(name):
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"needs the Khronos sample {name} in {SAMPLES} (../shared/data/gltf)")
    return path


# -- the independent reading -------------------------------------------------

def oracle_doc(path):
    """The document, each buffer's bytes in doc.blobs."""
    doc = gl.GLTF2().load(str(path))
    doc.blobs = []
    for buffer in doc.buffers:
        uri = buffer.uri or ""
        if uri.startswith("data:"):   # pygltflib knows only the octet-stream media type
            doc.blobs.append(base64.b64decode(uri.split(",", 1)[1]))
        elif uri:
            doc.blobs.append((pathlib.Path(path).parent / uri).read_bytes())
        else:
            doc.blobs.append(doc.binary_blob())
    return doc


def oracle_accessor(doc, index):
    acc = doc.accessors[index]
    view = doc.bufferViews[acc.bufferView]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[acc.type]
    assert acc.componentType == gl.FLOAT and not acc.sparse
    stride = view.byteStride or 4 * width
    blob = doc.blobs[view.buffer]
    start = (view.byteOffset or 0) + (acc.byteOffset or 0)
    return np.array([struct.unpack_from(f"<{width}f", blob, start + i * stride)
                     for i in range(acc.count)], dtype=np.float64)


def spec_value(times, output, interpolation, path, t):
    """One value at time t per the specification's Appendix C."""
    cubic = interpolation == "CUBICSPLINE"
    value = (lambda k: output[3 * k + 1]) if cubic else (lambda k: output[k])
    if len(times) == 1 or t <= times[0]:
        v = value(0)
    elif t >= times[-1]:
        v = value(len(times) - 1)
    else:
        k = max(i for i in range(len(times)) if times[i] <= t)
        td = times[k + 1] - times[k]
        s = (t - times[k]) / td
        if interpolation == "STEP":
            v = value(k)
        elif cubic:
            v = ((2 * s**3 - 3 * s**2 + 1) * value(k) + td * (s**3 - 2 * s**2 + s) * output[3 * k + 2]
                 + (-2 * s**3 + 3 * s**2) * value(k + 1) + td * (s**3 - s**2) * output[3 * (k + 1)])
        elif path == "rotation":
            a, b = value(k) / np.linalg.norm(value(k)), value(k + 1) / np.linalg.norm(value(k + 1))
            dot = float(np.dot(a, b))
            if dot < 0:                      # the shorter way
                b, dot = -b, -dot
            # the angle between a and b, from chords: acos of a dot product
            # near 1 keeps only half the digits
            theta = 2 * math.atan2(np.linalg.norm(a - b), np.linalg.norm(a + b))
            if theta < 1e-9:
                v = a
            else:
                v = (math.sin((1 - s) * theta) * a + math.sin(s * theta) * b) / math.sin(theta)
        else:
            v = (1 - s) * value(k) + s * value(k + 1)
    if path == "rotation":
        v = v / np.linalg.norm(v)
        return np.array([v[3], v[0], v[1], v[2]])
    return np.asarray(v, dtype=np.float64)


def probe_times(times, rng):
    mids = (times[1:] + times[:-1]) / 2 if len(times) > 1 else times
    return np.concatenate([times, mids, [times[0] - 1, times[-1] + 1],
                           rng.uniform(times[0], times[-1], 20)])


def same_rotation(a, b):
    return min(np.abs(a - b).max(), np.abs(a + b).max())


# -- the sample models evaluate exactly ------------------------------------------

@pytest.mark.parametrize("name", REQUIRED)
def test_samplers_match_the_specification(name):
    path = sample(name)
    scene, doc = read_gltf(path), oracle_doc(path)
    rng = np.random.default_rng(0)
    assert len(scene.animations) == len(doc.animations)
    for a, anim in enumerate(doc.animations):
        channels = scene.animations[anim.name or str(a)]
        assert len(channels) == len(anim.channels)
        for channel in anim.channels:
            sampler = anim.samplers[channel.sampler]
            node = doc.nodes[channel.target.node].name or f"node{channel.target.node}"
            ours = channels[node, channel.target.path]
            times = oracle_accessor(doc, sampler.input)[:, 0]
            output = oracle_accessor(doc, sampler.output)
            assert ours.interpolation == (sampler.interpolation or "LINEAR")
            np.testing.assert_array_equal(ours.times, times)
            t = probe_times(times, rng)
            got = ours(t)
            for i, ti in enumerate(t):
                want = spec_value(times, output, ours.interpolation, ours.path, ti)
                if ours.path == "rotation":
                    assert same_rotation(got[i], want) < 1e-9, (node, ti)
                else:
                    np.testing.assert_allclose(got[i], want, atol=1e-12, rtol=1e-12)


def test_names_unnamed_nodes_and_animations():
    scene = read_gltf(sample("BoxAnimated.glb"))
    assert list(scene.animations) == ["0"]
    assert {node for node, _ in scene.animations["0"]} == {"node0", "node2"}
    assert scene.nodes[2].name == "node2" and scene.nodes[2].parent >= 0


def test_nodes_and_skins():
    scene, doc = read_gltf(sample("Fox.glb")), oracle_doc(sample("Fox.glb"))
    assert [n.name for n in scene.nodes] == [n.name or f"node{i}" for i, n in enumerate(doc.nodes)]
    assert scene.skins[0].joints == doc.skins[0].joints
    for i, node in enumerate(doc.nodes):
        for child in node.children or []:
            assert scene.nodes[child].parent == i
        if node.rotation:
            x, y, z, w = node.rotation
            np.testing.assert_array_equal(scene.nodes[i].rotation, [w, x, y, z])


# -- skinned skeletons as Motion ----------------------------------------------------

def node_world(doc, scene_channels, node, t):
    """A node's 4x4 world matrix at time t from the oracle's samplers."""
    m = np.eye(4)
    i = node
    parents = {c: p for p, n in enumerate(doc.nodes) for c in (n.children or [])}
    while i is not None:
        n = doc.nodes[i]
        if n.matrix:
            local = np.array(n.matrix).reshape(4, 4).T
        else:
            trs = {"translation": n.translation or [0, 0, 0], "rotation": n.rotation or [0, 0, 0, 1],
                   "scale": n.scale or [1, 1, 1]}
            for path in trs:
                if (i, path) in scene_channels:
                    times, output, interpolation = scene_channels[i, path]
                    v = spec_value(times, output, interpolation, path, t)
                    trs[path] = [v[1], v[2], v[3], v[0]] if path == "rotation" else v
            x, y, z, w = trs["rotation"]
            local = np.eye(4)
            local[:3, :3] = quat_to_matrix([w, x, y, z]) * np.asarray(trs["scale"])
            local[:3, 3] = trs["translation"]
        m = local @ m
        i = parents.get(i)
    return m


@pytest.mark.parametrize("name, animation", [("Fox.glb", "Walk"), ("CesiumMan.glb", "0")])
def test_skinned_figures_become_motions(name, animation):
    path = sample(name)
    scene, doc = read_gltf(path), oracle_doc(path)
    motion = scene.to_motion(animation, 30.0)
    a = [an.name or str(i) for i, an in enumerate(doc.animations)].index(animation)
    anim = doc.animations[a]
    oracle_channels = {(c.target.node, c.target.path): (
        oracle_accessor(doc, anim.samplers[c.sampler].input)[:, 0],
        oracle_accessor(doc, anim.samplers[c.sampler].output),
        anim.samplers[c.sampler].interpolation or "LINEAR") for c in anim.channels}
    joints = doc.skins[0].joints
    assert len(motion.joints) == len(joints)
    by_name = {("_".join((doc.nodes[j].name or f"node{j}").split())): j for j in joints}
    positions, _ = world_positions(motion)
    start = min(times[0] for times, _, _ in oracle_channels.values())
    size = np.ptp(positions.reshape(-1, 3), axis=0).max()
    for f in range(0, motion.num_frames, 5):
        for k, joint in enumerate(motion.joints):
            want = node_world(doc, oracle_channels, by_name[joint.name], start + f / 30.0)[:3, 3]
            np.testing.assert_allclose(positions[f, k], want, atol=1e-6 * size)


def test_skinned_figure_comes_back_through_export_within_tolerance(tmp_path):
    from kbspline import RotationSpline
    from kbspline.motion import motion_to_gltf
    motion = read_gltf(sample("CesiumMan.glb")).to_motion("0", 24.0)
    report = motion_to_gltf(motion, tmp_path / "again.glb", angle_tolerance=1e-4)
    back = read_gltf(tmp_path / "again.glb").animations["bvh"]
    splines = RotationSpline(motion.times, motion.rotations())
    t = np.random.default_rng(1).uniform(0, motion.times[-1], 300)
    for j, joint in enumerate(motion.joints):
        played = back[joint.name, "rotation"](t)
        truth = splines(t)[j]
        chord = np.minimum(np.linalg.norm(played - truth, axis=1),
                           np.linalg.norm(played + truth, axis=1))
        assert (4 * np.arcsin(chord / 2)).max() <= 1e-4 + 1e-6
        assert report.max_error[joint.name, "rotation"] <= 1e-4


# -- synthetic files: every container, morph weights, bad files ------------------------

def synthetic(kind="octet", weights=True):
    """(JSON document, binary): one node with a LINEAR rotation, a
    CUBICSPLINE translation and STEP morph weights of two targets."""
    times = np.array([0.5, 1.0, 2.0], np.float32)
    q = np.array([[0, 0, 0, 1], [0, 0, 0.6, -0.8], [0.6, 0, 0, 0.8]], np.float32)  # a sign flip
    cubic = np.arange(27, dtype=np.float32).reshape(9, 3) / 7
    w = np.array([0, 1, 0.5, 0.5, 1, 0], np.float32)
    arrays = [times, q, cubic] + ([w] if weights else [])
    blob, views, accessors = b"", [], []
    types = ["SCALAR", "VEC4", "VEC3", "SCALAR"]
    for a, kind_ in zip(arrays, types):
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": a.nbytes})
        accessors.append({"bufferView": len(views) - 1, "componentType": 5126,
                          "count": a.size // {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[kind_],
                          "type": kind_})
        blob += a.tobytes()
    samplers = [{"input": 0, "output": 1, "interpolation": "LINEAR"},
                {"input": 0, "output": 2, "interpolation": "CUBICSPLINE"}]
    channels = [{"sampler": 0, "target": {"node": 0, "path": "rotation"}},
                {"sampler": 1, "target": {"node": 0, "path": "translation"}}]
    if weights:
        samplers.append({"input": 0, "output": 3, "interpolation": "STEP"})
        channels.append({"sampler": 2, "target": {"node": 0, "path": "weights"}})
    doc = {"asset": {"version": "2.0"}, "nodes": [{}],
           "animations": [{"name": "clip", "samplers": samplers, "channels": channels}],
           "accessors": accessors, "bufferViews": views,
           "buffers": [{"byteLength": len(blob)}]}
    return doc, blob


def write(tmp_path, doc, blob, container):
    doc = json.loads(json.dumps(doc))
    if container == "glb":
        text = json.dumps(doc).encode()
        text += b" " * (-len(text) % 4)
        blob += b"\0" * (-len(blob) % 4)
        body = (struct.pack("<II", len(text), 0x4E4F534A) + text
                + struct.pack("<II", len(blob), 0x004E4942) + blob)
        path = tmp_path / "s.glb"
        path.write_bytes(struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)
        return path
    if container == "bin":
        (tmp_path / "s data.bin").write_bytes(blob)
        doc["buffers"][0]["uri"] = "s%20data.bin"
    else:
        media = {"octet": "application/octet-stream", "gltf-buffer": "application/gltf-buffer"}
        doc["buffers"][0]["uri"] = f"data:{media[container]};base64," + base64.b64encode(blob).decode()
    path = tmp_path / "s.gltf"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("container", ["octet", "gltf-buffer", "bin", "glb"])
def test_every_container_reads_the_same(tmp_path, container):
    doc, blob = synthetic()
    channels = read_gltf(write(tmp_path, doc, blob, container)).animations["clip"]
    times = np.array([0.5, 1.0, 2.0])
    t = np.array([0.0, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])
    weights = channels["node0", "weights"]
    np.testing.assert_array_equal(weights(t), [[0, 1], [0, 1], [0, 1], [0.5, 0.5], [0.5, 0.5],
                                               [1, 0], [1, 0]])
    rotation = channels["node0", "rotation"]
    q = np.frombuffer(blob[12:60], np.float32).reshape(3, 4).astype(np.float64)
    for i, ti in enumerate(t):
        want = spec_value(times, q, "LINEAR", "rotation", ti)
        assert same_rotation(rotation(t)[i], want) < 1e-12
    cubic = np.frombuffer(blob[60:168], np.float32).reshape(9, 3).astype(np.float64)
    got = channels["node0", "translation"](t)
    for i, ti in enumerate(t):
        np.testing.assert_allclose(got[i], spec_value(times, cubic, "CUBICSPLINE", "translation", ti),
                                   rtol=1e-14)


def corrupt(doc, change):
    doc = json.loads(json.dumps(doc))
    change(doc)
    return doc


BAD_DOCS = [
    (lambda d: d["accessors"][1].update(count=40), "accessor 1: 40 elements"),
    (lambda d: d["bufferViews"][2].update(byteLength=1000), "bufferView 2: bytes"),
    (lambda d: d["accessors"][0].update(bufferView=9), "accessor 0: bufferView 9 does not exist"),
    (lambda d: d["accessors"][2].update(componentType=7), "accessor 2: componentType 7"),
    (lambda d: d["animations"][0]["samplers"][0].update(output=2), "output accessor 2 has shape"),
    (lambda d: d["animations"][0]["samplers"][0].update(interpolation="SMOOTH"), "interpolation"),
    (lambda d: d["animations"][0]["channels"][0].update(sampler=7), "sampler 7 does not exist"),
    (lambda d: d["animations"][0]["channels"][0]["target"].update(node=3), "target node 3"),
    (lambda d: d["animations"][0]["channels"][0]["target"].update(path="colour"), "path 'colour'"),
    (lambda d: d["buffers"][0].update(uri="data:text/plain;base64,AAAA"), "data URI must be"),
    (lambda d: d["buffers"][0].update(uri="missing.bin"), "cannot read 'missing.bin'"),
    (lambda d: d["nodes"][0].update(rotation=[0, 0, 1]), "node 0: 'rotation' must be 4"),
    (lambda d: d["nodes"][0].update(children=[0, 5]), "node 0: child"),
]


@pytest.mark.parametrize("change, words", BAD_DOCS)
def test_bad_documents_name_what_is_wrong(tmp_path, change, words):
    doc, blob = synthetic()
    path = write(tmp_path, doc, blob, "octet")
    path.write_text(json.dumps(corrupt(json.loads(path.read_text()), change)))
    with pytest.raises(GltfError, match=words):
        read_gltf(path)


@pytest.mark.parametrize("times, words", [([0.5, 0.4, 2.0], "finite and increasing"),
                                          ([0.5, np.nan, 2.0], "finite and increasing"),
                                          ([0.5, 1.0, np.inf], "finite and increasing")])
def test_bad_key_times(tmp_path, times, words):
    doc, blob = synthetic()
    blob = np.array(times, np.float32).tobytes() + blob[12:]
    with pytest.raises(GltfError, match=f"input accessor 0: key times must be {words}"):
        read_gltf(write(tmp_path, doc, blob, "glb"))


def test_bad_containers(tmp_path):
    doc, blob = synthetic()
    good = write(tmp_path, doc, blob, "glb").read_bytes()
    cases = {"wrong magic": b"glTX" + good[4:], "truncated": good[:len(good) // 2],
             "header only": good[:12], "not json": b"{nope", "empty": b""}
    for what, data in cases.items():
        path = tmp_path / f"{what}.glb"
        path.write_bytes(data)
        with pytest.raises(GltfError):
            read_gltf(path)
    zero = np.zeros(16, np.float32).tobytes()
    with pytest.raises(GltfError, match="zero quaternion"):
        read_gltf(write(tmp_path, doc, blob[:12] + zero + blob[60:], "octet"))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_fuzzed_files_fail_cleanly(tmp_path_factory, data):
    """Bytes flipped, cut or JSON numbers changed: read_gltf succeeds or
    raises GltfError, never anything else."""
    tmp = tmp_path_factory.mktemp("fuzz")
    doc, blob = synthetic()
    good = bytearray(write(tmp, doc, blob, "glb").read_bytes())
    action = data.draw(st.sampled_from(["flip", "cut", "json"]))
    if action == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            good[data.draw(st.integers(0, len(good) - 1))] = data.draw(st.integers(0, 255))
        payload = bytes(good)
    elif action == "cut":
        payload = bytes(good[:data.draw(st.integers(0, len(good)))])
    else:
        table = data.draw(st.sampled_from(["accessors", "bufferViews"]))
        item = data.draw(st.integers(0, len(doc[table]) - 1))
        key = data.draw(st.sampled_from(sorted(doc[table][item])))
        doc[table][item][key] = data.draw(st.one_of(st.integers(-2**40, 2**40), st.none(),
                                                    st.text(max_size=3)))
        payload = write(tmp, doc, blob, "glb").read_bytes()
    path = tmp / "f.glb"
    path.write_bytes(payload)
    try:
        read_gltf(path)
    except GltfError:
        pass


def test_from_gltf_command(tmp_path):
    import subprocess
    import sys
    from kbspline.motion import read_bvh
    out = tmp_path / "fox.bvh"
    done = subprocess.run([sys.executable, "-m", "kbspline", "from-gltf", str(sample("Fox.glb")),
                           "--animation", "Run", "--fps", "24", "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    clip = read_bvh(out)
    assert len(clip.joints) == 24 and clip.frame_time == 1 / 24
    bad = subprocess.run([sys.executable, "-m", "kbspline", "from-gltf", str(sample("Fox.glb")),
                          "--animation", "Swim", "-o", str(out), "--force"], capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "'Swim' is not one of" in bad.stderr
