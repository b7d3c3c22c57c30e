"""Named regressions of odd input (issue 18 part 4): each failed before its
fix.  Empty batches through every method, float32 out= for the integrals,
scalar arc lengths on a batch, out= overlapping the queries, key spacing
below the smallest normal double, sizes that overflow, huge time spans."""
import pickle

import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline, quat_from_axis_angle

MIN_KEYS = {"natural": 2, "phantom": 4, "reflect": 2, "clamped": 2, "closed": 3}


def identity_keys(shape):
    q = np.zeros(shape + (4,))
    q[..., 0] = 1.0
    return q


def every_method(spline):
    """Every method and property of `spline`, at times of every query shape."""
    rotation = isinstance(spline, RotationSpline)
    batch = spline.batch_shape
    for t in (0.5, np.array([]), np.array([0.2, 0.7]), np.zeros(batch + (0,)),
              np.full(batch + (2,), 0.5)):
        names = (["__call__", "angular_velocity", "angular_acceleration", "angle",
                  "time_at_angle"] if rotation else
                 ["position", "velocity", "acceleration", "length", "time_at_length",
                  "position_at_length", "velocity_at_length", "acceleration_at_length"])
        for name in names:
            yield name, np.shape(t), getattr(spline, name)(t)
    for name in (["total_angle", "control_points", "tangents"] if rotation else
                 ["total_length", "coefficients", "tangents"]):
        yield name, (), getattr(spline, name)
    yield "pickle", (), pickle.loads(pickle.dumps(spline)).batch_shape


@pytest.mark.parametrize("batch", [(0,), (2, 0), (0, 3)])
@pytest.mark.parametrize("ends", sorted(MIN_KEYS))
@pytest.mark.parametrize("per_track", [False, True])
def test_empty_batches_through_every_method(batch, ends, per_track):
    """total_length of an empty batch copied from a NULL table (UBSan:
    memcpy(NULL)); every method of an empty batch at the fewest keys gives an
    empty result of the right shape (CI runs this under ASan and UBSan)."""
    K = MIN_KEYS[ends]
    times = np.broadcast_to(np.arange(K, dtype=float), batch + (K,)) if per_track else None
    for spline in (PositionSpline(times, np.ones(batch + (K, 2)), ends=ends, ease_from=0.2),
                   RotationSpline(times, identity_keys(batch + (K,)), ends=ends)):
        for name, t_shape, result in every_method(spline):
            if name == "pickle":
                assert result == batch
            elif name == "tangents":
                assert all(part.shape[:len(batch)] == batch and part.size == 0
                           for part in result)
            else:
                assert np.shape(result)[:len(batch)] == batch and np.size(result) == 0, name


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_scalar_arc_length_on_a_batch(batch):
    """position_at_length(s) of a scalar s on a batch gave (..., B, D): the
    times came back one per track and were then taken as B shared times."""
    rng = np.random.default_rng(0)
    spline = PositionSpline(None, rng.normal(size=batch + (5, 3)), tension=0.2)
    s = 0.4 * np.min(spline.total_length)
    t = spline.time_at_length(s)
    row = np.asarray(t)[..., None]                      # each track its own time
    position = spline.position(row)[..., 0, :]
    velocity = spline.velocity(row)[..., 0, :]
    assert spline.position_at_length(s).shape == batch + (3,)
    np.testing.assert_array_equal(spline.position_at_length(s), position)
    unit = velocity / np.linalg.norm(velocity, axis=-1, keepdims=True)
    np.testing.assert_allclose(spline.velocity_at_length(s), unit, rtol=1e-14)
    assert spline.acceleration_at_length(s).shape == batch + (3,)
    # the same as the first of two lengths
    two = spline.position_at_length(np.array([s, s]))
    np.testing.assert_array_equal(two[..., 0, :], position)


def integral_methods():
    rng = np.random.default_rng(1)
    keys = rng.normal(size=(3, 6, 2))
    rot = RotationSpline(None, quat_from_axis_angle(rng.normal(size=(3, 6, 3)),
                                                    rng.uniform(0, 2, (3, 6))))
    pos = PositionSpline(None, keys, tension=0.1)
    t = np.linspace(-0.5, 5.5, 9)
    for spline, name, q in [(pos, "length", t), (pos, "time_at_length", t),
                            (pos, "position_at_length", t), (pos, "velocity_at_length", t),
                            (pos, "acceleration_at_length", t), (rot, "angle", t),
                            (rot, "time_at_angle", t)]:
        yield pytest.param(spline, name, q, id=name)


