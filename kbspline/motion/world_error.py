"""World-space error of a clip's local rotations and translations, at the
points it is measured at (joints, End Sites, virtual vertices)."""
from __future__ import annotations

import copy
import math

import numpy as np

from .. import _kbspline as _core
from .clip import POSITION_CHANNELS


_POSITIONS = frozenset(POSITION_CHANNELS)


def moves(joint):
    """Whether the joint has position channels (else its OFFSET places it)."""
    return not _POSITIONS.isdisjoint(joint.channels)


def _sites(joint, virtual_distance):
    """(n, 3) the points a joint's frame carries besides its origin: its End
    Site and, with `virtual_distance`, three virtual vertices."""
    local = [] if joint.end_site is None else [joint.end_site]
    if virtual_distance is not None:
        local.extend(virtual_distance * np.eye(3))
    return np.array(local, dtype=np.float64).reshape(-1, 3)


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
        ends = np.cumsum([0] + [points.size for points in truth]).tolist()  # ints slice faster
        self.truth = [self.flat_truth[a:b].reshape(points.shape)
                      for a, b, points in zip(ends[:-1], ends[1:], truth)]
        # the joints and their points as the core reads them (kb_joint_reach)
        self.points = (np.array(self.parents, dtype=np.intp),
                       np.array([len(s) for s in self.sites], dtype=np.intp),
                       np.concatenate(self.sites), self.flat_truth)

    def _rebuild(self, curves):
        """Places every joint under `curves`, its (rotation, translation)
        curves in joint order, into the held state (see _placed)."""
        J, F = len(self.truth), len(self.truth[0])
        self.held = _placed(J, F)
        rotations, offsets, world_rot, origin, frame_error, errors = self.held
        self.rotations, self.errors = rotations, errors
        # a joint placed by its OFFSET has no translation curve
        self.translations = [offsets[j] if self.offsets[j] is None else None for j in range(J)]
        for j, (rotation, translation) in enumerate(curves):
            rotations[j] = rotation
            offsets[j] = translation if self.offsets[j] is None else self.offsets[j]
            p = self.parents[j]
            errors[j] = _core.joint_world(
                world_rot[p] if p >= 0 else None, origin[p] if p >= 0 else None, rotations[j],
                offsets[j], self.sites[j], self.truth[j], math.inf, frame_error[j],
                (world_rot[j], origin[j]))[3]

    def _place(self, j, rotation, translation, world_rot, origin):
        """Joint j in the world from its parent's entries in the lists
        world_rot and origin, its own written there (in C: see
        kb_joint_world), by its rotations (F, 4) and translations (F, 3),
        C-contiguous: returns its points (F, 1 + n, 3), origin then its
        sites."""
        p = self.parents[j]
        offset = translation if self.offsets[j] is None else self.offsets[j]
        world_rot[j], origin[j], points, _ = _core.joint_world(
            world_rot[p] if p >= 0 else None, origin[p] if p >= 0 else None,
            rotation, offset, self.sites[j], None)
        return points

    def with_curves(self, curves):
        """A WorldError of the same clip (its points computed once) under
        other curves: (rotation (F, 4), translation (F, 3)) per joint, in
        joint order; its `errors` (J,) each joint's worst distance."""
        other = copy.copy(self)
        other._rebuild(curves)
        return other


def _placed(J, F):
    """J joints placed in the world at F frames, as the core keeps them
    (kb_world_placed): rotations (J, F, 4) and offsets (J, F, 3), the
    curves that place them (translations, or OFFSET at every frame), their
    world_rot (J, F, 3, 3) and origin (J, F, 3), frame_error (J, F) each
    frame's largest squared distance from the truth, and error (J,) each
    joint's largest distance."""
    return (np.empty((J, F, 4)), np.empty((J, F, 3)), np.empty((J, F, 3, 3)),
            np.empty((J, F, 3)), np.zeros((J, F)), np.zeros(J))
