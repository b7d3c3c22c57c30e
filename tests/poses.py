"""kbspline's own posing of a clip between its frames, for the tests that
check what other tools play back: squad and KB splines through the frames,
forward kinematics, End Sites last."""
import numpy as np

from kbspline import PositionSpline, RotationSpline, quat_to_matrix
from kbspline.motion import world_positions
from kbspline.motion.clip import POSITION_CHANNELS
from kbspline.motion.kinematics import local_offsets


def spline_world(motion, t):
    """(M, J + E, 3) joint and End Site positions at times t."""
    rotations = RotationSpline(motion.times, motion.rotations())(t)
    offsets = np.broadcast_to(np.array([j.offset for j in motion.joints])[:, None],
                              rotations.shape[:2] + (3,)).copy()
    moving = [j for j, joint in enumerate(motion.joints)
              if any(c in POSITION_CHANNELS for c in joint.channels)]
    if moving:
        offsets[moving] = PositionSpline(motion.times, local_offsets(motion)[moving])(t)
    positions, world_rot = world_positions(motion, rotations, offsets)
    ends = [(j, joint.end_site) for j, joint in enumerate(motion.joints)
            if joint.end_site is not None]
    tips = [positions[:, j] + np.einsum("mij,j->mi", quat_to_matrix(world_rot[j]), site)
            for j, site in ends]
    return np.concatenate([positions, np.stack(tips, axis=1)], axis=1) if tips else positions


def names_with_ends(motion):
    """Joint names, then "<joint>_end" for each End Site, as spline_world
    orders them."""
    return ([j.name for j in motion.joints]
            + [f"{j.name}_end" for j in motion.joints if j.end_site is not None])