@pytest.mark.parametrize("spline, name, q", list(integral_methods()))
def test_float32_out_for_the_integrals(spline, name, q):
    """length, angle and time_at_* refused a float32 out= (a Dask bake with
    dtype float32 failed); now they compute in float64 and store float32."""
    method = getattr(spline, name)
    expected = method(q)
    out = np.full(expected.shape, -7.0, np.float32)
    assert method(q, out=out) is out
    np.testing.assert_array_equal(out, expected.astype(np.float32))
    # a failed call leaves it untouched
    with pytest.raises(ValueError, match="must be finite"):
        method(np.where(q == q[4], np.nan, q), out=out)
    np.testing.assert_array_equal(out, expected.astype(np.float32))


@pytest.mark.filterwarnings("error")
def test_float32_out_past_its_range_is_infinite_without_a_warning():
    """A length past float32's range stores infinity in a float32 out=,
    as evaluation does, not a NumPy cast warning (one printed in CI)."""
    spline = PositionSpline([0.0, 1.0], [[0.0, 0.0, 0.0], [1e39, 0.0, 0.0]])
    out = np.zeros(2, np.float32)
    spline.length([0.0, 1.0], out=out)
    np.testing.assert_array_equal(out, [0.0, np.inf])
    values = np.zeros((1, 3), np.float32)
    spline([1.0], out=values)
    np.testing.assert_array_equal(values, [[np.inf, 0.0, 0.0]])


def test_dask_bake_float32_length_and_angle():
    da = pytest.importorskip("dask.array")
    from kbspline.dask import bake
    rng = np.random.default_rng(2)
    keys = rng.normal(size=(12, 6, 3))
    quats = quat_from_axis_angle(rng.normal(size=(12, 6, 3)), rng.uniform(0, 2, (12, 6)))
    t = np.linspace(0.0, 5.0, 31)
    for cls, k, method in ((PositionSpline, keys, "length"), (RotationSpline, quats, "angle")):
        baked = bake(cls, None, da.from_array(k, chunks=(5,) + k.shape[1:]), t,
                     method=method, dtype=np.float32)
        expected = getattr(cls(None, k), method)(t)
        assert baked.dtype == np.float32
        np.testing.assert_array_equal(baked.compute(scheduler="threads"),
                                      expected.astype(np.float32))


@pytest.mark.parametrize("ease", [0.0, 0.3])
def test_out_overlapping_the_queries(ease):
    """An out= that is a shifted view of the query times was written while
    they were still being read (with ease, and for lengths)."""
    spline = PositionSpline(None, np.random.default_rng(3).normal(size=5), ease_from=ease)
    for method in (spline.position, spline.length):
        buffer = np.linspace(0.0, 4.0, 101)
        expected = method(buffer[:-1])
        result = method(buffer[:-1], out=buffer[1:])
        np.testing.assert_array_equal(result, expected)
        buffer = np.linspace(0.0, 4.0, 101)
        np.testing.assert_array_equal(method(buffer, out=buffer), method(np.linspace(0, 4, 101)))


@pytest.mark.parametrize("times, where, spacing", [
    ([0.0, 1e-310, 1.0], "times[1]", "1e-310"),
    ([[0.0, 1.0, 2.0], [0.0, 1.0, 1.0 + 2e-308]], "times[1, 2]", None),
    ([[0.0, 1.0, 2.0], [0.0, 5e-324, 1.0]], "times[1, 1]", "5e-324"),
])
@pytest.mark.parametrize("cls", [PositionSpline, RotationSpline])
def test_subnormal_key_spacing(times, where, spacing, cls):
    """A spacing of 1e-310 was refused as 'values[0] is too large' (positions)
    or gave NaN silently (rotations).  Subnormal spacings have lost bits and
    their reciprocals overflow every rate per unit time: refused, naming the
    times and the spacing.  1 + 2e-308 is 1.0: a repeated time."""
    shape = np.shape(times)[:-1] + (3,)
    keys = (np.random.default_rng(4).normal(size=shape + (2,)) if cls is PositionSpline
            else quat_from_axis_angle([0, 0, 1], np.broadcast_to([0.0, 1.0, 2.0], shape)))
    with pytest.raises(ValueError) as exc:
        cls(times, keys)
    message = str(exc.value)
    assert message.startswith(where)
    if spacing:
        assert f"is {spacing} after the key before it" in message
        assert "2.2250738585072014e-308" in message
    else:
        assert "strictly increasing" in message


