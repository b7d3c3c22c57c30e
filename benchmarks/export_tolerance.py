"""Keys against accuracy of linear playback (glTF, USD) on the clips of
../shared/data/mocap: for each clip, the worst error of baking every frame,
and for each tolerance the keys per joint and frame that
kbspline.formats.adaptive.linear_keys places, the error measured densely
on them, and the time it took:

    python benchmarks/export_tolerance.py            # tolerances 1e-2 .. 1e-5 rad
    python benchmarks/export_tolerance.py 1e-4 1e-3  # these tolerances

Times are CPU seconds (the machine may be shared).
"""
import pathlib
import sys
import time

import numpy as np

from kbspline import RotationSpline
from kbspline.formats.adaptive import linear_keys, playback_error
from kbspline.motion import read_bvh

MOCAP = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"


def main(tolerances):
    clips = sorted(MOCAP.glob("*.bvh"))
    if not clips:
        sys.exit(f"no BVH clips in {MOCAP}: put ../shared/data/mocap beside the checkout")
    print("clip   frames joints | baked: worst error (deg) | tolerance (rad): keys per joint "
          "and frame, measured error (rad), CPU s")
    for path in clips:
        clip = read_bvh(path)
        spline = RotationSpline(clip.times, clip.rotations())
        joints = len(clip.joints)
        baked = playback_error(spline, [clip.times] * joints).max()
        cells = []
        for tolerance in tolerances:
            cpu = time.process_time()
            keys = linear_keys(spline, tolerance)
            cost = time.process_time() - cpu
            per_frame = sum(map(len, keys)) / joints / clip.num_frames
            cells.append(f"{tolerance:g}: {per_frame:.2f}, {playback_error(spline, keys).max():.2g}, "
                         f"{cost:.2f}")
        name = path.stem.split("_")[1]
        print(f"{name:6} {clip.num_frames:6} {joints:6} | {np.degrees(baked):6.3f} | "
              + " | ".join(cells))


if __name__ == "__main__":
    main([float(x) for x in sys.argv[1:]] or [1e-2, 1e-3, 1e-4, 1e-5])
