"""BVH reading and writing at the edges: every malformed file is a BvhError
naming its line, joints with one or two rotation channels, any nesting
depth, and lossless writing (read(write(m)) is bit-identical)."""
import tracemalloc

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kbspline.motion import BvhError, Joint, Motion, read_bvh, write_bvh
from mocap import CLIPS
from test_motion import CHAIN

LINES = CHAIN.splitlines()


def replace_line(number, text):
    """CHAIN with its line `number` (1-based) replaced by `text`."""
    return "\n".join(LINES[:number - 1] + [text] + LINES[number:]) + "\n"


def bvh_error(tmp_path, content):
    path = tmp_path / "x.bvh"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(BvhError) as info:
        read_bvh(path)
    return str(info.value)


def assert_line(message, line, reason):
    assert message.startswith(f"{message.split('x.bvh:')[0]}x.bvh:{line}: "), message
    assert reason in message, message


@pytest.mark.parametrize("line, text, reason", [
    (8, "    OFFSET 1 zero 0", "OFFSET must be a number, not 'zero'"),
    (8, "    OFFSET 1 \x00 0", "OFFSET must be a number"),
    (8, "    OFFSET 1 inf 0", "OFFSET must be finite, not 'inf'"),
    (12, "      OFFSET 0 nan 0", "End Site OFFSET must be finite, not 'nan'"),
    (9, "    CHANNELS 3 Zrotation Zrotation Yrotation", "channel 'Zrotation' listed twice"),
    (9, "    CHANNELS 3 Zrotation Wrotation Yrotation", "unknown channel 'Wrotation'"),
    (9, "    CHANNELS 7 Zrotation Xrotation Yrotation", "CHANNELS 7: a joint has at most 6"),
    (9, "    CHANNELS three Zrotation Xrotation Yrotation", "CHANNELS needs a count, not 'three'"),
    (9, "    CHANNELS \u00b3 Zrotation Xrotation Yrotation", "CHANNELS needs a count"),
    (6, "  JIONT knee", "expected JOINT, End Site or '}', found 'JIONT'"),
    (16, "MOTON", "expected 'MOTION', found 'MOTON'"),
    (17, "Frames: 0", "Frames: 0, but a clip needs at least one frame"),
    (17, "Frames: -3", "Frames: needs a count, not '-3'"),
    (17, "Frames: 3.0", "Frames: needs a count, not '3.0'"),
    (17, "Frames: " + "9" * 40, "is too large"),
    (18, "Frame Time: 0", "Frame Time must be positive, not 0.0"),
    (18, "Frame Time: -0.5", "Frame Time must be positive, not -0.5"),
    (18, "Frame Time: 1e-400", "Frame Time must be positive, not 0.0"),
    (18, "Frame Time: inf", "Frame Time must be finite, not 'inf'"),
    (18, "Frame Time: NaN", "Frame Time must be finite, not 'NaN'"),
    (18, "Frame Time: 0.5 0 0 0 0 0 0 0 0 0", "unexpected '0' after Frame Time"),
    (19, "0 0 0 0 0 0 0 0", "a frame needs 9 numbers (one per channel), found 8"),
    (20, "1 2 3 90 0 0 0 0 0 0", "a frame needs 9 numbers (one per channel), found 10"),
    (20, "1 2 3 90 0 0 0 O 0", "frame values must be numbers, not 'O'"),
    (20, "1 2 3 90 0 0 0 0,5 0", "frame values must be numbers, not '0,5'"),
    (19, "0 0 0 0 nan 0 0 0 0", "frame values must be finite, not 'nan'"),
    (21, "2 4 6 90 0 0 90 0 -inf", "frame values must be finite, not '-inf'"),
])
def test_malformed_line_is_named(tmp_path, line, text, reason):
    assert_line(bvh_error(tmp_path, replace_line(line, text)), line, reason)


