"""A small .3ds writer for the tests: keyframer nodes with tracks of any keys.

Written from the chunk layout (lib3ds, Assimp's 3DS loader), not from
kbspline's reader.  `random_scene` makes scenes of random keys: every TCB and
ease, multi-turn rotations, small backward steps stored the long way, zero
axes, loop and repeat flags, hierarchies, cameras with targets, roll and fov.
"""
import struct

import numpy as np

TRACK_IDS = {"position": (0xB020, 3), "rotation": (0xB021, 4), "scale": (0xB022, 3),
             "fov": (0xB023, 1), "roll": (0xB024, 1), "color": (0xB025, 3),
             "hotspot": (0xB027, 1), "falloff": (0xB028, 1), "hide": (0xB029, 0)}
NODE_IDS = {"object": 0xB002, "camera": 0xB003, "target": 0xB004, "light": 0xB005,
            "spotlight": 0xB007}
FIELDS = ("tension", "continuity", "bias", "ease_to", "ease_from")


def chunk(cid, payload=b"", *subs):
    body = payload + b"".join(subs)
    return struct.pack("<HI", cid, 6 + len(body)) + body


def cstr(text):
    return text.encode("latin-1") + b"\0"


def track_chunk(kind, track):
    """track: dict(frames, values (K, n), flags, and optional per-key FIELDS)."""
    cid, width = TRACK_IDS[kind]
    frames = np.asarray(track["frames"])
    out = [struct.pack("<HIIi", track.get("flags", 0), 0, 0, len(frames))]
    for k, frame in enumerate(frames):
        present = [(bit, name) for bit, name in enumerate(FIELDS)
                   if name in track and track[name][k] != 0.0]
        out.append(struct.pack("<iH", int(frame), sum(1 << bit for bit, _ in present)))
        out.extend(struct.pack("<f", track[name][k]) for _, name in present)
        if width:
            out.append(struct.pack(f"<{width}f", *np.asarray(track["values"][k], float)))
    return chunk(cid, b"".join(out))


def node_chunk(node, node_id):
    """node: dict(tag, name, parent (id or None), tracks {kind: track}, pivot, instance)."""
    parent = 0xFFFF if node.get("parent") is None else node["parent"]
    subs = [chunk(0xB030, struct.pack("<H", node_id)),
            chunk(0xB010, cstr(node["name"]) + struct.pack("<HHH", 0x4000, 0, parent))]
    if node.get("instance"):
        subs.append(chunk(0xB011, cstr(node["instance"])))
    if node.get("pivot") is not None:
        subs.append(chunk(0xB013, struct.pack("<3f", *node["pivot"])))
    subs += [track_chunk(kind, track) for kind, track in node.get("tracks", {}).items()]
    return chunk(NODE_IDS[node["tag"]], b"", *subs)


def write_3ds(nodes, *, objects=(), segment=(0, 100), current=0, keyframer=True):
    """The bytes of a .3ds file: named objects (name, kind) in MDATA and the
    keyframer's nodes, NODE_ID = position in `nodes`."""
    named = []
    for name, kind in objects:
        body = {"mesh": chunk(0x4100, b"", chunk(0x4160, struct.pack("<12f", *np.eye(4, 3).ravel()))),
                "camera": chunk(0x4700, struct.pack("<8f", 0, 0, 0, 1, 0, 0, 0, 50)),
                "light": chunk(0x4600, struct.pack("<3f", 0, 0, 0))}[kind]
        named.append(chunk(0x4000, cstr(name), body))
    parts = [chunk(0x0002, struct.pack("<I", 3)), chunk(0x3D3D, b"", *named)]
    if keyframer:
        parts.append(chunk(0xB000, b"", chunk(0xB00A, struct.pack("<H", 5) + cstr("TESTSCENE")
                                                      + struct.pack("<I", segment[1])),
                           chunk(0xB008, struct.pack("<ii", *segment)),
                           chunk(0xB009, struct.pack("<i", current)),
                           *[node_chunk(node, i) for i, node in enumerate(nodes)]))
    return chunk(0x4D4D, b"", *parts)


def f32(x):
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def random_track(rng, kind, K, flags=0):
    """Random keys of one track, values rounded to float32 as stored."""
    frames = np.concatenate([[rng.integers(0, 5)], rng.integers(1, 12, K - 1)]).cumsum()
    track = {"frames": frames, "flags": flags}
    for name in ("tension", "continuity", "bias"):
        track[name] = f32(np.where(rng.random(K) < 0.3, 0.0, rng.uniform(-1, 1, K)))
    for name in ("ease_to", "ease_from"):
        track[name] = f32(np.where(rng.random(K) < 0.4, 0.0, rng.uniform(0, 1, K)))
    width = TRACK_IDS[kind][1]
    if kind == "rotation":
        axes = rng.normal(size=(K, 3))
        angles = rng.uniform(-2.5, 2.5, K)
        pick = rng.random(K)
        angles[pick < 0.2] = rng.uniform(2 * np.pi, 5 * 2 * np.pi, (pick < 0.2).sum())  # spins
        long_way = (pick >= 0.2) & (pick < 0.3)                 # a small backward step
        angles[long_way] = 2 * np.pi - rng.uniform(1e-3, 0.2, long_way.sum())
        axes[(pick >= 0.3) & (pick < 0.36)] = 0.0               # zero axis: no turn
        if flags & 3 == 3:        # a loop returns: one axis, turns summing to zero exactly
            axes[:] = axes[0]
            angles = np.round(angles * 1024) / 1024
            angles[-1] = -np.sum(angles[1:-1])
        track["values"] = f32(np.column_stack([angles, axes]))
    else:
        scale = {"fov": 40.0, "roll": 90.0}.get(kind, 10.0)
        values = rng.normal(size=(K, width)) * scale
        if kind == "fov":          # a field of view: degrees above 0 (glTF's yfov is)
            values = np.abs(values) + 5.0
        track["values"] = f32(values)
    if flags & 3 == 3 and kind != "rotation":
        track["values"][-1] = track["values"][0]
    if flags & 3 == 3:
        for name in FIELDS:
            track[name][-1] = track[name][0]
    return track


def random_scene(rng, n_objects=3):
    """Objects in a random hierarchy, a camera with a target, every track random."""
    nodes = []
    for i in range(n_objects):
        parent = None if i == 0 or rng.random() < 0.3 else int(rng.integers(0, i))
        tracks = {kind: random_track(rng, kind, int(rng.integers(1, 9)),
                                     flags=int(rng.choice([0, 0, 2, 3])))
                  for kind in ("position", "rotation", "scale")}
        nodes.append({"tag": "object", "name": f"Obj{i}", "parent": parent, "tracks": tracks,
                      "pivot": f32(rng.normal(size=3))})
    nodes.append({"tag": "camera", "name": "Cam", "tracks": {
        kind: random_track(rng, kind, int(rng.integers(1, 7))) for kind in ("position", "fov",
                                                                            "roll")}})
    nodes.append({"tag": "target", "name": "Cam",
                  "tracks": {"position": random_track(rng, "position", 3)}})
    objects = [(f"Obj{i}", "mesh") for i in range(n_objects)] + [("Cam", "camera")]
    return nodes, objects
