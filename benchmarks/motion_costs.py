"""Memory and time of kbspline.motion's find_cycle and reduce_keys against
clip length, on the walk clip of ../shared/data/mocap:

    python benchmarks/motion_costs.py cycle              # 1064 frames (resampled walk)
    python benchmarks/motion_costs.py cycle 20000        # tiled and perturbed walk
    python benchmarks/motion_costs.py reduce 195 390 780 1560   # 0.01 deg, 0.01 units

Run it with PYTHONPATH at another checkout to measure that one.  Times are
wall and CPU (this machine is shared, so CPU time is the steadier); find_cycle's
memory is tracemalloc's peak.
"""
import pathlib
import sys
import time
import tracemalloc

import numpy as np

from kbspline.motion import Motion, find_cycle, read_bvh, reduce_keys, resample

WALK = (pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"
        / "bandai-namco-1_walk_normal_001.bvh")


def tiled(clip, frames, seed=0):
    """The clip repeated to `frames` frames, every channel perturbed by a
    normal 0.5 (degrees or units) so no two frames are equal."""
    data = np.tile(clip.frames, (-(-frames // clip.num_frames), 1))[:frames]
    data = data + np.random.default_rng(seed).normal(0, 0.5, data.shape)
    return Motion(clip.joints, clip.frame_time, data)


def timed(call, memory):
    """call()'s result and its cost; tracing memory slows Python code, so
    only when asked."""
    if memory:
        tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    cost = f"{time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU"
    if memory:
        cost += f", peak {tracemalloc.get_traced_memory()[1] / 2**20:.1f} MiB"
        tracemalloc.stop()
    return result, cost


def main(what, sizes):
    walk = read_bvh(WALK)
    if what == "cycle":
        for frames in sizes or [1064]:
            clip = (resample(walk, (frames - 1) / walk.times[-1]) if frames < 5000
                    else tiled(walk, frames))
            result, cost = timed(lambda: find_cycle(clip), memory=True)
            print(f"find_cycle, {clip.num_frames} frames: {result}; {cost}", flush=True)
    elif what == "reduce":
        for frames in sizes or [195, 390, 780, 1560]:
            clip = tiled(walk, frames) if frames > walk.num_frames else walk
            result, cost = timed(lambda: reduce_keys(clip, np.radians(0.01), 0.01), memory=False)
            print(f"reduce_keys at 0.01 deg, {frames} frames: {result.num_keys} keys; {cost}",
                  flush=True)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "", [int(n) for n in sys.argv[2:]])
