"""Transitions between real clips never glitch or spin: no transition frame
turns a joint further than the fastest frame-to-frame turn of either clip,
no joint sweeps more than its coasts allow, and the rates at both joins are
the clips' own."""
import itertools

import numpy as np
import pytest

from kbspline import quat_conjugate, quat_log, quat_multiply
from kbspline.motion import read_bvh, transition
from kbspline.motion.transition import COAST_ANGLE, blend_rotations, cruise_then_coast
from mocap import CLIPS, MISSING, angle_between

FRAMES = [6, 12, 24, 48, 96]


@pytest.fixture(scope="module")
def clips():
    found = {path.name.split("_")[1]: read_bvh(path) for path in CLIPS}
    if len(found) < 3:
        pytest.skip(MISSING)
    return found


def turns(rotations):
    """(J, F-1): each joint's rotation angle from one frame to the next."""
    return angle_between(rotations[:, 1:], rotations[:, :-1])


@pytest.mark.parametrize("pair", list(itertools.product(["walk", "run", "dash"], repeat=2)),
                         ids="->".join)
def test_no_frame_turns_further_than_the_clips(clips, pair):
    a, b = (clips[name] for name in pair)
    fastest = max(turns(a.rotations()).max(), turns(b.rotations()).max())
    for frames in FRAMES:
        out = transition(a, b, frames)
        # from a's last frame through the transition into b's first
        window = out.rotations()[:, a.num_frames - 1:a.num_frames + frames + 1]
        assert turns(window).max() <= fastest, frames
        swept = turns(window).sum(axis=1)
        direct = angle_between(window[:, 0], window[:, -1])
        # out and back by at most COAST_ANGLE from each end, on top of the gap
        assert np.all(swept <= direct + 4 * COAST_ANGLE + 1e-9), frames


def body_rates(q, dt):
    """Body angular velocities between consecutive unit quaternions (..., M, 4)."""
    return 2 * quat_log(quat_multiply(quat_conjugate(q[..., :-1, :]), q[..., 1:, :]))[..., 1:] / dt


def test_blend_meets_both_poses_and_rates():
    rng = np.random.default_rng(3)
    q_a, q_b = (v / np.linalg.norm(v, axis=-1, keepdims=True) for v in rng.normal(size=(2, 6, 4)))
    omega_a, omega_b = rng.normal(scale=4.0, size=(2, 6, 3))
    duration, h = 0.8, 1e-6
    t = np.array([0.0, h, duration - h, duration])
    q = blend_rotations(q_a, omega_a, q_b, omega_b, t, duration)
    np.testing.assert_allclose(np.abs(np.sum(q[:, 0] * q_a, axis=-1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(q[:, -1] * q_b, axis=-1)), 1.0, atol=1e-12)
    world = [2 * quat_multiply(q[:, i + 1] - q[:, i], quat_conjugate(q[:, i]))[:, 1:] / h
             for i in (0, 2)]
    np.testing.assert_allclose(world[0], omega_a, atol=1e-4 * np.abs(omega_a).max())
    np.testing.assert_allclose(world[1], omega_b, atol=1e-4 * np.abs(omega_b).max())


def test_uniform_turn_goes_on_uniformly():
    """Where b starts as a's uniform turn continues, the blend is that turn."""
    omega = np.array([[0.3, -0.4, 0.5]])
    q_a = np.array([[1.0, 0.0, 0.0, 0.0]])
    duration = 0.5                      # turns by less than COAST_ANGLE
    half = 0.5 * omega * duration
    q_b = np.concatenate([[np.cos(np.linalg.norm(half))],
                          np.sin(np.linalg.norm(half)) * half[0] / np.linalg.norm(half)])[None]
    t = np.linspace(0.0, duration, 11)
    q = blend_rotations(q_a, omega, q_b, omega, t, duration)
    np.testing.assert_allclose(body_rates(q, t[1]), np.broadcast_to(omega, (1, 10, 3)),
                               atol=1e-12)


def test_cruise_then_coast_profile():
    """Slope 1 at the start, C1, monotone, and COAST_ANGLE turned in all."""
    speed = np.array([[0.1], [1.0], [3.0], [40.0]])
    t = np.linspace(0.0, 20.0, 200_001)
    phi = cruise_then_coast(t, speed)
    slope = np.diff(phi, axis=1) / np.diff(t)
    np.testing.assert_allclose(cruise_then_coast(np.array([1e-9]), speed)[:, 0] / 1e-9, 1.0,
                               rtol=1e-6)
    assert np.all(slope >= -1e-12) and np.all(slope <= 1.0 + 1e-12)
    assert np.abs(np.diff(slope, axis=1)).max() < 1e-2        # no kink
    np.testing.assert_allclose(phi[:, -1] * speed[:, 0], COAST_ANGLE, rtol=1e-12)
    np.testing.assert_array_equal(cruise_then_coast(t, np.zeros((1, 1)))[0], t)
