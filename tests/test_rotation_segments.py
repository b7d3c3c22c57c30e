"""No glitches inside rotation segments (SPEC 3): inside every segment the
angular speed stays within 2 max(|w(t_n+)|, |w(t_(n+1)-)|) + 2 pi / dt (times
the ease's largest slope), for every option.  Squad is kept where it is
well-conditioned; elsewhere the segment is the cumulative cubic
q_n exp(B1 w1) exp(B2 w2) exp(B3 w3), checked here against its own
transcription, against calculus, and for C1 at the keys."""
import itertools

import numpy as np
import pytest

from kbspline import RotationSpline, quat_from_axis_angle, quat_multiply
from oracles import ease

TIMINGS = ["kb", "3ds", "parabolic", "average"]
ENDS = ["natural", "phantom", "reflect", "clamped", "closed"]


# -- quaternion arithmetic of the oracle, vectorised over leading axes -------

def qmul(p, q):
    w0, x0, y0, z0 = np.moveaxis(p, -1, 0)
    w1, x1, y1, z1 = np.moveaxis(q, -1, 0)
    return np.stack([w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
                     w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
                     w0 * y1 + y0 * w1 + z0 * x1 - x0 * z1,
                     w0 * z1 + z0 * w1 + x0 * y1 - y0 * x1], axis=-1)


def qconj(q):
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def qexp(v):
    """exp of pure quaternions (..., 3)."""
    a = np.linalg.norm(v, axis=-1, keepdims=True)
    sinc = np.sinc(a / np.pi)   # sin(a) / a, 1 at 0
    return np.concatenate([np.cos(a), sinc * v], axis=-1)


def qlog(q):
    """Principal log of unit quaternions: theta n, theta in [0, pi]."""
    n = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    theta = np.arctan2(n, q[..., :1])
    return np.where(n > 0, theta / np.where(n > 0, n, 1.0), 0.0) * q[..., 1:]


# -- random tracks as a demanding user makes them -----------------------------

def random_tracks(rng, n, K=8, max_degrees=115.0, ends="natural", ease_keys=False):
    """n tracks of K keys whose neighbours are up to `max_degrees` apart,
    TCB in [-1, 1], spacing 0.2-2 (ratios up to 10), clamped end angular
    velocities of up to 3 rad/s per axis."""
    axes = rng.normal(size=(n, K, 3))
    steps = quat_from_axis_angle(axes / np.linalg.norm(axes, axis=-1, keepdims=True),
                                 np.radians(rng.uniform(0, max_degrees, (n, K))))
    q = np.empty((n, K, 4))
    q[:, 0] = steps[:, 0]
    for k in range(1, K):
        q[:, k] = quat_multiply(q[:, k - 1], steps[:, k])
    times = np.concatenate([np.zeros((n, 1)), np.cumsum(rng.uniform(0.2, 2.0, (n, K - 1)), 1)],
                           axis=1)
    tcb = rng.uniform(-1, 1, (3, n, K))
    kw = {}
    if ease_keys:
        kw.update(ease_from=rng.uniform(0, 1, (n, K)), ease_to=rng.uniform(0, 1, (n, K)))
    if ends == "closed":
        q[:, -1] = q[:, 0]
        tcb[:, :, -1] = tcb[:, :, 0]
        for name in kw:
            kw[name][:, -1] = kw[name][:, 0]
    if ends == "clamped":
        kw.update(start_angular_velocity=rng.uniform(-3, 3, (n, 3)),
                  end_angular_velocity=rng.uniform(-3, 3, (n, 3)))
    return times, q, tcb, kw


def max_ease_slope(a, b):
    """The largest de/du of seed 002's Ease(u, a, b): its linear piece's
    slope 2 / (2 - a - b), after a and b are scaled to a sum of at most 1."""
    s = np.maximum(a + b, 1.0)
    return 2.0 / (2.0 - (a + b) / s)


def test_max_ease_slope_against_differences():
    u = np.linspace(0.0, 1.0, 4001)[:-1]    # the seed divides by b at u = 1
    for a, b in [(0.0, 0.0), (0.3, 0.0), (0.2, 0.5), (0.9, 0.7), (1.0, 1.0), (0.0, 0.8)]:
        e = np.array([ease(x, a, b) for x in u])
        assert np.max(np.diff(e) / np.diff(u)) == pytest.approx(max_ease_slope(a, b), rel=1e-3)


