"""Reading glTF 2.0 (``.gltf`` with embedded or external buffers, ``.glb``)
into a `kbspline.formats.scene.Scene`, NumPy only.

Files are parsed here without pygltflib, so that every length, offset and
count is checked before bytes are read: a malformed file is a GltfError
naming the accessor, buffer view or field, never an IndexError.
"""
from __future__ import annotations

import base64
import os
import pathlib
from typing import Union

import numpy as np

from ..errors import FormatError
from ..scene import Node, Scene, Skin
from .playback import INTERPOLATIONS, GltfChannel

__all__ = ["GltfError", "read_gltf"]


class GltfError(FormatError):
    """A malformed glTF file; the message names the file and what is wrong."""


_GLB_MAGIC, _JSON_CHUNK, _BIN_CHUNK = 0x46546C67, 0x4E4F534A, 0x004E4942
_DATA_URIS = ("data:application/octet-stream;base64,", "data:application/gltf-buffer;base64,")
_COMPONENTS = {5120: ("<i1", 127.0), 5121: ("<u1", 255.0), 5122: ("<i2", 32767.0),
               5123: ("<u2", 65535.0), 5125: ("<u4", None), 5126: ("<f4", None)}
_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_TARGET_WIDTHS = {"translation": 3, "rotation": 4, "scale": 3}
_MAX_ZERO_ELEMENTS = 1 << 24



def read_gltf(path: Union[str, os.PathLike[str]]) -> Scene:
    """Reads a glTF 2.0 file's nodes, skins and animations.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.gltf`` (embedded data URIs or external buffers) or ``.glb``.

    Returns
    -------
    Scene
        With ``source='gltf'``; see `kbspline.formats.scene`.

    Raises
    ------
    GltfError
        For a malformed file, naming the accessor, buffer view or field.
    """
    path = pathlib.Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GltfError(f"{path}: {exc.strerror or exc}") from None
    return _Reader(path, data).scene()


