"""The command line keeps its word (issue 50): it never writes over an input,
refuses an existing output without --force, checks the output's extension
before any work, and answers bad arguments in the user's words."""
import pathlib

import numpy as np
import pytest

from kbspline.__main__ import main
from kbspline.motion import Joint, Motion, read_bvh, resample, write_bvh

CMU = pathlib.Path(__file__).resolve().parent / "data" / "cmu"


@pytest.fixture
def clip_file(tmp_path):
    """A 195-frame two-joint clip at 30 Hz with the frame time a BVH file holds."""
    joints = [Joint("hip", -1, (0.0, 0.0, 0.0),
                    ["Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"]),
              Joint("knee", 0, (0.0, -4.0, 0.0), ["Zrotation", "Xrotation", "Yrotation"],
                    end_site=(0.0, -4.0, 0.0))]
    t = np.arange(195)[:, None] / 30
    frames = np.hstack([np.sin(t + [0, 1, 2]), 20 * np.sin(2 * t + [0, 1, 2]),
                        30 * np.cos(3 * t + [0, 1, 2])])
    path = tmp_path / "walk.bvh"
    write_bvh(Motion(joints, 0.0333333, frames), path)
    return path


def run(capsys, *argv):
    """(exit status, stdout, stderr) of the command line, in this process."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_never_writes_over_an_input_even_with_force(capsys, clip_file, tmp_path):
    before = clip_file.read_bytes()
    out60 = tmp_path / "walk60.bvh"
    write_bvh(read_bvh(clip_file), out60)
    # the arguments swapped, as in the issue: the original is an existing output
    status, _, err = run(capsys, "resample", "--fps", 60, "-o", clip_file, out60)
    assert status == 2 and "walk.bvh exists (pass --force" in err, err
    for extra in ([], ["--force"]):
        status, _, err = run(capsys, "resample", clip_file, "--fps", 60, "-o", clip_file, *extra)
        assert status == 2 and "is an input; it is never written over" in err, err
    first = tmp_path / "a.bvh"
    write_bvh(read_bvh(clip_file), first)
    status, _, err = run(capsys, "transition", first, clip_file, "-o", clip_file, "--force")
    assert status == 2 and "is an input" in err
    via_link = tmp_path / "link.bvh"   # the same file by another name
    via_link.symlink_to(clip_file)
    status, _, err = run(capsys, "resample", clip_file, "--fps", 60, "-o", via_link, "--force")
    assert status == 2 and "is an input" in err
    assert clip_file.read_bytes() == before


def test_existing_output_needs_force(capsys, clip_file, tmp_path):
    out = tmp_path / "out.bvh"
    out.write_text("keep me")
    status, _, err = run(capsys, "resample", clip_file, "--fps", 60, "-o", out)
    assert status == 2 and "exists (pass --force" in err
    assert out.read_text() == "keep me"
    status, _, _ = run(capsys, "resample", clip_file, "--fps", 60, "-o", out, "--force")
    assert status == 0 and read_bvh(out).num_frames == 389


@pytest.mark.parametrize("command, extra, output", [
    ("gltf", [], "walk.fbx"), ("resample", ["--fps", "60"], "walk.txt"),
    ("reduce", [], "keys.txt"), ("usd", [], "walk.glb"), ("reduce", [], "keys"),
])
def test_output_extension_is_checked_before_the_work(capsys, clip_file, tmp_path, command,
                                                     extra, output, monkeypatch):
    import kbspline.__main__ as cli
    monkeypatch.setattr(cli, "PIPELINE", {name: None for name in cli.PIPELINE})  # no work
    status, _, err = run(capsys, command, clip_file, *extra, "-o", tmp_path / output)
    assert status == 2 and f"python -m kbspline {command}: error: -o/--output" in err, err
    assert not (tmp_path / output).exists()


def test_reduce_from_rebuilds_only_into_bvh(capsys, clip_file, tmp_path):
    status, _, err = run(capsys, "reduce", clip_file, "--from", clip_file, "-o",
                         tmp_path / "x.json")
    assert status == 2 and "should end in .bvh" in err


def test_resample_30_to_60_keeps_the_last_frame(clip_file):
    """194 frame times of 0.0333333 s are 387.9992 frames at 60 Hz: 388 steps."""
    clip = read_bvh(clip_file)
    out = resample(clip, 60)
    assert out.num_frames == 389
    np.testing.assert_array_equal(out.frames[-1], clip.frames[-1])
    assert out.frame_time == 1 / 60
    # a duration clearly short of a whole frame still ends at the last whole one
    short = Motion(clip.joints, 0.0333, clip.frames)
    assert resample(short, 60).num_frames == int(194 * 0.0333 * 60) + 1


def test_reduce_from_a_file_that_is_not_json_names_it(capsys, clip_file, tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text("these are not keys\n")
    status, _, err = run(capsys, "reduce", clip_file, "--from", bad, "-o", tmp_path / "r.bvh")
    assert status == 1 and str(bad) in err and "not the JSON file reduce writes" in err


@pytest.mark.parametrize("command", ["gltf", "usd"])
def test_negative_angle_tolerance_is_answered_in_the_users_words(capsys, clip_file, tmp_path,
                                                                 command):
    suffix = ".glb" if command == "gltf" else ".usda"
    status, _, err = run(capsys, command, clip_file, "--angle-tolerance", "-1",
                         "-o", tmp_path / ("out" + suffix))
    assert status == 2
    assert "--angle-tolerance: must be a positive number, not '-1'" in err
    assert "angle_tolerance" not in err and "rad" not in err


def test_missing_output_folder_shows_the_subcommands_usage(capsys, clip_file, tmp_path):
    status, _, err = run(capsys, "resample", clip_file, "--fps", 60,
                         "-o", tmp_path / "absent" / "out.bvh")
    assert status == 2
    assert err.startswith("usage: python -m kbspline resample")
    assert "does not exist" in err


def test_a_binary_file_is_not_a_bvh_file(capsys, tmp_path):
    glb = tmp_path / "walk.glb"
    glb.write_bytes(b"glTF\x02\x00\x00\x00\xcd\xcd" + bytes(range(256)))
    status, _, err = run(capsys, "resample", glb, "--fps", 60, "-o", tmp_path / "out.bvh")
    assert status == 1 and "not a BVH file" in err and "UTF-8" not in err


@pytest.mark.parametrize("command", ["demo", "resample", "reduce", "transition", "gltf", "usd",
                                     "from-gltf", "convert"])
def test_subcommand_help_has_a_description_and_plain_metavars(capsys, command):
    status, out, _ = run(capsys, command, "--help")
    assert status == 0
    description = out.split("\n\n")[1]
    assert not description.startswith(("positional", "options")) and description.endswith(".")
    assert "_TOLERANCE" not in out


def test_the_shipped_clip_resamples(capsys, tmp_path):
    """The README's resample example on a file every clone has."""
    out = tmp_path / "walk60.bvh"
    status, text, _ = run(capsys, "resample", CMU / "131_01.bvh", "--fps", 60, "-o", out)
    assert status == 0 and "994 frames at 120 fps" in text and "497 frames at 60 fps" in text


