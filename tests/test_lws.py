"""LightWave scenes: envelopes against an independent transcription of the
SDK's evaluation (tests/lws_oracle.py) on generated files of every LWSC
version, span type and behaviour, and on the real files when present."""
import math
import pathlib
import re

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import lws_oracle
from lws_writer import close, cycle_times, random_scene, write_lws
from kbspline.formats.lightwave import CHANNELS, heading_pitch_bank, read_lws
from kbspline.formats.lightwave_envelope import Envelope

LEGACY = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "legacy"
REAL = sorted(LEGACY.glob("*.lws")) if LEGACY.is_dir() else []
MISSING = (f"needs the LightWave scenes in {LEGACY} (the project's shared data, "
           "checked out beside the repository as ../shared)")
needs_real = pytest.mark.skipif(not REAL, reason=MISSING)


def _check_envelope(env, keys, pre, post, times):
    got = env(np.array(times))
    for t, value in zip(times, got):
        want = lws_oracle.evaluate(keys, pre, post, t)
        assert close(value, want), (t, value, want, keys, pre, post)


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("seed", range(6))
def test_generated_scenes_play_as_the_oracle(tmp_path, version, seed):
    rng = np.random.default_rng(1000 * version + seed)
    items = random_scene(rng, version, n_items=5)
    path = tmp_path / f"gen{version}_{seed}.lws"
    write_lws(path, items, version)
    scene = read_lws(path)
    assert scene.version == version and scene.source == "lws"
    assert [n.name for n in scene.nodes] == [it["name"] for it in items]
    assert [n.parent for n in scene.nodes] == [it["parent"] for it in items]
    for node, item in zip(scene.nodes, items):
        assert node.kind == item["kind"]
        np.testing.assert_array_equal(node.pivot, item["pivot"])
        envelopes = scene.envelopes[item["name"]]
        assert sorted(envelopes) == sorted(CHANNELS[ch] for ch in item["channels"])
        for ch, (keys, pre, post) in item["channels"].items():
            env = envelopes[CHANNELS[ch]]
            assert (env.pre, env.post) == (pre, post)
            assert [k.value for k in env.keys] == [k[0] for k in keys]
            _check_envelope(env, [k[:3] + (tuple(k[3:]),) for k in keys], pre, post,
                            cycle_times(keys, rng))


def test_children_list_their_parents(tmp_path):
    rng = np.random.default_rng(7)
    items = random_scene(rng, 5, n_items=8)
    write_lws(tmp_path / "s.lws", items, 5)
    nodes = read_lws(tmp_path / "s.lws").nodes
    for n, node in enumerate(nodes):
        assert node.children == [m for m, other in enumerate(nodes) if other.parent == n]


def _key(value, time, shape="tcb", *params):
    params = tuple(params) + (0.0,) * (6 - len(params))
    return (value, time, shape, params)


@pytest.mark.parametrize("behaviour", lws_oracle.BEHAVIOURS)
@pytest.mark.parametrize("shape", ["tcb", "hermite", "bezier", "linear", "stepped",
                                   "bezier2d"])
def test_every_behaviour_and_shape_three_cycles_out(behaviour, shape):
    # keys far from time 0, so that a behaviour measured from 0 (the SDK
    # sample's range()) would differ from one measured from the first key
    keys = [_key(1.0, 2.5, "tcb", 0.3, -0.2, 0.1, 0.7, -0.4),
            _key(-2.0, 3.1, shape, -0.3, 1.5, 0.2, 0.9, 1.2),
            _key(0.5, 4.2, shape, -0.4, -0.8, 0.3, -1.1, 0.6)]
    env = Envelope(keys, behaviour, behaviour)
    times = list(np.linspace(2.5 - 3 * 1.7, 4.2 + 3 * 1.7, 397))
    _check_envelope(env, keys, behaviour, behaviour, times)


