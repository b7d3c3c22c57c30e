"""3DS and LightWave scenes to glTF (issue 52): every node's translation,
rotation and scale, played by the glTF specification's LINEAR rules (a
vectorised transcription of test_gltf.spec_play, checked against it),
against the scene as the independent oracles play it (tests/lws_oracle.py,
tests/threeds_oracle.py, a look-at built with SciPy), in glTF's axes, at 50
points in every key interval and just either side of every key: within the
tolerance everywhere but inside a jump's pair of keys, or, where the motion
is too fast for keys MIN_KEY_SPACING apart, at that floor and reported."""
import pathlib
import warnings

import numpy as np
import pygltflib as gl
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

import lws_oracle
import threeds_oracle
from kbspline.formats.adaptive import MIN_KEY_SPACING
from kbspline.formats.convert import convert, scene_range
from kbspline.formats.lightwave import read_lws
from kbspline.formats.threeds import read_3ds
from lws_writer import random_keys, write_lws
from test_3ds import cumulative_segments
from test_gltf import accessor, spec_play
from threeds_writer import random_scene as random_3ds, write_3ds

LEGACY = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "legacy"
Z_UP = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])     # 3DS (x, y, z) -> glTF
MIRROR = np.diag([1.0, 1.0, -1.0])                         # LightWave -> glTF
TOL = 1e-3


def play(times, output, t):
    """glTF 2.0 LINEAR sampling (Appendix C) at times t, as test_gltf.spec_play."""
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    s = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0.0, 1.0)[:, None]
    v0, v1 = output[k], output[k + 1]
    if output.shape[1] == 3:
        return (1 - s) * v0 + s * v1
    dot = np.sum(v0 * v1, axis=1, keepdims=True)
    v1, dot = np.where(dot < 0, -v1, v1), np.abs(dot)
    theta = np.arccos(np.minimum(dot, 1.0))
    near = dot > 0.9995
    sin = np.where(near, 1.0, np.sin(theta))
    q = np.where(near, (1 - s) * v0 + s * v1,
                 (np.sin((1 - s) * theta) * v0 + np.sin(s * theta) * v1) / sin)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def sampler(doc, node, path):
    """(times, output) of the LINEAR channel driving node.path, or None."""
    index = [n.name for n in doc.nodes].index(node)
    for channel in doc.animations[0].channels:
        if channel.target.node == index and channel.target.path == path:
            found = doc.animations[0].samplers[channel.sampler]
            assert found.interpolation == "LINEAR"
            return accessor(doc, found.input)[:, 0], accessor(doc, found.output)
    return None


def distance(got, want, path):
    if path != "rotation":
        return np.linalg.norm(got - want, axis=1)
    chord = np.minimum(np.linalg.norm(got - want, axis=1), np.linalg.norm(got + want, axis=1))
    return 4 * np.arcsin(np.minimum(chord / 2, 1.0))


def check_channel(times, output, truth, path, tolerance, reported, offset=0.0, last=np.inf,
                  first=-np.inf):
    """Plays the channel densely against truth(t + offset) (glTF's
    conventions; glTF's times start at the scene's `offset`) within the
    range's `first` and `last` seconds (float32 can store an end a hair
    outside, where a behaviour has already jumped); returns how many
    intervals were jumps."""
    scene_truth = truth

    def truth(t):
        return scene_truth(t + offset)
    near = 1e-3 * np.diff(times).min()
    u = np.linspace(0, 1, 52)[1:-1]
    inner = times[:-1, None] + np.diff(times)[:, None] * u
    t = np.concatenate([inner.ravel(), times[:-1] + near, times[1:] - near, times])
    t = t[(t + offset >= first) & (t + offset <= last)]
    error = distance(play(times, output, t), truth(t), path)
    bad = np.unique(np.clip(np.searchsorted(times, t[error > tolerance]) - 1, 0,
                            len(times) - 2))
    jumps = 0
    for i in bad:
        a, b = times[i], times[i + 1]
        assert b - a < 2 * MIN_KEY_SPACING, (path, a, b, error.max())
        dense = truth(np.linspace(a, b, 2001))
        # the range's end too: a value can differ there alone (a stepped last
        # key with a repeat after it), and float32 stores the end past it
        edge = [x for x in (last - offset,) if a <= x <= b + 1e-6 * max(1.0, abs(b))]
        seen = truth(np.union1d(np.linspace(a, b, 2001), edge))
        step = distance(seen[1:], seen[:-1], path).max()
        if step > tolerance:          # a jump inside: the one place not met
            jumps += 1
            continue
        # too fast for the floor: said in the report; slack for float64
        # noise only (the keyer's bound counts float32 storage itself)
        assert reported or error[(t > a) & (t < b)].max() <= (1 + 1e-9) * tolerance, (path, a, b)
        if b - a <= 1.01 * MIN_KEY_SPACING:
            # no keys MIN_KEY_SPACING apart meet it: h^2 |a| / 8 > tol, with a
            # rotation's angular acceleration from rotation vectors (SciPy's log
            # map) seen from the interval's start (a window's longer slack piece
            # is taken only where even spacing misses too: test_keys_verified)
            h = b - a
            if path == "rotation":
                start = Rotation.from_quat(dense[0]).inv()
                steps = [(start * Rotation.from_quat(dense[i])).as_rotvec() for i in (1000, 2000)]
                bend = np.linalg.norm(steps[1] - 2 * steps[0]) / (h / 2) ** 2
            else:
                bend = np.linalg.norm(dense[0] - 2 * dense[1000] + dense[2000]) / (h / 2) ** 2
            assert MIN_KEY_SPACING ** 2 * bend / 8 > 0.5 * tolerance, (path, a, b)
    return jumps


