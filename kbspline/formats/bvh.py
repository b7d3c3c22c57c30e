"""BVH files: reading and writing motion clips.

A BVH file is a hierarchy (joints with offsets and channel lists, rotation
channels in any order) followed by frames of channel values.  Rotation
channels are intrinsic Euler angles in degrees, applied in the order they
are listed (``Zrotation Xrotation Yrotation`` is intrinsic "ZXY"); a joint
with one or two rotation channels turns about those axes only.

Files are read as UTF-8 (BVH writers write ASCII, a part of it), with or
without a byte order mark; lines end in LF, CR LF or CR.
"""
from __future__ import annotations

import array
import codecs
import math
import os
import pathlib
import re
from typing import Optional, Union

import numpy as np

from ..motion.clip import CHANNELS, Joint, Motion, check_motion
from .errors import FormatError
from .gltf.playback import GltfChannel
from .scene import Channel, Node, Scene, Skin


class BvhError(FormatError):
    """A malformed BVH file; the message names the file, line and reason."""


_LINE_BREAK = r"\r\n|\r|\n"
_MAX_COUNT_DIGITS = 18  # counts fit an int64; int() refuses very long digit strings


def read_bvh(path: Union[str, os.PathLike[str]]) -> Motion:
    """Reads a BVH file.

    Parameters
    ----------
    path : str or os.PathLike
        The file, read as UTF-8 (ASCII included).

    Returns
    -------
    Motion

    Raises
    ------
    BvhError
        For a malformed file, naming the file, the line and the reason.
    """
    path = pathlib.Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BvhError(f"{path}: cannot be read: {exc.strerror}") from None
    words = _Words(path, _lines(path, data))
    joints = _read_hierarchy(words)
    frame_time, count = _read_motion_header(words)
    frames = _read_frames(words, count, sum(len(joint.channels) for joint in joints))
    return Motion(joints, frame_time, frames)


def read_bvh_scene(path: Union[str, os.PathLike[str]]) -> Scene:
    """Reads a BVH file as a `kbspline.formats.scene.Scene` (`read_scene` does, for ``.bvh``).

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    Scene
        See `motion_scene`.

    Raises
    ------
    BvhError
        As `read_bvh`.
    """
    return motion_scene(read_bvh(path))


def motion_scene(motion: Motion) -> Scene:
    """A clip as a Scene: one node per joint (kind ``"joint"``, rest translation
    its OFFSET, an End Site's offset in ``extras["end_site"]``), one skin of
    them all, and one animation ``"bvh"`` whose channels play the frames back
    as glTF LINEAR samplers do (slerp between frames for rotations): rotation
    for every joint, translation for joints with position channels.

    Parameters
    ----------
    motion : Motion
        The clip.

    Returns
    -------
    Scene
        With ``source="bvh"``.
    """
    check_motion(motion, "motion")
    rotations, translations = motion.rotations(), motion.translations()
    nodes, names = [], set()
    channels: dict[tuple[str, str], Channel] = {}
    for j, joint in enumerate(motion.joints):
        name = joint.name if joint.name not in names else f"{joint.name}#{j}"
        names.add(name)
        extras = {} if joint.end_site is None else {"end_site": np.array(joint.end_site)}
        children = [k for k, child in enumerate(motion.joints) if child.parent == j]
        nodes.append(Node(name, joint.parent, children, np.array(joint.offset, dtype=float),
                          np.array([1.0, 0.0, 0.0, 0.0]), np.ones(3), kind="joint",
                          extras=extras))
        channels[name, "rotation"] = GltfChannel(motion.times, rotations[j][:, [1, 2, 3, 0]],
                                                 "LINEAR", "rotation")
        if any(c.endswith("position") for c in joint.channels):
            channels[name, "translation"] = GltfChannel(motion.times, translations[j],
                                                        "LINEAR", "translation")
    return Scene(nodes, [Skin("bvh", list(range(len(nodes))))], {"bvh": channels},
                 source="bvh")


def _lines(path, data):
    """The file's lines; a byte that is not UTF-8 is a BvhError naming its line."""
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = len(re.findall(_LINE_BREAK.encode(), data[:exc.start])) + 1
        if not data.lstrip().startswith(b"HIERARCHY"):   # a .glb or other binary file
            raise BvhError(f"{path}:{line}: not a BVH file (it does not start with "
                           f"HIERARCHY, and byte {data[exc.start]:#04x} is not text)") from None
        raise BvhError(f"{path}:{line}: byte {data[exc.start]:#04x} is not UTF-8 text") from None
    lines = re.split(_LINE_BREAK, text)
    if lines[-1] == "":
        lines.pop()
    return lines


