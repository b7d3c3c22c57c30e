"""Real motion capture keyed every other frame: the dropped frames come back
closer with RotationSpline than with piecewise slerp."""
import numpy as np
import pytest

from kbspline import RotationSpline, slerp
from mocap import CLIPS, MISSING, angle_between, read_rotations

pytestmark = pytest.mark.skipif(not CLIPS, reason=MISSING)


def reconstruction_errors(path):
    """RMS angle error (radians) on the odd frames for RotationSpline,
    piecewise slerp and, where SciPy is installed, SciPy's RotationSpline."""
    frame_time, rotations = read_rotations(path)
    q = np.stack(list(rotations.values()))            # (J, F, 4)
    n = q.shape[1] - (1 - q.shape[1] % 2)             # odd count: end on a key
    keys, dropped = q[:, 0:n:2], q[:, 1:n:2]
    key_times = np.arange(0, n, 2) * frame_time
    t = np.arange(1, n, 2) * frame_time
    rms = lambda est: float(np.sqrt(np.mean(angle_between(est, dropped) ** 2)))
    errors = {"kbspline": rms(RotationSpline(key_times, keys)(t)),
              "slerp": rms(slerp(keys[:, :-1], keys[:, 1:], 0.5))}
    try:
        from scipy.spatial.transform import Rotation, RotationSpline as ScipySpline
    except ImportError:
        return errors
    scipy = [ScipySpline(key_times, Rotation.from_quat(k[:, [1, 2, 3, 0]]))(t).as_quat()
             for k in keys]
    errors["scipy"] = rms(np.stack(scipy)[..., [3, 0, 1, 2]])
    return errors


@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_spline_beats_slerp_on_dropped_frames(path):
    errors = reconstruction_errors(path)
    print(path.stem, {k: f"{np.degrees(v):.4f} deg" for k, v in errors.items()})
    assert errors["kbspline"] < errors["slerp"]
