"""read_3ds (SPEC 9c): 3D Studio keyframer files played as 3D Studio played
them, against seed 002 transcribed in threeds_oracle.py, on files written by
threeds_writer.py and on the real files of ../shared/data/legacy."""
import pathlib

import numpy as np
import pytest

from kbspline.formats.threeds import ThreeDSError, read_3ds
from kbspline.quaternion import quat_to_matrix
from threeds_oracle import play
from threeds_writer import FIELDS, random_scene, random_track, write_3ds

LEGACY = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "legacy"
FPS = 30.0
MISSING = (f"needs the legacy keyframer files in {LEGACY} (the project's shared data, "
           "checked out beside the repository as ../shared)")


def legacy(name):
    path = LEGACY / name
    if not path.exists():
        pytest.skip(MISSING)
    return path


def read_bytes(tmp_path, data, name="scene.3ds", **kw):
    path = tmp_path / name
    path.write_bytes(data)
    return read_3ds(path, **kw)


def sample_frames(frames, rng):
    """Frames at and between the keys, fractional, before the first and past
    the last (three periods: repeats and loops wrap)."""
    lo, hi = frames[0], frames[-1]
    span = max(hi - lo, 1)
    return np.concatenate([frames, rng.uniform(lo, hi, 40), [lo - 3.5, hi + 0.25 * span],
                           rng.uniform(hi, hi + 3 * span, 20)])


def cumulative_segments(track):
    """Ordinary rotation segments kbspline plays as its cumulative cubic, not
    squad (SPEC 3: squad ill-conditioned there); spins are not listed."""
    spline = track.spline_in(np.eye(3)) if track.kind == "rotation" else None
    if spline is None or len(track.frames) < 2:
        return set()
    spins = track.values[1:, 0] > 2 * np.pi - 1e-5
    return set(np.flatnonzero(~spline.squad_segments & ~spins).tolist())


def assert_plays_as_3ds(track, stored, kind, rng, tol=1e-9):
    frames = sample_frames(np.asarray(stored["frames"], float), rng)
    got = track(frames / FPS)
    cumulative = cumulative_segments(track)
    want = np.array([play(stored, kind, f, cumulative) for f in frames])
    if kind == "rotation":      # q and -q draw the same: compare up to sign
        sign = np.where(np.sum(got * want, axis=1) < 0, -1.0, 1.0)[:, None]
        want = want * sign
    scale = 1.0 + np.abs(want).max()
    np.testing.assert_allclose(got, want, atol=tol * scale, rtol=0,
                               err_msg=f"{kind} track with flags {stored.get('flags', 0)}")


@pytest.mark.parametrize("seed", range(12))
def test_generated_scenes_play_as_seed_002(tmp_path, seed):
    rng = np.random.default_rng([52, seed])
    nodes, objects = random_scene(rng)
    scene = read_bytes(tmp_path, write_3ds(nodes, objects=objects))
    names = [node.name for node in scene.nodes]
    assert names == [f"Obj{i}" for i in range(len(nodes) - 2)] + ["Cam", "Cam.target"]
    for written, name in zip(nodes, names):
        for kind, stored in written["tracks"].items():
            assert_plays_as_3ds(scene.tracks[name][kind], stored, kind, rng)


@pytest.mark.parametrize("kind", ["position", "rotation", "scale", "roll", "fov"])
@pytest.mark.parametrize("flags", [0, 2, 3])
def test_long_tracks_of_every_kind_and_flag(tmp_path, kind, flags):
    rng = np.random.default_rng([52, flags, len(kind)])
    for trial in range(6):
        stored = random_track(rng, kind, int(rng.integers(2, 14)), flags=flags)
        tag = "object" if kind in ("position", "rotation", "scale") else "camera"
        scene = read_bytes(tmp_path, write_3ds([{"tag": tag, "name": "N",
                                                 "tracks": {kind: stored}}]))
        assert_plays_as_3ds(scene.tracks["N"][kind], stored, kind, rng)


