"""Reading glTF 2.0 (``.gltf`` with embedded or external buffers, ``.glb``)
into a `kbspline.formats.scene.Scene`, NumPy only.

Files are parsed here without pygltflib, so that every field's type and
every length, offset and count is checked before bytes are read: a
malformed file is a GltfError naming the object and field, never a
KeyError or an IndexError, and no allocation exceeds what the file holds.
"""
from __future__ import annotations

import base64
import math
import os
import pathlib
from typing import Union

import numpy as np

from ..errors import FormatError
from ..scene import Node, Scene, Skin, _looped_node
from .playback import INTERPOLATIONS, GltfChannel

__all__ = ["GltfError", "read_gltf", "IGNORED_EXTENSIONS"]


class GltfError(FormatError):
    """A malformed glTF file; the message names the file and what is wrong."""


_JSON_CHUNK, _BIN_CHUNK = 0x4E4F534A, 0x004E4942
_DATA_URIS = ("data:application/octet-stream;base64,", "data:application/gltf-buffer;base64,")
_COMPONENTS = {5120: ("<i1", 127.0), 5121: ("<u1", 255.0), 5122: ("<i2", 32767.0),
               5123: ("<u2", 65535.0), 5125: ("<u4", None), 5126: ("<f4", None)}
_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_TARGET_WIDTHS = {"translation": 3, "rotation": 4, "scale": 3}
# values an accessor without a bufferView (zeros under a sparse one) may hold:
# the one allocation not bounded by the file's size
_MAX_ZERO_ELEMENTS = 1 << 24

# Required extensions that change only meshes, materials or textures, never
# nodes, skins or animations: a file requiring them still reads right here.
# Any other required extension is refused by name.
IGNORED_EXTENSIONS = frozenset({
    "KHR_draco_mesh_compression", "KHR_mesh_quantization", "KHR_texture_transform",
    "KHR_texture_basisu", "EXT_texture_webp", "EXT_texture_avif", "KHR_materials_unlit",
    "KHR_materials_emissive_strength", "KHR_materials_ior", "KHR_materials_specular",
    "KHR_materials_transmission", "KHR_materials_volume", "KHR_materials_clearcoat",
    "KHR_materials_sheen", "KHR_materials_iridescence", "KHR_materials_anisotropy",
    "KHR_materials_variants", "KHR_materials_dispersion", "KHR_lights_punctual"})


def read_gltf(path: Union[str, os.PathLike[str]]) -> Scene:
    """Reads a glTF 2.0 file's nodes, skins and animations.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.gltf`` (embedded data URIs or external buffers) or ``.glb``.

    Returns
    -------
    Scene
        With ``source='gltf'``; see `kbspline.formats.scene`.  Nodes keep
        their names (an unnamed node i is ``node<i>``; a name already taken
        gets ``#<i>`` appended).  An animation's key is its name, an unnamed
        animation's its index as a string; named animations are keyed first,
        and a key already taken gets ``#<index>`` appended, so every
        animation is kept.

    Raises
    ------
    GltfError
        For a malformed file, naming the object and field; for a required
        extension other than those in `IGNORED_EXTENSIONS`; for a node cycle
        or a node with two parents.
    """
    path = pathlib.Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GltfError(f"{path}: {exc.strerror or exc}") from None
    with np.errstate(over="ignore", invalid="ignore"):    # what overflows is refused
        return _Reader(path, data).scene()


_MISSING = object()


