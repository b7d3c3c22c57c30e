"""Keys kept against worst world-space error, per clip and tolerance, for
three ways to reduce a clip's keys:

- local: the first round's method, per-joint angle and distance tolerances
  with greedy keys (``reduce_keys(clip, angle, distance, fit=False)``), the
  angle bisected to the largest whose worst world error stays within the
  tolerance (the distance tolerance half of it);
- uniform: every k-th frame (and the last) through the same splines, the
  largest k within the tolerance;
- world greedy: ``reduce_keys(clip, position_tolerance=..., fit=False)``;
- world fitted: ``reduce_keys(clip, position_tolerance=...)``, each key's
  tangent fitted (the default);
- Blender decimate, with ``--blender``: Blender's Graph Editor Decimate
  (error margin) on the imported Euler F-curves, the margin with the fewest
  keys whose worst error over every bone's head and tail stays within the
  tolerance, from a sweep of 17 margins (benchmarks/blender_decimate.py, run
  by a Python that has ``bpy``; see tests/test_blender_interop.py).

    python benchmarks/reduction.py            # every clip, 0.1, 0.5 and 1 cm
    python benchmarks/reduction.py --quick    # the shortest clip, 1 cm
    python benchmarks/reduction.py --blender [PYTHON]   # and Blender's rows
    python benchmarks/reduction.py --threads 2    # joints on two threads
    python benchmarks/reduction.py --scaling      # seconds against frames


The clips: ../shared/data/mocap (30 Hz, centimetres) and tests/data/cmu
(120 Hz CMU mocap, units of 5.644 cm). The ratio is joint-frames per key
kept; MB/s is the clip's float32 channel data over the method's seconds
(one reduction, the best of three for world greedy and world fitted,
which take a tenth of a second or less and so show a busy machine most;
the whole search for local and uniform), on one thread unless --threads
says otherwise.
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import time

import numpy as np

from kbspline import _kbspline as _core, set_num_threads
from kbspline.motion import Motion, Reduction, read_bvh, reduce_keys
from kbspline.motion.world_error import vertex_positions

HERE = pathlib.Path(__file__).resolve().parent
CLIPS = ([(p, 1.0) for p in sorted((HERE.parents[1] / "shared" / "data" / "mocap").glob("*.bvh"))]
         + [(p, 5.644) for p in sorted((HERE.parent / "tests" / "data" / "cmu").glob("*.bvh"))])
REPEATS = 3  # world greedy and world fitted timed the best of this many runs


def world_error(clip, reduction, truth):
    rebuilt, _ = vertex_positions(clip, *reduction.rebuild(clip.times))
    return float(np.linalg.norm(rebuilt - truth, axis=-1).max())


def local(clip, tolerance, truth):
    """The fewest keys of the local mode within `tolerance` in world space."""
    low, high, best = np.radians(1e-4), np.radians(20.0), None
    for _ in range(10):
        angle = np.sqrt(low * high)
        result = reduce_keys(clip, angle, tolerance / 2, fit=False)
        if world_error(clip, result, truth) <= tolerance:
            low, best = angle, result
        else:
            high = angle
    return best


def uniform(clip, tolerance, truth):
    """The fewest keys of every-k-th-frame within `tolerance`."""
    rotations, translations = clip.rotations(), clip.translations()
    best, F = None, clip.num_frames
    for step in range(1, F):
        keys = np.unique(np.append(np.arange(0, F, step), F - 1))
        J = len(clip.joints)
        result = Reduction([j.name for j in clip.joints], clip.frame_time, F, [keys] * J,
                           [rotations[j][keys] for j in range(J)],
                           [translations[j][keys] for j in range(J)], np.zeros(J), np.zeros(J))
        if world_error(clip, result, truth) > tolerance:
            break
        best = result
    return best


BLENDER_MARGINS = np.logspace(-5, -1, 17)


def greedy_seconds(clip, repeats=5):
    """Seconds of kb_reduce_greedy alone on every joint (the best of
    `repeats`), at 0.002 rad and 0.01 units: the selection's own speed."""
    times = []
    rotations, translations = clip.rotations(), clip.translations()
    tolerances = np.full(len(clip.joints), 0.002), np.full(len(clip.joints), 0.01)
    for _ in range(repeats):
        start = time.perf_counter()
        _core.reduce_greedy(clip.times, rotations, translations, *tolerances)
        times.append(time.perf_counter() - start)
    return min(times)