def test_where_kbspline_departs_from_squad(tmp_path):
    """Where squad is ill-conditioned kbspline plays its cumulative cubic
    (SPEC 3's no-glitch rule) with 3D Studio's tangents: few segments, and
    there 3D Studio's own squad is another curve."""
    total, departing, apart = 0, 0, 0.0
    for seed in range(120):
        rng = np.random.default_rng([99, seed])
        stored = random_track(rng, "rotation", 8, flags=int(rng.choice([0, 3])))
        scene = read_bytes(tmp_path, write_3ds([{"tag": "object", "name": "A",
                                                 "tracks": {"rotation": stored}}]))
        track = scene.tracks["A"]["rotation"]
        total += len(track.frames) - 1
        for n in cumulative_segments(track):
            departing += 1
            frames = np.linspace(track.frames[n], track.frames[n + 1], 21)
            ours = track(frames / FPS)
            squad = np.array([play(stored, "rotation", f) for f in frames])
            apart = max(apart, np.minimum(np.abs(ours - squad), np.abs(ours + squad)).max())
            assert_plays_as_3ds(track, stored, "rotation", rng)
    assert 0 < departing <= 0.02 * total and apart > 0.1


def test_keys_as_stored(tmp_path):
    rng = np.random.default_rng(7)
    stored = random_track(rng, "rotation", 9, flags=2)
    scene = read_bytes(tmp_path, write_3ds([{"tag": "object", "name": "Box",
                                             "tracks": {"rotation": stored}}]))
    track = scene.tracks["Box"]["rotation"]
    np.testing.assert_array_equal(track.frames, stored["frames"])
    np.testing.assert_array_equal(track.values, stored["values"])
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(track, name), stored[name])
        present = (track.key_flags >> FIELDS.index(name)) & 1
        np.testing.assert_array_equal(present, stored[name] != 0)
    assert track.flags == 2
    np.testing.assert_allclose(track.times, stored["frames"] / FPS)
    assert track.spline() is None         # a repeating track is not one spline


def test_scene_model_shape(tmp_path):
    rng = np.random.default_rng(3)
    nodes, objects = random_scene(rng, n_objects=3)
    nodes[1]["parent"], nodes[2]["parent"] = 0, 1
    nodes[2]["instance"] = "inst"
    scene = read_bytes(tmp_path, write_3ds(nodes, objects=objects))
    assert (scene.source, scene.up_axis, scene.handedness) == ("3ds", "Z", "right")
    assert [n.parent for n in scene.nodes[:3]] == [-1, 0, 1]
    assert scene.nodes[0].children == [1] and scene.nodes[1].children == [2]
    assert scene.nodes[2].extras["instance"] == "inst"
    np.testing.assert_array_equal(scene.nodes[0].pivot, nodes[0]["pivot"])
    assert [n.kind for n in scene.nodes] == ["mesh"] * 3 + ["camera", "target"]
    (title, channels), = scene.animations.items()
    assert title == "TESTSCENE"
    assert ("Cam", "roll") in channels and ("Cam", "fov") in channels
    assert ("Cam.target", "translation") in channels
    assert channels["Cam", "rotation"].interpolation == "LOOKAT"
    for (name, path), channel in channels.items():
        if channel.interpolation == "LOOKAT":
            continue
        track = scene.tracks[name][{"translation": "position"}.get(path, path)]
        if path == "fov":             # the track in degrees, the channel in radians
            assert channel.source is track and channel.axis == "horizontal"
            np.testing.assert_allclose(channel(channel.times), np.radians(track(track.times)),
                                       rtol=1e-15)
            continue
        assert channel is track
        out = channel(np.array([0.0, 0.1]))
        assert out.shape == (2, 4 if path == "rotation" else 1 if path in ("roll", "fov") else 3)
        made = channel.spline()
        if made is not None:
            spline, index = made
            np.testing.assert_array_equal(spline(channel.times)[index], channel(channel.times))


def test_one_key_tracks_are_constant(tmp_path):
    stored = {"frames": [10], "values": np.array([[1.0, 2.0, 3.0]], np.float32)}
    rot = {"frames": [10], "values": np.array([[np.pi / 2, 0, 0, 1]], np.float32)}
    scene = read_bytes(tmp_path, write_3ds([{"tag": "object", "name": "A",
                                             "tracks": {"position": stored, "rotation": rot}}]))
    np.testing.assert_array_equal(scene.tracks["A"]["position"]([0, 1, 99]), [[1, 2, 3]] * 3)
    q = scene.tracks["A"]["rotation"](5.0)[0]
    # the drawn orientation turns by -angle: x goes to -y
    np.testing.assert_allclose(quat_to_matrix(q) @ [1, 0, 0], [0, -1, 0], atol=1e-7)


