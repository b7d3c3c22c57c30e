"""A newcomer's first stumbles, each fixed and kept fixed: the CLI's
version and its one-line refusals, and Euler angles given in degrees
without saying so."""
import json
import subprocess
import sys

import numpy as np
import pytest

import kbspline
from kbspline import quat_from_euler


def cli(*args):
    return subprocess.run([sys.executable, "-m", "kbspline", *args], capture_output=True,
                          text=True)


def test_version():
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"kbspline {kbspline.__version__}"


@pytest.mark.parametrize("args", [["gltf", "in.bvh", "-o", "{missing}/out.glb"],
                                  ["usd", "in.bvh", "-o", "{missing}/out.usda"],
                                  ["resample", "in.bvh", "--fps", "30", "-o", "{missing}/o.bvh"],
                                  ["demo", "--plot", "{missing}/demo.png"]])
def test_a_missing_output_folder_is_one_line_and_exit_2(tmp_path, args):
    done = cli(*[a.format(missing=tmp_path / "nowhere") for a in args])
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"the folder {tmp_path / 'nowhere'} does not exist" in done.stderr.splitlines()[-1]


def test_euler_degrees_read_as_radians_warn():
    with pytest.warns(UserWarning, match="degrees=True"):
        quat_from_euler([[90.0, 45.0, -30.0], [10.0, 20.0, 180.0]], "ZXY")


def test_no_warning_when_an_angle_is_within_a_turn_or_degrees_are_said(recwarn):
    quat_from_euler([0.1, 7.0, 0.0], "ZXY")           # radians beyond a turn happen
    quat_from_euler([[7.0, 8.0, 0.0], [9.0, 10.0, 11.0]], "ZXY")   # one angle is 0
    quat_from_euler([[90.0, 45.0, 30.0]], "ZXY", degrees=True)
    assert not recwarn.list


def test_reduce_json_rebuilds_the_frames(tmp_path):
    """`reduce` writes JSON and `reduce --from` reads it back: the rebuilt
    clip is within the tolerance of the original at every frame."""
    from kbspline.motion import Reduction, read_bvh, resample, write_bvh
    from kbspline.quaternion import _angle_between
    from test_motion import CHAIN
    (tmp_path / "chain.bvh").write_text(CHAIN)
    source = tmp_path / "in.bvh"
    write_bvh(resample(read_bvh(tmp_path / "chain.bvh"), 40), source)
    keys, rebuilt = tmp_path / "keys.json", tmp_path / "rebuilt.bvh"
    assert cli("reduce", str(source), "--tolerance", "0.5deg", "-o", str(keys)).returncode == 0
    done = cli("reduce", str(source), "--from", str(keys), "-o", str(rebuilt))
    assert done.returncode == 0, done.stderr
    original, again = read_bvh(source), read_bvh(rebuilt)
    assert again.num_frames == original.num_frames
    error = _angle_between(again.rotations(), original.rotations())
    assert np.degrees(error.max()) <= 0.5 + 1e-6
    reduction = Reduction.from_json(json.loads(keys.read_text()))
    assert reduction.names == ["hip", "knee"] and 0 < reduction.ratio <= 1


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("joints"), "not a reduction"),
    (lambda d: d["joints"][0].update(key_frames=[0, 5]), "key frames must rise"),
    (lambda d: d["joints"][0].update(key_frames=2), "key frames must rise"),  # was a TypeError
    (lambda d: d["joints"][0].update(key_frames=[[0], [2]]), "key frames must rise"),
    (lambda d: d.update(quaternion_order="xyzw"), "quaternion_order"),
    (lambda d: d.update(format="kbspline.other"), "format 'kbspline.other'"),
    (lambda d: d.update(version=3), "reads versions 1 to 2"),   # a later writer's
    (lambda d: d.update(version="2"), "version '2'"),
    (lambda d: d.update(version=True), "version True"),
    (lambda d: d.update(version=0), "version 0"),
])
def test_reduction_from_bad_json(change, words):
    from kbspline.motion import Reduction
    data = {"frame_time": 0.1, "num_frames": 3, "quaternion_order": "wxyz",
            "joints": [{"name": "a", "key_frames": [0, 2], "rotations": [[1, 0, 0, 0]] * 2,
                        "translations": [[0, 0, 0]] * 2, "max_angle_deg": 0.0,
                        "max_distance": 0.0}]}
    Reduction.from_json(data)   # the unchanged one reads
    change(data)
    with pytest.raises(ValueError, match=words):
        Reduction.from_json(data)


