"""World-space error of a clip's local rotations and translations: the
points it is measured at (joints, End Sites, virtual vertices) and a
per-joint split of one world-space tolerance into local ones."""
from __future__ import annotations

import numpy as np

from ..quaternion import quat_to_matrix
from .clip import POSITION_CHANNELS


def _moves(joint):
    return any(c in POSITION_CHANNELS for c in joint.channels)


def vertex_positions(motion, rotations, translations, virtual_distance=None):
    """(F, V, 3) world positions of every measured point, and (V,) the joint
    whose frame carries each: joint origins, End Sites, and with
    `virtual_distance` three virtual vertices per joint at that distance along
    its local axes (as ACL measures error).  Local offsets are the
    translations where a joint has position channels, else OFFSET."""
    J, F = rotations.shape[:2]
    world_rot = np.empty((J, F, 3, 3))
    origin = np.empty((J, F, 3))
    points, owner = [], []
    for j, joint in enumerate(motion.joints):  # parents come before children
        offset = translations[j] if _moves(joint) else np.broadcast_to(joint.offset, (F, 3))
        turn = quat_to_matrix(rotations[j])
        if joint.parent < 0:
            world_rot[j], origin[j] = turn, offset
        else:
            p = joint.parent
            world_rot[j] = world_rot[p] @ turn
            origin[j] = origin[p] + np.einsum("fij,fj->fi", world_rot[p], offset)
        points.append(origin[j])
        owner.append(j)
        local = [] if joint.end_site is None else [joint.end_site]
        if virtual_distance is not None:
            local.extend(virtual_distance * np.eye(3))
        for site in local:
            points.append(origin[j] + world_rot[j] @ np.asarray(site, dtype=np.float64))
            owner.append(j)
    return np.stack(points, axis=1), np.array(owner)


def local_tolerances(motion, rotations, translations, position_tolerance,
                     virtual_distance=None):
    """(J,) angle and (J,) distance tolerances under which no measured point
    moves more than `position_tolerance` from where the clip puts it, to
    first order.  A point moves by at most the sum, over the joints that
    carry it, of d_a + theta_a r_a (d_a, theta_a the joint's translation and
    rotation errors, r_a the farthest point below it): each joint gets the
    share 1/n of the tolerance, n the longest chain of joints carrying a
    point below it, so every chain's shares sum to at most the tolerance.  A
    joint whose translation is constant gives its whole share to rotation;
    one with nothing below it rotates freely (infinite angle tolerance)."""
    points, owner = vertex_positions(motion, rotations, translations, virtual_distance)
    joints = motion.joints
    J = len(joints)
    chain = np.ones(J, dtype=int)  # joints carrying joint j's points: j and its ancestors
    for j, joint in enumerate(joints):  # parents come before children
        if joint.parent >= 0:
            chain[j] = chain[joint.parent] + 1
    longest, below = chain.copy(), [[j] for j in range(J)]
    for j in reversed(range(J)):
        p = joints[j].parent
        if p >= 0:
            longest[p] = max(longest[p], longest[j])
            below[p].extend(below[j])
    origin = points[:, [int(np.flatnonzero(owner == j)[0]) for j in range(J)]]
    reach = np.array([np.linalg.norm(points[:, np.isin(owner, below[a])] - origin[:, a, None],
                                     axis=-1).max() for a in range(J)])
    share = position_tolerance / longest
    constant = np.ptp(translations, axis=1).max(axis=-1) == 0.0
    moving = np.array([_moves(joint) for joint in joints]) & ~constant
    distance = np.where(moving, share / 2, np.inf)
    with np.errstate(divide="ignore"):
        angle = np.where(reach > 0, np.where(moving, share / 2, share) / reach, np.inf)
    return angle, distance
