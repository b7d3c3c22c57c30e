"""RotationSpline against calculus: unit norm, keys, analytic rates versus
finite differences in both frames, end conditions, extrapolation, and
degenerate keys."""
import numpy as np
import pytest

from kbspline import RotationSpline, quat_conjugate, quat_multiply
from oracles import random_quaternions

TIMINGS = ["kb", "3ds", "parabolic", "average"]
ENDS = ["natural", "phantom", "reflect", "clamped", "closed"]


def make(rng, timing, ends, K=7, **kw):
    times = np.cumsum(rng.uniform(0.3, 1.5, K))
    q = random_quaternions(rng, K)
    T, C, B = rng.uniform(-0.8, 0.8, (3, K))
    if ends == "closed":
        q[-1] = -q[0]
        T[-1], C[-1], B[-1] = T[0], C[0], B[0]
    if ends == "clamped":
        kw.update(start_angular_velocity=rng.normal(size=3),
                  end_angular_velocity=rng.normal(size=3))
    return RotationSpline(times, q, T, C, B, timing=timing, ends=ends, **kw), times, q


def off_knot_times(rng, spline, n, margin=1e-3):
    knots = spline.breakpoints
    t = rng.uniform(knots[0] + margin, knots[-1] - margin, n)
    return t[np.min(np.abs(t[:, None] - knots[None, :]), axis=1) > margin]


def rates_by_differences(spline, t, frame, h=1e-6):
    q = spline(t)
    qd = (spline(t + h) - spline(t - h)) / (2 * h)
    if frame == "world":
        return 2 * quat_multiply(qd, quat_conjugate(q))[..., 1:]
    return 2 * quat_multiply(quat_conjugate(q), qd)[..., 1:]


@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("timing", TIMINGS)
@pytest.mark.parametrize("frame", ["world", "body"])
def test_rates_match_finite_differences(timing, ends, frame):
    rng = np.random.default_rng(abs(hash((timing, ends, frame))) % 2**32)
    spline, _, _ = make(rng, timing, ends)
    t, h = off_knot_times(rng, spline, 40), 1e-6
    omega = spline.angular_velocity(t, frame=frame)
    np.testing.assert_allclose(omega, rates_by_differences(spline, t, frame), atol=1e-6)
    alpha = spline.angular_acceleration(t, frame=frame)
    alpha_fd = (spline.angular_velocity(t + h, frame=frame)
                - spline.angular_velocity(t - h, frame=frame)) / (2 * h)
    np.testing.assert_allclose(alpha, alpha_fd, atol=1e-5 * (1 + np.abs(alpha).max()))


def test_rates_with_ease_match_finite_differences():
    rng = np.random.default_rng(3)
    spline, _, _ = make(rng, "3ds", "natural", ease_from=rng.uniform(0, 0.5, 7),
                        ease_to=rng.uniform(0, 0.5, 7))
    t = off_knot_times(rng, spline, 60)
    np.testing.assert_allclose(spline.angular_velocity(t), rates_by_differences(spline, t, "world"),
                               atol=1e-6)