def test_byte_that_is_not_utf8(tmp_path):
    latin1 = replace_line(8, "    OFFSET 1 \xe9 0").encode("latin-1")
    assert_line(bvh_error(tmp_path, latin1), 8, "byte 0xe9 is not UTF-8 text")


def test_missing_motion_and_extra_frame(tmp_path):
    assert_line(bvh_error(tmp_path, replace_line(16, "")), 17, "expected 'MOTION', found 'Frames:'")
    assert_line(bvh_error(tmp_path, replace_line(17, "Frames: 2")), 21,
                "more frames than Frames: 2")


def test_second_end_site(tmp_path):
    text = CHAIN.replace("    }\n  }\n}", "    }\n    End Site\n    {\n      OFFSET 0 1 0\n"
                         "    }\n  }\n}")
    assert_line(bvh_error(tmp_path, text), 14, "joint 'knee' has a second End Site")


@pytest.mark.parametrize("lines, line, reason", [
    (0, 1, "unexpected end of file (expected 'HIERARCHY')"),
    (10, 10, "unexpected end of file (expected '{')"),
    (14, 14, "unexpected end of file (expected more)"),
    (18, 18, "the file ends after 0 of Frames: 3"),
    (20, 20, "the file ends after 2 of Frames: 3"),
])
def test_truncated_file(tmp_path, lines, line, reason):
    text = "\n".join(LINES[:lines])
    assert_line(bvh_error(tmp_path, text), line, reason)


def test_huge_frame_count_allocates_only_what_is_read(tmp_path):
    path = tmp_path / "x.bvh"
    path.write_text(replace_line(17, "Frames: 999999999999999999"))
    tracemalloc.start()
    with pytest.raises(BvhError, match=r"x.bvh:21: the file ends after 3 of Frames: 9+$"):
        read_bvh(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20


def test_hierarchy_without_channels(tmp_path):
    text = CHAIN.replace("CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
                         "CHANNELS 0").replace("CHANNELS 3 Zrotation Xrotation Yrotation",
                                               "CHANNELS 0")
    assert_line(bvh_error(tmp_path, text), 18, "the hierarchy has no channels")


def test_line_endings_and_byte_order_mark(tmp_path):
    want = read_bvh_text(tmp_path, CHAIN)
    for variant in (CHAIN.replace("\n", "\r\n"), CHAIN.replace("\n", "\r"), "\ufeff" + CHAIN,
                    CHAIN.rstrip("\n"), CHAIN.replace("\n", "\n\n")):
        got = read_bvh_text(tmp_path, variant)
        np.testing.assert_array_equal(got.frames, want.frames)
    # line numbers count CR LF and CR as one line break each
    for newline in ("\r\n", "\r"):
        bad = replace_line(20, "1 2 3 90 0 0 0 x 0").replace("\n", newline)
        assert_line(bvh_error(tmp_path, bad), 20, "not 'x'")
    bad = replace_line(20, "1 2 3 90 0 0 0 x 0").replace("\n", "\n\n")
    assert_line(bvh_error(tmp_path, bad), 39, "not 'x'")


def read_bvh_text(tmp_path, text):
    path = tmp_path / "text.bvh"
    path.write_bytes(text.encode())
    return read_bvh(path)


def test_utf8_joint_names(tmp_path):
    clip = read_bvh_text(tmp_path, CHAIN.replace("knee", "\u819d"))
    assert clip.joints[1].name == "\u819d"
    write_bvh(clip, tmp_path / "out.bvh")
    assert read_bvh(tmp_path / "out.bvh").joints[1].name == "\u819d"


def nested(depth):
    """A chain of `depth` joints under a root, one X rotation channel each."""
    return ("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
            + "JOINT j\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n" * depth + "}\n" * (depth + 1)
            + "MOTION\nFrames: 2\nFrame Time: 0.1\n" + ("1 " * (depth + 3) + "\n") * 2)


def test_deep_nesting_reads_and_writes(tmp_path):
    clip = read_bvh_text(tmp_path, nested(3000))
    assert len(clip.joints) == 3001
    assert [j.parent for j in clip.joints] == list(range(-1, 3000))
    write_bvh(clip, tmp_path / "out.bvh")
    again = read_bvh(tmp_path / "out.bvh")
    assert [j.parent for j in again.joints] == list(range(-1, 3000))
    # an error after the deep hierarchy is still named by its line
    lines = nested(3000).splitlines()
    lines[-1] = lines[-1].replace("1", "y", 1)
    assert_line(bvh_error(tmp_path, "\n".join(lines)), len(lines), "not 'y'")


@pytest.mark.parametrize("channels", [["Yrotation"], ["Zrotation", "Xrotation"],
                                      ["Xposition", "Yrotation", "Xrotation"],
                                      ["Xrotation", "Zposition", "Zrotation"]])
def test_one_or_two_rotation_channels(tmp_path, channels):
    """The joint turns about its listed axes in order (intrinsic), as SciPy's
    Euler angles with as many axes say; the missing axes do not turn."""
    rng = np.random.default_rng(len(channels))
    order = "".join(c[0] for c in channels if c.endswith("rotation"))
    text = CHAIN.replace("CHANNELS 3 Zrotation Xrotation Yrotation",
                         f"CHANNELS {len(channels)} {' '.join(channels)}")
    lines = text.splitlines()[:18]
    frames = rng.uniform(-180, 180, (20, 6 + len(channels)))
    clip = read_bvh_text(tmp_path, "\n".join(lines).replace("Frames: 3", "Frames: 20") + "\n"
                         + "\n".join(" ".join(map(repr, row)) for row in frames.tolist()))
    assert clip.rotation_order(1) == order
    angles = frames[:, [6 + k for k, c in enumerate(channels) if c.endswith("rotation")]]
    want = Rotation.from_euler(order, angles, degrees=True).as_quat()[:, [3, 0, 1, 2]]
    got = clip.rotations()[1]
    np.testing.assert_allclose(np.abs(np.sum(got * want, axis=-1)), 1.0, atol=1e-13)
    # written back through with_frames, the same rotations, for any angles
    again = clip.with_frames(clip.rotations(), clip.translations(), clip.frame_time)
    back = again.rotations()[1]
    np.testing.assert_allclose(np.abs(np.sum(back * want, axis=-1)), 1.0, atol=1e-13)
    np.testing.assert_allclose(again.translations(), clip.translations(), atol=1e-12)


def bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64)


