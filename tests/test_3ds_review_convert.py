"""convert's arguments (review of issue 52): it never writes over its input,
and a bad tolerance is one line naming the flag, exit status 1."""
import os

import numpy as np
import pytest

from kbspline.__main__ import main
from kbspline.formats.convert import convert
from threeds_writer import random_scene, write_3ds


def scene_file(tmp_path):
    nodes, objects = random_scene(np.random.default_rng(9), n_objects=2)
    for node in nodes:
        for track in node["tracks"].values():
            track["flags"] = 0
    path = tmp_path / "scene.3ds"
    path.write_bytes(write_3ds(nodes, objects=objects))
    return path


@pytest.mark.parametrize("suffix", [".bvh", ".glb"])
@pytest.mark.parametrize("alias", ["same", "dotted", "link"])
def test_never_writes_over_its_input(tmp_path, suffix, alias, capsys):
    with pytest.warns(UserWarning):
        convert(scene_file(tmp_path), tmp_path / f"first{suffix}")
    source = tmp_path / f"first{suffix}"
    before = source.read_bytes()
    output = {"same": source, "dotted": tmp_path / "." / f"first{suffix}",
              "link": tmp_path / f"link{suffix}"}[alias]
    if alias == "link":
        os.link(source, output)
    with pytest.raises(ValueError, match="is the input file; convert never writes over"):
        convert(source, output)        # the Python API (the CLI refuses it before)
    with pytest.raises(SystemExit):
        main(["convert", str(source), "-o", str(output), "--force"])
    assert "is an input; it is never written over" in capsys.readouterr().err
    assert source.read_bytes() == before


@pytest.mark.parametrize("command", ["convert", "gltf"])
@pytest.mark.parametrize("flag, value", [("--angle-tolerance", "-1"), ("--angle-tolerance", "nan"),
                                         ("--angle-tolerance", "0"), ("--angle-tolerance", "x"),
                                         ("--distance-tolerance", "-0.5"),
                                         ("--distance-tolerance", "inf"),
                                         ("--fps", "0"), ("--fps", "-30"), ("--fps", "nan")])
def test_bad_flag_values_name_the_flag_and_exit_2(tmp_path, flag, value, command, capsys):
    """convert refuses a bad value as the other subcommands do: argparse's
    usage error naming the flag, exit status 2, nothing written."""
    if command == "gltf" and flag == "--fps":
        return                      # gltf has no --fps
    out = tmp_path / "out.glb"
    with pytest.raises(SystemExit) as exit_:
        main([command, str(scene_file(tmp_path)), "-o", str(out), flag, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"kbspline {command}: error: argument {flag}: must be a positive number, " \
           f"not {value!r}" in err, err
    assert not out.exists()


def test_a_bvh_clip_is_written_through_its_frames(tmp_path):
    """A BVH's frames are its data: glTF goes through them at their rate,
    without the LightWave check between frames (which would double the rate
    four times over a linear interpolation's corners and then warn)."""
    import warnings
    from mocap import MISSING, MOCAP
    clip = MOCAP / "bandai-namco-1_walk_normal_001.bvh"
    if not clip.exists():
        pytest.skip(MISSING)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = convert(clip, tmp_path / "walk.glb", fps=30.0)
    assert not [w for w in caught if "between its frames" in str(w.message)]
    assert not report.missed
    assert all(report.max_error[key] <= 1.01 * report.tolerances[key] for key in report.max_error)
