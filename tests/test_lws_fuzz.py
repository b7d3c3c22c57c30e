"""Malformed LightWave scenes: a FormatError naming the line, never a crash or
a hang; mutated generated files give a FormatError or a scene that plays."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from lws_writer import random_scene, write_lws
from kbspline.formats.lightwave import LwsError, read_lws

from kbspline.formats import FormatError

GOOD_V5 = """LWSC
5

LoadObjectLayer 1 10000000 Objects/box.lwo
ObjectMotion
NumChannels 1
Channel 0
{ Envelope
  2
  Key 0 0 0 0 0 0 0 0 0
  Key 1 1 0 0 0 0 0 0 0
  Behaviors 1 1
}
"""

GOOD_V2 = """LWSC
2

LoadObject box.lwo
ObjectMotion (unnamed)
  1
  2
  0 0 2 0 0 0
  1 1 2 0 0 0
Pre/PostBehavior 1 1
"""


def _write(tmp_path, text, name="bad.lws"):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1") if isinstance(text, str) else text)
    return path


def test_good_files_read(tmp_path):
    for text in (GOOD_V5, GOOD_V2):
        scene = read_lws(_write(tmp_path, text))
        assert scene.envelopes["box"]["X"](0.5) == pytest.approx(0.5)


@pytest.mark.parametrize("old, new, line, words", [
    ("  Key 1 1 0 0", "  Key 1 1 9 0", 11, "span type"),             # unknown span type
    ("  2\n  Key 0", "  3\n  Key 0", 9, "3 keys but holds 2"),        # count mismatch
    ("  2\n  Key 0", "  99999999999999999999\n  Key 0", 9, "key count"),  # absurd count
    ("Behaviors 1 1", "Behaviors 1 7", 12, "behaviour"),
    ("Key 1 1 0", "Key 1 nan 0", 11, "not finite"),
    ("Key 1 1 0", "Key 1 1e999 0", 11, "not finite"),
    ("Key 1 1 0", "Key 1 0 0", 11, "time order"),
    ("Key 1 1 0", "Key one 1 0", 11, "not a number"),
    ("Channel 0", "Channel 3", 7, "channel number"),
    ("ObjectMotion", "3 4 5\nObjectMotion", 5, "unexpected line"),  # garbage line
    ("{ Envelope", "{ Envelop", 8, "Envelope"),
    ("LWSC\n5", "LWSC\n9", 2, "version"),
    ("LWSC", "LWSX", 1, "not a LightWave scene"),
    ("Behaviors 1 1\n}", "Behaviors 1 1\n  Junk 3\n}", 13, "unexpected line"),
    ("LoadObjectLayer", "ParentItem 10000000\nLoadObjectLayer", 4, "before any item"),
    ("  Behaviors 1 1\n}\n", "  Behaviors 1 1\n}\nParentItem 30000000\n", 14, "names no item"),
    ("  Behaviors 1 1\n}\n", "  Behaviors 1 1\n}\nParentItem 10000000\n", 14, "own ancestor"),
])
def test_bad_v5_files_name_the_line(tmp_path, old, new, line, words):
    assert old in GOOD_V5
    with pytest.raises(LwsError, match=rf"line {line}: .*{words}"):
        read_lws(_write(tmp_path, GOOD_V5.replace(old, new, 1)))


@pytest.mark.parametrize("old, new, line, words", [
    ("1 1 2 0 0 0", "1 1 7 0 0 0", 9, "span type"),
    ("1 1 2 0 0 0", "1 1 2 0 0", 9, "6 numbers"),
    ("Pre/PostBehavior 1 1", "Pre/PostBehavior 1 1 1", 10, "two per channel"),
    ("  2\n  0 0", "  3\n  0 0", 10, "6 numbers"),
    ("LoadObject box.lwo\n", "LoadObject box.lwo\nParentObject 2\n", 5, "1 objects"),
])
def test_bad_v2_files_name_the_line(tmp_path, old, new, line, words):
    assert old in GOOD_V2
    with pytest.raises(LwsError, match=rf"line {line}: .*{words}"):
        read_lws(_write(tmp_path, GOOD_V2.replace(old, new, 1)))


@pytest.mark.parametrize("cut", [5, 66, 80, 120, 150, len(GOOD_V5) - 2])
def test_truncated_files(tmp_path, cut):
    with pytest.raises(LwsError, match="line"):
        read_lws(_write(tmp_path, GOOD_V5[:cut]))


def test_unclosed_blocks_and_plugins(tmp_path):
    with pytest.raises(LwsError, match="line 13: the file ends inside the block opened at line 11"):
        read_lws(_write(tmp_path, GOOD_V2 + "{ APS\n  { VParm\n  }\n"))
    with pytest.raises(LwsError, match="no EndPlugin"):
        read_lws(_write(tmp_path, GOOD_V2 + "Plugin X 1 Y\n  stuff\n"))


def test_errors_are_format_errors(tmp_path):
    assert issubclass(LwsError, FormatError) and issubclass(LwsError, ValueError)
    with pytest.raises(LwsError, match="cannot be read"):
        read_lws(tmp_path / "absent.lws")
    with pytest.raises(LwsError, match="line 1"):
        read_lws(_write(tmp_path, b"\xff\xfe\x00garbage\x00"))
    with pytest.raises(LwsError, match="line 0"):
        read_lws(_write(tmp_path, b""))


def test_overflowing_tangents_are_a_format_error(tmp_path):
    text = GOOD_V5.replace("Key 1 1 0", "Key 1e299 5e-324 0")
    with pytest.raises(LwsError, match="overflow"):
        read_lws(_write(tmp_path, text))


_TOKENS = ["", "0", "-1", "5", "9", "nan", "inf", "1e999", "99999999999999999999", "x", "{",
           "}", "{ Envelope", "Key", "Channel 0", "NumChannels 9", "Behaviors 9 9", "EndPlugin",
           "Plugin", "ParentItem 4FFFFFFF", "AddBone", "ObjectMotion", "\x00\xff"]


def _mutate(text, data):
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 4))):
        n = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["delete", "duplicate", "token", "insert", "cut"]))
        if action == "delete":
            del lines[n]
        elif action == "duplicate":
            lines.insert(n, lines[n])
        elif action == "insert":
            lines.insert(n, data.draw(st.sampled_from(_TOKENS)))
        elif action == "cut":
            lines = lines[:n] + [lines[n][:data.draw(st.integers(0, len(lines[n])))]]
        else:
            words = lines[n].split() or [""]
            w = data.draw(st.integers(0, len(words) - 1))
            words[w] = data.draw(st.sampled_from(_TOKENS))
            lines[n] = " ".join(words)
        if not lines:
            lines = [""]
    return "\n".join(lines)


_SOURCES = {}


def _source(version):
    if version not in _SOURCES:
        import tempfile, pathlib
        items = random_scene(np.random.default_rng(version), version, n_items=3)
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "s.lws"
            write_lws(path, items, version)
            _SOURCES[version] = path.read_text()
    return _SOURCES[version]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from([1, 2, 3, 5]), data=st.data())
def test_mutated_files_give_a_format_error_or_a_scene_that_plays(tmp_path, version, data):
    path = _write(tmp_path, _mutate(_source(version), data), "fuzz.lws")
    try:
        scene = read_lws(path)
    except FormatError as exc:
        assert "line" in str(exc)
        return
    t = np.linspace(-5.0, 5.0, 7)
    for anim in scene.animations.values():
        for channel in anim.values():
            assert channel(t).shape[0] == len(t)


def test_non_finite_times_are_refused(tmp_path):
    env = read_lws(_write(tmp_path, GOOD_V5)).envelopes["box"]["X"]
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="t must be finite"):
            env(np.array([0.5, bad]))