def assert_identical(a, b):
    assert [(j.name, j.parent, j.channels) for j in a.joints] == \
        [(j.name, j.parent, j.channels) for j in b.joints]
    for ja, jb in zip(a.joints, b.joints):
        np.testing.assert_array_equal(bits(ja.offset), bits(jb.offset))
        assert (ja.end_site is None) == (jb.end_site is None)
        if ja.end_site is not None:
            np.testing.assert_array_equal(bits(ja.end_site), bits(jb.end_site))
    assert bits(a.frame_time) == bits(b.frame_time)
    np.testing.assert_array_equal(bits(a.frames), bits(b.frames))


@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_real_clips_round_trip_bit_identically(path, tmp_path):
    clip = read_bvh(path)
    write_bvh(clip, tmp_path / "out.bvh")
    assert_identical(read_bvh(tmp_path / "out.bvh"), clip)


def random_values(rng, shape):
    """Doubles of every magnitude and sign, with zeros, -0.0 and subnormals."""
    values = rng.standard_normal(shape) * 10.0 ** rng.integers(-300, 300, shape)
    flat = values.reshape(-1)
    flat[rng.integers(0, flat.size, 4)] = [0.0, -0.0, 5e-324, -2.2250738585072014e-308]
    return values


def test_random_motions_round_trip_bit_identically(tmp_path):
    rng = np.random.default_rng(7)
    hip = Joint("hip", -1, random_values(rng, 3), ["Xposition", "Yposition", "Zposition",
                                                    "Zrotation", "Xrotation", "Yrotation"])
    knee = Joint("knee", 0, random_values(rng, 3), ["Yrotation"], random_values(rng, 3))
    foot = Joint("foot", 0, random_values(rng, 3), ["Xrotation", "Zposition"])
    for frames in (1, 50):
        clip = Motion([hip, knee, foot], float(rng.uniform(1e-9, 10)),
                      random_values(rng, (frames, 9)))
        write_bvh(clip, tmp_path / "out.bvh")
        assert_identical(read_bvh(tmp_path / "out.bvh"), clip)


