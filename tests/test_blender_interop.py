"""Blender as the receiving tool: kbspline's glTF and BVH output imported by
Blender's own importers (bpy, run headless in a subprocess by
tests/blender_probe.py) poses the joints where kbspline's forward
kinematics of the splines puts them, at frames and between them.

bpy pins its own Python and NumPy, so it lives in a virtual environment of
its own, never the suite's:

    python3.11 -m venv /tmp/bpy-venv && /tmp/bpy-venv/bin/pip install bpy

and KBSPLINE_BLENDER_PYTHON names its python (default /tmp/bpy-venv/bin/python);
without it these tests skip.  `python tests/test_blender_interop.py` prints
the measured figures quoted in the README.
"""
import functools
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from mocap import CLIPS, first_clip  # noqa: E402
from poses import names_with_ends, spline_world  # noqa: E402

BLENDER_PYTHON = os.environ.get("KBSPLINE_BLENDER_PYTHON", "/tmp/bpy-venv/bin/python")
ANGLE = 1e-4   # the glTF export's default angle tolerance, radians


@functools.lru_cache(maxsize=1)
def blender():
    """The python that has bpy, or None."""
    try:
        done = subprocess.run([BLENDER_PYTHON, "-c", "import bpy"], capture_output=True,
                              timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return BLENDER_PYTHON if done.returncode == 0 else None


def needs_blender():
    if blender() is None:
        pytest.skip(f"needs Blender as a Python module: set KBSPLINE_BLENDER_PYTHON to a python "
                    f"with bpy (tried {BLENDER_PYTHON}; see this module's docstring)")


def blender_positions(path, kind, fps, times):
    """{joint: (M, 3)} world positions Blender gives at times (seconds), Z-up."""
    done = subprocess.run([blender(), str(HERE / "blender_probe.py"), str(path), kind, str(fps),
                           *map(repr, map(float, times))], capture_output=True, text=True,
                          timeout=600)
    line = [x for x in done.stdout.splitlines() if x.startswith("POSITIONS")]
    assert done.returncode == 0 and line, done.stderr[-2000:]
    return {name: np.array(v) for name, v in json.loads(line[0][len("POSITIONS"):]).items()}


def z_up(p):
    """BVH's and glTF's Y-up as Blender's importers turn it: (x, -z, y)."""
    return np.stack([p[..., 0], -p[..., 2], p[..., 1]], axis=-1)


def measure(kind, folder, frames=40, between=60, seed=0, **export):
    """(worst error at frames, worst between frames, skeleton size, joints
    found, joints and End Sites): distances from kbspline's pose in the
    clip's units; `export` goes to motion_to_gltf."""
    from kbspline.motion import motion_to_gltf, write_bvh
    clip = first_clip()
    clip.frames = clip.frames[:frames]
    at = clip.times[::3]
    mid = np.random.default_rng(seed).uniform(0, clip.times[-1], between)
    if kind == "gltf":
        path, scale = folder / "clip.glb", 0.01
        motion_to_gltf(clip, path, scale=scale, **export)
    else:
        path, scale = folder / "clip.bvh", 1.0
        write_bvh(clip, path)
    got = blender_positions(path, kind, 1 / clip.frame_time, np.concatenate([at, mid]))
    want = z_up(spline_world(clip, np.concatenate([at, mid]))) * scale
    names = names_with_ends(clip)
    common = [i for i, n in enumerate(names) if n in got]
    error = np.array([np.linalg.norm(got[names[i]] - want[:, i], axis=-1) for i in common])
    size = np.ptp(want.reshape(-1, 3), axis=0).max()
    return error[:, :len(at)].max() / scale, error[:, len(at):].max() / scale, size / scale, \
        len(common), len(names)


def test_gltf_default_export_plays_the_splines(tmp_path):
    """The default export (issue 50): LINEAR rotations within the angle
    tolerance and LINEAR translations within it times each channel's extent,
    which Blender keeps key for key and plays, at frames and between them,
    within the angle tolerance times the chain's lever arms plus the root's
    distance tolerance."""
    needs_blender()
    at, between, size, found, total = measure("gltf", tmp_path)
    assert found == total
    clip = first_clip()
    root = clip.translations()[0, :40]
    root_tolerance = ANGLE * max(np.ptp(root, axis=0).max(), np.abs(root).max())
    bound = ANGLE * 2 * size * 8 + root_tolerance + 1e-6 * size   # chains of eight joints
    assert at <= bound and between <= bound


def test_gltf_import_plays_the_splines(tmp_path):
    """With a distance tolerance given, the same within it."""
    needs_blender()
    at, between, size, found, total = measure("gltf", tmp_path, distance_tolerance=1e-5)
    assert found == total
    bound = ANGLE * 2 * size * 8 + 1e-5 / 0.01 + 1e-6 * size   # chains of eight joints here
    assert at <= bound and between <= bound


def test_gltf_cubic_translations_in_blender(tmp_path):
    """Blender's importer turns glTF's CUBICSPLINE translations into Bezier
    curves that match at the keys but not between them (the glTF
    specification's Hermite curve, which kbspline writes exactly, is
    checked in test_gltf.py): measured, and bounded loosely here so that a
    change in Blender shows."""
    needs_blender()
    at, between, size, found, total = measure("gltf", tmp_path, cubic=True)
    assert at <= 1e-6 * size
    assert between <= 0.02 * size


def test_bvh_import_matches_at_frames(tmp_path):
    """At frames Blender's BVH import lands on the file's numbers; between
    them it interpolates Euler angles with Bezier curves, not squad, so
    it strays by a small fraction of the skeleton (measured, loosely
    bounded so that a change shows)."""
    needs_blender()
    at, between, size, found, total = measure("bvh", tmp_path)
    clip = first_clip()
    assert found == len(clip.joints)   # End Sites are bone tails, not bones
    assert at <= 1e-6 * size
    assert between <= 0.02 * size


def test_blender_decimate_probe():
    """benchmarks/blender_decimate.py, Blender's rows of `reduction.py
    --blender`: margin 0 is the import as it is (every frame keyed on every
    F-curve, no error); a margin removes keys and moves the joints."""
    needs_blender()
    clip = first_clip()
    decimate = HERE.parent / "benchmarks" / "blender_decimate.py"
    done = subprocess.run([blender(), str(decimate), str(CLIPS[0]), "0", "0.01"],
                          capture_output=True, text=True, timeout=600)
    runs = [json.loads(x[len("DECIMATE"):]) for x in done.stdout.splitlines()
            if x.startswith("DECIMATE")]
    assert done.returncode == 0 and len(runs) == 2, done.stderr[-2000:]
    whole, decimated = runs
    assert whole["error"] == 0.0 and whole["frames"] == clip.num_frames
    assert whole["keys"] == whole["fcurves"] * clip.num_frames
    assert whole["joint_keys"] == whole["joints"] * clip.num_frames
    assert decimated["keys"] < whole["keys"] / 2 and 0 < decimated["error"] < 10.0


if __name__ == "__main__":
    import tempfile
    if blender() is None:
        sys.exit(f"no bpy: set KBSPLINE_BLENDER_PYTHON (tried {BLENDER_PYTHON})")
    with tempfile.TemporaryDirectory() as tmp:
        print("| file | joints found | worst at frames | worst between frames | skeleton size |")
        print("|---|---|---|---|---|")
        for label, kind, export in [("glTF, the default export (LINEAR translations)",
                                     "gltf", {}),
                                    ("glTF, LINEAR translations (distance_tolerance 1e-5 m)",
                                     "gltf", {"distance_tolerance": 1e-5}),
                                    ("glTF, CUBICSPLINE translations (cubic=True)", "gltf",
                                     {"cubic": True}),
                                    ("BVH", "bvh", {})]:
            at, between, size, found, total = measure(kind, pathlib.Path(tmp), **export)
            print(f"| {label} | {found}/{total} | {at:.3g} ({at / size:.1e} of the size) | "
                  f"{between:.3g} ({between / size:.1e}) | {size:.4g} |")
