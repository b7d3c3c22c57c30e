"""convert on extreme but legal scenes written by tests/lws_writer.py and
tests/threeds_writer.py: a bound on the keys written (a clear error, not
memory without bound), and extreme key values played back against the
readers within the tolerance by an independent lerp/slerp."""
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from kbspline.__main__ import main
from kbspline.formats.adaptive import MAX_KEYS
from kbspline.formats.convert import convert

import lws_writer
from test_scene_gltf import check_lws

ZERO = (0.0,) * 6


def repeating_lws(path, last_frame, post="repeat"):
    """A null whose x repeats a 2-frame motion (a jump at each period) up to LastFrame."""
    keys = [(0.0, 0.0, "tcb", *ZERO), (1.0, 1 / 30, "tcb", *ZERO), (0.3, 2 / 30, "tcb", *ZERO)]
    still = [(0.0, 0.0, "tcb", *ZERO)]
    items = [{"kind": "null", "name": "N", "parent": -1,
              "channels": {0: (keys, "constant", post), 1: (still, "constant", "constant"),
                           2: (still, "constant", "constant")}}]
    lws_writer.write_lws(path, items, 3)
    text = path.read_text().replace("FirstFrame 1", f"FirstFrame 1\nLastFrame {last_frame}")
    path.write_text(text)
    return path


@pytest.mark.parametrize("suffix", [".glb", ".usda"])
def test_a_repeat_over_a_huge_range_is_refused_by_name(tmp_path, suffix):
    # 10^6 frames of a 2-frame repeat: more than MAX_KEYS key times
    source = repeating_lws(tmp_path / "long.lws", 10 ** 6)
    out = tmp_path / ("out" + suffix)
    with pytest.raises(ValueError, match=rf"N.*translation.*MAX_KEYS = {MAX_KEYS}"):
        convert(source, out)
    assert not out.exists()


def test_the_cli_says_so_and_exits_1(tmp_path, capsys):
    source = repeating_lws(tmp_path / "long.lws", 10 ** 6)
    assert main(["convert", str(source), "-o", str(tmp_path / "out.glb")]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("kbspline convert:") and "MAX_KEYS" in line and "LastFrame" in line


def camera_3ds(path, frames, camera, target):
    """A 3DS camera with a target, position keys at `frames` (no TCB)."""
    from threeds_writer import write_3ds

    def track(values):
        return {"frames": np.array(frames), "values": np.array(values, float), "flags": 0}
    nodes = [{"tag": "camera", "name": "Cam", "tracks": {"position": track(camera)}},
             {"tag": "target", "name": "Cam", "tracks": {"position": track(target)}}]
    path.write_bytes(write_3ds(nodes, objects=[("Cam", "camera")], segment=(0, frames[-1])))
    return path


@pytest.mark.parametrize("suffix", [".glb", ".usda"])
def test_a_single_key_scene_converts(tmp_path, suffix):
    # one frame: glTF's report crashed (IndexError) on a channel of one key
    source = camera_3ds(tmp_path / "one.3ds", [0], [[1.0, 2.0, 3.0]], [[1.0, 7.0, 3.0]])
    report = convert(source, tmp_path / ("out" + suffix))
    assert report.max_error and max(report.max_error.values()) < 1e-6
    assert not report.missed


def test_a_look_at_flip_between_keys_is_keyed_as_a_jump_by_usd(tmp_path):
    """The camera passes right under its target: the look-at's roll flips
    half a turn at an instant that is no key time. USD's report left out
    every interval at the 0.5 ms floor (taking each for a jump) and said
    1.6e-7; then the keyer's jump flags said it and convert exited 1; now
    the keyer keys the flip as a jump (test_jumps_between_keys)."""
    source = camera_3ds(tmp_path / "flip.3ds", [0, 30], [[-1.0, 0, 0], [1.0, 0, 0]],
                        [[0.0, 0, 5], [0.0, 0, 5]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = convert(source, tmp_path / "out.usda")
    assert report.max_error["Cam", "rotation"] <= 1e-4 and not report.missed
    assert main(["convert", str(source), "-o", str(tmp_path / "again.usda")]) == 0


def test_a_field_of_view_of_0_is_refused_for_gltf(tmp_path):
    # glTF's schema needs yfov > 0: the file was written with a 0 before
    from threeds_writer import write_3ds
    track = {"frames": np.array([0, 30]), "values": np.array([[0.0], [10.0]]), "flags": 0}
    still = {"frames": np.array([0]), "values": np.array([[0.0, 0.0, 0.0]]), "flags": 0}
    aim = {"frames": np.array([0]), "values": np.array([[0.0, 5.0, 0.0]]), "flags": 0}
    nodes = [{"tag": "camera", "name": "Cam", "tracks": {"position": still, "fov": track}},
             {"tag": "target", "name": "Cam", "tracks": {"position": aim}}]
    source = tmp_path / "fov0.3ds"
    source.write_bytes(write_3ds(nodes, objects=[("Cam", "camera")], segment=(0, 30)))
    out = tmp_path / "out.glb"
    with pytest.raises(ValueError, match="camera 'Cam': field of view reaches 0 degrees"):
        convert(source, out)
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".glb", ".usda"])
@pytest.mark.parametrize("degrees", [[10.0, 0.0], [10.0, 185.0], [0.0], [180.0]])
def test_a_field_of_view_outside_0_to_180_is_refused(tmp_path, suffix, degrees):
    # a fov of 180 or more has no pinhole; USD's focal length divided by zero
    # beside its error, and glTF took a 185-degree fov as a narrow one
    if suffix == ".usda":
        pytest.importorskip("pxr")
    from threeds_writer import write_3ds
    frames = np.arange(len(degrees)) * 30
    track = {"frames": frames, "values": np.array(degrees)[:, None], "flags": 0}
    still = {"frames": np.array([0]), "values": np.array([[0.0, 0.0, 0.0]]), "flags": 0}
    aim = {"frames": np.array([0]), "values": np.array([[0.0, 5.0, 0.0]]), "flags": 0}
    nodes = [{"tag": "camera", "name": "Cam", "tracks": {"position": still, "fov": track}},
             {"tag": "target", "name": "Cam", "tracks": {"position": aim}}]
    source = tmp_path / "fov.3ds"
    source.write_bytes(write_3ds(nodes, objects=[("Cam", "camera")], segment=(0, 30)))
    out = tmp_path / ("out" + suffix)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)      # no NumPy warning beside it
        with pytest.raises(ValueError, match=r"camera 'Cam': field of view reaches "
                                             rf"{degrees[-1]:g} degrees; it must lie strictly"):
            convert(source, out)
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".glb", ".usda", ".bvh"])
def test_a_scene_without_animation_says_so(tmp_path, suffix):
    # a 3DS file without a keyframer reads as a scene with no animation; convert
    # said "animation must name one of []"
    from threeds_writer import write_3ds
    source = tmp_path / "still.3ds"
    source.write_bytes(write_3ds([], objects=[("Box", "mesh")], keyframer=False))
    with pytest.raises(ValueError, match="still.3ds: the scene holds no animation"):
        convert(source, tmp_path / ("out" + suffix))


