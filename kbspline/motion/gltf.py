"""A BVH clip as a glTF 2.0 animation (``pip install kbspline[gltf]``)."""
from __future__ import annotations

import os
from typing import Any, Optional, Union

import numpy as np

from ..gltf import GltfExport, export_gltf
from ..position import PositionSpline
from ..rotation import RotationSpline
from .bvh import POSITION_CHANNELS, Motion
from .kinematics import local_offsets


def motion_to_gltf(motion: Motion, path: Union[str, os.PathLike[str], None] = None, *,
                   rate: Optional[float] = None, scale: float = 1.0, tension: float = 0.0,
                   continuity: float = 0.0, bias: float = 0.0) -> GltfExport:
    """Writes a clip as glTF: a node per joint in the BVH hierarchy (and one
    per End Site, named "<joint>_end"), bone offsets as the nodes' fixed
    translations, joint rotations as squad splines through the frames baked
    at `rate` (default: the clip's frame rate, so the samples are the frames),
    and joints with position channels as exact cubic translations.

    scale : multiplies every length, e.g. 0.01 for a centimetre clip in
        glTF's metres.
    tension, continuity, bias : of the splines through the frames.

    Returns export_gltf's GltfExport, whose max_error says how far glTF's
    playback strays from the splines between samples.
    """
    if motion.num_frames < 2:
        raise ValueError("motion_to_gltf needs a clip of at least 2 frames")
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive number, not {scale}")
    joints = motion.joints
    names = [joint.name for joint in joints]
    if len(set(names)) != len(names):
        raise ValueError("the clip's joint names are not unique")
    times = motion.times
    rotations = RotationSpline(times, motion.rotations(), tension, continuity, bias)
    moving = [j for j, joint in enumerate(joints)
              if any(c in POSITION_CHANNELS for c in joint.channels)]
    translations = (PositionSpline(times, local_offsets(motion)[moving] * scale, tension,
                                   continuity, bias) if moving else None)

    channels: dict[str, dict[str, Any]] = {}
    parents, offsets = {}, {}
    for j, joint in enumerate(joints):
        channels[joint.name] = {}
        if motion.rotation_order(j):
            channels[joint.name]["rotation"] = (rotations, j)
        if j in moving:
            channels[joint.name]["translation"] = (translations, moving.index(j))
        else:
            offsets[joint.name] = joint.offset * scale
        if joint.parent >= 0:
            parents[joint.name] = names[joint.parent]
        if joint.end_site is not None:
            parents[f"{joint.name}_end"] = joint.name
            offsets[f"{joint.name}_end"] = joint.end_site * scale
    return export_gltf(channels, path, rate=rate or 1.0 / motion.frame_time, parents=parents,
                       offsets=offsets, name="bvh")
