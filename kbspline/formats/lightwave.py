"""LightWave scenes (.lws, LWSC 1 to 5): items, hierarchy, pivots and envelopes.

Motion blocks come in three layouts: LWSC 1 (LightWave 5) stores keyframe
records (the nine channel values on one line, then ``frame linear T C B``,
frames at ``FramesPerSecond``); LWSC 2 (an interim format) stores each
channel's keys as ``value time span T C B`` lines; LWSC 3+ stores each
channel as a ``{ Envelope ... }`` block of ``Key value time span p1..p6``
lines and ``Behaviors pre post``.  The envelopes play as LightWave does
(`lightwave_envelope`); `scene.animations` composes them into translation,
rotation (qy(H) qx(P) qz(B)) and scale channels in LightWave's own axes:
Y up, left-handed.  Files are read as UTF-8, or Latin-1 when not UTF-8.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
from typing import Optional, Union

import numpy as np

from .lightwave_envelope import BEHAVIOURS, SPAN_TYPES, Envelope

from .errors import FormatError
from .lws_camera import CAMERA_WORDS, SCENE_CAMERA_WORDS, camera_channel, read_camera_line
from .scene import Node, Scene, _looped_node

CHANNELS = ("X", "Y", "Z", "H", "P", "B", "SX", "SY", "SZ")
_KINDS = {"LoadObjectLayer": "mesh", "LoadObject": "mesh", "AddNullObject": "null",
          "AddBone": "bone", "AddLight": "light", "AddCamera": "camera"}
_TYPE_CODES = {"mesh": 1, "null": 1, "light": 2, "camera": 3, "bone": 4}
_NAMERS = {"BoneName": "bone", "LightName": "light", "CameraName": "camera"}
_MOTIONS = {"ObjectMotion": ("mesh", "null"), "BoneMotion": ("bone",),
            "LightMotion": ("light",), "CameraMotion": ("camera",)}
_HEX_ID = re.compile(r"[0-9A-Fa-f]{8}")
_INT = re.compile(r"[+-]?[0-9]{1,18}")
# a decimal number as LightWave writes it (float() also takes "1_0" and other scripts' digits)
_NON_FINITE = ("nan", "inf", "infinity")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_OLD_SPANS = {0: "tcb", 2: "tcb", 3: "linear", 4: "stepped"}  # LWSC 2's span field


_RANGE_WORDS = ("FirstFrame", "LastFrame", "PreviewFirstFrame", "PreviewLastFrame")


class LwsError(FormatError):
    """A malformed LightWave scene; the message names the file and line."""


@dataclasses.dataclass(frozen=True)
class LwsScene(Scene):
    """A LightWave scene: the scene model plus ``envelopes[item][channel]``
    (channels X Y Z H P B SX SY SZ, each an `Envelope`), ``fps``, the
    file's ``version`` and ``frame_ranges``, its (FirstFrame, LastFrame)
    and (PreviewFirstFrame, PreviewLastFrame) where it states them."""
    envelopes: dict = dataclasses.field(default_factory=dict)
    fps: float = 30.0
    version: int = 3
    frame_ranges: tuple = ()


class LwsChannel:
    """Translation, rotation or scale of one item, from three envelopes
    (the `kbspline.formats.scene.Channel` protocol).  ``times`` are the
    union of the envelopes' key times; ``interpolation`` is ``"LWS"``."""
    interpolation = "LWS"

    def __init__(self, path: str, envelopes: tuple, degrees: bool) -> None:
        self.path, self.envelopes, self._degrees = path, envelopes, degrees
        self.times = np.unique(np.concatenate([e.times for e in envelopes]))

    def __repr__(self) -> str:
        return f"LwsChannel({self.path!r}, {len(self.times)} key times)"

    def key_times(self, start: float, end: float) -> np.ndarray:
        """Every envelope's `Envelope.key_times` within [start, end].

        Parameters
        ----------
        start, end : float
            Seconds.

        Returns
        -------
        ndarray
            Increasing seconds.
        """
        return np.unique(np.concatenate([e.key_times(start, end) for e in self.envelopes]))

    def __call__(self, t) -> np.ndarray:
        """The channel at seconds `t`.

        Parameters
        ----------
        t : float or array_like (M,)

        Returns
        -------
        ndarray (M, 3) positions or scales, or (M, 4) unit (w, x, y, z) rotations.
        """
        t = np.atleast_1d(np.asarray(t, dtype=np.float64)).reshape(-1)
        values = np.stack([e(t) for e in self.envelopes], axis=-1)
        if self.path != "rotation":
            return values
        if self._degrees:
            values = np.radians(values)
        return heading_pitch_bank(values)