class _Reader:
    def __init__(self, path, data):
        self.path = path
        self.doc, self.glb_bin = self._parse(data)
        self.buffers = {}
        required = self.value(self.doc, "extensionsRequired", "the document", list, [])
        for name in required:
            if not isinstance(name, str):
                self.fail(f"'extensionsRequired' holds {name!r}, not an extension name")
            if name not in IGNORED_EXTENSIONS:
                self.fail(f"it requires the extension {name}, which kbspline does not "
                          f"implement")
        asset = self.value(self.doc, "asset", "the document", dict, {})
        version = self.value(asset, "version", "asset", str, "2.0")
        if version.split(".")[0] != "2":
            self.fail(f"asset: 'version' is {version!r}; kbspline reads glTF 2")

    def fail(self, what):
        raise GltfError(f"{self.path}: {what}")

    def _parse(self, data):
        import json
        glb_bin = None
        if data[:4] == b"glTF":
            if len(data) < 20:
                self.fail("a GLB file needs a 12-byte header and a chunk")
            _, version, length = (int(x) for x in np.frombuffer(data[:12], "<u4"))
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
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            self.fail(f"the JSON does not parse: {str(exc)[:200]}")
        if not isinstance(doc, dict):
            self.fail("the JSON is not an object")
        return doc, glb_bin

    # -- typed access: every field read goes through one of these --------------

    def value(self, obj, key, where, kind, default=_MISSING):
        """obj[key], which must be a `kind` (int: not bool; float: any finite number)."""
        value = obj.get(key, default)
        if value is _MISSING:
            self.fail(f"{where}: '{key}' is missing")
        if kind is int:
            good = isinstance(value, int) and not isinstance(value, bool)
        elif kind is float:
            good = _finite(value)
        else:
            good = isinstance(value, kind)
        if not good:
            self.fail(f"{where}: '{key}' is {_show(value)}, not {_KINDS.get(kind, kind.__name__)}")
        return value

    def count(self, obj, key, where, default=_MISSING, least=0):
        """obj[key], an integer of at least `least`."""
        value = self.value(obj, key, where, int, default)
        if value < least:
            self.fail(f"{where}: '{key}' is {value}, less than {least}")
        return value

    def items(self, name):
        value = self.value(self.doc, name, "the document", list, [])
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(f"{name}[{i}] is {_show(item)}, not an object")
        return value

    def item(self, name, obj, key, where):
        """The object of top-level list `name` that obj[key] indexes: (index, object)."""
        index = self.count(obj, key, where)
        items = self.items(name)
        if index >= len(items):
            self.fail(f"{where}: {key} {index} does not exist (there are {len(items)})")
        return index, items[index]

    # -- bytes -------------------------------------------------------------------

    def buffer(self, index, buffer):
        if index not in self.buffers:
            where = f"buffer {index}"
            length = self.count(buffer, "byteLength", where, least=1)
            uri = self.value(buffer, "uri", where, str, None) if "uri" in buffer else None
            if uri is None:
                if index != 0:
                    self.fail(f"{where} has no uri; only buffer 0 can be a GLB binary chunk")
                if self.glb_bin is None:
                    self.fail(f"{where} has no uri and there is no GLB binary chunk")
                data = self.glb_bin
            elif uri.startswith("data:"):
                prefix = next((p for p in _DATA_URIS if uri.startswith(p)), None)
                if prefix is None:
                    self.fail(f"{where}: a data URI must be base64 of "
                              f"application/octet-stream or application/gltf-buffer")
                try:
                    data = base64.b64decode(uri[len(prefix):], validate=True)
                except ValueError:
                    self.fail(f"{where}: its data URI is not valid base64")
            else:
                data = self._external(uri, length, where)
            if length > len(data):
                self.fail(f"{where}: byteLength {length}, but only {len(data)} bytes")
            self.buffers[index] = data
        return self.buffers[index]

    def _external(self, uri, length, where):
        from urllib.parse import unquote, urlsplit
        if urlsplit(uri).scheme or os.path.isabs(unquote(uri)):
            self.fail(f"{where}: uri {uri[:80]!r} is not a path relative to the file")
        file = self.path.parent / unquote(uri)
        try:
            if not file.is_file():
                self.fail(f"{where}: {uri[:80]!r} is not a file beside {self.path.name}")
            with open(file, "rb") as f:
                return f.read(length)        # no more than it says it holds
        except (OSError, ValueError) as exc:
            self.fail(f"{where}: cannot read {uri[:80]!r}: {getattr(exc, 'strerror', 0) or exc}")

    def view(self, obj, key, where):
        """(bytes, byteStride or None) of the buffer view obj[key]."""
        index, view = self.item("bufferViews", obj, key, where)
        here = f"bufferView {index}"
        data = self.buffer(*self.item("buffers", view, "buffer", here))
        start = self.count(view, "byteOffset", here, 0)
        length = self.count(view, "byteLength", here, least=1)
        stride = self.count(view, "byteStride", here, None, least=1) if "byteStride" in view \
            else None
        if start + length > len(data):
            self.fail(f"{here}: bytes {start}..{start + length} lie outside its buffer of "
                      f"{len(data)}")
        return data[start:start + length], stride

    def accessor(self, obj, key, where):
        """(count, width) float64 values of the accessor obj[key]."""
        index, acc = self.item("accessors", obj, key, where)
        where = f"accessor {index}"
        count = self.count(acc, "count", where, least=1)
        kind = self.value(acc, "componentType", where, int)
        type_ = self.value(acc, "type", where, str)
        if kind not in _COMPONENTS:
            self.fail(f"{where}: componentType {kind} is not one of {sorted(_COMPONENTS)}")
        if type_ not in _WIDTHS:
            self.fail(f"{where}: type {type_[:40]!r} is not one of {list(_WIDTHS)}")
        normalized = self.value(acc, "normalized", where, bool, False)
        dtype, scale = _COMPONENTS[kind]
        width, size = _WIDTHS[type_], np.dtype(dtype).itemsize
        if "bufferView" not in acc:
            if count * width > _MAX_ZERO_ELEMENTS:
                self.fail(f"{where}: count {count} without a bufferView exceeds "
                          f"{_MAX_ZERO_ELEMENTS // width}")
            out = np.zeros((count, width))
        else:
            data, stride = self.view(acc, "bufferView", where)
            offset = self.count(acc, "byteOffset", where, 0)
            stride = stride or width * size
            end = offset + stride * (count - 1) + width * size
            if stride < width * size or offset % size or stride % size or end > len(data):
                self.fail(f"{where}: {count} elements of {width * size} bytes (stride "
                          f"{stride}) from byte {offset} run past its bufferView of "
                          f"{len(data)} bytes")
            raw = np.lib.stride_tricks.as_strided(
                np.frombuffer(data, dtype, offset=offset, count=(end - offset) // size),
                (count, width), (stride, size))
            out = raw.astype(np.float64)
        if "sparse" in acc:
            out = self._sparse(self.value(acc, "sparse", where, dict), out, dtype, where)
        if scale is not None and normalized:
            out = np.maximum(out / scale, -1.0)
        return out

    def _sparse(self, sparse, out, dtype, where):
        where = f"{where} sparse"
        n = self.count(sparse, "count", where, least=1)
        if n > len(out):
            self.fail(f"{where}: 'count' is {n}, more than the accessor's {len(out)}")
        idx = self.value(sparse, "indices", where, dict)
        vals = self.value(sparse, "values", where, dict)
        kind = self.value(idx, "componentType", f"{where} indices", int)
        if kind not in (5121, 5123, 5125):
            self.fail(f"{where} indices: componentType {kind} is not 5121, 5123 or 5125")
        index_bytes, _ = self.view(idx, "bufferView", f"{where} indices")
        value_bytes, _ = self.view(vals, "bufferView", f"{where} values")
        i_dtype = _COMPONENTS[kind][0]
        i_off = self.count(idx, "byteOffset", f"{where} indices", 0)
        v_off = self.count(vals, "byteOffset", f"{where} values", 0)
        width, size = out.shape[1], np.dtype(dtype).itemsize
        if (i_off + n * np.dtype(i_dtype).itemsize > len(index_bytes)
                or v_off + n * width * size > len(value_bytes)):
            self.fail(f"{where}: its indices or values run past their bufferViews")
        rows = np.frombuffer(index_bytes, i_dtype, n, i_off).astype(np.intp)
        if np.any(rows >= len(out)):
            self.fail(f"{where}: an index is beyond the accessor's count {len(out)}")
        out = out.copy()
        out[rows] = np.frombuffer(value_bytes, dtype, n * width, v_off).reshape(n, width)
        return out

    # -- the document ----------------------------------------------------------------

    def scene(self):
        n_nodes = len(self.items("nodes"))
        skins = [Skin(self.name(s, f"skin {i}", f"skin{i}"), self._joints(s, i, n_nodes))
                 for i, s in enumerate(self.items("skins"))]
        nodes = self.nodes({j for skin in skins for j in skin.joints})
        return Scene(nodes, skins, self.animations(nodes), source="gltf")

    def name(self, obj, where, default):
        name = self.value(obj, "name", where, str, default)
        return name or default

    def _joints(self, skin, i, n_nodes):
        joints = self.value(skin, "joints", f"skin {i}", list)
        if not joints or not all(isinstance(j, int) and not isinstance(j, bool)
                                 and 0 <= j < n_nodes for j in joints):
            self.fail(f"skin {i}: 'joints' must be a list of node indices")
        return joints

    def nodes(self, joints):
        raw = self.items("nodes")
        parent, children = [-1] * len(raw), []
        for i, node in enumerate(raw):
            children.append(self.value(node, "children", f"node {i}", list, []))
            for child in children[i]:
                if not (isinstance(child, int) and not isinstance(child, bool)
                        and 0 <= child < len(raw)):
                    self.fail(f"node {i}: child {_show(child)} is not a node index")
                if parent[child] >= 0:
                    self.fail(f"node {child} has two parents, {parent[child]} and {i}")
                parent[child] = i
        self._check_acyclic(parent)
        taken, out = set(), []
        for i, node in enumerate(raw):
            name = _distinct(self.name(node, f"node {i}", f"node{i}"), i, taken)
            kind = "joint" if i in joints else next(
                (k for k in ("mesh", "camera") if k in node), "node")
            extras = {k: node[k] for k in ("mesh", "camera", "skin", "extras") if k in node}
            out.append(Node(name, parent[i], list(children[i]), *self._rest(node, i),
                            kind=kind, extras=extras))
        return out

    def _check_acyclic(self, parent):
        looped = _looped_node(parent)
        if looped is not None:
            self.fail(f"node {looped} is its own ancestor (a cycle of children)")

    def _rest(self, node, i):
        numbers = {"translation": 3, "rotation": 4, "scale": 3, "matrix": 16}
        for key, n in numbers.items():
            value = node.get(key, [])
            if key not in node or (isinstance(value, list) and len(value) == n
                                   and all(_finite(x) for x in value)):
                continue
            self.fail(f"node {i}: '{key}' must be {n} finite numbers, not {_show(value)}")
        if "matrix" in node:
            return self._decompose(np.array(node["matrix"], dtype=np.float64), i)
        x, y, z, w = node.get("rotation", [0.0, 0.0, 0.0, 1.0])
        rotation = np.array([w, x, y, z], dtype=np.float64)
        norm = np.linalg.norm(rotation)
        if not 0 < norm < np.inf:
            self.fail(f"node {i}: 'rotation' is not a unit quaternion")
        return (np.array(node.get("translation", [0.0, 0.0, 0.0]), dtype=np.float64),
                rotation / norm,
                np.array(node.get("scale", [1.0, 1.0, 1.0]), dtype=np.float64))

    def _decompose(self, matrix, i):
        from ...quaternion import quat_from_matrix
        m = matrix.reshape(4, 4).T                      # column-major
        scale = np.linalg.norm(m[:3, :3], axis=0)
        if np.any(scale == 0) or not np.all(np.isfinite(scale)):
            self.fail(f"node {i}: its matrix has a zero or infinite scale")
        if np.linalg.det(m[:3, :3]) < 0:                # a mirror: one negative scale
            scale[0] = -scale[0]
        try:
            rotation = quat_from_matrix(m[:3, :3] / scale)
        except ValueError:
            self.fail(f"node {i}: its matrix is not translation, rotation and scale")
        if not np.allclose(m[3], [0, 0, 0, 1]):
            self.fail(f"node {i}: its matrix's last row is not (0, 0, 0, 1)")
        return m[:3, 3].copy(), rotation, scale

    def animations(self, nodes):
        raw = self.items("animations")
        names = [self.name(anim, f"animation {a}", "") for a, anim in enumerate(raw)]
        keys, taken = {}, set()
        for a in sorted(range(len(raw)), key=lambda a: not names[a]):    # named ones first
            keys[a] = _distinct(names[a] or str(a), a, taken)
        return {keys[a]: self.animation(anim, a, nodes) for a, anim in enumerate(raw)}

    def animation(self, anim, a, nodes):
        where = f"animation {a}"
        samplers = self.value(anim, "samplers", where, list, [])
        for s, sampler in enumerate(samplers):
            if not isinstance(sampler, dict):
                self.fail(f"{where}: samplers[{s}] is {_show(sampler)}, not an object")
        channels = {}
        for c, channel in enumerate(self.value(anim, "channels", where, list, [])):
            here = f"{where} channel {c}"
            if not isinstance(channel, dict):
                self.fail(f"{here} is {_show(channel)}, not an object")
            target = self.value(channel, "target", here, dict)
            if target.get("node") is None:   # an extension's target: nothing to play
                continue
            node = self.count(target, "node", f"{here} target")
            path = self.value(target, "path", f"{here} target", str)
            if node >= len(nodes):
                self.fail(f"{here}: target node {node} does not exist")
            if path not in (*_TARGET_WIDTHS, "weights"):
                self.fail(f"{here}: target path {path[:40]!r} is not translation, rotation, "
                          f"scale or weights")
            s = self.count(channel, "sampler", here)
            if s >= len(samplers):
                self.fail(f"{here}: sampler {s} does not exist")
            if (nodes[node].name, path) in channels:
                self.fail(f"{here}: node {node}'s {path} is animated twice")
            channels[nodes[node].name, path] = self.sampler(samplers[s], f"{where} sampler {s}",
                                                            path)
        return channels

    def sampler(self, sampler, where, path):
        interpolation = self.value(sampler, "interpolation", where, str, "LINEAR")
        if interpolation not in INTERPOLATIONS:
            self.fail(f"{where}: interpolation {interpolation[:40]!r} is not one of "
                      f"{INTERPOLATIONS}")
        times = self.accessor(sampler, "input", where)
        if times.shape[1] != 1:
            self.fail(f"{where}: input accessor {sampler['input']} is not SCALAR")
        times = times[:, 0]
        if not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
            self.fail(f"{where}: input accessor {sampler['input']}: key times must be "
                      f"finite and increasing")
        values = self.accessor(sampler, "output", where)
        rows = len(times) * (3 if interpolation == "CUBICSPLINE" else 1)
        width = _TARGET_WIDTHS.get(path)
        output = f"{where}: output accessor {sampler['output']}"
        if width is None:   # weights: scalars, as many per key as the mesh has targets
            if values.shape[1] != 1 or values.size % rows:
                self.fail(f"{output} does not hold a whole number of weights per key")
            values = values.reshape(rows, -1)
        elif values.shape != (rows, width):
            self.fail(f"{output} has shape {values.shape}, not ({rows}, {width}) for "
                      f"{len(times)} keys of {path}")
        if not np.all(np.isfinite(values)):
            self.fail(f"{output} holds non-finite values")
        if path == "rotation":
            norms = np.linalg.norm(values[1::3] if rows > len(times) else values, axis=1)
            if not np.all((norms > 0) & np.isfinite(norms)):
                self.fail(f"{output} holds a zero quaternion (or one too long for float64)")
        return GltfChannel(times, values, interpolation, path)


_KINDS = {int: "an integer", float: "a finite number", str: "a string", list: "a list",
          dict: "an object", bool: "true or false"}


def _finite(x):
    """x is a JSON number (not a boolean) that float64 holds finitely."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def _show(value):
    """A JSON value for a message, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _distinct(name, index, taken):
    """`name`, or `name#index` (again while taken), recorded in `taken`."""
    while name in taken:
        name = f"{name}#{index}"
    taken.add(name)
    return name
