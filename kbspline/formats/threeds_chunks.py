"""The chunks of a .3ds file: a bounded walker and the records the reader keeps.

A chunk is a little-endian header (u16 id, u32 length counting the header)
followed by its data and sub-chunks.  Every read is checked against its
chunk's end, so a bad file stops with a `ThreeDSError` naming the chunk id
and byte offset, never with a read past the data or an allocation sized by
an unchecked count.  The layout follows lib3ds and Assimp's 3DS loader.
"""
from __future__ import annotations

import dataclasses
import struct
from typing import Iterator, Optional

import numpy as np

from .errors import FormatError

MAIN, MDATA, NAMED_OBJECT = 0x4D4D, 0x3D3D, 0x4000
N_TRI_OBJECT, MESH_MATRIX = 0x4100, 0x4160
N_DIRECT_LIGHT, DL_SPOTLIGHT, N_CAMERA = 0x4600, 0x4610, 0x4700
KFDATA, KFHDR, KFSEG, KFCURTIME = 0xB000, 0xB00A, 0xB008, 0xB009
NODE_TAGS = {0xB001: "ambient", 0xB002: "object", 0xB003: "camera", 0xB004: "target",
             0xB005: "light", 0xB006: "light_target", 0xB007: "spotlight"}
NODE_ID, NODE_HDR, INSTANCE_NAME, PIVOT = 0xB030, 0xB010, 0xB011, 0xB013
# track chunk id -> (kind, floats per key value); morph keys hold a name
TRACK_TAGS = {0xB020: ("position", 3), 0xB021: ("rotation", 4), 0xB022: ("scale", 3),
              0xB023: ("fov", 1), 0xB024: ("roll", 1), 0xB025: ("color", 3),
              0xB026: ("morph", 0), 0xB027: ("hotspot", 1), 0xB028: ("falloff", 1),
              0xB029: ("hide", 0)}
# per-key flag bits, in the order their floats follow the flag word
KEY_FIELDS = ("tension", "continuity", "bias", "ease_to", "ease_from")
_HEADER = 6


class ThreeDSError(FormatError):
    """A malformed .3ds file; the message names the chunk id (hex) and byte offset."""


@dataclasses.dataclass
class RawTrack:
    """A track as stored: frames, values, per-key TCB and ease, flags."""
    kind: str
    flags: int
    frames: np.ndarray        # (K,) int64
    values: np.ndarray        # (K, n) float64; rotation (angle, x, y, z)
    key_flags: np.ndarray     # (K,) the flag word of each key
    tcb: dict                 # KEY_FIELDS -> (K,) float64 (0 where not stored)
    names: list               # morph keys' object names, else []
    offset: int


@dataclasses.dataclass
class RawNode:
    tag: str
    offset: int
    node_id: Optional[int] = None
    name: str = ""
    flags: tuple = (0, 0)
    parent_id: int = 0xFFFF
    instance: str = ""
    pivot: Optional[np.ndarray] = None
    tracks: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RawFile:
    objects: dict             # name -> dict(kind=..., matrix=(4, 3) or camera/light data)
    nodes: list
    keyframer: bool = False
    scene_name: str = ""
    segment: Optional[tuple] = None
    current_time: Optional[int] = None


class _Data:
    """A cursor over one chunk's data, refusing reads past its end."""

    def __init__(self, buf: bytes, pos: int, end: int, cid: int, offset: int):
        self.buf, self.pos, self.end, self.cid, self.offset = buf, pos, end, cid, offset

    def fail(self, why: str) -> ThreeDSError:
        return ThreeDSError(f"chunk 0x{self.cid:04X} at byte {self.offset}: {why}")

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > self.end:
            raise self.fail(f"truncated: needs {size} more bytes at byte {self.pos}, "
                            f"the chunk ends at {self.end}")
        out = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return out

    def floats(self, n: int) -> np.ndarray:
        out = np.array(self.take(f"<{n}f"), dtype=np.float64)
        if not np.all(np.isfinite(out)):
            raise self.fail(f"non-finite float before byte {self.pos}")
        return out

    def cstr(self) -> str:
        stop = self.buf.find(b"\0", self.pos, self.end)
        if stop < 0:
            raise self.fail("a name runs past the chunk's end (no terminating NUL)")
        text = self.buf[self.pos:stop].decode("latin-1")
        self.pos = stop + 1
        return text