def agrees(channel, oracle, times, path, rng, tolerance=1e-7):
    """The reader's channel is the oracle's at 40 random times of the range
    and either side of a few of the channel's key times (the dense check
    then plays glTF against the reader's channel, which is much faster)."""
    lo, hi = times[0], times[-1]
    keys = np.asarray(channel.times)[:8]
    t = np.concatenate([rng.uniform(lo, hi, 40), keys - 1e-6, keys + 1e-6])
    t = t[(t >= lo) & (t <= hi)]
    assert distance(channel(t), oracle(t), path).max() <= tolerance * max(
        1.0, np.abs(oracle(t)).max())


def in_gltf(path, values, axes):
    if path == "translation":
        return values @ axes.T
    if path == "scale":
        return values @ np.abs(axes).T
    w, v = values[:, :1], np.linalg.det(axes) * values[:, 1:] @ axes.T
    return np.hstack([v, w])                              # glTF's (x, y, z, w)


# -- LightWave ---------------------------------------------------------------

def lws_truth(item, path):
    """The item's path at times t from lws_oracle, in LightWave's axes and
    (w, x, y, z) rotations, None where the item does not animate it."""
    names = {"translation": (0, 1, 2), "rotation": (3, 4, 5), "scale": (6, 7, 8)}[path]
    channels = item["channels"]
    if not any(len(channels.get(ch, ([0],))[0]) > 1 for ch in names):
        return None

    def one(ch, t):
        if ch not in channels:
            return np.full(len(t), 1.0 if ch >= 6 else 0.0)
        keys, pre, post = channels[ch]
        keys = [k[:3] + (tuple(k[3:]),) for k in keys]
        return np.array([lws_oracle.evaluate(keys, pre, post, x) for x in t])

    def truth(t):
        values = np.stack([one(ch, t) for ch in names], axis=1)
        if path != "rotation":
            return values
        xyzw = Rotation.from_euler("YXZ", values).as_quat()       # Ry(H) Rx(P) Rz(B)
        return np.column_stack([xyzw[:, 3], xyzw[:, :3]])
    return truth


def check_lws(path, items, tmp_path, tolerance=TOL):
    out = tmp_path / (path.stem + ".glb")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = convert(path, out, angle_tolerance=tolerance, distance_tolerance=tolerance)
    doc = gl.GLTF2().load(str(out))
    scene = read_lws(path)
    first, last = scene_range(scene, next(iter(scene.animations)))
    offset = min(first, 0.0)
    jumps = 0
    rng = np.random.default_rng(0)
    channels = scene.animations[next(iter(scene.animations))]
    for item in items:
        for kind in ("translation", "rotation", "scale"):
            oracle = lws_truth(item, kind)
            found = sampler(doc, item["name"], kind)
            assert (found is None) == (oracle is None), (item["name"], kind)
            if oracle is None:
                continue
            channel = channels[item["name"], kind]
            agrees(channel, oracle, found[0] + offset, kind, rng)
            missed = (item["name"], kind) in report.missed
            jumps += check_channel(*found, lambda t: in_gltf(kind, channel(t), MIRROR), kind,
                                   tolerance, missed, offset, last, first)
            if missed:
                assert any("misses the tolerance" in str(w.message) for w in caught)
    return scene, doc, report, jumps


