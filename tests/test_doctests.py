"""The Examples sections of the public docstrings run and hold."""
import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["position", "rotation", "quaternion", "_threads", "dask"])
def test_docstring_examples(name):
    if name == "dask":
        pytest.importorskip("dask.array")
    module = importlib.import_module(f"kbspline.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
