"""Every evaluation path gives the same bits: one track or many, queries
located through the segment grid (calls with many more queries than
segments, or unsorted queries on a long track) or from the previous
query's segment (small calls)."""
import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline


@pytest.mark.parametrize("dim", [1, 3, 5])
@pytest.mark.parametrize("tracks", [1, 4])
def test_grid_located_queries_equal_small_calls(dim, tracks):
    rng = np.random.default_rng(dim * 10 + tracks)
    times = np.cumsum(rng.uniform(0.01, 3.0, 40))      # uneven: cells hold many segments
    spline = PositionSpline(times, rng.normal(size=(tracks, 40, dim)), extrapolate="linear")
    t = rng.uniform(times[0] - 1, times[-1] + 1, 5000)
    t[::7] = times[rng.integers(0, 40, len(t[::7]))]   # exactly on knots too
    for nu, method in enumerate([spline.position, spline.velocity, spline.acceleration]):
        whole = method(t)
        pieces = np.concatenate([method(t[i:i + 3]) for i in range(0, len(t), 3)], axis=-2)
        np.testing.assert_array_equal(whole, pieces)
        out32 = np.empty(whole.shape, np.float32)
        method(t, out=out32)
        np.testing.assert_array_equal(out32, whole.astype(np.float32))


@pytest.mark.parametrize("extrapolate", ["clamp", "linear", "periodic"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sorted_runs_equal_queries_one_by_one(extrapolate, dtype):
    """One track's ascending queries take a no-search path within a segment:
    bit for bit what each query gives alone, across the domain's ends."""
    rng = np.random.default_rng(12)
    spline = PositionSpline(np.cumsum(rng.uniform(0.5, 1.5, 9)), rng.normal(size=(9, 3)),
                            extrapolate=extrapolate)
    lo, hi = spline.domain
    t = np.concatenate([np.linspace(lo - 3, hi + 3, 3001), spline.breakpoints])
    t.sort()
    together = spline(t, out=np.empty((len(t), 3), dtype))
    alone = np.array([spline(t[i:i + 1], out=np.empty((1, 3), dtype))[0]
                      for i in range(len(t))])
    np.testing.assert_array_equal(together, alone)


@pytest.mark.parametrize("kind", ["position", "rotation"])
@pytest.mark.parametrize("own_times", [False, True])
@pytest.mark.parametrize("keys", [3000, 12000])
def test_random_queries_on_long_tracks_equal_small_calls(kind, own_times, keys):
    """Fewer unsorted queries than segments: located through a grid of
    fewer cells than segments (each cell spans several, uneven ones), and
    on tables past a megabyte (12 000 keys) located ahead of their
    evaluation, the same bits as calls of three queries, which have
    neither."""
    rng = np.random.default_rng(7 + own_times)
    times = np.cumsum(rng.uniform(0.01, 3.0, (2, keys) if own_times else keys), axis=-1)
    if kind == "position":
        spline = PositionSpline(times, rng.normal(size=(2, keys, 3)), extrapolate="linear")
        methods = [spline.position, spline.velocity, spline.acceleration,
                   lambda t: spline(t, out=np.empty(spline.batch_shape + (len(t), 3),
                                                    np.float32))]
    else:
        spline = RotationSpline(times, rng.normal(size=(2, keys, 4)))
        methods = [spline, spline.angular_velocity]
    lo, hi = np.max(spline.domain[0]), np.min(spline.domain[1])
    t = rng.uniform(lo - 1, hi + 1, 900)
    t[::9] = np.ravel(times)[rng.integers(0, keys, len(t[::9]))].clip(lo, hi)  # on knots
    for method in methods:
        whole = method(t)
        pieces = np.concatenate([method(t[i:i + 3]) for i in range(0, len(t), 3)], axis=-2)
        np.testing.assert_array_equal(whole, pieces)


@pytest.mark.parametrize("kind", ["position", "rotation"])
def test_a_batch_of_no_tracks_reads_no_queries(kind):
    """No tracks, so per-track queries of shape (0, n) hold no times: the
    grid's choice must not read them (found by the ASan suite)."""
    times = np.zeros((0, 100)) + np.arange(100.0)
    cls, width = (PositionSpline, 3) if kind == "position" else (RotationSpline, 4)
    spline = cls(times, np.ones((0, 100, width)))
    for t in (np.zeros((0, 5)) + [3.0, 1.0, 2.0, 9.0, 4.0], np.array([3.0, 1.0, 2.0])):
        assert spline(t).shape == (0, t.shape[-1], width)
