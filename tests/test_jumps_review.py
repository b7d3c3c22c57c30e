"""Review of the between-keys jump detection: a jump's interval is skipped
by the glTF and USD error reports, so a steep but continuous motion taken
for a jump would be a silent miss.  The jump test must judge a motion the
same at any scene time: a look-at turning half a turn continuously in a
few microseconds stays a reported miss at 1000 s as at 0 s (it was keyed
as a jump there while the test's step grew with the time), and a step in
value is still keyed as a jump at late times."""
import contextlib
import importlib.util
import io
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

import threeds_oracle
from kbspline.__main__ import main
from kbspline.formats.adaptive import MIN_KEY_SPACING, _channel_keys
from kbspline.formats.lightwave import read_lws
from test_jumps_between_keys import PAIR, SCENES, errors, track
from lws_writer import write_lws
from threeds_writer import write_3ds

FPS = 30.0
TARGET = SCENES["target_passes_over"][1]        # its keys' line passes over (1, -1)


def near_miss_file(path, beside, first_frame):
    """A still camera 2^-beside off the line its target's keys run along,
    every key `first_frame` frames late (the scene starts there)."""
    camera = track([0, 40], [[1.0, -1.0 + 2.0 ** -beside, 0]] * 2)
    late = [dict(t, frames=t["frames"] + first_frame) for t in (camera, TARGET)]
    nodes = [{"tag": "camera", "name": "Cam", "tracks": {"position": late[0]}},
             {"tag": "target", "name": "Cam", "tracks": {"position": late[1]}}]
    path.write_bytes(write_3ds(nodes, objects=[("Cam", "camera")],
                               segment=(first_frame, first_frame + 50)))
    return nodes


def convert_exit(source, out):
    with contextlib.redirect_stderr(io.StringIO()) as err, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["convert", str(source), "-o", str(out), "--angle-tolerance", "0.01"])
    return code, err.getvalue()


@pytest.mark.parametrize("ext", ["usda", "glb"])
@pytest.mark.parametrize("beside, first_frame", [(18, 0), (18, 30000), (20, 3000),
                                                 (20, 30000)])
def test_a_near_miss_look_at_stays_a_miss_late_in_a_scene(tmp_path, ext, beside,
                                                          first_frame):
    """The camera is 2^-18 or 2^-20 off the line (the oracle's positions):
    the view's horizontal part never vanishes, so the half turn is
    continuous, over a few microseconds; at 100 s and 1000 s as at 0 s it
    is a reported miss (exit 1), not a jump keyed silently (exit 0)."""
    if ext == "usda":
        pytest.importorskip("pxr")
    nodes = near_miss_file(tmp_path / "near.3ds", beside, first_frame)
    eye = threeds_oracle.play(nodes[0]["tracks"]["position"], "position", first_frame)
    aim = np.array([threeds_oracle.play(nodes[1]["tracks"]["position"], "position", f)
                    for f in first_frame + np.linspace(0, 50, 2001)])
    # the target stays on the line y = -(x + 1) / 2 (collinear keys), the
    # camera 2^-beside off it: the view never turns straight up
    assert np.abs(aim[:, 1] + (aim[:, 0] + 1) / 2).max() < 1e-12
    assert abs(eye[1] + (eye[0] + 1) / 2) == 2.0 ** -beside
    assert np.ptp(np.sign(aim[:, 0] - eye[0])) == 2          # but it does pass over
    code, err = convert_exit(tmp_path / "near.3ds", tmp_path / f"near.{ext}")
    assert code == 1 and "Cam rotation" in err, err


class LateRamp:
    """A vector or rotation channel from `offset` s on: a smooth motion
    plus a ramp of 2 at `t0`, `width` seconds wide (tanh), or a step (0)."""

    def __init__(self, path, offset, t0, width):
        self.path, self.offset, self.t0, self.width = path, offset, t0, width
        self.times = offset + np.array([0.0, 1.0, 2.0])

    def __call__(self, t):
        t = np.asarray(t, float)
        if self.width:
            ramp = 1 + np.tanh((t - self.t0) / self.width)
        else:
            ramp = np.where(t >= self.t0, 2.0, 0.0)
        u = t - self.offset
        if self.path == "rotation":
            turn = np.column_stack([0.4 * np.sin(3 * u), 0.2 * u, ramp])
            xyzw = Rotation.from_rotvec(turn).as_quat()
            return np.column_stack([xyzw[:, 3], xyzw[:, :3]])
        return np.column_stack([np.sin(3 * u), u * u, ramp])


LATE = dict(path=st.sampled_from(["translation", "rotation"]),
            offset=st.sampled_from([0.0, 3.0, 60.0, 700.0, 4000.0]),
            where=st.floats(0.1, 1.9))