def every_span_item(name, spans, pre, post, continuity, rng):
    keys = [(0.0, 0.0, "tcb", 0, 0, 0, 0, 0, 0)]
    for k, span in enumerate(spans, start=1):
        params = (0.2, continuity, -0.3, 0.4, -0.2, 0.0) if span != "bezier2d" else \
            (-0.1, 0.3, 0.1, -0.2, 0.0, 0.0)
        keys.append((float(rng.normal(0, 1.5)), 0.4 * k, span, *params))
    channels = {ch: (keys, pre, post) for ch in range(6)}
    return {"kind": "null", "name": name, "parent": -1, "channels": channels,
            "pivot": (0.0, 0.0, 0.0)}


@pytest.mark.parametrize("continuity", [0.0, 0.9, -0.7])
def test_lightwave_every_span_and_behaviour(tmp_path, continuity):
    rng = np.random.default_rng(int(continuity * 10) + 52)
    spans = ["tcb", "hermite", "bezier", "linear", "stepped", "bezier2d", "tcb"]
    behaviours = ["reset", "constant", "repeat", "oscillate", "offset_repeat", "linear"]
    items = [every_span_item(f"n{pre}_{post}", spans[::1 if post % 2 else -1],
                             behaviours[pre], behaviours[post], continuity, rng)
             for pre in range(6) for post in (pre, (pre + 3) % 6)]
    items[1]["parent"], items[1]["pivot"] = 0, (0.3, -0.2, 0.5)
    path = tmp_path / "spans.lws"
    write_lws(path, items, 3)
    text = path.read_text().replace("FirstFrame 1", "FirstFrame -90\nLastFrame 200")
    path.write_text(text)
    scene, doc, report, jumps = check_lws(path, items, tmp_path)
    assert jumps > 0 and not report.missed
    times = sampler(doc, items[0]["name"], "translation")[0]
    assert scene_range(scene, "spans") == (-3.0, 200 / 30)   # FirstFrame .. LastFrame
    assert times[0] == 0.0 and times[-1] == pytest.approx(290 / 30, rel=1e-6)


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_lightwave_random_scenes(tmp_path_factory, seed):
    rng = np.random.default_rng(seed)
    items = []
    for n in range(3):
        channels = {}
        for ch in range(9):
            keys = random_keys(rng, 3)
            if ch >= 6:
                keys = [(1.0 + 0.2 * k[0],) + tuple(k[1:]) for k in keys]
            channels[ch] = (keys, *rng.choice(["reset", "constant", "repeat", "oscillate",
                                               "offset_repeat", "linear"], 2))
        items.append({"kind": "null", "name": f"n{n}", "parent": n - 1 if n else -1,
                      "channels": channels, "pivot": tuple(rng.normal(0, 1, 3))})
    tmp_path = tmp_path_factory.mktemp("lws")
    path = tmp_path / "random.lws"
    write_lws(path, items, 3)
    path.write_text(path.read_text().replace("FirstFrame 1", "FirstFrame -60\nLastFrame 150"))
    check_lws(path, items, tmp_path, tolerance=1e-2)


def legacy_items(scene):
    """The writer-style items of a real scene, from the keys its reader
    read (test_lws checks them against the file's text)."""
    items = []
    for node in scene.nodes:
        channels = {}
        for ch, name in enumerate(["X", "Y", "Z", "H", "P", "B", "SX", "SY", "SZ"]):
            env = scene.envelopes[node.name].get(name)
            if env is not None:       # LWSC 1-2 angles in degrees (TCB, linear, stepped)
                scale = np.pi / 180 if scene.version < 3 and 3 <= ch < 6 else 1.0
                keys = [(k.value * scale, k.time, k.span, *k.params) for k in env.keys]
                channels[ch] = (keys, env.pre, env.post)
        items.append({"name": node.name, "channels": channels})
    return items


@pytest.mark.skipif(not LEGACY.is_dir(), reason=f"needs the real scenes in {LEGACY}")
@pytest.mark.parametrize("name", sorted(p.name for p in LEGACY.glob("*.lws"))
                         if LEGACY.is_dir() else ["none"])
def test_lightwave_real_files(tmp_path, name):
    scene = read_lws(LEGACY / name)
    _, _, report, jumps = check_lws(LEGACY / name, legacy_items(scene), tmp_path)
    assert not report.missed
    assert (jumps > 0) == (name in ("move_x_post_reset.lws", "move_x_post_repeat.lws",
                                    "move_xz_stepped.lws"))


