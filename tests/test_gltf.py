"""glTF export: the files load back (pygltflib), pass its validator, and
played back by the glTF 2.0 specification's own interpolation (transcribed
here, one time at a time) reproduce the splines: cubic channels up to
float32 storage, baked rotations within the error the export reports."""
import math

import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline, quat_from_axis_angle

gl = pytest.importorskip("pygltflib")
from pygltflib.validator import validate  # noqa: E402
from kbspline.formats.gltf import export_gltf  # noqa: E402
from kbspline.formats.gltf.write import _Track  # noqa: E402


# -- the specification's playback (glTF 2.0, Appendix C: interpolation) -----

def accessor(doc, index):
    acc = doc.accessors[index]
    view = doc.bufferViews[acc.bufferView]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc.type]
    assert acc.componentType == gl.FLOAT
    data = np.frombuffer(doc.binary_blob(), "<f4", acc.count * width,
                         view.byteOffset + (acc.byteOffset or 0))
    return data.astype(np.float64).reshape(acc.count, width)


def spec_play(times, output, interpolation, t):
    """The value of a sampler at time t, as the specification defines it."""
    if t <= times[0]:
        k, s = 0, 0.0
    elif t >= times[-1]:
        k, s = len(times) - 2, 1.0
    else:
        k = int(np.searchsorted(times, t, side="right")) - 1
        s = (t - times[k]) / (times[k + 1] - times[k])
    td = times[k + 1] - times[k]
    if interpolation == "CUBICSPLINE":
        v0, b0 = output[3 * k + 1], output[3 * k + 2]
        a1, v1 = output[3 * (k + 1)], output[3 * (k + 1) + 1]
        return ((2 * s**3 - 3 * s**2 + 1) * v0 + td * (s**3 - 2 * s**2 + s) * b0
                + (-2 * s**3 + 3 * s**2) * v1 + td * (s**3 - s**2) * a1)
    v0, v1 = output[k], output[k + 1]
    if len(v0) == 3:
        return (1 - s) * v0 + s * v1
    dot = float(np.dot(v0, v1))
    if dot < 0:                     # the specification's slerp takes the short way
        v1, dot = -v1, -dot
    if dot > 0.9995:
        q = (1 - s) * v0 + s * v1
    else:
        theta = math.acos(dot)
        q = (math.sin((1 - s) * theta) * v0 + math.sin(s * theta) * v1) / math.sin(theta)
    return q / np.linalg.norm(q)


def played(doc, node_name, path):
    """(times, output, interpolation) of the channel driving node.path."""
    node = [n.name for n in doc.nodes].index(node_name)
    (channel,) = [c for c in doc.animations[0].channels
                  if c.target.node == node and c.target.path == path]
    sampler = doc.animations[0].samplers[channel.sampler]
    return accessor(doc, sampler.input)[:, 0], accessor(doc, sampler.output), \
        sampler.interpolation


def angle(p, q):
    """The rotation between unit quaternions p and q (the chord form: acos
    of a dot product near 1 loses half the digits)."""
    chord = min(np.linalg.norm(p - q), np.linalg.norm(p + q))
    return 4 * math.asin(min(1.0, chord / 2))


# -- fixtures ----------------------------------------------------------------

@pytest.fixture
def splines():
    rng = np.random.default_rng(11)
    times = np.cumsum(rng.uniform(0.2, 0.6, 9))
    pos = PositionSpline(times, rng.normal(size=(2, 9, 3)), 0.2, 0.4, -0.1)
    axes = rng.normal(size=(3, 9, 3))
    quats = quat_from_axis_angle(axes / np.linalg.norm(axes, axis=-1, keepdims=True),
                                 rng.uniform(-2.5, 2.5, (3, 9)))
    return pos, RotationSpline(times, quats, tension=0.1, continuity=0.2)


def sample_times(spline, n=400, seed=0):
    lo, hi = spline.domain
    return np.random.default_rng(seed).uniform(lo, hi, n)


