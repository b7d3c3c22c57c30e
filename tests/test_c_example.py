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


def test_the_example_uses_only_the_public_header():
    source = (ROOT / "examples" / "c" / "splines.c").read_text()
    includes = [line for line in source.splitlines() if line.startswith("#include")]
    assert includes == ["#include <stdio.h>", "#include <stdlib.h>",
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
