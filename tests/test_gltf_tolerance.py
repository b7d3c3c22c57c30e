"""glTF export within a tolerance: what a glTF viewer plays back (the
specification's sampler, transcribed in test_gltf.spec_play) stays within
the stated angle and distance of the splines at every time."""
import warnings

import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline, quat_from_axis_angle
from mocap import first_clip

gl = pytest.importorskip("pygltflib")
from kbspline.formats.gltf import DEFAULT_ANGLE_TOLERANCE, export_gltf  # noqa: E402
from kbspline.motion import motion_to_gltf  # noqa: E402
from test_gltf import angle, played, spec_play  # noqa: E402


@pytest.fixture
def splines():
    rng = np.random.default_rng(4)
    times = np.cumsum(rng.uniform(0.2, 0.6, 8))
    pos = PositionSpline(times, rng.normal(size=(2, 8, 3)), 0.2, 0.4, -0.1)
    axes = rng.normal(size=(2, 8, 3))
    quats = quat_from_axis_angle(axes / np.linalg.norm(axes, axis=-1, keepdims=True),
                                 rng.uniform(-2.5, 2.5, (2, 8)))
    return pos, RotationSpline(times, quats, timing="parabolic", ends="clamped")


def worst_playback(doc, node, path, spline, index, times):
    keys, output, interpolation = played(doc, node, path)
    if path == "rotation":
        return max(angle(spec_play(keys, output, interpolation, t)[[3, 0, 1, 2]],
                         spline(t)[index]) for t in times)
    return max(np.linalg.norm(spec_play(keys, output, interpolation, t) - spline(t)[index])
               for t in times)


@pytest.mark.parametrize("angle_tolerance", [None, 1e-3])
def test_rotations_play_back_within_the_angle(splines, angle_tolerance):
    pos, rot = splines
    report = export_gltf({"a": {"rotation": (rot, 0), "translation": (pos, 0)},
                          "b": {"rotation": (rot, 1)}}, angle_tolerance=angle_tolerance)
    tolerance = angle_tolerance or DEFAULT_ANGLE_TOLERANCE
    times = np.random.default_rng(0).uniform(*rot.domain, 3000)
    for node, index in (("a", 0), ("b", 1)):
        assert report.interpolation[node, "rotation"] == "LINEAR"
        assert 0 < report.max_error[node, "rotation"] <= tolerance
        assert worst_playback(report.gltf, node, "rotation", rot, index, times) <= tolerance
        keys, _, _ = played(report.gltf, node, "rotation")
        assert report.key_counts[node, "rotation"] == len(keys)
        assert np.all(np.isin(rot.breakpoints.astype(np.float32), keys.astype(np.float32)))
    # translations are LINEAR within the angle tolerance times their extent,
    # which every importer plays as written (issue 50)
    assert report.interpolation["a", "translation"] == "LINEAR"
    values = pos(pos.breakpoints)[0]
    extent = max(np.ptp(values, axis=0).max(), np.abs(values).max())
    assert report.tolerances["a", "translation"] == pytest.approx(tolerance * extent)
    assert (worst_playback(report.gltf, "a", "translation", pos, 0, times)
            <= tolerance * extent * (1 + 1e-6))
    assert not report.missed
    # exact cubics on request
    cubic = export_gltf({"a": {"translation": (pos, 0)}}, cubic=True)
    assert cubic.interpolation["a", "translation"] == "CUBICSPLINE"
    assert cubic.key_counts["a", "translation"] == 8 and not cubic.tolerances
    with pytest.raises(ValueError, match="cubic=True .* or distance_tolerance"):
        export_gltf({"a": {"translation": (pos, 0)}}, cubic=True, distance_tolerance=1.0)


def test_a_looser_tolerance_writes_fewer_keys(splines):
    _, rot = splines
    counts = [export_gltf({"a": {"rotation": (rot, 0)}}, angle_tolerance=tol)
              .key_counts["a", "rotation"] for tol in (1e-2, 1e-3, 1e-4)]
    assert counts[0] < counts[1] < counts[2]