@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("timing", TIMINGS)
def test_unit_norm_keys_and_sign_continuity(timing, ends):
    rng = np.random.default_rng(5)
    spline, times, q = make(rng, timing, ends)
    t = np.linspace(*spline.domain, 2001)
    out = spline(t)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=1e-14)
    assert np.all(np.sum(out[1:] * out[:-1], axis=-1) > 0.9)  # no sign jumps
    inner = slice(1, -1) if ends == "phantom" else slice(None)
    got = spline(times[inner])
    dots = np.abs(np.sum(got * q[inner], axis=-1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-13)


def test_constant_keys_give_zero_rates():
    q = np.tile([0.5, 0.5, -0.5, 0.5], (5, 1))
    for timing in TIMINGS:
        spline = RotationSpline(None, q, 0.3, 0.2, -0.4, timing=timing)
        t = np.linspace(0, 4, 33)
        np.testing.assert_allclose(spline(t), q[:1].repeat(33, 0), atol=1e-15)
        assert np.abs(spline.angular_velocity(t)).max() < 1e-14
        assert np.abs(spline.angular_acceleration(t, frame="body")).max() < 1e-14


def test_clamped_ends_have_the_given_angular_velocity():
    rng = np.random.default_rng(8)
    times = np.cumsum(rng.uniform(0.5, 1.0, 5))
    q = random_quaternions(rng, 5)
    w0, w1 = rng.normal(size=(2, 3))
    spline = RotationSpline(times, q, ends="clamped", start_angular_velocity=w0,
                            end_angular_velocity=w1)
    np.testing.assert_allclose(spline.angular_velocity([times[0], times[-1]]), [w0, w1],
                               atol=1e-12)


def test_linear_extrapolation_continues_at_the_end_rate():
    rng = np.random.default_rng(9)
    times = np.arange(5.0)
    spline = RotationSpline(times, random_quaternions(rng, 5), extrapolate="linear")
    w_end = spline.angular_velocity(4.0)
    beyond = np.linspace(4.0, 7.0, 31)
    np.testing.assert_allclose(spline.angular_velocity(beyond), np.tile(w_end, (31, 1)),
                               atol=1e-12)
    np.testing.assert_allclose(rates_by_differences(spline, beyond[1:-1], "world"),
                               np.tile(w_end, (29, 1)), atol=1e-6)
    assert np.abs(spline.angular_acceleration(beyond[1:])).max() == 0.0
    before = spline(-1.0)
    w0 = spline.angular_velocity(0.0)
    angle = 2 * np.arccos(min(1.0, abs(np.dot(before, spline(0.0)))))
    np.testing.assert_allclose(angle, np.linalg.norm(w0), atol=1e-12)


@pytest.mark.parametrize("case", ["identical", "antipodal", "near_180", "exactly_180"])
@pytest.mark.parametrize("ends", ENDS)
@pytest.mark.parametrize("timing", TIMINGS)
def test_degenerate_keys_give_finite_results(timing, ends, case):
    half = np.pi / 2
    z = lambda a: [np.cos(a / 2), 0.0, 0.0, np.sin(a / 2)]
    keys = {
        "identical": [z(0.3)] * 6,
        "antipodal": [z(0.3), -np.array(z(0.3)), z(0.3), -np.array(z(0.3)), z(0.3), z(0.3)],
        "near_180": [z(0), z(np.pi - 1e-9), z(2 * np.pi - 2e-9), z(0.5), z(1.0), z(0)],
        "exactly_180": [z(0), [0, 1.0, 0, 0], [0, 0, 1.0, 0], z(half), [0, 0, 0, 1.0], z(0)],
    }[case]
    q = np.array(keys, float)
    if ends == "closed":
        q[-1] = q[0]
    spline = RotationSpline(None, q, 0.2, -0.3, 0.1, timing=timing, ends=ends)
    t = np.linspace(-0.5, 5.5, 241)
    for values in (spline(t), spline.angular_velocity(t), spline.angular_acceleration(t),
                   spline.angular_velocity(t, frame="body")):
        assert np.all(np.isfinite(values))
    np.testing.assert_allclose(np.linalg.norm(spline(t), axis=-1), 1.0, atol=1e-14)


def test_batched_equals_per_track_exactly():
    rng = np.random.default_rng(12)
    q = np.stack([random_quaternions(rng, 6) for _ in range(4)])
    times = np.cumsum(rng.uniform(0.3, 1.0, (4, 6)), axis=1)
    batch = RotationSpline(times.reshape(2, 2, 6), q.reshape(2, 2, 6, 4), 0.1, 0.2, 0.3)
    t = np.linspace(0, 6, 50)
    for name in ("__call__", "angular_velocity", "angular_acceleration"):
        got = getattr(batch, name)(t).reshape(4, 50, -1)
        for i in range(4):
            single = RotationSpline(times[i], q[i], 0.1, 0.2, 0.3)
            assert np.array_equal(getattr(single, name)(t), got[i])


def test_scalar_last_reads_and_writes_xyzw():
    rng = np.random.default_rng(13)
    q = random_quaternions(rng, 5)
    first = RotationSpline(None, q)
    last = RotationSpline(None, q[:, [1, 2, 3, 0]], scalar_first=False)
    t = np.linspace(0, 4, 17)
    np.testing.assert_array_equal(last(t), first(t)[:, [1, 2, 3, 0]])
    np.testing.assert_array_equal(last.angular_velocity(t), first.angular_velocity(t))
    np.testing.assert_array_equal(last.control_points, first.control_points[..., [1, 2, 3, 0]])


@pytest.mark.parametrize("method, kwargs", [
    ("__call__", {}),
    ("angular_velocity", {}),
    ("angular_velocity", {"frame": "body"}),
    ("angular_acceleration", {}),
    ("angular_acceleration", {"frame": "body"}),
])
def test_values_do_not_depend_on_the_queries_beside_them(method, kwargs):
    # Values and rates inside the domain are computed four or eight at a
    # time (vector sine, cosine and atan2, and the jets for rates); a query's
    # result is the same alone, in any order, beside extrapolated ones, and
    # on any segment of its group (tests/test_rotation_lanes.py: more).
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.2, 1.5, 9))
    s = RotationSpline(times, random_quaternions(rng, 9), 0.3, -0.2, 0.1,
                       ease_from=rng.uniform(0, 0.5, 9), ease_to=rng.uniform(0, 0.5, 9),
                       extrapolate="linear")
    f = getattr(s, method)
    t = np.concatenate([rng.uniform(times[0] - 1, times[-1] + 1, 301), times])
    together = f(t, **kwargs)
    assert np.array_equal(together, np.array([f(x, **kwargs) for x in t]))
    order = rng.permutation(len(t))
    assert np.array_equal(f(t[order], **kwargs), together[order])
    single = np.empty(together.shape, np.float32)
    f(t, out=single, **kwargs)
    assert np.array_equal(single, together.astype(np.float32))