class _Words:
    """The words of a file's lines in order, each known by its line."""

    def __init__(self, path, lines):
        self.path, self.lines = path, lines
        self.line = 0       # lines begun: the number of the current word's line
        self.pending = []   # the words of that line not yet taken, the next one last

    def fail(self, reason, line=None):
        raise BvhError(f"{self.path}:{max(1, self.line if line is None else line)}: {reason}")

    def peek(self):
        """The next word, or None at the end of the file."""
        while not self.pending and self.line < len(self.lines):
            self.pending = self.lines[self.line].split()[::-1]
            self.line += 1
        return self.pending[-1] if self.pending else None

    def take(self, expected=None):
        word = self.peek()
        if word is None:
            self.fail(f"unexpected end of file (expected {expected and repr(expected) or 'more'})")
        if expected is not None and word != expected:
            self.fail(f"expected {expected!r}, found {word!r}")
        return self.pending.pop()

    def number(self, what):
        word = self.take()
        try:
            value = float(word)
        except ValueError:
            self.fail(f"{what} must be a number, not {word!r}")
        if not math.isfinite(value):
            self.fail(f"{what} must be finite, not {word!r}")
        return value

    def count(self, what):
        word = self.take()
        if not (word.isascii() and word.isdigit()):
            self.fail(f"{what} needs a count, not {word!r}")
        if len(word) > _MAX_COUNT_DIGITS:
            self.fail(f"{what} {word} is too large")
        return int(word)


def _read_hierarchy(words):
    """The joints under every ROOT, depth first as the file lists them.  Open
    joints are kept on a list, not the call stack, so any depth reads."""
    words.take("HIERARCHY")
    words.take("ROOT")
    joints = []
    while True:
        open_joints = [_read_joint(words, joints, -1)]
        while open_joints:
            word = words.take()
            if word == "JOINT":
                open_joints.append(_read_joint(words, joints, open_joints[-1]))
            elif word == "End":
                _read_end_site(words, joints[open_joints[-1]])
            elif word == "}":
                open_joints.pop()
            else:
                words.fail(f"expected JOINT, End Site or '}}', found {word!r}")
        if words.peek() != "ROOT":
            return joints
        words.take()


def _read_joint(words, joints, parent):
    """Appends the joint whose name comes next (its OFFSET and CHANNELS
    read); returns its index."""
    name = words.take()
    words.take("{")
    words.take("OFFSET")
    offset = np.array([words.number("OFFSET") for _ in range(3)])
    words.take("CHANNELS")
    count = words.count("CHANNELS")
    if count > len(CHANNELS):
        words.fail(f"CHANNELS {count}: a joint has at most {len(CHANNELS)} channels")
    channels = []
    for _ in range(count):
        channel = words.take()
        if channel not in CHANNELS:
            words.fail(f"unknown channel {channel!r}")
        if channel in channels:
            words.fail(f"channel {channel!r} listed twice")
        channels.append(channel)
    joints.append(Joint(name, parent, offset, channels))
    return len(joints) - 1


def _read_end_site(words, joint):
    words.take("Site")
    if joint.end_site is not None:
        words.fail(f"joint {joint.name!r} has a second End Site")
    words.take("{")
    words.take("OFFSET")
    joint.end_site = np.array([words.number("End Site OFFSET") for _ in range(3)])
    words.take("}")


def _read_motion_header(words):
    """(frame time, number of frames) from MOTION to the end of Frame Time's line."""
    words.take("MOTION")
    words.take("Frames:")
    count = words.count("Frames:")
    if count == 0:
        words.fail("Frames: 0, but a clip needs at least one frame")
    words.take("Frame")
    words.take("Time:")
    frame_time = words.number("Frame Time")
    if not frame_time > 0:
        words.fail(f"Frame Time must be positive, not {frame_time}")
    if words.pending:
        words.fail(f"unexpected {words.pending[-1]!r} after Frame Time")
    return frame_time, count


def _read_frames(words, count, channels):
    """(count, channels) values: each non-blank line after Frame Time's is a
    frame.  Grows with the lines read, never with the count announced."""
    if channels == 0:
        words.fail("the hierarchy has no channels for frames to set")
    values = array.array("d")
    last = words.line
    for last in range(words.line + 1, len(words.lines) + 1):
        row = words.lines[last - 1].split()
        if not row:
            continue
        if len(values) == count * channels:
            words.fail(f"more frames than Frames: {count}", last)
        if len(row) != channels:
            words.fail(f"a frame needs {channels} numbers (one per channel), found {len(row)}",
                       last)
        values.extend(_frame_values(words, row, last))
    if len(values) < count * channels:
        words.fail(f"the file ends after {len(values) // channels} of Frames: {count}", last)
    return np.frombuffer(values, dtype=np.float64).reshape(count, channels)


def _frame_values(words, row, line):
    try:
        values = [float(word) for word in row]
    except ValueError:
        bad = next(word for word in row if not _is_float(word))
        words.fail(f"frame values must be numbers, not {bad!r}", line)
    if not all(map(math.isfinite, values)):
        bad = next(word for word, value in zip(row, values) if not math.isfinite(value))
        words.fail(f"frame values must be finite, not {bad!r}", line)
    return values


