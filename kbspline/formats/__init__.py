"""Interchange formats, one file each: BVH (`bvh`), glTF 2.0 (`gltf`, extra
``gltf``) and USD (`usd`, extra ``usd``).  The extras' libraries are imported
only when a function needs them."""
# kbspline.motion first: the formats read and write its clips, and it
# re-exports their functions, which this order lets it import whole.
from .. import motion  # noqa: F401
from .bvh import BvhError, read_bvh, write_bvh
from .gltf import GltfExport, export_gltf, motion_to_gltf
from .usd import UsdExport, motion_to_usd

__all__ = ["BvhError", "read_bvh", "write_bvh", "GltfExport", "export_gltf", "motion_to_gltf",
           "UsdExport", "motion_to_usd"]
