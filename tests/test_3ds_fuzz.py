"""Bad .3ds files: truncations, corrupt lengths and counts, byte flips give a
ThreeDSError (a FormatError, a ValueError) naming the chunk id and offset, or
a scene that plays; never a crash, a hang or an unbounded allocation."""
import pathlib
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbspline.formats.threeds import ThreeDSError, read_3ds
from threeds_writer import chunk, random_scene, random_track, write_3ds

LEGACY = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "legacy"


def sample_file():
    nodes, objects = random_scene(np.random.default_rng(11), n_objects=2)
    return write_3ds(nodes, objects=objects)


GOOD = sample_file()
REAL = (LEGACY / "TargetCameraAnim.3ds").read_bytes() \
    if (LEGACY / "TargetCameraAnim.3ds").exists() else GOOD


def read_or_format_error(tmp_path, data):
    path = tmp_path / "fuzz.3ds"
    path.write_bytes(data)
    try:
        scene = read_3ds(path)
    except ThreeDSError as exc:
        assert "chunk 0x" in str(exc) and "byte" in str(exc), str(exc)
        return None
    for tracks in scene.tracks.values():      # whatever was read plays
        for track in tracks.values():
            if len(track.frames):
                out = track(np.linspace(-1.0, 10.0, 7))
                assert out.shape[0] == 7
    for channels in scene.animations.values():   # cameras' look-ats included
        for channel in channels.values():
            assert np.all(np.isfinite(channel(np.linspace(-1.0, 10.0, 5))))
    return scene


def headers(data):
    """Byte offsets of every chunk header the walker would meet (MAIN's tree)."""
    out, stack = [], [(0, len(data))]
    containers = {0x4D4D, 0x3D3D, 0xB000, 0xB002, 0xB003, 0xB004}
    while stack:
        pos, end = stack.pop()
        while pos + 6 <= end:
            cid, length = struct.unpack_from("<HI", data, pos)
            if length < 6 or pos + length > end:
                break
            out.append(pos)
            if cid in containers:
                stack.append((pos + 6, pos + length))
            pos += length
    return out


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])


@FUZZ
@given(base=st.sampled_from([GOOD, REAL]), cut=st.floats(0, 1, exclude_max=True))
def test_truncated_files(tmp_path, base, cut):
    data = base[:int(cut * len(base))]
    assert read_or_format_error(tmp_path, data) is None or len(data) == len(base)


@FUZZ
@given(base=st.sampled_from([GOOD, REAL]), which=st.integers(0, 10 ** 6),
       length=st.one_of(st.integers(0, 12), st.integers(0, 2 ** 32 - 1)))
def test_corrupt_chunk_lengths(tmp_path, base, which, length):
    offsets = headers(base)
    pos = offsets[which % len(offsets)]
    data = bytearray(base)
    struct.pack_into("<I", data, pos + 2, length)
    read_or_format_error(tmp_path, bytes(data))


@FUZZ
@given(base=st.sampled_from([GOOD, REAL]),
       flips=st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(1, 255)), min_size=1,
                      max_size=8))
def test_byte_flips(tmp_path, base, flips):
    data = bytearray(base)
    for pos, mask in flips:
        data[pos % len(data)] ^= mask
    read_or_format_error(tmp_path, bytes(data))


def one_track_file(track_bytes):
    node = chunk(0xB002, b"", chunk(0xB030, struct.pack("<H", 0)),
                 chunk(0xB010, b"Box\0" + struct.pack("<HHH", 0, 0, 0xFFFF)), track_bytes)
    return chunk(0x4D4D, b"", chunk(0xB000, b"", node))


def position_track(count, keys, flags=0):
    return chunk(0xB020, struct.pack("<HIIi", flags, 0, 0, count) + keys)


KEY = struct.pack("<iH3f", 0, 0, 1.0, 2.0, 3.0)


@pytest.mark.parametrize("data,match", [
    (one_track_file(position_track(2 ** 31 - 1, KEY)), r"0xB020 at byte \d+: .*key count"),
    (one_track_file(position_track(2, KEY)), r"0xB020 .*key count 2 does not fit"),
    (one_track_file(position_track(1, KEY + KEY)), r"0xB020 .*leaves 18 bytes unread"),
    (one_track_file(position_track(2, KEY + KEY)), r"key 1 at frame 0 does not follow"),
    (one_track_file(position_track(1, struct.pack("<iH3f", 0, 0, np.nan, 0, 0))),
     r"0xB020 .*non-finite"),
    (one_track_file(position_track(1, struct.pack("<iHf3f", 0, 1, 3.0, 0, 0, 0))),
     r"tension 3.0, outside \[-1, 1\]"),
    (b"\x4d\x4d\x10\x00\x00\x00", r"0x4D4D at byte 0: length 16 runs past"),
    (b"MM", r"0x4D4D at byte 0: .*too few"),
    (b"\x3d\x3d\x06\x00\x00\x00", r"not a .3ds file"),
    (chunk(0x4D4D, b"", chunk(0xB000, b"", chunk(0xB002, b"", chunk(0xB030, b"\0\0")))),
     r"0xB002 at byte \d+: node without a NODE_HDR"),
    (chunk(0x4D4D, b"", chunk(0xB000, b"", chunk(0xB002, b"", chunk(
        0xB010, b"A\0" + struct.pack("<HHH", 0, 0, 7))))), r"parent id 7 names no node"),
    (chunk(0x4D4D, b"", chunk(0xB000, b"", chunk(0xB002, b"", chunk(
        0xB010, b"A\0" + struct.pack("<HHH", 0, 0, 0))))), r"the parents form a cycle"),
    (chunk(0x4D4D, b"", chunk(0xB000, b"", chunk(0xB002, b"", chunk(0xB010, b"A")))),
     r"0xB010 at byte \d+: a name runs past"),
])
def test_bad_files_name_chunk_and_offset(tmp_path, data, match):
    path = tmp_path / "bad.3ds"
    path.write_bytes(data)
    with pytest.raises(ThreeDSError, match=match):
        read_3ds(path)


def test_lengths_past_the_parent_name_both(tmp_path):
    track = position_track(1, KEY)
    data = bytearray(one_track_file(track))
    pos = data.index(struct.pack("<H", 0xB020))
    struct.pack_into("<I", data, pos + 2, len(track) + 4)
    path = tmp_path / "past.3ds"
    path.write_bytes(bytes(data))
    with pytest.raises(ThreeDSError, match=rf"0xB020 at byte {pos}: length .* past its parent "
                                           r"0xB002"):
        read_3ds(path)


def test_good_random_tracks_survive_their_own_roundtrip(tmp_path):
    """The fuzz's base files are themselves good."""
    assert read_or_format_error(tmp_path, GOOD) is not None
    assert read_or_format_error(tmp_path, REAL) is not None
    rng = np.random.default_rng(2)
    data = write_3ds([{"tag": "object", "name": "A",
                       "tracks": {"rotation": random_track(rng, "rotation", 40, flags=3)}}])
    assert read_or_format_error(tmp_path, data) is not None


def test_tracks_without_keys(tmp_path):
    data = one_track_file(position_track(0, b""))
    path = tmp_path / "empty.3ds"
    path.write_bytes(data)
    scene = read_3ds(path)
    assert scene.animations == {} and len(scene.tracks["Box"]["position"].frames) == 0
    np.testing.assert_array_equal(scene.nodes[0].translation, [0, 0, 0])
    with pytest.raises(ValueError, match="position track has no keys"):
        scene.tracks["Box"]["position"](0.0)
