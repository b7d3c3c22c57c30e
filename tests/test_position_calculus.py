"""PositionSpline against calculus: derivatives, continuity, end conditions."""
import numpy as np
import pytest

from kbspline import PositionSpline
from oracles import random_keys

TIMINGS = ["kb", "3ds", "parabolic", "average"]
ENDS = ["natural", "phantom", "reflect", "clamped", "closed"]


def make(rng, timing, ends, n_keys=7, dim=3, **kw):
    times, x = random_keys(rng, n_keys, dim)
    T, C, B = rng.uniform(-1, 1, (3, n_keys))
    if ends == "closed":
        x[-1] = x[0]
        T[-1], C[-1], B[-1] = T[0], C[0], B[0]
    if ends == "clamped":
        kw.update(start_velocity=rng.normal(size=dim), end_velocity=rng.normal(size=dim))
    return PositionSpline(times, x, T, C, B, timing=timing, ends=ends, **kw), times, x


def off_knot_times(rng, spline, n):
    knots = spline.breakpoints
    t = rng.uniform(knots[0], knots[-1], n)
    gap = np.min(np.abs(t[:, None] - knots[None, :]), axis=1)
    return t[gap > 1e-3]


@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("timing", TIMINGS)
def test_derivatives_match_finite_differences(timing, ends):
    rng = np.random.default_rng(hash((timing, ends)) % 2**32)
    spline, _, _ = make(rng, timing, ends)
    t, h = off_knot_times(rng, spline, 50), 1e-6
    v = (spline(t + h) - spline(t - h)) / (2 * h)
    a = (spline.velocity(t + h) - spline.velocity(t - h)) / (2 * h)
    scale = 1 + np.abs(spline.velocity(t)).max()
    np.testing.assert_allclose(spline.velocity(t), v, atol=1e-6 * scale)
    np.testing.assert_allclose(spline.acceleration(t), a, atol=1e-5 * scale)


def test_derivatives_with_ease_match_finite_differences():
    rng = np.random.default_rng(5)
    spline, _, _ = make(rng, "3ds", "natural", ease_from=rng.uniform(0, 0.5, 7),
                        ease_to=rng.uniform(0, 0.5, 7))
    t, h = off_knot_times(rng, spline, 80), 1e-7
    v = (spline(t + h) - spline(t - h)) / (2 * h)
    np.testing.assert_allclose(spline.velocity(t), v, atol=1e-5)


@pytest.mark.parametrize("timing", TIMINGS)
def test_c1_at_keys_when_continuity_is_zero(timing):
    rng = np.random.default_rng(21)
    times, x = random_keys(rng, 6, 2)
    T, B = rng.uniform(-1, 1, (2, 6))
    spline = PositionSpline(times, x, T, 0.0, B, timing=timing)
    eps = 1e-9
    left, right = spline.velocity(times[1:-1] - eps), spline.velocity(times[1:-1] + eps)
    np.testing.assert_allclose(left, right, atol=1e-6)
    tin, tout = spline.tangents
    np.testing.assert_allclose(tin, tout, atol=1e-12)


@pytest.mark.parametrize("timing", TIMINGS)
def test_not_c1_when_continuity_is_nonzero(timing):
    rng = np.random.default_rng(22)
    times, x = random_keys(rng, 6, 2)
    spline = PositionSpline(times, x, 0.0, 0.5, 0.0, timing=timing)
    eps = 1e-9
    left, right = spline.velocity(times[1:-1] - eps), spline.velocity(times[1:-1] + eps)
    assert np.all(np.abs(left - right).max(axis=-1) > 1e-3)


@pytest.mark.parametrize("timing", TIMINGS)
def test_natural_ends_have_zero_acceleration(timing):
    rng = np.random.default_rng(23)
    spline, times, _ = make(rng, timing, "natural")
    np.testing.assert_allclose(spline.acceleration([times[0], times[-1]]), 0, atol=1e-10)


@pytest.mark.parametrize("timing", TIMINGS)
def test_clamped_ends_have_the_given_velocity(timing):
    rng = np.random.default_rng(24)
    times, x = random_keys(rng, 5, 3)
    v0, v1 = rng.normal(size=(2, 3))
    spline = PositionSpline(times, x, timing=timing, ends="clamped", start_velocity=v0,
                            end_velocity=v1)
    np.testing.assert_allclose(spline.velocity([times[0], times[-1]]), [v0, v1], atol=1e-12)
    zero = PositionSpline(times, x, timing=timing, ends="clamped")
    np.testing.assert_allclose(zero.velocity([times[0], times[-1]]), 0, atol=1e-12)


@pytest.mark.parametrize("timing", TIMINGS)
def test_closed_loop_joins_at_the_seam(timing):
    rng = np.random.default_rng(25)
    spline, times, x = make(rng, timing, "closed")
    start, end = spline.domain
    tin, tout = spline.tangents
    np.testing.assert_allclose(spline(start), spline(end), atol=1e-12)
    np.testing.assert_allclose(spline.velocity(start), tout[0], atol=1e-12)
    np.testing.assert_allclose(spline.velocity(end), tin[-1], atol=1e-12)
    np.testing.assert_allclose(tin[-1], tin[0], atol=1e-12)
    smooth = PositionSpline(times, x, 0.3, 0.0, -0.2, timing=timing, ends="closed")
    np.testing.assert_allclose(smooth.velocity(start), smooth.velocity(end), atol=1e-12)
    span = end - start
    t = np.linspace(start, end, 50)
    np.testing.assert_allclose(spline(t + 3 * span), spline(t), atol=1e-9)


