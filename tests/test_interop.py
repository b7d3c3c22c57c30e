"""SciPy interop: PPoly from positions, Rotation in and out of rotations."""
import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline
from oracles import random_keys, random_quaternions

pytest.importorskip("scipy")


@pytest.mark.parametrize("ends", ["natural", "phantom", "closed"])
def test_to_ppoly_is_the_same_curve(ends):
    rng = np.random.default_rng(0)
    times, x = random_keys(rng, 7, 3)
    if ends == "closed":
        x[-1] = x[0]
    batch = np.stack([x, 2 * x])
    spline = PositionSpline(times, batch, 0.2, 0.3, -0.1, ends=ends)
    ppoly = spline.to_ppoly()
    t = np.linspace(*spline.domain, 101)
    got = np.moveaxis(ppoly(t), 0, -2)                 # (M, B, D) -> (B, M, D)
    np.testing.assert_allclose(got, spline(t), atol=1e-10)
    np.testing.assert_allclose(np.moveaxis(ppoly(t, 1), 0, -2), spline.velocity(t), atol=1e-9)
    np.testing.assert_allclose(np.moveaxis(ppoly(t, 2), 0, -2), spline.acceleration(t), atol=1e-8)


def test_to_ppoly_refuses_what_it_cannot_represent():
    eased = PositionSpline(None, [0.0, 1.0, 0.0], ease_from=0.3)
    with pytest.raises(ValueError, match="ease"):
        eased.to_ppoly()
    per_track = PositionSpline([[0.0, 1.0, 2.0], [0.0, 2.0, 3.0]], np.zeros((2, 3, 1)))
    with pytest.raises(ValueError, match="shared"):
        per_track.to_ppoly()
    scalar = PositionSpline([0.0, 1.0, 3.0], [0.0, 2.0, 1.0])
    assert scalar.to_ppoly()(0.5) == pytest.approx(scalar(0.5), abs=1e-14)


def test_rotation_in_and_out():
    from scipy.spatial.transform import Rotation
    rng = np.random.default_rng(1)
    q = random_quaternions(rng, 5)
    keys = Rotation.from_quat(q[:, [1, 2, 3, 0]])
    times = np.cumsum(rng.uniform(0.5, 1, 5))
    ours = RotationSpline(times, q, 0.1)
    theirs = RotationSpline.from_rotation(times, keys, 0.1)
    wxyz = RotationSpline.from_rotation(times, keys, 0.1, scalar_first=True)
    assert wxyz.scalar_first and np.array_equal(wxyz(times)[:, [1, 2, 3, 0]], theirs(times))
    t = np.linspace(times[0], times[-1], 33)
    np.testing.assert_allclose(np.abs(np.sum(theirs(t) * ours(t)[:, [1, 2, 3, 0]], -1)), 1.0,
                               atol=1e-14)
    back = ours.as_rotation(t)
    np.testing.assert_allclose(back.as_quat(), ours(t)[:, [1, 2, 3, 0]], atol=1e-15)
    assert len(back) == 33
    assert ours.as_rotation(t[0]).single
