"""World-space error of a clip's local rotations and translations: the
points it is measured at (joints, End Sites, virtual vertices) and a
per-joint split of one world-space tolerance into local ones."""
from __future__ import annotations

import copy
import math

import numpy as np

from .. import _kbspline as _core
from .clip import POSITION_CHANNELS


def moves(joint):
    """Whether the joint has position channels (else its OFFSET places it)."""
    return any(c in POSITION_CHANNELS for c in joint.channels)


def _sites(joint, virtual_distance):
    """(n, 3) the points a joint's frame carries besides its origin: its End
    Site and, with `virtual_distance`, three virtual vertices."""
    local = [] if joint.end_site is None else [np.asarray(joint.end_site, dtype=np.float64)]
    if virtual_distance is not None:
        local.extend(virtual_distance * np.eye(3))
    return np.reshape(local, (-1, 3))


def vertex_positions(motion, rotations, translations, virtual_distance=None):
    """(F, V, 3) world positions of every measured point, and (V,) the joint
    whose frame carries each: joint origins, End Sites, and with
    `virtual_distance` three virtual vertices per joint at that distance along
    its local axes (as ACL measures error).  Local offsets are the
    translations where a joint has position channels, else OFFSET."""
    points = WorldError(motion, rotations, translations, virtual_distance).truth
    owner = np.concatenate([[j] * p.shape[1] for j, p in enumerate(points)])
    return np.concatenate(points, axis=1), owner.astype(int)


class WorldError:
    """The worst world-space error of a clip's points under rebuilt local
    curves, kept per joint so that trying other curves for one joint moves
    only that joint and the joints below it again."""

    def __init__(self, motion, rotations, translations, virtual_distance=None):
        """The clip's points, placed once by its own rotations (J, F, 4) and
        translations (J, F, 3): `truth`, per joint (F, 1 + n, 3), origin
        then End Site and virtual vertices.  `with_curves` gives the error
        under rebuilt curves."""
        J = rotations.shape[0]
        self.sites = [_sites(j, virtual_distance) for j in motion.joints]
        self.parents = [joint.parent for joint in motion.joints]
        # OFFSET where it places the joint, else None: the translations do
        self.offsets = [None if moves(joint) else np.asarray(joint.offset, dtype=np.float64)
                        for joint in motion.joints]
        world_rot, origin = [None] * J, [None] * J
        rotations = np.ascontiguousarray(rotations)
        translations = np.ascontiguousarray(translations)
        truth = [self._place(j, rotations[j], translations[j], world_rot, origin)
                 for j in range(J)]
        # every joint's points one after another, flat (as the core reads
        # them), `truth` a view of each joint's
        self.flat_truth = np.concatenate([points.ravel() for points in truth])
        ends = np.cumsum([0] + [points.size for points in truth])
        self.truth = [self.flat_truth[a:b].reshape(points.shape)
                      for a, b, points in zip(ends[:-1], ends[1:], truth)]
        self.below = [[j] for j in range(J)]  # each joint and its descendants, parents first
        for j in reversed(range(J)):
            if self.parents[j] >= 0:
                self.below[self.parents[j]].extend(self.below[j])
        for moved in self.below:
            moved.sort()

    def _rebuild(self, curves, limit=math.inf):
        """Places every joint under `curves`, its (rotation, translation)
        curves in joint order (read only as far as needed); False where a
        point is farther than `limit` from where the clip puts it."""
        J = len(self.truth)
        self.rotations, self.translations = [None] * J, [None] * J
        self.world_rot, self.origin = [None] * J, [None] * J
        self.errors, self.pending = np.zeros(J), None
        for j, (rotation, translation) in enumerate(curves):
            self.rotations[j], self.translations[j] = rotation, translation
            self.errors[j] = error = self._place(j, rotation, translation, self.world_rot,
                                                 self.origin, self.truth[j], limit)
            if limit < math.inf and not error <= limit:  # past it, or NaN
                return False
        return True

    def _place(self, j, rotation, translation, world_rot, origin, truth=None,
               limit=math.inf, frame_worst=None):
        """Joint j in the world from its parent's entries in the lists
        world_rot and origin, its own written there (in C: see
        kb_joint_world), by its rotations (F, 4) and translations (F, 3),
        C-contiguous: returns its points (F, 1 + n, 3), origin then its
        sites, or with `truth` their largest distance from it (or, past
        `limit`, the first distance past it, the joint's entries then
        unfinished; with `frame_worst`, (F,), no limit, and each frame's
        largest squared distance written in where larger)."""
        p = self.parents[j]
        offset = translation if self.offsets[j] is None else self.offsets[j]
        world_rot[j], origin[j], points, error = _core.joint_world(
            world_rot[p] if p >= 0 else None, origin[p] if p >= 0 else None,
            rotation, offset, self.sites[j], truth,
            limit if frame_worst is None else math.inf, frame_worst)
        return points if truth is None else error

    def with_curves(self, curves, limit=math.inf):
        """A WorldError of the same clip (its points computed once) under
        other curves: (rotation (F, 4), translation (F, 3)), C-contiguous,
        per joint, in joint order, taken as they are needed; None as soon as
        a point is farther than `limit` (the joints after it are not read)."""
        other = copy.copy(self)
        return other if other._rebuild(curves, limit) else None

    def trial(self, j, rotation, translation, limit=math.inf, frame_worst=None):
        """The worst error with joint j's curves (F, 4) and (F, 3)
        (C-contiguous) instead, or as soon as a point is farther than
        `limit`, that point's distance; `accept` keeps the curves of a trial
        within the limit.  With `frame_worst` (F,) zeros, the trial runs to
        the end whatever the limit and writes there each frame's worst
        squared error of the points joint j moves."""
        moved = self.below[j]
        rotations, translations = list(self.rotations), list(self.translations)
        rotations[j], translations[j] = rotation, translation
        world_rot, origin = list(self.world_rot), list(self.origin)  # moved entries replaced
        errors = self.errors.copy()
        self.pending = None
        for m in moved:
            errors[m] = self._place(m, rotations[m], translations[m], world_rot, origin,
                                    self.truth[m], limit, frame_worst)
            if not errors[m] <= limit and frame_worst is None:  # past it, or NaN
                return float(errors[m])
        worst = float(errors.max())
        if worst <= limit:
            self.pending = (rotations, translations, world_rot, origin, errors)
        return worst

    def accept(self):
        """Keeps the curves of the last trial (which was within its limit)."""
        (self.rotations, self.translations, self.world_rot, self.origin,
         self.errors) = self.pending


