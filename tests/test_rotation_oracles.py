"""RotationSpline against the seeds' code and the splines package."""
import numpy as np
import pytest

from kbspline import RotationSpline, quat_from_axis_angle
from oracles import (SeedRotSpline, comp_ab, random_quaternions, wm_from_axis_angle,
                     wm_squad)

TOL = 1e-10


def assert_same_rotations(got, expected, tol=TOL):
    """Equal up to the sign of each quaternion."""
    got, expected = np.asarray(got), np.asarray(expected)
    sign = np.where(np.sum(got * expected, axis=-1) < 0, -1.0, 1.0)[..., None]
    np.testing.assert_allclose(got, sign * expected, rtol=0, atol=tol)


@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_kb_phantom_matches_seed_rotspline(seed, uniform):
    rng = np.random.default_rng(seed)
    times = (np.arange(9.0) if uniform else np.cumsum(rng.uniform(0.2, 2.0, 9)))
    q = random_quaternions(rng, 9)
    T, C, B = rng.uniform(-1, 1, (3, 9))
    oracle = SeedRotSpline(times, q, T, C, B)
    spline = RotationSpline(times, q, T, C, B, timing="kb", ends="phantom")
    ts = np.concatenate([np.sort(rng.uniform(times[1], times[-2], 200)), times[1:-1]])
    assert_same_rotations(spline(ts), [oracle.q(t) for t in ts])


def test_3ds_reflect_matches_seed_compab():
    rng = np.random.default_rng(11)
    K = 7
    times = np.cumsum(rng.uniform(0.3, 2.0, K))
    q = random_quaternions(rng, K)
    T, C, B = rng.uniform(-1, 1, (3, K))
    aligned = [q[0]]
    for qi in q[1:]:
        aligned.append(-qi if np.dot(qi, aligned[-1]) < 0 else qi)
    keys = [dict(frame=t, quat=qq, tens=a, cont=b, bias=c)
            for t, qq, a, b, c in zip(times, aligned, T, C, B)]
    ab = [comp_ab(keys[i - 1] if i > 0 else None, keys[i], keys[i + 1] if i < K - 1 else None)
          for i in range(K)]
    spline = RotationSpline(times, q, T, C, B, timing="3ds", ends="reflect")
    ts = np.linspace(times[0], times[-1], 301)
    expected = []
    for t in ts:
        n = min(np.searchsorted(times, t, side="right") - 1, K - 2)
        u = (t - times[n]) / (times[n + 1] - times[n])
        expected.append(wm_squad(u, aligned[n], ab[n][0], ab[n + 1][1], aligned[n + 1]))
    assert_same_rotations(spline(ts), expected)


def test_leg_demo_angle_tracks_match_seed():
    """The seed's three angle tracks: rotations about (0, 0, 1), keys at i - 1."""
    from kbspline import demo
    times = demo.TIMES
    ts = np.linspace(0.0, 4.0, 101)
    for angles in demo.ANGLES:
        keys = [wm_from_axis_angle([0, 0, 1], a) for a in angles]
        oracle = SeedRotSpline(times, keys, *np.zeros((3, 7)))
        spline = RotationSpline(times, quat_from_axis_angle([0, 0, 1], angles), ends="phantom")
        assert_same_rotations(spline(ts), [oracle.q(t) for t in ts])


@pytest.mark.parametrize("seed", range(3))
def test_closed_uniform_matches_splines_squad(seed):
    sq = pytest.importorskip("splines.quaternion")
    rng = np.random.default_rng(40 + seed)
    q = random_quaternions(rng, 6)
    keys = [sq.UnitQuaternion.from_unit_xyzw(np.roll(qq, -1)) for qq in q]
    oracle = sq.Squad(keys, grid=range(7))
    spline = RotationSpline(None, np.vstack([q, q[:1]]), ends="closed")
    ts = np.linspace(0, 6, 241)
    expected = [np.roll(oracle.evaluate(t).xyzw, 1) for t in ts]
    assert_same_rotations(spline(ts), expected)
