"""Arc length and swept angle to 1e-10 through reversals (SPEC 2 and 3).

The oracle is exact: a 1-D track's arc length is the total variation of its
cubics, summed between the roots of their derivatives (found here with the
quadratic formula); a rotation about one fixed axis sweeps twice the total
variation of its half-angle, which on every segment is the cubic Hermite
curve from 0 to the segment's log L with the per-u log tangents T0 and T1
(squad with parallel logs is q_n exp(psi(u) axis) with psi(u) = uL +
2u(1-u)((T0 - L)/2 + u(L - (T0 + T1)/2)); the cumulative cubic's Bernstein
form has the same control points 0, T0/3, L - T1/3, L).  Thousands of
random tracks, turning points near segment ends included."""
import itertools

import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline

TIMINGS = ["kb", "3ds", "parabolic", "average"]
ENDS = ["natural", "phantom", "reflect", "clamped", "closed"]


def assert_within(got, want, total, rel=1e-10):
    """|got - want| <= rel * total (each track's total), reporting the worst."""
    error = np.abs(np.asarray(got) - want) / np.reshape(total, np.shape(total) + (1,) * (
        np.ndim(want) - np.ndim(total)))
    assert error.max() <= rel, f"worst error {error.max():.3g} of the total"


def cubic_variation(c, lo=0.0, hi=1.0):
    """Total variation over [lo, hi] (arrays broadcasting with c[..., 0]) of
    c0 + c1 u + c2 u^2 + c3 u^3, coefficients c (..., 4)."""
    c0, c1, c2, c3 = np.moveaxis(c, -1, 0)
    lo, hi = np.broadcast_arrays(lo, hi, c0)[:2]
    # roots of c1 + 2 c2 u + 3 c3 u^2, stably
    a, b, k = 3 * c3, 2 * c2, c1
    disc = b * b - 4 * a * k
    sq = np.sqrt(np.maximum(disc, 0.0))
    q = -0.5 * (b + np.where(b >= 0, sq, -sq))
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(a != 0, q / a, np.where(b != 0, -k / b, np.nan))
        r2 = np.where(q != 0, k / q, np.nan)
    r1 = np.where(disc >= 0, r1, np.nan)
    r2 = np.where((disc >= 0) & (a != 0), r2, np.nan)
    points = np.stack([lo, np.clip(np.fmin(r1, r2), lo, hi), np.clip(np.fmax(r1, r2), lo, hi),
                       hi], axis=-1)
    points = np.where(np.isnan(points), lo[..., None], points)
    points = np.sort(points, axis=-1)
    u = points
    values = ((c3[..., None] * u + c2[..., None]) * u + c1[..., None]) * u + c0[..., None]
    return np.abs(np.diff(values, axis=-1)).sum(axis=-1)


def test_cubic_variation_oracle():
    """The oracle against a dense sum, and on a cubic whose turning points
    are at 1e-9 and 1 - 1e-9."""
    rng = np.random.default_rng(0)
    c = rng.normal(size=(200, 4))
    u = np.linspace(0, 1, 200_001)
    dense = np.abs(np.diff(np.polynomial.polynomial.polyval(u, c.T), axis=-1)).sum(axis=-1)
    np.testing.assert_allclose(cubic_variation(c), dense, rtol=1e-9)
    e = 1e-9   # p'(u) = 3 (u - e)(u - 1 + e)
    p = np.array([0.0, 3 * e * (1 - e), -1.5, 1.0])
    val = lambda x: ((p[3] * x + p[2]) * x + p[1]) * x + p[0]
    assert cubic_variation(p) == pytest.approx(
        abs(val(e) - val(0)) + abs(val(1 - e) - val(e)) + abs(val(1) - val(1 - e)), rel=1e-14)