def test_no_keyframer_is_a_scene_without_animation(tmp_path):
    scene = read_bytes(tmp_path, write_3ds([], objects=[("Box", "mesh"), ("Cam", "camera")],
                                           keyframer=False))
    assert scene.animations == {} and scene.tracks == {}
    assert [(n.name, n.kind) for n in scene.nodes] == [("Box", "mesh"), ("Cam", "camera")]


def test_fps(tmp_path):
    stored = random_track(np.random.default_rng(1), "position", 5)
    data = write_3ds([{"tag": "object", "name": "A", "tracks": {"position": stored}}])
    at30 = read_bytes(tmp_path, data)
    at25 = read_bytes(tmp_path, data, fps=25.0)
    f = np.linspace(stored["frames"][0], stored["frames"][-1], 7)
    np.testing.assert_allclose(at25.tracks["A"]["position"](f / 25),
                               at30.tracks["A"]["position"](f / 30), atol=1e-12)
    with pytest.raises(ValueError, match="fps"):
        read_bytes(tmp_path, data, fps=0.0)


# -- the real files -----------------------------------------------------------

def real_track_as_stored(track):
    stored = {"frames": track.frames, "values": track.values, "flags": track.flags}
    stored.update({name: getattr(track, name) for name in FIELDS})
    return stored


@pytest.mark.parametrize("name", ["CameraRollAnim.3ds", "CameraRollAnimWithChildObject.3ds",
                                  "RotatingCube.3DS", "TargetCameraAnim.3ds",
                                  "cube_with_diffuse_texture.3DS", "cubes_with_alpha.3DS",
                                  "test1.3ds"])
def test_real_files_play_as_seed_002(name):
    scene = read_3ds(legacy(name))
    rng = np.random.default_rng(0)
    for node, tracks in scene.tracks.items():
        for kind, track in tracks.items():
            assert_plays_as_3ds(track, real_track_as_stored(track), kind, rng)


@pytest.mark.parametrize("name", ["RotatingCube.3DS", "cube_with_diffuse_texture.3DS",
                                  "cube_with_specular_texture.3DS", "cubes_with_alpha.3DS",
                                  "test1.3ds", "CameraRollAnim.3ds", "TargetCameraAnim.3ds"])
def test_saved_mesh_matrices_are_the_tracks_at_the_current_frame(name):
    """Each root object's MESH_MATRIX (rows: the local axes, then the origin,
    saved at KFCURTIME's frame) is its position, rotation and scale tracks
    there: this settles the rotation's sign and order of composition."""
    scene = read_3ds(legacy(name))
    checked = 0
    for node in scene.nodes:
        matrix = node.extras.get("matrix")
        if matrix is None or node.parent != -1:
            continue
        t = scene.current_frame / FPS
        tracks = scene.tracks[node.name]
        drawn = quat_to_matrix(tracks["rotation"](t)[0]) * tracks["scale"](t)[0]
        np.testing.assert_allclose(drawn, matrix[:3].T, atol=2e-6)
        np.testing.assert_allclose(tracks["position"](t)[0], matrix[3], rtol=1e-6, atol=1e-5)
        checked += 1
    assert checked >= 1


def test_rotating_cube():
    scene = read_3ds(legacy("RotatingCube.3DS"))
    assert scene.current_frame == 180 and scene.segment == (0, 300)
    track = scene.tracks["Box01"]["rotation"]
    assert len(track.frames) == 182
    np.testing.assert_array_equal(track.frames, np.arange(182))
    np.testing.assert_allclose(track.values[146], [6.2292, 0, 0, -1], atol=1e-4)
    np.testing.assert_array_equal(track.values[181], [0, 0, 0, 0])
    # key 146 steps back by 0.054 rad (stored the long way), never a whole turn
    q = track(np.linspace(145, 146, 31) / FPS)
    dots = np.abs(np.sum(q[1:] * q[:-1], axis=1))
    assert np.all(dots > np.cos(0.2 / 30 / 2))