class _Reader:
    def __init__(self, path, data):
        self.path = path
        self.doc, self.glb_bin = self._parse(data)
        self.buffers = {}

    def fail(self, what):
        raise GltfError(f"{self.path}: {what}")

    def _parse(self, data):
        import json
        glb_bin = None
        if data[:4] == b"glTF":
            if len(data) < 20:
                self.fail("a GLB file needs a 12-byte header and a chunk")
            magic, version, length = np.frombuffer(data[:12], "<u4")
            if version != 2:
                self.fail(f"GLB version {version}, not 2")
            if length > len(data):
                self.fail(f"the GLB header says {length} bytes, the file has {len(data)}")
            chunks, offset = {}, 12
            while offset + 8 <= length:
                size, kind = (int(x) for x in np.frombuffer(data[offset:offset + 8], "<u4"))
                if offset + 8 + size > length:
                    self.fail(f"a GLB chunk of {size} bytes at byte {offset} runs past the end")
                chunks.setdefault(kind, data[offset + 8:offset + 8 + size])
                offset += 8 + size
            if _JSON_CHUNK not in chunks:
                self.fail("the GLB file has no JSON chunk")
            text, glb_bin = chunks[_JSON_CHUNK], chunks.get(_BIN_CHUNK)
        elif data[:1] in (b"{", b" ", b"\n", b"\r", b"\t", b"\xef"):
            text = data
        else:
            self.fail("neither a GLB file (magic 'glTF') nor glTF JSON")
        try:
            doc = json.loads(text.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            self.fail(f"the JSON does not parse: {exc}")
        if not isinstance(doc, dict):
            self.fail("the JSON is not an object")
        return doc, glb_bin

    def items(self, name):
        value = self.doc.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.fail(f"'{name}' must be a list of objects")
        return value

    def field(self, obj, key, where, kind=int, default=None):
        value = obj.get(key, default)
        if value is None or (kind is int and (isinstance(value, bool) or not isinstance(value, int)))\
                or (kind is not int and not isinstance(value, kind)):
            self.fail(f"{where}: '{key}' is missing or not a {kind.__name__}")
        return value

    def buffer(self, index):
        if index not in self.buffers:
            buffers = self.items("buffers")
            if not 0 <= index < len(buffers):
                self.fail(f"buffer {index} does not exist")
            uri = buffers[index].get("uri")
            if uri is None:
                if self.glb_bin is None:
                    self.fail(f"buffer {index} has no uri and there is no GLB binary chunk")
                data = self.glb_bin
            elif not isinstance(uri, str):
                self.fail(f"buffer {index}: uri is not a string")
            elif uri.startswith("data:"):
                prefix = next((p for p in _DATA_URIS if uri.startswith(p)), None)
                if prefix is None:
                    self.fail(f"buffer {index}: a data URI must be base64 of "
                              f"application/octet-stream or application/gltf-buffer")
                try:
                    data = base64.b64decode(uri[len(prefix):], validate=True)
                except ValueError:
                    self.fail(f"buffer {index}: its data URI is not valid base64")
            else:
                from urllib.parse import unquote
                try:
                    data = (self.path.parent / unquote(uri)).read_bytes()
                except OSError as exc:
                    self.fail(f"buffer {index}: cannot read {uri!r}: {exc.strerror or exc}")
            length = self.field(buffers[index], "byteLength", f"buffer {index}")
            if length > len(data):
                self.fail(f"buffer {index}: byteLength {length}, but only {len(data)} bytes")
            self.buffers[index] = data
        return self.buffers[index]

    def view(self, index, where):
        views = self.items("bufferViews")
        if not isinstance(index, int) or not 0 <= index < len(views):
            self.fail(f"{where}: bufferView {index} does not exist")
        view = views[index]
        data = self.buffer(self.field(view, "buffer", f"bufferView {index}"))
        start = self.field(view, "byteOffset", f"bufferView {index}", default=0)
        length = self.field(view, "byteLength", f"bufferView {index}")
        if start < 0 or length < 0 or start + length > len(data):
            self.fail(f"bufferView {index}: bytes {start}..{start + length} lie outside its "
                      f"buffer of {len(data)}")
        return data[start:start + length], view.get("byteStride")

    def accessor(self, index):
        """(count, width) float64 values of accessor `index`."""
        accessors = self.items("accessors")
        where = f"accessor {index}"
        if not isinstance(index, int) or not 0 <= index < len(accessors):
            self.fail(f"{where} does not exist")
        acc = accessors[index]
        count = self.field(acc, "count", where)
        kind = acc.get("componentType")
        width = _WIDTHS.get(acc.get("type"))
        if kind not in _COMPONENTS or width is None or count < 1:
            self.fail(f"{where}: componentType {kind}, type {acc.get('type')!r} or count "
                      f"{count} is not valid")
        dtype, scale = _COMPONENTS[kind]
        size = np.dtype(dtype).itemsize
        if "bufferView" not in acc and count > _MAX_ZERO_ELEMENTS:
            # zeros (for a sparse accessor) are the one thing not bounded by the file's size
            self.fail(f"{where}: count {count} without a bufferView exceeds "
                      f"{_MAX_ZERO_ELEMENTS}")
        if "bufferView" not in acc:
            out = np.zeros((count, width))
        else:
            data, stride = self.view(acc["bufferView"], where)
            offset = self.field(acc, "byteOffset", where, default=0)
            stride = stride or width * size
            end = offset + stride * (count - 1) + width * size
            if offset < 0 or stride < width * size or offset % size or stride % size \
                    or end > len(data):
                self.fail(f"{where}: {count} elements of {width * size} bytes (stride "
                          f"{stride}) from byte {offset} run past its bufferView of "
                          f"{len(data)} bytes")
            raw = np.lib.stride_tricks.as_strided(
                np.frombuffer(data, dtype, offset=offset, count=(end - offset) // size),
                (count, width), (stride, size))
            out = raw.astype(np.float64)
        if "sparse" in acc:
            out = self._sparse(acc["sparse"], out, dtype, where)
        if scale is not None and acc.get("normalized"):
            out = np.maximum(out / scale, -1.0)
        return out

    def _sparse(self, sparse, out, dtype, where):
        n = self.field(sparse, "count", f"{where} sparse")
        idx, vals = sparse.get("indices", {}), sparse.get("values", {})
        kind = idx.get("componentType")
        if kind not in (5121, 5123, 5125) or not isinstance(idx, dict):
            self.fail(f"{where}: sparse indices must be unsigned integers")
        index_bytes, _ = self.view(idx.get("bufferView"), f"{where} sparse indices")
        value_bytes, _ = self.view(vals.get("bufferView"), f"{where} sparse values")
        i_dtype = _COMPONENTS[kind][0]
        i_off = self.field(idx, "byteOffset", where, default=0)
        v_off = self.field(vals, "byteOffset", where, default=0)
        width, size = out.shape[1], np.dtype(dtype).itemsize
        if (i_off + n * np.dtype(i_dtype).itemsize > len(index_bytes)
                or v_off + n * width * size > len(value_bytes)):
            self.fail(f"{where}: its sparse indices or values run past their bufferViews")
        rows = np.frombuffer(index_bytes, i_dtype, n, i_off).astype(np.intp)
        if np.any(rows >= len(out)):
            self.fail(f"{where}: a sparse index is beyond its count {len(out)}")
        out = out.copy()
        out[rows] = np.frombuffer(value_bytes, dtype, n * width, v_off).reshape(n, width)
        return out

    def scene(self):
        n_nodes = len(self.items("nodes"))
        skins = [Skin(s.get("name") or f"skin{i}", self._joints(s, i, n_nodes))
                 for i, s in enumerate(self.items("skins"))]
        nodes = self.nodes({j for skin in skins for j in skin.joints})
        animations = {}
        for a, anim in enumerate(self.items("animations")):
            name = anim.get("name") or str(a)
            animations[name] = self.animation(anim, a, nodes)
        return Scene(nodes, skins, animations, source="gltf")

    def _joints(self, skin, i, n_nodes):
        joints = skin.get("joints")
        if (not isinstance(joints, list) or not joints
                or not all(isinstance(j, int) and 0 <= j < n_nodes for j in joints)):
            self.fail(f"skin {i}: joints must be a list of node indices")
        return joints

    def nodes(self, joints):
        raw = self.items("nodes")
        parent = [-1] * len(raw)
        for i, node in enumerate(raw):
            for child in node.get("children", []):
                if not isinstance(child, int) or not 0 <= child < len(raw) or parent[child] >= 0:
                    self.fail(f"node {i}: child {child!r} is not a node, or has two parents")
                parent[child] = i
        names, out = {}, []
        for i, node in enumerate(raw):
            name = node.get("name") or f"node{i}"
            if name in names:    # names are keys of the animations: keep them distinct
                name = f"{name}#{i}"
            names[name] = i
            kind = "joint" if i in joints else next(
                (k for k in ("mesh", "camera") if k in node), "node")
            extras = {k: node[k] for k in ("mesh", "camera", "skin", "extras") if k in node}
            out.append(Node(name, parent[i], list(node.get("children", [])),
                            *self._rest(node, i), kind=kind, extras=extras))
        return out

    def _rest(self, node, i):
        numbers = {"translation": 3, "rotation": 4, "scale": 3, "matrix": 16}
        for key, n in numbers.items():
            value = node.get(key)
            if value is not None and (not isinstance(value, list) or len(value) != n or not all(
                    isinstance(x, (int, float)) and np.isfinite(x) for x in value)):
                self.fail(f"node {i}: '{key}' must be {n} finite numbers")
        if "matrix" in node:
            m = np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T  # column-major
            scale = np.linalg.norm(m[:3, :3], axis=0)
            if np.any(scale == 0):
                self.fail(f"node {i}: its matrix has a zero scale")
            from ...quaternion import quat_from_matrix
            try:
                rotation = quat_from_matrix(m[:3, :3] / scale)
            except ValueError:
                self.fail(f"node {i}: its matrix is not translation, rotation and scale")
            return m[:3, 3].copy(), rotation, scale
        x, y, z, w = node.get("rotation", [0.0, 0.0, 0.0, 1.0])
        return (np.array(node.get("translation", [0.0, 0.0, 0.0]), dtype=np.float64),
                np.array([w, x, y, z], dtype=np.float64),
                np.array(node.get("scale", [1.0, 1.0, 1.0]), dtype=np.float64))

    def animation(self, anim, a, nodes):
        samplers = anim.get("samplers", [])
        channels = {}
        for c, channel in enumerate(anim.get("channels", [])):
            where = f"animation {a} channel {c}"
            target = channel.get("target", {}) if isinstance(channel, dict) else {}
            node, path = target.get("node"), target.get("path")
            if node is None:   # allowed by the spec (an extension's target): nothing to play
                continue
            if not isinstance(node, int) or not 0 <= node < len(nodes):
                self.fail(f"{where}: target node {node!r} does not exist")
            if path not in (*_TARGET_WIDTHS, "weights"):
                self.fail(f"{where}: target path {path!r} is not translation, rotation, "
                          f"scale or weights")
            s = channel.get("sampler")
            if not isinstance(s, int) or not 0 <= s < len(samplers):
                self.fail(f"{where}: sampler {s!r} does not exist")
            channels[nodes[node].name, path] = self.sampler(samplers[s], f"{where} sampler {s}",
                                                            path)
        return channels

    def sampler(self, sampler, where, path):
        interpolation = sampler.get("interpolation", "LINEAR")
        if interpolation not in INTERPOLATIONS:
            self.fail(f"{where}: interpolation {interpolation!r} is not one of {INTERPOLATIONS}")
        times = self.accessor(sampler.get("input"))
        if times.shape[1] != 1:
            self.fail(f"{where}: input accessor {sampler.get('input')} is not SCALAR")
        times = times[:, 0]
        if not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
            self.fail(f"{where}: input accessor {sampler.get('input')}: key times must be "
                      f"finite and increasing")
        values = self.accessor(sampler.get("output"))
        rows = len(times) * (3 if interpolation == "CUBICSPLINE" else 1)
        width = _TARGET_WIDTHS.get(path)
        if width is None:   # weights: scalars, as many per key as the mesh has targets
            if values.shape[1] != 1 or values.size % rows:
                self.fail(f"{where}: output accessor {sampler.get('output')} does not hold "
                          f"a whole number of weights per key")
            values = values.reshape(rows, -1)
        elif values.shape != (rows, width):
            self.fail(f"{where}: output accessor {sampler.get('output')} has shape "
                      f"{values.shape}, not ({rows}, {width}) for {len(times)} keys of {path}")
        if not np.all(np.isfinite(values)):
            self.fail(f"{where}: output accessor {sampler.get('output')} holds non-finite values")
        if path == "rotation" and np.any(np.linalg.norm(values[1::3] if rows > len(times)
                                                        else values, axis=1) == 0):
            self.fail(f"{where}: output accessor {sampler.get('output')} holds a zero quaternion")
        return GltfChannel(times, values, interpolation, path)