def random_scalar_tracks(rng, n, K, ends):
    times = np.concatenate([np.zeros((n, 1)), np.cumsum(rng.uniform(0.1, 2.0, (n, K - 1)), 1)],
                           axis=1)
    x = rng.normal(size=(n, K))
    tcb = rng.uniform(-1, 1, (3, n, K))
    kw = {}
    if ends == "closed":
        x[:, -1] = x[:, 0]
        tcb[:, :, -1] = tcb[:, :, 0]
    if ends == "clamped":
        kw = dict(start_velocity=rng.normal(size=(n, 1)), end_velocity=rng.normal(size=(n, 1)))
    return times, x[..., None], tcb, kw


@pytest.mark.parametrize("timing,ends", list(itertools.product(TIMINGS, ENDS)))
def test_1d_length_is_the_total_variation(timing, ends):
    rng = np.random.default_rng([21, TIMINGS.index(timing), ENDS.index(ends)])
    n, K = 500, 6
    times, x, tcb, kw = random_scalar_tracks(rng, n, K, ends)
    spline = PositionSpline(times, x, *tcb, timing=timing, ends=ends, **kw)
    per_segment = cubic_variation(spline.coefficients[..., 0])          # (n, S)
    total = per_segment.sum(axis=-1)
    assert_within(spline.total_length, total, total)
    # partial lengths at random times, through the segment they fall in
    knots = spline.breakpoints
    t = rng.uniform(knots[:, :1], knots[:, -1:], (n, 8))
    seg = np.clip((t[:, :, None] >= knots[:, None, 1:-1]).sum(-1), 0, knots.shape[1] - 2)
    lo = np.take_along_axis(knots, seg, 1)
    hi = np.take_along_axis(knots, seg + 1, 1)
    u = (t - lo) / (hi - lo)
    before = np.cumsum(np.concatenate([np.zeros((n, 1)), per_segment], 1), 1)
    want = np.take_along_axis(before, seg, 1) + cubic_variation(
        np.take_along_axis(spline.coefficients[..., 0], seg[..., None], 1), 0.0, u)
    assert_within(spline.length(t), want, total)
    # inverses: length(time_at_length(s)) = s, position_at_length on the curve
    s = rng.uniform(0, 1, (n, 8)) * total[:, None]
    back = spline.length(spline.time_at_length(s))
    assert_within(back, s, total)
    np.testing.assert_array_equal(spline.position_at_length(s),
                                  spline.position(spline.time_at_length(s)))


@pytest.mark.parametrize("timing", TIMINGS)
def test_1d_length_with_ease(timing):
    """Ease reparameterises each segment monotonically: the variation stays."""
    rng = np.random.default_rng([22, TIMINGS.index(timing)])
    times, x, tcb, kw = random_scalar_tracks(rng, 500, 6, "natural")
    ease = rng.uniform(0, 1, (2, 500, 6))
    spline = PositionSpline(times, x, *tcb, timing=timing, ease_from=ease[0], ease_to=ease[1])
    total = cubic_variation(spline.coefficients[..., 0]).sum(-1)
    assert_within(spline.total_length, total, total)
    s = rng.uniform(0, 1, (500, 8)) * total[:, None]
    assert_within(spline.length(spline.time_at_length(s)), s, total)


def test_turning_points_at_segment_ends():
    """Keys whose segments turn back within 1e-12 to 1e-3 of their ends."""
    for e in [1e-12, 1e-9, 1e-6, 1e-3]:
        for a in [1e-3, 1.0, 1e3]:
            # clamped two-key segment x(u) = a (u - e)^2 (u - 1 + e)...: velocity zero near both ends
            c = a * np.array([0.0, 3 * e * (1 - e), -1.5, 1.0])
            ends_v = (c[1], c[1] + 2 * c[2] + 3 * c[3])
            spline = PositionSpline([0.0, 1.0], [[c.sum() - c.sum()], [c.sum()]], ends="clamped",
                                    start_velocity=[ends_v[0]], end_velocity=[ends_v[1]])
            np.testing.assert_allclose(spline.coefficients[0, :, 0], c, rtol=1e-12,
                                       atol=1e-15 * a)
            assert spline.total_length == pytest.approx(cubic_variation(c), rel=1e-10)


