"""The motion-capture clips for tests: they live in ../shared/data/mocap
(CC BY-NC 4.0, Bandai Namco) and are read in place, never copied."""
import pathlib

import numpy as np

MOCAP = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"
CLIPS = sorted(MOCAP.glob("*.bvh")) if MOCAP.is_dir() else []


def read_rotations(path):
    """(frame_time, {joint: (F, 4) quaternions}) from a BVH file."""
    from kbspline.motion import read_bvh
    clip = read_bvh(path)
    return clip.frame_time, dict(zip((j.name for j in clip.joints), clip.rotations()))


def angle_between(p, q):
    """Rotation angle between unit quaternions, radians."""
    return 2 * np.arccos(np.clip(np.abs(np.sum(p * q, axis=-1)), 0.0, 1.0))


MISSING = (f"needs the motion-capture clips in {MOCAP} (the project's shared data, "
           "checked out beside the repository as ../shared)")


def first_clip():
    """The first clip, read; the calling test is skipped, saying where the
    clips belong, when they are not there."""
    import pytest
    if not CLIPS:
        pytest.skip(MISSING)
    from kbspline.motion import read_bvh
    return read_bvh(CLIPS[0])
