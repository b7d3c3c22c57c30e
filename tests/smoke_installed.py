"""A smoke test of an installed kbspline, needing nothing but NumPy: run by
cibuildwheel on every wheel it builds and by test_wheel.py in a fresh venv.
Exits non-zero (an AssertionError) if the installed package misbehaves.

    python tests/smoke_installed.py
"""
import importlib.resources
import pathlib
import pickle
import sys

import numpy as np

# Run from anywhere, the script must test the installed package, never a
# source tree that happens to sit beside it.
sys.path = [p for p in sys.path if pathlib.Path(p or ".").resolve() !=
            pathlib.Path(__file__).resolve().parent]

import kbspline  # noqa: E402
from kbspline import PositionSpline, RotationSpline  # noqa: E402
from kbspline.motion import read_bvh  # noqa: E402, F401  (the subpackage is shipped)
from kbspline.formats.gltf import read_gltf  # noqa: E402, F401  (and formats' own)


def main():
    files = importlib.resources.files("kbspline")
    assert files.joinpath("py.typed").is_file(), "py.typed is missing"
    assert files.joinpath("_kbspline.pyi").is_file(), "the extension's stub is missing"

    # Parabolic timing reproduces a parabola exactly (Catmull-Rom's property),
    # with its velocity and acceleration.
    t = np.array([0.0, 0.7, 1.5, 2.0, 3.1])
    keys = np.stack([t**2, 3 * t - 1], axis=-1)
    spline = PositionSpline(t, keys, timing="parabolic", ends="reflect")
    q = np.linspace(0.7, 1.99, 9)  # segments 1 and 2: both ends are inner keys
    assert np.allclose(spline(q), np.stack([q**2, 3 * q - 1], -1), atol=1e-12)
    assert np.allclose(spline.velocity(q), np.stack([2 * q, 3 + 0 * q], -1), atol=1e-12)
    assert np.allclose(spline.acceleration(q)[:, 0], 2.0, atol=1e-9)

    # A batch equals its tracks, with threads or without.
    rng = np.random.default_rng(0)
    batch = PositionSpline(None, rng.normal(size=(64, 10, 3)), 0.3, -0.2, 0.1)
    grid = np.linspace(*batch.domain, 5000)
    previous = kbspline.set_num_threads(2)
    threaded = batch(grid)
    kbspline.set_num_threads(1)
    assert np.array_equal(threaded, batch(grid))
    kbspline.set_num_threads(previous)
    assert np.array_equal(pickle.loads(pickle.dumps(batch))(grid), threaded)

    # Two rotation keys: squad is the slerp, a constant-rate turn about z.
    half = np.array([0.0, np.pi / 4])
    quats = np.stack([np.cos(half), 0 * half, 0 * half, np.sin(half)], -1)
    rot = RotationSpline([0.0, 2.0], quats)
    u = np.linspace(0, 2, 7)
    expected = np.stack([np.cos(u * np.pi / 8), 0 * u, 0 * u, np.sin(u * np.pi / 8)], -1)
    assert np.allclose(rot(u), expected, atol=1e-12)
    assert np.allclose(rot.angular_velocity(u), [0.0, 0.0, np.pi / 4], atol=1e-12)

    try:
        PositionSpline([0.0, 1.0, 1.0], np.zeros((3, 2)))
    except ValueError as exc:
        assert "times" in str(exc)
    else:
        raise AssertionError("repeated times were accepted")
    print(f"kbspline {kbspline.__version__} with NumPy {np.__version__}: ok")


if __name__ == "__main__":
    main()
