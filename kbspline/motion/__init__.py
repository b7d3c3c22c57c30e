"""The offline animation pipeline over kbspline: BVH in and out, forward
kinematics, resampling, key reduction, loops, transitions and glTF export
(pure Python over the C core, NumPy only).
"""
from .bvh import BvhError, Joint, Motion, read_bvh, write_bvh
from .cycle import Loop, find_cycle, make_loop
from .gltf import motion_to_gltf
from .kinematics import world_positions
from .reduce import Reduction, reduce_keys
from .resample import resample
from .transition import transition

__all__ = ["BvhError", "Joint", "Motion", "read_bvh", "write_bvh", "world_positions",
           "resample", "Reduction", "reduce_keys", "Loop", "find_cycle", "make_loop",
           "transition", "motion_to_gltf"]
