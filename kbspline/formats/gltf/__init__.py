"""glTF 2.0: reading scenes (`read`, NumPy only), exporting keyframe tracks
(`write`, ``pip install kbspline[gltf]``), and the sampler rules both use
(`playback`)."""
from ..scene import Node, Scene, Skin
from .playback import GltfChannel
from .read import GltfError, read_gltf
from .write import (CHECKS_PER_INTERVAL, DEFAULT_ANGLE_TOLERANCE, GltfExport, export_gltf,
                    motion_to_gltf, reduction_to_gltf)

# The scene classes were glTF's own before every reader shared them.
GltfScene, GltfNode, GltfSkin = Scene, Node, Skin

__all__ = ["export_gltf", "motion_to_gltf", "reduction_to_gltf", "GltfExport",
           "CHECKS_PER_INTERVAL", "DEFAULT_ANGLE_TOLERANCE", "read_gltf", "GltfError",
           "GltfScene", "GltfChannel", "GltfNode", "GltfSkin"]