def test_target_camera_overshoots_and_eases():
    """Camera01's z keys 0, 85.4, 85.4, -90.3 at frames 0, 30, 60, 90: 3D Studio
    plays a TCB curve that overshoots 85.4 between the equal keys, where a
    linear importer holds it flat."""
    scene = read_3ds(legacy("TargetCameraAnim.3ds"))
    track = scene.tracks["Camera01"]["position"]
    np.testing.assert_array_equal(track.frames, [0, 30, 60, 90])
    np.testing.assert_allclose(track.values[:, 2], [0, 85.4181, 85.4181, -90.3], atol=0.05)
    z = track(np.arange(30, 61) / FPS)[:, 2]
    assert z.max() > track.values[1, 2] + 5.0       # overshoots the flat hold
    linear = np.interp(np.arange(30, 61), track.frames, track.values[:, 2])
    assert np.abs(z - linear).max() > 5.0
    assert scene.tracks["Camera01.target"]["position"].frames.tolist() == [0, 30, 60]


def test_camera_roll():
    scene = read_3ds(legacy("CameraRollAnim.3ds"))
    roll = scene.tracks["Camera01"]["roll"]
    np.testing.assert_allclose(roll.values[:, 0], [-0.053, -77.31], atol=0.005)
    np.testing.assert_array_equal(roll.frames, [0, 120])
    np.testing.assert_allclose(scene.tracks["Camera01"]["fov"](0.0), [[45.0]])
    assert [n.kind for n in scene.nodes] == ["mesh", "camera", "target"]


def test_child_of_camera_hangs_from_its_look_at():
    """Box02, a child of Camera01, is saved at frame 0 in the camera's
    look-at frame (-z along the view, +y up): its MESH_MATRIX is
    T(camera) R(look-at) T(Box02) R(Box02)."""
    scene = read_3ds(legacy("CameraRollAnimWithChildObject.3ds"))
    box = {n.name: n for n in scene.nodes}["Box02"]
    aim = scene.animations["MAXSCENE"][("Camera01", "rotation")]
    t = scene.current_frame / FPS
    camera = quat_to_matrix(aim(t)[0])
    drawn = camera @ quat_to_matrix(scene.tracks["Box02"]["rotation"](t)[0])
    np.testing.assert_allclose(drawn, box.extras["matrix"][:3].T, atol=1e-6)
    place = scene.tracks["Camera01"]["position"](t)[0] \
        + camera @ scene.tracks["Box02"]["position"](t)[0]
    np.testing.assert_allclose(place, box.extras["matrix"][3], atol=1e-4)
    look = scene.tracks["Camera01.target"]["position"](t)[0] - \
        scene.tracks["Camera01"]["position"](t)[0]
    np.testing.assert_allclose(camera[:, 2], -look / np.linalg.norm(look), atol=1e-12)


def test_camera_roll_turns_about_the_view(tmp_path):
    """Roll turns the camera about its back axis: right becomes
    cos(roll) right + sin(roll) up, as lib3ds's lib3ds_matrix_camera (a view
    matrix R_y(roll) M, y the view) and Assimp's 3DS importer
    (RotationZ(-roll) for a camera looking down +z) turn it.  No file here
    has a camera child at a non-zero roll to settle it."""
    flat = {"frames": [0], "values": np.array([[0.0]])}
    turned = {"frames": [0], "values": np.array([[30.0]])}
    at = {"frames": [0], "values": np.array([[0.0, 0.0, 0.0]])}
    to = {"frames": [0], "values": np.array([[0.0, 10.0, 0.0]])}
    frames = []
    for roll in (flat, turned):
        scene = read_bytes(tmp_path, write_3ds([
            {"tag": "camera", "name": "C", "tracks": {"position": at, "roll": roll}},
            {"tag": "target", "name": "C", "tracks": {"position": to}}]))
        frames.append(quat_to_matrix(scene.animations["TESTSCENE"][("C", "rotation")](0.0)[0]))
    np.testing.assert_allclose(frames[0], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-12)
    c, s = np.cos(np.radians(30)), np.sin(np.radians(30))
    np.testing.assert_allclose(frames[1][:, 2], frames[0][:, 2], atol=1e-12)   # same view
    np.testing.assert_allclose(frames[1][:, 0], [c, 0, s], atol=1e-12)        # right turns up


