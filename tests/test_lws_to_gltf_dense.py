"""LightWave scenes to glTF (review of issue 52): their envelopes are no
splines, so convert keys them by channel_keys; played back by the glTF
specification's rules glTF must stay within the tolerance of the envelopes
at any time, a kink where one channel stops included."""
import warnings

import numpy as np
import pygltflib as gl
from scipy.spatial.transform import Rotation

from kbspline.formats import read_lws
from kbspline.formats.convert import convert
from lws_writer import write_lws
from test_3ds_pivot import gltf_world
from test_gltf import played, spec_play

MIRROR = np.diag([1.0, 1.0, -1.0])      # LightWave's left-handed Y up to glTF's
TOL = 1e-3


def smooth_scene(path, rng, times, post="constant"):
    """A chain of two objects with pivots; TCB keys at `times` on every
    position and rotation channel (so none bends where another ends), with
    continuity 0 (no corner at a key), unit scale."""
    items = []
    for n, name in enumerate(("base", "arm")):
        channels = {}
        for ch in range(9):
            if ch < 6:
                spread = 2.0 if ch < 3 else 0.8
                keys = [(float(v), float(t), "tcb", tension, 0.0, bias, 0.0, 0.0, 0.0)
                        for v, t, tension, bias in zip(rng.normal(0, spread, len(times)), times,
                                                       *rng.uniform(-0.5, 0.5, (2, len(times))))]
            else:
                keys = [(1.0, 0.0, "tcb", 0, 0, 0, 0, 0, 0)]
            channels[ch] = (keys, "constant", post)
        items.append({"kind": "null", "name": name, "parent": n - 1, "channels": channels,
                      "pivot": tuple(rng.normal(0, 1, 3))})
    write_lws(path, items, 3)


def envelope_world(scene, t):
    """{item: (M, 3)} world origins from the envelopes: T(position) R S T(-pivot)
    down the chain, R = qy(H) qx(P) qz(B), composed with SciPy."""
    out, above = {}, None
    for node in scene.nodes:
        env = scene.envelopes[node.name]
        turn = Rotation.from_euler("YXZ", np.stack([env[c](t) for c in "HPB"], axis=1))
        local = np.tile(np.eye(4), (len(t), 1, 1))
        local[:, :3, :3] = turn.as_matrix()
        local[:, :3, 3] = np.stack([env[c](t) for c in "XYZ"], axis=1) - turn.apply(node.pivot)
        above = local if above is None else above @ local
        out[node.name] = above[:, :3, 3]
    return out


def test_glTF_follows_the_envelopes_between_frames(tmp_path):
    rng = np.random.default_rng(52)
    source = tmp_path / "swing.lws"
    smooth_scene(source, rng, np.arange(5) * 0.2)
    out = tmp_path / "swing.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        convert(source, out, fps=30.0, angle_tolerance=TOL, distance_tolerance=TOL)
    doc = gl.GLTF2().load(str(out))
    scene = read_lws(source)
    t = np.sort(rng.uniform(0.0, 0.8, 200))        # between the frames, not at them
    want = envelope_world(scene, t)
    lever = max(np.abs(points).max() for points in want.values())
    bound = 2 * TOL + 2 * lever * TOL             # two joints' distances and turns
    # an item's frame below its pivot shift is glTF's <name>.pivot node
    worst = max(np.abs(gltf_world(doc, x)[name + ".pivot"][:3, 3] - MIRROR @ points[k]).max()
                for k, x in enumerate(t) for name, points in want.items())
    assert worst <= bound


def test_a_kink_where_a_channel_stops_is_followed(tmp_path):
    rng = np.random.default_rng(7)
    source = tmp_path / "kink.lws"
    smooth_scene(source, rng, [0.0, 0.35, 1.0])
    lines = source.read_text().splitlines()     # the arm's X stops dead at 0.35 s
    at = [i for i, line in enumerate(lines) if line.startswith("LoadObject") or
          line.startswith("AddNullObject")][1]
    first = next(i for i in range(at, len(lines)) if lines[i].strip().startswith("Key "))
    del lines[first + 2]
    lines[first - 1] = "  2"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "kink.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        convert(source, out, fps=30.0, distance_tolerance=1e-4)
    doc, scene = gl.GLTF2().load(str(out)), read_lws(source)
    t = np.concatenate([np.linspace(0.0, 1.0, 301), 0.35 + np.array([-1e-4, 0.0, 1e-4])])
    want = scene.envelopes["arm"]["X"](t)
    times, output, interpolation = played(doc, "arm", "translation")
    got = np.array([spec_play(times, output, interpolation, x)[0] for x in t])
    assert np.abs(got - want).max() <= 1e-4       # glTF's x is LightWave's (mirrored in z)
