"""No leaks in the binding, and the same objects used from many threads at
once give the serial results."""
import gc
import os
import select
import signal
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import kbspline
from kbspline import PositionSpline, RotationSpline


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def exercise(rng):
    """Construction, evaluation into new and given arrays, tables, failing calls."""
    # tables of about 200 kB each, so that a leaked one would show in RSS
    times = np.cumsum(rng.uniform(0.2, 1.0, 30))
    values = rng.normal(size=(40, 30, 3))
    pos = PositionSpline(times, values, 0.1, extrapolate="error")
    rot = RotationSpline(times, rng.normal(size=(10, 30, 4)), 0.2)
    t = np.linspace(times[0], times[-1], 50)
    out = np.empty((40, 50, 3))
    pos.velocity(t, out=out)
    pos.time_at_length(np.linspace(0, 1, 20))
    rot.angular_velocity(t)
    rot.time_at_angle(0.5)
    for bad in (lambda: pos(times[-1] + 1), lambda: pos(np.nan), lambda: pos(t, out=out[:, :10]),
                lambda: PositionSpline(times[::-1], values),
                lambda: RotationSpline(times, np.zeros((30, 4))),
                lambda: kbspline.slerp([0, 0, 0, 0], [1, 0, 0, 0], 0.5)):
        with pytest.raises((ValueError, TypeError)):
            bad()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_memory_stays_flat():
    rng = np.random.default_rng(0)
    for _ in range(50):
        exercise(rng)
    gc.collect()
    tracemalloc.start()
    before_py, before_rss = tracemalloc.get_traced_memory()[0], rss_bytes()
    for _ in range(200):
        exercise(rng)
    gc.collect()
    after_py = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after_py - before_py < 200_000          # Python and NumPy allocations
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        return  # ASan holds freed blocks in quarantine: RSS grows without a leak
    assert rss_bytes() - before_rss < 8_000_000     # the core's own mallocs (tables)


def test_reference_counts_are_unchanged():
    times = np.arange(6.0)
    values = np.random.default_rng(1).normal(size=(6, 2))
    t = np.linspace(0, 5, 9)
    out = np.empty((9, 2))
    counts = [sys.getrefcount(a) for a in (times, values, t, out)]
    for _ in range(100):
        spline = PositionSpline(times, values)
        spline(t, out=out)
        spline.length(t)
        with pytest.raises(ValueError):
            spline(t, out=np.empty((9, 3)))
        del spline
    gc.collect()
    assert [sys.getrefcount(a) for a in (times, values, t, out)] == counts


def test_many_threads_share_objects():
    rng = np.random.default_rng(2)
    pos = PositionSpline(None, rng.normal(size=(200, 12, 3)), 0.2, ease_from=0.3)
    rot = RotationSpline(None, rng.normal(size=(50, 12, 4)), -0.1)
    fresh = PositionSpline(None, rng.normal(size=(20, 12, 2)))  # its table is built lazily
    t = np.linspace(-1, 12, 400)

    def work():
        return [pos(t), pos.acceleration(t), rot(t), rot.angular_velocity(t, frame="body"),
                fresh.length(t), fresh.time_at_length(np.linspace(0, 3, 30)), rot.angle(t)]

    expected = work()
    fresh._integral = None  # build the table again, this time under contention
    results = [None] * 8

    def run(i):
        for _ in range(5):
            results[i] = work()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for got in results:
        for a, b in zip(got, expected):
            assert np.array_equal(a, b)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_threaded_calls_work_in_a_forked_child():
    # The core keeps a pool of worker threads; a child of fork() has none
    # of them and must start its own rather than wait for them.
    rng = np.random.default_rng(5)
    spline = PositionSpline(None, rng.normal(size=(200, 20, 3)))
    t = np.linspace(0, 19, 1000)  # 600 000 outputs: split over threads
    previous = kbspline.set_num_threads(2)
    try:
        expected = spline(t)  # the pool is running now
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: evaluate on threads, report, leave at once
            ok = np.array_equal(spline(t), expected)
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as reader:
            answered = select.select([reader], [], [], 60)[0]
            answer = reader.read() if answered else b"no answer in 60 s"
        if not answered:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    finally:
        kbspline.set_num_threads(previous)
    assert answer == b"1"
