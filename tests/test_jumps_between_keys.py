"""A jump in value between a channel's key times keyed as a jump: a 3DS
camera whose look-at flips half a turn about its view as the target passes
straight over it converts to glTF and USD with exit 0, playback matching an
independent look-at (SciPy's align_vectors on the seed-002 oracle's
positions) within the tolerance everywhere but the jump's pair of keys
MIN_KEY_SPACING apart; a step at a random time between keys likewise; a
steep but continuous motion is no jump and stays a reported miss."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import brentq
from scipy.spatial.transform import Rotation

import threeds_oracle
from kbspline.__main__ import main
from kbspline.formats.adaptive import MIN_KEY_SPACING, _channel_keys, key_times_in
from kbspline.formats.convert import convert, scene_range
from kbspline.formats.threeds import read_3ds
from test_scene_gltf import Z_UP, in_gltf, look_at_truth, play, sampler
from threeds_writer import random_scene as random_3ds, write_3ds

TOL_DEG = 0.01
TOL = np.radians(TOL_DEG)
FPS = 30.0
# float32 key times: a jump's pair is MIN_KEY_SPACING apart as stored
PAIR = MIN_KEY_SPACING * (1 + 1e-3)


def track(frames, values, **fields):
    return {"frames": np.array(frames), "values": np.array(values, float), "flags": 0,
            **{k: np.array(v, float) for k, v in fields.items()}}


# camera passes under a still target (y = 0 throughout); a still camera whose
# target's keys lie on a line over it; the same with the camera a hair off
# that line (float32-exact values: the file stores them exactly)
SCENES = {
    "camera_passes_under": (
        track([0, 17, 40], [[-1.5, 0, 0], [0.75, 0, 0.5], [2.0, 0, 0.25]],
              tension=[0.3, -0.2, 0.0], ease_from=[0.5, 0.0, 0.0]),
        track([0, 40], [[0.5, 0, 4], [0.5, 0, 4]]),
        lambda t, cam, aim: cam(t)[0] - 0.5),
    "target_passes_over": (
        track([0, 40], [[1.0, -1.0, 0], [1.0, -1.0, 0]]),
        track([0, 25, 50], [[-1.0, 0, 3], [3.0, -2.0, 4], [5.0, -3.0, 4.5]],
              bias=[0.0, 0.4, 0.0]),
        lambda t, cam, aim: aim(t)[0] - 1.0),
}
NEAR_MISS = track([0, 40], [[1.0, -1.0 + 2.0 ** -12, 0]] * 2)


def flip_file(path, camera, target, roll=True):
    tracks = {"position": camera}
    if roll:       # a roll turning meanwhile: the flip is not the only motion
        tracks["roll"] = track([0, 50], [[0.0], [30.0]])
    nodes = [{"tag": "camera", "name": "Cam", "tracks": tracks},
             {"tag": "target", "name": "Cam", "tracks": {"position": target}}]
    last = max(camera["frames"][-1], target["frames"][-1])
    path.write_bytes(write_3ds(nodes, objects=[("Cam", "camera")], segment=(0, int(last))))
    return nodes


def flip_time(nodes, crossing):
    """When the view turns straight up (the oracle's positions, brentq)."""
    def at(node):
        return lambda t: threeds_oracle.play(node["tracks"]["position"], "position", t * FPS)
    cam, aim = at(nodes[0]), at(nodes[1])
    t0 = brentq(lambda t: crossing(t, cam, aim), 0.0, 20 / FPS, xtol=1e-13)
    assert t0 * FPS not in (0, 17, 25)             # between key times
    return t0


def misses(times, error_at, t0):
    """Asserts playback is within TOL at points between and beside every
    pair of samples but the one pair (at most PAIR apart) around t0."""
    (i,) = np.flatnonzero((times[:-1] <= t0) & (times[1:] >= t0))[-1:]
    assert times[i + 1] - times[i] <= PAIR, (times[i], times[i + 1])
    u = np.linspace(0, 1, 13)[1:-1]
    t = np.concatenate([(times[:-1, None] + np.diff(times)[:, None] * u).ravel(),
                        times[:-1] + 1e-7, times[1:] - 1e-7, times,
                        t0 + np.linspace(-0.02, 0.02, 401)])
    t = t[((t < times[i]) | (t > times[i + 1])) & (t >= 0) & (t <= times[-1])]
    error = error_at(t)
    assert error.max() <= TOL * (1 + 1e-9), (t[np.argmax(error)], error.max())
    inside = error_at(np.linspace(times[i], times[i + 1], 65)[1:-1])
    assert inside.max() > 3.0            # the flip itself: about half a turn


def angle(got, want):
    """Radians between rotation matrices (..., 3, 3)."""
    cos = (np.trace(np.swapaxes(got, -1, -2) @ want, axis1=-2, axis2=-1) - 1) / 2
    return np.arccos(np.clip(cos, -1.0, 1.0))


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_a_look_at_flip_between_keys_converts_to_gltf(tmp_path, scene):
    import pygltflib as gl
    camera, target, crossing = SCENES[scene]
    nodes = flip_file(tmp_path / "flip.3ds", camera, target)
    t0 = flip_time(nodes, crossing)
    out = tmp_path / "flip.glb"
    assert main(["convert", str(tmp_path / "flip.3ds"), "-o", str(out),
                 "--angle-tolerance", str(TOL_DEG)]) == 0
    times, output = sampler(gl.GLTF2().load(str(out)), "Cam", "rotation")
    truth = look_at_truth(*nodes)

    def error_at(t):
        want = Rotation.from_quat(in_gltf("rotation", truth(t), Z_UP))
        return (Rotation.from_quat(play(times, output, t)).inv() * want).magnitude()
    misses(times, error_at, t0)
    # keyed as a jump, not as keys packed at the spacing floor around it
    assert np.sum(np.abs(times - t0) < 0.01) <= 4


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_a_look_at_flip_between_keys_converts_to_usd(tmp_path, scene):
    pytest.importorskip("pxr")
    from pxr import Usd
    camera, target, crossing = SCENES[scene]
    nodes = flip_file(tmp_path / "flip.3ds", camera, target)
    t0 = flip_time(nodes, crossing)
    out = tmp_path / "flip.usda"
    assert main(["convert", str(tmp_path / "flip.3ds"), "-o", str(out),
                 "--angle-tolerance", str(TOL_DEG)]) == 0
    stage = Usd.Stage.Open(str(out))
    (orient,) = [prim.GetAttribute("xformOp:orient") for prim in stage.Traverse()
                 if prim.GetName() == "Cam"]
    times = np.array(orient.GetTimeSamples()) / stage.GetTimeCodesPerSecond()
    truth = look_at_truth(*nodes)

    def error_at(t):
        got = [orient.Get(Usd.TimeCode(x * stage.GetTimeCodesPerSecond())) for x in t]
        got = Rotation.from_quat([[*q.GetImaginary(), q.GetReal()] for q in got]).as_matrix()
        xyzw = np.roll(truth(t), -1, axis=1)
        return angle(got, Z_UP @ Rotation.from_quat(xyzw).as_matrix() @ Z_UP.T)
    misses(times, error_at, t0)


def test_a_near_miss_is_steep_not_a_jump(tmp_path, capsys):
    """The target passes 2^-12 beside the line over the camera: the view
    turns half a turn in about 50 microseconds, continuously. Keys 0.5 ms
    apart cannot follow it; that is a reported miss, never keyed as a jump."""
    flip_file(tmp_path / "near.3ds", NEAR_MISS, SCENES["target_passes_over"][1], roll=False)
    with pytest.warns(UserWarning, match="misses the tolerance.*Cam rotation"):
        report = convert(tmp_path / "near.3ds", tmp_path / "near.glb", angle_tolerance=TOL)
    assert report.max_error["Cam", "rotation"] > 10 * TOL
    assert main(["convert", str(tmp_path / "near.3ds"), "-o", str(tmp_path / "again.usda"),
                 "--angle-tolerance", str(TOL_DEG)]) == 1
    assert "Cam rotation" in capsys.readouterr().err


@pytest.mark.parametrize("seed", range(4))      # scenes with misses (not every one has)
def test_eased_3ds_scenes_have_misses_but_no_jumps_between_keys(tmp_path, seed):
    """Random 3DS keys (every TCB and ease, loops and repeats) move too
    fast for the floor here and there, continuously: every run of jump
    intervals the keyer flags holds a key time (a repeat's seam, ...)."""
    rng = np.random.default_rng([52, 9, seed])
    nodes, objects = random_3ds(rng, n_objects=2)
    path = tmp_path / "eased.3ds"
    path.write_bytes(write_3ds(nodes, objects=objects, segment=(0, 90)))
    scene = read_3ds(path)
    start, end = scene_range(scene, next(iter(scene.animations)))
    missed = 0
    for channel in next(iter(scene.animations.values())).values():
        times, values, jump, _ = _channel_keys(channel, 1e-3, start, end)
        edges = np.diff(np.concatenate([[0], jump.astype(int), [0]]))
        keys = key_times_in(channel, start, end)
        for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            assert np.any((keys >= times[a]) & (keys <= times[b])), (channel.path, times[a])
        floor = np.flatnonzero(~jump & (np.diff(times) < 2 * MIN_KEY_SPACING))
        t = (times[floor, None] + np.diff(times)[floor, None] * np.linspace(0, 1, 17)).ravel()
        missed += len(t) > 0 and errors(channel, times, values, t).max() > 1e-3
    assert missed > 0


class Stepped:
    """A synthetic channel: a smooth motion plus `step` from `t0` on (a
    rotation turns by it about a fixed axis; a vector moves by it)."""

    def __init__(self, path, times, t0, step, width=0.0):
        self.path, self.times, self.t0, self.step, self.width = path, times, t0, step, width

    def amount(self, t):
        t = np.asarray(t, float)
        if self.width:                  # continuous: a smooth ramp this wide
            return self.step * (1 + np.tanh((t - self.t0) / self.width)) / 2
        return np.where(t >= self.t0, self.step, 0.0)

    def __call__(self, t):
        t = np.asarray(t, float)
        if self.path == "rotation":
            turn = np.column_stack([0.4 * np.sin(3 * t), 0.2 * t, self.amount(t)])
            xyzw = Rotation.from_rotvec(turn).as_quat()
            return np.column_stack([xyzw[:, 3], xyzw[:, :3]])
        return np.column_stack([np.sin(3 * t), t * t, self.amount(t)])


def playback(times, values, t, rotation):
    """Lerp, or slerp (SciPy), between keys."""
    if not rotation:
        return np.column_stack([np.interp(t, times, v) for v in values.T])
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    s = (t - times[k]) / (times[k + 1] - times[k])
    a = Rotation.from_quat(np.roll(values[k], -1, axis=1))
    b = Rotation.from_quat(np.roll(values[k + 1], -1, axis=1))
    return (a * Rotation.from_rotvec((a.inv() * b).as_rotvec() * s[:, None])).as_matrix()


def errors(channel, times, values, t):
    truth = channel(t)
    if channel.path != "rotation":
        return np.linalg.norm(playback(times, values, t, False) - truth, axis=1)
    want = Rotation.from_quat(np.roll(truth, -1, axis=1)).as_matrix()
    return angle(playback(times, values, t, True), want)


def f32(t):
    return np.asarray(t, np.float32).astype(np.float64)


@settings(max_examples=30, deadline=None)
@given(path=st.sampled_from(["translation", "rotation"]),
       keys=st.lists(st.floats(0.05, 1.95), min_size=1, max_size=4),
       t0=st.floats(0.01, 1.99), near_key=st.booleans(), beside=st.floats(-1e-3, 1e-3),
       step=st.floats(2.5e-3, 3.0), sign=st.sampled_from([-1, 1]), rounding=st.booleans())
def test_a_step_at_a_random_time_between_keys_is_keyed_as_a_jump(path, keys, t0, near_key,
                                                                 beside, step, sign, rounding):
    t0 = keys[0] + beside if near_key else t0       # also within a spacing of a key
    channel = Stepped(path, np.unique([0.0, 2.0, *keys]), t0, sign * step)
    tolerance = 1e-3
    times, values, jump, _ = _channel_keys(channel, tolerance, 0.0, 2.0,
                                           round_times=f32 if rounding else None)
    # one jump, around t0: its pair, a key of the channel maybe between them
    where = np.flatnonzero(jump)
    lo, hi = times[where[0]], times[where[-1] + 1]
    assert np.all(np.diff(where) == 1) and lo < t0 <= hi and hi - lo <= PAIR
    assert np.sum(np.abs(times - t0) < 0.005) <= 5          # no floor-packed keys there
    # between keys (as stored) and right beside them, but for the jump's pair
    stored = f32(times) if rounding else times
    u = np.linspace(0, 1, 9)[1:-1]
    t = np.concatenate([(stored[:-1, None] + np.diff(stored)[:, None] * u).ravel(),
                        stored[1:] - 1e-7, stored[:-1] + 1e-7])
    t = t[((t < lo) | (t > hi)) & (t >= 0) & (t <= 2.0)]
    played = values.astype(np.float32).astype(np.float64)
    assert errors(channel, stored, played, t).max() <= tolerance * (1 + 1e-9)


@pytest.mark.parametrize("path", ["translation", "rotation"])
def test_a_steep_continuous_ramp_stays_a_miss(path):
    """A ramp of 2 over 20 microseconds (tanh): too fast for keys 0.5 ms
    apart, but continuous when looked at closely enough: no jump."""
    channel = Stepped(path, np.array([0.0, 1.0, 2.0]), 0.7317, 2.0, width=1e-5)
    tolerance = 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        times, values, jump, _ = _channel_keys(channel, tolerance, 0.0, 2.0)
    assert not jump.any()
    t = np.linspace(0.73, 0.7334, 20001)
    assert errors(channel, times, values, t).max() > 10 * tolerance      # missed
    assert np.diff(times).min() < 2 * MIN_KEY_SPACING                    # at the floor



class BendAndStep:
    """Keys 0.4 ms apart (closer than refinement can split) between which a
    vector bends too fast for them, with a step of `small` 50 ns before
    the second key (too far for the key time's own jump test)."""
    path = "translation"
    times = np.array([0.0, 4e-4, 1.0])

    def __init__(self, small):
        self.small = small

    def __call__(self, t):
        t = np.asarray(t, float)
        bend = 5e4 * np.minimum(t, 4e-4) ** 2
        return np.column_stack([bend + np.where(t >= 4e-4 - 5e-8, self.small, 0.0), t])


@pytest.mark.parametrize("small", [5e-4, 3e-3])
def test_a_step_under_the_tolerance_is_not_what_failed(small):
    """Of 0.5 times the tolerance, the step is a discontinuity but not what
    misses there: no jump (whose interval the report skips), the miss stays.
    Of 3 times, it is keyed as a jump."""
    channel = BendAndStep(small)
    times, values, jump, _ = _channel_keys(channel, 1e-3, 0.0, 1.0)
    assert jump.any() == (small > 1e-3)
    if not jump.any():
        t = np.linspace(0, 4e-4, 2001)
        assert errors(channel, times, values, t).max() > 1e-3          # missed
