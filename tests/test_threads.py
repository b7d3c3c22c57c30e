"""Threads: results are the same bit for bit on one thread or several, and
the setting is checked."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kbspline
from kbspline import PositionSpline, RotationSpline


@pytest.fixture
def restore_threads():
    previous = kbspline.get_num_threads()
    yield
    kbspline.set_num_threads(previous)


def test_threaded_results_equal_serial(restore_threads):
    rng = np.random.default_rng(0)
    pos = PositionSpline(None, rng.normal(size=(400, 16, 3)), 0.3, timing="parabolic")
    rot = RotationSpline(None, rng.normal(size=(200, 16, 4)), 0.2)
    t = np.linspace(-1, 16, 700)
    t_rows = rng.uniform(0, 15, (400, 300))
    results = {}
    for n in (1, 2, 5):
        kbspline.set_num_threads(n)
        results[n] = [pos(t), pos.velocity(t_rows), pos.acceleration(t, out=np.empty(
            (400, 700, 3), np.float32)), rot(t), rot.angular_velocity(t, frame="body")]
    for n in (2, 5):
        for a, b in zip(results[1], results[n]):
            assert np.array_equal(a, b)


def test_threaded_construction_equals_serial(restore_threads):
    # 3000 tracks x 12 keys x 3: large enough for the build to be split.
    rng = np.random.default_rng(4)
    values = rng.normal(size=(3000, 12, 3))
    times = np.sort(rng.uniform(0, 10, (3000, 12)), axis=-1)
    quats = rng.normal(size=(3000, 12, 4))
    built, errors = {}, {}
    bad = values.copy()
    bad[2400, 5, 1], bad[2400, 6, 1] = 1.5e308, -1.5e308  # finite keys, overflowing chord
    for n in (1, 3):
        kbspline.set_num_threads(n)
        s = PositionSpline(times, values, 0.2, -0.3, 0.1, timing="3ds", ends="reflect")
        r = RotationSpline(times, quats, 0.1, 0.2, -0.3, timing="average", ends="reflect")
        built[n] = [s.coefficients, *s.tangents, r.control_points, *r.tangents]
        with pytest.raises(ValueError) as exc:
            PositionSpline(times, bad)
        errors[n] = str(exc.value)
    assert all(np.array_equal(a, b) for a, b in zip(built[1], built[3]))
    assert errors[1] == errors[3] and "2400" in errors[1]


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                        (True, TypeError), ("2", TypeError),
                                        (257, ValueError), (2**31, ValueError),
                                        (2**64, ValueError)])
def test_set_num_threads_checks(bad, error, restore_threads):
    """Refused at once (2**31 used to be accepted, then overflowed the core's
    C int at the next evaluation), naming n and its range."""
    previous = kbspline.get_num_threads()
    with pytest.raises(error, match="^n must"):
        kbspline.set_num_threads(bad)
    assert kbspline.get_num_threads() == previous
    if error is ValueError:
        with pytest.raises(ValueError, match=r"\[1, 256\]"):
            kbspline.set_num_threads(bad)


def test_set_num_threads_accepts_the_whole_range(restore_threads):
    for n in (1, 256):
        kbspline.set_num_threads(n)
        assert kbspline.get_num_threads() == n
        assert PositionSpline([0.0, 1.0], np.zeros((3, 2, 2)))(0.5).shape == (3, 2)


def test_set_num_threads_returns_the_previous(restore_threads):
    kbspline.set_num_threads(3)
    assert kbspline.set_num_threads(1) == 3
    assert kbspline.get_num_threads() == 1


@pytest.mark.parametrize("value, expected", [("3", "3"), ("256", "256"), ("0", "ValueError"),
                                             ("257", "ValueError"), ("many", "ValueError")])
def test_environment_variable(value, expected):
    code = ("import kbspline\n"
            "print(kbspline.get_num_threads())")
    # the package under test, wherever it is imported from here (and with
    # the environment's LD_PRELOAD of a sanitized build)
    package_dir = os.path.dirname(os.path.dirname(kbspline.__file__))
    env = dict(os.environ, KBSPLINE_NUM_THREADS=value, PYTHONPATH=package_dir)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd="/")
    assert expected in (run.stdout + run.stderr)