def chunks(buf: bytes, start: int, end: int, parent: int,
           parent_offset: int) -> Iterator[tuple[int, int, int, int]]:
    """(id, offset, data start, end) of each chunk in buf[start:end]."""
    pos = start
    while pos < end:
        if pos + _HEADER > end:
            raise ThreeDSError(f"chunk 0x{parent:04X} at byte {parent_offset}: "
                               f"{end - pos} stray bytes at byte {pos}, too few for a chunk header")
        cid, length = struct.unpack_from("<HI", buf, pos)
        if length < _HEADER or pos + length > end:
            raise ThreeDSError(f"chunk 0x{cid:04X} at byte {pos}: length {length} runs past "
                               f"its parent 0x{parent:04X} (which ends at byte {end})"
                               if length >= _HEADER else
                               f"chunk 0x{cid:04X} at byte {pos}: length {length} is shorter "
                               "than its header")
        yield cid, pos, pos + _HEADER, pos + length
        pos += length


def parse(buf: bytes) -> RawFile:
    """The objects and keyframer nodes of a whole .3ds file."""
    if len(buf) < _HEADER:
        raise ThreeDSError(f"chunk 0x{MAIN:04X} at byte 0: the file has {len(buf)} bytes, "
                           "too few for a chunk header")
    cid, length = struct.unpack_from("<HI", buf, 0)
    if cid != MAIN:
        raise ThreeDSError(f"chunk 0x{cid:04X} at byte 0: not a .3ds file (expected the "
                           f"main chunk 0x{MAIN:04X})")
    if length < _HEADER or length > len(buf):
        raise ThreeDSError(f"chunk 0x{MAIN:04X} at byte 0: length {length} " +
                           (f"runs past the file's end (byte {len(buf)})" if length > len(buf)
                            else "is shorter than its header"))
    raw = RawFile(objects={}, nodes=[])
    # bytes after the main chunk (padding, other data) are not read, as lib3ds does
    for sub, soff, sdata, send in chunks(buf, _HEADER, length, MAIN, 0):
        if sub == MDATA:
            _read_mdata(buf, sdata, send, soff, raw)
        elif sub == KFDATA:
            raw.keyframer = True
            _read_kfdata(buf, sdata, send, soff, raw)
    return raw


def _read_mdata(buf: bytes, start: int, end: int, offset: int, raw: RawFile) -> None:
    for cid, off, data, cend in chunks(buf, start, end, MDATA, offset):
        if cid != NAMED_OBJECT:
            continue
        cur = _Data(buf, data, cend, cid, off)
        name = cur.cstr()
        record: dict = {"kind": "null", "offset": off}
        for sub, soff, sdata, send in chunks(buf, cur.pos, cend, cid, off):
            body = _Data(buf, sdata, send, sub, soff)
            if sub == N_TRI_OBJECT:
                record["kind"] = "mesh"
                for mid, moff, mdata, mend in chunks(buf, sdata, send, sub, soff):
                    if mid == MESH_MATRIX:
                        record["matrix"] = _Data(buf, mdata, mend, mid, moff).floats(12) \
                            .reshape(4, 3)
            elif sub == N_CAMERA:
                values = body.floats(8)
                record.update(kind="camera", position=values[:3], target=values[3:6],
                              roll=values[6], lens=values[7])
            elif sub == N_DIRECT_LIGHT:
                record.update(kind="light", position=body.floats(3))
                for lid, _, _, _ in chunks(buf, body.pos, send, sub, soff):
                    if lid == DL_SPOTLIGHT:
                        record["spotlight"] = True
        raw.objects.setdefault(name, record)