def test_reduction_json_names_its_format_and_version():
    """to_json says what it is, and from_json reads that back, the versions
    before it (no version field) and no later one."""
    from kbspline.motion import Reduction
    from kbspline.motion.reduce import JSON_VERSION
    data = {"frame_time": 0.1, "num_frames": 3, "quaternion_order": "wxyz",
            "joints": [{"name": "a", "key_frames": [0, 2], "rotations": [[1, 0, 0, 0]] * 2,
                        "translations": [[0, 0, 0]] * 2, "max_angle_deg": 0.0,
                        "max_distance": 0.0}]}
    written = Reduction.from_json(data).to_json()
    assert written["format"] == "kbspline.reduction" and written["version"] == JSON_VERSION == 2
    assert Reduction.from_json(written).key_frames[0].tolist() == [0, 2]
    with pytest.raises(ValueError, match="not a dict"):
        Reduction.from_json([data])


def test_reduction_json_round_trips_its_worst_angle_exactly():
    """max_angle goes to JSON in radians as well as degrees, so that a file
    read and written again is the same to the last bit (degrees alone came
    back from radians a bit off now and then); a file with degrees only
    (older writers) still reads."""
    from kbspline.motion import Reduction
    rng = np.random.default_rng(5)
    angles = np.concatenate([rng.uniform(0, np.pi, 500), 10.0 ** rng.uniform(-300, 0, 500)])
    data = {"frame_time": 0.1, "num_frames": 3, "quaternion_order": "wxyz",
            "joints": [{"name": f"j{i}", "key_frames": [0, 2], "rotations": [[1, 0, 0, 0]] * 2,
                        "translations": [[0, 0, 0]] * 2, "max_angle": a,
                        "max_distance": 0.0} for i, a in enumerate(angles)]}
    once = json.dumps(Reduction.from_json(data).to_json())
    back = Reduction.from_json(json.loads(once))
    assert np.array_equal(back.max_angle, angles) and json.dumps(back.to_json()) == once
    degrees_only = json.loads(once)
    for joint in degrees_only["joints"]:
        del joint["max_angle"]
    np.testing.assert_allclose(Reduction.from_json(degrees_only).max_angle, angles,
                               rtol=1e-15, atol=0)


def test_flags_are_the_same_everywhere():
    """-o/--output, --fps, --angle-tolerance and --distance-tolerance mean
    the same in every command that has them (old spellings still work)."""
    import re
    commands = {"resample": ["--fps"], "reduce": ["--angle-tolerance", "--distance-tolerance"],
                "transition": [], "gltf": ["--angle-tolerance", "--distance-tolerance"],
                "usd": ["--angle-tolerance", "--distance-tolerance"], "from-gltf": ["--fps"]}
    for command, flags in commands.items():
        text = cli(command, "--help").stdout
        assert re.search(r"-o OUTPUT, --output OUTPUT", text), command
        for flag in flags:
            assert flag in text, (command, flag)
    assert "--tolerance" in cli("reduce", "--help").stdout   # the old spelling, kept


@pytest.mark.parametrize("call, words", [
    (lambda m: __import__("kbspline.motion", fromlist=["x"]).resample(30, m), "motion must be"),
    (lambda m: __import__("kbspline.motion", fromlist=["x"]).write_bvh("out.bvh", m),
     "motion must be"),
    (lambda m: __import__("kbspline.motion", fromlist=["x"]).transition(m, 24), "b must be"),
    (lambda m: __import__("kbspline.motion", fromlist=["x"]).world_positions("walk.bvh"),
     "motion must be"),
    (lambda m: __import__("kbspline.motion", fromlist=["x"]).motion_to_gltf("out.glb", m),
     "motion must be"),
])
def test_swapped_arguments_are_a_type_error_naming_the_argument(tmp_path, call, words):
    from kbspline.motion import read_bvh
    from test_motion import CHAIN
    (tmp_path / "chain.bvh").write_text(CHAIN)
    with pytest.raises(TypeError, match=f"{words} a Motion"):
        call(read_bvh(tmp_path / "chain.bvh"))


