"""Multi-turn rotation keys (SPEC 3, seed 002): RotationSpline.from_relative
keeps every turn of keys given as turns about axes, 3D Studio's CompAB spin
branch is reproduced, and a spinning segment never glitches."""
import itertools
import pickle

import numpy as np
import pytest

from kbspline import RotationSpline
from oracles import comp_ab, wm_exp, wm_mul
from test_rotation_segments import log_near, qconj, qexp, qlog, qmul, speed_ratios

TIMINGS = ["kb", "3ds", "parabolic", "average"]


def turn(axis, angle):
    """exp(angle / 2 axis) for a unit axis: the turn itself, never reduced."""
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * np.asarray(axis)])


def composed(axes, angles):
    """Key n = key n-1 turned by angles[n] about unit axes[n] in its own frame."""
    keys = [turn(axes[0], angles[0])]
    for axis, angle in zip(axes[1:], angles[1:]):
        keys.append(qmul(keys[-1], turn(axis, angle)))
    return np.array(keys)


def test_equal_steps_turn_at_constant_angular_velocity():
    spline = RotationSpline.from_relative([0, 1, 2, 3], [[0, 0, 1]] * 4,
                                          [0.0, 5 * np.pi, 5 * np.pi, 5 * np.pi])
    assert spline.total_angle == pytest.approx(15 * np.pi, rel=1e-12)
    t = np.linspace(0, 3, 301)
    np.testing.assert_allclose(spline.angular_velocity(t), np.tile([0, 0, 5 * np.pi], (301, 1)),
                               atol=1e-12)
    np.testing.assert_allclose(spline.angular_acceleration(t), 0.0, atol=1e-10)
    np.testing.assert_allclose(spline.angle(t), 5 * np.pi * t, atol=1e-11)
    np.testing.assert_allclose(spline.time_at_angle(5 * np.pi * t), t, atol=1e-11)
    half = 2.5 * np.pi * t               # the rotation angle about z is 5 pi t
    np.testing.assert_allclose(spline(t), np.column_stack([np.cos(half), 0 * t, 0 * t,
                                                           np.sin(half)]), atol=1e-12)


def test_a_wheel_turns_back_and_forth():
    """Negative turns go the other way; a turn of 2 pi is not the identity."""
    spline = RotationSpline.from_relative([0, 1, 2], [[1, 0, 0]] * 3,
                                          [0.0, 2 * np.pi, -4 * np.pi], tension=1.0)
    assert spline.total_angle == pytest.approx(6 * np.pi, rel=1e-12)
    w = spline.angular_velocity([0.5, 1.5])
    assert w[0, 0] > 0 and w[1, 0] < 0
    np.testing.assert_allclose(spline.angle([1.0, 2.0]), [2 * np.pi, 6 * np.pi], rtol=1e-12)


def random_relative(rng, n, K=7, max_turns=4.0):
    axes = rng.normal(size=(n, K, 3))
    angles = rng.uniform(-max_turns, max_turns, (n, K)) * 2 * np.pi
    small = rng.random((n, K)) < 0.4           # a mix of ordinary and spinning segments
    angles[small] = rng.uniform(-2.5, 2.5, small.sum())
    times = np.concatenate([np.zeros((n, 1)), np.cumsum(rng.uniform(0.2, 2.0, (n, K - 1)), 1)],
                           axis=1)
    return times, axes, angles, rng.uniform(-1, 1, (3, n, K))


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_keys_are_the_composed_turns_and_output_is_continuous():
    rng = np.random.default_rng(1)
    times, axes, angles, tcb = random_relative(rng, 50)
    spline = RotationSpline.from_relative(times, axes, angles, *tcb)
    for i in range(50):
        want = composed(unit(axes[i]), angles[i])
        got = RotationSpline.from_relative(times[i], axes[i], angles[i], *tcb[:, i])(times[i])
        np.testing.assert_allclose(got, want, atol=1e-13)
    t = np.linspace(times[:, 0], times[:, -1], 20000, axis=-1)
    q = spline(t)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-14)
    assert np.all(np.sum(q[:, 1:] * q[:, :-1], axis=-1) > 0)   # sign-continuous


