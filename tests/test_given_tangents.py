"""Splines through Hermite keys: tangents given per key instead of computed
from TCB (PositionSpline and RotationSpline's `tangents=`)."""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.interpolate import CubicHermiteSpline

from kbspline import PositionSpline, RotationSpline
from oracles import (hermite, random_quaternions, wm_conjugate, wm_exp, wm_log, wm_mul,
                     wm_squad)


def random_times(rng, K, start=0.0):
    return start + np.cumsum(rng.uniform(0.1, 2.0, K))


def test_positions_match_scipy_hermite():
    rng = np.random.default_rng(3)
    t = random_times(rng, 7)
    x, m = rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
    q = np.linspace(t[0], t[-1], 301)
    spline = PositionSpline(t, x, tangents=(m, m))
    peer = CubicHermiteSpline(t, x, m)
    np.testing.assert_allclose(spline(q), peer(q), atol=1e-12)
    np.testing.assert_allclose(spline.velocity(q), peer(q, 1), atol=1e-11)
    np.testing.assert_allclose(spline.acceleration(q), peer(q, 2), atol=1e-9)


def test_positions_with_two_sided_tangents_per_track():
    """A batch of tracks, each its own times, with incoming and outgoing
    tangents apart: each segment is the Hermite cubic of the seeds
    (oracles.hermite) on its outgoing and the next key's incoming tangent."""
    rng = np.random.default_rng(4)
    B, K, D = 3, 5, 2
    t = np.stack([random_times(rng, K, 1e6) for _ in range(B)])
    x, tin, tout = (rng.normal(size=(B, K, D)) for _ in range(3))
    spline = PositionSpline(t, x, tangents=(tin, tout))
    for b in range(B):
        for n in range(K - 1):
            dt = t[b, n + 1] - t[b, n]
            for u in (0.0, 0.3, 0.75):
                want = hermite(x[b, n], x[b, n + 1], tout[b, n] * dt, tin[b, n + 1] * dt, u)
                got = spline.position(np.full((B, 1), t[b, n] + u * dt))[b, 0]
                np.testing.assert_allclose(got, want, atol=1e-9)
    np.testing.assert_array_equal(spline.tangents[0], tin)
    np.testing.assert_array_equal(spline.tangents[1], tout)


def test_scalar_track_and_shared_tangents():
    t = np.array([0.0, 1.0, 3.0])
    spline = PositionSpline(t, [0.0, 1.0, -1.0], tangents=([1.0, 0.0, 2.0], [1.0, 0.0, 2.0]))
    peer = CubicHermiteSpline(t, [0.0, 1.0, -1.0], [1.0, 0.0, 2.0])
    np.testing.assert_allclose(spline([0.5, 2.0]), peer([0.5, 2.0]), atol=1e-14)
    # (K, D) tangents shared by a batch of two tracks
    x = np.stack([np.eye(3), 2 * np.eye(3)])
    m = np.ones((3, 3))
    batch = PositionSpline(t, x, tangents=(m, m))
    for b in range(2):
        np.testing.assert_allclose(batch(1.7)[b], CubicHermiteSpline(t, x[b], m)(1.7),
                                   atol=1e-14)


def test_computed_tangents_given_back_rebuild_the_spline():
    """The tangents property of a TCB spline, given back, rebuilds it."""
    rng = np.random.default_rng(5)
    t = random_times(rng, 6)
    tcb = rng.uniform(-1, 1, (3, 6))
    q = np.linspace(t[0] - 0.5, t[-1] + 0.5, 157)
    x = rng.normal(size=(2, 6, 3))
    pos = PositionSpline(t, x, *tcb, ease_from=0.3, ease_to=0.2)
    again = PositionSpline(t, x, ease_from=0.3, ease_to=0.2, tangents=pos.tangents)
    np.testing.assert_array_equal(again(q), pos(q))
    keys = random_quaternions(rng, 6, spread=1.2)
    rot = RotationSpline(t, keys, *tcb)
    again = RotationSpline(t, keys, tangents=rot.tangents)
    np.testing.assert_array_equal(again(q), rot(q))
    np.testing.assert_array_equal(again.squad_segments, rot.squad_segments)


