"""3DS cameras to glTF (kbspline.formats.gltf.cameras), read back from the
JSON and buffer with the json module alone (not kbspline's reader, not
pygltflib): the camera object, its frame, and the KHR_animation_pointer
yfov sampler replayed by the glTF rules against the seed-002 oracle."""
import base64
import json
import math

import numpy as np
import pytest

from kbspline.formats.convert import convert

from test_cameras import LEGACY
from threeds_oracle import play
from threeds_writer import f32, random_track, write_3ds

Z_UP = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])       # 3DS (x, y, z) -> glTF
POINTER = "KHR_animation_pointer"
_WIDTH = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}


def load(path):
    doc = json.loads(path.read_text())
    uri = doc["buffers"][0]["uri"]
    data = base64.b64decode(uri.split(",", 1)[1])

    def accessor(i):
        acc = doc["accessors"][i]
        view = doc["bufferViews"][acc["bufferView"]]
        assert acc["componentType"] == 5126                  # FLOAT
        count, width = acc["count"], _WIDTH[acc["type"]]
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        return np.frombuffer(data, "<f4", count * width, start).reshape(count, width)
    return doc, accessor


def rotate(q_xyzw, v):
    x, y, z, w = q_xyzw
    u = np.array([x, y, z])
    return v + 2 * np.cross(u, np.cross(u, v) + w * v)


def camera_scene(tmp_path, seed):
    rng = np.random.default_rng([52, 21, seed])
    fov = random_track(rng, "fov", int(rng.integers(2, 7)), flags=int(rng.choice([0, 2])))
    fov["values"] = f32(np.abs(fov["values"]) + 10.0)
    nodes = [{"tag": "camera", "name": "Cam", "tracks": {
                 "position": random_track(rng, "position", 3), "fov": fov,
                 "roll": random_track(rng, "roll", 2)}},
             {"tag": "target", "name": "Cam", "tracks": {
                 "position": random_track(rng, "position", 2)}},
             {"tag": "object", "name": "Box", "tracks": {
                 "position": random_track(rng, "position", 3)}}]
    path = tmp_path / f"cam{seed}.3ds"
    path.write_bytes(write_3ds(nodes, objects=[("Box", "mesh"), ("Cam", "camera")],
                               segment=(0, 90)))
    return path, fov, nodes


def camera_checks(doc, name):
    """The camera's holder node: a child of `name`, turning glTF's camera
    frame (-z view, +y up) into 3DS's look-at frame in glTF's axes."""
    names = [n.get("name") for n in doc["nodes"]]
    holder = doc["nodes"][names.index(f"{name}.camera")]
    assert names.index(f"{name}.camera") in doc["nodes"][names.index(name)]["children"]
    q = np.array(holder["rotation"])
    np.testing.assert_allclose(rotate(q, np.array([0, 0, -1.0])), Z_UP @ [0, 0, -1.0], atol=1e-7)
    np.testing.assert_allclose(rotate(q, np.array([0, 1.0, 0])), Z_UP @ [0, 1.0, 0], atol=1e-7)
    return doc["cameras"][holder["camera"]], holder["camera"]


def vertical(horizontal_degrees, aspect):
    return 2 * math.atan(math.tan(math.radians(horizontal_degrees) / 2) / aspect)


