"""A motion clip: a joint hierarchy and frames of channel values, as BVH
has them, with its joint rotations as quaternions."""
from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..quaternion import quat_from_euler, quat_to_euler

POSITION_CHANNELS = ("Xposition", "Yposition", "Zposition")
ROTATION_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")
CHANNELS = POSITION_CHANNELS + ROTATION_CHANNELS


@dataclasses.dataclass
class Joint:
    """One joint of a BVH hierarchy.

    Attributes
    ----------
    name : str
        The joint's name.
    parent : int
        Index of the parent joint, -1 for a root; parents come before their
        children.
    offset : ndarray (3,)
        Offset from the parent joint.
    channels : list of str
        Channel names in file order, e.g. ``["Zrotation", "Xrotation",
        "Yrotation"]``.
    end_site : ndarray (3,) or None
        Offset of the joint's End Site, if it has one.
    """

    name: str
    parent: int                 # index of the parent joint, -1 for a root
    offset: NDArray[np.float64]          # (3,)
    channels: list[str]                 # channel names in file order
    end_site: Optional[NDArray[np.float64]] = None  # (3,) offset of an End Site, if any


@dataclasses.dataclass
class Motion:
    """A BVH clip: a joint hierarchy and frames of channel values.

    Attributes
    ----------
    joints : list of Joint
        The joints in file order, parents before children.
    frame_time : float
        Seconds between frames.
    frames : ndarray (F, C)
        Channel values, C the channels of all joints in file order (degrees
        for rotations, the file's units for positions).
    """

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
        """The columns of `frames` that hold joint `j`'s channels.

        Parameters
        ----------
        j : int
            Joint index.

        Returns
        -------
        slice
        """

        start = sum(len(joint.channels) for joint in self.joints[:j])
        return slice(start, start + len(self.joints[j].channels))

    def rotation_order(self, j: int) -> str:
        """The joint's rotation channels as an intrinsic Euler order.

        Parameters
        ----------
        j : int
            Joint index.

        Returns
        -------
        str
            E.g. ``"ZXY"``, or ``""`` when the joint has no rotation channels.
        """
        return "".join(c[0] for c in self.joints[j].channels if c in ROTATION_CHANNELS)

    def rotation_columns(self) -> list[int]:
        """Indices of every rotation channel in the frames."""
        return [self.channel_slice(j).start + k for j, joint in enumerate(self.joints)
                for k, c in enumerate(joint.channels) if c in ROTATION_CHANNELS]

    def align_turns(self, row: int, reference: ArrayLike) -> None:
        """Shifts rotation channels by whole turns to continue a reference frame.

        Parameters
        ----------
        row : int
            The rotation channels of frames ``row`` and after are shifted so that
            frame `row` lies on the same turn as `reference`.
        reference : array_like (C,)
            A frame of channel values.
        """
        cols = self.rotation_columns()
        turns = np.round((np.asarray(reference, dtype=np.float64)[cols] - self.frames[row, cols]) / 360.0)
        self.frames[row:, cols] += 360.0 * turns

    def _check_columns(self) -> None:
        """A ValueError unless `frames` has a column for each channel of
        the joints (rotations() would read its appended zeros for a missing
        one)."""
        count = sum(len(joint.channels) for joint in self.joints)
        if self.frames.ndim != 2 or self.frames.shape[1] != count:
            raise ValueError(f"motion.frames has shape {self.frames.shape}; its joints have "
                             f"{count} channels, so it needs (frames, {count})")

    def rotations(self) -> NDArray[np.float64]:
        """(J, F, 4) local joint rotations, (w, x, y, z); identity for
        joints without rotation channels."""
        self._check_columns()
        out = np.zeros((len(self.joints), self.num_frames, 4))  # identity (np.tile cost more)
        out[..., 0] = 1.0
        # one conversion per Euler order for all its joints (the core converts
        # each frame alone, so this is bit for bit the per-joint result);
        # missing axes read a column of zeros appended to the frames
        frames = np.concatenate([self.frames, np.zeros((self.num_frames, 1))], axis=1)
        zero, start = frames.shape[1] - 1, 0
        groups: dict[str, tuple[list[int], list[list[int]]]] = {}  # order -> joints, columns
        # channel lists -> their rotation columns and order: joints mostly share one
        layouts: dict[tuple[str, ...], tuple[list[int], str]] = {}
        for j, joint in enumerate(self.joints):
            channels = tuple(joint.channels)
            if channels not in layouts:
                axes = [k for k, c in enumerate(channels) if c in ROTATION_CHANNELS]
                layouts[channels] = axes, _three_axes("".join(channels[k][0] for k in axes))
            axes, order = layouts[channels]
            if axes:
                members, columns = groups.setdefault(order, ([], []))
                members.append(j)
                columns.append([start + k for k in axes] + [zero] * (3 - len(axes)))
            start += len(channels)
        for order, (members, columns) in groups.items():
            out[members] = _from_euler(frames[:, columns], order)
        return out

    def translations(self) -> NDArray[np.float64]:
        """(J, F, 3) local translations from position channels (zero where a
        joint has none)."""
        self._check_columns()
        out = np.zeros((len(self.joints), self.num_frames, 3))
        joints, axes, cols, start = [], [], [], 0  # one gather for every position channel
        # channel lists -> their position channels' (column, axis): joints mostly share one
        layouts: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        for j, joint in enumerate(self.joints):
            channels = tuple(joint.channels)
            if channels not in layouts:
                layouts[channels] = [(k, POSITION_CHANNELS.index(c))
                                     for k, c in enumerate(channels) if c in POSITION_CHANNELS]
            for k, axis in layouts[channels]:
                joints.append(j)
                axes.append(axis)
                cols.append(start + k)
            start += len(channels)
        out[joints, :, axes] = self.frames[:, cols].T
        return out

    def with_frames(self, rotations: ArrayLike, translations: ArrayLike,
                    frame_time: float) -> Motion:
        """A new Motion with these local rotations and translations.

        Parameters
        ----------
        rotations : array_like (J, F, 4)
            Local joint rotations, (w, x, y, z).
        translations : array_like (J, F, 3)
            Local translations, written to the joints' position channels.
        frame_time : float
            The new clip's frame time.

        Returns
        -------
        Motion
            The same joints.  Euler angles are unwrapped along time so channels
            stay continuous; a joint with one or two rotation channels keeps the
            rotation's part about its axes (all of it for rotations about them).
        """
        rotations = np.asarray(rotations, dtype=np.float64)
        translations = np.asarray(translations, dtype=np.float64)
        F = rotations.shape[1]
        frames = np.zeros((F, self.frames.shape[1]))
        for j, joint in enumerate(self.joints):
            base = self.channel_slice(j).start
            order = self.rotation_order(j)
            if order:
                angles = np.unwrap(_euler_angles(rotations[j], order), axis=0)
                rot = [k for k, c in enumerate(joint.channels) if c in ROTATION_CHANNELS]
                frames[:, [base + k for k in rot]] = np.degrees(angles)
            for k, c in enumerate(joint.channels):
                if c in POSITION_CHANNELS:
                    frames[:, base + k] = translations[j, :, POSITION_CHANNELS.index(c)]
        return Motion(self.joints, float(frame_time), frames)


