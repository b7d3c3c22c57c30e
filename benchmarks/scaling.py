"""How kbspline's costs grow with the work: keys per track, queries, and
tracks, each swept over orders of magnitude with the others fixed, in
nanoseconds per item on one thread (the median of 5 calls), and the bytes a
spline keeps per key.  A flat line is the goal; a cliff is a bug.

    python benchmarks/scaling.py                    # prints the table
    python benchmarks/scaling.py --plot scaling.png # and draws it
    python benchmarks/scaling.py --quick            # small sizes: a smoke test
"""
import argparse
import time

import numpy as np

import kbspline
from kbspline import PositionSpline, RotationSpline
from machine import describe


def median_time(call, repeat=5):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def kept_bytes(spline):
    """The arrays a spline holds, its remembered arguments (for pickling) included."""
    held = list(vars(spline).values()) + list(spline.__getstate__().values())
    return sum(v.nbytes for v in held if isinstance(v, np.ndarray))


def random_keys(rng, tracks, keys, rotation):
    if rotation:
        q = rng.normal(size=(tracks, keys, 4))
        return q / np.linalg.norm(q, axis=-1, keepdims=True)
    return rng.normal(size=(tracks, keys, 3))


def measure(kind, tracks, keys, queries, rng):
    """(build ns per key, evaluation ns per sample, kept bytes per key)."""
    cls = RotationSpline if kind == "rotation" else PositionSpline
    times = np.arange(keys, dtype=np.float64)
    values = random_keys(rng, tracks, keys, kind == "rotation")
    build = median_time(lambda: cls(times, values))
    spline = cls(times, values)
    t = rng.uniform(0, keys - 1, queries)
    out = np.empty(spline.batch_shape + (queries, values.shape[-1]))
    evaluate = median_time(lambda: spline(t, out=out))
    return (build / (tracks * keys) * 1e9, evaluate / (tracks * queries) * 1e9,
            kept_bytes(spline) / (tracks * keys))


def sweeps(quick):
    """{sweep: [(tracks, keys, queries), ...]}; quick keeps the small sizes."""
    keys = [4, 16, 64, 256, 1024, 4096, 16384, 65536, 100000]
    queries = [1, 10, 100, 1000, 10**4, 10**5, 10**6, 10**7]
    tracks = [1, 10, 100, 1000, 10**4, 10**5]
    if quick:
        keys, queries, tracks = keys[:3], queries[:3], tracks[:3]
    return {"keys per track (1 track, 10^5 random queries)": [(1, k, 10**5) for k in keys],
            "queries (1 track of 64 keys)": [(1, 64, m) for m in queries],
            "tracks (64 keys, 100 shared random queries)": [(b, 64, 100) for b in tracks]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    parser.add_argument("--plot", metavar="PNG", help="also draw the table")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    previous = kbspline.set_num_threads(1)
    results = {}
    try:
        print(describe())
        print("| sweep | kind | tracks | keys | queries | build ns/key | eval ns/sample | "
              "kept bytes/key |")
        print("|---|---|---|---|---|---|---|---|")
        for sweep, sizes in sweeps(args.quick).items():
            for kind in ("position", "rotation"):
                rows = []
                for tracks, keys, queries in sizes:
                    build, evaluate, kept = measure(kind, tracks, keys, queries, rng)
                    rows.append((tracks, keys, queries, build, evaluate, kept))
                    print(f"| {sweep.split(' (')[0]} | {kind} | {tracks} | {keys} | {queries} | "
                          f"{build:.1f} | {evaluate:.2f} | {kept:.0f} |")
                results[sweep, kind] = rows
    finally:
        kbspline.set_num_threads(previous)
    if args.plot:
        plot(results, args.plot)
    return results


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sweeps_ = list(dict.fromkeys(sweep for sweep, _ in results))
    fig, axes = plt.subplots(1, len(sweeps_), figsize=(5 * len(sweeps_), 4))
    for ax, sweep, column in zip(axes, sweeps_, (1, 2, 0)):
        for kind, style in (("position", "o-"), ("rotation", "s--")):
            rows = np.array(results[sweep, kind])
            ax.plot(rows[:, column], rows[:, 4], style, label=f"{kind}: evaluate, ns/sample")
            ax.plot(rows[:, column], rows[:, 3], style, alpha=0.5, label=f"{kind}: build, ns/key")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(sweep)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("nanoseconds per item, one thread")
    axes[0].legend(fontsize=7)
    fig.suptitle(describe(), fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