def heading_pitch_bank(hpb) -> np.ndarray:
    """Unit (w, x, y, z) quaternions qy(H) qx(P) qz(B): LightWave turns an
    item by bank about z, then pitch about x, then heading about y (in its
    left-handed axes).

    Parameters
    ----------
    hpb : array_like (..., 3)
        Heading, pitch, bank in radians.

    Returns
    -------
    ndarray (..., 4)
    """
    hpb = np.asarray(hpb, dtype=np.float64)
    ch, cp, cb = (np.cos(hpb[..., i] / 2) for i in range(3))
    sh, sp, sb = (np.sin(hpb[..., i] / 2) for i in range(3))
    # qy(H) qx(P) = (ch cp, ch sp, sh cp, -sh sp), then times qz(B)
    w, x, y, z = ch * cp, ch * sp, sh * cp, -sh * sp
    return np.stack([w * cb - z * sb, x * cb + y * sb, y * cb - x * sb, z * cb + w * sb],
                    axis=-1)


@dataclasses.dataclass
class _Item:
    kind: str
    name: str
    line: int
    item_id: int
    owner: int = -1                # a bone's object (index into items)
    parent_ref: Optional[tuple] = None   # (form, number, line)
    pivot: tuple = (0.0, 0.0, 0.0)
    envelopes: dict = dataclasses.field(default_factory=dict)
    num_channels: int = 0
    camera: dict = dataclasses.field(default_factory=dict)   # lws_camera's settings


class _Reader:
    """The scene's non-blank lines with their numbers, read front to back."""

    def __init__(self, path: pathlib.Path, text: str) -> None:
        self.path = path
        self.lines = [(n, line.strip()) for n, line in
                      enumerate(re.split(r"\r\n|\r|\n", text), start=1) if line.strip()]
        self.pos = 0

    def error(self, line: int, reason: str) -> LwsError:
        return LwsError(f"{self.path}: line {line}: {reason}")

    def peek(self) -> Optional[tuple]:
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def next(self, inside: str) -> tuple:
        if self.pos >= len(self.lines):
            last = self.lines[-1][0] if self.lines else 0
            raise self.error(last, f"the file ends inside {inside}")
        self.pos += 1
        return self.lines[self.pos - 1]

    def integer(self, line: int, token: str, what: str, low: int = 0,
                high: int = 1 << 62) -> int:
        if not _INT.fullmatch(token) or not low <= int(token) <= high:
            raise self.error(line, f"{what} must be an integer in [{low}, {high}], "
                                   f"not {token[:40]!r}")
        return int(token)

    def numbers(self, line: int, tokens: list, count: int, what: str) -> list:
        if len(tokens) != count:
            raise self.error(line, f"{what} must have {count} numbers, not {len(tokens)}")
        for tok in tokens:
            if not _NUMBER.fullmatch(tok) and tok.lower().lstrip("+-") not in _NON_FINITE:
                raise self.error(line, f"{what} holds a word that is not a number")
        values = [float(tok) for tok in tokens]
        if not all(abs(v) < 1e300 for v in values):
            raise self.error(line, f"{what} holds a number that is not finite")
        return values

    def skip_block(self, line: int) -> None:
        depth = 1
        while depth:
            _, text = self.next(f"the block opened at line {line}")
            depth += text.startswith("{") - (text == "}")