def test_child_of_camera():
    scene = read_3ds(legacy("CameraRollAnimWithChildObject.3ds"))
    names = [n.name for n in scene.nodes]
    box02 = scene.nodes[names.index("Box02")]
    assert scene.nodes[box02.parent].name == "Camera01"
    pos = scene.tracks["Box02"]["position"]
    assert len(pos.frames) == 119 and 114 not in pos.frames and 115 not in pos.frames
    rot = scene.tracks["Box02"]["rotation"]
    np.testing.assert_allclose(rot.values[0], [2.11, 0.565, -0.584, -0.582], atol=0.005)


def test_format_error_and_read_scene(tmp_path):
    from kbspline.formats import FormatError, read_scene
    assert issubclass(ThreeDSError, FormatError) and issubclass(ThreeDSError, ValueError)
    nodes, objects = random_scene(np.random.default_rng(5))
    (tmp_path / "a.3DS").write_bytes(write_3ds(nodes, objects=objects))
    scene = read_scene(tmp_path / "a.3DS")
    assert scene.source == "3ds" and [n.name for n in scene.nodes][-1] == "Cam.target"


def test_hide_track_toggles_at_each_key(tmp_path):
    hide = {"frames": [10, 20, 35], "values": np.zeros((3, 0))}
    scene = read_bytes(tmp_path, write_3ds([{"tag": "object", "name": "A",
                                             "tracks": {"hide": hide}}]))
    frames = np.array([0, 9.5, 10, 15, 20, 30, 35, 99])
    np.testing.assert_array_equal(scene.tracks["A"]["hide"](frames / FPS)[:, 0],
                                  [0, 0, 1, 1, 0, 0, 1, 1])
    assert ("A", "hide") not in scene.animations.get("TESTSCENE", {})


def test_to_motion_places_every_saved_mesh():
    """Through the scene model (Scene.to_motion, then forward kinematics):
    each object's world position and orientation at the saved frame is its
    MESH_MATRIX, the camera's child included."""
    from kbspline.motion.kinematics import world_positions
    for name in ("CameraRollAnimWithChildObject.3ds", "RotatingCube.3DS", "test1.3ds"):
        scene = read_3ds(legacy(name))
        motion = scene.to_motion(next(iter(scene.animations)), FPS) if scene.animations else None
        if motion is None or motion.num_frames <= scene.current_frame:
            continue
        positions, rotations = world_positions(motion)
        joints = [j.name for j in motion.joints]
        frame = int(scene.current_frame)
        for node in scene.nodes:
            matrix = node.extras.get("matrix")
            if matrix is None or node.name not in joints:
                continue
            j = joints.index(node.name)
            np.testing.assert_allclose(positions[frame, j], matrix[3], atol=1e-4)
            axes = matrix[:3].T / np.linalg.norm(matrix[:3].T, axis=0)
            np.testing.assert_allclose(quat_to_matrix(rotations[j, frame]), axes, atol=1e-5)


def keys_from_bytes(data, offset, width):
    """A track chunk's keys read with struct alone: (frames, values)."""
    import struct
    count = struct.unpack_from("<i", data, offset + 6 + 10)[0]
    pos, frames, values = offset + 6 + 14, [], []
    for _ in range(count):
        frame, flags = struct.unpack_from("<iH", data, pos)
        pos += 6 + 4 * bin(flags & 0x1F).count("1")
        frames.append(frame)
        values.append(struct.unpack_from(f"<{width}f", data, pos))
        pos += 4 * width
    return np.array(frames), np.array(values, dtype=np.float64)


@pytest.mark.parametrize("name,node,kind,tag,width,count", [
    ("RotatingCube.3DS", "Box01", "rotation", b"\x21\xb0", 4, 182),
    ("CameraRollAnimWithChildObject.3ds", "Box02", "position", b"\x20\xb0", 3, 119),
    ("TargetCameraAnim.3ds", "Camera01", "position", b"\x20\xb0", 3, 4)])
def test_real_keys_are_the_bytes(name, node, kind, tag, width, count):
    data = legacy(name).read_bytes()
    track = read_3ds(legacy(name)).tracks[node][kind]
    found = [i for i in range(len(data) - 20) if data[i:i + 2] == tag
             and int.from_bytes(data[i + 16:i + 20], "little") == count]
    frames, values = keys_from_bytes(data, found[0], width)
    np.testing.assert_array_equal(track.frames, frames)
    np.testing.assert_array_equal(track.values, values)