def spin_ratios(spline, times, axes, angles, samples=256):
    """(n, S): each multi-turn segment's largest angular speed over its
    bound |w_spin| + 1.5 max(|w(t_n+) - w_spin|, |w(t_(n+1)-) - w_spin|)
    + 3 pi / dt, body frames, w_spin = angle / dt about the axis; NaN
    elsewhere."""
    tin, tout = spline.tangents
    n, S = times.shape[0], times.shape[1] - 1
    dt = np.diff(times, axis=1)
    u = np.linspace(0.0, 1.0, samples)
    t = times[:, :-1, None] + dt[:, :, None] * u
    t[:, :, -1] = np.nextafter(times[:, 1:], -np.inf)
    speed = np.linalg.norm(spline.angular_velocity(t.reshape(n, -1)), axis=-1)
    speed = speed.reshape(n, S, samples).max(axis=-1)
    spin = angles[:, 1:, None] * unit(axes[:, 1:]) / dt[:, :, None]
    away = np.maximum(np.linalg.norm(2 * tout[:, :-1] - spin, axis=-1),
                      np.linalg.norm(2 * tin[:, 1:] - spin, axis=-1))
    ratio = speed / (np.linalg.norm(spin, axis=-1) + 1.5 * away + 3 * np.pi / dt)
    return np.where(np.abs(angles[:, 1:]) > np.pi, ratio, np.nan)


@pytest.mark.parametrize("timing,ends", list(itertools.product(TIMINGS, ["natural", "reflect",
                                                                          "clamped"])))
def test_no_glitch_on_random_multi_turn_tracks(timing, ends):
    rng = np.random.default_rng([3, TIMINGS.index(timing), len(ends)])
    times, axes, angles, tcb = random_relative(rng, 800)
    kw = {}
    if ends == "clamped":
        kw = dict(start_angular_velocity=rng.uniform(-3, 3, (800, 3)),
                  end_angular_velocity=rng.uniform(-3, 3, (800, 3)))
    spline = RotationSpline.from_relative(times, axes, angles, *tcb, timing=timing, ends=ends,
                                          **kw)
    spinning = np.abs(angles[:, 1:]) > np.pi
    assert not spline.squad_segments[spinning].any()
    assert np.nanmax(spin_ratios(spline, times, axes, angles)) <= 1.0
    # ordinary segments keep the bound of any rotation spline
    ordinary = speed_ratios(spline, times)[~spinning]
    assert ordinary.max() <= 1.0


def test_spinning_segments_match_their_transcription():
    """A segment of more than half a turn is q_n exp(u L) exp(B1 c1)
    exp(B2 c2) exp(B3 c3), c1 = (T0 - L) / 3, c3 = (T1 - L) / 3 and c2 the
    log of exp(-c1) exp(-c3) nearest -(c1 + c3)."""
    rng = np.random.default_rng(9)
    times, axes, angles, tcb = random_relative(rng, 40)
    u = np.linspace(0.0, 1.0, 21)[:, None]
    B1, B2, B3 = 1 - (1 - u) ** 3, 3 * u ** 2 - 2 * u ** 3, u ** 3
    for i in range(40):
        s = RotationSpline.from_relative(times[i], axes[i], angles[i], *tcb[:, i], timing="kb")
        q = composed(unit(axes[i]), angles[i])
        tin, tout = s.tangents
        for n in np.flatnonzero(np.abs(angles[i, 1:]) > np.pi):
            dt = times[i, n + 1] - times[i, n]
            L = 0.5 * angles[i, n + 1] * unit(axes[i, n + 1])
            c1, c3 = (tout[n] * dt - L) / 3, (tin[n + 1] * dt - L) / 3
            c2 = log_near(qmul(qexp(-c1), qexp(-c3)), -(c1 + c3), np.inf)
            want = qmul(qmul(qmul(qmul(q[n], qexp(u * L)), qexp(B1 * c1)), qexp(B2 * c2)),
                        qexp(B3 * c3))
            np.testing.assert_allclose(s(times[i, n] + u[:, 0] * dt), want, atol=1e-12)


