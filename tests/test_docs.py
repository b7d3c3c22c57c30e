"""The documentation's figure script runs (it is what the README shows)."""
import importlib.util
import pathlib

import numpy as np
import pytest

pytest.importorskip("matplotlib")
SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "docs" / "camera_path.py"


def test_camera_path_figure(tmp_path):
    spec = importlib.util.spec_from_file_location("camera_path", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(str(tmp_path / "camera.png"))
    assert pathlib.Path(out).read_bytes()[:4] == b"\x89PNG"
    # what the figure claims: constant speed at equal arc length
    from kbspline import PositionSpline
    spline = PositionSpline(module.TIMES, module.KEYS, tension=0.1)
    steps = np.diff(spline.length(spline.equal_length_times(200)))
    np.testing.assert_allclose(steps, spline.total_length / 199, rtol=1e-9)