def speed_ratios(spline, times, samples=256, ease_from=None, ease_to=None):
    """(n, S): each segment's largest sampled angular speed over its bound."""
    tin, tout = spline.tangents
    knots = spline.breakpoints
    n, S = knots.shape[0], knots.shape[1] - 1
    first = 1 if spline.ends == "phantom" else 0
    u = np.linspace(0.0, 1.0, samples)
    dt = np.diff(knots, axis=1)
    t = knots[:, :-1, None] + dt[:, :, None] * u
    t[:, :, -1] = np.nextafter(knots[:, 1:], -np.inf)     # still on segment n
    speed = np.linalg.norm(spline.angular_velocity(t.reshape(n, -1)), axis=-1)
    speed = speed.reshape(n, S, samples).max(axis=-1)
    seg = np.arange(S) + first
    w_start = 2 * np.linalg.norm(tout[:, seg], axis=-1)
    w_end = 2 * np.linalg.norm(tin[:, seg + 1], axis=-1)
    bound = 2 * np.maximum(w_start, w_end) + 2 * np.pi / dt
    if ease_from is not None:
        bound = bound * max_ease_slope(ease_from[:, seg], ease_to[:, seg + 1])
    return speed / bound


@pytest.mark.parametrize("timing,ends", list(itertools.product(TIMINGS, ENDS)))
def test_angular_speed_bound_on_random_tracks(timing, ends):
    rng = np.random.default_rng([7, TIMINGS.index(timing), ENDS.index(ends)])
    times, q, tcb, kw = random_tracks(rng, 1500, ends=ends)
    spline = RotationSpline(times, q, *tcb, timing=timing, ends=ends, **kw)
    assert speed_ratios(spline, times).max() <= 1.0


@pytest.mark.parametrize("timing", TIMINGS)
def test_angular_speed_bound_with_ease(timing):
    rng = np.random.default_rng([8, TIMINGS.index(timing)])
    times, q, tcb, kw = random_tracks(rng, 1500, ends="natural", ease_keys=True)
    spline = RotationSpline(times, q, *tcb, timing=timing, **kw)
    ratios = speed_ratios(spline, times, samples=512, ease_from=kw["ease_from"],
                          ease_to=kw["ease_to"])
    assert ratios.max() <= 1.0


@pytest.mark.parametrize("ends", ENDS)
def test_angular_speed_bound_at_the_extremes(ends):
    """TCB at the corners of [-1, 1], neighbours up to 179 degrees apart,
    spacing alternating 0.2 and 2 (a ratio of 10)."""
    rng = np.random.default_rng([9, ENDS.index(ends)])
    times, q, tcb, kw = random_tracks(rng, 1500, ends=ends, max_degrees=179)
    steps = np.resize([0.2, 2.0], times.shape[1] - 1)
    times = np.broadcast_to(np.concatenate([[0.0], np.cumsum(steps)]), times.shape).copy()
    tcb = rng.choice([-1.0, 0.0, 1.0], size=tcb.shape)
    if ends == "closed":
        tcb[:, :, -1] = tcb[:, :, 0]
    for timing in TIMINGS:
        spline = RotationSpline(times, q, *tcb, timing=timing, ends=ends, **kw)
        assert speed_ratios(spline, times).max() <= 1.0, timing


def squad_oracle_speed(q0, q1, T0, T1, samples=4001):
    """Largest per-u angular speed of plain squad on one segment (Eberly's
    formulas, transcribed), by differences on a fine grid."""
    L = qlog(qmul(qconj(q0), q1))
    a = qmul(q0, qexp(0.5 * (T0 - L)))
    b = qmul(q1, qexp(0.5 * (L - T1)))
    u = np.linspace(0.0, 1.0, samples)[:, None]
    P = qmul(q0, qexp(u * L))
    Q = qmul(a, qexp(u * qlog(qmul(qconj(a), b))))
    S = qmul(P, qexp(2 * u * (1 - u) * qlog(qmul(qconj(P), Q))))
    step = qmul(qconj(S[:-1]), S[1:])
    return np.max(2 * np.linalg.norm(qlog(step * np.sign(step[:, :1])), axis=-1)) * (samples - 1)


