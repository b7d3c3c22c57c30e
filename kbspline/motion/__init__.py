"""The offline animation pipeline over kbspline: motion clips, forward
kinematics, resampling, key reduction, loops and transitions (pure Python
over the C core, NumPy only).  Reading and writing files is in
`kbspline.formats`; its BVH, glTF and USD functions are also here.
"""
from typing import TYPE_CHECKING

from .clip import Joint, Motion
from .cycle import Loop, find_cycle, make_loop
from .kinematics import world_positions
from .reduce import Reduction, reduce_keys
from .resample import resample
from .transition import transition

# kbspline.formats builds on this package, so its functions are found here
# on first use (PEP 562), not imported with it: no import cycle.
if TYPE_CHECKING:      # what type checkers see; at run time __getattr__ imports them
    from ..formats.bvh import BvhError, read_bvh, write_bvh
    from ..formats.gltf import motion_to_gltf
    from ..formats.usd import motion_to_usd

_FROM_FORMATS = {"BvhError": "bvh", "read_bvh": "bvh", "write_bvh": "bvh",
                 "motion_to_gltf": "gltf", "motion_to_usd": "usd"}

__all__ = ["BvhError", "Joint", "Motion", "read_bvh", "write_bvh", "world_positions",
           "resample", "Reduction", "reduce_keys", "Loop", "find_cycle", "make_loop",
           "transition", "motion_to_gltf", "motion_to_usd"]


def __getattr__(name: str) -> object:
    if name not in _FROM_FORMATS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    module = importlib.import_module(f"kbspline.formats.{_FROM_FORMATS[name]}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_FORMATS))
