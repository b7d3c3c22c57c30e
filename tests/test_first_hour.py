"""A newcomer's first stumbles, each fixed and kept fixed: the CLI's
version and its one-line refusals, and Euler angles given in degrees
without saying so."""
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