def test_3d_cusp_length():
    """A planar track whose velocity vanishes inside a segment (a cusp):
    against quadrature split at the cusp."""
    quad = pytest.importorskip("scipy.integrate").quad
    for u0 in [0.3, 1e-7, 1 - 1e-7]:
        # x(u) = (u - u0)^3 + ..., y(u) = (u - u0)^2: speed zero at u0 only
        cx = np.array([-u0 ** 3, 3 * u0 ** 2, -3 * u0, 1.0])
        cy = np.array([u0 ** 2, -2 * u0, 1.0, 0.0])
        x1, y1 = cx.sum(), cy.sum()
        spline = PositionSpline([0.0, 1.0], [[cx[0], cy[0], 0.0], [x1, y1, 0.0]], ends="clamped",
                                start_velocity=[cx[1], cy[1], 0.0],
                                end_velocity=[cx[1] + 2 * cx[2] + 3 * cx[3],
                                              cy[1] + 2 * cy[2], 0.0])
        speed = lambda u: np.hypot(cx[1] + 2 * cx[2] * u + 3 * cx[3] * u * u,
                                   cy[1] + 2 * cy[2] * u)
        pieces = [p for p in [(0.0, u0), (u0, 1.0)] if p[1] > p[0]]
        want = sum(quad(speed, a, b, epsabs=1e-16, epsrel=1e-13, limit=200)[0] for a, b in pieces)
        assert spline.total_length == pytest.approx(want, rel=1e-10)


def random_axis_rotations(rng, n, K, ends):
    times = np.concatenate([np.zeros((n, 1)), np.cumsum(rng.uniform(0.1, 2.0, (n, K - 1)), 1)],
                           axis=1)
    angles = np.cumsum(rng.uniform(-1.5, 1.5, (n, K)), axis=1)     # neighbours < 86 degrees
    tcb = rng.uniform(-0.5, 0.5, (3, n, K))
    kw = {}
    if ends == "closed":
        angles[:, -1] = angles[:, 0]
        tcb[:, :, -1] = tcb[:, :, 0]
    if ends == "clamped":
        kw = dict(start_angular_velocity=np.column_stack([np.zeros((n, 2)), rng.normal(size=n)]),
                  end_angular_velocity=np.column_stack([np.zeros((n, 2)), rng.normal(size=n)]))
    half = angles / 2
    q = np.stack([np.cos(half), 0 * half, 0 * half, np.sin(half)], axis=-1)
    return times, q, angles, tcb, kw


@pytest.mark.parametrize("timing,ends", list(itertools.product(TIMINGS, ENDS)))
def test_single_axis_swept_angle_is_the_total_variation(timing, ends):
    rng = np.random.default_rng([23, TIMINGS.index(timing), ENDS.index(ends)])
    n, K = 500, 6
    times, q, angles, tcb, kw = random_axis_rotations(rng, n, K, ends)
    spline = RotationSpline(times, q, *tcb, timing=timing, ends=ends, **kw)
    tin, tout = spline.tangents
    first = 1 if ends == "phantom" else 0
    S = spline.breakpoints.shape[-1] - 1
    seg = np.arange(S) + first
    dt = np.diff(times, axis=1)[:, seg]
    # the keys' own half-angle steps (aligned keys never step beyond pi/2)
    L = np.diff(angles, axis=1)[:, seg] / 2
    L = (L + np.pi / 2) % np.pi - np.pi / 2
    T0, T1 = tout[:, seg, 2] * dt, tin[:, seg + 1, 2] * dt
    np.testing.assert_allclose(tout[:, seg, :2], 0.0, atol=1e-12)    # one axis
    hermite = np.stack([0 * L, T0, 3 * L - 2 * T0 - T1, T0 + T1 - 2 * L], axis=-1)
    total = 2 * cubic_variation(hermite).sum(-1)
    assert_within(spline.total_angle, total, total)
    s = rng.uniform(0, 1, (n, 8)) * total[:, None]
    assert_within(spline.angle(spline.time_at_angle(s)), s, total)