def _three_axes(order):
    """`order` completed by its missing axes, whose angles are then zero."""
    return order + "".join(axis for axis in "XYZ" if axis not in order)


def _euler_angles(q, order):
    """(F, len(order)) intrinsic Euler angles, radians, of rotations q about
    the axes of `order`; with one or two axes, the rotations' part about them."""
    if len(order) == 3:
        return quat_to_euler(q, order)
    axes = np.eye(3)[["XYZ".index(axis) for axis in order]]
    w, qa = q[:, 0], q[:, 1:] @ axes[0]
    if len(order) == 1:
        return 2.0 * np.arctan2(qa, w)[:, None]
    qb, qc = q[:, 1:] @ axes[1], q[:, 1:] @ np.cross(axes[0], axes[1])
    # q = (cos a, sin a A)(cos b, sin b B), half-angles a, b about orthogonal
    # axes A, B, has [[w, qb], [qa, qc]] = [cos a, sin a]^T [cos b, sin b]
    # (qc along A x B): a from its larger column, then b from the rows
    # weighted by (cos a, sin a)
    a = np.where(w * w + qa * qa >= qb * qb + qc * qc, np.arctan2(qa, w), np.arctan2(qc, qb))
    b = np.arctan2(np.cos(a) * qb + np.sin(a) * qc, np.cos(a) * w + np.sin(a) * qa)
    return 2.0 * np.column_stack([a, b])


def _from_euler(angles, order):
    """(joints, F, 4) rotations of angles (F, joints, 3) in degrees: converted
    as gathered, as transposed first the conversion copied them row by row
    (31 000 copies of three angles on 131_01); on an error, again transposed
    first, so that the message names the angle as (joint, frame)."""
    try:
        return quat_from_euler(angles, order, degrees=True).transpose(1, 0, 2)
    except ValueError:
        return quat_from_euler(angles.transpose(1, 0, 2), order, degrees=True)


def check_motion(value: object, name: str = "motion") -> None:
    """Raises a TypeError naming the argument unless `value` is a Motion.

    Parameters
    ----------
    value : object
        What the caller was given (an argument in the wrong place reads as
        one).
    name : str
        The argument's name, for the message.

    Raises
    ------
    TypeError
        If `value` is not a `Motion`.
    """
    if not isinstance(value, Motion):
        raise TypeError(f"{name} must be a Motion (from read_bvh, resample, ...), "
                        f"not {type(value).__name__}")
