"""Small glTF files written by hand, the way other tools write them, for
the reader's tests (no pygltflib: the JSON is built as the spec lays it out)."""
import base64
import json
import struct

import numpy as np

TYPES = {1: "SCALAR", 3: "VEC3", 4: "VEC4", 16: "MAT4"}


class Gltf:
    """A glTF document under construction: nodes, skins, animations, and one
    buffer of float32 accessors."""

    def __init__(self):
        self.blob = bytearray()
        self.doc = {"asset": {"version": "2.0"}, "nodes": [], "accessors": [],
                    "bufferViews": [], "buffers": []}

    def node(self, name=None, children=(), **trs):
        """Adds a node; `trs` holds translation, rotation (x, y, z, w), scale or matrix."""
        node = {k: [float(x) for x in v] for k, v in trs.items()}
        if name is not None:
            node["name"] = name
        if children:
            node["children"] = list(children)
        self.doc["nodes"].append(node)
        return len(self.doc["nodes"]) - 1

    def accessor(self, values):
        a = np.asarray(values, dtype=np.float32)
        a = a.reshape(len(a), -1)
        while len(self.blob) % 4:
            self.blob.append(0)
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": len(self.blob),
                                        "byteLength": a.nbytes})
        self.blob += a.tobytes()
        self.doc["accessors"].append({"bufferView": len(self.doc["bufferViews"]) - 1,
                                      "componentType": 5126, "count": len(a),
                                      "type": TYPES[a.shape[1]]})
        return len(self.doc["accessors"]) - 1

    def animation(self, name, channels):
        """`channels`: (node, path, times, values, interpolation); rotations (x, y, z, w)."""
        anim = {"channels": [], "samplers": []}
        if name is not None:
            anim["name"] = name
        for node, path, times, values, interpolation in channels:
            anim["samplers"].append({"input": self.accessor(times),
                                     "output": self.accessor(values),
                                     "interpolation": interpolation})
            anim["channels"].append({"sampler": len(anim["samplers"]) - 1,
                                     "target": {"node": node, "path": path}})
        self.doc.setdefault("animations", []).append(anim)

    def skin(self, joints, name=None):
        skin = {"joints": list(joints)}
        if name is not None:
            skin["name"] = name
        self.doc.setdefault("skins", []).append(skin)

    def json(self):
        """The document as .gltf JSON with the buffer as a data URI."""
        doc = json.loads(json.dumps(self.doc))
        doc["buffers"] = [{"byteLength": len(self.blob), "uri": "data:application/octet-stream;"
                           "base64," + base64.b64encode(bytes(self.blob)).decode()}]
        return doc

    def glb(self, doc=None):
        """GLB bytes: `doc` (default this document, buffer 0 the BIN chunk) and the buffer."""
        if doc is None:
            doc = json.loads(json.dumps(self.doc))
            doc["buffers"] = [{"byteLength": len(self.blob)}]
        return glb_bytes(doc, bytes(self.blob))

    def write(self, path):
        path.write_bytes(self.glb() if path.suffix.lower() == ".glb"
                         else json.dumps(self.json()).encode())
        return path


def glb_bytes(doc, blob):
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    chunks = struct.pack("<II", len(text), 0x4E4F534A) + text
    if blob:
        chunks += struct.pack("<II", len(blob), 0x004E4942) + blob
    return struct.pack("<III", 0x46546C67, 2, 12 + len(chunks)) + chunks


def z_turn(angle):
    """(x, y, z, w) quaternion turning `angle` radians about z."""
    return [0.0, 0.0, np.sin(angle / 2), np.cos(angle / 2)]