def test_swept_angle_counts_every_turn():
    rng = np.random.default_rng(5)
    times, axes, angles, tcb = random_relative(rng, 6)
    u = np.linspace(0.0, 1.0, 100_001)
    for i in range(6):
        s = RotationSpline.from_relative(times[i], axes[i], angles[i], *tcb[:, i])
        total = 0.0
        for n in range(times.shape[1] - 1):
            t = times[i, n] + u * (times[i, n + 1] - times[i, n])
            t[-1] = np.nextafter(t[-1], -np.inf)
            speed = np.linalg.norm(s.angular_velocity(t), axis=-1)
            total += np.sum(0.5 * (speed[1:] + speed[:-1]) * np.diff(t))
        assert s.total_angle == pytest.approx(total, rel=1e-8)
        assert s.total_angle >= np.abs(angles[i, 1:]).sum() - 1e-9 * s.total_angle or \
            np.any(tcb[:, i] != 0)   # zero TCB on one axis would sweep exactly the turns
        s_half = 0.5 * s.total_angle
        assert s.angle(s.time_at_angle(s_half)) == pytest.approx(s_half, rel=1e-12)


def test_rates_against_differences_on_spinning_segments():
    rng = np.random.default_rng(6)
    times, axes, angles, tcb = random_relative(rng, 4)
    for i in range(4):
        s = RotationSpline.from_relative(times[i], axes[i], angles[i], *tcb[:, i],
                                         timing="parabolic")
        t = np.sort(rng.uniform(times[i, 0] + 0.01, times[i, -1] - 0.01, 40))
        h = 1e-6
        qd = (s(t + h) - s(t - h)) / (2 * h)
        omega = 2 * qmul(qd, qconj(s(t)))[:, 1:]
        np.testing.assert_allclose(s.angular_velocity(t), omega,
                                   atol=1e-6 * (1 + np.abs(omega).max()))
        alpha = (s.angular_velocity(t + h) - s.angular_velocity(t - h)) / (2 * h)
        np.testing.assert_allclose(s.angular_acceleration(t), alpha,
                                   atol=1e-5 * (1 + np.abs(alpha).max()))


def test_3ds_matches_compab_with_its_spin_branch():
    """CompAB (seed 002, transcribed in oracles.py with the spin branch) on
    keys of any number of turns: its a and b at every key, from the
    spline's tangents, to 1e-10."""
    rng = np.random.default_rng(8)
    K = 8
    times = np.cumsum(rng.uniform(0.3, 2.0, K))
    axes = unit(rng.normal(size=(K, 3)))
    angles = np.array([0.3, 2 * np.pi + 0.4, 1.0, 5 * np.pi, 2 * np.pi - 1e-6, 0.7, 3.5, 9.0])
    T, C, B = rng.uniform(-1, 1, (3, K))
    spline = RotationSpline.from_relative(times, axes, angles, T, C, B, timing="3ds",
                                          ends="reflect")
    q = composed(axes, angles)
    keys = [dict(frame=t, quat=qq, tens=a, cont=c, bias=b, angle=ang, axis=ax)
            for t, qq, a, c, b, ang, ax in zip(times, q, T, C, B, angles, axes)]
    tin, tout = spline.tangents
    dt = np.diff(times)

    def chord(m):
        """The chord CompAB takes for segment m: the spin branch's half
        turn, or the log of the shorter arc."""
        if angles[m + 1] > 2 * np.pi - 1e-5:
            return 0.5 * np.pi * axes[m + 1]
        r = qmul(qconj(q[m]), q[m + 1])
        return qlog(r * np.sign(r[0]))

    for n in range(K):
        a, b = comp_ab(keys[n - 1] if n else None, keys[n], keys[n + 1] if n < K - 1 else None)
        if n < K - 1:   # a leaves key n, on segment n
            np.testing.assert_allclose(qmul(q[n], qexp(0.5 * (tout[n] * dt[n] - chord(n)))), a,
                                       atol=1e-10)
        if n > 0:       # b reaches key n, on segment n - 1
            np.testing.assert_allclose(
                qmul(q[n], qexp(0.5 * (chord(n - 1) - tin[n] * dt[n - 1]))), b, atol=1e-10)
    # and the spin segments sweep their whole turns
    assert spline.angle(times[3]) - spline.angle(times[2]) > 5 * np.pi - 1.0