def test_repeat_counts_cycles_from_the_first_key():
    # an exact fact: repeat shifts by whole cycles of the keys' range
    keys = [_key(0.0, 1.0), _key(3.0, 1.5), _key(1.0, 3.0)]
    env = Envelope(keys, "repeat", "offset_repeat")
    t = np.array([1.2, 1.9, 2.6])
    np.testing.assert_allclose(env(t - 2.0), env(t), rtol=0, atol=1e-12)
    np.testing.assert_allclose(env(t + 4.0), env(t) + 2 * (1.0 - 0.0), rtol=0, atol=1e-12)


def test_oscillate_mirrors_about_the_keys_range():
    keys = [_key(0.0, 1.0), _key(3.0, 1.5), _key(1.0, 3.0)]
    env = Envelope(keys, "oscillate", "oscillate")
    t = np.array([1.2, 1.9, 2.6])
    np.testing.assert_allclose(env(1.0 + 3.0 - t + 2.0), env(t), rtol=0, atol=1e-12)
    np.testing.assert_allclose(env(t - 2.0 * 2), env(t), rtol=0, atol=1e-12)


def test_bezier2d_is_solved_exactly():
    # handles at thirds make the time curve t itself: the value curve is the
    # value Bezier at u = (t - t0) / (t1 - t0), an exact fact
    keys = [_key(0.0, 0.0, "bezier2d", 0, 0, 1 / 3, 0.5), _key(1.0, 1.0, "bezier2d", -1 / 3, 2.0)]
    env = Envelope(keys)
    u = np.linspace(0.0, 1.0, 11)
    s = 1 - u
    want = 3 * s * s * u * 0.5 + 3 * s * u * u * (1.0 + 2.0) + u ** 3
    np.testing.assert_allclose(env(u), want, rtol=0, atol=1e-13)


def test_cubic_spans_run_in_the_core():
    keys = [_key(0.0, 0.0), _key(2.0, 1.0, "hermite", 0, 0, 0, 1.0, -1.0), _key(1.0, 2.5)]
    env = Envelope(keys)
    assert env._spline is not None
    t_in, t_out = env.tangents()
    np.testing.assert_allclose(env._spline.tangents[0], t_in)
    np.testing.assert_allclose(env._spline.tangents[1], t_out)


def test_rotation_composes_heading_pitch_bank():
    rng = np.random.default_rng(3)
    hpb = rng.uniform(-4, 4, (50, 3))
    got = heading_pitch_bank(hpb)
    want = Rotation.from_euler("YXZ", hpb).as_quat()  # intrinsic: Ry(H) Rx(P) Rz(B)
    want = np.concatenate([want[:, 3:], want[:, :3]], axis=1)
    np.testing.assert_allclose(got * np.sign(got[:, :1] * want[:, :1]), want, atol=1e-12)


def test_channels_give_the_envelopes(tmp_path):
    rng = np.random.default_rng(11)
    for version in (2, 5):
        items = random_scene(rng, version, n_items=3)
        write_lws(tmp_path / "c.lws", items, version)
        scene = read_lws(tmp_path / "c.lws")
        (anim,) = scene.animations.values()
        t = np.linspace(-2, 5, 23)
        for (name, path), channel in anim.items():
            env = scene.envelopes[name]
            names = {"translation": "XYZ", "rotation": "HPB"}.get(path)
            got = channel(t)
            if path == "rotation":
                hpb = np.stack([env[c](t) for c in names], axis=-1)
                want = heading_pitch_bank(np.radians(hpb) if version < 3 else hpb)
            else:
                parts = names or ("SX", "SY", "SZ")
                want = np.stack([env[c](t) for c in parts], axis=-1)
            np.testing.assert_allclose(got, want, atol=1e-12)
            assert channel.interpolation == "LWS"
            assert np.all(np.diff(channel.times) > 0)


# ---------------------------------------------------------------- real files

