"""Interchange formats, one file each: BVH (`bvh`), glTF 2.0 (`gltf`; writing
needs the extra ``gltf``, reading NumPy only), USD (`usd`, extra ``usd``), 3D
Studio keyframer files (`threeds`, reading),
and the adaptive key sampler the exporters share (`adaptive`).  The extras' libraries are imported
only when a function needs them."""
# kbspline.motion first: the formats read and write its clips, and it
# re-exports their functions, which this order lets it import whole.
from .. import motion  # noqa: F401
from .bvh import BvhError, read_bvh, write_bvh
from .gltf import GltfError, GltfExport, GltfScene, export_gltf, motion_to_gltf, read_gltf
from .threeds import ThreeDSError, ThreeDSScene, read_3ds
from .usd import UsdExport, motion_to_usd

__all__ = ["BvhError", "read_bvh", "write_bvh", "GltfExport", "export_gltf", "motion_to_gltf",
           "GltfError", "GltfScene", "read_gltf", "UsdExport", "motion_to_usd",
           "ThreeDSError", "ThreeDSScene", "read_3ds"]
