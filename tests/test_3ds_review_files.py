"""Hostile .3ds files for the review: every truncation of a small file, node
tables that are huge, cyclic or dangling; only a ThreeDSError naming the chunk
and byte, or a scene that plays."""
import struct

import numpy as np
import pytest

from kbspline.formats.threeds import ThreeDSError, read_3ds
from threeds_writer import chunk, cstr, random_track, write_3ds


def read(tmp_path, data):
    path = tmp_path / "hostile.3ds"
    path.write_bytes(data)
    return read_3ds(path)


def small_file():
    rng = np.random.default_rng(5)
    tracks = {kind: random_track(rng, kind, 2) for kind in ("position", "rotation", "hide")}
    tracks["hide"].pop("values")
    nodes = [{"tag": "object", "name": "Box", "tracks": tracks, "pivot": [1.0, 2.0, 3.0],
              "instance": "inst"},
             {"tag": "object", "name": "Kid", "parent": 0,
              "tracks": {"scale": random_track(rng, "scale", 1)}}]
    return write_3ds(nodes, objects=[("Box", "mesh"), ("Kid", "mesh")])


def test_truncated_at_every_byte(tmp_path):
    data = small_file()
    read(tmp_path, data)
    for cut in range(len(data)):
        with pytest.raises(ThreeDSError, match=r"chunk 0x[0-9A-F]{4} at byte \d+"):
            read(tmp_path, data[:cut])


def bare_node(name, parent, node_id=None):
    subs = [] if node_id is None else [chunk(0xB030, struct.pack("<H", node_id))]
    subs.append(chunk(0xB010, cstr(name) + struct.pack("<HHH", 0, 0, parent)))
    return chunk(0xB002, b"", *subs)


def keyframer(*nodes):
    return chunk(0x4D4D, b"", chunk(0xB000, b"", *nodes))


def test_a_deep_chain_of_many_nodes_reads_in_linear_time(tmp_path):
    # nodes without NODE_ID are numbered by position; each hangs from the last.
    # Name and cycle checks were quadratic: 30000 nodes took minutes.
    N = 30000
    scene = read(tmp_path, keyframer(*[bare_node("A", 0xFFFF if i == 0 else i - 1)
                                       for i in range(N)]))
    assert [node.parent for node in scene.nodes] == [-1] + list(range(N - 1))
    assert [node.children for node in scene.nodes] == [[i + 1] for i in range(N - 1)] + [[]]
    assert len({node.name for node in scene.nodes}) == N


@pytest.mark.parametrize("parents, match", [
    ([0xFFFF, 1], "cycle"), ([1, 0], "cycle"), ([0xFFFF, 2, 3, 1], "cycle"),
    ([0xFFFF, 7], "parent id 7 names no node"), ([0xFFFE], "parent id 65534 names no node")])
def test_parents_that_loop_or_dangle(tmp_path, parents, match):
    data = keyframer(*[bare_node(f"N{i}", p, node_id=i) for i, p in enumerate(parents)])
    with pytest.raises(ThreeDSError, match=r"chunk 0xB010 in node at byte \d+: .*" + match):
        read(tmp_path, data)


def test_duplicate_node_ids(tmp_path):
    data = keyframer(bare_node("A", 0xFFFF, node_id=4), bare_node("B", 0xFFFF, node_id=4))
    with pytest.raises(ThreeDSError, match=r"chunk 0xB030 in node at byte \d+: node id 4"):
        read(tmp_path, data)


@pytest.mark.parametrize("fps", [np.float32(24.0), np.int64(25), 12.5])
def test_fps_of_any_real_type(tmp_path, fps):
    path = tmp_path / "fps.3ds"
    path.write_bytes(small_file())
    scene = read_3ds(path, fps=fps)
    assert scene.fps == float(fps)
    track = scene.tracks["Box"]["position"]
    np.testing.assert_array_equal(track.times, track.frames / float(fps))


@pytest.mark.parametrize("fps", [True, 0, -24.0, float("nan"), float("inf"), "30", None])
def test_bad_fps(tmp_path, fps):
    path = tmp_path / "fps.3ds"
    path.write_bytes(small_file())
    with pytest.raises(ValueError, match="fps must be a positive finite number"):
        read_3ds(path, fps=fps)


@pytest.mark.parametrize("tail", [b"\0", b"\0" * 3, b"\0" * 6, b"\xff" * 7, bytes(512)])
def test_bytes_after_the_main_chunk_are_not_read(tmp_path, tail):
    """lib3ds reads the main chunk and stops; padding after it was refused."""
    data = small_file()
    scene = read(tmp_path, data + tail)
    assert [node.name for node in scene.nodes] == [node.name for node in read(tmp_path,
                                                                             data).nodes]


def test_a_main_chunk_past_the_end_is_an_error(tmp_path):
    data = small_file()
    with pytest.raises(ThreeDSError, match=r"chunk 0x4D4D at byte 0: length \d+ runs past "
                                           r"the file's end"):
        read(tmp_path, data[:-1])
    with pytest.raises(ThreeDSError, match="chunk 0x4D4D at byte 0: length 5 is shorter"):
        read(tmp_path, data[:2] + struct.pack("<I", 5) + data[6:])


def test_errors_name_the_file_first(tmp_path):
    data = small_file()
    with pytest.raises(ThreeDSError) as caught:
        read(tmp_path, data[:-1])
    path = next(tmp_path.glob("*.3ds"))
    assert str(caught.value).startswith(f"{path}: chunk 0x4D4D at byte 0: ")