@pytest.mark.filterwarnings("ignore:pygltf.utils.validator is a provisional")
@pytest.mark.parametrize("suffix", [".gltf", ".glb"])
def test_round_trip(tmp_path, splines, suffix):
    pos, rot = splines
    channels = {"hips": {"translation": (pos, 0), "rotation": (rot, 0)},
                "knee": {"rotation": (rot, 2), "scale": (pos, 1)}}
    report = export_gltf(channels, tmp_path / f"clip{suffix}", rate=60.0,
                         parents={"knee": "hips", "hips": "root"})
    doc = gl.GLTF2().load(str(tmp_path / f"clip{suffix}"))
    doc.convert_buffers(gl.BufferFormat.BINARYBLOB)  # .gltf embeds it as a data URI
    validate(doc)  # raises on an invalid document
    assert [n.name for n in doc.nodes] == ["hips", "knee", "root"]
    assert doc.scenes[doc.scene].nodes == [2] and doc.nodes[2].children == [0]
    assert doc.nodes[0].children == [1] and not doc.nodes[1].children

    for node, path, spline, index in [("hips", "translation", pos, 0),
                                      ("knee", "scale", pos, 1)]:
        times, output, interpolation = played(doc, node, path)
        assert interpolation == "CUBICSPLINE" == report.interpolation[node, path]
        assert np.allclose(times, spline.breakpoints, rtol=0, atol=1e-6)
        assert len(output) == 3 * len(times)
        for t in sample_times(spline):
            np.testing.assert_allclose(spec_play(times, output, interpolation, t),
                                       spline(t)[index], atol=2e-5)
        assert report.max_error[node, path] < 2e-5

    for node, index in [("hips", 0), ("knee", 2)]:
        times, output, interpolation = played(doc, node, "rotation")
        assert interpolation == "LINEAR" == report.interpolation[node, "rotation"]
        assert np.all(np.isin(rot.breakpoints.astype(np.float32), times.astype(np.float32)))
        assert np.all(np.diff(times) <= 1 / 60 + 1e-6)
        assert np.allclose(np.linalg.norm(output, axis=1), 1, atol=1e-6)
        assert np.all(np.sum(output[1:] * output[:-1], axis=1) > 0)  # the short way round
        wxyz = output[:, [3, 0, 1, 2]]
        for t, q in zip(times, wxyz):
            assert angle(q, rot(t)[index]) < 5e-6  # float32 time and value
        reported = report.max_error[node, "rotation"]
        worst = max(angle(spec_play(times, output, "LINEAR", t)[[3, 0, 1, 2]], rot(t)[index])
                    for t in sample_times(rot, 2000))
        assert 0 < worst <= 1.05 * reported + 1e-6
        assert reported < 0.02  # fast random turns: up to 10 rad/s


def test_cubic_rows_are_exact_before_float32(splines):
    # Before storage, glTF's cubic formula reproduces the spline to rounding:
    # every end condition, and C1 breaks (continuity) with two tangents.
    rng = np.random.default_rng(5)
    times = np.cumsum(rng.uniform(0.1, 2.0, 7))
    values = rng.normal(size=(7, 3)) * 100
    values[-1] = values[0]
    for ends in ("natural", "phantom", "reflect", "clamped", "closed"):
        spline = PositionSpline(times, values, 0.3, -0.6, 0.2, ends=ends)
        track = _Track("n", "translation", spline)
        rows = track._hermite_rows().reshape(-1, 3)
        for t in sample_times(spline, 200):
            np.testing.assert_allclose(spec_play(track.knots, rows, "CUBICSPLINE", t),
                                       spline(t), rtol=0, atol=1e-10)