@pytest.mark.parametrize("seed", range(3))
def test_3ds_camera_and_its_fov_in_gltf(tmp_path, seed):
    source, fov, nodes = camera_scene(tmp_path, seed)
    out = tmp_path / "cam.gltf"
    report = convert(source, out, angle_tolerance=1e-4)
    doc, accessor = load(out)
    camera, index = camera_checks(doc, "Cam")
    assert camera["type"] == "perspective"
    lens = camera["perspective"]
    assert math.isclose(lens["aspectRatio"], 4 / 3, rel_tol=1e-7) and lens["znear"] > 0
    assert math.isclose(lens["yfov"], vertical(play(fov, "fov", 0)[0], 4 / 3), rel_tol=1e-6)
    assert POINTER in doc["extensionsUsed"] and POINTER not in doc.get("extensionsRequired", [])
    (channel,) = [c for c in doc["animations"][0]["channels"] if c["target"]["path"] == "pointer"]
    assert channel["target"]["extensions"][POINTER]["pointer"] == \
        f"/cameras/{index}/perspective/yfov"
    sampler = doc["animations"][0]["samplers"][channel["sampler"]]
    assert sampler["interpolation"] == "LINEAR"
    times, values = accessor(sampler["input"])[:, 0], accessor(sampler["output"])[:, 0]
    assert np.all(np.diff(times) > 0) and times[0] == 0 and math.isclose(times[-1], 3.0)
    wide = np.flatnonzero(np.diff(times) >= 2 * 5e-4 * (1 - 1e-6))     # not a jump's pair
    u = np.linspace(0, 1, 21)
    t = np.concatenate([(times[k] + u * (times[k + 1] - times[k])) for k in wide])
    replay = np.interp(t, times.astype(float), values.astype(float))   # glTF's LINEAR
    want = np.array([vertical(play(fov, "fov", x * 30)[0], 4 / 3) for x in t])
    assert np.abs(replay - want).max() <= 1e-4 + 1e-7
    assert report.max_error["Cam", "fov"] <= report.tolerances["Cam", "fov"]
    # the camera looks at its target: the node's rotation keys, then the holder's turn
    names = [n.get("name") for n in doc["nodes"]]
    cam = names.index("Cam")
    (turning,) = [c for c in doc["animations"][0]["channels"]
                  if c["target"].get("node") == cam and c["target"]["path"] == "rotation"]
    sampler = doc["animations"][0]["samplers"][turning["sampler"]]
    key_times, keys = accessor(sampler["input"])[:, 0], accessor(sampler["output"])
    holder = np.array(doc["nodes"][names.index("Cam.camera")]["rotation"])
    for k in range(0, len(key_times), max(1, len(key_times) // 25)):
        frame = float(key_times[k]) * 30
        eye = play(nodes[0]["tracks"]["position"], "position", frame)
        goal = play(nodes[1]["tracks"]["position"], "position", frame)
        view = rotate(keys[k].astype(float), rotate(holder, np.array([0, 0, -1.0])))
        want = Z_UP @ (goal - eye) / np.linalg.norm(goal - eye)
        np.testing.assert_allclose(view, want, atol=1e-5)


def test_real_3ds_camera_in_gltf(tmp_path):
    source = LEGACY / "TargetCameraAnim.3ds"
    if not source.exists():
        pytest.skip("TargetCameraAnim.3ds is absent")
    out = tmp_path / "target.gltf"
    convert(source, out)
    doc, _ = load(out)
    camera, _ = camera_checks(doc, "Camera01")
    assert math.isclose(camera["perspective"]["yfov"], vertical(45.0, 4 / 3), rel_tol=1e-6)
    assert not any(c["target"]["path"] == "pointer" for c in doc["animations"][0]["channels"])


def test_lws_camera_zoom_in_gltf(tmp_path):
    """A LightWave camera: vertical fov 2 atan(1 / zoom) from its zoom
    envelope (lws_oracle), its frame already glTF's once mirrored in z."""
    import lws_oracle
    from kbspline import PositionSpline
    from kbspline.formats import read_lws
    from kbspline.formats.convert import axes_to_gltf
    from kbspline.formats.gltf import export_gltf
    from kbspline.formats.gltf.cameras import add_cameras
    from kbspline.formats.gltf.write import save_gltf
    from lws_writer import write_lws
    from test_cameras import _camera_item, _with_camera_lines
    rng = np.random.default_rng(8)
    path = tmp_path / "zoom.lws"
    write_lws(path, [_camera_item(rng, 3)], 3)
    keys = [(float(rng.uniform(2, 6)), t, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for t in (0.0, 0.7, 1.9, 3.0)]
    lines = ["ZoomFactor (envelope)", "{ Envelope", f"  {len(keys)}"]
    lines += ["  Key " + " ".join([repr(v), repr(t), "0"] + [repr(p) for p in ps])
              for v, t, s, *ps in keys]
    lines += ["  Behaviors 1 1", "}", "FrameSize 1280 720"]
    path.write_text(_with_camera_lines(path.read_text(), lines))
    scene = read_lws(path)
    stand_in = PositionSpline([0.0, 3.0], np.zeros((2, 3)))   # the node's own channels
    report = export_gltf({"Cam": {"translation": stand_in}}, None)
    added = add_cameras(report, scene, next(iter(scene.animations)),
                        axes_to_gltf("Y", "left"), 1e-4, 0.0, (0.0, 3.0))
    save_gltf(report.gltf, tmp_path / "zoom.gltf")
    doc, accessor = load(tmp_path / "zoom.gltf")
    names = [n.get("name") for n in doc["nodes"]]
    holder = doc["nodes"][names.index("Cam.camera")]
    np.testing.assert_allclose(holder["rotation"], [0, 0, 0, 1], atol=1e-12)
    lens = doc["cameras"][added["Cam"]]["perspective"]
    assert math.isclose(lens["aspectRatio"], 1280 / 720, rel_tol=1e-7)
    (channel,) = [c for c in doc["animations"][0]["channels"] if c["target"]["path"] == "pointer"]
    sampler = doc["animations"][0]["samplers"][channel["sampler"]]
    times, values = accessor(sampler["input"])[:, 0], accessor(sampler["output"])[:, 0]
    t = np.linspace(times[0], times[-1], 301)
    played = [(v, s, "tcb", tuple(ps)) for v, s, _, *ps in keys]
    want = [2 * math.atan(1 / lws_oracle.evaluate(played, "constant", "constant", x)) for x in t]
    replay = np.interp(t, times.astype(float), values.astype(float))
    assert np.abs(replay - want).max() <= 1e-4 + 1e-7
    assert math.isclose(lens["yfov"], want[0], rel_tol=1e-6)


def test_real_lws_camera_in_gltf(tmp_path):
    """move_x.lws: its camera in glTF frames the object, as in LightWave;
    vertical fov 2 atan(1 / 3.2), 640 x 480."""
    source = LEGACY / "move_x.lws"
    if not source.exists():
        pytest.skip("move_x.lws is absent")
    out = tmp_path / "move_x.gltf"
    convert(source, out)
    doc, _ = load(out)
    names = [n.get("name") for n in doc["nodes"]]
    camera = doc["nodes"][names.index("Camera")]
    holder = doc["nodes"][names.index("Camera.camera")]
    lens = doc["cameras"][holder["camera"]]["perspective"]
    assert math.isclose(lens["yfov"], 2 * math.atan(1 / 3.2), rel_tol=1e-6)
    assert math.isclose(lens["aspectRatio"], 4 / 3, rel_tol=1e-7)
    view = rotate(np.array(camera.get("rotation", [0, 0, 0, 1.0])),
                  rotate(np.array(holder["rotation"]), np.array([0, 0, -1.0])))
    thing = doc["nodes"][names.index("simple_cube")]
    toward = np.array(thing.get("translation", [0, 0, 0])) - np.array(camera["translation"])
    assert view @ toward / np.linalg.norm(toward) > 0.98
