"""Constant angular speed: angle(t), total_angle and time_at_angle(s)
against SciPy's quadrature and against each other."""
import numpy as np
import pytest

from kbspline import RotationSpline
from oracles import random_quaternions

quad = pytest.importorskip("scipy.integrate").quad
pytestmark = pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")


def reference_angle(spline, a, b):
    knots = spline.breakpoints
    cuts = np.concatenate([[a], knots[(knots > a) & (knots < b)], [b]])
    speed = lambda t: np.linalg.norm(spline.angular_velocity(t))
    return sum(quad(speed, lo, hi, epsabs=1e-14, epsrel=1e-13, limit=400)[0]
               for lo, hi in zip(cuts[:-1], cuts[1:]))


@pytest.mark.parametrize("timing", ["kb", "3ds", "parabolic", "average"])
@pytest.mark.parametrize("ease", [False, True])
def test_angles_match_quadrature(timing, ease):
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.3, 1.5, 6))
    kw = dict(ease_from=rng.uniform(0, 0.5, 6), ease_to=rng.uniform(0, 0.5, 6)) if ease else {}
    spline = RotationSpline(times, random_quaternions(rng, 6), *rng.uniform(-0.7, 0.7, (3, 6)),
                            timing=timing, **kw)
    total = spline.total_angle
    assert abs(total - reference_angle(spline, times[0], times[-1])) <= 1e-10 * total
    for t in rng.uniform(times[0], times[-1], 5):
        assert abs(spline.angle(t) - reference_angle(spline, times[0], t)) <= 1e-10 * total


def test_time_at_angle_inverts_angle():
    rng = np.random.default_rng(8)
    spline = RotationSpline(np.arange(7.0), random_quaternions(rng, 7), 0.3, 0.0, 0.4)
    s = np.linspace(0, spline.total_angle, 501)
    t = spline.time_at_angle(s)
    assert np.all(np.diff(t) > 0)
    np.testing.assert_allclose(spline.angle(t), s, atol=1e-10 * spline.total_angle)
    assert t[0] == 0.0 and t[-1] == 6.0
    # dt/ds = 1 / |w(t)|: constant angular speed in s
    s_mid, h = s[3:-3:7], 1e-5
    dt_ds = (spline.time_at_angle(s_mid + h) - spline.time_at_angle(s_mid - h)) / (2 * h)
    speed = np.linalg.norm(spline.angular_velocity(spline.time_at_angle(s_mid)), axis=-1)
    np.testing.assert_allclose(dt_ds * speed, 1.0, rtol=1e-5)


def test_resting_and_constant_splines():
    q = np.tile([1.0, 0, 0, 0], (4, 1))
    still = RotationSpline(None, q)
    assert still.total_angle == 0.0
    assert np.array_equal(still.time_at_angle([0.0, 1.0]), [0.0, 3.0])
    # tension 1 stops the rotation at every key: speed touches zero there
    rng = np.random.default_rng(9)
    stops = RotationSpline(None, random_quaternions(rng, 5), tension=1.0)
    s = np.linspace(0, stops.total_angle, 201)
    t = stops.time_at_angle(s)
    assert np.all(np.diff(t) > 0) and np.all(np.isfinite(t))
    np.testing.assert_allclose(stops.angle(t), s, atol=1e-10 * stops.total_angle)


def test_angle_extrapolation():
    rng = np.random.default_rng(10)
    q = random_quaternions(rng, 5)
    clamp = RotationSpline(None, q)
    total = clamp.total_angle
    np.testing.assert_allclose(clamp.angle([-1.0, 9.0]), [0.0, total], atol=1e-15)
    linear = RotationSpline(None, q, extrapolate="linear")
    rate = np.linalg.norm(linear.angular_velocity(4.0))
    np.testing.assert_allclose(linear.angle(5.0), total + rate, rtol=1e-12)
    np.testing.assert_allclose(linear.time_at_angle(total + rate), 5.0, rtol=1e-12)
    closed = RotationSpline(None, np.vstack([q, q[:1]]), ends="closed")
    loop = closed.total_angle
    np.testing.assert_allclose(closed.angle(5.0 + 2.5), 1 * loop + closed.angle(2.5), rtol=1e-12)
    np.testing.assert_allclose(closed.time_at_angle(2 * loop + 0.1),
                               10.0 + closed.time_at_angle(0.1), rtol=1e-12)
    error = RotationSpline(None, q, extrapolate="error")
    with pytest.raises(ValueError, match=r"s\[1\] = .* is outside the domain \[0.0, "):
        error.time_at_angle([0.0, total + 1.0])


def test_batched_angles_equal_per_track():
    rng = np.random.default_rng(11)
    q = np.stack([random_quaternions(rng, 5) for _ in range(3)])
    batch = RotationSpline(None, q, 0.1)
    t = np.linspace(0, 4, 9)
    s_rows = np.linspace(0, 1, 7) * batch.total_angle[:, None]  # each track its own angles
    times = batch.time_at_angle(s_rows)
    for i in range(3):
        single = RotationSpline(None, q[i], 0.1)
        assert single.total_angle == batch.total_angle[i]
        assert np.array_equal(single.angle(t), batch.angle(t)[i])
        assert np.array_equal(single.time_at_angle(s_rows[i]), times[i])