def test_error_falls_with_rate_and_ease_is_baked(splines):
    pos, rot = splines
    coarse = export_gltf({"a": {"rotation": (rot, 1)}}, rate=15.0).max_error["a", "rotation"]
    fine = export_gltf({"a": {"rotation": (rot, 1)}}, rate=120.0).max_error["a", "rotation"]
    assert fine < coarse / 20  # second order: (120 / 15)^2 = 64 for smooth stretches
    eased = PositionSpline(pos.breakpoints, np.random.default_rng(2).normal(size=(9, 3)),
                           ease_from=0.5, ease_to=0.5)
    report = export_gltf({"a": {"translation": eased}}, rate=240.0)
    assert report.interpolation["a", "translation"] == "LINEAR"
    doc = report.gltf
    times, output, interpolation = played(doc, "a", "translation")
    worst = max(np.linalg.norm(spec_play(times, output, interpolation, t) - eased(t))
                for t in sample_times(eased))
    assert worst <= 1.05 * report.max_error["a", "translation"] + 1e-6


def test_time_offset():
    # Key times near 1e4 s: float32 would keep about a millisecond of them;
    # shifted to start at zero they keep their precision.
    times = 1e4 + np.array([0.0, 0.4, 1.1, 1.5, 2.3])
    late = PositionSpline(times, np.random.default_rng(4).normal(size=(5, 3)))
    with pytest.raises(ValueError, match="time_offset"):
        export_gltf({"a": {"translation": late}}, time_offset=2e4)
    doc = export_gltf({"a": {"translation": late}}, time_offset=1e4, cubic=True).gltf
    stored, output, _ = played(doc, "a", "translation")
    assert stored[0] == 0.0
    for t in sample_times(late):
        np.testing.assert_allclose(spec_play(stored, output, "CUBICSPLINE", t - 1e4),
                                   late(t), atol=2e-5)


@pytest.mark.parametrize("channels, kwargs, error, words", [
    ({}, {}, TypeError, "non-empty"),
    ({"a": {}}, {}, ValueError, "no spline"),
    ({"a": {"position": 0}}, {}, ValueError, "path must be one of"),
    ({"a": {"rotation": "pos"}}, {}, TypeError, "must be a RotationSpline"),
    ({"a": {"translation": "pos"}}, {}, ValueError, r"index \(\) does not pick"),
    ({"a": {"translation": ("pos", 5)}}, {}, ValueError, "does not pick"),
    ({"a": {"translation": ("flat", ())}}, {}, ValueError, "D = 3"),
    ({"a": {"translation": ("pos", 0)}}, {"rate": 0}, ValueError, "rate"),
    ({"a": {"translation": ("pos", 0)}}, {"parents": {"a": "b", "b": "a"}}, ValueError,
     "cycle"),
    ({"a": {"translation": ("pos", 0)}}, {"parents": {"a": "a"}}, ValueError,
     "cycle through 'a'"),
    ({"a": {"translation": ("pos", 0)}}, {"parents": {"a": "b", "b": "c", "c": "b"}},
     ValueError, "cycle through '[bc]'"),
    ({"a": {"translation": ("pos", 0)}}, {"path": "x.fbx"}, ValueError, ".gltf or .glb"),
])
def test_bad_arguments(splines, tmp_path, channels, kwargs, error, words):
    pos, rot = splines
    objects = {"pos": pos, "rot": rot, "flat": PositionSpline(None, np.zeros((4, 2)))}

    def resolve(entry):
        if isinstance(entry, tuple):
            return (objects.get(entry[0], entry[0]), entry[1])
        return objects.get(entry, entry)

    channels = {n: {p: resolve(e) for p, e in c.items()} for n, c in channels.items()}
    if "path" in kwargs:
        kwargs = dict(kwargs, path=tmp_path / kwargs["path"])
    with pytest.raises(error, match=words):
        export_gltf(channels, **kwargs)


def test_baked_quaternions_take_the_short_way():
    # Squad's output is already sign-continuous; keys fed in with flipped
    # signs (as SciPy or a BVH importer may give) must be too once written.
    from kbspline.formats.gltf.write import _shortest_path
    q = quat_from_axis_angle([0, 0, 1], np.linspace(0, 3, 12))
    signs = np.array([1, -1, -1, 1, -1, 1, 1, 1, -1, -1, 1, -1])[:, None]
    fixed = _shortest_path(q * signs)
    assert np.all(np.sum(fixed[1:] * fixed[:-1], axis=1) > 0)
    assert np.allclose(fixed, q)  # the first key keeps its sign, the rest follow


