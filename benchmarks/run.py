"""Benchmarks of kbspline against its peers, measured side by side in one run.

    python benchmarks/run.py            # full sizes, median of 7 runs
    python benchmarks/run.py --quick    # small sizes, a smoke run for CI

So far: W1 (evaluation of positions) and W4 (construction) of SPEC section 10,
single-threaded.  The rotation, arc-length and multi-core workloads follow
with the features they measure.
"""
import argparse
import platform
import statistics
import time

import numpy as np

from kbspline import PositionSpline


def median_time(fn, repeat):
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_hermite(knots, values, tangents, t):
    """Vectorised NumPy cubic Hermite evaluation: (M,) times -> (B, M, D)."""
    seg = np.clip(np.searchsorted(knots, t, side="right") - 1, 0, len(knots) - 2)
    dt = knots[seg + 1] - knots[seg]
    u = ((t - knots[seg]) / dt)[:, None]
    h00, h10 = 2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u
    h01, h11 = -2 * u**3 + 3 * u**2, u**3 - u**2
    d = dt[:, None]
    return (h00 * values[:, seg] + h10 * d * tangents[:, seg]
            + h01 * values[:, seg + 1] + h11 * d * tangents[:, seg + 1])


def w1(n_tracks, n_keys, n_times, repeat):
    from scipy.interpolate import CubicHermiteSpline
    rng = np.random.default_rng(0)
    knots = np.cumsum(rng.uniform(0.5, 1.5, n_keys))
    values = rng.normal(size=(n_tracks, n_keys, 3))
    spline = PositionSpline(knots, values, tension=0.2, bias=-0.1)  # continuity 0: C1
    t = np.linspace(knots[0], knots[-1], n_times)
    tangents = spline.tangents[1]
    columns = lambda a: a.transpose(1, 0, 2).reshape(n_keys, -1)
    scipy_spline = CubicHermiteSpline(knots, columns(values), columns(tangents))
    out = np.empty((n_tracks, n_times, 3))
    ours = median_time(lambda: spline(t, out=out), repeat)
    peer_scipy = median_time(lambda: scipy_spline(t), repeat)
    peer_numpy = median_time(lambda: numpy_hermite(knots, values, tangents, t), repeat)
    # the peers compute the same numbers
    expected = scipy_spline(t).reshape(n_times, n_tracks, 3).transpose(1, 0, 2)
    assert np.allclose(spline(t), expected, atol=1e-9)
    assert np.allclose(numpy_hermite(knots, values, tangents, t), expected, atol=1e-9)
    return [("W1 positions", "SciPy CubicHermiteSpline", ours, peer_scipy, "≥ 3×"),
            ("W1 positions", "NumPy vectorised Hermite", ours, peer_numpy, "≥ 25×")]


def w4(n_tracks, n_keys, repeat):
    from scipy.interpolate import CubicHermiteSpline
    rng = np.random.default_rng(1)
    knots = np.cumsum(rng.uniform(0.5, 1.5, n_keys))
    values = rng.normal(size=(n_tracks, n_keys, 3))
    tangents = PositionSpline(knots, values).tangents[1]
    y = values.transpose(1, 0, 2).reshape(n_keys, -1)
    dydx = tangents.transpose(1, 0, 2).reshape(n_keys, -1)
    ours = median_time(lambda: PositionSpline(knots, values, 0.1, 0.2, 0.3), repeat)
    peer = median_time(lambda: CubicHermiteSpline(knots, y, dydx), repeat)
    return [("W4 construction", "SciPy CubicHermiteSpline (given tangents)", ours, peer,
             "> 1×")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args(argv)
    scale, repeat = (10, 1) if args.quick else (1, 7)
    rows = w1(1000 // scale, 64, 1000 // scale, repeat) + w4(10000 // scale, 64, repeat)
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, NumPy {np.__version__}; one thread")
    print(f"| workload | peer | kbspline (ms) | peer (ms) | ratio | target |")
    print(f"|---|---|---|---|---|---|")
    for workload, peer, ours, theirs, target in rows:
        print(f"| {workload} | {peer} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | "
              f"{theirs / ours:.1f}× | {target} |")
    return rows


if __name__ == "__main__":
    main()
