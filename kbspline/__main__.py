"""Command line: ``python -m kbspline demo``."""
import argparse
import json
import math
import os
import pathlib
import sys
import warnings

from . import __version__, demo
from ._checks import positive_float


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kbspline",
                                     description="Kochanek-Bartels keyframe splines.")
    parser.add_argument("--version", action="version", version=f"kbspline {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    subparsers = commands.choices
    run = add_command(commands, "demo", "the keyframed leg of Eberly's paper")
    run.add_argument("--frames", type=int, default=9, help="rows of the table (default 9)")
    run.add_argument("--plot", default="kbspline-demo.png",
                     help="where to write the PNG (default kbspline-demo.png)")
    run.add_argument("--no-plot", action="store_true", help="print the table only")
    res = add_command(commands, "resample", "resample a BVH clip to another frame rate")
    res.add_argument("input", help="the BVH file to read")
    res.add_argument("--fps", type=float, required=True,
                     help="frames per second to write, exactly (the clip ends at its last "
                          "whole frame)")
    res.add_argument("--keep-end", action="store_true",
                     help="keep the last frame too, with the frame time nearest 1/fps that "
                          "divides the clip")
    res.add_argument("-o", "--output", required=True, help="the BVH file to write")
    red = add_command(commands, "reduce", "keep the fewest keys within a tolerance")
    red.add_argument("input", help="the BVH file to read")
    red.add_argument("--position-tolerance", dest="position", type=float, default=None,
                     metavar="DISTANCE",
                     help="largest world-space error of any joint or End Site in any frame, "
                          "in the file's units; the local tolerances become optional caps")
    red.add_argument("--virtual-distance", dest="virtual", type=float, default=None,
                     metavar="DISTANCE",
                     help="with --position-tolerance, also measure at virtual vertices this "
                          "far along each joint's axes")
    red.add_argument("--no-fit", dest="fit", action="store_false",
                     help="keep the greedy key choice: no fitted tangents, no keys dropped "
                          "after")
    red.add_argument("--tcb", dest="fit", action="store_const", const="tcb",
                     help="deprecated, the same as the default: fitted tangents keep "
                          "fewer keys than fitted TCB did")
    red.add_argument("--angle-tolerance", "--tolerance", dest="tolerance", default=None,
                     metavar="ANGLE",
                     help="largest local rotation error of any joint in any frame, in degrees "
                          "or with a unit: 0.5, 0.5deg or 0.01rad (default 0.5 without "
                          "--position-tolerance)")
    red.add_argument("--distance-tolerance", "--distance", dest="distance", type=float,
                     default=None, metavar="DISTANCE",
                     help="largest local translation error, in the file's units (default 0.1 "
                          "without --position-tolerance)")
    red.add_argument("--from", dest="rebuild", metavar="JSON", default=None,
                     help="instead, rebuild the clip's frames from a reduction this command "
                          "wrote, into the BVH file -o names")
    red.add_argument("-o", "--output", required=True,
                     help="the JSON file to write, or a .gltf/.glb of the reduced curves "
                          "(with --from: the BVH file)")
    tra = add_command(commands, "transition", "join two clips with a squad transition")
    tra.add_argument("first", help="the clip to leave")
    tra.add_argument("second", help="the clip to arrive in")
    tra.add_argument("--frames", type=int, default=24, help="frames of transition (default 24)")
    tra.add_argument("-o", "--output", required=True, help="the BVH file to write")
    glb = add_command(commands, "gltf", "write a BVH clip as a glTF 2.0 animation")
    glb.add_argument("input", help="the BVH file to read")
    glb.add_argument("--angle-tolerance", type=positive_float, default=None, metavar="DEGREES",
                     help="how far glTF's playback of rotations may stray from the splines "
                          "(default 0.0057, i.e. 1e-4 rad)")
    glb.add_argument("--distance-tolerance", type=positive_float, default=None,
                     metavar="DISTANCE",
                     help="how far glTF's playback of translations may stray, in the output's "
                          "units after --scale (default: the angle tolerance in radians times "
                          "each channel's extent)")
    glb.add_argument("--cubic", action="store_true",
                     help="translations as exact CUBICSPLINE keys instead of LINEAR ones "
                          "(Blender does not play glTF's cubic keys as written)")
    glb.add_argument("--min-key-spacing", type=positive_float, default=None,
                     metavar="SECONDS",
                     help="closest two added keys may come (default 0.0005, what importers "
                          "keep); passing it also accepts a tolerance missed at it")
    glb.add_argument("--rate", type=positive_float, default=None, metavar="HZ",
                     help="instead of tolerances, bake rotations at this many samples a second")
    glb.add_argument("--scale", type=positive_float, default=1.0,
                     help="multiplies every length, e.g. 0.01 for centimetres to metres")
    glb.add_argument("-o", "--output", required=True, help="the .gltf or .glb file to write")
    usd = add_command(commands, "usd", "write a BVH clip as a UsdSkel animation")
    usd.add_argument("input", help="the BVH file to read")
    usd.add_argument("--angle-tolerance", type=positive_float, default=None, metavar="DEGREES",
                     help="how far USD's playback of rotations may stray from the splines "
                          "(default 0.0057, i.e. 1e-4 rad)")
    usd.add_argument("--distance-tolerance", type=positive_float, default=None,
                     metavar="DISTANCE",
                     help="how far the root's playback may stray, in the file's units "
                          "(default: the angle tolerance times the skeleton's reach)")
    usd.add_argument("--accept-miss", action="store_true",
                     help="exit 0 where playback misses the tolerance (keys would need to be "
                          "closer than 0.0005 s); the line naming the joints still shows")
    usd.add_argument("--meters-per-unit", type=positive_float, default=0.01, metavar="METERS",
                     help="the stage's metersPerUnit (default 0.01: centimetres)")
    usd.add_argument("-o", "--output", required=True, help="the .usda, .usdc or .usd file to write")
    imp = add_command(commands, "from-gltf", "write a glTF skin's animation as a BVH clip")
    imp.add_argument("input", help="the .gltf or .glb file to read")
    imp.add_argument("--animation", default=None,
                     help="the animation's name, or its index when unnamed (default: the first)")
    imp.add_argument("--fps", type=float, default=30.0, help="frames per second (default 30)")
    imp.add_argument("--skin", type=int, default=None,
                     help="which skin's skeleton (default 0, or without skins the animated "
                          "nodes and their ancestors)")
    imp.add_argument("-o", "--output", required=True, help="the BVH file to write")
    from .formats import convert as convert_
    convert_.cli_arguments(add_command(commands, "convert",
                                       "write a scene (3DS, LightWave ...) as glTF, BVH or USD"))
    for command in [*PIPELINE, "convert"]:
        subparsers[command].add_argument(
            "--force", action="store_true",
            help="write over an existing output file (never over an input)")
    args = parser.parse_args(argv)
    error = subparsers[args.command].error   # its usage line, not the top level's
    for flag, target in (("-o/--output", getattr(args, "output", None)),
                         ("--plot", getattr(args, "plot", None))):
        folder = os.path.dirname(os.path.abspath(target)) if target else None
        if folder and not os.path.isdir(folder):
            error(f"{flag}: the folder {folder} does not exist")
    if args.command in PIPELINE or args.command == "convert":
        problem = output_problem(args)
        if problem:
            error(problem)

    if args.command == "convert":
        return run_reported(args.command, convert_command, args)
    if args.command in PIPELINE:
        return run_reported(args.command, PIPELINE[args.command], args)
    if args.frames < 2:
        error("--frames must be at least 2")
    demo.print_table(args.frames)
    if args.no_plot:
        return 0
    if demo.plot(args.plot):
        print(f"wrote {args.plot}")
    else:
        print("matplotlib is not installed, so no plot was drawn "
              "(pip install 'kbspline[plot]' for it)")
    return 0


def add_command(commands, name, summary):
    """A subcommand whose help page opens with its summary."""
    return commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")


#: The extensions each command writes, the first when --from is given to reduce.
OUTPUT_SUFFIXES = {"resample": (".bvh",), "transition": (".bvh",), "from-gltf": (".bvh",),
                   "reduce": (".json", ".gltf", ".glb"), "gltf": (".gltf", ".glb"),
                   "usd": (".usda", ".usdc", ".usd"),
                   "convert": (".gltf", ".glb", ".bvh", ".usd", ".usda", ".usdc")}


def output_problem(args):
    """Why the output cannot be written, checked before any work: a wrong
    extension, one of the inputs, or an existing file without --force."""
    output = pathlib.Path(args.output)
    suffixes = (".bvh",) if getattr(args, "rebuild", None) else OUTPUT_SUFFIXES[args.command]
    if output.suffix.lower() not in suffixes:
        return (f"-o/--output: {output} should end in {' or '.join(suffixes)}, "
                f"not {output.suffix or 'no extension'}")
    inputs = [getattr(args, name, None) for name in ("input", "first", "second", "rebuild")]
    for given in filter(None, inputs):
        if output.exists() and os.path.exists(given) and os.path.samefile(given, output):
            return f"-o/--output: {output} is an input; it is never written over"
    # a missing input fails on its own (exit 1, named), writing nothing
    if output.exists() and not args.force and all(map(os.path.exists, filter(None, inputs))):
        return f"-o/--output: {output} exists (pass --force to write over it)"
    return None


def parse_angle(text):
    """Radians from '0.5deg', '0.01rad' or a bare number of degrees."""
    text = text.strip().lower()
    for unit, scale in (("deg", math.pi / 180), ("rad", 1.0), ("", math.pi / 180)):
        if text.endswith(unit):
            try:
                value = float(text[:len(text) - len(unit)] if unit else text)
            except ValueError:
                break
            if value > 0 and math.isfinite(value):
                return value * scale
            break
    raise ValueError(f"--angle-tolerance must be a positive angle such as 0.5deg or 0.01rad, "
                     f"not {text!r}")


def show_progress(label):
    """A progress callback that redraws one line on a terminal, else is silent."""
    if not sys.stderr.isatty():
        return None

    def progress(done, total):
        print(f"\r{label}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr)

    return progress


def run_reported(name, command, args):
    """Runs a pipeline command; a bad file, argument or missing extra is one
    line on stderr and exit status 1, not a traceback."""
    from .motion import BvhError
    try:
        result = command(args)
    except (BvhError, ValueError, OSError, ImportError) as exc:
        print(f"kbspline {name}: {exc}", file=sys.stderr)
        return 1
    text, missed = result if isinstance(result, tuple) else (result, None)
    print(text)
    if missed:
        line, accepted = missed
        print(f"kbspline {name}: {line}", file=sys.stderr)
        return 0 if accepted else 1
    return 0


def reduce_command(args):
    from .motion import Reduction, read_bvh, reduce_keys, write_bvh
    clip = read_bvh(args.input)
    if args.rebuild:
        with open(args.rebuild) as f:
            try:
                saved = json.load(f)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ValueError(f"{args.rebuild} is not the JSON file reduce writes "
                                 f"({exc})") from None
        reduction = Reduction.from_json(saved)
        if reduction.names != [j.name for j in clip.joints]:
            raise ValueError(f"{args.rebuild} reduces other joints than {args.input}'s")
        rotations, translations = reduction.rebuild(clip.times)
        write_bvh(clip.with_frames(rotations, translations, clip.frame_time), args.output)
        return (f"{args.rebuild}: {reduction.num_keys} keys -> {args.output}: "
                f"{clip.num_frames} frames rebuilt")
    angle, distance = args.tolerance, args.distance
    if args.position is None:
        angle, distance = angle or "0.5deg", 0.1 if distance is None else distance
    angle = None if angle is None else parse_angle(angle)
    result = reduce_keys(clip, angle, distance, position_tolerance=args.position,
                         virtual_distance=args.virtual, fit=args.fit,
                         progress=show_progress("joints" if args.position is None else "passes"))
    if pathlib.Path(args.output).suffix.lower() in (".gltf", ".glb"):
        result.to_gltf(clip, args.output)
    else:
        with open(args.output, "w") as f:
            json.dump(dict(result.to_json(), source=str(args.input)), f)
    return (f"{args.input}: {result.num_keys} keys of {len(result.names) * clip.num_frames} "
            f"joint-frames kept (ratio {result.ratio:.3f}); worst error "
            f"{math.degrees(result.max_angle.max()):.3f} deg, "
            f"{result.max_distance.max():.4g} units local, "
            f"{result.max_position.max():.4g} units in world space -> {args.output}")


def transition_command(args):
    from .motion import read_bvh, transition, write_bvh
    first, second = read_bvh(args.first), read_bvh(args.second)
    try:
        out = transition(first, second, args.frames)
    except ValueError as exc:
        raise ValueError(f"{args.first} -> {args.second}: {exc}") from None
    write_bvh(out, args.output)
    return (f"{args.first} ({first.num_frames} frames) + {args.frames} transition frames + "
            f"{args.second} ({second.num_frames}) -> {args.output}: {out.num_frames} frames")


def gltf_command(args):
    from .motion import motion_to_gltf, read_bvh
    try:
        import pygltflib  # noqa: F401
    except ImportError:
        raise ImportError("needs pygltflib (pip install 'kbspline[gltf]')") from None
    from .formats.adaptive import MIN_KEY_SPACING
    clip = read_bvh(args.input)
    angle = None if args.angle_tolerance is None else math.radians(args.angle_tolerance)
    if args.cubic and args.distance_tolerance is not None:
        raise ValueError("give --cubic or --distance-tolerance, not both")
    spacing = args.min_key_spacing or MIN_KEY_SPACING
    with warnings.catch_warnings():   # the misses are reported below, in one line
        warnings.filterwarnings("ignore", "glTF's playback misses the tolerance")
        report = motion_to_gltf(clip, args.output, angle_tolerance=angle,
                                distance_tolerance=args.distance_tolerance, rate=args.rate,
                                scale=args.scale, cubic=args.cubic, min_key_spacing=spacing)
    text = (f"{args.input}: {len(clip.joints)} joints, {clip.num_frames} frames -> "
            f"{args.output}: {sum(report.key_counts.values())} keys")
    rotations = [(e, node) for (node, path), e in report.max_error.items() if path == "rotation"]
    if rotations:
        error, node = max(rotations)
        text += f"; largest rotation error of playback {math.degrees(error):.4f} deg ({node})"
    hint = (f"keys would need to be closer than --min-key-spacing {spacing:g} s",
            "pass a smaller one if your importer keeps closer keys, or this one to accept "
            "the miss")
    return text, missed_line(report, hint, args.min_key_spacing is not None)


def missed_line(report, hint, accepted):
    """(One line naming the channels whose playback misses its tolerance, in
    degrees and the output's units, whether that is accepted), or None.
    `hint`: (why it was missed, which option accepts it)."""
    from .formats.report import missed_channels
    if not getattr(report, "missed", {}):
        return None
    parts = missed_channels(report, units=" units", compare=True)
    line = (f"playback misses the tolerance on {len(report.missed)} channel(s): {parts} "
            f"({hint[0]}; ")
    return (line + "accepted)", True) if accepted else (line + hint[1] + ")", False)


def resample_command(args):
    from .motion import read_bvh, resample, write_bvh
    clip = read_bvh(args.input)
    out = resample(clip, args.fps, keep_end=args.keep_end)
    write_bvh(out, args.output)
    return (f"{args.input}: {clip.num_frames} frames at {1 / clip.frame_time:.4g} fps -> "
            f"{args.output}: {out.num_frames} frames at {1 / out.frame_time:.4g} fps")


def usd_command(args):
    from .motion import read_bvh
    try:
        from .formats.usd import motion_to_usd
        import pxr  # noqa: F401
    except ImportError:
        raise ImportError("needs usd-core (pip install 'kbspline[usd]')") from None
    clip = read_bvh(args.input)
    angle = None if args.angle_tolerance is None else math.radians(args.angle_tolerance)
    with warnings.catch_warnings():   # the misses are reported below, in one line
        warnings.filterwarnings("ignore", ".*UsdSkel's playback misses the tolerance")
        report = motion_to_usd(clip, args.output, angle_tolerance=angle,
                               distance_tolerance=args.distance_tolerance,
                               meters_per_unit=args.meters_per_unit)
    text = (f"{args.input}: {len(clip.joints)} joints, {clip.num_frames} frames -> "
            f"{args.output}: {len(report.times)} samples; largest rotation error of playback "
            f"{math.degrees(report.max_angle.max()):.4f} deg, of the root "
            f"{report.max_distance:.3g} units")
    hint = ("keys would need to be closer than 0.0005 s, or more precision than float32 "
            "holds", "--accept-miss accepts it")
    return text, missed_line(report, hint, args.accept_miss)


def convert_command(args):
    from .formats.convert import cli_run
    text, report = cli_run(args)
    hint = ("keys would need to be closer than 0.0005 s", "--accept-miss accepts it")
    return text, missed_line(report, hint, args.accept_miss)


def from_gltf_command(args):
    from .formats.gltf import read_gltf
    from .motion import write_bvh
    scene = read_gltf(args.input)
    if not scene.animations:
        raise ValueError(f"{args.input} has no animations")
    animation = args.animation if args.animation is not None else next(iter(scene.animations))
    clip = scene.to_motion(animation, args.fps, args.skin)
    write_bvh(clip, args.output)
    return (f"{args.input}: animation {animation!r}, {len(clip.joints)} joints -> "
            f"{args.output}: {clip.num_frames} frames at {args.fps:g} fps")


PIPELINE = {"resample": resample_command, "reduce": reduce_command,
            "transition": transition_command, "gltf": gltf_command, "usd": usd_command,
            "from-gltf": from_gltf_command}


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader stopped early, as `| head` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
