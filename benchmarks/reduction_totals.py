"""Total keys and CPU seconds of reduce_keys alone over every clip of
../shared/data/mocap and tests/data/cmu at 0.1, 0.5 and 1 cm, one thread:
the figure docs/benchmarks.md's tuning notes give for switching a cache or
constant of the reduction search (rebuild with the change, run again).

    python benchmarks/reduction_totals.py            # fitted world search
    python benchmarks/reduction_totals.py --greedy   # fit=False
"""
import argparse
import time

from kbspline import set_num_threads
from kbspline.motion import read_bvh, reduce_keys
from reduction import CLIPS


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--greedy", action="store_true", help="fit=False")
    args = parser.parse_args(argv)
    previous = set_num_threads(1)
    try:
        clips = [(read_bvh(path), unit) for path, unit in CLIPS if path.exists()]
        keys, seconds = 0, 0.0
        for clip, unit in clips:
            for cm in (0.1, 0.5, 1.0):
                start = time.process_time()
                keys += reduce_keys(clip, position_tolerance=cm / unit,
                                    fit=not args.greedy).num_keys
                seconds += time.process_time() - start
    finally:
        set_num_threads(previous)
    print(f"keys {keys}, CPU seconds {seconds:.3f}")
    return keys, seconds


if __name__ == "__main__":
    main()
