"""Camera facts of 3DS and LightWave scenes: the field of view channel
(radians, which dimension it spans, the aspect) against the files' bytes
and text and the independent track/envelope oracles."""
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline.formats import read_3ds, read_lws
from kbspline.formats.camera import FieldOfView, convert_fov, vertical_fov

import lws_oracle
import threeds_oracle
from lws_writer import BEHAVIOURS, SHAPES, random_keys, write_lws
from threeds_writer import f32, random_track, write_3ds

LEGACY = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "legacy"
if not LEGACY.exists():
    LEGACY = pathlib.Path("/work/shared/data/legacy")


def legacy(name):
    path = LEGACY / name
    if not path.exists():
        pytest.skip(f"{name} is absent")
    return path


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 3.1), st.floats(0.1, 10.0),
       st.sampled_from(["horizontal", "vertical", "diagonal"]),
       st.sampled_from(["horizontal", "vertical", "diagonal"]))
def test_fov_conversions_are_the_pinhole_frame(fov, aspect, source, target):
    """A pinhole at distance 1 from a frame: tan of the half angles are the
    half extents, in the ratio aspect : 1 : hypot(aspect, 1)."""
    out = float(convert_fov(fov, aspect, source, target))
    half = {"horizontal": aspect, "vertical": 1.0, "diagonal": math.sqrt(aspect**2 + 1)}
    distance = half[source] / math.tan(fov / 2)     # the frame's distance from the pinhole
    assert math.isclose(out, 2 * math.atan2(half[target], distance), rel_tol=1e-12)
    back = float(convert_fov(out, aspect, target, source))
    assert math.isclose(back, fov, rel_tol=1e-12)


def test_fov_conversion_refuses_bad_arguments():
    with pytest.raises(ValueError, match="aspect"):
        convert_fov(1.0, 0.0, "horizontal", "vertical")
    with pytest.raises(ValueError, match="fov axis"):
        convert_fov(1.0, 1.0, "width", "vertical")
    for fov in (0.0, -0.5, math.pi, 4.0, float("nan")):      # no pinhole has these
        assert np.isnan(convert_fov([1.0, fov], 1.0, "horizontal", "vertical")[1])
        with pytest.raises(ValueError, match=r"camera 'C': field of view (reaches -?\d|undefined)"):
            vertical_fov([1.0, fov], 1.0, "horizontal", "C")


@pytest.mark.parametrize("name", ["TargetCameraAnim.3ds", "CameraRollAnim.3ds",
                                  "CameraRollAnimWithChildObject.3ds"])
def test_3ds_lens_and_fov_track_agree(name):
    """Every real file's camera: MDATA lens 53.33 mm and fov track 45 deg,
    2400 / lens (lib3ds's relation)."""
    scene = read_3ds(legacy(name))
    camera = next(n for n in scene.nodes if n.kind == "camera")
    facts = camera.extras["camera"]
    assert math.isclose(2400.0 / camera.extras["lens"], 45.0, rel_tol=1e-6)
    assert math.isclose(facts["fov"], math.pi / 4, rel_tol=1e-12)
    assert facts["fov_axis"] == "horizontal" and not facts["aspect_stated"]
    fov = next(iter(scene.animations.values()))[camera.name, "fov"]
    np.testing.assert_allclose(fov([0.0, 1.0, 5.0]), math.pi / 4, rtol=1e-12)


@pytest.mark.parametrize("flags", [0, 2, 3])
def test_3ds_fov_track_in_radians(tmp_path, flags):
    rng = np.random.default_rng([7, flags])
    for trial in range(4):
        stored = random_track(rng, "fov", int(rng.integers(2, 9)), flags=flags)
        stored["values"] = f32(np.abs(stored["values"]) + 5.0)
        path = tmp_path / "cam.3ds"
        path.write_bytes(write_3ds([
            {"tag": "camera", "name": "Cam", "tracks": {"fov": stored, "position": {
                "frames": [0], "values": [[0.0, 0.0, 0.0]]}}},
            {"tag": "target", "name": "Cam", "tracks": {"position": {
                "frames": [0], "values": [[1.0, 0.0, 0.0]]}}}], segment=(0, 200)))
        scene = read_3ds(path)
        fov = next(iter(scene.animations.values()))["Cam", "fov"]
        assert isinstance(fov, FieldOfView)
        frames = rng.uniform(-5, stored["frames"][-1] * 2.5, 40)
        want = [math.radians(threeds_oracle.play(stored, "fov", f)[0]) for f in frames]
        np.testing.assert_allclose(fov(frames / 30.0)[:, 0], want, rtol=1e-9)
        assert math.isclose(scene.nodes[0].extras["camera"]["fov"],    # at KFSEG's start
                            math.radians(threeds_oracle.play(stored, "fov", 0)[0]),
                            rel_tol=1e-9)