def local_tolerances(motion, translations, world, position_tolerance):
    """(J,) angle and (J,) distance tolerances under which no point that
    `world` (a WorldError of the clip) measures moves more than
    `position_tolerance` from where the clip puts it, to first order.  A
    point moves by at most the sum, over the joints that carry it, of
    d_a + theta_a r_a (d_a, theta_a the joint's translation and rotation
    errors, r_a the farthest point below it): each joint gets the share 1/n
    of the tolerance, n the longest chain of joints carrying a point below
    it, so every chain's shares sum to at most the tolerance.  A joint whose
    translation (J, F, 3) is constant (varies by at most 1e-6 of its share,
    as text rounding leaves it) gives its whole share to rotation; one with
    nothing below it rotates freely (infinite angle tolerance)."""
    joints = motion.joints
    J = len(joints)
    parents = world.parents
    chain = [1] * J  # joints carrying joint j's points: j and its ancestors
    for j, parent in enumerate(parents):  # parents come before children
        if parent >= 0:
            chain[j] = chain[parent] + 1
    longest = list(chain)
    for j in reversed(range(J)):
        if parents[j] >= 0:
            longest[parents[j]] = max(longest[parents[j]], longest[j])
    longest = np.array(longest)
    reach = _reach(world)
    share = position_tolerance / longest
    # only the joints with position channels: the others' are their OFFSET
    moving = np.array([moves(joint) for joint in joints])
    moving[moving] = ~(np.ptp(translations[moving], axis=1).max(axis=-1) <= 1e-6 * share[moving])
    distance = np.where(moving, share / 2, np.inf)
    with np.errstate(divide="ignore"):
        angle = np.where(reach > 0, np.where(moving, share / 2, share) / reach, np.inf)
    return angle, distance


def _reach(world):
    """(J,) the farthest any point a joint carries (its own or a
    descendant's) gets from the joint's origin in any frame of `world`'s
    clip (in C: see kb_joint_reach)."""
    return _core.joint_reach(np.array(world.parents, dtype=np.intp),
                             np.array([len(s) for s in world.sites], dtype=np.intp),
                             world.flat_truth)
