"""Arc length of PositionSpline against SciPy's quadrature, the seed's
PositionAL, and its own inverse; zero speed and zero length."""
import numpy as np
import pytest

from kbspline import PositionSpline
from oracles import SeedArcLength, SeedPosSpline, random_keys

quad = pytest.importorskip("scipy.integrate").quad
pytestmark = pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")

TIMINGS = ["kb", "3ds", "parabolic", "average"]
ENDS = ["natural", "phantom", "reflect", "clamped", "closed"]


def smooth_pieces(spline):
    """Breakpoints and, where ease is on, where each segment's ease changes
    piece (the speed has kinks there, which quad should not have to find)."""
    knots = spline.breakpoints
    cuts = [knots]
    if spline._ease is not None:
        ab = spline._ease[0].copy()
        over = ab.sum(axis=1) > 1
        ab[over] /= ab[over].sum(axis=1, keepdims=True)
        dt = np.diff(knots)
        cuts += [knots[:-1] + ab[:, 0] * dt, knots[1:] - ab[:, 1] * dt]
    return np.unique(np.concatenate(cuts))


def reference_length(spline, a, b):
    knots = smooth_pieces(spline)
    cuts = np.concatenate([[a], knots[(knots > a) & (knots < b)], [b]])
    speed = lambda t: np.linalg.norm(np.atleast_1d(spline.velocity(t)))
    return sum(quad(speed, lo, hi, epsabs=1e-15, epsrel=1e-13, limit=500)[0]
               for lo, hi in zip(cuts[:-1], cuts[1:]))


def make(rng, timing, ends, ease=False, K=7, D=3):
    times, x = random_keys(rng, K, D)
    T, C, B = rng.uniform(-0.8, 0.8, (3, K))
    kw = {}
    if ease:
        kw = dict(ease_from=rng.uniform(0, 0.6, K), ease_to=rng.uniform(0, 0.6, K))
    if ends == "closed":
        x[-1] = x[0]
        for p in [T, C, B] + list(kw.values()):
            p[-1] = p[0]
    return PositionSpline(times, x, T, C, B, timing=timing, ends=ends, **kw)


@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("ease", [False, True])
@pytest.mark.parametrize("timing", TIMINGS)
def test_lengths_match_quadrature(timing, ease, ends):
    rng = np.random.default_rng(abs(hash((timing, ease, ends))) % 2**32)
    spline = make(rng, timing, ends, ease)
    a, b = spline.domain
    total = spline.total_length
    assert abs(total - reference_length(spline, a, b)) <= 1e-10 * total
    for t in rng.uniform(a, b, 4):
        assert abs(spline.length(t) - reference_length(spline, a, t)) <= 1e-10 * total


@pytest.mark.parametrize("timing", TIMINGS)
def test_inverse_unit_tangent_and_curvature(timing):
    rng = np.random.default_rng(3)
    spline = make(rng, timing, "natural", ease=True)
    L = spline.total_length
    s = np.linspace(0, L, 2001)
    t = spline.time_at_length(s)
    assert np.all(np.diff(t) > 0)
    assert (t[0], t[-1]) == spline.domain
    np.testing.assert_allclose(spline.length(t), s, rtol=0, atol=1e-10 * L)
    tangent = spline.velocity_at_length(s)
    np.testing.assert_allclose(np.linalg.norm(tangent, axis=-1), 1.0, atol=1e-14)
    normal = spline.acceleration_at_length(s[1:-1])
    assert np.abs(np.sum(normal * tangent[1:-1], axis=-1)).max() < 1e-9 * (1 + np.abs(normal).max())
    np.testing.assert_array_equal(spline.position_at_length(s), spline(t))
    # d/ds of the position at length is the unit tangent, of that the curvature vector
    h = 1e-6 * L
    mid = s[5:-5:50]
    dx = (spline.position_at_length(mid + h) - spline.position_at_length(mid - h)) / (2 * h)
    np.testing.assert_allclose(dx, spline.velocity_at_length(mid), atol=1e-6)


def test_zero_speed_and_zero_length_segments():
    rng = np.random.default_rng(4)
    times, x = random_keys(rng, 6, 2)
    x[3] = x[2]  # a repeated key: a segment of length zero with tension 1
    spline = PositionSpline(times, x, tension=1.0)
    L = spline.total_length
    assert abs(L - reference_length(spline, *spline.domain)) <= 1e-10 * L
    s = np.linspace(0, L, 3001)
    t = spline.time_at_length(s)
    assert np.all(np.isfinite(t)) and np.all(np.diff(t) >= 0)
    np.testing.assert_allclose(spline.length(t), s, atol=1e-10 * L)
    # the rest in segment 2 is passed over: no s lands strictly inside it
    assert not np.any((t > times[2]) & (t < times[3]))
    assert np.all(np.isfinite(spline.velocity_at_length(s)))
    np.testing.assert_allclose(np.linalg.norm(spline.velocity_at_length(s), axis=-1), 1.0,
                               atol=1e-12)


