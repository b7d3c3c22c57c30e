"""The C example (examples/c): built against csrc's static library and its
public headers alone, run, and its printed values checked against the
Python API."""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import kbspline
from kbspline.motion import Joint, Motion, reduce_keys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMES = [0.0, 1.0, 2.5, 4.0]
QUERIES = [0.0, 0.5, 1.75, 3.0, 4.0]


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None or shutil.which("make") is None:
        pytest.skip("no C compiler or make")
    build = tmp_path_factory.mktemp("cexample")
    # -O0 keeps this build quick; the values are compared to 1e-12, not bitwise
    flags = "-std=c11 -O0 -Wall -Wextra -Werror -pedantic -ffp-contract=off"
    subprocess.run(["make", "-s", "-j2", "-C", str(ROOT / "csrc"), "lib", f"BUILD={build}",
                    f"CC={cc}", f"CFLAGS={flags}"], check=True)
    run = subprocess.run(["make", "-s", "-C", str(ROOT / "examples" / "c"), "run",
                          f"OUT={build}", f"LIB={build / 'libkbspline.a'}", f"CC={cc}"],
                         check=True, capture_output=True, text=True)
    rows = {}
    for line in run.stdout.splitlines():
        what, *numbers = line.split()
        rows.setdefault(what, []).append([float(x) for x in numbers])
    return {what: np.array(r) for what, r in rows.items()}


@pytest.mark.parametrize("name, extra", [("splines.c", []), ("reduce.c", ["#include <math.h>"])])
def test_the_example_uses_only_the_public_header(name, extra):
    source = (ROOT / "examples" / "c" / name).read_text()
    includes = [line for line in source.splitlines() if line.startswith("#include")]
    assert includes == extra + ["#include <stdio.h>", "#include <stdlib.h>",
                                "#include <kbspline/kbspline.h>"]


def test_positions_and_velocities_are_the_python_splines(printed):
    values = [[0, 0, 0], [1, 2, 0], [3, 1, 1], [4, 0, 2]]
    spline = kbspline.PositionSpline(TIMES, values, tension=0.5)
    for what, expected in (("position", spline(QUERIES)), ("velocity", spline.velocity(QUERIES))):
        got = printed[what]
        np.testing.assert_array_equal(got[:, 0], QUERIES)
        np.testing.assert_allclose(got[:, 1:], expected, rtol=1e-12, atol=1e-14)


def test_rotations_are_the_python_spline(printed):
    quats = [[1, 0, 0, 0], [0.9, 0.3, 0, 0], [0.7, 0.2, 0.6, 0.1], [0.2, 0.1, 0.9, 0.3]]
    expected = kbspline.RotationSpline(TIMES, quats)(QUERIES)
    got = printed["rotation"]
    np.testing.assert_array_equal(got[:, 0], QUERIES)
    np.testing.assert_allclose(got[:, 1:], expected, rtol=1e-12, atol=1e-14)


def _example_clip(frames):
    """reduce.c's clip: a root with position channels, two joints placed by
    their OFFSET, an End Site; its frames as the program printed them."""
    rotation = ["Zrotation", "Xrotation", "Yrotation"]
    joints = [Joint("hips", -1, np.zeros(3), ["Xposition", "Yposition", "Zposition"] + rotation),
              Joint("spine", 0, np.array([0.0, 10, 0]), rotation),
              Joint("head", 1, np.array([0.0, 8, 0]), rotation, np.array([0.0, 5, 0]))]
    return Motion(joints, 1 / 30, frames)


@pytest.mark.parametrize("search, options", [
    (0, dict(position_tolerance=0.05)),
    (1, dict(position_tolerance=0.05, fit=False)),
    (2, dict(position_tolerance=0.2, virtual_distance=3.0, angle_tolerance=0.01,
             distance_tolerance=0.1)),
])
def test_the_reduction_keeps_the_python_keys(printed, search, options):
    clip = _example_clip(printed["frame"])
    reduction = reduce_keys(clip, **options)
    assert reduction.num_keys < 3 * clip.num_frames  # it did reduce
    for j, keys in enumerate(reduction.key_frames):
        np.testing.assert_array_equal(printed[f"keys{search}_{j}"][0], keys)
