"""The Examples sections of the public docstrings run and hold."""
import doctest

import pytest

import kbspline._threads
import kbspline.position
import kbspline.quaternion
import kbspline.rotation


@pytest.mark.parametrize("module", [kbspline.position, kbspline.rotation, kbspline.quaternion,
                                    kbspline._threads])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
