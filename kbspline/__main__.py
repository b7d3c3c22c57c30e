"""Command line: ``python -m kbspline demo``."""
import argparse
import sys

from . import demo


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kbspline",
                                     description="Kochanek-Bartels keyframe splines.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("demo", help="the keyframed leg of Eberly's paper")
    run.add_argument("--frames", type=int, default=9, help="rows of the table (default 9)")
    run.add_argument("--plot", default="kbspline-demo.png",
                     help="where to write the PNG (default kbspline-demo.png)")
    run.add_argument("--no-plot", action="store_true", help="print the table only")
    res = commands.add_parser("resample", help="resample a BVH clip to another frame rate")
    res.add_argument("input", help="the BVH file to read")
    res.add_argument("--fps", type=float, required=True, help="frames per second to write")
    res.add_argument("-o", "--output", required=True, help="the BVH file to write")
    args = parser.parse_args(argv)

    if args.command == "resample":
        return resample_command(args)
    if args.frames < 2:
        parser.error("--frames must be at least 2")
    demo.print_table(args.frames)
    if args.no_plot:
        return 0
    if demo.plot(args.plot):
        print(f"wrote {args.plot}")
    else:
        print("matplotlib is not installed, so no plot was drawn "
              "(pip install 'kbspline[plot]' for it)")
    return 0


def resample_command(args):
    from .motion import BvhError, read_bvh, resample, write_bvh
    try:
        clip = read_bvh(args.input)
        out = resample(clip, args.fps)
        write_bvh(out, args.output)
    except (BvhError, ValueError, OSError) as exc:
        print(f"kbspline resample: {exc}", file=sys.stderr)
        return 1
    print(f"{args.input}: {clip.num_frames} frames at {1 / clip.frame_time:.4g} fps -> "
          f"{args.output}: {out.num_frames} frames at {1 / out.frame_time:.4g} fps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