@settings(max_examples=8, deadline=None)
@example(seed=83250, power=-6, gap=10 ** 5, count=3)   # float32 times 0.5 ms apart
@example(seed=0, power=-6, gap=3000, count=3)          # a range's ends stored outside it
@example(seed=0, power=-6, gap=30, count=2)
@given(st.integers(0, 2**32 - 1), st.sampled_from([-6, -3, 0, 3]),
       st.sampled_from([1, 30, 3000, 10 ** 5]), st.integers(1, 4))
def test_extreme_lightwave_envelopes_round_trip(tmp_path_factory, seed, power, gap, count):
    """Keys 1 to 10^5 frames apart, values of size 10^power, every span type
    (stepped only sometimes), a single key, turns of many revolutions:
    test_scene_gltf's independent glTF player against the LightWave oracle,
    the tolerance scaled with the values (float32 holds 7 digits)."""
    rng = np.random.default_rng(seed)
    # (2-D Bezier handles need care to stay legal: test_scene_gltf covers them)
    shapes = ["stepped"] if rng.random() < 0.3 else [s for s in lws_writer.SHAPES
                                                     if s != "bezier2d"]
    frames = np.cumsum(rng.integers(1, gap + 1, count)) - 1
    channels = {}
    for ch in range(9):
        size = 10.0 ** power if ch < 3 else (40.0 if ch < 6 else 1.0)
        keys = [(float(rng.normal(0, size) + (ch >= 6)), f / 30, str(rng.choice(shapes)),
                 *rng.uniform(-0.5, 0.5, 3), 0.0, 0.0, 0.0) for f in frames]
        channels[ch] = (keys, str(rng.choice(lws_writer.BEHAVIOURS)),
                        str(rng.choice(lws_writer.BEHAVIOURS)))
    items = [{"kind": "null", "name": "N", "parent": -1, "channels": channels,
              "pivot": (0.0, 0.0, 0.0)}]
    tmp_path = tmp_path_factory.mktemp("extreme")
    path = tmp_path / "extreme.lws"
    lws_writer.write_lws(path, items, 3)
    if count == 1:                    # one key: nothing moves
        with pytest.raises(ValueError, match="holds no animation"):
            convert(path, tmp_path / "out.glb")
        return
    check_lws(path, items, tmp_path, tolerance=max(1e-3, 1e-5 * 10.0 ** power))
