"""Adaptive LINEAR keys reach every tolerance that keys MIN_KEY_SPACING
apart can (kbspline.formats.adaptive): a miss is left only where the keys
around it are as dense as that spacing allows, checked against slerp
playback written here from its definition on dense probes; and the
playback UsdSkel gives nearly equal samples (an unnormalised lerp) is
counted when asked."""
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import RotationSpline, quat_from_axis_angle
from kbspline.formats.adaptive import MIN_KEY_SPACING, linear_keys, playback_error
from kbspline.motion import read_bvh
from test_adaptive_keys import angles, slerp_playback

WALK = pathlib.Path(__file__).parent / "data" / "cmu" / "131_01.bvh"
# A miss's neighbourhood: this many key spacings either side, within the
# spline's own keys.
REACH = 8


def interval_errors(spline, keys, track, probes=40):
    """(intervals,) the largest angle between the spline and slerp of its
    float32 values at the keys, at `probes` points inside each interval."""
    u = np.linspace(0, 1, probes + 2)[1:-1]
    t = (keys[:-1, None] + np.diff(keys)[:, None] * u).ravel()
    truth = np.asarray(spline(t)).reshape(-1, len(t), 4)[track]
    stored = np.asarray(spline(keys)).reshape(-1, len(keys), 4)[track]
    stored = stored.astype(np.float32).astype(np.float64)
    played = slerp_playback(keys, stored, t)
    return angles(played, truth).reshape(len(keys) - 1, probes).max(axis=1)


def assert_misses_only_at_the_floor(spline, keys, track, tolerance, own_keys,
                                    spacing=MIN_KEY_SPACING):
    """Every interval beyond the tolerance is too short to halve, and the
    keys around it are on average as close as the spacing allows: within
    1.25 spacings (one piece of a stretch may take the slack), or
    the spline's own interval split as finely as the spacing allows."""
    error = interval_errors(spline, keys, track)
    for i in np.flatnonzero(error > tolerance):
        length = keys[i + 1] - keys[i]
        assert length < 2 * spacing, (i, length, error[i])
        at = np.searchsorted(own_keys, keys[i], side="right") - 1
        lo = max(own_keys[at], keys[i] - REACH * spacing)
        hi = min(own_keys[at + 1], keys[i + 1] + REACH * spacing)
        near = keys[(keys >= lo) & (keys <= hi)]
        own = own_keys[at + 1] - own_keys[at]
        densest = max(1.25 * spacing, own / np.floor(own / spacing) / 0.99)
        assert np.ptp(near) / (len(near) - 1) <= densest, (i, near, error[i])


def jerky_rotations(rng, tracks, n_keys):
    """Keys 4 to 40 ms apart turning up to 1.5 rad: tight tolerances hit
    the spacing floor."""
    times = np.cumsum(rng.uniform(0.004, 0.04, n_keys))
    axes = rng.normal(size=(tracks, n_keys, 3))
    q = quat_from_axis_angle(axes / np.linalg.norm(axes, axis=-1, keepdims=True),
                             rng.uniform(-1.5, 1.5, (tracks, n_keys)))
    return RotationSpline(times, q, *rng.uniform(-1, 1, (3, tracks, n_keys)))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), tolerance=st.sampled_from([1e-3, 1e-4, 1e-5]),
       shared=st.booleans(), spacing=st.sampled_from([MIN_KEY_SPACING, 2e-4]))
def test_a_miss_is_left_only_where_no_legal_split_is(seed, tolerance, shared, spacing):
    rng = np.random.default_rng(seed)
    spline = jerky_rotations(rng, 2, 6)
    keys = linear_keys(spline, tolerance, shared=shared, min_spacing=spacing)
    reported = playback_error(spline, keys)
    for track in range(2):
        mine = keys[0 if shared else track]
        own = np.broadcast_to(spline.breakpoints, (2, spline.breakpoints.shape[-1]))
        own = np.unique(own) if shared else own[track]
        assert np.diff(mine).min() >= spacing * (1 - 1e-9)
        assert_misses_only_at_the_floor(spline, mine, track, tolerance, own, spacing)
        if reported[track] <= tolerance:     # success reported: a dense check agrees
            assert interval_errors(spline, mine, track, probes=200).max() <= tolerance


@pytest.fixture(scope="module")
def walk():
    clip = read_bvh(WALK)
    names = [joint.name for joint in clip.joints]
    return clip, names, RotationSpline(clip.times, clip.rotations())


# On main (2026-12-07) 131_01 missed 1e-4 rad on these 11 channels (Hips at
# 1.9e-4): a first split left 0.93 ms pieces that could not be halved.
MISSED_BEFORE = ["Hips", "LeftAnkle", "LeftToe", "RightHip", "RightKnee", "RightToe",
                 "RightShoulder", "RightElbow", "RightWrist", "RThumb", "LeftWrist"]


