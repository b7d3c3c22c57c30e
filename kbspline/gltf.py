"""glTF 2.0 export and import; the code lives in `kbspline.formats.gltf`."""
from .formats.gltf import CHECKS_PER_INTERVAL, GltfExport, export_gltf, motion_to_gltf

__all__ = ["export_gltf", "motion_to_gltf", "GltfExport", "CHECKS_PER_INTERVAL"]