@pytest.mark.parametrize("channel, offsets, words", [
    # a cubic key whose tangent overflows float32 (the values themselves fit)
    (lambda: PositionSpline([0, 1, 2], [[0, 0, 0], [3e38, 0, 0], [0, 0, 0]]), {},
     r"\['translation'\]: the key .* at time 0.0 \(row 0\)"),
    # a LINEAR sample (ease) beyond float32
    (lambda: PositionSpline([0, 1], [[0, 0, 0], [1e39, 0, 0]], ease_from=0.5), {},
     r"the sample at time 1.0 \(row 1\)"),
    # a key time beyond float32
    (lambda: PositionSpline([0, 1e39], [[0, 0, 0], [1, 1, 1]]), {}, r"time 1e\+39 \(row 1\)"),
    (lambda: PositionSpline([0, 1], [[0, 0, 0], [1, 1, 1]]), {"b": [0, 1e39, 0]},
     r"offsets\['b'\]"),
])
def test_non_finite_float32_is_refused(channel, offsets, words):
    """Finite float64 samples that are inf as glTF's float32 used to be
    written into the accessors; now a ValueError names the channel and row."""
    with pytest.raises(ValueError, match=words) as exc:
        export_gltf({"a": {"translation": channel()}}, offsets=offsets, cubic=True)
    assert "float32" in str(exc.value)


def test_spins_play_back_every_turn(tmp_path):
    """A wheel turning five times between two keys a second apart, baked at
    2 samples a second: keys go in at most a quarter turn apart, so glTF's
    shortest-path slerp (played here by its own rule, not the exporter's)
    turns five times too."""
    import pygltflib
    wheel = RotationSpline.from_relative([0.0, 1.0, 2.0], [[0, 0, 1]] * 3,
                                         [0.0, 10 * np.pi, 10 * np.pi])
    export_gltf({"wheel": {"rotation": wheel}}, tmp_path / "wheel.glb", rate=2.0)
    doc = pygltflib.GLTF2().load(str(tmp_path / "wheel.glb"))
    blob = doc.binary_blob()

    def accessor(i, width):
        view = doc.bufferViews[doc.accessors[i].bufferView]
        data = np.frombuffer(blob, "<f4", view.byteLength // 4, view.byteOffset)
        return data.reshape(-1, width) if width > 1 else data

    sampler = doc.animations[0].samplers[0]
    times = accessor(sampler.input, 1).astype(float)
    xyzw = accessor(sampler.output, 4).astype(float)
    assert len(times) >= 41                     # 10 turns: at least 40 quarter turns
    # glTF 2.0's slerp between neighbours: the shorter way (dot made >= 0)
    t = np.linspace(0.0, 2.0, 4001)
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    u = (t - times[k]) / (times[k + 1] - times[k])
    a, b = xyzw[k], xyzw[k + 1] * np.sign(np.sum(xyzw[k] * xyzw[k + 1], axis=-1))[:, None]
    theta = np.arccos(np.clip(np.sum(a * b, axis=-1), -1, 1))[:, None]
    played = (np.sin((1 - u[:, None]) * theta) * a + np.sin(u[:, None] * theta) * b) / np.sin(theta)
    angle = 2 * np.arctan2(played[:, 2], played[:, 3])          # about z
    turned = np.sum(np.abs(np.diff(np.unwrap(angle))))
    assert turned == pytest.approx(20 * np.pi, rel=1e-5)
    want = wheel(t)[:, [1, 2, 3, 0]]
    error = 2 * np.arccos(np.clip(np.abs(np.sum(played * want, axis=-1)), 0, 1))
    assert error.max() < 1e-3
