"""Writes LightWave scenes for the tests: LWSC 1 (keyframe records), LWSC 2
(per-channel key lines) and LWSC 3-5 (Envelope blocks), with random keys of
every span type, TCB values, pre/post behaviours and parents.

A scene is a list of items: dicts with ``kind`` ("mesh", "null", "light",
"camera", "bone"), ``name``, ``parent`` (index into the list or -1),
``pivot`` and ``channels`` ({channel number: (keys, pre, post)}, keys as
lws_oracle takes them: (value, time, shape, p1..p6)).
"""
import math

SHAPES = ("tcb", "hermite", "bezier", "linear", "stepped", "bezier2d")
BEHAVIOURS = ("reset", "constant", "repeat", "oscillate", "offset_repeat", "linear")
_OLD_CODE = {"tcb": 2, "linear": 3, "stepped": 4}


def item_id(items, n, baked):
    """The hex id of item n: LWSC 4+ ids as written on its Add line (here
    numbered from 0x...100 so that they differ from the ordinals), LWSC 3
    ids from the type and ordinal."""
    kind = items[n]["kind"]
    code = {"mesh": 1, "null": 1, "light": 2, "camera": 3, "bone": 4}[kind]
    same = [m for m in range(n) if code == {"mesh": 1, "null": 1, "light": 2, "camera": 3,
                                            "bone": 4}[items[m]["kind"]]]
    if kind == "bone":
        objects = [m for m in range(n) if items[m]["kind"] in ("mesh", "null")]
        owner = objects[-1]
        bones = [m for m in range(n) if items[m]["kind"] == "bone"
                 and max(o for o in objects if o < m) == owner]
        return (code << 28) | (len(bones) << 16) | (len(objects) - 1)
    return (code << 28) | (len(same) + (0x100 if baked else 0))


def _num(x):
    return repr(float(x))


def write_lws(path, items, version, fps=30.0):
    out = ["LWSC", str(version), "", "FirstFrame 1", f"FramesPerSecond {_num(fps)}", ""]
    baked = version >= 4
    objects = [n for n, it in enumerate(items) if it["kind"] in ("mesh", "null")]
    for n, item in enumerate(items):
        hid = f"{item_id(items, n, baked):08X}"
        ident = f" {hid}" if baked else ""
        kind = item["kind"]
        if kind == "mesh":
            if version >= 3:
                out.append(f"LoadObjectLayer 1{ident} Objects/{item['name']}.lwo")
            else:
                out.append(f"LoadObject Objects/{item['name']}.lwo")
        elif kind == "null":
            out.append(f"AddNullObject{ident} {item['name']}")
        elif kind == "bone":
            out += [f"AddBone{ident}", f"BoneName {item['name']}"]
        elif kind == "light":
            out += [f"AddLight{ident}", f"LightName {item['name']}"]
        else:
            out += [f"AddCamera{ident}", f"CameraName {item['name']}"]
        out.append("ShowObject 7 -1 0.376471 0.878431 0.941176")
        motion = {"mesh": "Object", "null": "Object", "bone": "Bone", "light": "Light",
                  "camera": "Camera"}[kind] + "Motion"
        out += _motion(motion, item["channels"], version, fps)
        parent = item["parent"]
        if parent >= 0 and not (kind == "bone" and item.get("implicit_parent")):
            if version >= 3:
                out.append(f"ParentItem {item_id(items, parent, baked):08X}")
            else:
                out.append(f"ParentObject {objects.index(parent) + 1}")
        pivot = item.get("pivot", (0.0, 0.0, 0.0))
        key = "PivotPosition" if version >= 3 else "PivotPoint"
        out.append(f"{key} " + " ".join(_num(v) for v in pivot))
        out += ["{ APS", "  Version 1", "  { VParm", "  }", "}",
                "Plugin ItemMotionHandler 1 Dummy", "  { junk", "EndPlugin", ""]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def _motion(word, channels, version, fps):
    count = len(channels)
    if version >= 3:
        lines = [word, f"NumChannels {count}"]
        for ch in range(count):
            keys, pre, post = channels[ch]
            lines += [f"Channel {ch}", "{ Envelope", f"  {len(keys)}"]
            for value, time, shape, *params in keys:
                lines.append("  Key " + " ".join(
                    [_num(value), _num(time), str(SHAPES.index(shape))] +
                    [_num(p) for p in params]))
            lines += [f"  Behaviors {BEHAVIOURS.index(pre)} {BEHAVIOURS.index(post)}", "}"]
        return lines
    if version == 2:
        lines = [f"{word} (unnamed)", f"  {count}"]
        for ch in range(count):
            keys = channels[ch][0]
            lines.append(f"  {len(keys)}")
            for value, time, shape, t, c, b, *_ in keys:
                lines.append("  " + " ".join([_num(value), _num(time), str(_OLD_CODE[shape]),
                                              _num(t), _num(c), _num(b)]))
        codes = []
        for ch in range(count):
            codes += [BEHAVIOURS.index(channels[ch][1]), BEHAVIOURS.index(channels[ch][2])]
        return lines + ["Pre/PostBehavior " + " ".join(map(str, codes))]
    # LWSC 1: every channel shares the key frames and spline settings
    lines = [f"{word} (unnamed)", f"  {count}", f"  {len(channels[0][0])}"]
    for k, key in enumerate(channels[0][0]):
        lines.append("  " + " ".join(_num(channels[ch][0][k][0]) for ch in range(count)))
        value, time, shape, t, c, b, *_ = key
        lines.append("  " + " ".join([_num(time * fps), "1" if shape == "linear" else "0",
                                      _num(t), _num(c), _num(b)]))
    return lines + [f"EndBehavior {BEHAVIOURS.index(channels[0][2])}"]


