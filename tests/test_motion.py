"""kbspline.motion: BVH round trips and errors, forward kinematics,
resampling, and the resample command."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from kbspline import RotationSpline, quat_from_axis_angle
from kbspline.motion import (BvhError, Joint, Motion, read_bvh, reduce_keys, resample,
                              world_positions, write_bvh)
from mocap import CLIPS, MISSING

CHAIN = """HIERARCHY
ROOT hip
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT knee
  {
    OFFSET 1 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -2 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.5
0 0 0 0 0 0 0 0 0
1 2 3 90 0 0 0 0 0
2 4 6 90 0 0 90 0 0
"""


@pytest.fixture
def chain(tmp_path):
    path = tmp_path / "chain.bvh"
    path.write_text(CHAIN)
    return read_bvh(path)


def test_reads_hierarchy_and_frames(chain):
    assert [j.name for j in chain.joints] == ["hip", "knee"]
    assert chain.joints[1].parent == 0 and chain.frame_time == 0.5
    np.testing.assert_array_equal(chain.joints[1].end_site, [0, -2, 0])
    assert chain.frames.shape == (3, 9) and chain.rotation_order(0) == "ZXY"


def test_forward_kinematics(chain):
    pos, rot = world_positions(chain)
    # frame 1: hip at (1, 2, 3) turned 90 degrees about z, so the knee's offset
    # (1, 0, 0) points along +y
    np.testing.assert_allclose(pos[1], [[1, 2, 3], [1, 3, 3]], atol=1e-12)
    np.testing.assert_allclose(rot[1, 2], quat_from_axis_angle([0, 0, 1], np.pi), atol=1e-12)


@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_round_trip_of_real_clips(path, tmp_path):
    clip = read_bvh(path)
    write_bvh(clip, tmp_path / "out.bvh")
    again = read_bvh(tmp_path / "out.bvh")
    assert [j.name for j in again.joints] == [j.name for j in clip.joints]
    assert again.frame_time == clip.frame_time
    np.testing.assert_allclose(again.frames, clip.frames, rtol=1e-6, atol=1e-9)


def test_round_trip_within_print_precision(chain, tmp_path):
    rng = np.random.default_rng(0)
    chain.frames = rng.uniform(-180, 180, chain.frames.shape)
    write_bvh(chain, tmp_path / "x.bvh")
    np.testing.assert_allclose(read_bvh(tmp_path / "x.bvh").frames, chain.frames, rtol=1e-5)


@pytest.mark.parametrize("change, match", [
    (lambda s: s.replace("HIERARCHY", "HEIRARCHY"), r"x.bvh:1: expected 'HIERARCHY'"),
    (lambda s: s.replace("Zrotation Xrotation Yrotation\n    End", "Zrot Xrotation Yrotation\n    End"),
     r"x.bvh:9: unknown channel 'Zrot'"),
    (lambda s: s.replace("OFFSET 1 0 0", "OFFSET 1 zero 0"), r"x.bvh:8: OFFSET must be a number"),
    (lambda s: s.replace("2 4 6 90 0 0 90 0 0", "2 4 6 90 0 0 90 0"), r"x.bvh:21: a frame needs 9 numbers \(one per channel\), found 8"),
    (lambda s: s.replace("2 4 6 90 0 0 90 0 0", "2 4 6 90 0 0 90 0 x"), r"x.bvh:21: frame values must be numbers"),
    (lambda s: s.replace("Frame Time: 0.5", "Frame Time: 0"), r"Frame Time must be positive"),
    (lambda s: s.split("MOTION")[0], r"unexpected end of file"),
])
def test_malformed_files_name_line_and_reason(tmp_path, change, match):
    path = tmp_path / "x.bvh"
    path.write_text(change(CHAIN))
    with pytest.raises(BvhError, match=match):
        read_bvh(path)


def test_missing_file(tmp_path):
    with pytest.raises(BvhError, match="cannot be read"):
        read_bvh(tmp_path / "none.bvh")


@pytest.mark.parametrize("path", CLIPS[:1], ids=lambda p: p.stem)
def test_resample_keeps_the_original_frames(path):
    clip = read_bvh(path)
    double = resample(clip, 2 / clip.frame_time)
    assert double.num_frames == 2 * clip.num_frames - 1
    np.testing.assert_array_equal(double.frames[[0, -1]], clip.frames[[0, -1]])
    # the original frames come back at the even frames, as rotations
    got, want = double.rotations()[:, ::2], clip.rotations()
    same = np.minimum(np.abs(got - want), np.abs(got + want)).max(axis=-1)
    assert same.max() < 1e-12
    np.testing.assert_allclose(double.translations()[:, ::2], clip.translations(), atol=1e-9)
    # Euler channels stay continuous (the file itself wraps some at 180)
    steps = np.abs(np.diff(double.frames, axis=0))
    assert steps.max() < 60


@pytest.mark.parametrize("path", CLIPS[:1], ids=lambda p: p.stem)
def test_resample_non_integer_ratio(path):
    """24 fps from 30: exactly 24 fps, ending at the last whole frame; with
    keep_end, the last original frame is kept and the rate is nearest 24."""
    clip = read_bvh(path)
    duration = clip.times[-1]
    out = resample(clip, 24)
    assert out.frame_time == 1 / 24
    assert out.num_frames == int(duration * 24) + 1
    np.testing.assert_array_equal(out.frames[0], clip.frames[0])
    want = RotationSpline(clip.times, clip.rotations())(np.arange(out.num_frames) / 24)
    got = out.rotations()
    assert np.minimum(np.abs(got - want), np.abs(got + want)).max() < 1e-9
    kept = resample(clip, 24, keep_end=True)
    assert kept.num_frames == round(duration * 24) + 1
    assert abs(kept.times[-1] - duration) < 1e-12
    np.testing.assert_array_equal(kept.frames[[0, -1]], clip.frames[[0, -1]])
    assert np.all(np.isfinite(kept.rotations()))


def test_resample_rejects_bad_fps(chain):
    with pytest.raises(ValueError, match="fps must be a positive number"):
        resample(chain, 0)


def test_resample_command(tmp_path, chain):
    source = tmp_path / "in.bvh"
    write_bvh(chain, source)
    out = tmp_path / "out.bvh"
    run = subprocess.run([sys.executable, "-m", "kbspline", "resample", str(source), "--fps", "8",
                          "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "-> " in run.stdout and read_bvh(out).num_frames == 9
    # 24 fps from a clip whose duration is not a whole number of 24ths
    write_bvh(resample(chain, 30), source)
    for flags, fps in [([], 24.0), (["--keep-end"], None)]:
        run = subprocess.run([sys.executable, "-m", "kbspline", "resample", str(source), "--fps",
                              "24", "-o", str(out), "--force"] + flags, capture_output=True,
                             text=True)
        assert run.returncode == 0, run.stderr
        written = read_bvh(out)
        if fps:
            assert written.frame_time == 1 / fps
        else:
            assert written.times[-1] == pytest.approx(read_bvh(source).times[-1], rel=1e-12)
    bad = subprocess.run([sys.executable, "-m", "kbspline", "resample", str(tmp_path / "no.bvh"),
                          "--fps", "8", "-o", str(tmp_path / "new.bvh")], capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "no.bvh" in bad.stderr


@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_key_reduction_honours_the_tolerance_on_every_frame(path):
    from kbspline.motion import reduce_keys
    from kbspline.quaternion import _angle_between as rotation_error
    clip = read_bvh(path)
    result = reduce_keys(clip, np.radians(1.0), 0.05)
    rot, tr = result.rebuild(clip.times)
    assert rotation_error(rot, clip.rotations()).max() <= np.radians(1.0)
    assert np.linalg.norm(tr - clip.translations(), axis=-1).max() <= 0.05
    assert 0 < result.ratio < 1
    for keys in result.key_frames:
        assert keys[0] == 0 and keys[-1] == clip.num_frames - 1
        assert np.all(np.diff(keys) > 0)


def test_key_reduction_of_a_smooth_rotation_needs_few_keys():
    from kbspline.motion import reduce_keys
    t = np.linspace(0, 1, 101)
    q = quat_from_axis_angle([0, 0, 1], 0.8 * t)           # constant angular speed
    joint = Joint("j", -1, np.zeros(3), ["Zrotation", "Xrotation", "Yrotation"])
    from kbspline import quat_to_euler
    clip = Motion([joint], 0.01, np.degrees(quat_to_euler(q, "ZXY")))
    result = reduce_keys(clip, np.radians(0.01), 0.01)
    assert len(result.key_frames[0]) <= 3


def test_reduce_command_writes_json(tmp_path, chain):
    import json
    source = tmp_path / "in.bvh"
    write_bvh(resample(chain, 40), source)
    out = tmp_path / "keys.json"
    run = subprocess.run([sys.executable, "-m", "kbspline", "reduce", str(source),
                          "--tolerance", "0.5deg", "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    assert [j["name"] for j in data["joints"]] == ["hip", "knee"]
    assert all(j["max_angle_deg"] <= 0.5 for j in data["joints"]) and 0 < data["ratio"] <= 1
    bad = subprocess.run([sys.executable, "-m", "kbspline", "reduce", str(source),
                          "--tolerance", "half", "-o", str(tmp_path / "new.json")],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "--angle-tolerance must be a positive angle" in bad.stderr


def periodic_clip(period_frames=40, frames=130, frame_time=1 / 30):
    """A two-joint clip whose knee swings with a known period and whose root
    walks forward at constant speed."""
    from kbspline import quat_to_euler
    phase = 2 * np.pi * np.arange(frames) / period_frames
    hip = Joint("hip", -1, np.zeros(3), ["Xposition", "Yposition", "Zposition", "Zrotation",
                                         "Xrotation", "Yrotation"])
    knee = Joint("knee", 0, np.array([0.0, -1.0, 0.0]), ["Zrotation", "Xrotation", "Yrotation"])
    swing = quat_from_axis_angle([1, 0, 0], 0.6 * np.sin(phase) + 0.2 * np.sin(2 * phase))
    knee_deg = np.degrees(quat_to_euler(swing, "ZXY"))
    root = np.column_stack([np.zeros(frames), np.zeros(frames), 0.05 * np.arange(frames)])
    data = np.column_stack([root, np.zeros((frames, 3)), knee_deg])
    return Motion([hip, knee], frame_time, data)


def test_find_cycle_finds_the_period():
    from kbspline.motion import find_cycle
    clip = periodic_clip()
    start, end, cost = find_cycle(clip)
    assert (end - start) % 40 == 0 and cost < 1e-6


def test_loop_closes_and_walks_on():
    from kbspline.motion import find_cycle, make_loop
    clip = periodic_clip()
    start, end, _ = find_cycle(clip, min_seconds=1.0, max_seconds=1.5)
    assert end - start == 40
    loop = make_loop(clip, start, end)
    t = np.linspace(0, 3 * loop.period, 601)
    rot, tr = loop.sample(t)
    # rotations repeat with the period; the root advances by the drift per cycle
    r0, _ = loop.sample(t[:200])
    r1, _ = loop.sample(t[:200] + loop.period)
    np.testing.assert_allclose(np.abs(np.sum(r0 * r1, axis=-1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(loop.drift[0], [0, 0, 0.05 * 40], atol=1e-12)
    assert np.all(np.diff(tr[0, :, 2]) > 0)
    # the loop reproduces the clip's own frames
    frames = np.arange(start, end)
    got, _ = loop.sample((frames - start) * clip.frame_time)
    want = clip.rotations()[:, frames]
    np.testing.assert_allclose(np.abs(np.sum(got * want, axis=-1)), 1.0, atol=1e-9)


@pytest.mark.parametrize("path", [p for p in CLIPS if "walk" in p.name], ids=lambda p: p.stem)
def test_walk_cycle_is_a_gait_cycle(path):
    from kbspline.motion import find_cycle
    clip = read_bvh(path)
    start, end, cost = find_cycle(clip)
    assert 0.8 <= (end - start) * clip.frame_time <= 1.4  # a human walking stride


def uniform_clip(frames, rate=0.9, speed=1.5, yaw=0.0, frame_time=1 / 30, start=0):
    """A knee turning at a constant rate while the root walks in a straight
    line at constant speed, facing `yaw` about the vertical; the knee's
    angle starts as it would `start` frames in."""
    from kbspline import quat_to_euler
    t = np.arange(start, start + frames) * frame_time
    hip = Joint("hip", -1, np.zeros(3), ["Xposition", "Yposition", "Zposition", "Zrotation",
                                         "Xrotation", "Yrotation"])
    knee = Joint("knee", 0, np.array([0.0, -1.0, 0.0]), ["Zrotation", "Xrotation", "Yrotation"])
    facing = quat_from_axis_angle([0, 1, 0], yaw)
    root = np.outer(speed * (t - t[0]), [np.sin(yaw), 0.0, np.cos(yaw)])
    hip_deg = np.degrees(quat_to_euler(np.tile(facing, (frames, 1)), "ZXY"))
    knee_deg = np.degrees(quat_to_euler(quat_from_axis_angle([1, 0, 0], rate * t), "ZXY"))
    return Motion([hip, knee], frame_time, np.column_stack([root, hip_deg, knee_deg]))


def test_transition_between_uniform_motions_is_uniform():
    """Both clips turn and walk at constant rates (the second facing
    elsewhere and starting elsewhere): the joined clip keeps the rates
    through both joins, so pose and angular velocity are continuous."""
    from kbspline.motion import transition
    a = uniform_clip(30)
    b = uniform_clip(30, yaw=1.2, start=30 + 12)  # the knee where uniform motion would be
    b.frames[:, :3] += [5.0, 0.0, -3.0]
    out = transition(a, b, frames=12)
    assert out.num_frames == 30 + 12 + 30
    q = out.rotations()
    steps = 2 * np.arccos(np.clip(np.abs(np.sum(q[1, 1:] * q[1, :-1], axis=-1)), 0, 1))
    np.testing.assert_allclose(steps, 0.9 / 30, atol=1e-9)
    root = out.translations()[0]
    speeds = np.linalg.norm(np.diff(root, axis=0), axis=-1) * 30
    np.testing.assert_allclose(speeds, 1.5, atol=1e-9)
    # b continues a's heading: the whole path is one straight line along +z
    np.testing.assert_allclose(root[:, 0], 0.0, atol=1e-9)


@pytest.mark.parametrize("pair", [("walk", "run")])
def test_transition_of_real_clips(pair):
    from kbspline.motion import transition
    clips = {p.name.split("_")[1]: p for p in CLIPS}
    if not all(name in clips for name in pair):
        pytest.skip(MISSING)
    a, b = (read_bvh(clips[name]) for name in pair)
    out = transition(a, b)
    assert out.num_frames == a.num_frames + 24 + b.num_frames
    assert np.all(np.isfinite(out.frames))
    np.testing.assert_array_equal(out.frames[:a.num_frames, 3:], a.frames[:, 3:])
    q = out.rotations()
    steps = 2 * np.arccos(np.clip(np.abs(np.sum(q[:, 1:] * q[:, :-1], axis=-1)), 0, 1))
    joins = steps[:, a.num_frames - 2:a.num_frames + 26]
    assert joins.max() <= steps.max()  # no jump at the joins beyond the clips' own


def test_transition_checks_and_command(tmp_path):
    from kbspline.motion import transition
    a, b = uniform_clip(10), uniform_clip(10, frame_time=1 / 60)
    with pytest.raises(ValueError, match="frame times differ"):
        transition(a, b)
    write_bvh(uniform_clip(20), tmp_path / "a.bvh")
    write_bvh(uniform_clip(20, yaw=0.5), tmp_path / "b.bvh")
    run = subprocess.run([sys.executable, "-m", "kbspline", "transition", str(tmp_path / "a.bvh"),
                          str(tmp_path / "b.bvh"), "--frames", "6", "-o", str(tmp_path / "ab.bvh")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert read_bvh(tmp_path / "ab.bvh").num_frames == 46


@pytest.mark.parametrize("path", CLIPS[:1], ids=lambda p: p.stem)
def test_resample_up_and_down_again(path):
    clip = read_bvh(path)
    up = resample(clip, 4 / clip.frame_time)       # 30 -> 120
    down = resample(up, 1 / clip.frame_time)       # 120 -> 30
    assert down.num_frames == clip.num_frames
    got, want = down.rotations(), clip.rotations()
    assert np.minimum(np.abs(got - want), np.abs(got + want)).max() < 1e-9


def per_joint_frames(clip):
    """clip.rotations() and clip.translations() as they were computed
    before one call converted all joints of an Euler order and one gather
    took every position channel: joint by joint."""
    from kbspline import quat_from_euler
    out = np.tile([1.0, 0.0, 0.0, 0.0], (len(clip.joints), clip.num_frames, 1))
    positions = np.zeros((len(clip.joints), clip.num_frames, 3))
    for j, joint in enumerate(clip.joints):
        order = clip.rotation_order(j)
        start = clip.channel_slice(j).start
        if order:
            cols = [start + k for k, c in enumerate(joint.channels) if c.endswith("rotation")]
            angles = np.zeros((clip.num_frames, 3))
            angles[:, :len(order)] = clip.frames[:, cols]
            full = order + "".join(axis for axis in "XYZ" if axis not in order)
            out[j] = quat_from_euler(angles, full, degrees=True)
        for k, c in enumerate(joint.channels):
            if c.endswith("position"):
                positions[j, :, "XYZ".index(c[0])] = clip.frames[:, start + k]
    return out, positions


def mixed_orders_clip():
    """Joints of every kind of channel list: three rotation axes in several
    orders, one or two, positions among rotations, none at all."""
    channels = [["Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"],
                ["Zrotation", "Yrotation", "Xrotation"], ["Xrotation", "Zposition", "Zrotation"],
                [], ["Yrotation"], ["Zrotation", "Xrotation", "Yrotation"],
                ["Xposition", "Yposition", "Zposition"], ["Zrotation", "Yrotation", "Xrotation"],
                ["Xrotation", "Yrotation", "Zrotation"], ["Zrotation", "Xrotation"]]
    joints = [Joint(f"j{j}", j - 1, np.ones(3), c) for j, c in enumerate(channels)]
    frames = np.random.default_rng(5).uniform(-400, 400, (17, sum(map(len, channels))))
    return Motion(joints, 1 / 30, frames)


CMU_CLIPS = sorted((pathlib.Path(__file__).parent / "data" / "cmu").glob("*.bvh"))


@pytest.mark.parametrize("source", ["mixed"] + CLIPS + CMU_CLIPS,
                         ids=lambda p: getattr(p, "name", p))
def test_rotations_and_translations_are_the_per_joint_ones_bit_for_bit(source):
    clip = mixed_orders_clip() if source == "mixed" else read_bvh(source)
    for got, want in zip((clip.rotations(), clip.translations()), per_joint_frames(clip)):
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("columns", [5, 7])
def test_frames_without_a_column_per_channel_are_refused(columns):
    """Frames with fewer (or more) columns than the joints have channels are
    refused with a ValueError: the vectorised rotations() appends a column
    of zeros for missing Euler axes, and a review found a last rotation
    channel without a column read it as 0 degrees, with no error."""
    joint = Joint("root", -1, np.zeros(3), ["Xposition", "Yposition", "Zposition",
                                            "Zrotation", "Xrotation", "Yrotation"])
    clip = Motion([joint], 1 / 30, np.full((4, columns), 30.0))  # 6 channels
    for method in (clip.rotations, clip.translations):
        with pytest.raises(ValueError, match="6 channels"):
            method()
    with pytest.raises(ValueError, match="6 channels"):
        reduce_keys(clip, 0.01, 0.01)
