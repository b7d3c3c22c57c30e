"""The sdist builds from scratch, and the wheel built from it works in fresh
virtual environments: with the newest NumPy, and with NumPy 1.25, the oldest
the NumPy 2 build promises (NPY_TARGET_VERSION).  Needs the package index."""
import os
import pathlib
import subprocess
import sys
import tarfile
import venv
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SMOKE = ROOT / "tests" / "smoke_installed.py"


def run(*args, cwd=None):
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{args[:4]} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    # sdist first, then the wheel from the unpacked sdist, each in an
    # isolated environment: what a user without the repository gets.
    run(sys.executable, "-m", "build", "--outdir", out, ROOT)
    (sdist,), (wheel,) = out.glob("*.tar.gz"), out.glob("*.whl")
    return sdist, wheel


def test_sdist_has_the_sources(dist):
    with tarfile.open(dist[0]) as tar:
        names = {pathlib.PurePosixPath(n).relative_to(n.split("/")[0]).as_posix()
                 for n in tar.getnames() if "/" in n}
    for needed in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "csrc/Makefile",
                   "csrc/include/kbspline/kbspline.h", "csrc/spline/kb_eval.c",
                   "csrc/motion/reduce/reduce_internal.h", "kbspline/_ext/module.c",
                   "kbspline/_ext/ext.h",
                   "kbspline/_kbspline.pyi", "kbspline/py.typed", "kbspline/formats/bvh.py",
                   # what the tests import besides test files, so they run from the sdist
                   "tests/oracles.py", "tests/mocap.py", "tests/smoke_installed.py",
                   "tests/poses.py", "tests/blender_probe.py", "tests/gltf_files.py", "examples/typed_api.py",
                   "benchmarks/run.py", "notebooks/_helpers.py", "docs/camera_path.png",
                   ".ci/run"):
        assert needed in names, needed


def test_wheel_has_the_package(dist):
    names = set(zipfile.ZipFile(dist[1]).namelist())
    for needed in ("kbspline/__init__.py", "kbspline/formats/bvh.py", "kbspline/py.typed",
                   "kbspline/_kbspline.pyi", "kbspline/formats/gltf/read.py"):
        assert needed in names, needed
    assert any(n.startswith("kbspline/_kbspline.") and n.endswith((".so", ".pyd"))
               for n in names)
    assert not any(n.startswith(("csrc/", "tests/")) for n in names)
    assert not any(n.endswith((".c", ".h")) for n in names), "the wheel ships C source"
    if sys.platform.startswith("linux"):   # setup.py's -g0 and -s for wheels
        (extension,) = [n for n in names if n.startswith("kbspline/_kbspline.")
                        and n.endswith(".so")]
        data = zipfile.ZipFile(dist[1]).read(extension)
        assert b".debug_info" not in data and b".symtab" not in data, "not stripped"


@pytest.mark.parametrize("numpy_req", ["numpy", "numpy==1.25.*"])
def test_wheel_in_a_fresh_venv(dist, tmp_path, numpy_req):
    if numpy_req != "numpy" and sys.version_info >= (3, 12):
        pytest.skip("NumPy 1.25 has no wheels for this Python")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    run(python, "-m", "pip", "install", "-q", "--only-binary", "numpy", numpy_req, dist[1])
    out = run(python, SMOKE, cwd=tmp_path)
    assert out.startswith("kbspline 0.") and ": ok" in out
    if numpy_req != "numpy":
        assert "NumPy 1.25" in out


@pytest.mark.parametrize("platform, archs", [
    ("linux", ["manylinux_x86_64", "manylinux_aarch64", "musllinux_x86_64",
               "musllinux_aarch64"]),
    ("macos", ["macosx_x86_64", "macosx_arm64"]),
    ("windows", ["win_amd64"]),
])
def test_cibuildwheel_builds_cpython_39_on(platform, archs):
    # The configuration in pyproject.toml, as cibuildwheel reads it (without
    # building: that needs each platform's CI runner).
    if sys.version_info < (3, 11):
        pytest.skip("the cibuildwheel that knows CPython 3.14 needs Python 3.11 or later")
    pytest.importorskip("cibuildwheel")
    out = run(sys.executable, "-m", "cibuildwheel", "--print-build-identifiers",
              "--platform", platform, cwd=ROOT).split()
    versions = ["cp39", "cp310", "cp311", "cp312", "cp313", "cp314"]
    assert sorted(out) == sorted(f"{v}-{a}" for v in versions for a in archs)