@settings(max_examples=25, deadline=None)
@given(width=st.floats(1e-7, 2e-5), **LATE)
def test_a_steep_ramp_is_no_jump_at_any_scene_time(path, offset, where, width):
    """A ramp 0.1-20 microseconds wide is continuous: never keyed as a
    jump (whose interval the reports skip), whenever it happens."""
    channel = LateRamp(path, offset, offset + where, width)
    times, values, jump, _ = _channel_keys(channel, 1e-3, offset, offset + 2.0)
    assert not jump.any(), times[:-1][jump]
    t = offset + where + np.linspace(-5, 5, 2001) * width
    assert errors(channel, times, values, t).max() > 10 * 1e-3       # a miss, reported


@settings(max_examples=15, deadline=None)
@given(**LATE)
def test_a_step_is_still_keyed_as_a_jump_late_in_a_scene(path, offset, where):
    """The same motion with a step instead: one jump's pair around it,
    playback within the tolerance everywhere else."""
    t0 = offset + where
    channel = LateRamp(path, offset, t0, 0.0)
    times, values, jump, _ = _channel_keys(channel, 1e-3, offset, offset + 2.0)
    where_ = np.flatnonzero(jump)
    lo, hi = times[where_[0]], times[where_[-1] + 1]
    assert np.all(np.diff(where_) == 1) and lo < t0 <= hi and hi - lo <= PAIR
    u = np.linspace(0, 1, 9)[1:-1]
    t = (times[:-1, None] + np.diff(times)[:, None] * u).ravel()
    t = t[(t < lo) | (t > hi)]
    assert errors(channel, times, values, t).max() <= 1e-3 * (1 + 1e-9)


def repeat_file(path, period):
    """A null whose x scale repeats two TCB keys `period` s apart, from
    0.8 s to 2 s: the value jumps back at every seam, more often than
    keys may be placed (MIN_KEY_SPACING); every other channel still."""
    still = ([(1.0, 0.0, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
              (1.0, 2.0, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)], "constant", "constant")
    saw = ([(-9.0, 0.8, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
            (-3.5, 0.8 + period, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)], "constant", "repeat")
    channels = {ch: saw if ch == 6 else still for ch in range(9)}
    write_lws(path, [{"kind": "null", "name": "o0", "parent": -1, "channels": channels,
                      "pivot": (0.0, 0.0, 0.0)}], 5)


@pytest.mark.parametrize("period", [3.5e-4])
def test_jumps_closer_than_a_pair_are_measured_not_skipped(tmp_path, period):
    """Seams closer together than a jump's pair: the pairs overlap into one
    run of jump intervals over the whole repeat, and linear keys cannot
    show the ramp between seams. Skipped as jumps, that was exit 0 with
    playback off by the ramp's height for 1.2 s; now it is measured and
    reported (exit 1, naming the channel)."""
    repeat_file(tmp_path / "saw.lws", period)
    scene = read_lws(tmp_path / "saw.lws")
    (animation,) = scene.animations.values()
    channel = animation["o0", "scale"]
    tolerance = 1e-3
    times, values, jump, _ = _channel_keys(channel, tolerance, 0.0, 2.0)
    t = np.linspace(0.8, 2.0, 60001)
    skipped = t[jump[np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(jump) - 1)]]
    off = errors(channel, times, values, t) > tolerance
    assert off.mean() > 0.2                        # the output strays widely
    assert len(skipped) * (t[1] - t[0]) < 2 * MIN_KEY_SPACING    # and is not skipped
    for ext in ("glb", "usda"):
        if ext == "usda" and importlib.util.find_spec("pxr") is None:
            continue
        code, err = convert_exit(tmp_path / "saw.lws", tmp_path / f"saw.{ext}")
        assert code == 1 and "o0 scale" in err, err


def test_a_value_alone_at_a_key_time_is_measured_not_skipped(tmp_path):
    """A stepped last span under an oscillate behaviour: x is -1 only at
    the instants 0.9 s, 1.7 s (the key's own time, mirrored), 1 around
    them. The keys hold -1 there, a spike 1 ms wide in playback; as two
    touching jump pairs it was skipped silently (exit 0), now measured."""
    still = ([(0.0, 0.0, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
              (0.0, 2.0, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)], "constant", "constant")
    spike = ([(1.0, 0.5, "tcb", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
              (-1.0, 0.9, "stepped", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)], "constant", "oscillate")
    channels = {ch: spike if ch == 0 else still for ch in range(9)}
    write_lws(tmp_path / "spike.lws", [{"kind": "null", "name": "o0", "parent": -1,
                                        "channels": channels, "pivot": (0.0, 0.0, 0.0)}], 5)
    (animation,) = read_lws(tmp_path / "spike.lws").animations.values()
    channel = animation["o0", "translation"]
    near = 0.9 + np.array([-1e-3, -1e-6, 1e-6, 1e-3])
    assert np.allclose(channel(near)[:, 0], 1.0) and channel(np.array([0.9]))[0, 0] == -1.0
    times, values, jump, _ = _channel_keys(channel, 1e-3, 0.0, 2.0)
    assert not jump.any()
    t = np.linspace(0.899, 0.901, 2001)
    assert errors(channel, times, values, t).max() > 1.0      # the spike: a miss
    code, err = convert_exit(tmp_path / "spike.lws", tmp_path / "spike.glb")
    assert code == 1 and "o0 translation" in err, err