def _text_keys(path):
    """Each envelope's Key lines as the text has them, per object channel
    (LWSC 3+), read with a regex: the numbers to check the reader against."""
    text = path.read_text()
    block = text.split("ObjectMotion", 1)[1].split("AddLight", 1)[0]
    out = {}
    for ch, body in re.findall(r"Channel (\d+)\s*\{ Envelope(.*?)\}", block, re.S):
        out[int(ch)] = [[float(x) for x in line.split()[1:]]
                        for line in body.splitlines() if line.strip().startswith("Key")]
    return out


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_files_match_their_text_and_the_oracle(path):
    scene = read_lws(path)
    assert [n.name for n in scene.nodes] == ["simple_cube", "Light", "Camera"]
    assert scene.up_axis == "Y" and scene.handedness == "left"
    rng = np.random.default_rng(5)
    if scene.version >= 3:
        for ch, lines in _text_keys(path).items():
            env = scene.envelopes["simple_cube"][CHANNELS[ch]]
            assert [(k.value, k.time) for k in env.keys] == [(v[0], v[1]) for v in lines]
            assert [k.params for k in env.keys] == [tuple(v[3:]) for v in lines]
    for item, channels in scene.envelopes.items():
        for env in channels.values():
            keys = [(k.value, k.time, k.span, k.params) for k in env.keys]
            _check_envelope(env, keys, env.pre, env.post, cycle_times(keys, rng, 40))


@needs_real
def test_old_formats_hold_the_same_motion():
    new = read_lws(LEGACY / "move_x.lws").envelopes
    for name in ("move_x_oldformat_6.lws", "move_x_oldformat_56.lws"):
        old = read_lws(LEGACY / name)
        t = np.linspace(-1, 3, 41)
        for ch in CHANNELS:
            scale = math.pi / 180 if old.version < 3 and ch in "HPB" else 1.0
            got = old.envelopes["simple_cube"][ch](t) * scale
            # LWSC 2 writes 7 significant digits; its span code 2 plays as TCB here
            np.testing.assert_allclose(got, new["simple_cube"][ch](t), rtol=2e-6, atol=2e-6)
        light = old.envelopes["Light"]["H"]
        assert light.angle_unit == ("degrees" if old.version < 3 else "radians")


@needs_real
def test_tcb_tangents_match_lightwaves_own_at_interior_keys():
    # LWSC 3+ TCB keys store LightWave's own tangents in p4 (in) and p5 (out),
    # per span (the SDK's units): interior keys must agree
    checked = 0
    for path in REAL:
        scene = read_lws(path)
        for env in scene.envelopes["simple_cube"].values():
            t_in, t_out = env.tangents()
            for k in range(1, len(env.keys) - 1):
                key = env.keys[k]
                if key.span != "tcb" or env.keys[k + 1].span != "tcb" or scene.version < 3:
                    continue
                before = key.time - env.keys[k - 1].time
                after = env.keys[k + 1].time - key.time
                assert t_in[k] * before == pytest.approx(key.params[3], rel=1e-6)
                assert t_out[k] * after == pytest.approx(key.params[4], rel=1e-6)
                checked += 1
    assert checked >= 10


