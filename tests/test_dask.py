"""kbspline.dask.bake equals evaluating the whole batch in memory, bit for
bit, on Dask's threaded scheduler and on a local distributed cluster."""
import numpy as np
import pytest

from kbspline import PositionSpline, RotationSpline, quat_from_axis_angle

da = pytest.importorskip("dask.array")
from kbspline.dask import bake  # noqa: E402

OPTIONS = {"tension": 0.3, "bias": -0.2, "continuity": 0.1, "ends": "reflect"}


def random_quats(rng, shape):
    axis = rng.normal(size=shape + (3,))
    return quat_from_axis_angle(axis / np.linalg.norm(axis, axis=-1, keepdims=True),
                                rng.uniform(-3, 3, size=shape))


@pytest.fixture
def case():
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.5, 1.5, 9))
    values = rng.normal(size=(37, 9, 3))
    quats = random_quats(rng, (37, 9))
    t = np.linspace(times[0] - 0.5, times[-1] + 0.5, 301)
    return times, values, quats, t


@pytest.mark.parametrize("method", ["position", "velocity", "acceleration", "length"])
def test_positions_equal_in_memory(case, method):
    times, values, _, t = case
    baked = bake(PositionSpline, times, da.from_array(values, chunks=(10, 3, 3)), t,
                 method=method, **OPTIONS)
    assert baked.chunks[0] == (10, 10, 10, 7)
    expected = getattr(PositionSpline(times, values, **OPTIONS), method)(t)
    assert np.array_equal(baked.compute(scheduler="threads"), expected)


@pytest.mark.parametrize("method", ["__call__", "angular_velocity", "angular_acceleration",
                                    "angle"])
def test_rotations_equal_in_memory(case, method):
    times, _, quats, t = case
    baked = bake(RotationSpline, times, da.from_array(quats, chunks=(8, 9, 4)), t,
                 method=method, tension=0.2)
    expected = getattr(RotationSpline(times, quats, tension=0.2), method)(t)
    assert np.array_equal(baked.compute(scheduler="threads"), expected)


def test_per_track_times_several_batch_axes_and_float32(case):
    times, values, _, t = case
    rng = np.random.default_rng(3)
    values = values[:36].reshape(6, 6, 9, 3)
    per_track = np.sort(rng.uniform(0, 10, size=(6, 6, 9)), axis=-1)
    keys = da.from_array(values, chunks=(4, 3, 9, 3))
    baked = bake(PositionSpline, da.from_array(per_track, chunks=(2, 6, 9)), keys, t,
                 dtype=np.float32, extrapolate="linear")
    assert baked.dtype == np.float32 and baked.chunks[:2] == ((4, 2), (3, 3))
    expected = PositionSpline(per_track, values, extrapolate="linear")(t)
    assert np.array_equal(baked.compute(), expected.astype(np.float32))


def test_local_cluster(case):
    distributed = pytest.importorskip("distributed")
    times, values, quats, t = case
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        positions = bake(PositionSpline, times, da.from_array(values, chunks=(10, 9, 3)), t,
                         method="velocity", **OPTIONS)
        rotations = bake(RotationSpline, None, da.from_array(quats, chunks=(20, 9, 4)), t)
        got_positions, got_rotations = client.compute([positions, rotations], sync=True)
    assert np.array_equal(got_positions, PositionSpline(times, values, **OPTIONS).velocity(t))
    assert np.array_equal(got_rotations, RotationSpline(None, quats)(t))


@pytest.mark.parametrize("call, error, words", [
    (lambda k, t: bake(np.ndarray, None, k, t), TypeError, "spline_class"),
    (lambda k, t: bake(PositionSpline, None, k, t, method="angle"), ValueError, "method"),
    (lambda k, t: bake(PositionSpline, None, k, t, dtype=np.int32), TypeError, "dtype"),
    (lambda k, t: bake(PositionSpline, None, k, t[None]), ValueError, "t must"),
    (lambda k, t: bake(PositionSpline, None, k[0], t), ValueError, "keys must"),
    (lambda k, t: bake(PositionSpline, np.zeros((3, 5)), k, t), ValueError, "per-track"),
])
def test_bad_arguments(case, call, error, words):
    _, values, _, t = case
    with pytest.raises(error, match=words):
        call(da.from_array(values), t)


def test_bad_keys_fail_when_computed(case):
    times, values, _, t = case
    values = values.copy()
    values[30, 4, 1] = np.nan
    baked = bake(PositionSpline, times, da.from_array(values, chunks=(10, 9, 3)), t)
    with pytest.raises(ValueError, match="finite"):
        baked.compute(scheduler="threads")
