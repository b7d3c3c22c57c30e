"""The Python API's small stumbles of issue 50, each kept fixed: `out` is
keyword-only, transposed keys blame `values`, the class help links pages
that exist, and the totals type-check where a user reads them."""
import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline, quat_from_axis_angle

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATH = PositionSpline([0.0, 1.0, 2.0, 3.0], [[0.0, 0.0], [1.0, 1.0], [2.0, 0.0], [3.0, 1.0]])
TURN = RotationSpline([0.0, 1.0, 2.0], quat_from_axis_angle([0, 0, 1], [0.0, 1.0, 2.5]))


def test_a_second_number_is_not_taken_for_out():
    with pytest.raises(TypeError, match=r"length\(\) takes t by position and out only by "
                                        r"keyword \(out=\.\.\.\), not 3"):
        PATH.length(0, 3)
    with pytest.raises(TypeError, match=r"angular_velocity\(\) takes t, frame by position"):
        TURN.angular_velocity(1.0, "world", [0.0, 0.0, 0.0])


@pytest.mark.parametrize("spline, method, args", [
    (PATH, "length", (1.5,)), (PATH, "position", (1.5,)), (PATH, "time_at_length", (0.5,)),
    (TURN, "__call__", (1.5,)), (TURN, "angular_velocity", (1.5, "body")),
    (TURN, "angle", (1.5,)),
])
def test_out_by_position_still_works_with_a_deprecation(spline, method, args):
    want = getattr(spline, method)(*args)
    out = np.empty_like(want)
    with pytest.warns(DeprecationWarning, match="pass out by keyword"):
        got = getattr(spline, method)(*args, out)
    assert got is out or np.shares_memory(got, out)
    np.testing.assert_array_equal(out, want)
    by_keyword = np.empty_like(want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(spline, method)(*args, out=by_keyword)
    np.testing.assert_array_equal(by_keyword, want)


def test_transposed_keys_blame_values():
    keys = np.arange(12.0).reshape(4, 3)
    with pytest.raises(ValueError, match=r"values of shape \(3, 4\) holds 3 keys of "
                                         r"dimension 4, but times has 4.*values\.T"):
        PositionSpline([0.0, 1.0, 2.0, 3.0], keys.T)
    # as many keys as times: no change; too few times for square keys: about times
    PositionSpline([0.0, 1.0, 2.0, 3.0], keys)
    with pytest.raises(ValueError, match="times of shape"):
        PositionSpline([0.0, 1.0, 2.0], np.zeros((4, 4)))


def test_class_help_links_pages_that_exist():
    doc = PositionSpline.__doc__
    assert "see the README" not in doc
    pages = re.findall(r"(docs/[\w/.-]+\.md)", doc)
    assert {"docs/guide/timing.md", "docs/guide/ends.md"} <= set(pages)
    assert all((ROOT / page).exists() for page in pages)


@pytest.mark.no_core   # mypy reads the annotations; nothing runs
def test_totals_type_check_as_a_user_reads_them(tmp_path):
    """The README's code, and the totals read as floats, pass mypy --strict."""
    pytest.importorskip("mypy")
    readme = (ROOT / "README.md").read_text()
    code = "\n".join(re.findall(r"```python\n(.*?)```", readme, re.S))
    code += ("import math\n"
             "turns: float = wheel.total_angle / (2 * math.pi)\n"
             "metres: float = path.total_length\n")
    user = tmp_path / "user.py"
    user.write_text(code)
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           str(user)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
