"""The Examples sections of the public docstrings run and hold."""
import doctest

import pytest

import kbspline.position
import kbspline.quaternion
import kbspline.rotation


@pytest.mark.parametrize("module", [kbspline.position, kbspline.rotation, kbspline.quaternion])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
