"""PositionSpline against the seeds' code and the splines package."""
import numpy as np
import pytest

from kbspline import PositionSpline
from oracles import (Seed3dsSpline, SeedPosSpline, comp_deriv, ease, interior_times,
                     random_keys, seed004_position)

splines = pytest.importorskip("splines")

TOL = 1e-10


def random_tcb(rng, n):
    return rng.uniform(-1, 1, (3, n))


@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_kb_phantom_matches_seed_posspline(seed, uniform):
    rng = np.random.default_rng(seed)
    times, x = random_keys(rng, 9, 3, uniform)
    T, C, B = random_tcb(rng, 9)
    oracle = SeedPosSpline(times, x, T, C, B)
    spline = PositionSpline(times, x, T, C, B, timing="kb", ends="phantom")
    ts = np.concatenate([interior_times(rng, times, 200), times[1:-1], [times[0] - 1]])
    got_p, got_v, got_a = spline(ts), spline.velocity(ts), spline.acceleration(ts)
    for t, p, v, a in zip(ts, got_p, got_v, got_a):
        dt = oracle.segment_duration(t)
        np.testing.assert_allclose(p, oracle.position(t), rtol=0, atol=TOL)
        if times[1] <= t <= times[-2]:
            np.testing.assert_allclose(v, oracle.velocity(t) / dt, rtol=0, atol=TOL)
            np.testing.assert_allclose(a, oracle.acceleration(t) / dt**2, rtol=0, atol=TOL)


@pytest.mark.parametrize("seed", range(5))
def test_3ds_matches_seed_compderiv_with_ease(seed):
    rng = np.random.default_rng(100 + seed)
    times, x = random_keys(rng, 8, 2)
    T, C, B = random_tcb(rng, 8)
    ef, et = rng.uniform(0, 0.7, (2, 8))
    ef[2] = et[4] = 0.0
    oracle = Seed3dsSpline(times, x, T, C, B, ef, et)
    spline = PositionSpline(times, x, T, C, B, timing="3ds", ends="phantom",
                            ease_from=ef, ease_to=et)
    ts = interior_times(rng, times, 300)
    np.testing.assert_allclose(spline(ts), [oracle.position(t) for t in ts], rtol=0, atol=TOL)


@pytest.mark.parametrize("timing", ["kb", "3ds"])
def test_reflect_is_the_seeds_with_mirrored_keys(timing):
    """ends='reflect' equals the seeds' phantom construction on keys
    extended by x(-1) = 2x(0) - x(1) at 2t(0) - t(1), and likewise at the end."""
    rng = np.random.default_rng(7)
    times, x = random_keys(rng, 6, 2)
    T, C, B = random_tcb(rng, 6)
    ext_t = np.concatenate([[2 * times[0] - times[1]], times, [2 * times[-1] - times[-2]]])
    ext_x = np.concatenate([[2 * x[0] - x[1]], x, [2 * x[-1] - x[-2]]])
    pad = [lambda p: np.concatenate([[0.0], p, [0.0]])][0]
    spline = PositionSpline(times, x, T, C, B, timing=timing, ends="reflect")
    ts = np.linspace(times[0], times[-1], 157)
    if timing == "kb":
        oracle = SeedPosSpline(ext_t, ext_x, pad(T), pad(C), pad(B))
        expected = [oracle.position(t) for t in ts]
    else:
        oracle = Seed3dsSpline(ext_t, ext_x, pad(T), pad(C), pad(B), *np.zeros((2, 8)))
        expected = [oracle.position(t) for t in ts]
    np.testing.assert_allclose(spline(ts), expected, rtol=0, atol=TOL)


def test_3ds_tangents_are_compderiv_per_time():
    rng = np.random.default_rng(3)
    times, x = random_keys(rng, 5, 3)
    T, C, B = random_tcb(rng, 5)
    spline = PositionSpline(times, x, T, C, B, timing="3ds")
    tin, tout = spline.tangents
    for i in range(1, 4):
        keys = [dict(frame=times[j], pos=x[j], tens=T[j], cont=C[j], bias=B[j])
                for j in (i - 1, i, i + 1)]
        ds, dd = comp_deriv(*keys)
        np.testing.assert_allclose(tin[i] * (times[i] - times[i - 1]), ds, atol=TOL)
        np.testing.assert_allclose(tout[i] * (times[i + 1] - times[i]), dd, atol=TOL)


def test_ease_matches_seed():
    rng = np.random.default_rng(11)
    times, x = random_keys(rng, 2, 1)
    for a, b in [(0.3, 0.2), (0.7, 0.6), (0.0, 0.4), (0.5, 0.0), (1.0, 1.0)]:
        spline = PositionSpline([0.0, 1.0], [0.0, 1.0], ease_from=[a, 0], ease_to=[0, b])
        us = rng.uniform(0, 0.999, 100)
        np.testing.assert_allclose(spline(us), [ease(u, a, b) for u in us], atol=1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_average_matches_seed004(seed):
    rng = np.random.default_rng(200 + seed)
    times, x = random_keys(rng, 7, 2)
    spline = PositionSpline(times, x, timing="average", ends="phantom")
    ts = interior_times(rng, times, 200)
    expected = [seed004_position(times, x, t) for t in ts]
    np.testing.assert_allclose(spline(ts), expected, rtol=0, atol=TOL)


def splines_kb(times, x, T, C, B, ends):
    tcb = np.stack([T, C, B], axis=-1)
    if ends == "closed":
        return splines.KochanekBartels(x[:-1], times, tcb=tcb[:-1], endconditions="closed")
    return splines.KochanekBartels(x, times, tcb=tcb[1:-1], endconditions=ends)


@pytest.mark.parametrize("ends", ["natural", "closed", "clamped"])
@pytest.mark.parametrize("seed", range(4))
def test_parabolic_matches_splines_package(seed, ends):
    rng = np.random.default_rng(300 + seed)
    times, x = random_keys(rng, 7, 3)
    T, C, B = random_tcb(rng, 7)
    kw = {}
    if ends == "closed":
        x[-1] = x[0]
        T[-1], C[-1], B[-1] = T[0], C[0], B[0]
        oracle = splines_kb(times, x, T, C, B, ends)
    elif ends == "clamped":
        v0, v1 = rng.normal(size=(2, 3))
        kw = dict(start_velocity=v0, end_velocity=v1)
        oracle = splines_kb(times, x, T, C, B, (v0.tolist(), v1.tolist()))
    else:
        oracle = splines_kb(times, x, T, C, B, ends)
    spline = PositionSpline(times, x, T, C, B, timing="parabolic", ends=ends, **kw)
    ts = np.concatenate([np.linspace(times[0], times[-1], 301), times])
    for nu, method in enumerate([spline.position, spline.velocity, spline.acceleration]):
        np.testing.assert_allclose(method(ts), oracle.evaluate(ts, nu), rtol=0,
                                   atol=TOL * 10**nu, err_msg=f"derivative {nu}")


@pytest.mark.parametrize("alpha", [0.5, 1.0])
def test_alpha_times_match_splines_package(alpha):
    rng = np.random.default_rng(9)
    _, x = random_keys(rng, 6, 2)
    oracle = splines.CatmullRom(x, alpha=alpha)
    spline = PositionSpline(None, x, timing="parabolic", alpha=alpha)
    np.testing.assert_allclose(spline.breakpoints, oracle.grid, atol=1e-12)
    ts = np.linspace(oracle.grid[0], oracle.grid[-1], 99)
    np.testing.assert_allclose(spline(ts), oracle.evaluate(ts), atol=TOL)
