"""PositionSpline's shapes, out=, properties, pickling and repr."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import kbspline
from kbspline import PositionSpline


@pytest.fixture
def restore_threads():
    previous = kbspline.get_num_threads()
    yield
    kbspline.set_num_threads(previous)


@pytest.fixture
def batch():
    rng = np.random.default_rng(1)
    return PositionSpline(None, rng.normal(size=(2, 3, 5, 4)), 0.2, -0.1, 0.3)


@pytest.mark.parametrize("t, shape", [
    (1.5, (2, 3, 4)),
    ([0.5, 1.0, 2.5], (2, 3, 3, 4)),
    (np.zeros((2, 3, 7)), (2, 3, 7, 4)),
    (np.zeros((3, 7)), (2, 3, 7, 4)),
    (np.zeros((1, 1, 7)), (2, 3, 7, 4)),
    (np.zeros((2, 1, 7)), (2, 3, 7, 4)),
    (np.zeros(0), (2, 3, 0, 4)),
])
def test_query_shapes(batch, t, shape):
    for method in (batch, batch.velocity, batch.acceleration):
        assert method(t).shape == shape


def test_per_track_queries_equal_shared_ones(batch):
    t = np.linspace(-0.5, 4.5, 11)
    shared = batch(t)
    rows = batch(np.broadcast_to(t, (2, 3, 11)).copy())
    assert np.array_equal(shared, rows)
    assert np.array_equal(batch(t[::-1]), shared[..., ::-1, :])


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 5])
def test_shared_sweep_equals_per_track_path(dim):
    # Shared knots and times take the block sweep (vectorised for D = 3, 4);
    # per-track times take the scalar path: the two agree bit for bit,
    # across blocks of queries, runs on one segment, and extrapolation.
    rng = np.random.default_rng(dim)
    s = PositionSpline(np.cumsum(rng.uniform(0.5, 1.5, 9)), rng.normal(size=(3, 9, dim)),
                       0.3, -0.2, 0.1, extrapolate="linear")
    lo, hi = s.domain
    t = np.concatenate([np.linspace(lo - 1, hi + 1, 2500), rng.uniform(lo, hi, 300)])
    rows = np.broadcast_to(t, (3, len(t))).copy()
    for method in (s.position, s.velocity, s.acceleration):
        shared = method(t)
        assert np.array_equal(shared, method(rows))
        single = np.empty(shared.shape, np.float32)
        method(t, out=single)
        assert np.array_equal(single, shared.astype(np.float32))


@pytest.mark.parametrize("dim", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_outputs_equal_per_track_path(dim, dtype, restore_threads):
    # From half the last-level cache on (12 MB here: conftest.py), float64
    # outputs are written past the caches, in aligned vectors that may
    # straddle segments (float32 from 24 MB: the C tests).
    # At any alignment of out=, on one thread or two, the values are the
    # per-track path's, and nothing beside out= is written.
    rng = np.random.default_rng(dim)
    n_keys, n_times = 700, 1100  # runs of one or two queries; two blocks
    n_tracks = (12 << 20) // (n_times * dim * 8) + 1
    s = PositionSpline(np.cumsum(rng.uniform(0.5, 1.5, n_keys)),
                       rng.normal(size=(n_tracks, n_keys, dim)), 0.3, -0.2, 0.1)
    t = np.sort(rng.uniform(*s.domain, n_times))
    expected = s(np.broadcast_to(t, (n_tracks, n_times)).copy()).astype(dtype)
    size = expected.size
    for threads, shift in [(1, 0), (1, 1), (2, 2), (2, 3)]:
        kbspline.set_num_threads(threads)
        buffer = np.full(size + 8, -7.25, dtype)
        out = buffer[shift:shift + size].reshape(expected.shape)
        s(t, out=out)
        assert np.array_equal(out, expected)
        assert np.all(buffer[:shift] == -7.25) and np.all(buffer[shift + size:] == -7.25)


@pytest.mark.parametrize("cache", ["1", "0", "-5", "12MB", None])
def test_cache_size_setting_moves_only_the_streaming_threshold(cache):
    # KBSPLINE_CACHE_BYTES, read once per process, sets the cache the core
    # plans its stores for: "1" streams every output, and what is not a
    # positive integer leaves the machine's own.  The values never change.
    env = {k: v for k, v in os.environ.items() if k != "KBSPLINE_CACHE_BYTES"}
    if cache is not None:
        env["KBSPLINE_CACHE_BYTES"] = cache
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(kbspline.__file__))
    script = (
        "import numpy as np, sys\n"
        "from kbspline import PositionSpline\n"
        "rng = np.random.default_rng(5)\n"
        "s = PositionSpline(np.cumsum(rng.uniform(0.5, 1.5, 40)),\n"
        "                   rng.normal(size=(30, 40, 3)), 0.3, -0.2, 0.1)\n"
        "t = np.linspace(*s.domain, 501)\n"
        "out = np.empty((30, 501, 3))\n"
        "s(t, out=out)\n"
        "sys.stdout.buffer.write(out.tobytes())\n")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            check=True)
    rng = np.random.default_rng(5)
    s = PositionSpline(np.cumsum(rng.uniform(0.5, 1.5, 40)), rng.normal(size=(30, 40, 3)),
                       0.3, -0.2, 0.1)
    expected = s(np.broadcast_to(np.linspace(*s.domain, 501), (30, 501)).copy())
    assert np.array_equal(np.frombuffer(result.stdout).reshape(expected.shape), expected)


@pytest.mark.parametrize("timing", ["kb", "3ds", "parabolic", "average"])
@pytest.mark.parametrize("ends", ["natural", "phantom", "reflect", "clamped", "closed"])
def test_shared_parameters_build_what_per_track_ones_do(timing, ends):
    # With times and TCB shared, construction computes each key's tangent
    # weights once for all tracks; given per track (equal rows) it computes
    # them per track.  The tables agree bit for bit.
    rng = np.random.default_rng(3)
    values = rng.normal(size=(4, 7, 3))
    times = np.cumsum(rng.uniform(0.3, 1.5, 7))
    T, C, B = rng.uniform(-0.9, 0.9, (3, 7))
    if ends == "closed":
        values[:, -1] = values[:, 0]
        T[-1], C[-1], B[-1] = T[0], C[0], B[0]
    rows = [np.broadcast_to(p, (4, 7)).copy() for p in (times, T, C, B)]
    shared = PositionSpline(times, values, T, C, B, timing=timing, ends=ends)
    per_track = PositionSpline(*rows[:1], values, *rows[1:], timing=timing, ends=ends)
    assert np.array_equal(shared.coefficients, per_track.coefficients)
    assert all(np.array_equal(a, b, equal_nan=True)  # phantom end keys have none: NaN
               for a, b in zip(shared.tangents, per_track.tangents))


def test_scalar_track_drops_the_dimension_axis():
    s = PositionSpline([0.0, 1.0, 3.0], [0.0, 2.0, 1.0])
    assert s.dim == 1 and s.batch_shape == ()
    assert s([0.5, 1.5]).shape == (2,)
    assert isinstance(s(0.5), float)
    assert s.coefficients.shape == (2, 4)
    assert s.tangents[0].shape == (3,)
    assert s(1.0) == 2.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_out_is_written_and_returned(batch, dtype):
    t = np.linspace(0, 4, 9)
    out = np.empty((2, 3, 9, 4), dtype)
    assert batch.velocity(t, out=out) is out
    expected = batch.velocity(t)
    if dtype == np.float32:
        assert np.array_equal(out, expected.astype(np.float32))
    else:
        assert np.array_equal(out, expected)


def test_properties(batch):
    assert batch.batch_shape == (2, 3)
    assert (batch.dim, batch.num_keys) == (4, 5)
    assert batch.domain == (0.0, 4.0)
    assert np.array_equal(batch.breakpoints, np.arange(5.0))
    assert batch.coefficients.shape == (2, 3, 4, 4, 4)
    tin, tout = batch.tangents
    assert tin.shape == tout.shape == (2, 3, 5, 4)
    assert (batch.timing, batch.ends, batch.extrapolate) == ("kb", "natural", "clamp")
    with pytest.raises(ValueError):
        batch.coefficients[0, 0, 0, 0, 0] = 1.0


def test_per_track_times_give_per_track_domain():
    times = np.array([[0.0, 1, 2, 3], [1.0, 2, 4, 8]])
    s = PositionSpline(times, np.zeros((2, 4, 1)))
    start, end = s.domain
    assert np.array_equal(start, [0.0, 1.0]) and np.array_equal(end, [3.0, 8.0])
    assert s.breakpoints.shape == (2, 4)


def test_phantom_domain_and_breakpoints():
    s = PositionSpline([0.0, 1.0, 2.0, 4.0, 5.0], np.arange(10.0).reshape(5, 2),
                       ends="phantom")
    assert s.domain == (1.0, 4.0)
    assert np.array_equal(s.breakpoints, [1.0, 2.0, 4.0])
    tin, tout = s.tangents
    assert np.isnan(tin[0]).all() and np.isnan(tout[-1]).all()
    assert np.isfinite(tin[1:-1]).all()


def test_closed_defaults_to_periodic():
    s = PositionSpline(None, [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], ends="closed")
    assert s.extrapolate == "periodic"
    np.testing.assert_allclose(s(0.4), s(3.4), atol=1e-14)


@pytest.mark.parametrize("kw", [
    dict(),
    dict(timing="3ds", ends="reflect", ease_from=0.3, ease_to=[0, 0.2, 0.5, 0.1, 0.0]),
    dict(ends="clamped", start_velocity=[1.0, 2.0], extrapolate="linear"),
    dict(times=None, alpha=0.5, ends="phantom"),
])
def test_pickle_round_trip(kw):
    rng = np.random.default_rng(2)
    args = dict(times=np.cumsum(rng.uniform(0.5, 1, 5)), values=rng.normal(size=(3, 5, 2)),
                tension=0.3)
    args.update(kw)
    s = PositionSpline(**args)
    clone = pickle.loads(pickle.dumps(s))
    t = np.linspace(-1, 5, 31)
    assert np.array_equal(clone(t), s(t))
    assert np.array_equal(clone.acceleration(t), s.acceleration(t))
    assert repr(clone) == repr(s)


def test_repr(batch):
    assert repr(batch) == ("PositionSpline(batch_shape=(2, 3), dim=4, num_keys=5, "
                           "timing='kb', ends='natural')")


def test_empty_batch():
    s = PositionSpline(None, np.zeros((0, 4, 3)))
    assert s([0.5, 1.0]).shape == (0, 2, 3)


def test_two_keys_natural_is_a_straight_line():
    s = PositionSpline([1.0, 3.0], [[0.0, 1.0], [4.0, -1.0]])
    t = np.linspace(1, 3, 9)
    np.testing.assert_allclose(s(t), np.outer((t - 1) / 2, [4.0, -2.0]) + [0.0, 1.0],
                               atol=1e-14)
    np.testing.assert_allclose(s.velocity(t), np.tile([2.0, -1.0], (9, 1)), atol=1e-14)


def test_changing_the_inputs_later_changes_nothing():
    times, values = np.array([0.0, 1.0, 2.0]), np.array([[0.0], [1.0], [0.0]])
    tension = np.array([0.0, 0.5, 0.0])
    s = PositionSpline(times, values, tension)
    before = s(np.linspace(0, 2, 7))
    times[1], values[1], tension[1] = 1.5, 9.0, -1.0
    assert np.array_equal(s(np.linspace(0, 2, 7)), before)
    assert np.array_equal(pickle.loads(pickle.dumps(s))(np.linspace(0, 2, 7)), before)


def unaligned(a):
    """A copy of `a` whose data starts one byte into a buffer, as arrays read
    from files or sockets can (Dask's distributed workers hand these over)."""
    buf = np.zeros(a.nbytes + 1, np.uint8)
    out = np.frombuffer(buf, np.float64, a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_unaligned_and_byte_swapped_inputs_are_accepted():
    from kbspline import RotationSpline, quat_multiply
    rng = np.random.default_rng(3)
    values, quats = rng.normal(size=(4, 6, 3)), rng.normal(size=(4, 6, 4))
    times, t = np.arange(6.0), np.linspace(0, 5, 9)
    expected = PositionSpline(times, values, 0.2)(t)
    assert np.array_equal(PositionSpline(unaligned(times), unaligned(values),
                                         unaligned(np.full(6, 0.2)))(unaligned(t)), expected)
    assert np.array_equal(PositionSpline(times.astype(">f8"), values.astype(">f8"), 0.2)(t),
                          expected)
    assert np.array_equal(RotationSpline(None, unaligned(quats))(unaligned(t)),
                          RotationSpline(None, quats)(t))
    assert np.array_equal(quat_multiply(unaligned(quats), quats), quat_multiply(quats, quats))