def read_lws(path: Union[str, os.PathLike]) -> LwsScene:
    """Reads a LightWave scene (.lws, LWSC 1 to 5).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    LwsScene
        Nodes (objects named by their file's base name, nulls, bones, lights,
        cameras) with parents and pivots, ``envelopes[item][channel]``, and
        ``animations`` (one animation named after the file) with each
        animated item's translation, rotation and scale in LightWave's axes
        (``up_axis="Y"``, ``handedness="left"``).

    Raises
    ------
    LwsError
        (a `FormatError`) for a malformed file, naming the file and line.
    """
    path = pathlib.Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LwsError(f"{path}: cannot be read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    reader = _Reader(path, text)
    version, fps, items, ranges = _parse(reader)
    scene = _build_scene(reader, version, fps, items)
    return dataclasses.replace(scene, frame_ranges=ranges)


def _parse(reader: _Reader):
    line, text = reader.next("the header")
    if text != "LWSC":
        raise reader.error(line, "not a LightWave scene (the first line is not LWSC)")
    line, text = reader.next("the header")
    version = reader.integer(line, text, "the LWSC version", 1, 5)
    fps = 30.0
    items: list[_Item] = []
    scene_camera: dict = {}
    tally = _Tally()
    frames: dict = {}     # FirstFrame, LastFrame, PreviewFirstFrame, PreviewLastFrame
    while reader.peek() is not None:
        line, text = reader.next("the scene")
        tokens = text.split()
        word = tokens[0]
        if word.startswith("{"):
            reader.skip_block(line)
        elif word == "}" or not word[0].isalpha():
            raise reader.error(line, f"unexpected line {text[:40]!r}")
        elif word in _KINDS:
            items.append(_new_item(reader, version, word, tokens, line, tally))
        elif word in _NAMERS:
            item = _current(reader, items, line, word)
            if item.kind != _NAMERS[word] or len(tokens) < 2:
                raise reader.error(line, f"{word} does not name a {item.kind}")
            item.name = text[len(word):].strip()
        elif word in _MOTIONS:
            item = _current(reader, items, line, word)
            if item.kind not in _MOTIONS[word]:
                raise reader.error(line, f"{word} for a {item.kind}")
            _read_motion(reader, version, fps, item, line)
        elif word in ("ParentItem", "ParentObject"):
            item = _current(reader, items, line, word)
            if len(tokens) != 2:
                raise reader.error(line, f"{word} takes one item number")
            if word == "ParentItem":
                if not re.fullmatch(r"[0-9A-Fa-f]{1,8}", tokens[1]):
                    raise reader.error(line, f"ParentItem {tokens[1][:20]!r} is not a hex id")
                item.parent_ref = ("id", int(tokens[1], 16), line)
            else:
                item.parent_ref = ("object", reader.integer(line, tokens[1], word, 1), line)
        elif word in ("PivotPosition", "PivotPoint"):
            item = _current(reader, items, line, word)
            item.pivot = tuple(reader.numbers(line, tokens[1:], 3, word))
        elif word == "Pre/PostBehavior" and version < 3:
            _set_behaviours(reader, _current(reader, items, line, word), tokens, line)
        elif word == "EndBehavior" and version < 3:
            item = _current(reader, items, line, word)
            code = reader.integer(line, tokens[-1], word, 0, 2)
            for env in item.envelopes.values():
                env.post = BEHAVIOURS[code]
        elif word == "FramesPerSecond":
            fps = reader.numbers(line, tokens[1:], 1, word)[0]
            if not fps > 0:
                raise reader.error(line, f"FramesPerSecond must be positive, not {fps}")
        elif word in CAMERA_WORDS or word in SCENE_CAMERA_WORDS:
            settings = scene_camera if word in SCENE_CAMERA_WORDS \
                else _current(reader, items, line, word).camera
            if word in CAMERA_WORDS and settings is not scene_camera \
                    and items[-1].kind != "camera":
                continue                      # another item's line of the same name
            read_camera_line(reader, word, tokens, line, settings, lambda at: (
                read_envelope_block(reader, at) if version >= 3
                else read_old_envelope(reader, version, fps, at)))
        elif word in _RANGE_WORDS:
            frames[word] = reader.numbers(line, tokens[1:], 1, word)[0]
        elif word == "Plugin":
            while reader.next(f"the Plugin of line {line} (no EndPlugin)")[1] != "EndPlugin":
                pass
    for item in items:
        if item.kind == "camera":
            item.camera = {**scene_camera, **item.camera}
    ranges = tuple((frames[a], frames[b]) for a, b in (_RANGE_WORDS[:2], _RANGE_WORDS[2:])
                   if a in frames and b in frames and frames[a] <= frames[b])
    return version, fps, items, ranges


def _current(reader, items, line, word):
    if not items:
        raise reader.error(line, f"{word} before any item")
    return items[-1]


@dataclasses.dataclass
class _Tally:
    """What the items read so far number, so that each new item's default
    id costs O(1) (a scan of the items made long scenes quadratic)."""
    items: int = 0
    objects: list = dataclasses.field(default_factory=list)  # their indices
    bones: dict = dataclasses.field(default_factory=dict)    # per owning object
    others: dict = dataclasses.field(default_factory=dict)   # lights, cameras


def _new_item(reader, version, word, tokens, line, tally):
    kind = _KINDS[word]
    rest = tokens[1:]
    if word == "LoadObjectLayer":
        if not rest:
            raise reader.error(line, "LoadObjectLayer needs a layer and a file")
        reader.integer(line, rest[0], "the layer number", 0)
        rest = rest[1:]
    explicit = None
    if version >= 4 and rest and _HEX_ID.fullmatch(rest[0]) and (len(rest) > 1 or kind in (
            "light", "camera", "bone")):
        explicit, rest = int(rest[0], 16), rest[1:]
    if kind == "mesh":
        if not rest:
            raise reader.error(line, f"{word} needs a file name")
        name = re.split(r"[\\/:]", " ".join(rest))[-1]
        name = name.rsplit(".", 1)[0] if "." in name else name
    elif kind == "null":
        name = " ".join(rest) or "Null"
    else:
        name = " ".join(rest) or kind.capitalize()
    owner, objects = -1, len(tally.objects)
    if kind == "bone":
        if not objects:
            raise reader.error(line, "AddBone before any object")
        owner = tally.objects[-1]
        default = (4 << 28) | (tally.bones.get(owner, 0) << 16) | (objects - 1)
        tally.bones[owner] = tally.bones.get(owner, 0) + 1
    elif kind in ("light", "camera"):
        default = (_TYPE_CODES[kind] << 28) | tally.others.get(kind, 0)
        tally.others[kind] = tally.others.get(kind, 0) + 1
    else:
        default = (1 << 28) | objects
        tally.objects.append(tally.items)
    tally.items += 1
    return _Item(kind, name, line, default if explicit is None else explicit, owner)


def _key_line(reader, tokens, line):
    """One LWSC 3+ ``Key value time span p1..p6`` line (trailing
    parameters may be left out; they are then 0)."""
    if not 4 <= len(tokens) <= 10:
        raise reader.error(line, f"a Key line has 3 to 9 numbers, not {len(tokens) - 1}")
    span = reader.integer(line, tokens[3], "the span type", 0, len(SPAN_TYPES) - 1)
    nums = reader.numbers(line, tokens[1:3] + tokens[4:], len(tokens) - 2, "the Key line")
    params = tuple(nums[2:]) + (0.0,) * (10 - len(tokens))
    return (nums[0], nums[1], SPAN_TYPES[span], params)


def _make_envelope(reader, keys, lines, pre, post, angle_unit, where):
    for n in range(1, len(keys)):
        if not keys[n][1] > keys[n - 1][1]:
            raise reader.error(lines[n], f"key time {keys[n][1]} does not follow "
                                         f"{keys[n - 1][1]} (keys must be in time order)")
    try:
        return Envelope(keys, pre, post, angle_unit)
    except ValueError as exc:
        raise reader.error(where, f"envelope: {exc}") from None


def _read_motion(reader, version, fps, item, line):
    if version >= 3:
        _read_envelopes(reader, item, line)
    elif version == 2:
        _read_motion_v2(reader, item, line)
    else:
        _read_motion_v1(reader, fps, item, line)


def _angle_unit(channel, version):
    return None if channel not in (3, 4, 5) else ("degrees" if version < 3 else "radians")


def _read_envelopes(reader, item, line):
    num_line, text = reader.next(f"the motion of line {line}")
    tokens = text.split()
    if tokens[0] != "NumChannels" or len(tokens) != 2:
        raise reader.error(num_line, "a motion block starts with NumChannels")
    item.num_channels = reader.integer(num_line, tokens[1], "NumChannels", 0, len(CHANNELS))
    while reader.peek() is not None and reader.peek()[1].split()[0] == "Channel":
        ch_line, text = reader.next("a Channel")
        tokens = text.split()
        if len(tokens) != 2:
            raise reader.error(ch_line, "Channel takes one channel number")
        channel = reader.integer(ch_line, tokens[1], "the channel number", 0,
                                 item.num_channels - 1)
        item.envelopes[CHANNELS[channel]] = read_envelope_block(
            reader, ch_line, _angle_unit(channel, 3))
    if len(item.envelopes) != item.num_channels:
        raise reader.error(num_line, f"NumChannels says {item.num_channels} but the motion "
                                     f"holds {len(item.envelopes)} channels")


def read_envelope_block(reader, line, angle_unit=None):
    """A ``{ Envelope`` block (LWSC 3+) after `line`: its keys and behaviours."""
    open_line, text = reader.next(f"the envelope of line {line}")
    if text.split() != ["{", "Envelope"]:
        raise reader.error(open_line, f"line {line} is followed by '{{ Envelope'")
    count_line, text = reader.next(f"the envelope of line {open_line}")
    count = reader.integer(count_line, text, "the key count", 1)
    keys, lines, behaviours = [], [], ("constant", "constant")
    while True:
        key_line, text = reader.next(f"the envelope of line {open_line}")
        tokens = text.split()
        if tokens[0] == "Key":
            keys.append(_key_line(reader, tokens, key_line))
            lines.append(key_line)
        elif tokens[0] == "Behaviors":
            if len(tokens) != 3:
                raise reader.error(key_line, "Behaviors takes two numbers")
            behaviours = tuple(BEHAVIOURS[reader.integer(key_line, tok, "a behaviour", 0, 5)]
                               for tok in tokens[1:])
        elif text == "}":
            break
        else:
            raise reader.error(key_line, f"unexpected line {text[:40]!r} in an envelope")
    if len(keys) != count:
        raise reader.error(count_line, f"the envelope says {count} keys but holds "
                                       f"{len(keys)}")
    return _make_envelope(reader, keys, lines, *behaviours, angle_unit, open_line)


def read_old_envelope(reader, version, fps, line):
    """An LWSC 1-2 ``(envelope)``: one channel laid out as a motion block."""
    item = _Item("camera", "", line, 0)
    if version == 2:
        _read_motion_v2(reader, item, line)
    else:
        _read_motion_v1(reader, fps, item, line)
    if item.num_channels != 1:
        raise reader.error(line, f"an envelope has one channel, not {item.num_channels}")
    if reader.peek() is not None and reader.peek()[1].split()[0] == "EndBehavior":
        end_line, text = reader.next("an envelope")
        code = reader.integer(end_line, text.split()[-1], "EndBehavior", 0, 2)
        item.envelopes["X"].post = BEHAVIOURS[code]
    return item.envelopes["X"]


def _read_motion_v2(reader, item, line):
    num_line, text = reader.next(f"the motion of line {line}")
    item.num_channels = reader.integer(num_line, text, "the channel count", 0, len(CHANNELS))
    for channel in range(item.num_channels):
        count_line, text = reader.next(f"the motion of line {line}")
        count = reader.integer(count_line, text, "the key count", 1)
        keys, lines = [], []
        for _ in range(count):
            key_line, text = reader.next(f"the channel of line {count_line} "
                                         f"(it says {count} keys)")
            tokens = text.split()
            if len(tokens) != 6:
                raise reader.error(key_line, f"a key line has 6 numbers "
                                             f"(value time span T C B), not {len(tokens)}")
            code = reader.integer(key_line, tokens[2], "the span type", 0, 9)
            if code not in _OLD_SPANS:
                raise reader.error(key_line, f"unknown span type {code} (LWSC 2 spans: "
                                             f"0 or 2 TCB, 3 linear, 4 stepped)")
            value, time, t, c, b = reader.numbers(key_line, tokens[:2] + tokens[3:], 5, "a key")
            keys.append((value, time, _OLD_SPANS[code], (t, c, b, 0.0, 0.0, 0.0)))
            lines.append(key_line)
        item.envelopes[CHANNELS[channel]] = _make_envelope(
            reader, keys, lines, "constant", "constant", _angle_unit(channel, 2), count_line)


def _read_motion_v1(reader, fps, item, line):
    num_line, text = reader.next(f"the motion of line {line}")
    item.num_channels = reader.integer(num_line, text, "the channel count", 1, len(CHANNELS))
    count_line, text = reader.next(f"the motion of line {line}")
    count = reader.integer(count_line, text, "the key count", 1)
    keys = [[] for _ in range(item.num_channels)]
    lines = []
    for _ in range(count):
        value_line, text = reader.next(f"the motion of line {line} (it says {count} keys)")
        values = reader.numbers(value_line, text.split(), item.num_channels, "a key's values")
        spline_line, text = reader.next(f"the motion of line {line} (it says {count} keys)")
        frame, linear, t, c, b = reader.numbers(spline_line, text.split(), 5,
                                                "a key's frame, linear, T, C, B")
        if linear not in (0.0, 1.0):
            raise reader.error(spline_line, f"the linear flag must be 0 or 1, not {linear:g}")
        span = "linear" if linear else "tcb"
        for channel, value in enumerate(values):
            keys[channel].append((value, frame / fps, span, (t, c, b, 0.0, 0.0, 0.0)))
        lines.append(spline_line)
    for channel in range(item.num_channels):
        item.envelopes[CHANNELS[channel]] = _make_envelope(
            reader, keys[channel], lines, "constant", "constant", _angle_unit(channel, 1),
            count_line)


def _set_behaviours(reader, item, tokens, line):
    channels = [CHANNELS[n] for n in range(item.num_channels)]
    if len(tokens) - 1 != 2 * len(channels):
        raise reader.error(line, f"Pre/PostBehavior needs {2 * len(channels)} numbers "
                                 f"(two per channel), not {len(tokens) - 1}")
    codes = [reader.integer(line, tok, "a behaviour", 0, 5) for tok in tokens[1:]]
    for n, name in enumerate(channels):
        env = item.envelopes.get(name)
        if env is None:
            raise reader.error(line, f"Pre/PostBehavior for channel {name}, which has no keys")
        env.pre, env.post = BEHAVIOURS[codes[2 * n]], BEHAVIOURS[codes[2 * n + 1]]


def _parents(reader, items):
    by_id, shared = {}, {}
    for n, item in enumerate(items):
        if item.item_id in by_id:
            shared[item.item_id] = by_id[item.item_id]
        by_id[item.item_id] = n
    objects = [n for n, item in enumerate(items) if item.kind in ("mesh", "null")]
    parents = []
    for item in items:
        if item.parent_ref is None:
            parents.append(item.owner)
            continue
        form, number, line = item.parent_ref
        if form == "id":
            if number not in by_id:
                raise reader.error(line, f"ParentItem {number:08X} names no item")
            if number in shared:  # the file gave one id to two items
                raise reader.error(line, f"ParentItem {number:08X} names two items (lines "
                                         f"{items[shared[number]].line} and "
                                         f"{items[by_id[number]].line})")
            parents.append(by_id[number])
        else:
            if number > len(objects):
                raise reader.error(line, f"ParentObject {number}: the scene has "
                                         f"{len(objects)} objects")
            parents.append(objects[number - 1])
    looped_at = _looped_node(parents)
    if looped_at is not None:
        looped = items[looped_at]
        raise reader.error(looped.parent_ref[2] if looped.parent_ref else looped.line,
                           f"{looped.name!r} is its own ancestor")
    return parents


def _unique_names(items):
    seen = {}
    for item in items:
        base = item.name
        seen[base] = seen.get(base, 0) + 1
        if seen[base] > 1:
            item.name = f"{base} ({seen[base]})"
            while item.name in seen:
                seen[base] += 1
                item.name = f"{base} ({seen[base]})"
            seen[item.name] = 1


def _build_scene(reader, version, fps, items):
    _unique_names(items)
    parents = _parents(reader, items)
    children = [[] for _ in items]
    for n, p in enumerate(parents):
        if p >= 0:
            children[p].append(n)
    nodes, animation, envelopes = [], {}, {}
    degrees = version < 3
    for n, item in enumerate(items):
        env = item.envelopes
        envelopes[item.name] = dict(env)
        rest = {name: (float(env[name](0.0)) if name in env else (1.0 if name[0] == "S" else 0.0))
                for name in CHANNELS}
        hpb = np.array([rest["H"], rest["P"], rest["B"]])
        rotation = heading_pitch_bank(np.radians(hpb) if degrees else hpb)
        extras = {"item_id": f"{item.item_id:08X}", "line": item.line}
        if item.kind == "camera":
            fov, extras["camera"] = camera_channel(item.camera)
            if fov is not None:
                animation[(item.name, "fov")] = fov
        nodes.append(Node(name=item.name, parent=parents[n], children=children[n],
                          translation=np.array([rest["X"], rest["Y"], rest["Z"]]),
                          rotation=rotation, scale=np.array([rest["SX"], rest["SY"], rest["SZ"]]),
                          kind=item.kind, pivot=np.array(item.pivot, dtype=np.float64),
                          extras=extras))
        for path, names in (("translation", CHANNELS[:3]), ("rotation", CHANNELS[3:6]),
                            ("scale", CHANNELS[6:])):
            if any(name in env and len(env[name].keys) > 1 for name in names):
                # a channel the file leaves out holds its rest value
                parts = tuple(env[name] if name in env else Envelope([(rest[name], 0.0, "tcb",
                              (0.0,) * 6)]) for name in names)
                animation[(item.name, path)] = LwsChannel(path, parts, degrees)
    name = reader.path.stem
    return LwsScene(nodes=nodes, skins=[], animations={name: animation} if animation else {},
                    up_axis="Y", handedness="left", source="lws", envelopes=envelopes,
                    fps=fps, version=version)