def oracle_rotation(times, keys, tin, tout, t):
    """Squad through `keys` (sign-aligned) with the seeds' squad (Wild
    Magic's, transcribed in tests/oracles.py) and inner points from the
    given log-space tangents: a_n = q_n exp((T0_n dt - L_n) / 2),
    b_(n+1) = q_(n+1) exp((L_n - T1_(n+1) dt) / 2)."""
    q = [keys[0] / np.linalg.norm(keys[0])]
    for k in keys[1:]:
        k = k / np.linalg.norm(k)
        q.append(-k if np.dot(q[-1], k) < 0 else k)
    n = min(np.searchsorted(times, t, side="right") - 1, len(times) - 2)
    dt = times[n + 1] - times[n]
    L = wm_log(wm_mul(wm_conjugate(q[n]), q[n + 1]))
    a = wm_mul(q[n], wm_exp(np.concatenate([[0.0], (tout[n] * dt - L[1:]) / 2])))
    b = wm_mul(q[n + 1], wm_exp(np.concatenate([[0.0], (L[1:] - tin[n + 1] * dt) / 2])))
    return wm_squad((t - times[n]) / dt, q[n], a, b, q[n + 1])


def test_rotations_match_the_seed_squad():
    rng = np.random.default_rng(6)
    t = random_times(rng, 6)
    keys = random_quaternions(rng, 6, spread=0.8)
    tin, tout = rng.normal(scale=0.3, size=(2, 6, 3))
    spline = RotationSpline(t, keys, tangents=(tin, tout))
    assert spline.squad_segments.all()  # small tangents: squad everywhere
    for time in np.linspace(t[0], t[-1], 97):
        want = oracle_rotation(t, keys, tin, tout, time)
        got = spline(time)
        assert min(np.abs(got - want).max(), np.abs(got + want).max()) < 1e-12


def one_sided_rates(spline, times, h=1e-6):
    """Body angular velocities arriving at and leaving each key, by
    second-order one-sided differences of the orientation."""
    def rate(t0, step):
        q0, q1, q2 = (spline(t0 + k * step) for k in range(3))
        # log of each relative rotation, a half-angle vector: 2 log / step is the rate
        logs = [wm_log(wm_mul(wm_conjugate(q0), q * np.sign(np.dot(q0, q))))[1:]
                for q in (q1, q2)]
        return 2 * (4 * logs[0] - logs[1]) / (2 * step)
    return (np.array([rate(t, -h) for t in times[1:]]),
            np.array([rate(t, h) for t in times[:-1]]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.01, 0.5, 3.0, 20.0]),
       c1=st.booleans())
def test_rotation_rates_at_keys_are_twice_the_tangents(seed, scale, c1):
    """Body angular velocity 2 T1 arriving at each key, 2 T0 leaving it, on
    squad segments and, where tangents are large, on the cumulative
    segments that replace them; C1 where T1 = T0."""
    rng = np.random.default_rng(seed)
    K = 5
    t = random_times(rng, K)
    keys = random_quaternions(rng, K, spread=1.0)
    tin = rng.normal(scale=scale, size=(K, 3))
    tout = tin if c1 else rng.normal(scale=scale, size=(K, 3))
    spline = RotationSpline(t, keys, tangents=(tin, tout))
    arriving, leaving = one_sided_rates(spline, t)
    tol = 1e-6 * (1 + scale) ** 3 / min(np.diff(t)) ** 2
    np.testing.assert_allclose(arriving, 2 * tin[1:], atol=tol)
    np.testing.assert_allclose(leaving, 2 * tout[:-1], atol=tol)
    np.testing.assert_allclose(spline.angular_velocity(t[:-1], frame="body"),
                               2 * tout[:-1], atol=1e-9 * (1 + scale))


def test_given_tangents_survive_pickling():
    rng = np.random.default_rng(7)
    t = random_times(rng, 4)
    m = rng.normal(size=(2, 2, 4, 3))
    pos = PositionSpline(t, rng.normal(size=(2, 4, 3)), tangents=(m[0], m[1]))
    rot = RotationSpline(t, random_quaternions(rng, 4), tangents=(m[0, 0], m[1, 0]))
    for spline in (pos, rot):
        copy = pickle.loads(pickle.dumps(spline))
        np.testing.assert_array_equal(copy(t + 0.1), spline(t + 0.1))