# -- 3D Studio ---------------------------------------------------------------

def threeds_truth(node, kind, tracks, read, fps=30.0):
    """node's path at times t from threeds_oracle, in 3DS axes, (w, x, y, z);
    `read` is the reader's track, whose segments kbspline plays as its
    cumulative cubic the oracle plays so too (test_3ds)."""
    track = tracks[kind]
    name = {"translation": "position"}.get(kind, kind)
    cumulative = cumulative_segments(read)

    def truth(t):
        values = [threeds_oracle.play(track, name, x * fps, cumulative) for x in t]
        values = np.array(values, dtype=np.float64).reshape(len(t), -1)
        if kind == "rotation":
            values = values * np.where(values[:, :1] < 0, -1.0, 1.0)
        return values
    return truth


def look_at_truth(camera, target, fps=30.0):
    """A camera's drawn orientation: local -z along the view, +y toward world
    Z (toward -X looking straight up or down), turned by roll about its back
    axis (Rz(roll), as lib3ds and Assimp turn it: docs/guide/formats.md)."""
    def truth(t):
        out = []
        for x in t:
            eye = threeds_oracle.play(camera["tracks"]["position"], "position", x * fps)
            goal = threeds_oracle.play(target["tracks"]["position"], "position", x * fps)
            look = (goal - eye) / np.linalg.norm(goal - eye)
            up = np.array([0.0, 0, 1]) if np.hypot(*look[:2]) > 0 else np.array([-1.0, 0, 0])
            aim, _ = Rotation.align_vectors([look, up], [[0, 0, -1], [0, 1, 0]],
                                            weights=[np.inf, 1])
            roll = threeds_oracle.play(camera["tracks"]["roll"], "roll", x * fps)[0] \
                if "roll" in camera["tracks"] else 0.0
            xyzw = (aim * Rotation.from_euler("z", np.radians(roll))).as_quat()
            out.append(np.concatenate([xyzw[3:], xyzw[:3]]))
        return np.array(out)
    return truth


def check_3ds(path, nodes, tmp_path, tolerance=TOL):
    out = tmp_path / (path.stem + ".glb")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        report = convert(path, out, angle_tolerance=tolerance, distance_tolerance=tolerance)
    doc = gl.GLTF2().load(str(out))
    scene = read_3ds(path)
    names = [n.name for n in scene.nodes]
    camera = next((n for n in nodes if n["tag"] == "camera"), None)
    target = next((n for n in nodes if n["tag"] == "target"), None)
    channels = scene.animations[next(iter(scene.animations))]
    rng = np.random.default_rng(1)
    checked = 0
    for node, name in zip(nodes, names):
        for kind in ("translation", "rotation", "scale"):
            found = sampler(doc, name, kind)
            if node is camera and kind == "rotation" and target is not None:
                oracle = look_at_truth(camera, target)
            elif {"translation": "position"}.get(kind, kind) in node["tracks"]:
                oracle = threeds_truth(node, kind, {
                    k: v for k, v in {**node["tracks"], "translation":
                                      node["tracks"].get("position")}.items() if v},
                    scene.tracks[name][{"translation": "position"}.get(kind, kind)])
            else:
                continue
            if found is None:
                continue         # a one-key track: the node's rest (test_3ds_convert)
            channel = channels[name, kind]
            agrees(channel, oracle, found[0], kind, rng, 1e-6)
            check_channel(*found, lambda t: in_gltf(kind, channel(t), Z_UP), kind,
                          tolerance, (name, kind) in report.missed)
            checked += 1
    return report, checked


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_3ds_eased_spinning_looping_cameras(tmp_path_factory, seed):
    rng = np.random.default_rng([52, 9, seed])
    nodes, objects = random_3ds(rng, n_objects=2)
    tmp_path = tmp_path_factory.mktemp("3ds")
    path = tmp_path / "random.3ds"
    path.write_bytes(write_3ds(nodes, objects=objects, segment=(0, 90)))
    report, checked = check_3ds(path, nodes, tmp_path)
    assert checked >= 4


@pytest.mark.skipif(not LEGACY.is_dir(), reason=f"needs the real scenes in {LEGACY}")
@pytest.mark.parametrize("name", sorted(p.name for p in LEGACY.glob("*.[3]*"))
                         if LEGACY.is_dir() else ["none"])