def test_curve_of_length_zero():
    spline = PositionSpline(None, np.ones((5, 3)))
    assert spline.total_length == 0.0
    np.testing.assert_array_equal(spline.time_at_length([0.0, 0.0]), [0.0, 0.0])
    np.testing.assert_array_equal(spline.length([0.5, 3.0]), [0.0, 0.0])
    assert np.all(np.isfinite(spline.position_at_length([0.0, 1.0])))
    # nothing moves: equal steps of length are taken as equal steps of time
    np.testing.assert_array_equal(spline.equal_length_times(3), [0.0, 2.0, 4.0])


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1e100, 1e140, 1e160, 1e200, 1e300])
@pytest.mark.parametrize("dim", [1, 3])
def test_length_scales_with_the_curve_at_huge_and_tiny_sizes(scale, dim):
    """Length is homogeneous: scaling the keys by s scales every length by s,
    also where the speed's square leaves the doubles (a speed above about
    1e154 gave an infinite length and NaN lengths along it, a review found;
    below about 1e-154 the square underflows), and where the integral is
    split at the speed's minima (a 1-D curve turning back: their products
    overflowed, 8e-8 off at 1e160, 4e-12 at 1e100, a second review found)."""
    rng = np.random.default_rng(3)
    t, x = np.cumsum(rng.uniform(0.5, 2.0, 6)), rng.normal(size=(6, dim))
    base, scaled = PositionSpline(t, x, tension=0.3), PositionSpline(t, x * scale, tension=0.3)
    q = np.linspace(t[0], t[-1], 7)
    assert scaled.total_length == pytest.approx(scale * base.total_length, rel=1e-13)
    np.testing.assert_allclose(scaled.length(q) / scale, base.length(q), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(scaled.time_at_length(base.length(q) * scale), q, atol=1e-12)


def test_seed_position_al_on_the_leg_hip_path():
    from kbspline import demo
    seed = SeedArcLength(SeedPosSpline(demo.TIMES, np.c_[demo.HIP, np.zeros(7)],
                                       *np.zeros((3, 7))))
    spline = PositionSpline(demo.TIMES, demo.HIP, ends="phantom")
    # the seed's 5-point rule per segment is its own accuracy: about 1e-6 here
    assert abs(spline.total_length - seed.total) <= 1e-6 * seed.total
    s = np.linspace(0, seed.total, 41)
    expected = np.array([seed.position_al(v)[:2] for v in s])
    np.testing.assert_allclose(spline.position_at_length(s), expected, atol=1e-4)


def test_length_extrapolation():
    rng = np.random.default_rng(5)
    times, x = random_keys(rng, 5, 2)
    a, b = times[0], times[-1]
    clamp = PositionSpline(times, x)
    L = clamp.total_length
    np.testing.assert_allclose(clamp.length([a - 1, b + 1]), [0.0, L], atol=1e-15)
    np.testing.assert_array_equal(clamp.time_at_length([-1.0, L + 1]), [a, b])
    linear = PositionSpline(times, x, extrapolate="linear")
    speed = np.linalg.norm(linear.velocity(b))
    np.testing.assert_allclose(linear.length(b + 2.0), L + 2.0 * speed, rtol=1e-12)
    np.testing.assert_allclose(linear.time_at_length(L + speed), b + 1.0, rtol=1e-12)
    periodic = PositionSpline(times, x, extrapolate="periodic")
    np.testing.assert_allclose(periodic.time_at_length(2 * L + 0.5),
                               periodic.time_at_length(0.5) + 2 * (b - a), rtol=1e-12)
    error = PositionSpline(times, x, extrapolate="error")
    with pytest.raises(ValueError, match=r"s\[1\] = .* is outside the domain \[0.0, "):
        error.time_at_length([0.0, L * 1.01])
    error.time_at_length(L * (1 + 1e-13))


def test_batched_equals_per_track_and_shapes():
    rng = np.random.default_rng(6)
    times = np.cumsum(rng.uniform(0.3, 1.0, (2, 3, 5)), axis=-1)
    x = rng.normal(size=(2, 3, 5, 2))
    batch = PositionSpline(times, x, 0.2)
    assert batch.total_length.shape == (2, 3)
    s_shared = np.linspace(0, 1, 9)
    t_shared = batch.time_at_length(s_shared)
    assert t_shared.shape == (2, 3, 9)
    assert batch.equal_length_times(7).shape == (2, 3, 7)
    assert batch.velocity_at_length(s_shared).shape == (2, 3, 9, 2)
    for i in range(2):
        for j in range(3):
            single = PositionSpline(times[i, j], x[i, j], 0.2)
            assert single.total_length == batch.total_length[i, j]
            assert np.array_equal(single.time_at_length(s_shared), t_shared[i, j])
            assert np.array_equal(single.length(times[i, j]), batch.length(times)[i, j])


def test_scalar_track_and_out():
    spline = PositionSpline([0.0, 1.0, 2.0], [0.0, 2.0, 1.0])
    assert abs(spline.total_length - reference_length(spline, 0.0, 2.0)) < 1e-12
    assert np.isclose(abs(spline.velocity_at_length(0.5)), 1.0)
    out = np.empty(4)
    assert spline.length([0.0, 0.5, 1.0, 2.0], out=out) is out
    np.testing.assert_allclose(out[[0, 3]], [0.0, spline.total_length], atol=1e-15)