def test_3ds_camera_without_keyframer_takes_its_lens(tmp_path):
    path = tmp_path / "still.3ds"
    path.write_bytes(write_3ds([], objects=[("Cam", "camera")], keyframer=False))
    camera, = read_3ds(path).nodes
    assert math.isclose(camera.extras["camera"]["fov"], math.radians(2400.0 / 50.0))


def test_lws_real_cameras_zoom_32():
    """Zoom 3.2, 640 x 480, pixel aspect 1 in every real scene: vertical
    fov 2 atan(1 / 3.2), LightWave's 24 mm lens on its 15 mm film height."""
    for path in sorted(LEGACY.glob("*.lws")) or [legacy("move_x.lws")]:
        scene = read_lws(path)
        camera, = [n for n in scene.nodes if n.kind == "camera"]
        facts = camera.extras["camera"]
        assert math.isclose(facts["fov"], 2 * math.atan2(7.5, 24.0), rel_tol=1e-12), path
        assert facts["fov_axis"] == "vertical" and facts["aspect_stated"]
        assert facts["aspect"] == 640 / 480
        if "aperture" in facts:
            assert math.isclose(facts["aperture"], 15.0)


def _with_camera_lines(text, lines):
    """The scene's text with `lines` after its camera's pivot line."""
    out = []
    in_camera = False
    for line in text.splitlines():
        out.append(line)
        in_camera = in_camera or line.startswith("AddCamera")
        if in_camera and line.startswith(("PivotPosition", "PivotPoint")):
            out += lines
            in_camera = False
    return "\n".join(out) + "\n"


def _zoom_keys(rng, version):
    keys = random_keys(rng, version, sorted(set(rng.uniform(0.0, 3.0, 5).round(3).tolist())))
    return [(abs(value) + 1.0, *rest) for value, *rest in keys]


def _camera_item(rng, version):
    channels = {ch: (random_keys(rng, version, [0.0]), "constant", "constant")
                for ch in range(6)}
    return {"kind": "camera", "name": "Cam", "parent": -1, "channels": channels}


@pytest.mark.parametrize("version", [1, 2, 3, 5])
def test_lws_zoom_envelope_against_the_oracle(tmp_path, version):
    rng = np.random.default_rng([52, version])
    for trial in range(4):
        keys = _zoom_keys(rng, version)
        pre, post = (BEHAVIOURS[int(rng.integers(6))] for _ in range(2))
        if version < 3:
            pre, post = "constant", BEHAVIOURS[int(rng.integers(3))]
            lines = ["ZoomFactor (envelope)", "  1", f"  {len(keys)}"]
            for value, time, shape, t, c, b, *_ in keys:
                if version == 1:
                    lines += [f"  {value!r}", f"  {time * 30.0!r} {int(shape == 'linear')} "
                                                f"{t!r} {c!r} {b!r}"]
                else:
                    code = {"tcb": 2, "linear": 3, "stepped": 4}[shape]
                    lines += [f"  {value!r} {time!r} {code} {t!r} {c!r} {b!r}"]
            lines.append(f"EndBehavior {BEHAVIOURS.index(post)}")
        else:
            lines = ["ZoomFactor (envelope)", "{ Envelope", f"  {len(keys)}"]
            lines += ["  Key " + " ".join([repr(v), repr(t), str(SHAPES.index(s))] +
                                          [repr(p) for p in ps]) for v, t, s, *ps in keys]
            lines += [f"  Behaviors {BEHAVIOURS.index(pre)} {BEHAVIOURS.index(post)}", "}"]
        lines += ["FrameSize 720 486", "PixelAspect 0.9"]
        path = tmp_path / f"zoom{version}.lws"
        write_lws(path, [_camera_item(rng, version)], version)
        path.write_text(_with_camera_lines(path.read_text(), lines))
        scene = read_lws(path)
        facts = scene.nodes[0].extras["camera"]
        assert facts["aspect"] == 720 * 0.9 / 486 and facts["aspect_stated"]
        if len(keys) == 1:
            assert ("Cam", "fov") not in next(iter(scene.animations.values()), {})
            continue
        fov = next(iter(scene.animations.values()))["Cam", "fov"]
        times = np.linspace(-4.0, 7.0, 60)
        played = [(v, t, s, tuple(ps)) for v, t, s, *ps in keys]
        zooms = [lws_oracle.evaluate(played, pre, post, t) for t in times]
        want = [2 * math.atan2(1.0, z) if z > 0 else math.nan for z in zooms]
        np.testing.assert_allclose(fov(times)[:, 0], want, rtol=1e-9, atol=1e-12)
        wide = fov.across(times, "horizontal")[:, 0]
        np.testing.assert_allclose(np.tan(wide / 2), np.tan(np.array(want) / 2) * facts["aspect"],
                                   rtol=1e-9)


