"""BVH files: reading, writing, and their joint rotations as quaternions.

A BVH file is a hierarchy (joints with offsets and channel lists, rotation
channels in any order) followed by frames of channel values.  Rotation
channels are intrinsic Euler angles in degrees, applied in the order they
are listed (``Zrotation Xrotation Yrotation`` is intrinsic "ZXY").
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..quaternion import quat_from_euler, quat_to_euler

POSITION_CHANNELS = ("Xposition", "Yposition", "Zposition")
ROTATION_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")


class BvhError(ValueError):
    """A malformed BVH file; the message names the file, line and reason."""


@dataclasses.dataclass
class Joint:
    name: str
    parent: int                 # index of the parent joint, -1 for a root
    offset: NDArray[np.float64]          # (3,)
    channels: list[str]                 # channel names in file order
    end_site: Optional[NDArray[np.float64]] = None  # (3,) offset of an End Site, if any


@dataclasses.dataclass
class Motion:
    """A BVH clip: joints in file order and frames of channel values
    (F, C), C the channels of all joints in file order."""

    joints: list[Joint]
    frame_time: float
    frames: NDArray[np.float64]

    @property
    def num_frames(self) -> int:
        return self.frames.shape[0]

    @property
    def times(self) -> NDArray[np.float64]:
        return np.arange(self.num_frames, dtype=np.float64) * self.frame_time

    def channel_slice(self, j: int) -> slice:
        start = sum(len(joint.channels) for joint in self.joints[:j])
        return slice(start, start + len(self.joints[j].channels))

    def rotation_order(self, j: int) -> str:
        """The joint's rotation channels as an intrinsic Euler order, e.g.
        "ZXY", or "" when it has none."""
        return "".join(c[0] for c in self.joints[j].channels if c in ROTATION_CHANNELS)

    def rotation_columns(self) -> list[int]:
        """Indices of every rotation channel in the frames."""
        return [self.channel_slice(j).start + k for j, joint in enumerate(self.joints)
                for k, c in enumerate(joint.channels) if c in ROTATION_CHANNELS]

    def align_turns(self, row: int, reference: ArrayLike) -> None:
        """Shifts the rotation channels of frames row.. by whole turns so that
        frame `row` lies on the same turn as `reference` (a frame of values)."""
        cols = self.rotation_columns()
        turns = np.round((np.asarray(reference, dtype=np.float64)[cols] - self.frames[row, cols]) / 360.0)
        self.frames[row:, cols] += 360.0 * turns

    def rotations(self) -> NDArray[np.float64]:
        """(J, F, 4) local joint rotations, (w, x, y, z); identity for
        joints without rotation channels."""
        out = np.tile([1.0, 0.0, 0.0, 0.0], (len(self.joints), self.num_frames, 1))
        for j, joint in enumerate(self.joints):
            order = self.rotation_order(j)
            if order:
                cols = [self.channel_slice(j).start + k for k, c in enumerate(joint.channels)
                        if c in ROTATION_CHANNELS]
                out[j] = quat_from_euler(self.frames[:, cols], order, degrees=True)
        return out

    def translations(self) -> NDArray[np.float64]:
        """(J, F, 3) local translations from position channels (zero where a
        joint has none)."""
        out = np.zeros((len(self.joints), self.num_frames, 3))
        for j, joint in enumerate(self.joints):
            base = self.channel_slice(j).start
            for k, c in enumerate(joint.channels):
                if c in POSITION_CHANNELS:
                    out[j, :, POSITION_CHANNELS.index(c)] = self.frames[:, base + k]
        return out

    def with_frames(self, rotations: ArrayLike, translations: ArrayLike,
                    frame_time: float) -> Motion:
        """A new Motion with these joints' local rotations (J, F, 4) and
        translations (J, F, 3) written back into each joint's channels.
        Euler angles are unwrapped along time so channels stay continuous."""
        rotations = np.asarray(rotations, dtype=np.float64)
        translations = np.asarray(translations, dtype=np.float64)
        F = rotations.shape[1]
        frames = np.zeros((F, self.frames.shape[1]))
        for j, joint in enumerate(self.joints):
            base = self.channel_slice(j).start
            order = self.rotation_order(j)
            if order:
                angles = np.unwrap(quat_to_euler(rotations[j], order), axis=0)
                rot = [k for k, c in enumerate(joint.channels) if c in ROTATION_CHANNELS]
                frames[:, [base + k for k in rot]] = np.degrees(angles)
            for k, c in enumerate(joint.channels):
                if c in POSITION_CHANNELS:
                    frames[:, base + k] = translations[j, :, POSITION_CHANNELS.index(c)]
        return Motion(self.joints, float(frame_time), frames)


def _fail(path, line, reason):
    raise BvhError(f"{path}:{line}: {reason}")


def read_bvh(path: Union[str, os.PathLike[str]]) -> Motion:
    """Reads a BVH file into a `Motion`; a malformed file is a `BvhError`
    naming the file, the line and the reason."""
    path = pathlib.Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise BvhError(f"{path}: cannot be read: {exc.strerror}") from None
    lines = text.splitlines()
    tokens = [(n + 1, word) for n, line in enumerate(lines) for word in line.split()]
    pos = 0

    def take(expected=None):
        nonlocal pos
        if pos >= len(tokens):
            _fail(path, len(lines), f"unexpected end of file (expected {expected or 'more'})")
        line, word = tokens[pos]
        if expected is not None and word != expected:
            _fail(path, line, f"expected {expected!r}, found {word!r}")
        pos += 1
        return line, word

    def number(what):
        line, word = take()
        try:
            return float(word)
        except ValueError:
            _fail(path, line, f"{what} must be a number, not {word!r}")

    take("HIERARCHY")
    joints: list[Joint] = []

    def parse_joint(parent, keyword_line):
        line, name = take()
        take("{")
        take("OFFSET")
        offset = np.array([number("OFFSET") for _ in range(3)])
        line, word = take("CHANNELS")
        line, count = take()
        if not count.isdigit():
            _fail(path, line, f"CHANNELS needs a count, not {count!r}")
        channels = [take()[1] for _ in range(int(count))]
        for c in channels:
            if c not in POSITION_CHANNELS + ROTATION_CHANNELS:
                _fail(path, line, f"unknown channel {c!r}")
        index = len(joints)
        joints.append(Joint(name, parent, offset, channels))
        while True:
            line, word = take()
            if word == "JOINT":
                parse_joint(index, line)
            elif word == "End":
                take("Site")
                take("{")
                take("OFFSET")
                joints[index].end_site = np.array([number("End Site OFFSET") for _ in range(3)])
                take("}")
            elif word == "}":
                return
            else:
                _fail(path, line, f"expected JOINT, End Site or '}}', found {word!r}")

    line, word = take()
    if word != "ROOT":
        _fail(path, line, f"expected ROOT, found {word!r}")
    parse_joint(-1, line)
    while pos < len(tokens) and tokens[pos][1] == "ROOT":
        line, _ = take()
        parse_joint(-1, line)
    take("MOTION")
    take("Frames:")
    line, count = take()
    if not count.isdigit():
        _fail(path, line, f"Frames: needs a count, not {count!r}")
    take("Frame")
    take("Time:")
    frame_time = number("Frame Time")
    if not frame_time > 0:
        _fail(path, tokens[pos - 1][0], f"Frame Time must be positive, not {frame_time}")
    n_channels = sum(len(j.channels) for j in joints)
    values = tokens[pos:]
    if len(values) != int(count) * n_channels:
        _fail(path, values[-1][0] if values else len(lines),
              f"{int(count)} frames of {n_channels} channels need {int(count) * n_channels} "
              f"numbers, found {len(values)}")
    bad = next(((n, w) for n, w in values if not _is_float(w)), None)
    if bad:
        _fail(path, bad[0], f"frame values must be numbers, not {bad[1]!r}")
    frames = np.array([float(w) for _, w in values]).reshape(int(count), n_channels)
    if not np.all(np.isfinite(frames)):
        row = int(np.argwhere(~np.isfinite(frames))[0, 0])
        _fail(path, values[row * n_channels][0], "frame values must be finite")
    return Motion(joints, frame_time, frames)


def _is_float(word):
    try:
        float(word)
        return True
    except ValueError:
        return False


def write_bvh(motion: Motion, path: Union[str, os.PathLike[str]], precision: int = 6) -> None:
    """Writes `motion` as a BVH file, numbers to `precision` significant digits."""
    out = ["HIERARCHY"]
    fmt = f"{{:.{precision}g}}"

    def numbers(values):
        return " ".join(fmt.format(float(v)) for v in values)

    def write_joint(j, depth):
        joint = motion.joints[j]
        pad = "  " * depth
        out.append(f"{pad}{'ROOT' if joint.parent < 0 else 'JOINT'} {joint.name}")
        out.append(f"{pad}{{")
        out.append(f"{pad}  OFFSET {numbers(joint.offset)}")
        out.append(f"{pad}  CHANNELS {len(joint.channels)} {' '.join(joint.channels)}")
        for child in (k for k, c in enumerate(motion.joints) if c.parent == j):
            write_joint(child, depth + 1)
        if joint.end_site is not None:
            out.append(f"{pad}  End Site")
            out.append(f"{pad}  {{")
            out.append(f"{pad}    OFFSET {numbers(joint.end_site)}")
            out.append(f"{pad}  }}")
        out.append(f"{pad}}}")

    for root in (k for k, j in enumerate(motion.joints) if j.parent < 0):
        write_joint(root, 0)
    out.append("MOTION")
    out.append(f"Frames: {motion.num_frames}")
    out.append(f"Frame Time: {fmt.format(motion.frame_time)}")
    out.extend(numbers(row) for row in motion.frames)
    pathlib.Path(path).write_text("\n".join(out) + "\n")