def test_channels_a_file_leaves_out_hold_their_rest_values(tmp_path):
    text = ("LWSC\n3\nLoadObjectLayer 1 ball.lwo\nObjectMotion\nNumChannels 7\n" +
            "".join(f"Channel {c}\n{{ Envelope\n  1\n  Key {c + 1} 0 0 0 0 0 0 0 0\n"
                    f"  Behaviors 1 1\n}}\n" for c in range(6)) +
            "Channel 6\n{ Envelope\n  2\n  Key 2 0 0 0 0 0 0 0 0\n  Key 4 1 3 0 0 0 0 0 0\n"
            "  Behaviors 1 1\n}\n")
    (tmp_path / "b.lws").write_text(text)
    scene = read_lws(tmp_path / "b.lws")
    channels = scene.animations["b"]
    assert sorted(path for _, path in channels) == ["scale"]
    np.testing.assert_allclose(channels[("ball", "scale")]([0.5]), [[3.0, 1.0, 1.0]])
    np.testing.assert_allclose(scene.nodes[0].translation, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(scene.nodes[0].scale, [2.0, 1.0, 1.0])


def test_bezier2d_after_a_tcb_key_starts_along_its_p5():
    # the SDK's default start handle: a third of the span, a third of p5;
    # with the end handle at a third too, the time curve is t itself
    keys = [_key(0.0, 0.0, "tcb", 0, 0, 0, 0.0, 3.0), _key(1.0, 1.0, "bezier2d", -1 / 3, 0.0)]
    u = np.linspace(0.0, 1.0, 9)
    s = 1 - u
    want = 3 * s * s * u * 1.0 + 3 * s * u * u * 1.0 + u ** 3
    np.testing.assert_allclose(Envelope(keys)(u), want, rtol=0, atol=1e-13)


def test_cubic_root_inverts_rising_time_curves():
    from kbspline.formats.lightwave_envelope import _cubic_root
    rng = np.random.default_rng(2)
    handles = [(1 / 3, 2 / 3), (0.0, 1.0), (0.5, 0.5), (0.0, 0.0), (1.0, 1.0)]
    handles += [tuple(np.sort(rng.uniform(0, 1, 2))) for _ in range(300)]
    for h1, h2 in handles:
        c = 3 * h1
        b = 3 * (h2 - h1) - c
        a = 1 - c - b
        u = np.concatenate([[0.0, 1.0], rng.uniform(0, 1, 40)])
        x = ((a * u + b) * u + c) * u
        root = _cubic_root(a, b, c, -x)
        assert np.all((root >= 0) & (root <= 1))
        np.testing.assert_allclose(((a * root + b) * root + c) * root, x, rtol=0, atol=2e-15)


def _env_block(channel, keys, post=1):
    lines = [f"Channel {channel}", "{ Envelope", f"  {len(keys)}"]
    lines += [f"  Key {v!r} {t!r} 0 0 0 0 0 0 0" for v, t in keys]
    return lines + [f"  Behaviors 1 {post}", "}"]


def test_read_scene_and_to_motion_place_children_about_pivots(tmp_path):
    """read_scene dispatches .lws; the scene model's to_motion puts a child
    where T(position) R T(-pivot) of its parent, then of itself, put it,
    rotations composed as intrinsic Y, X, Z Euler angles (SciPy)."""
    from kbspline.formats import read_scene
    from kbspline.motion import world_positions
    rng = np.random.default_rng(4)
    lines = ["LWSC", "3"]
    channels = {}
    for name, parent, pivot in (("Base", None, (0.5, -0.2, 0.3)), ("arm", "10000000",
                                                                   (0.1, 0.4, -0.6))):
        lines.append(f"AddNullObject {name}" if parent is None else f"LoadObjectLayer 1 {name}.lwo")
        lines += ["ObjectMotion", "NumChannels 9"]
        keys = {c: [(float(v), t) for v, t in zip(rng.normal(0, 1, 3), (0.0, 0.5, 1.0))]
                for c in range(6)}
        keys.update({c: [(1.0, 0.0)] for c in (6, 7, 8)})
        for c in range(9):
            lines += _env_block(c, keys[c])
        if parent:
            lines.append(f"ParentItem {parent}")
        lines.append("PivotPosition " + " ".join(map(repr, pivot)))
        channels[name] = (keys, np.array(pivot))
    (tmp_path / "arm.lws").write_text("\n".join(lines) + "\n")
    scene = read_scene(tmp_path / "arm.lws")
    assert scene.source == "lws" and scene.nodes[1].parent == 0
    motion = scene.to_motion("arm", fps=10.0)
    got, _ = world_positions(motion)
    t = np.arange(11) / 10.0

    def local(name):
        env = scene.envelopes[name]
        pos = np.stack([env[c](t) for c in "XYZ"], axis=-1)
        turn = Rotation.from_euler("YXZ", np.stack([env[c](t) for c in "HPB"], axis=-1))
        return turn, pos - turn.apply(channels[name][1])

    base_turn, base_at = local("Base")
    arm_turn, arm_at = local("arm")
    np.testing.assert_allclose(got[:, 0], base_at, atol=1e-9)
    np.testing.assert_allclose(got[:, 1], base_at + base_turn.apply(arm_at), atol=1e-9)
