"""An adversarial review of the LightWave reader: envelopes against a second
reading of the SDK (lws_sdk_review), hostile scenes, the composed rotation
against matrices multiplied out by hand."""
import glob
import math
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lws_sdk_review import sdk_envelope
from kbspline.formats.lightwave import LwsError, heading_pitch_bank, read_lws
from kbspline.formats.lightwave_envelope import BEHAVIOURS, SPAN_TYPES, Envelope

LEGACY = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "legacy")
MISSING_LEGACY = (f"needs the LightWave scenes in {LEGACY} (the project's shared data, "
                  "checked out beside the repository as ../shared)")


def _lines_run(path):
    """How many lines of the reader's modules run to read `path`: a count of
    steps, the same on every machine."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if "lightwave" not in frame.f_code.co_filename:
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        read_lws(path)
    finally:
        sys.settrace(None)
    return count


def _chain(path, n):
    lines = ["LWSC", "3", ""]
    for i in range(n):
        lines.append(f"AddNullObject n{i}")
        if i:
            lines.append(f"ParentItem {(1 << 28) | (i - 1):08X}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _bones(path, n):
    lines = ["LWSC", "3", "", "AddNullObject root"]
    for i in range(n):
        lines += ["AddBone", f"BoneName b{i}"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("scene", [_chain, _bones])
def test_long_scenes_read_in_steps_linear_in_their_items(tmp_path, scene):
    # each item's default id counted the items before it, and the ancestor
    # check walked every chain to its root: 20 000 nulls took 35 s
    small = _lines_run(scene(tmp_path / "small.lws", 300))
    large = _lines_run(scene(tmp_path / "large.lws", 1200))
    assert large < 4.6 * small


def test_a_parent_cycle_names_an_item_on_it(tmp_path):
    lines = ["LWSC", "3", "", "AddNullObject a", "AddNullObject b",
             "ParentItem 10000002", "AddNullObject c", "ParentItem 10000001",
             "AddNullObject d", "ParentItem 10000002"]
    (tmp_path / "c.lws").write_text("\n".join(lines) + "\n")
    with pytest.raises(LwsError, match=r"line (6|8): '[bc]' is its own ancestor"):
        read_lws(tmp_path / "c.lws")


def test_a_parent_id_two_items_share_is_refused(tmp_path):
    # the later item silently won: c became b's child, not a's
    lines = ["LWSC", "4", "", "AddNullObject 10000000 a", "AddNullObject 10000000 b",
             "AddNullObject 10000001 c", "ParentItem 10000000"]
    (tmp_path / "d.lws").write_text("\n".join(lines) + "\n")
    with pytest.raises(LwsError, match=r"line 7: ParentItem 10000000 names two items "
                                       r"\(lines 4 and 5\)"):
        read_lws(tmp_path / "d.lws")
    # ids no ParentItem names may repeat: nothing is ambiguous
    (tmp_path / "e.lws").write_text("\n".join(lines[:5]) + "\n")
    assert [n.name for n in read_lws(tmp_path / "e.lws").nodes] == ["a", "b"]


@st.composite
def _envelopes(draw):
    """Keys of every shape (the first too), TCB values at their extremes
    (+-1) or anywhere between, gaps from a millisecond to seconds, times far
    from zero, any behaviours.  Hypothesis draws the structure; a NumPy
    generator it seeds draws the numbers (Hypothesis's own floats favour
    0 and +-1, which zero most tangents)."""
    n = draw(st.sampled_from([1, 2, 3, 4, 5, 6]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    start = draw(st.sampled_from([0.0, -2.5, 1e4]))
    gaps = [draw(st.sampled_from([1e-3, 0.04, 1.0, 3.7, None])) or float(rng.uniform(0.01, 5))
            for _ in range(n - 1)]
    times = list(np.cumsum([start] + gaps))
    keys = []
    for k, time in enumerate(times):
        shape = draw(st.sampled_from(SPAN_TYPES))
        tcb = rng.uniform(-1.0, 1.0, 3)
        tcb = np.where(rng.random(3) < 0.3, rng.choice([-1.0, 1.0], 3), tcb)
        p = [*tcb, *rng.normal(0.0, 3.0, 2), 0.0]
        if shape == "bezier2d":  # handles within their spans: the time curve rises
            before = times[k] - times[k - 1] if k else 1.0
            after = times[k + 1] - times[k] if k + 1 < n else 1.0
            reach = np.where(rng.random(2) < 0.2, rng.choice([0.0, 1.0], 2),
                             rng.uniform(0.05, 0.5, 2))
            p[:4] = [-reach[0] * before, rng.normal(0.0, 3.0), reach[1] * after,
                     rng.normal(0.0, 3.0)]
        keys.append((float(rng.normal(0.0, 5.0)), float(time), shape, *map(float, p)))
    behaviours = draw(st.sampled_from(BEHAVIOURS)), draw(st.sampled_from(BEHAVIOURS))
    return keys, *behaviours, list(rng.uniform(-3.5, 4.5, 16))


def _agrees(got, keys, pre, post, t):
    """got lies within the SDK's values over t +- a few rounding errors of
    the cycle arithmetic (a stepped span or a seam may jump there, and a
    short span repeated far out turns those errors into value)."""
    t0, t1 = keys[0][1], keys[-1][1]
    spread = 8e-16 * (abs(t) + abs(t0) + abs(t1) + abs(t - t0))
    want = [sdk_envelope(keys, pre, post, at) for at in np.linspace(t - spread, t + spread, 9)]
    tol = 1e-9 * (1.0 + max(abs(k[0]) for k in keys) * (1.0 + abs(t - t0)))
    return min(want) - tol <= got <= max(want) + tol


@settings(max_examples=100, deadline=None)
@given(_envelopes())
def test_envelopes_play_as_a_second_reading_of_the_sdk(case):
    keys, pre, post, fractions = case
    env = Envelope([(k[0], k[1], k[2], k[3:]) for k in keys], pre, post)
    t0, t1 = keys[0][1], keys[-1][1]
    length = max(t1 - t0, 1.0)
    times = [t0 + f * length for f in fractions] + [k[1] for k in keys]
    got = env(np.array(times))
    for t, g in zip(times, got):
        assert _agrees(g, keys, pre, post, t), (t, g, sdk_envelope(keys, pre, post, t))


@pytest.mark.skipif(not os.path.isdir(LEGACY), reason=MISSING_LEGACY)
@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(LEGACY, "*.lws"))),
                         ids=os.path.basename)
def test_real_envelopes_play_as_a_second_reading_of_the_sdk(path):
    for channels in read_lws(path).envelopes.values():
        for env in channels.values():
            keys = [(k.value, k.time, k.span) + tuple(k.params) for k in env.keys]
            t0, t1 = keys[0][1], keys[-1][1]
            length = max(t1 - t0, 1.0)
            times = np.linspace(t0 - 3 * length, t1 + 3 * length, 97)
            want = [sdk_envelope(keys, env.pre, env.post, t) for t in times]
            np.testing.assert_allclose(env(times), want, rtol=1e-12, atol=1e-12)


def _matrix(axis, angle):
    c, s = math.cos(angle), math.sin(angle)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m = np.eye(3)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def _quaternion_matrix(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_rotation_channel_is_heading_after_pitch_after_bank(tmp_path):
    # an LWSC 2 file (degrees) and an LWSC 3 one (radians) with keys on H, P, B:
    # the channel's quaternion must be the matrix Ry(H) Rx(P) Rz(B)
    rng = np.random.default_rng(5)
    hpb = rng.uniform(-200.0, 200.0, (2, 3))
    for version in (2, 3):
        unit = (lambda a: a) if version == 2 else math.radians
        if version == 2:
            body = ["ObjectMotion (unnamed)", "  6"]
            for ch in range(6):
                body += ["  2"] + [f"  {unit(hpb[k, ch - 3]) if ch >= 3 else 0.0} {k} 3 0 0 0"
                                   for k in range(2)]
        else:
            body = ["ObjectMotion", "NumChannels 6"]
            for ch in range(6):
                body += [f"Channel {ch}", "{ Envelope", "  2"]
                body += [f"  Key {unit(hpb[k, ch - 3]) if ch >= 3 else 0.0} {k} 3 0 0 0 0 0 0"
                         for k in range(2)] + ["  Behaviors 1 1", "}"]
        path = tmp_path / f"r{version}.lws"
        path.write_text("\n".join(["LWSC", str(version), "", "LoadObject a.lwo"] + body) + "\n")
        channel = read_lws(path).animations["r" + str(version)][("a", "rotation")]
        for u in (0.0, 0.3, 1.0):
            h, p, b = np.radians(hpb[0] + u * (hpb[1] - hpb[0]))
            want = _matrix("y", h) @ _matrix("x", p) @ _matrix("z", b)
            np.testing.assert_allclose(_quaternion_matrix(channel(u)[0]), want, atol=1e-12)
    # heading turns LightWave's forward +Z toward +X, pitch toward -Y (nose down)
    forward = np.array([0.0, 0.0, 1.0])
    np.testing.assert_allclose(_quaternion_matrix(heading_pitch_bank([math.pi / 2, 0, 0]))
                               @ forward, [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(_quaternion_matrix(heading_pitch_bank([0, math.pi / 2, 0]))
                               @ forward, [0, -1, 0], atol=1e-15)


_ONE_KEY = ["LWSC", "3", "", "AddNullObject a", "ObjectMotion", "NumChannels 1", "Channel 0",
            "{ Envelope", "  1", "  Key 1.5 0 0 0 0 0 0 0 0", "  Behaviors 1 1", "}"]


@pytest.mark.parametrize("line, text", [
    (2, "\u0663"),                               # Arabic-Indic 3: int() reads it
    (6, "NumChannels \uff11"),                   # a fullwidth 1
    (9, "  \u0661"),                             # the key count
    (10, "  Key 1_5 0 0 0 0 0 0 0 0"),           # float() reads 15
    (10, "  Key 1.5 \u0660 0 0 0 0 0 0 0"),      # an Arabic-Indic 0 for the time
    (10, "  Key 1.5 0 0 0 0 0 0 0 infinity"),
])
def test_numbers_are_ascii_decimals(tmp_path, line, text):
    # Python's int() and float() take any script's digits and underscores,
    # so such garbage read as numbers
    lines = list(_ONE_KEY)
    lines[line - 1] = text
    (tmp_path / "u.lws").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(LwsError, match=f"line {line}: "):
        read_lws(tmp_path / "u.lws")
    (tmp_path / "ok.lws").write_text("\n".join(_ONE_KEY) + "\n")
    assert read_lws(tmp_path / "ok.lws").envelopes["a"]["X"].keys[0].value == 1.5