def test_from_gltf_reads_back_what_gltf_wrote(capsys, clip_file, tmp_path):
    """gltf writes a skin for the skeleton, so from-gltf finds it; the
    joints come back where the clip puts them (within the export's
    tolerances, here 1e-6 rad and 1e-6 units)."""
    pytest.importorskip("pygltflib")
    from kbspline.motion import world_positions
    glb, back = tmp_path / "walk.glb", tmp_path / "back.bvh"
    status, _, err = run(capsys, "gltf", clip_file, "-o", glb, "--angle-tolerance",
                         np.degrees(1e-6), "--distance-tolerance", 1e-6)
    assert status == 0, err
    status, text, err = run(capsys, "from-gltf", glb, "--fps", 30, "-o", back)
    assert status == 0, err
    clip, again = read_bvh(clip_file), read_bvh(back)
    assert [j.name for j in again.joints] == [j.name for j in clip.joints]
    assert again.num_frames == clip.num_frames
    want, _ = world_positions(clip)
    got, _ = world_positions(again)
    np.testing.assert_allclose(got, want, atol=1e-3)


def test_from_gltf_without_a_skin_uses_the_node_hierarchy(capsys, clip_file, tmp_path):
    gl = pytest.importorskip("pygltflib")
    glb, back = tmp_path / "walk.glb", tmp_path / "back.bvh"
    assert run(capsys, "gltf", clip_file, "-o", glb)[0] == 0
    doc = gl.GLTF2().load(str(glb))
    doc.skins = []
    doc.save(str(glb))
    status, _, err = run(capsys, "from-gltf", glb, "-o", back)
    assert status == 0, err
    assert [j.name for j in read_bvh(back).joints] == ["hip", "knee"]


@pytest.fixture
def fast_turn(tmp_path):
    """Two joints; the knee turns 60 degrees in one 10 ms frame, faster than
    keys 0.5 ms apart can follow within 1e-4 rad."""
    joints = [Joint("hip", -1, (0.0, 0.0, 0.0),
                    ["Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"]),
              Joint("knee", 0, (0.0, -4.0, 0.0), ["Zrotation", "Xrotation", "Yrotation"],
                    end_site=(0.0, -4.0, 0.0))]
    frames = np.zeros((4, 9))
    frames[:, 0] = [0.0, 1.0, 2.0, 3.0]
    frames[:, 6] = [0.0, 0.0, 60.0, 60.0]
    path = tmp_path / "fast.bvh"
    write_bvh(Motion(joints, 0.01, frames), path)
    return path


