"""USD export read back through Pixar's own API: UsdSkel's skeleton query
poses the joints at frames and between them, and they must land where
kbspline's forward kinematics of the splines puts them, within the bound
the tolerances give."""
import subprocess
import sys

import numpy as np
import pytest

from kbspline import RotationSpline
from kbspline.formats.adaptive import linear_keys
from kbspline.motion import Joint, Motion, read_bvh
from mocap import first_clip
from poses import spline_world
from test_motion import CHAIN



@pytest.fixture
def chain(tmp_path):
    """Three frames of a hip (moving) and a knee with an End Site."""
    path = tmp_path / "chain.bvh"
    path.write_text(CHAIN)
    return read_bvh(path)


pxr = pytest.importorskip("pxr", reason="needs usd-core (pip install 'kbspline[usd]')")
from pxr import Gf, Usd, UsdGeom, UsdSkel, Vt  # noqa: E402
from kbspline.formats.usd import motion_to_usd  # noqa: E402


def usd_world(path, codes):
    """(M, J + E, 3) joint positions posed by UsdSkel at time codes."""
    stage = Usd.Stage.Open(str(path))
    query = UsdSkel.Cache().GetSkelQuery(UsdSkel.Skeleton(stage.GetPrimAtPath("/Root/Skeleton")))
    return np.array([np.array(query.ComputeJointWorldTransforms(
        UsdGeom.XformCache(Usd.TimeCode(float(code)))))[:, 3, :3] for code in codes])


def bound(motion, report, angle, distance):
    """The most a joint may move: each ancestor's rotation error swings it
    by at most the angle times twice the skeleton's reach, plus the root's
    translation error and float32 storage."""
    rest = usd_rest(report.path)
    reach = np.linalg.norm(rest - rest[0], axis=-1).max() + 1e-300
    depth = np.array([name.count("/") + 1 for name in report.joints])
    distance = angle * reach if distance is None else distance   # motion_to_usd's default
    return depth * angle * 2 * reach + distance + 2e-6 * (reach + np.abs(rest).max())


def usd_rest(path):
    stage = Usd.Stage.Open(str(path))
    binds = UsdSkel.Skeleton(stage.GetPrimAtPath("/Root/Skeleton")).GetBindTransformsAttr().Get()
    return np.array(binds)[:, 3, :3]


def check_playback(motion, path, angle, distance):
    report = motion_to_usd(motion, path, angle_tolerance=angle, distance_tolerance=distance)
    fps = 1 / motion.frame_time
    rng = np.random.default_rng(0)
    t = np.concatenate([motion.times, rng.uniform(0, motion.times[-1], 200)])
    got = usd_world(path, t * fps)
    expected = spline_world(motion, t)
    error = np.linalg.norm(got - expected, axis=-1).max(axis=0)
    assert np.all(error <= bound(motion, report, angle, distance)), error.max()
    return report, error


@pytest.mark.parametrize("suffix", [".usda", ".usdc"])
def test_chain_poses_at_and_between_frames(tmp_path, suffix, chain):
    report, error = check_playback(chain, tmp_path / f"chain{suffix}", 1e-4, 1e-4)
    assert report.joints == ["hip", "hip/knee", "hip/knee/knee_end"]
    assert np.all(report.max_angle <= 1e-4)


def test_real_clip_poses_at_and_between_frames(tmp_path):
    clip = first_clip()
    clip.frames = clip.frames[:60]
    report, error = check_playback(clip, tmp_path / "clip.usdc", 1e-4, None)
    assert np.all(report.max_angle <= 1e-4) and report.max_distance > 0
    # a looser tolerance: fewer samples, still within its own bound
    loose, _ = check_playback(clip, tmp_path / "loose.usdc", 1e-2, None)
    assert len(loose.times) < len(report.times)


def test_stage_metadata_and_structure(tmp_path, chain):
    motion_to_usd(chain, tmp_path / "chain.usda", meters_per_unit=0.01)
    stage = Usd.Stage.Open(str(tmp_path / "chain.usda"))
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    assert UsdGeom.GetStageMetersPerUnit(stage) == 0.01
    assert stage.GetTimeCodesPerSecond() == pytest.approx(1 / chain.frame_time)
    assert stage.GetStartTimeCode() == 0
    assert stage.GetEndTimeCode() == chain.num_frames - 1
    skeleton = UsdSkel.Skeleton(stage.GetPrimAtPath("/Root/Skeleton"))
    rest = np.array(skeleton.GetRestTransformsAttr().Get())[:, 3, :3]
    np.testing.assert_allclose(rest, [[0, 0, 0], [1, 0, 0], [0, -2, 0]])
    anim = UsdSkel.Animation(stage.GetPrimAtPath("/Root/Skeleton/Animation"))
    assert list(anim.GetJointsAttr().Get()) == list(skeleton.GetJointsAttr().Get())
    assert len(anim.GetRotationsAttr().GetTimeSamples()) >= chain.num_frames


