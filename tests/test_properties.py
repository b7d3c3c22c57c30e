"""Property-based tests (hypothesis): random keys, TCB in [-1, 1], random
times and shapes.  Results are finite, keys are interpolated, batched equals
single, float32 output equals float64 rounded, and pickles round-trip."""
import pickle

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from kbspline import PositionSpline, RotationSpline  # noqa: E402

TIMINGS = st.sampled_from(["kb", "3ds", "parabolic", "average"])
ENDS = st.sampled_from(["natural", "phantom", "reflect", "clamped", "closed"])
EXTRAP = st.sampled_from(["clamp", "linear", "periodic"])
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
tcb = st.floats(-1.0, 1.0)


@st.composite
def keyed(draw, width=None):
    """(times, values, T, C, B, timing, ends, extrapolate) for a batch."""
    ends = draw(ENDS)
    K = draw(st.integers({"phantom": 4, "closed": 3}.get(ends, 2), 9))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    D = width or draw(st.integers(1, 4))
    steps = draw(hnp.arrays(float, (K,), elements=st.floats(0.05, 10.0)))
    times = np.cumsum(steps) + draw(st.floats(-1e4, 1e4))
    values = draw(hnp.arrays(float, batch + (K, D), elements=finite))
    T, C, B = (draw(hnp.arrays(float, (K,), elements=tcb)) for _ in range(3))
    if ends == "closed":
        values[..., -1, :] = values[..., 0, :]
        for p in (T, C, B):
            p[-1] = p[0]
    return times, values, T, C, B, draw(TIMINGS), ends, draw(EXTRAP)


@settings(max_examples=60, deadline=None)
@given(keyed(), st.data())
def test_positions(case, data):
    times, values, T, C, B, timing, ends, extrapolate = case
    spline = PositionSpline(times, values, T, C, B, timing=timing, ends=ends,
                            extrapolate=extrapolate)
    lo, hi = spline.domain
    t = np.sort(data.draw(hnp.arrays(float, (7,), elements=st.floats(lo - 5, hi + 5))))
    for method in (spline.position, spline.velocity, spline.acceleration):
        out = method(t)
        assert np.all(np.isfinite(out))
        single = np.empty(out.shape, np.float32)
        method(t, out=single)
        assert np.array_equal(single, out.astype(np.float32))
    inner = slice(1, -1) if ends == "phantom" else slice(None)
    scale = 1 + np.abs(values).max()
    np.testing.assert_allclose(spline(times[inner]), values[..., inner, :], atol=1e-9 * scale)
    flat = values.reshape(-1, *values.shape[-2:])
    batch = spline(t).reshape(len(flat), len(t), -1)
    for i in range(len(flat)):
        one = PositionSpline(times, flat[i], T, C, B, timing=timing, ends=ends,
                             extrapolate=extrapolate)
        assert np.array_equal(one(t), batch[i])
    clone = pickle.loads(pickle.dumps(spline))
    assert np.array_equal(clone(t), spline(t))


@settings(max_examples=40, deadline=None)
@given(keyed(width=4), st.data())
def test_rotations(case, data):
    times, values, T, C, B, timing, ends, extrapolate = case
    if np.any(np.linalg.norm(values, axis=-1) < 1e-6):
        values = values + np.array([1.0, 0, 0, 0])
    if np.any(np.linalg.norm(values, axis=-1) < 1e-6):
        return
    spline = RotationSpline(times, values, T, C, B, timing=timing, ends=ends,
                            extrapolate=extrapolate)
    lo, hi = spline.domain
    t = data.draw(hnp.arrays(float, (6,), elements=st.floats(lo - 3, hi + 3)))
    q = spline(t)
    assert np.all(np.isfinite(q))
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-13)
    for frame in ("world", "body"):
        assert np.all(np.isfinite(spline.angular_velocity(t, frame=frame)))
        assert np.all(np.isfinite(spline.angular_acceleration(t, frame=frame)))
    inner = slice(1, -1) if ends == "phantom" else slice(None)
    unit = values[..., inner, :] / np.linalg.norm(values[..., inner, :], axis=-1, keepdims=True)
    dots = np.abs(np.sum(spline(times[inner]) * unit, axis=-1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-9)
    assert np.array_equal(pickle.loads(pickle.dumps(spline))(t), q)


@settings(max_examples=30, deadline=None)
@given(keyed(), st.data())
def test_arc_length_inverse(case, data):
    times, values, T, C, B, timing, ends, _ = case
    spline = PositionSpline(times, values, T, C, B, timing=timing, ends=ends)
    total = np.atleast_1d(spline.total_length)
    assert np.all(np.isfinite(total)) and np.all(total >= 0)
    fractions = np.sort(data.draw(hnp.arrays(float, (5,), elements=st.floats(0, 1))))
    s = np.multiply.outer(np.asarray(spline.total_length), fractions)
    t = spline.time_at_length(s if s.ndim > 1 else fractions * spline.total_length)
    assert np.all(np.isfinite(t)) and np.all(np.diff(t, axis=-1) >= 0)
    lengths = spline.length(t)
    expected = s if s.ndim > 1 else fractions * spline.total_length
    assert np.all(np.abs(lengths - expected) <= 1e-9 * (1 + total.max()))
