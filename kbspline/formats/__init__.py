"""Interchange formats, one module each: BVH (`bvh`), glTF 2.0 (`gltf`; writing
needs the extra ``gltf``, reading NumPy only), USD (`usd`, extra ``usd``),
LightWave scenes (`lightwave`, reading only) and 3D Studio keyframer files
(`threeds`, reading only; `convert` turns scenes into glTF, BVH or USD); the
scene model every reader returns (`scene`), `read_scene` to read any of them
by extension (`load`), and the adaptive key sampler the exporters share
(`adaptive`).  The extras' libraries are imported only when a function needs
them."""
from .bvh import BvhError, read_bvh, read_bvh_scene, write_bvh
from .errors import FormatError
from .gltf import GltfError, GltfExport, GltfScene, export_gltf, motion_to_gltf, read_gltf
from .lightwave import LwsError, LwsScene, read_lws
from .load import READERS, read_scene
from .scene import Channel, Node, Scene, Skin
from .threeds import ThreeDSError, ThreeDSScene, read_3ds
from .usd import UsdExport, motion_to_usd

__all__ = ["BvhError", "read_bvh", "write_bvh", "read_bvh_scene", "GltfExport", "export_gltf",
           "motion_to_gltf", "GltfError", "GltfScene", "read_gltf", "UsdExport",
           "motion_to_usd", "FormatError", "READERS", "read_scene", "Scene", "Node", "Skin",
           "Channel", "LwsError", "LwsScene", "read_lws", "ThreeDSError", "ThreeDSScene",
           "read_3ds"]