def test_lws_global_resolution_and_bad_zoom(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "global.lws"
    write_lws(path, [_camera_item(rng, 3)], 3)
    text = path.read_text()
    path.write_text(_with_camera_lines(text, ["ZoomFactor 2", "FrameSize 100 100",
                                              "UseGlobalResolution 1"])
                    + "GlobalFrameSize 1920 1080\nGlobalPixelAspect 1\n")
    facts = read_lws(path).nodes[0].extras["camera"]
    assert facts["aspect"] == 1920 / 1080 and math.isclose(facts["fov"], 2 * math.atan(0.5))
    path.write_text(_with_camera_lines(text, ["ZoomFactor -1"]))
    with pytest.raises(ValueError, match="line .*ZoomFactor must be positive"):
        read_lws(path)


@pytest.mark.parametrize("lines, message", [
    (["ZoomFactor abc"], "ZoomFactor holds a word"),
    (["ZoomFactor"], "ZoomFactor must have 1 numbers"),
    (["FrameSize 640"], "FrameSize must have 2 numbers"),
    (["FrameSize 640 0"], "FrameSize must be two positive"),
    (["PixelAspect -1"], "PixelAspect must be positive"),
    (["ZoomFactor (envelope)", "{ Envelope", "  1", "  Key -2 0 0 0 0 0 0 0 0", "}"],
     "envelope's keys must be positive"),
    (["ZoomFactor (envelope)", "{ Envelope", "  2", "  Key 2 0 0 0 0 0 0 0 0", "}"],
     "says 2 keys but holds 1"),
    (["ZoomFactor (envelope)", "junk"], "followed by '{ Envelope'"),
    (["ZoomFactor (envelope)"], "the file ends inside"),
])
def test_lws_bad_camera_lines_name_their_line(tmp_path, lines, message):
    path = tmp_path / "bad.lws"
    write_lws(path, [_camera_item(np.random.default_rng(1), 3)], 3)
    text = _with_camera_lines(path.read_text(), lines)
    if lines == ["ZoomFactor (envelope)"]:
        text = text[:text.index("ZoomFactor (envelope)")] + "ZoomFactor (envelope)\n"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"bad.lws: line [0-9]+: .*{message}"):
        read_lws(path)


def test_lws_camera_words_of_other_items_are_theirs(tmp_path):
    """An object's own ``ZoomFactor``-like line is not a camera's."""
    rng = np.random.default_rng(2)
    items = [{"kind": "null", "name": "N", "parent": -1,
              "channels": {ch: (random_keys(rng, 3, [0.0]), "constant", "constant")
                           for ch in range(9)}}, _camera_item(rng, 3)]
    path = tmp_path / "two.lws"
    write_lws(path, items, 3)
    text = path.read_text().replace("AddCamera", "FrameSize 10 1000\nAddCamera", 1)
    path.write_text(text)
    camera = read_lws(path).nodes[1]
    assert camera.extras["camera"]["aspect"] == 640 / 480
    assert not camera.extras["camera"]["aspect_stated"]


def test_lws_cameras_look_down_their_z():
    """Every real scene's camera sits at z = -6.38 with no rotation and
    frames the object at the origin: LightWave's camera looks down +z."""
    from kbspline.quaternion import quat_to_matrix
    files = sorted(LEGACY.glob("*.lws"))
    if not files:
        pytest.skip("the LightWave files are absent")
    for path in files:
        scene = read_lws(path)
        camera = next(n for n in scene.nodes if n.kind == "camera")
        thing = next(n for n in scene.nodes if n.kind == "mesh")
        toward = thing.translation - camera.translation
        view = quat_to_matrix(camera.rotation) @ np.asarray(camera.extras["camera"]["view"])
        assert view @ toward / np.linalg.norm(toward) > 0.98, path.name


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 47), st.floats(-3.1, 3.1), st.floats(-1.5, 1.5), st.floats(-3.1, 3.1))
def test_camera_turn_maps_the_glTF_frame_onto_the_tools(pick, yaw, pitch, roll):
    """For any signed permutation A (mirrors included) and any tool frame
    (view, up), the turn takes glTF's -z to A view and +y to A up."""
    import itertools
    from kbspline.formats.camera import camera_turn
    from kbspline.quaternion import quat_to_matrix
    perm = list(itertools.permutations(range(3)))[pick % 6]
    signs = [(-1) ** (pick // 6 >> k & 1) for k in range(3)]
    axes = np.zeros((3, 3))
    axes[range(3), perm] = signs
    c, s = math.cos, math.sin
    view = np.array([c(pitch) * c(yaw), c(pitch) * s(yaw), s(pitch)])
    side = np.cross(view, [0.0, 0.0, 1.0]) if abs(s(pitch)) < 0.999 else np.array([1.0, 0, 0])
    side /= np.linalg.norm(side)
    up0 = np.cross(side, view)
    up = c(roll) * up0 + s(roll) * np.cross(view, up0)
    frame = quat_to_matrix(camera_turn({"view": view, "up": up}, axes))
    np.testing.assert_allclose(frame @ [0, 0, -1.0], axes @ view, atol=1e-12)
    np.testing.assert_allclose(frame @ [0, 1.0, 0], axes @ up, atol=1e-12)
    assert math.isclose(np.linalg.det(frame), 1.0, rel_tol=1e-12)
