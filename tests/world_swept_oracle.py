"""The world-space search with tangent keys as kbspline ran it in Python
before it moved to C (kb_reduce_world_swept, csrc/motion/reduce/kb_reduce_swept.c), kept
here to check the C one against: the same passes, the same order of joints
and ties, the same drop memories, the same rebuilds from the curves built
last.  It drives the per-joint pieces that reduce_keys still uses for TCB
keys (drops, rebuilds, forward kinematics and its trials), none of which
the C search calls, and keeps the pieces of new keys that hold
(reduce_merge) as the C search does.
"""
import numpy as np

from kbspline import _kbspline as _core
from kbspline.motion import reduce as R
from kbspline.motion.world_error import WorldError, local_tolerances, moves


def world_swept(motion, position_tolerance, virtual_distance=None, angle_tolerance=None,
                distance_tolerance=None, merge=True):
    """reduce_keys(motion, angle_tolerance, distance_tolerance,
    position_tolerance=..., virtual_distance=..., fit=True) as 53cf024 ran
    it, and each joint's swept keys before the loosening; with merge
    False, a joint's new keys are kept whole or not at all.  None where no
    swept pass holds."""
    rotations = np.ascontiguousarray(motion.rotations())
    translations = np.ascontiguousarray(motion.translations())
    J = len(motion.joints)
    caps = (np.full(J, angle_tolerance or np.inf), np.full(J, distance_tolerance or np.inf))
    world = WorldError(motion, rotations, translations, virtual_distance)
    base = local_tolerances(motion, translations, world, position_tolerance)
    joints = [R._JointFrames(motion.times, rotations, translations, [t.tolist() for t in base],
                             [t.tolist() for t in caps], j, moves(joint), True)
              for j, joint in enumerate(motion.joints)]

    def swept(joint, scale):
        return _core.reduce_sweep(*joint.frames, *joint.tolerances(scale))

    for scale in [R.SWEPT_SCALE / 2.0 ** k for k in range(R.FIT_PASSES)]:
        found = []

        def chosen():  # each joint swept as the check reaches it
            for joint in joints:
                found.append(swept(joint, scale))
                yield found[-1]

        measured = R._measure(joints, chosen(), world, position_tolerance)
        if measured is not None:
            break
    else:
        return None
    selected, scales = list(found), [scale] * J
    for factor in (*R.TANGENT_LOOSEN_FACTORS, 1.0):  # the last: at the final scales
        fewer = [j for j in range(J) if len(selected[j][0]) > 2]
        candidates = {j: R._dropped_joint(joints[j], (selected[j], factor * scales[j]))
                      for j in fewer}
        for j in sorted(fewer, key=lambda j: -len(selected[j][0])):
            new = candidates[j]
            if len(new[0]) >= len(selected[j][0]):
                continue
            new = _held(joints[j], j, selected[j], new, measured, position_tolerance, merge)
            if new is not None:
                scales[j] *= factor
                selected[j] = new
    return R._reduction(motion, joints, selected, measured), [choice[0] for choice in found]


def _held(joint, j, old, new, world, tolerance, merge):
    """Joint j's new keys where every point stays within the tolerance,
    else (with merge) the pieces of them that do and the old keys
    elsewhere, where those are fewer and hold; None where nothing holds."""
    worst = np.zeros(len(joint.frames[0]))
    if world.trial(j, *R._rebuild(joint, new), tolerance, worst) <= tolerance:
        world.accept()
        return new
    if merge:
        new = _core.reduce_merge(*old, *new, worst, tolerance, joint.drop_memory)
        if (new is not None and len(new[0]) < len(old[0])
                and world.trial(j, *R._rebuild(joint, new), tolerance) <= tolerance):
            world.accept()
            return new
    return None


def same(a, b):
    """Whether two Reductions are the same to the bit: keys, tangents and errors."""
    def arrays(r):
        return [*r.key_frames, *r.rotation_tangents, *r.translation_tangents, r.max_angle,
                r.max_distance, r.max_position]
    x, y = arrays(a), arrays(b)
    return len(x) == len(y) and all(
        u.dtype == v.dtype and u.shape == v.shape and u.tobytes() == v.tobytes()
        for u, v in zip(x, y))
