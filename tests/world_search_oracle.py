"""The world-space search with greedy keys as kbspline ran it in Python
before it moved to C (kb_reduce_world_greedy, csrc/motion/reduce/kb_reduce_world.c), kept
here to check the C one against: the same scales tried in the same order,
the same ties, the same loosening.  It drives the per-joint pieces that
reduce_keys still uses for its fitted search (each joint's greedy keys off
its order, its curves, forward kinematics), none of which the C search calls.
"""
import math

import numpy as np

from kbspline.motion import reduce as R
from kbspline.motion.world_error import WorldError, local_tolerances, moves


def world_greedy(motion, position_tolerance, angle_tolerance=None, distance_tolerance=None):
    """reduce_keys(motion, angle_tolerance, distance_tolerance,
    position_tolerance=..., fit=False), the search of 1526585."""
    rotations = np.ascontiguousarray(motion.rotations())
    translations = np.ascontiguousarray(motion.translations())
    J = len(motion.joints)
    caps = (np.full(J, angle_tolerance or np.inf), np.full(J, distance_tolerance or np.inf))
    world = WorldError(motion, rotations, translations)
    base = local_tolerances(motion, translations, world, position_tolerance)
    times = motion.times
    joints = [R._JointFrames(times, rotations, translations, base, caps, j, moves(joint))
              for j, joint in enumerate(motion.joints)]

    def attempt(scale):
        selected = [(joint.greedy(scale),) for joint in joints]
        measured = R._measure(joints, selected, world, position_tolerance)
        return None if measured is None else (selected, measured)

    def keys_of(found):
        return sum(len(choice[0]) for choice in found[0])

    passes, good, bad = 1, R.FIRST_SCALE, None
    best = attempt(good)
    while best is None and passes < R.SEARCH_PASSES:  # too loose: halve
        good, bad = good / 2, good
        best = attempt(good)
        passes += 1
    assert best is not None, "every frame a key: not this oracle's case"
    best_scale = good
    while passes < R.SEARCH_PASSES:  # double until too loose, then bisect
        scale = 2 * good if bad is None else math.sqrt(good * bad)
        result = attempt(scale)
        passes += 1
        if result is None:
            bad = scale
        else:
            good = scale
            if keys_of(result) <= keys_of(best):
                best, best_scale = result, scale
    selected, world = best
    selected, scales = list(selected), [best_scale] * J
    for factor in R.LOOSEN_FACTORS:  # each joint alone, most keys first
        fewer = [j for j in range(J) if len(selected[j][0]) > 2]
        for j in sorted(fewer, key=lambda j: -len(selected[j][0])):
            new = (joints[j].greedy(factor * scales[j]),)
            if len(new[0]) >= len(selected[j][0]):
                continue
            if world.trial(j, *R._rebuild(joints[j], new), position_tolerance) <= \
                    position_tolerance:
                world.accept()
                scales[j] *= factor
                selected[j] = new
    return R._reduction(motion, joints, selected, world)
