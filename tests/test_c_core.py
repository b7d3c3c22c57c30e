"""Builds the C core's own tests (csrc/tests) with the system C compiler and
runs each one as a pytest case: the C API tested without Python."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

# The C tests built here without sanitizers: `make -C csrc asan` runs them with.
pytestmark = pytest.mark.no_core

CSRC = pathlib.Path(__file__).resolve().parent.parent / "csrc"
NAMES = re.findall(r"^KB_TEST_ENTRY\((\w+)\)", (CSRC / "tests" / "test_list.h").read_text(),
                   re.MULTILINE)


@pytest.fixture(scope="session")
def kbtests(tmp_path_factory):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = tmp_path_factory.mktemp("ctests") / "kbtests"
    # the library's sources (its folders, not tests/ or fuzz/), then the tests
    core = sorted(str(p) for p in CSRC.glob("**/*.c") if p.parts[len(CSRC.parts)] not in
                  ("tests", "fuzz"))
    sources = core + sorted(map(str, CSRC.glob("tests/test_*.c")))
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-psabi", "-Werror", "-pedantic", "-pthread",
                    "-DKB_BUILDING_LIBRARY", f"-I{CSRC}", f"-I{CSRC / 'include'}",
                    f"-I{CSRC / 'tests'}", *sources, "-lm", "-o", str(exe)],
                   check=True)
    return exe


def test_every_c_test_is_listed(kbtests):
    listed = subprocess.run([kbtests, "--list"], capture_output=True, text=True, check=True)
    assert listed.stdout.split() == NAMES and len(NAMES) > 20


@pytest.mark.parametrize("name", NAMES)
def test_c(kbtests, name):
    run = subprocess.run([kbtests, name], capture_output=True, text=True)
    assert run.returncode == 0 and f"PASS {name}" in run.stdout, run.stdout
