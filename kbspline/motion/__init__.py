"""The offline animation pipeline over kbspline: BVH in and out, forward
kinematics and resampling (pure Python over the C core, NumPy only).
"""
from .bvh import BvhError, Joint, Motion, read_bvh, write_bvh
from .cycle import Loop, find_cycle, make_loop
from .kinematics import world_positions
from .reduce import Reduction, reduce_keys
from .resample import resample
from .transition import transition

__all__ = ["BvhError", "Joint", "Motion", "read_bvh", "write_bvh", "world_positions",
           "resample", "Reduction", "reduce_keys", "Loop", "find_cycle", "make_loop",
           "transition"]