def test_gltf_missed_tolerance_is_one_line_and_exit_1(capsys, fast_turn, tmp_path):
    status, out, err = run(capsys, "gltf", fast_turn, "-o", tmp_path / "a.glb")
    assert status == 1 and "largest rotation error" in out
    (line,) = err.splitlines()
    assert line.startswith("kbspline gltf: playback misses the tolerance on 1 channel(s): knee ")
    assert " deg > 0.00573 deg" in line and "--min-key-spacing 0.0005 s" in line
    assert "rad" not in line and "Warning" not in line
    # the same spacing passed: the miss is accepted, said, and exit 0
    status, _, err = run(capsys, "gltf", fast_turn, "-o", tmp_path / "b.glb",
                         "--min-key-spacing", "0.0005")
    assert status == 0 and "accepted" in err
    # keys allowed closer meet the tolerance: nothing to say
    status, out, err = run(capsys, "gltf", fast_turn, "-o", tmp_path / "c.glb",
                           "--min-key-spacing", "1e-6")
    assert status == 0 and not err
    assert float(out.split("playback ")[1].split(" deg")[0]) <= 0.00573


def test_gltf_translations_are_linear_by_default_cubic_on_request(capsys, clip_file, tmp_path):
    gl = pytest.importorskip("pygltflib")

    def interpolation(path):
        doc = gl.GLTF2().load(str(path))
        hip = [n.name for n in doc.nodes].index("hip")
        animation = doc.animations[0]
        (channel,) = [c for c in animation.channels
                      if c.target.node == hip and c.target.path == "translation"]
        return animation.samplers[channel.sampler].interpolation

    assert run(capsys, "gltf", clip_file, "-o", tmp_path / "a.glb")[0] == 0
    assert interpolation(tmp_path / "a.glb") == "LINEAR"
    assert run(capsys, "gltf", clip_file, "-o", tmp_path / "b.glb", "--cubic")[0] == 0
    assert interpolation(tmp_path / "b.glb") == "CUBICSPLINE"
    status, _, err = run(capsys, "gltf", clip_file, "-o", tmp_path / "c.glb", "--cubic",
                         "--distance-tolerance", "0.1")
    assert status == 1 and "--cubic or --distance-tolerance" in err


def test_usd_missed_tolerance_is_one_line_and_exit_1(capsys, fast_turn, tmp_path):
    pytest.importorskip("pxr")
    status, _, err = run(capsys, "usd", fast_turn, "-o", tmp_path / "a.usda")
    assert status == 1
    (line,) = err.splitlines()
    assert line.startswith("kbspline usd: playback misses the tolerance on ")
    assert "knee " in line and " deg > 0.00573 deg" in line and "--accept-miss" in line
    status, _, err = run(capsys, "usd", fast_turn, "-o", tmp_path / "b.usda", "--accept-miss")
    assert status == 0 and err.rstrip().endswith("accepted)")


@pytest.mark.parametrize("suffix", [".glb", ".usda"])
def test_convert_missed_tolerance_is_one_line_and_exit_1(capsys, tmp_path, suffix):
    if suffix == ".usda":
        pytest.importorskip("pxr")
    joints = [Joint("hip", -1, (0.0, 0.0, 0.0), ["Zrotation", "Xrotation", "Yrotation"],
                    end_site=(0.0, -4.0, 0.0))]
    frames = np.zeros((20, 3))
    frames[10:, 0] = 60.0           # 60 degrees in one 10 ms frame
    clip = tmp_path / "turn.bvh"
    write_bvh(Motion(joints, 0.01, frames), clip)
    convert = ("convert", clip, "--fps", "100", "-o")
    status, _, err = run(capsys, *convert, tmp_path / f"a{suffix}")
    assert status == 1
    (line,) = err.splitlines()
    assert line.startswith("kbspline convert: playback misses the tolerance on ")
    assert "hip " in line and " deg > 0.00573 deg" in line and "--accept-miss" in line
    status, _, err = run(capsys, *convert, tmp_path / f"b{suffix}", "--accept-miss")
    assert status == 0 and err.rstrip().endswith("accepted)")


def test_a_missing_input_is_named_even_when_the_output_exists(capsys, tmp_path):
    out = tmp_path / "out.bvh"
    out.write_text("keep me")
    status, _, err = run(capsys, "resample", tmp_path / "absent.bvh", "--fps", 60, "-o", out)
    assert status == 1 and "absent.bvh" in err and out.read_text() == "keep me"


def test_deprecated_tcb_flag_warns_and_fits_tangents(capsys, clip_file, tmp_path):
    """--tcb says it is deprecated (as fit='tcb' does), then runs the default."""
    out = tmp_path / "keys.json"
    with pytest.warns(DeprecationWarning, match="fit='tcb' is deprecated"):
        status, _, err = run(capsys, "reduce", clip_file, "--tcb", "-o", out)
    assert status == 0, err
    assert "rotation_tangents" in out.read_text()