def _read_kfdata(buf: bytes, start: int, end: int, offset: int, raw: RawFile) -> None:
    for cid, off, data, cend in chunks(buf, start, end, KFDATA, offset):
        cur = _Data(buf, data, cend, cid, off)
        if cid == KFHDR:
            cur.take("<H")
            raw.scene_name = cur.cstr()
        elif cid == KFSEG:
            raw.segment = cur.take("<ii")
        elif cid == KFCURTIME:
            raw.current_time = cur.take("<i")[0]
        elif cid in NODE_TAGS:
            raw.nodes.append(_read_node(buf, data, cend, cid, off))


def _read_node(buf: bytes, start: int, end: int, tag: int, offset: int) -> RawNode:
    node = RawNode(tag=NODE_TAGS[tag], offset=offset)
    seen_header = False
    for cid, off, data, cend in chunks(buf, start, end, tag, offset):
        cur = _Data(buf, data, cend, cid, off)
        if cid == NODE_ID:
            node.node_id = cur.take("<H")[0]
        elif cid == NODE_HDR:
            node.name = cur.cstr()
            flags1, flags2, parent = cur.take("<HHH")
            node.flags, node.parent_id, seen_header = (flags1, flags2), parent, True
        elif cid == INSTANCE_NAME:
            node.instance = cur.cstr()
        elif cid == PIVOT:
            node.pivot = cur.floats(3)
        elif cid in TRACK_TAGS:
            track = _read_track(cur, *TRACK_TAGS[cid])
            if track.kind in node.tracks:
                raise cur.fail(f"a second {track.kind} track in node chunk "
                               f"0x{tag:04X} at byte {offset}")
            node.tracks[track.kind] = track
    if not seen_header:
        raise ThreeDSError(f"chunk 0x{tag:04X} at byte {offset}: node without a "
                           f"NODE_HDR chunk (0x{NODE_HDR:04X})")
    return node


def _read_track(cur: _Data, kind: str, width: int) -> RawTrack:
    flags, _, _, count = cur.take("<HIIi")
    least = 6 + (4 * width if kind != "morph" else 1)    # the smallest key's bytes
    if count < 0 or count * least > cur.end - cur.pos:
        raise cur.fail(f"{kind} track: key count {count} does not fit in the "
                       f"{cur.end - cur.pos} bytes left")
    frames = np.empty(count, dtype=np.int64)
    key_flags = np.empty(count, dtype=np.int64)
    values = np.empty((count, width))
    tcb = {name: np.zeros(count) for name in KEY_FIELDS}
    names = []
    for k in range(count):
        frames[k], key_flags[k] = cur.take("<iH")
        for bit, name in enumerate(KEY_FIELDS):
            if key_flags[k] & (1 << bit):
                tcb[name][k] = cur.floats(1)[0]
        if kind == "morph":
            names.append(cur.cstr())
        else:
            values[k] = cur.floats(width)
    if cur.pos != cur.end:
        raise cur.fail(f"{kind} track: key count {count} leaves {cur.end - cur.pos} bytes "
                       "unread")
    bad = np.flatnonzero(np.diff(frames) <= 0)
    if bad.size:
        raise cur.fail(f"{kind} track: key {bad[0] + 1} at frame {frames[bad[0] + 1]} does "
                       f"not follow frame {frames[bad[0]]}")
    for name, low in (("tension", -1.0), ("continuity", -1.0), ("bias", -1.0),
                      ("ease_to", 0.0), ("ease_from", 0.0)):
        out = np.flatnonzero((tcb[name] < low) | (tcb[name] > 1.0))
        if out.size:
            raise cur.fail(f"{kind} track: key {out[0]} has {name} {tcb[name][out[0]]}, "
                           f"outside [{low:g}, 1]")
    return RawTrack(kind, flags, frames, values, key_flags, tcb, names, cur.offset)