def test_distance_tolerance_makes_translations_linear(splines):
    pos, _ = splines
    report = export_gltf({"a": {"translation": (pos, 1), "scale": (pos, 0)}},
                         distance_tolerance=1e-3)
    times = np.random.default_rng(1).uniform(*pos.domain, 3000)
    for path, index in (("translation", 1), ("scale", 0)):
        assert report.interpolation["a", path] == "LINEAR"
        assert report.max_error["a", path] <= 1e-3
        assert worst_playback(report.gltf, "a", path, pos, index, times) <= 1e-3


def test_ease_without_a_distance_tolerance_is_linear_and_close():
    pos = PositionSpline([0, 1, 2], [[0, 0, 0], [10, 0, 0], [10, 5, 0]], ease_from=0.8)
    report = export_gltf({"a": {"translation": pos}}, cubic=True)
    assert report.interpolation["a", "translation"] == "LINEAR"
    assert report.max_error["a", "translation"] <= 1e-6 * 10


def test_rate_still_bakes_at_a_fixed_rate(splines):
    _, rot = splines
    report = export_gltf({"a": {"rotation": (rot, 0)}}, rate=10.0)
    keys, _, _ = played(report.gltf, "a", "rotation")
    assert np.all(np.diff(keys) <= 0.1 + 1e-6)


@pytest.mark.parametrize("kwargs, words", [
    ({"rate": 30.0, "angle_tolerance": 1e-3}, "rate= .* or tolerances, not both"),
    ({"rate": 30.0, "distance_tolerance": 1e-3}, "rate= .* or tolerances, not both"),
    ({"angle_tolerance": 0.0}, "angle_tolerance must be a positive number"),
    ({"angle_tolerance": np.nan}, "angle_tolerance must be a positive number"),
    ({"distance_tolerance": -1.0}, "distance_tolerance must be a positive number"),
    ({"rate": np.inf}, "rate must be a positive number"),
])
def test_bad_tolerances(splines, kwargs, words):
    with pytest.raises(ValueError, match=words):
        export_gltf({"a": {"rotation": (splines[1], 0)}}, **kwargs)


def test_a_tolerance_beyond_reach_warns():
    # a turn of a radian in 10 ms needs keys closer than importers keep for 1e-9
    rot = RotationSpline([0, 0.01, 0.02], quat_from_axis_angle([1, 0, 0], [0, 1, 0]))
    with pytest.warns(UserWarning, match=r"misses the tolerance on 1 channel\(s\): a rotation "
                                         r"[0-9.]+ deg \(tolerance 5.73e-08\); .* 0.0005 s"):
        report = export_gltf({"a": {"rotation": rot}}, angle_tolerance=1e-9)
    assert report.max_error["a", "rotation"] > 1e-9
    assert list(report.missed) == [("a", "rotation")]
    # keys allowed closer together meet a tolerance the default spacing cannot
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        closer = export_gltf({"a": {"rotation": rot}}, angle_tolerance=1e-5,
                             min_key_spacing=1e-6)
    assert not closer.missed and closer.max_error["a", "rotation"] <= 1e-5
    with pytest.warns(UserWarning, match="misses the tolerance"):
        export_gltf({"a": {"rotation": rot}}, angle_tolerance=1e-5)


def test_clip_exports_within_the_default_tolerance(tmp_path):
    clip = first_clip()  # skips, saying where clips belong, without them
    clip.frames = clip.frames[:60]
    report = motion_to_gltf(clip, tmp_path / "clip.glb", scale=0.01)
    rotations = RotationSpline(clip.times, clip.rotations())
    doc = gl.GLTF2().load(str(tmp_path / "clip.glb"))
    times = np.random.default_rng(2).uniform(0, clip.times[-1], 300)
    for j, joint in enumerate(clip.joints):
        if clip.rotation_order(j):
            assert report.max_error[joint.name, "rotation"] <= DEFAULT_ANGLE_TOLERANCE
            assert (worst_playback(doc, joint.name, "rotation", rotations, j, times)
                    <= DEFAULT_ANGLE_TOLERANCE)
    frames = clip.num_frames
    assert all(count >= frames for (_, path), count in report.key_counts.items()
               if path == "rotation")
