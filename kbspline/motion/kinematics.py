"""Forward kinematics: joint positions in the world, all frames at once."""
from __future__ import annotations

from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..quaternion import quat_multiply, quat_to_matrix
from .clip import POSITION_CHANNELS, Motion, check_motion


def local_offsets(motion):
    """(J, F, 3) each joint's offset from its parent: the position channels
    where a joint has them (they replace OFFSET, as exporters write them),
    else OFFSET."""
    translations = motion.translations()
    out = np.empty_like(translations)
    for j, joint in enumerate(motion.joints):
        if any(c in POSITION_CHANNELS for c in joint.channels):
            out[j] = translations[j]
        else:
            out[j] = joint.offset
    return out


def world_positions(motion: Motion, rotations: Optional[ArrayLike] = None,
                    offsets: Optional[ArrayLike] = None
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Forward kinematics: world positions and rotations of every joint.

    Parameters
    ----------
    motion : Motion
        The clip.
    rotations : array_like (J, F, 4), optional
        Local rotations, (w, x, y, z); default the motion's own.
    offsets : array_like (J, F, 3), optional
        Local offsets; default the position channels where a joint has them,
        else its OFFSET.

    Returns
    -------
    positions : ndarray (F, J, 3)
        World positions of the joints.
    rotations : ndarray (J, F, 4)
        World rotations.
    """
    check_motion(motion, "motion")
    rot = motion.rotations() if rotations is None else np.asarray(rotations, dtype=np.float64)
    off = local_offsets(motion) if offsets is None else np.asarray(offsets, dtype=np.float64)
    J, F = rot.shape[:2]
    world_rot = np.empty_like(rot)
    world_pos = np.empty((J, F, 3))
    for j, joint in enumerate(motion.joints):  # parents come before children
        if joint.parent < 0:
            world_rot[j] = rot[j]
            world_pos[j] = off[j]
        else:
            p = joint.parent
            turn = quat_to_matrix(world_rot[p])
            world_pos[j] = world_pos[p] + np.einsum("fij,fj->fi", turn, off[j])
            world_rot[j] = quat_multiply(world_rot[p], rot[j])
    return world_pos.transpose(1, 0, 2), world_rot