def _is_float(word):
    try:
        float(word)
        return True
    except ValueError:
        return False


def write_bvh(motion: Motion, path: Union[str, os.PathLike[str]],
              precision: Optional[int] = None) -> None:
    """Writes a motion as a BVH file.

    Parameters
    ----------
    motion : Motion
        The clip.
    path : str or os.PathLike
        The file to write.
    precision : int, optional
        Significant digits per number.  By default each number is written in
        the shortest form that reads back as the same float64, so `read_bvh`
        returns the motion bit for bit.

    Raises
    ------
    ValueError
        For a motion no BVH file can hold (nothing is written) or a bad
        `precision`.
    """
    check_motion(motion, "motion")
    if precision is None:
        def number(value):
            return repr(float(value))
    elif isinstance(precision, int) and not isinstance(precision, bool) and precision >= 1:
        def number(value):
            return f"{float(value):.{precision}g}"
    else:
        raise ValueError(f"precision must be None or a positive int, not {precision!r}")
    _check_writable(motion)
    text = "\n".join(_bvh_lines(motion, lambda values: " ".join(map(number, values))))
    pathlib.Path(path).write_bytes((text + "\n").encode("utf-8"))


def _check_writable(motion):
    """ValueError naming the first part of `motion` a BVH file cannot hold."""
    for j, joint in enumerate(motion.joints):
        where = f"joint {j} ({joint.name!r})"
        if not joint.name or any(c.isspace() for c in joint.name):
            raise ValueError(f"{where}: a BVH joint name is one word")
        if not (joint.parent == -1 or 0 <= joint.parent < j):
            raise ValueError(f"{where}: parent {joint.parent} must be -1 or an earlier joint")
        if (len(joint.channels) != len(set(joint.channels))
                or not set(joint.channels) <= set(CHANNELS)):
            raise ValueError(f"{where}: channels {joint.channels} must be distinct, of {CHANNELS}")
        for what, value in (("offset", joint.offset), ("end_site", joint.end_site)):
            if value is not None and (np.shape(value) != (3,) or not np.all(np.isfinite(value))):
                raise ValueError(f"{where}: {what} must be 3 finite numbers")
    order = _depth_first(motion.joints)
    if order != list(range(len(motion.joints))):
        wrong = next(k for k, j in enumerate(order) if k != j)
        raise ValueError(f"joint {wrong} ({motion.joints[wrong].name!r}) is out of the "
                         f"depth-first order a BVH file lists joints in")
    channels = sum(len(joint.channels) for joint in motion.joints)
    shape = np.shape(motion.frames)
    if channels == 0 or len(shape) != 2 or shape[0] < 1 or shape[1] != channels:
        raise ValueError(f"frames must be (F >= 1, {channels} channels), not {shape}")
    if not np.all(np.isfinite(motion.frames)):
        row, col = np.argwhere(~np.isfinite(motion.frames))[0]
        raise ValueError(f"frames[{row}, {col}] is {motion.frames[row, col]}, not finite")
    if not (math.isfinite(motion.frame_time) and motion.frame_time > 0):
        raise ValueError(f"frame_time must be finite and positive, not {motion.frame_time}")


def _children(joints):
    children = [[] for _ in joints]
    for j, joint in enumerate(joints):
        if joint.parent >= 0:
            children[joint.parent].append(j)
    return children


def _depth_first(joints):
    """Joint indices in the order a BVH file lists them: each root, then its
    children's subtrees in index order."""
    children, order = _children(joints), []
    stack = [j for j in reversed(range(len(joints))) if joints[j].parent < 0]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children[j]))
    return order


def _bvh_lines(motion, numbers):
    """The file's lines; joints indented by one tab a level, without recursion."""
    yield "HIERARCHY"
    children = _children(motion.joints)
    stack = [(j, False) for j in reversed(range(len(motion.joints)))
             if motion.joints[j].parent < 0]
    depth = 0
    while stack:
        j, closing = stack.pop()
        joint = motion.joints[j]
        if closing:
            pad = "\t" * depth
            if joint.end_site is not None:
                yield from (f"{pad}End Site", f"{pad}{{",
                            f"{pad}\tOFFSET {numbers(joint.end_site)}", f"{pad}}}")
            depth -= 1
            yield "\t" * depth + "}"
            continue
        pad = "\t" * depth
        yield from (f"{pad}{'ROOT' if joint.parent < 0 else 'JOINT'} {joint.name}", f"{pad}{{",
                    f"{pad}\tOFFSET {numbers(joint.offset)}",
                    f"{pad}\tCHANNELS {len(joint.channels)} {' '.join(joint.channels)}")
        depth += 1
        stack.append((j, True))
        stack.extend((child, False) for child in reversed(children[j]))
    yield "MOTION"
    yield f"Frames: {motion.num_frames}"
    yield f"Frame Time: {numbers([motion.frame_time])}"
    yield from (numbers(row) for row in np.asarray(motion.frames, dtype=np.float64).tolist())
