"""Deprecated second path to `kbspline.formats.gltf`: import from there."""
import warnings

from .formats.gltf import (CHECKS_PER_INTERVAL, DEFAULT_ANGLE_TOLERANCE, GltfChannel, GltfError,
                           GltfExport, GltfNode, GltfScene, GltfSkin, export_gltf, motion_to_gltf,
                           read_gltf)

warnings.warn("kbspline.gltf is deprecated: import from kbspline.formats.gltf",
              DeprecationWarning, stacklevel=2)

__all__ = ["export_gltf", "motion_to_gltf", "GltfExport", "CHECKS_PER_INTERVAL",
           "DEFAULT_ANGLE_TOLERANCE", "read_gltf", "GltfError", "GltfScene", "GltfChannel",
           "GltfNode", "GltfSkin"]