def test_plain_squad_breaks_the_bound_where_segments_are_replaced():
    """The bound is not idle: on segments the library replaces, squad
    itself (transcribed) spikes past it on some tracks; the library's
    segments stay within it."""
    rng = np.random.default_rng(11)
    times, q, tcb, kw = random_tracks(rng, 1500, ends="closed")
    spline = RotationSpline(times, q, *tcb, timing="parabolic", ends="closed", **kw)
    tin, tout = spline.tangents
    keys = spline.control_points[..., 0, :]
    replaced = np.argwhere(~spline.squad_segments)
    assert len(replaced) > 0
    worst = 0.0
    for i, n in replaced[:60]:
        dt = times[i, n + 1] - times[i, n]
        T0, T1 = tout[i, n] * dt, tin[i, n + 1] * dt
        bound = 2 * max(2 * np.linalg.norm(T0), 2 * np.linalg.norm(T1)) + 2 * np.pi
        worst = max(worst, squad_oracle_speed(keys[i, n], spline.control_points[i, n, 3],
                                              T0, T1) / bound)
    assert worst > 1.0
    assert speed_ratios(spline, times).max() <= 1.0


def aligned_keys(q):
    """Normalised keys, each on the side of its predecessor."""
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    for k in range(1, q.shape[-2]):
        flip = np.sum(q[..., k, :] * q[..., k - 1, :], axis=-1) < 0
        q[..., k, :] = np.where(flip[..., None], -q[..., k, :], q[..., k, :])
    return q


def log_near(q, target, limit):
    """Of the logs (theta + 2 pi k) n of unit q, the one nearest `target`
    whose length is at most `limit` (by trying every k)."""
    v = qlog(q)
    theta = np.linalg.norm(v)
    n = v / theta if theta > 0 else target / np.linalg.norm(target)
    k = np.arange(-20, 21)
    lengths = theta + 2 * np.pi * k
    allowed = np.abs(lengths) <= limit * (1 + 1e-12) + 1e-12
    candidates = lengths[allowed, None] * n
    return candidates[np.argmin(np.linalg.norm(candidates - target, axis=-1))]


def cumulative_oracle(q0, q1, T0, T1, u):
    """Kim, Kim & Shin's cumulative cubic from q0 to q1 with per-u log
    tangents T0, T1 (half angular velocities, body frames), at u (M,); its
    middle log the one nearest L - w1 - w3 no longer than |w1| + |L| + |w3|."""
    w1, w3 = T0 / 3, T1 / 3
    L = qlog(qmul(qconj(q0), q1))
    w2 = log_near(qmul(qmul(qexp(-w1), qmul(qconj(q0), q1)), qexp(-w3)), L - w1 - w3,
                  np.linalg.norm(w1) + np.linalg.norm(L) + np.linalg.norm(w3))
    u = u[:, None]
    B1, B2, B3 = 1 - (1 - u) ** 3, 3 * u ** 2 - 2 * u ** 3, u ** 3
    return qmul(qmul(qmul(q0, qexp(B1 * w1)), qexp(B2 * w2)), qexp(B3 * w3))


@pytest.fixture(scope="module")
def wild():
    """Tracks with large tangents, many of whose segments are cumulative."""
    rng = np.random.default_rng(5)
    times, q, tcb, kw = random_tracks(rng, 400, ends="clamped", max_degrees=150)
    spline = RotationSpline(times, q, *tcb, timing="average", ends="clamped", **kw)
    assert (~spline.squad_segments).sum() >= 20

    def track(i):   # track i alone: tracks are built independently
        return RotationSpline(times[i], q[i], *tcb[:, i], timing="average", ends="clamped",
                              **{name: v[i] for name, v in kw.items()})
    return spline, times, q, track


def test_cumulative_segments_match_their_transcription(wild):
    spline, times, q, track = wild
    keys = aligned_keys(q.copy())
    tin, tout = spline.tangents
    u = np.linspace(0.0, 1.0, 33)
    for i, n in np.argwhere(~spline.squad_segments):
        dt = times[i, n + 1] - times[i, n]
        want = cumulative_oracle(keys[i, n], keys[i, n + 1], tout[i, n] * dt,
                                 tin[i, n + 1] * dt, u)
        np.testing.assert_allclose(track(i)(times[i, n] + u * dt), want, atol=2e-14)