@pytest.mark.parametrize("cls", [PositionSpline, RotationSpline])
def test_bad_given_tangents(cls):
    t = np.arange(4.0)
    keys = random_quaternions(np.random.default_rng(8), 4) if cls is RotationSpline \
        else np.zeros((4, 3))
    m = np.zeros((4, 3))
    with pytest.raises(TypeError, match="pair"):
        cls(t, keys, tangents=m[:1])
    with pytest.raises(TypeError, match="pair"):
        cls(t, keys, tangents="in, out")
    for not_a_pair in ({0: m, 1: m}, {1.0, 2.0}, np.float64(2.0)):  # not read as keys
        with pytest.raises(TypeError, match="pair"):
            cls(t, keys, tangents=not_a_pair)
    with pytest.raises(ValueError, match="tension, continuity and bias"):
        cls(t, keys, 0.5, tangents=(m, m))
    with pytest.raises(ValueError, match="ends='closed'"):
        cls(t, keys, ends="closed", tangents=(m, m))
    with pytest.raises(ValueError, match="timing='3ds'"):
        cls(t, keys, timing="3ds", tangents=(m, m))
    with pytest.raises(ValueError, match="tangents' outgoing side of shape"):
        cls(t, keys, tangents=(m, m[:3]))
    with pytest.raises(TypeError, match="tangents"):
        cls(t, keys, tangents=(m, m.astype(complex)))
    bad = m.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"tangents' outgoing side\[2, 1\] is nan"):
        cls(t, keys, tangents=(m, bad))
    with pytest.raises(ValueError, match=r"tangents' incoming side\[2, 1\] is nan"):
        cls(t, keys, tangents=(bad, m))
    # named in the shape given, not the broadcast one
    with pytest.raises(ValueError, match=r"tangents' incoming side\[2\] is inf"):
        cls(t, keys, tangents=(np.array([0.0, 0.0, np.inf]), m))
    with pytest.raises(ValueError, match=r"tangents' outgoing side is nan"):
        cls(t, keys, tangents=(m, np.nan))


@pytest.mark.parametrize("cls", [PositionSpline, RotationSpline])
def test_overflowing_tangents_are_named_as_tangents(cls):
    """Tangents too large for the segment's coefficients are named as the
    tangents of the segment's first key (or the next key's), not as its
    values (a review found quaternions[1] blamed for a tangent of 1e300);
    values too large beside small tangents are still the values."""
    t = np.array([0.0, 1.0, 2.0, 200.0])
    keys = random_quaternions(np.random.default_rng(8), 4) if cls is RotationSpline \
        else np.zeros((4, 3))
    m = np.zeros((4, 3))
    out = m.copy()
    out[1, 0] = 1e300 if cls is RotationSpline else 1e308   # leaving key 1
    with pytest.raises(ValueError, match=r"tangents\[1\] or the next key's are too large"):
        cls(t, keys, tangents=(m, out))
    incoming = m.copy()
    incoming[3, 0] = 1e307   # arriving at key 3, over a segment of 198
    with pytest.raises(ValueError, match=r"tangents\[2\] or the next key's are too large"):
        cls(t, keys, tangents=(incoming, m))
    if cls is PositionSpline:
        huge = np.zeros((4, 3))
        huge[2, 0], huge[3, 0] = -1.7e308, 1.7e308
        with pytest.raises(ValueError, match=r"values\[1\] is too large"):   # its chord
            cls(t, huge, tangents=(m, m))


def test_ease_applies_after_given_tangents():
    """As ends.md says: an eased side of a key is at rest whatever its
    tangent (one-sided differences), the other side moves at the tangent."""
    m = np.array([[1.0], [2.0], [3.0]])
    s = PositionSpline([0.0, 1.0, 2.0], [[0.0], [1.0], [2.0]], tangents=(m, m),
                       ease_from=[0.0, 0.3, 0.0])
    h = 1e-7
    leaving = (s(1.0 + h) - s(1.0)) / h
    arriving = (s(1.0) - s(1.0 - h)) / h
    assert abs(leaving[0]) < 1e-5 and arriving[0] == pytest.approx(2.0, rel=1e-5)


def test_phantom_ends_rebuild_from_their_inner_keys_tangents():
    """As ends.md says: a phantom spline's phantom keys have NaN tangents;
    its inner keys with theirs rebuild it over its domain."""
    rng = np.random.default_rng(1)
    t, x = np.cumsum(rng.uniform(0.5, 2.0, 7)), rng.normal(size=(7, 2))
    s = PositionSpline(t, x, ends="phantom", tension=0.2)
    tin, tout = s.tangents
    assert np.isnan(tin[[0, -1]]).all()
    again = PositionSpline(t[1:-1], x[1:-1], tangents=(tin[1:-1], tout[1:-1]))
    q = np.linspace(t[1], t[-2], 50)
    np.testing.assert_allclose(again(q), s(q), rtol=1e-14, atol=1e-14)
