"""glTF 2.0 export and import; the code lives in `kbspline.formats.gltf`."""
from .formats.gltf import (CHECKS_PER_INTERVAL, DEFAULT_ANGLE_TOLERANCE, GltfChannel, GltfError,
                           GltfExport, GltfNode, GltfScene, GltfSkin, export_gltf, motion_to_gltf,
                           read_gltf)

__all__ = ["export_gltf", "motion_to_gltf", "GltfExport", "CHECKS_PER_INTERVAL",
           "DEFAULT_ANGLE_TOLERANCE", "read_gltf", "GltfError", "GltfScene", "GltfChannel",
           "GltfNode", "GltfSkin"]
