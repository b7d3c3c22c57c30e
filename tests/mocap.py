"""Just enough BVH reading for tests: every joint's rotation channels as
quaternions.  The clips live in ../shared/data/mocap (CC BY-NC 4.0, Bandai
Namco) and are read in place, never copied."""
import pathlib

import numpy as np

from kbspline import quat_from_euler

MOCAP = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"
CLIPS = sorted(MOCAP.glob("*.bvh")) if MOCAP.is_dir() else []


def read_rotations(path):
    """(frame_time, {joint: (F, 4) quaternions}) from a BVH file."""
    joints, channels = [], []
    lines = pathlib.Path(path).read_text().splitlines()
    for i, line in enumerate(lines):
        words = line.split()
        if words and words[0] in ("ROOT", "JOINT"):
            joints.append(words[1])
        elif words and words[0] == "CHANNELS":
            channels.append((joints[-1], words[2:]))
        elif words and words[0] == "MOTION":
            frame_time = float(lines[i + 2].split(":")[1])
            data = np.loadtxt(lines[i + 3:], ndmin=2)
            break
    rotations, column = {}, 0
    for joint, names in channels:
        rot = [k for k, name in enumerate(names) if name.endswith("rotation")]
        order = "".join(names[k][0] for k in rot).upper()  # BVH: intrinsic, channel order
        angles = data[:, [column + k for k in rot]]
        rotations[joint] = quat_from_euler(angles, order, degrees=True)
        column += len(names)
    assert column == data.shape[1]
    return frame_time, rotations


def angle_between(p, q):
    """Rotation angle between unit quaternions, radians."""
    return 2 * np.arccos(np.clip(np.abs(np.sum(p * q, axis=-1)), 0.0, 1.0))