def test_skips_say_what_is_missing_and_where():
    """Tests that need ../shared skip with mocap.MISSING (or the glTF
    samples' own message), which names the folder and where it belongs."""
    import pathlib
    import re
    from mocap import MISSING
    assert "checked out beside the repository as ../shared" in MISSING
    for path in pathlib.Path(__file__).parent.glob("test_*.py"):
        for reason in re.findall(r"(?:skip\(|reason=)\s*(f?\"[^\"]*\")", path.read_text()):
            assert "shared" not in reason or "Khronos" in reason, (path.name, reason)


OPTIONAL_PEERS = ("dask", "distributed", "pxr", "usd-core", "cibuildwheel", "build")


def test_the_test_extra_is_what_the_suite_needs():
    """Heavy optional peers live in their own extras (dask pinned with its
    distributed by dask's own extra), and the tests that use them skip
    without them: no test module imports one at its top."""
    import pathlib
    import re
    tomllib = pytest.importorskip("tomllib")
    root = pathlib.Path(__file__).resolve().parent.parent
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    names = {re.split(r"[\[<>=!~ ]", req)[0] for req in extras["test"]}
    assert not names & set(OPTIONAL_PEERS), names & set(OPTIONAL_PEERS)
    assert extras["dask"] == ["dask[array,distributed]>=2023.1"]
    assert "usd-core>=24.0" in extras["usd"] and "cibuildwheel>=2.16" in extras["wheels"]
    peers = "|".join(p for p in OPTIONAL_PEERS if p != "usd-core")
    for path in sorted((root / "tests").glob("*.py")):
        text = path.read_text()
        for found in re.finditer(rf"^(?:import|from) ({peers})\b", text, re.M):
            skip = text.find(f'importorskip("{found[1]}"')
            assert 0 <= skip < found.start(), f"{path.name} imports {found[1]}: it cannot skip"
    ci = (root / ".ci" / "run").read_text()
    assert "\nextras dask usd wheels\n" in ci and "[test,dask,usd]" in ci   # CI installs them


@pytest.mark.no_core   # its CLI runs start from outside the tree: the installed kbspline
def test_readme_shell_examples_run_on_files_a_clone_has(tmp_path):
    """Each `python -m kbspline ...` of the README, in order, from a folder
    holding only what a clone has: inputs are the repository's files or an
    earlier example's output. A gltf miss (exit 1, one line) is what the
    README says it is."""
    import pathlib
    import re
    import shutil
    pytest.importorskip("pygltflib")
    root = pathlib.Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    shell = readme.split("From the shell")[1].split("## Documentation")[0]
    commands = re.findall(r"`python -m kbspline ((?:gltf|resample|from-gltf|usd|convert) [^`]+)`",
                          shell.replace("\n", " "))
    assert [c.split()[0] for c in commands] == ["gltf", "usd", "resample", "from-gltf", "convert"]
    (tmp_path / "tests" / "data").mkdir(parents=True)
    shutil.copytree(root / "tests" / "data" / "cmu", tmp_path / "tests" / "data" / "cmu")
    for command in commands:
        args = command.split()
        if args[0] == "usd":
            pytest.importorskip("pxr")
        done = subprocess.run([sys.executable, "-m", "kbspline", *args], cwd=tmp_path,
                              capture_output=True, text=True)
        if args[0] in ("gltf", "usd"):
            assert done.returncode == 1, done.stderr
            (line,) = done.stderr.splitlines()
            assert "RThumb" in line and ("--min-key-spacing" in line or "--accept-miss" in line)
        else:
            assert done.returncode == 0, done.stderr
        assert (tmp_path / args[args.index("-o") + 1]).exists()