@pytest.mark.parametrize("shared", [False, True])
def test_the_cmu_walk_misses_only_where_keys_cannot_be_closer(walk, shared):
    clip, names, spline = walk
    keys = linear_keys(spline, 1e-4, shared=shared)
    error = playback_error(spline, keys)
    assert error[names.index("Hips")] <= 1e-4
    missed = {names[j] for j in np.flatnonzero(error > 1e-4)}
    # RThumb's flip and two arm spikes need keys closer than the spacing
    assert "RThumb" in missed and missed <= {"RThumb", "RightWrist", "RightShoulder"}
    for j in sorted(names.index(name) for name in missed):
        mine = keys[0 if shared else j]
        assert_misses_only_at_the_floor(spline, mine, j, 1e-4, clip.times)


def test_the_thumb_flip_cannot_be_met_at_the_spacing_floor(walk):
    """RThumb turns ~179 degrees in one frame: every interval MIN_KEY_SPACING
    long around the worst time misses 1e-4 rad many times over, so that
    miss is honest."""
    clip, names, spline = walk
    j = names.index("RThumb")
    thumb = RotationSpline(clip.times, clip.rotations()[j])
    (keys,) = linear_keys(thumb, 1e-4)
    i = np.argmax(interval_errors(thumb, keys, 0))
    frame = np.searchsorted(clip.times, keys[i], side="right") - 1
    flip = angles(*np.asarray(thumb(clip.times[frame:frame + 2])))
    assert np.radians(170) < flip < np.pi
    # the worst time of the placed keys' worst interval, within its probes
    u = np.linspace(0, 1, 402)[1:-1]
    t = keys[i] + (keys[i + 1] - keys[i]) * u
    played = slerp_playback(keys, np.asarray(thumb(keys)).astype(np.float32).astype(float), t)
    worst = t[np.argmax(angles(played, np.asarray(thumb(t))))]
    for start in worst - MIN_KEY_SPACING * np.linspace(0, 1, 21):
        ends = np.array([start, start + MIN_KEY_SPACING])
        assert interval_errors(thumb, ends, 0)[0] > 10 * 1e-4


def unnormalised_matrix(q):
    """The rotation-matrix formula applied to any q (w, x, y, z): |q|^2 R + (1 - |q|^2) I."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    rows = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def gf_slerp_playback(keys, q, t):
    """UsdSkel's interpolation of quaternion samples (GfSlerp): a plain lerp,
    not normalised, where 1 - |q0 . q1| <= 1e-5, else shorter-arc slerp."""
    k = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 2)
    s = ((t - keys[k]) / (keys[k + 1] - keys[k]))[:, None]
    p0, p1 = q[k], q[k + 1]
    dot = np.sum(p0 * p1, axis=1, keepdims=True)
    p1 = np.where(dot < 0, -p1, p1)
    return np.where(1 - np.abs(dot) <= 1e-5, (1 - s) * p0 + s * p1, slerp_playback(keys, q, t))


@pytest.mark.parametrize("tolerance", [1e-5, 3e-6])
def test_usd_lerp_of_close_samples_is_counted(tolerance):
    """Near a half turn a slow motion puts samples so close that UsdSkel
    lerps them; without lerp_within that costs ~15 % beyond the tolerance."""
    rng = np.random.default_rng(1)
    times = np.linspace(0, 2, 9)
    q = quat_from_axis_angle([0.3, 0.2, 1.0], np.pi - 0.4 + rng.uniform(-0.3, 0.3, 9))
    spline = RotationSpline(times, q)
    t = np.linspace(0, 2, 40001)
    truth = unnormalised_matrix(np.asarray(spline(t)))
    moved = {}
    for within in (0.0, 1e-5):
        (keys,) = linear_keys(spline, tolerance, shared=True, lerp_within=within)
        stored = np.asarray(spline(keys)).astype(np.float32).astype(np.float64)
        played = unnormalised_matrix(gf_slerp_playback(keys, stored, t))
        moved[within] = np.linalg.norm(played - truth, ord=2, axis=(-2, -1)).max()
    assert moved[1e-5] <= tolerance < moved[0.0]


@pytest.mark.parametrize("within", [-1e-5, np.nan, np.inf])
def test_bad_lerp_within(within):
    spline = RotationSpline([0, 1], [[1, 0, 0, 0], [0, 1, 0, 0]])
    with pytest.raises(ValueError, match="lerp_within"):
        linear_keys(spline, 1e-3, lerp_within=within)