def test_squad_segments_keep_squad(wild):
    """Where squad is kept, the values are squad's (the transcription)."""
    spline, times, q, track = wild
    ctrl = spline.control_points
    u = np.linspace(0.0, 1.0, 17)[:, None]
    for i, n in np.argwhere(spline.squad_segments)[:200]:
        q0, a, b, q1 = ctrl[i, n]
        P = qmul(q0, qexp(u * qlog(qmul(qconj(q0), q1))))
        Q = qmul(a, qexp(u * qlog(qmul(qconj(a), b))))
        want = qmul(P, qexp(2 * u * (1 - u) * qlog(qmul(qconj(P), Q))))
        dt = times[i, n + 1] - times[i, n]
        np.testing.assert_allclose(track(i)(times[i, n] + u[:, 0] * dt), want, atol=1e-13)


def test_end_angular_velocities_are_the_tangents(wild):
    """Every segment, squad or cumulative, leaves and reaches its keys at
    the angular velocities of the tangents (body frame: twice the log
    tangent), so with continuity 0 the spline is C1 at its keys."""
    spline, times, q, track = wild
    tin, tout = spline.tangents
    rows = np.unique(np.argwhere(~spline.squad_segments)[:, 0])[:40]
    for i in rows:
        inner = times[i, 1:-1]
        h = 1e-8 * np.diff(times[i]).min()
        s = track(i)
        scale = 1.0 + np.abs(s.angular_acceleration(np.concatenate([inner - h, inner + h]))).max()
        np.testing.assert_allclose(s.angular_velocity(inner - h, frame="body"),
                                   2 * tin[i, 1:-1], atol=2 * h * scale + 1e-9)
        np.testing.assert_allclose(s.angular_velocity(inner + h, frame="body"),
                                   2 * tout[i, 1:-1], atol=2 * h * scale + 1e-9)
        np.testing.assert_allclose(s(inner), aligned_keys(q[i].copy())[1:-1], atol=1e-14)


def test_cumulative_rates_against_differences(wild):
    spline, times, q, track = wild
    for i, n in np.argwhere(~spline.squad_segments)[:30]:
        dt = times[i, n + 1] - times[i, n]
        t = times[i, n] + dt * np.array([0.1, 0.37, 0.5, 0.81, 0.93])
        h = 1e-6 * dt
        s = track(i)
        qd = (s(t + h) - s(t - h)) / (2 * h)
        omega = 2 * qmul(qd, qconj(s(t)))[:, 1:]
        np.testing.assert_allclose(s.angular_velocity(t), omega, atol=1e-6 * (1 + abs(omega).max()))
        alpha = (s.angular_velocity(t + h) - s.angular_velocity(t - h)) / (2 * h)
        np.testing.assert_allclose(s.angular_acceleration(t), alpha,
                                   atol=1e-5 * (1 + abs(alpha).max()))
        body = 2 * qmul(qconj(s(t)), qd)[:, 1:]
        np.testing.assert_allclose(s.angular_velocity(t, frame="body"), body,
                                   atol=1e-6 * (1 + abs(body).max()))


def test_sign_continuous_and_unit(wild):
    spline, times, q, track = wild
    t = np.linspace(times[:, :1], times[:, -1:], 4000, axis=-1)[:, :, 0]
    values = spline(t)
    np.testing.assert_allclose(np.linalg.norm(values, axis=-1), 1.0, atol=1e-14)
    assert np.all(np.sum(values[:, 1:] * values[:, :-1], axis=-1) > 0)


def test_swept_angle_through_cumulative_segments(wild):
    spline, times, q, track = wild
    rows = np.unique(np.argwhere(~spline.squad_segments)[:, 0])[:10]
    u = np.linspace(0.0, 1.0, 100_001)
    for i in rows:
        s, total = track(i), 0.0
        for n in range(times.shape[1] - 1):   # segment by segment: rates jump at keys
            t = times[i, n] + u * (times[i, n + 1] - times[i, n])
            t[-1] = np.nextafter(t[-1], -np.inf)
            speed = np.linalg.norm(s.angular_velocity(t), axis=-1)
            total += np.sum(0.5 * (speed[1:] + speed[:-1]) * np.diff(t))
        assert s.total_angle == pytest.approx(total, rel=1e-8)


def test_real_clips_stay_squad():
    """Motion capture has no ill-conditioned segment: it is squad throughout."""
    from mocap import CLIPS, MISSING
    if not CLIPS:
        pytest.skip(MISSING)
    from kbspline.motion import read_bvh
    for path in CLIPS:
        clip = read_bvh(path)
        for timing in TIMINGS:
            assert RotationSpline(clip.times, clip.rotations(), timing=timing).squad_segments.all()