def test_closed_loop_of_spins_pickles_and_batches():
    angles = np.array([0.0, 2 * np.pi, 2 * np.pi, 2 * np.pi])     # 6 pi: back where it began
    axes = [[0, 1, 0]] * 4
    loop = RotationSpline.from_relative([0, 1, 2, 3], axes, angles, ends="closed")
    assert loop.extrapolate == "periodic"
    assert loop.total_angle == pytest.approx(6 * np.pi, rel=1e-9)
    again = pickle.loads(pickle.dumps(loop))
    t = np.linspace(-1, 5, 61)
    np.testing.assert_array_equal(again(t), loop(t))
    batch = RotationSpline.from_relative([0, 1, 2, 3], np.broadcast_to(axes, (2, 4, 3)),
                                         np.stack([angles, angles[::-1] * [1, 1, 1, 0]]))
    np.testing.assert_array_equal(batch(t)[0], RotationSpline.from_relative(
        [0, 1, 2, 3], axes, angles)(t))
    np.testing.assert_allclose(loop.angular_velocity(t), [[0, 2 * np.pi, 0]] * len(t),
                               atol=1e-12)
    assert batch.control_points.shape == (2, 3, 4, 4)


def test_linear_extrapolation_spins_on():
    s = RotationSpline.from_relative([0, 1], [[0, 0, 1]] * 2, [0.0, 4 * np.pi],
                                     extrapolate="linear")
    np.testing.assert_allclose(s.angular_velocity([2.0, -1.0]), [[0, 0, 4 * np.pi]] * 2,
                               atol=1e-12)
    half = 2 * np.pi * 1.25
    np.testing.assert_allclose(s(1.25), [np.cos(half), 0, 0, np.sin(half)], atol=1e-12)


def test_start_and_scalar_last():
    start = wm_exp(np.array([0.0, 0.1, 0.2, 0.3]))
    s = RotationSpline.from_relative([0, 1, 2], [[1, 0, 0]] * 3, [0.5, 7.0, 1.0], start=start)
    np.testing.assert_allclose(s(0.0), wm_mul(start, turn([1, 0, 0], 0.5)), atol=1e-15)
    xyzw = RotationSpline.from_relative([0, 1, 2], [[1, 0, 0]] * 3, [0.5, 7.0, 1.0],
                                        start=np.roll(start, -1), scalar_first=False)
    np.testing.assert_allclose(xyzw([0.3, 1.7]), np.roll(s([0.3, 1.7]), -1, axis=-1),
                               atol=1e-15)


@pytest.mark.parametrize("axes,angles,match", [
    ([[0, 0, 1], [0, 0, 0], [1, 0, 0]], [0, 1, 2], r"axes\[1\] has zero length"),
    ([[0, 0, 1], [0, np.nan, 1], [1, 0, 0]], [0, 1, 2], r"axes\[1\] is not finite"),
    ([[0, 0, 1], [0, 1, 1], [1, 0, np.inf]], [0, 1, 2], r"axes\[2\] is not finite"),
    ([[0, 0, 1]] * 3, [0, np.inf, 2], r"angles\[1\] is not finite"),
    ([[0, 0, 1]] * 3, [0, 1], r"angles must have shape \(3,\)"),
    ([0, 0, 1], [0], r"axes must have shape"),
])
def test_bad_relative_keys(axes, angles, match):
    with pytest.raises(ValueError, match=match):
        RotationSpline.from_relative([0, 1, 2], axes, angles)


def test_mismatched_times_are_refused():
    with pytest.raises(ValueError, match="times"):
        RotationSpline.from_relative([0, 1], [[0, 0, 1]] * 3, [0, 1, 2])
    with pytest.raises(TypeError, match="angles"):
        RotationSpline.from_relative([0, 1, 2], [[0, 0, 1]] * 3, ["a", "b", "c"])