def test_fixed_precision(tmp_path):
    rng = np.random.default_rng(3)
    clip = read_bvh_text(tmp_path, CHAIN)
    clip.frames = rng.uniform(-180, 180, clip.frames.shape)
    write_bvh(clip, tmp_path / "out.bvh", precision=4)
    want = np.vectorize(lambda v: float(f"{v:.4g}"))(clip.frames)
    np.testing.assert_array_equal(read_bvh(tmp_path / "out.bvh").frames, want)


def chain_with(**changes):
    clip = Motion([Joint("hip", -1, np.zeros(3), ["Xposition", "Zrotation"]),
                   Joint("knee", 0, np.ones(3), ["Xrotation"])], 0.5, np.zeros((2, 3)))
    for name, value in changes.items():
        if name in ("frames", "frame_time"):
            setattr(clip, name, value)
        else:
            setattr(clip.joints[1], name, value)
    return clip


@pytest.mark.parametrize("clip, reason", [
    (chain_with(name="left knee"), "joint 1 ('left knee'): a BVH joint name is one word"),
    (chain_with(name=""), "a BVH joint name is one word"),
    (chain_with(parent=1), "joint 1 ('knee'): parent 1 must be -1 or an earlier joint"),
    (chain_with(channels=["Xrotation", "Xrotation"]), "must be distinct"),
    (chain_with(channels=["Xrot"]), "must be distinct, of"),
    (chain_with(offset=np.array([0, np.nan, 0])), "offset must be 3 finite numbers"),
    (chain_with(end_site=np.zeros(2)), "end_site must be 3 finite numbers"),
    (chain_with(frames=np.zeros((0, 3))), r"frames must be (F >= 1, 3 channels), not (0, 3)"),
    (chain_with(frames=np.zeros((2, 4))), "frames must be (F >= 1, 3 channels)"),
    (chain_with(frames=np.array([[0, 0, 0], [0, np.inf, 0]])), "frames[1, 1] is inf"),
    (chain_with(frame_time=0.0), "frame_time must be finite and positive"),
    (chain_with(frame_time=np.nan), "frame_time must be finite and positive"),
])
def test_write_refuses_what_bvh_cannot_hold(tmp_path, clip, reason):
    path = tmp_path / "out.bvh"
    with pytest.raises(ValueError) as info:
        write_bvh(clip, path)
    assert reason in str(info.value)
    assert not path.exists()


def test_write_refuses_joints_out_of_file_order(tmp_path):
    """A file lists each joint's subtree before its next sibling, so frames
    of joints in another order would be read back as other joints' values."""
    joints = [Joint("root", -1, np.zeros(3), ["Xrotation"]),
              Joint("a", 0, np.zeros(3), ["Xrotation"]), Joint("b", 0, np.zeros(3), ["Xrotation"]),
              Joint("a_child", 1, np.zeros(3), ["Xrotation"])]
    with pytest.raises(ValueError, match=r"joint 2 \('b'\) is out of the depth-first order"):
        write_bvh(Motion(joints, 0.1, np.zeros((1, 4))), tmp_path / "out.bvh")


@pytest.mark.parametrize("precision", [0, -1, 2.5, True, "6"])
def test_write_refuses_bad_precision(tmp_path, precision):
    with pytest.raises(ValueError, match="precision must be None or a positive int"):
        write_bvh(chain_with(), tmp_path / "out.bvh", precision=precision)
