"""The offline animation pipeline over kbspline: motion clips, forward
kinematics, resampling, key reduction, loops and transitions (pure Python
over the C core, NumPy only).  Reading and writing files is in
`kbspline.formats`; its BVH, glTF and USD functions are also here.
"""
from .clip import Joint, Motion
from .cycle import Loop, find_cycle, make_loop
from .kinematics import world_positions
from .reduce import Reduction, reduce_keys
from .resample import resample
from .transition import transition
from ..formats.bvh import BvhError, read_bvh, write_bvh  # noqa: E402  (after .clip: formats use it)
from ..formats.gltf import motion_to_gltf  # noqa: E402
from ..formats.usd import motion_to_usd  # noqa: E402

__all__ = ["BvhError", "Joint", "Motion", "read_bvh", "write_bvh", "world_positions",
           "resample", "Reduction", "reduce_keys", "Loop", "find_cycle", "make_loop",
           "transition", "motion_to_gltf", "motion_to_usd"]
