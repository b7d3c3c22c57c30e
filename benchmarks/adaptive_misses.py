"""Channels whose glTF / USD playback misses its tolerance, and what the
adaptive LINEAR keys cost, on the CMU clips of tests/data/cmu and (when
present) the clips of ../shared/data/mocap:

    PYTHONPATH=$PWD python benchmarks/adaptive_misses.py

For each clip and tolerance setting: channels missed, the worst error over
its tolerance, total keys (glTF: summed over channels; USD: shared sample
times) and wall seconds of the export.
"""
import pathlib
import sys
import tempfile
import time
import warnings

from kbspline.formats.gltf import motion_to_gltf
from kbspline.formats.usd import motion_to_usd
from kbspline.motion import read_bvh

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLIPS = [ROOT / "tests/data/cmu/131_01.bvh", ROOT / "tests/data/cmu/131_03.bvh",
         *sorted((ROOT.parent / "shared/data/mocap").glob("*.bvh"))]
SETTINGS = [("default", {}), ("angle 1e-5", {"angle_tolerance": 1e-5}),
            ("angle 1e-3", {"angle_tolerance": 1e-3}), ("distance 1e-3", {"distance_tolerance": 1e-3})]


def gltf_row(clip, options):
    start = time.perf_counter()
    report = motion_to_gltf(clip, **options)
    seconds = time.perf_counter() - start
    ratios = [report.max_error[key] / report.tolerances[key] for key in report.tolerances]
    return ratios, sum(report.key_counts.values()), seconds


def usd_row(clip, options, folder):
    start = time.perf_counter()
    report = motion_to_usd(clip, folder / f"{time.monotonic_ns()}.usda", **options)
    seconds = time.perf_counter() - start
    ratios = [report.max_error[key] / report.tolerances[key] for key in report.max_error]
    return ratios, len(report.times), seconds


def main():
    print("| clip | setting | format | missed | worst / tolerance | keys | seconds |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for path in (p for p in CLIPS if p.exists()):
            clip = read_bvh(path)
            for label, options in SETTINGS:
                for name, row in (("glTF", lambda: gltf_row(clip, options)),
                                  ("USD", lambda: usd_row(clip, options, pathlib.Path(folder)))):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        ratios, keys, seconds = row()
                    missed = sum(r > 1 + 1e-6 for r in ratios)
                    print(f"| {path.stem} | {label} | {name} | {missed} | {max(ratios):.3g} "
                          f"| {keys} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