def test_usd_replays_five_turns_between_two_keys(tmp_path):
    """Quaternion samples at linear_keys' times, written as a quatf[]
    attribute and read back by USD between them, keep every turn."""
    spline = RotationSpline.from_relative([0, 1, 2], [[0, 0, 1], [0, 0, 1], [1, 0, 0]],
                                          [0, 10 * np.pi, 1.0])
    (times,) = linear_keys(spline, 1e-4)
    q = spline(times)
    q[1:] *= np.where(np.cumsum(np.sum(q[1:] * q[:-1], axis=1) < 0) % 2 == 1, -1, 1)[:, None]
    stage = Usd.Stage.CreateInMemory()
    attr = stage.DefinePrim("/Spin").CreateAttribute("rotation", pxr.Sdf.ValueTypeNames.QuatfArray)
    for t, row in zip(times, q.tolist()):
        attr.Set(Vt.QuatfArray([Gf.Quatf(*row)]), Usd.TimeCode(t))
    probe = np.linspace(0, 2, 4001)
    played = np.array([[v.GetReal(), *v.GetImaginary()]
                       for v in (attr.Get(Usd.TimeCode(t))[0] for t in probe)])
    truth = spline(probe)
    chord = np.minimum(np.linalg.norm(played - truth, axis=1), np.linalg.norm(played + truth, axis=1))
    assert (4 * np.arcsin(chord / 2)).max() <= 1e-4 + 1e-6   # float32 samples
    # the angle swept by the playback is the spline's: five turns and a radian
    step = np.minimum(np.linalg.norm(played[1:] - played[:-1], axis=1),
                      np.linalg.norm(played[1:] + played[:-1], axis=1))
    assert np.sum(4 * np.arcsin(step / 2)) == pytest.approx(spline.total_angle, abs=1e-2)


@pytest.mark.parametrize("kwargs, words", [
    ({"angle_tolerance": 0.0}, "angle_tolerance must be a positive number"),
    ({"distance_tolerance": np.nan}, "distance_tolerance must be a positive number"),
    ({"meters_per_unit": -1}, "meters_per_unit must be a positive number"),
])
def test_bad_arguments(tmp_path, kwargs, words, chain):
    with pytest.raises(ValueError, match=words):
        motion_to_usd(chain, tmp_path / "x.usda", **kwargs)
    assert not (tmp_path / "x.usda").exists()


def test_bad_path_and_short_clip(tmp_path, chain):
    with pytest.raises(ValueError, match="must end in one of"):
        motion_to_usd(chain, tmp_path / "x.fbx")
    one = Motion(chain.joints, chain.frame_time, chain.frames[:1])
    with pytest.raises(ValueError, match="at least 2 frames"):
        motion_to_usd(one, tmp_path / "x.usda")
    # siblings whose names are one USD name once made safe ("a-b" -> "a_b")
    # get a suffix (test_usd_letter.py checks names at length)
    twins = Motion([Joint("r", -1, np.zeros(3), ["Zrotation"]),
                    Joint("a-b", 0, np.ones(3), ["Zrotation"]),
                    Joint("a_b", 0, np.ones(3), ["Zrotation"])], 0.1, np.zeros((2, 3)))
    assert motion_to_usd(twins, tmp_path / "x.usda").joints == ["r", "r/a_b", "r/a_b_2"]


def test_usd_command(tmp_path):
    clip = first_clip()
    out = tmp_path / "clip.usdc"
    from kbspline.motion import write_bvh
    clip.frames = clip.frames[:20]
    write_bvh(clip, tmp_path / "clip.bvh")
    result = subprocess.run([sys.executable, "-m", "kbspline", "usd", str(tmp_path / "clip.bvh"),
                             "-o", str(out), "--angle-tolerance", "0.1"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "samples" in result.stdout and out.stat().st_size > 0
