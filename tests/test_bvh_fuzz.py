"""Property-based BVH tests: random hierarchies and values round-trip
through write_bvh and read_bvh bit for bit; byte-mutated files give a
consistent Motion or a BvhError naming a line, never another exception, and
are left as they were."""
import pathlib
import re
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbspline.motion import BvhError, Joint, Motion, read_bvh, write_bvh
from kbspline.motion.clip import CHANNELS
from mocap import CLIPS
from test_bvh_robust import assert_identical
from test_motion import CHAIN

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")),
                min_size=1, max_size=8).filter(lambda s: not any(c.isspace() for c in s))
finite = st.floats(allow_nan=False, allow_infinity=False)
triples = st.lists(finite, min_size=3, max_size=3).map(np.array)


@st.composite
def motions(draw):
    """A random Motion a BVH file can hold: joints in depth-first order
    (each joint's parent lies on the path from a root to the joint before
    it), distinct channels in any order, any finite doubles."""
    joints, path = [], []
    for j in range(draw(st.integers(1, 8))):
        cut = draw(st.integers(0, len(path))) if j else 0
        path = path[:cut]
        channels = draw(st.permutations(CHANNELS).flatmap(
            lambda p: st.integers(0 if j else 1, len(p)).map(lambda n: list(p[:n]))))
        end_site = draw(st.none() | triples)
        joints.append(Joint(draw(names), path[-1] if path else -1, draw(triples), channels,
                            end_site))
        path.append(j)
    width = sum(len(joint.channels) for joint in joints)
    frames = draw(st.lists(st.lists(finite, min_size=width, max_size=width), min_size=1,
                           max_size=4))
    frame_time = draw(st.floats(min_value=0.0, exclude_min=True, allow_infinity=False))
    return Motion(joints, frame_time, np.array(frames, dtype=np.float64))


@FUZZ
@given(motions())
def test_random_motions_round_trip_bit_identically(motion):
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "m.bvh"
        write_bvh(motion, path)
        assert_identical(read_bvh(path), motion)


SOURCES = [CHAIN.encode()] + [path.read_bytes() for path in CLIPS[:1]]


@st.composite
def mutated(draw):
    """A source file with a few bytes replaced, inserted or deleted."""
    data = bytearray(draw(st.sampled_from(SOURCES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        kind = draw(st.sampled_from(["replace", "insert", "delete", "truncate"]))
        byte = draw(st.integers(0, 255) | st.sampled_from(b" \n\r\t{}-.e0123456789"))
        if kind == "replace":
            data[at] = byte
        elif kind == "insert":
            data.insert(at, byte)
        elif kind == "delete":
            del data[at]
        else:
            del data[at:]
        if not data:
            break
    return bytes(data)


@FUZZ
@given(mutated())
def test_mutated_files_read_or_fail_clearly(data):
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "m.bvh"
        path.write_bytes(data)
        try:
            motion = read_bvh(path)
        except BvhError as exc:
            line = int(re.match(rf"{re.escape(str(path))}:(\d+): ", str(exc)).group(1))
            assert 1 <= line <= max(1, len(re.findall(rb"\r\n|\r|\n", data)) + 1)
        else:
            assert_consistent(motion)
            write_bvh(motion, path.with_suffix(".out"))
            assert_identical(read_bvh(path.with_suffix(".out")), motion)
        assert path.read_bytes() == data


def assert_consistent(motion):
    assert all(-1 <= joint.parent < j for j, joint in enumerate(motion.joints))
    assert motion.frames.shape[1] == sum(len(joint.channels) for joint in motion.joints) > 0
    assert motion.num_frames >= 1 and np.all(np.isfinite(motion.frames))
    assert np.isfinite(motion.frame_time) and motion.frame_time > 0
    assert np.all(np.isfinite(motion.rotations()))
