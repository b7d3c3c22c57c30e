"""Mutation fuzz of the glTF reader: a valid file's JSON values replaced by
wrong types, nulls, negatives, huge numbers, deleted keys, lists swapped for
objects; its GLB bytes truncated, flipped and given wrong lengths.  Each
must read to a scene whose channels and motions play, or raise a GltfError
that names what is wrong, never another exception."""
import copy
import json
import os
import re
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gltf_files import Gltf, glb_bytes, z_turn
from kbspline.formats.gltf import GltfError, read_gltf

# GLTF_FUZZ_EXAMPLES=5000 searches longer than CI does
FUZZ = settings(max_examples=int(os.environ.get("GLTF_FUZZ_EXAMPLES", 120)), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
NAMED = re.compile(r"accessor|bufferView|buffer|node|skin|animation|sampler|channel|asset|"
                   r"extension|JSON|GLB|'\w+'")


def base():
    """(document, binary): every feature the reader handles, in one small file."""
    g = Gltf()
    g.node("root", children=[1, 3], translation=[0, 1, 0], rotation=z_turn(0.3))
    g.node("arm", children=[2], translation=[1, 0, 0], scale=[2, 2, 2])
    g.node("hand", matrix=[1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0.5, 0, 1])
    g.node(None, translation=[0, 0, 1])
    g.skin([0, 1, 2], name="body")
    times = [0.0, 0.5, 1.0]
    g.animation("walk", [
        (0, "translation", times, np.arange(27).reshape(9, 3) / 9.0, "CUBICSPLINE"),
        (1, "rotation", times, [z_turn(0), z_turn(1), z_turn(2)], "LINEAR"),
        (2, "scale", times, [[1, 1, 1], [2, 2, 2], [1, 1, 1]], "STEP")])
    g.animation(None, [(3, "translation", [0.0, 2.0], [[0, 0, 0], [1, 1, 1]], "LINEAR")])
    doc = g.json()
    # a sparse accessor (one key of the STEP scale replaced) and normalized shorts
    doc["accessors"][5]["sparse"] = {"count": 1, "indices": {"bufferView": 0,
                                                             "componentType": 5125},
                                     "values": {"bufferView": 1, "byteOffset": 4}}
    shorts = np.round(np.array([z_turn(0), z_turn(-1), z_turn(-2)]) * 32767).astype("<i2")
    view = {"buffer": 0, "byteOffset": len(g.blob), "byteLength": shorts.nbytes}
    blob = bytes(g.blob) + shorts.tobytes()
    doc["bufferViews"].append(view)
    doc["accessors"].append({"bufferView": len(doc["bufferViews"]) - 1, "componentType": 5122,
                             "normalized": True, "count": 3, "type": "VEC4"})
    doc["animations"][0]["samplers"][1]["output"] = len(doc["accessors"]) - 1
    doc["buffers"] = [{"byteLength": len(blob)}]
    return doc, blob


DOC, BLOB = base()


def paths(value, prefix=()):
    """Every place in a JSON value, as key paths."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += paths(item, prefix + (i,))
    return out


PATHS = [p for p in paths(DOC) if p]
ODD = [None, True, False, -1, 0, 1, 3, -2 ** 31, 2 ** 32, 2 ** 64, 10 ** 400, 1e308, -0.5,
       float("nan"), float("inf"), "", "x", "LINEAR", "2.0", [], {}, [0], [-1, 2],
       {"a": 1}, [[]], [1.0, 2.0, 3.0], [0, 0, 0, 0]]


@st.composite
def mutated_documents(draw):
    doc = copy.deepcopy(DOC)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            old = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue                        # an earlier mutation removed the place
        how = draw(st.sampled_from(["replace", "delete", "swap"]))
        if how == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif how == "swap" and isinstance(old, list):
            parent[path[-1]] = {str(i): v for i, v in enumerate(old)}
        elif how == "swap" and isinstance(old, dict):
            parent[path[-1]] = list(old.values())
        else:
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(ODD)))
    return doc


def read_and_play(path):
    """Reads `path`; plays every channel and turns every animation into a
    motion.  Returns the GltfError raised, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # BVH-has-no-scale warnings: the point is elsewhere
        warnings.simplefilter("error", RuntimeWarning)     # NumPy's overflow or NaN
        try:
            scene = read_gltf(path)
        except GltfError as exc:
            message = str(exc)
            assert message.startswith(f"{path}: ") and NAMED.search(message), message
            return exc
        for name, channels in scene.animations.items():
            for channel in channels.values():
                first, last = channel.times[0], channel.times[-1]
                out = channel(np.linspace(first, last, 5))
                assert np.all(np.isfinite(out))
            usable = [c for (_, p), c in channels.items() if p != "weights"]
            if usable:
                span = max(c.times[-1] for c in usable) - min(c.times[0] for c in usable)
                fps = min(10.0, 20.0 / span) if span > 0 else 10.0
                try:
                    motion = scene.to_motion(name, fps)
                except ValueError as exc:    # the one refusal allowed: far-flung values
                    assert "overflows float64" in str(exc), exc
                else:
                    assert motion.frames.shape[0] >= 1
    return None


def test_the_base_file_reads_and_plays(tmp_path):
    path = tmp_path / "base.glb"
    path.write_bytes(glb_bytes(DOC, BLOB))
    assert read_and_play(path) is None
    scene = read_gltf(path)
    assert list(scene.animations) == ["walk", "1"] and scene.nodes[3].name == "node3"


@FUZZ
@given(doc=mutated_documents(), container=st.sampled_from(["glb", "gltf"]))
def test_mutated_json_reads_or_names_the_field(tmp_path_factory, doc, container):
    path = tmp_path_factory.mktemp("fuzz") / f"m.{container}"
    if container == "glb":
        path.write_bytes(glb_bytes(doc, BLOB))
    else:
        import base64
        if isinstance(doc.get("buffers"), list) and doc["buffers"] \
                and isinstance(doc["buffers"][0], dict) and "uri" not in doc["buffers"][0]:
            doc["buffers"][0]["uri"] = ("data:application/octet-stream;base64,"
                                        + base64.b64encode(BLOB).decode())
        path.write_text(json.dumps(doc))
    read_and_play(path)


GOOD_GLB = glb_bytes(DOC, BLOB)
JSON_LENGTH = int.from_bytes(GOOD_GLB[12:16], "little")
LENGTH_FIELDS = [8, 12, 20 + JSON_LENGTH]      # file length, JSON chunk, BIN chunk


@st.composite
def mutated_glb(draw):
    data = bytearray(GOOD_GLB)
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["truncate", "flip", "length", "insert"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if how == "truncate":
            del data[at:]
        elif how == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif how == "length":
            field = draw(st.sampled_from(LENGTH_FIELDS))
            value = draw(st.sampled_from([0, 1, 3, 2 ** 31, 2 ** 32 - 1]) | st.integers(0, 4096))
            data[field:field + 4] = value.to_bytes(4, "little")
        else:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
    return bytes(data)


@FUZZ
@given(data=mutated_glb())
def test_damaged_glb_bytes_read_or_name_what_is_wrong(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "m.glb"
    path.write_bytes(data)
    read_and_play(path)
