"""Typing: the package type-checks, and a fully annotated example using the
whole public API passes ``mypy --strict`` (the configuration is in
pyproject.toml) and runs."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "typed_api.py"


def mypy(*args):
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success")


def test_package_type_checks():
    mypy()  # files = ["kbspline"], from pyproject.toml


def test_example_passes_strict():
    mypy("--strict", str(EXAMPLE))


def test_example_runs(tmp_path):
    pytest.importorskip("dask.array")
    pytest.importorskip("pygltflib")
    pytest.importorskip("scipy")
    result = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("ok")


def test_extension_stub_lists_what_the_extension_has():
    import kbspline._kbspline as core
    stub = (ROOT / "kbspline" / "_kbspline.pyi").read_text()
    public = {name for name in dir(core) if not name.startswith("_")}
    missing = {name for name in public if f"def {name}(" not in stub
               and f"{name}:" not in stub and f"class {name}(" not in stub}
    assert not missing