def scaling(path=HERE.parent / "tests" / "data" / "cmu" / "131_01.bvh", cm_per_unit=5.644,
            plays=(1, 2, 4, 8), first=None):
    """Seconds of each reduction against frames: the clip (its `first`
    frames) played forwards and backwards in turn, `plays` times (no jump
    at the joins)."""
    clip = read_bvh(path)
    clip = Motion(clip.joints, clip.frame_time, clip.frames[:first])
    methods = {"local, 0.002 rad and 0.01 units": dict(angle_tolerance=0.002,
                                                      distance_tolerance=0.01, fit=False),
               "world greedy, 0.1 cm": dict(position_tolerance=0.1 / cm_per_unit, fit=False),
               "world fitted, 0.1 cm": dict(position_tolerance=0.1 / cm_per_unit)}
    print("| frames | method | ratio | seconds | MB/s |")
    print("|---|---|---|---|---|")
    rows = []
    for times in plays:
        frames = np.concatenate([clip.frames[::(-1) ** k] for k in range(times)])
        motion = Motion(clip.joints, clip.frame_time, frames)
        for name, arguments in methods.items():
            start = time.perf_counter()
            result = reduce_keys(motion, **arguments)
            seconds = time.perf_counter() - start
            rows.append((len(frames), name, seconds))
            print(f"| {len(frames)} | {name} | {1 / result.ratio:.2f}:1 | {seconds:.2f} | "
                  f"{frames.size * 4 / 1e6 / seconds:.3f} |", flush=True)
    return rows


def blender_decimations(python, path):
    """Blender's decimation of the clip at each of BLENDER_MARGINS."""
    done = subprocess.run([python, str(HERE / "blender_decimate.py"), str(path),
                           *map(repr, map(float, BLENDER_MARGINS))],
                          capture_output=True, text=True, timeout=3600)
    runs = [json.loads(line[len("DECIMATE"):]) for line in done.stdout.splitlines()
            if line.startswith("DECIMATE")]
    if done.returncode or len(runs) != len(BLENDER_MARGINS):
        raise SystemExit(f"Blender failed on {path.name}:\n{done.stderr[-2000:]}")
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the shortest clip, 1 cm")
    parser.add_argument("--blender", nargs="?", metavar="PYTHON",
                        const=os.environ.get("KBSPLINE_BLENDER_PYTHON",
                                             "/tmp/bpy-venv/bin/python"),
                        help="also Blender's Decimate, run by PYTHON, which has bpy")
    parser.add_argument("--threads", type=int, default=1, help="threads (default 1)")
    parser.add_argument("--scaling", action="store_true",
                        help="seconds against frames: the 120 Hz walk played 1, 2, 4, 8 times")
    args = parser.parse_args(argv)
    previous = set_num_threads(args.threads)
    try:
        return run(args)
    finally:
        set_num_threads(previous)


def run(args):
    print(f"{args.threads} thread(s)")
    if args.scaling:
        return scaling()
    clips = [c for c in CLIPS if c[0].exists()]
    if not clips:
        raise SystemExit("no clips: ../shared/data/mocap and tests/data/cmu are both missing")
    if args.quick:
        clips = [min(clips, key=lambda c: c[0].stat().st_size)]
    rows = []
    print("| clip | fps | tolerance | method | ratio | worst error | seconds | MB/s |")
    print("|---|---|---|---|---|---|---|---|")
    for path, cm_per_unit in clips:
        clip = read_bvh(path)
        truth, _ = vertex_positions(clip, clip.rotations(), clip.translations())
        megabytes = clip.frames.size * 4 / 1e6
        blender = blender_decimations(args.blender, path) if args.blender else []
        print(f"| {path.stem} | {1 / clip.frame_time:.0f} | 0.002 rad, 0.01 units | greedy "
              f"selection alone (C) | | | | {megabytes / greedy_seconds(clip):.3f} |")
        for cm in ([1.0] if args.quick else [0.1, 0.5, 1.0]):
            tolerance = cm / cm_per_unit
            methods = {"local": lambda: local(clip, tolerance, truth),
                       "uniform": lambda: uniform(clip, tolerance, truth),
                       "world greedy": lambda: reduce_keys(clip, position_tolerance=tolerance,
                                                           fit=False),
                       "world fitted": lambda: reduce_keys(clip, position_tolerance=tolerance)}
            for name, method in methods.items():
                seconds = math.inf
                for _ in range(REPEATS if name in ("world greedy", "world fitted") else 1):
                    start = time.perf_counter()
                    result = method()
                    seconds = min(seconds, time.perf_counter() - start)
                error = world_error(clip, result, truth) * cm_per_unit
                ratio = len(clip.joints) * clip.num_frames / result.num_keys
                rows.append((path.stem, cm, name, ratio, error))
                print(f"| {path.stem} | {1 / clip.frame_time:.0f} | {cm} cm | {name} | "
                      f"{ratio:.2f}:1 | {error:.3f} cm | {seconds:.2f} | "
                      f"{megabytes / seconds:.3f} |", flush=True)
            within = [r for r in blender if r["error"] * cm_per_unit <= cm]
            if within:
                best = min(within, key=lambda r: r["joint_keys"])
                ratio = best["joints"] * best["frames"] / best["joint_keys"]
                per_curve = best["fcurves"] * best["frames"] / best["keys"]
                rows.append((path.stem, cm, "blender decimate", ratio,
                             best["error"] * cm_per_unit))
                print(f"| {path.stem} | {1 / clip.frame_time:.0f} | {cm} cm | blender decimate "
                      f"(margin {best['margin']:.2g}) | {ratio:.2f}:1 ({per_curve:.2f}:1 per "
                      f"F-curve) | {best['error'] * cm_per_unit:.3f} cm | "
                      f"{best['seconds']:.2f} | {megabytes / best['seconds']:.3f} |", flush=True)
    return rows


if __name__ == "__main__":
    main()