def test_3ds_real_files_meet_the_tolerance(tmp_path, name):
    scene = read_3ds(LEGACY / name)
    out = tmp_path / "real.glb"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="glTF gets no")
        if not scene.animations:
            pytest.skip("no keyframer animation")
        report = convert(LEGACY / name, out, angle_tolerance=TOL, distance_tolerance=TOL)
    assert not report.missed
    doc = gl.GLTF2().load(str(out))
    for (node, kind), channel in next(iter(scene.animations.values())).items():
        found = sampler(doc, node, kind) if kind in ("translation", "rotation", "scale") \
            else None
        if found is not None:   # the reader's track: test_3ds_review_files pins it to the file
            assert check_channel(*found, lambda t: in_gltf(kind, channel(t), Z_UP), kind,
                                 TOL, False) == 0


def test_vectorised_player_is_the_specifications():
    rng = np.random.default_rng(3)
    times = np.cumsum(rng.uniform(0.01, 0.3, 12))
    for width in (3, 4):
        output = rng.normal(size=(12, width))
        if width == 4:
            output /= np.linalg.norm(output, axis=1, keepdims=True)
            output[5] = output[4] + 1e-4
            output[5] /= np.linalg.norm(output[5])
        t = rng.uniform(times[0] - 0.1, times[-1] + 0.1, 200)
        want = np.array([spec_play(times, output, "LINEAR", x) for x in t])
        np.testing.assert_allclose(play(times, output, t), want, atol=1e-12)


def test_cli_exits_0_within_the_tolerance(tmp_path):
    from kbspline.__main__ import main
    flat = [(0.0, 0.0, "tcb", 0, 0, 0, 0, 0, 0)]
    steps = flat + [(1.0, 0.5, "stepped", 0, 0, 0, 0, 0, 0), (2.0, 1.0, "linear", 0, 0, 0, 0, 0, 0),
                    (0.5, 1.5, "tcb", 0, 0.8, 0, 0, 0, 0)]
    items = [{"kind": "null", "name": "box", "parent": -1, "pivot": (0.0, 0.0, 0.0),
              "channels": {ch: ([(float(ch >= 6),) + flat[0][1:]], "constant", "constant")
                           for ch in range(9)}}]
    items[0]["channels"].update({0: (steps, "constant", "reset"), 4: (steps, "repeat", "oscillate")})
    path = tmp_path / "steps.lws"
    write_lws(path, items, 3)
    out = tmp_path / "steps.glb"
    assert main(["convert", str(path), "-o", str(out), "--angle-tolerance", "0.01",
                 "--distance-tolerance", "0.001"]) == 0
    check_lws(path, items, tmp_path)


def test_export_gltf_takes_scene_channels_and_rest_transforms():
    from kbspline.formats.gltf import export_gltf
    from kbspline.formats.lightwave import LwsChannel
    from kbspline.formats.lightwave_envelope import Envelope
    zero = (0.0,) * 6
    x = Envelope([(0.0, 0.0, "tcb", zero), (2.0, 1.0, "stepped", zero),
                  (2.0, 2.0, "linear", zero)], "constant", "repeat")
    still = Envelope([(0.0, 0.0, "tcb", zero)])
    channel = LwsChannel("translation", (x, still, still), False)
    report = export_gltf({"a": {"translation": channel}}, distance_tolerance=1e-3,
                         channel_range=(0.0, 2.5),
                         rest={"a": {"rotation": [0, 0, 0.6, 0.8], "scale": [2, 2, 2],
                                     "translation": [9, 9, 9]}})
    times, output = sampler(report.gltf, "a", "translation")
    # 0 before the step at 1 s, 2 up to 2 s, then the repeat starts again at 0
    np.testing.assert_allclose(times, [0, 1 - MIN_KEY_SPACING, 1, 2, 2 + MIN_KEY_SPACING,
                                       2.5], rtol=1e-6)
    np.testing.assert_allclose(output[:, 0], [0, 0, 2, 2, 0, 0])
    node = report.gltf.nodes[0]
    assert node.translation is None and node.rotation == [0, 0, 0.6, 0.8]
    assert node.scale == [2, 2, 2] and report.max_error["a", "translation"] < 1e-6
    for kwargs, error, words in [
            (dict(channel_range=(1.0, 0.0)), ValueError, "channel_range"),
            (dict(channel_range="ab"), TypeError, "channel_range"),
            (dict(rest={"a": {"rotation": [1, 0]}}), ValueError, r"rest\['a'\]\['rotation'\]"),
            (dict(rate=30.0), ValueError, "rate= bakes splines")]:
        with pytest.raises(error, match=words):
            export_gltf({"a": {"translation": channel}}, **kwargs)