@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("timing", TIMINGS)
def test_interpolates_keys(timing, ends):
    rng = np.random.default_rng(26)
    spline, times, x = make(rng, timing, ends)
    inner = slice(1, -1) if ends == "phantom" else slice(None)
    np.testing.assert_allclose(spline(times[inner]), x[inner], atol=1e-12)


@pytest.mark.parametrize("ends", ENDS)
def test_batched_equals_per_track_exactly(ends):
    rng = np.random.default_rng(27)
    n_tracks, K, D = 6, 7, 2
    times = np.cumsum(rng.uniform(0.3, 1.5, (n_tracks, K)), axis=1)
    x = rng.normal(size=(n_tracks, K, D))
    T, C, B = rng.uniform(-1, 1, (3, n_tracks, K))
    if ends == "closed":
        x[:, -1] = x[:, 0]
        for p in (T, C, B):
            p[:, -1] = p[:, 0]
    batch = PositionSpline(times.reshape(2, 3, K), x.reshape(2, 3, K, D),
                           T.reshape(2, 3, K), C.reshape(2, 3, K), B.reshape(2, 3, K),
                           ends=ends, timing="parabolic")
    t_shared = np.linspace(-1, 12, 40)
    t_rows = rng.uniform(0, 10, (2, 3, 30))
    for nu in ("position", "velocity", "acceleration"):
        shared = getattr(batch, nu)(t_shared).reshape(n_tracks, 40, D)
        rows = getattr(batch, nu)(t_rows).reshape(n_tracks, 30, D)
        for i in range(n_tracks):
            single = PositionSpline(times[i], x[i], T[i], C[i], B[i], ends=ends,
                                    timing="parabolic")
            assert np.array_equal(getattr(single, nu)(t_shared), shared[i])
            assert np.array_equal(getattr(single, nu)(t_rows.reshape(6, 30)[i]), rows[i])


def test_coefficients_reproduce_evaluation():
    rng = np.random.default_rng(28)
    spline, times, _ = make(rng, "kb", "natural")
    coef = spline.coefficients
    for n in range(len(times) - 1):
        u = 0.37
        t = times[n] + u * (times[n + 1] - times[n])
        np.testing.assert_allclose(spline(t), coef[n].T @ u ** np.arange(4), atol=1e-12)


def test_large_absolute_times_lose_no_precision():
    # dyadic times, so that t + 1e9 is exact and only the evaluation is tested
    rng = np.random.default_rng(29)
    times = np.cumsum(rng.integers(16, 128, 6)) / 64.0
    x = rng.normal(size=(6, 2))
    near = PositionSpline(times, x)
    far = PositionSpline(times + 1e9, x)
    t = times[0] + np.arange(int((times[-1] - times[0]) * 64)) / 64.0
    np.testing.assert_allclose(far.velocity(t + 1e9), near.velocity(t), atol=1e-12)
    np.testing.assert_allclose(far(t + 1e9), near(t), atol=1e-12)


def test_extrapolation_modes():
    times, x = np.array([0.0, 1.0, 3.0]), np.array([[0.0], [2.0], [1.0]])
    clamp = PositionSpline(times, x)
    np.testing.assert_array_equal(clamp([-5.0, 9.0]), clamp([0.0, 3.0]))
    np.testing.assert_array_equal(clamp.velocity([-5.0, 9.0]), clamp.velocity([0.0, 3.0]))
    linear = PositionSpline(times, x, extrapolate="linear")
    v_end = linear.velocity(3.0)
    np.testing.assert_allclose(linear(5.0), linear(3.0) + 2.0 * v_end, atol=1e-14)
    np.testing.assert_array_equal(linear.acceleration([-1.0, 4.0]), 0.0)
    periodic = PositionSpline(times, x, extrapolate="periodic")
    np.testing.assert_allclose(periodic([0.5 + 3.0, 0.5 - 6.0]), periodic([0.5, 0.5]),
                               atol=1e-14)
    error = PositionSpline(times, x, extrapolate="error")
    np.testing.assert_allclose(error(3.0 + 1e-13), x[-1], atol=1e-12)
    with pytest.raises(ValueError, match=r"t\[1\] = 3.5 is outside the domain"):
        error([1.0, 3.5])


def test_vanishing_ease_is_no_ease():
    """Ease below 1e-9 would make a piece too narrow to divide by (the fuzzer
    found 1e-323 giving NaN): it counts as none."""
    keys = np.array([[0.0], [1.0], [0.0]])
    tiny = PositionSpline([0, 1, 2], keys, ease_from=[1e-320, 1e-300, 0], ease_to=[0, 1e-310, 0])
    plain = PositionSpline([0, 1, 2], keys)
    t = np.linspace(0, 2, 41)
    for method in ("position", "velocity", "acceleration"):
        np.testing.assert_array_equal(getattr(tiny, method)(t), getattr(plain, method)(t))
    assert tiny.total_length == plain.total_length