def random_keys(rng, version, times=None):
    """Random keys: LWSC 3+ every shape (2-D Bezier handles inside their
    spans, so that the time curve rises), LWSC 1-2 TCB, linear (and stepped
    for LWSC 2)."""
    if times is None:
        n = int(rng.integers(1, 7))
        times = sorted(set(float(x) for x in rng.uniform(-2.0, 4.0, n)))
    if version >= 3:
        shapes = SHAPES
    elif version == 2:
        shapes = ("tcb", "linear", "stepped")
    else:
        shapes = ("tcb", "linear")
    keys = []
    for k, time in enumerate(times):
        shape = shapes[int(rng.integers(len(shapes)))] if k else "tcb"
        value = float(rng.normal(0.0, 3.0))
        params = [0.0] * 6
        if shape == "tcb" or version < 3:
            params[:3] = [float(x) for x in rng.uniform(-1.0, 1.0, 3)]
            if rng.random() < 0.3:
                params[:3] = [0.0, 0.0, 0.0]
        if shape in ("hermite", "bezier", "tcb") and version >= 3:
            params[3:5] = [float(x) for x in rng.normal(0.0, 2.0, 2)]
        if shape == "bezier2d":
            before = times[k] - times[k - 1] if k else 1.0
            after = times[k + 1] - times[k] if k + 1 < len(times) else 1.0
            params[0] = -float(rng.uniform(0.05, 0.5)) * before
            params[1] = float(rng.normal(0.0, 2.0))
            params[2] = float(rng.uniform(0.05, 0.5)) * after
            params[3] = float(rng.normal(0.0, 2.0))
        keys.append((value, time, shape, *params))
    return keys


def random_scene(rng, version, n_items=4):
    """Random items with random parents (objects first so that LWSC 1-2's
    ParentObject can name them) and random envelopes on every channel."""
    kinds = ["mesh", "null", "light", "camera", "bone"] if version >= 3 else \
        ["mesh", "null", "light", "camera"]
    items = [{"kind": "mesh", "name": "obj0", "parent": -1}]
    for n in range(1, n_items):
        kind = kinds[int(rng.integers(len(kinds)))]
        objects = [m for m, it in enumerate(items) if it["kind"] in ("mesh", "null")]
        parent = -1
        if kind == "bone" or rng.random() < 0.5:
            parent = int(objects[int(rng.integers(len(objects)))]) if version < 3 else \
                int(rng.integers(n))
        items.append({"kind": kind, "name": f"{kind}{n}", "parent": parent})
    for item in items:
        count = 6 if item["kind"] == "camera" else 9
        shared = None
        if version == 1:
            n = int(rng.integers(1, 6))
            shared = sorted(set(float(f) / 30.0 for f in rng.integers(-30, 120, n)))
        channels = {}
        for ch in range(count):
            keys = random_keys(rng, version, shared)
            if version == 1 and ch:
                keys = [(v,) + tuple(channels[0][0][k][1:]) for k, (v, *_) in enumerate(keys)]
            pre = BEHAVIOURS[int(rng.integers(6))]
            post = BEHAVIOURS[int(rng.integers(6))]
            if version == 1:
                pre, post = "constant", BEHAVIOURS[int(rng.integers(3))]
            elif version == 2:
                pre, post = BEHAVIOURS[int(rng.integers(6))], BEHAVIOURS[int(rng.integers(6))]
            channels[ch] = (keys, pre, post)
        if version == 1:
            post = channels[0][2]
            channels = {ch: (k, "constant", post) for ch, (k, _, _) in channels.items()}
        item["channels"] = channels
        item["pivot"] = tuple(float(x) for x in rng.normal(0.0, 1.0, 3))
    return items


def cycle_times(keys, rng, n=60):
    """Query times over three cycles before and after the keys and inside."""
    t0, t1 = keys[0][1], keys[-1][1]
    length = max(t1 - t0, 1.0)
    return sorted(float(x) for x in rng.uniform(t0 - 3 * length, t1 + 3 * length, n))


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * (1.0 + abs(b)) or (math.isnan(a) and math.isnan(b))
