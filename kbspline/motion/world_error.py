"""World-space error of a clip's local rotations and translations, at the
points it is measured at (joints, End Sites, virtual vertices)."""
from __future__ import annotations

import numpy as np

from .. import _kbspline as _core
from .clip import POSITION_CHANNELS


_POSITIONS = frozenset(POSITION_CHANNELS)


def moves(joint):
    """Whether the joint has position channels (else its OFFSET places it)."""
    return not _POSITIONS.isdisjoint(joint.channels)


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
    """A clip's points placed once by its own curves (`truth`), and the
    worst world-space error of each joint's points under other curves."""

    def __init__(self, motion, rotations, translations, virtual_distance=None):
        """Places the clip's points by its rotations (J, F, 4) and
        translations (J, F, 3): `truth`, per joint (F, 1 + n, 3), origin
        then End Site and virtual vertices (`sites`, (n, 3) per joint)."""
        self.parents = [joint.parent for joint in motion.joints]
        self.sites = []
        for joint in motion.joints:
            local = [] if joint.end_site is None else [joint.end_site]
            if virtual_distance is not None:
                local.extend(virtual_distance * np.eye(3))
            self.sites.append(np.array(local, dtype=np.float64).reshape(-1, 3))
        # OFFSET where it places the joint, else None: the translations do
        self.offsets = [None if moves(joint) else np.asarray(joint.offset, dtype=np.float64)
                        for joint in motion.joints]
        self.truth = self._place(zip(np.ascontiguousarray(rotations),
                                     np.ascontiguousarray(translations)))

    def _place(self, curves, truth=None):
        """Every joint placed in turn (kb_joint_world) by its (rotation
        (F, 4), translation (F, 3) or None) in `curves`, parents first:
        per joint its points, or with `truth` its worst distance from them."""
        world_rot, origin, out = [], [], []
        for j, (rotation, translation) in enumerate(curves):
            p = self.parents[j]
            offset = translation if self.offsets[j] is None else self.offsets[j]
            placed = _core.joint_world(world_rot[p] if p >= 0 else None,
                                       origin[p] if p >= 0 else None, rotation, offset,
                                       self.sites[j], None if truth is None else truth[j])
            world_rot.append(placed[0])
            origin.append(placed[1])
            out.append(placed[2] if truth is None else placed[3])
        return out

    def errors(self, curves):
        """(J,) each joint's worst distance from `truth` of its points placed
        by `curves`, (rotation (F, 4), translation (F, 3) or None, where its
        OFFSET places it) per joint in joint order."""
        return np.array(self._place(curves, self.truth))