@pytest.mark.parametrize("cls", [PositionSpline, RotationSpline])
def test_smallest_normal_and_tiny_spacings_work(cls):
    """Normal spacings down to the smallest double build, and evaluate to
    finite values between finite keys."""
    for gap in (np.finfo(float).tiny, 1e-300, 1e-200):
        keys = (np.array([[0.0, 0.0], [1e-310, 0.0], [1.0, 1.0]]) if cls is PositionSpline
                else quat_from_axis_angle([0, 0, 1], [0.0, 1e-300, 1.0]))
        spline = cls([0.0, gap, 1.0], keys)
        assert np.all(np.isfinite(spline(np.linspace(0.0, 1.0, 11))))


@pytest.mark.parametrize("cls", [PositionSpline, RotationSpline])
def test_huge_time_spans(cls):
    """Spans up to the largest double work; a span that overflows is refused
    naming the key."""
    keys = (np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 1.0]]) if cls is PositionSpline
            else quat_from_axis_angle([0, 0, 1], [0.0, 1.0, 2.0]))
    for times in ([0.0, 1e300, 2e300], [-8e307, 0.0, 8e307], [1e300, 1e300 * (1 + 1e-15), 2e300]):
        spline = cls(times, keys)
        t = np.linspace(times[0], times[-1], 7)
        assert np.all(np.isfinite(spline(t)))
        integral = spline.length(t) if cls is PositionSpline else spline.angle(t)
        assert np.all(np.isfinite(integral)) and np.all(np.diff(integral) >= 0)
    with pytest.raises(ValueError, match=r"^times\[2\] is too far from the first time"):
        cls([-1e308, 0.0, 1e308], keys)


def test_sizes_that_overflow_name_values():
    """An empty batch whose keys times dimension overflow the core's sizes
    (NumPy accepts the empty array) is refused naming values, before any
    allocation."""
    with pytest.raises(ValueError, match=r"^values has too many keys times dimensions"):
        PositionSpline([0.0, 1.0, 2.0], np.empty((0, 3, 2 ** 58)))


@pytest.mark.parametrize("keys, alpha", [([0.0, 1e-170, 1.0], 0.5), ([0.0, 1e-170, 1.0], 1.0),
                                         ([0.0, 1e170, 3e170], 1.0),
                                         ([[0.0, 0.0], [3e-200, 4e-200], [1.0, 1.0]], 1.0)])
def test_alpha_times_of_tiny_and_huge_distances(keys, alpha):
    """Squared distances under- or overflowed: distinct keys 1e-170 apart were
    'repeated', keys 1e170 apart gave 'times[1] must be finite' (no times
    were passed).  Now the distance is computed scaled."""
    keys = np.array(keys)
    spline = PositionSpline(None, keys, alpha=alpha)
    diffs = np.diff(keys, axis=0).reshape(len(keys) - 1, -1)
    scale = np.max(np.abs(diffs), axis=1)
    distance = scale * np.linalg.norm(diffs / scale[:, None], axis=1)
    expected = np.concatenate([[0.0], np.cumsum(distance ** alpha)])
    np.testing.assert_allclose(spline.breakpoints, expected, rtol=1e-15)


@pytest.mark.parametrize("keys, alpha, words", [
    ([0.0, 1e308, -1e308], 0.5, r"^values\[2\] is too far from the key before it"),
    ([0.0, 1e-320, 1.0], 1.0, r"^values\[1\] is too near the key before it: with alpha=1.0"),
])
def test_alpha_times_that_cannot_be_had(keys, alpha, words):
    with pytest.raises(ValueError, match=words):
        PositionSpline(None, np.array(keys), alpha=alpha)
