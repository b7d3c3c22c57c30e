"""Transitions between clips: each clip coasts on from its end to a stop
and the two are blended, so both poses and angular velocities are matched
without holding a velocity over the whole transition, and a Hermite root
path (the future work that seed 003 names, in place of its linear Euler
blend)."""
from __future__ import annotations

import numpy as np

from .._checks import _check_count
from ..position import PositionSpline
from ..quaternion import quat_exp, quat_from_axis_angle, quat_multiply, quat_to_matrix, slerp
from ..rotation import RotationSpline
from .clip import Motion, check_motion

UP = np.array([0.0, 1.0, 0.0])  # BVH's vertical axis
COAST_SECONDS = 0.25  # time a clip's end velocity takes to die away
COAST_ANGLE = np.pi / 6  # furthest a joint turns on at its clip's end rate


def moving_root(motion):
    """The joint that carries the clip's travel: the first joint whose
    translation channels change, else joint 0."""
    translations = motion.translations()
    for j in range(len(motion.joints)):
        if np.ptp(translations[j], axis=0).max() > 0:
            return j
    return 0


def heading(q):
    """Yaw about UP of the forward axis (+z) turned by q, radians."""
    forward = quat_to_matrix(q) @ np.array([0.0, 0.0, 1.0])
    return np.arctan2(forward[..., 0], forward[..., 2])


def _end_rates(motion, at_end):
    """Angular velocities (J, 3) and root velocities (J, 3) at the clip's
    first or last frame, from its own splines."""
    t = motion.times[-1] if at_end else 0.0
    rot = RotationSpline(motion.times, motion.rotations())
    pos = PositionSpline(motion.times, motion.translations())
    return rot.angular_velocity(t), pos.velocity(t)


def place(motion, root, yaw, start):
    """`motion` turned by `yaw` about UP and moved so its root starts at `start`."""
    turn = quat_from_axis_angle(UP, yaw)
    rotations, translations = motion.rotations(), motion.translations()
    origin = translations[root, 0].copy()
    matrix = quat_to_matrix(turn)
    translations[root] = (translations[root] - origin) @ matrix.T + start
    rotations[root] = quat_multiply(turn, rotations[root])
    return rotations, translations


def coast(t, tau):
    """Distance covered at unit initial speed, decelerating uniformly to a
    stop at time tau: t - t^2 / (2 tau), then tau / 2.  Slope 1 at 0."""
    t = np.minimum(t, tau)
    return t - t * t / (2.0 * tau)


def smoothstep(x):
    """3x^2 - 2x^3: 0 to 1 with zero slope at both ends."""
    return x * x * (3.0 - 2.0 * x)


def cruise_then_coast(t, speed):
    """Angle turned by time t (M,) at initial speeds (J, 1): on at that
    speed, then slowing to a stop within COAST_SECONDS, having turned
    COAST_ANGLE in all (a fast joint slows from the start, and sooner)."""
    with np.errstate(divide="ignore"):
        reach = COAST_ANGLE / speed                           # time at full speed
    tau = np.minimum(COAST_SECONDS, 2.0 * reach)
    cruise = reach - 0.5 * tau
    return np.minimum(t, cruise) + coast(np.maximum(t - cruise, 0.0), tau)


def _coasting(q, omega, t):
    """Rotations q (J, 4) turning on from world angular velocities omega
    (J, 3) by cruise_then_coast, at times t (M,): (J, M, 4)."""
    speed = np.linalg.norm(omega, axis=-1, keepdims=True)
    half = 0.5 * omega[:, None, :] * cruise_then_coast(t[None, :], speed)[:, :, None]
    turn = quat_exp(np.concatenate([np.zeros(half.shape[:-1] + (1,)), half], axis=-1))
    return quat_multiply(turn, q[:, None, :])


def blend_rotations(q_a, omega_a, q_b, omega_b, t, duration):
    """(J, M, 4): a's last pose turning on from its angular velocity,
    slerped by a smoothstep into b's first pose turning back from its own.
    Poses and angular velocities match both clips at t = 0 and t = duration;
    no joint turns on by more than COAST_ANGLE from either end; where b
    starts as a's uniform turn would continue, the turn goes on uniformly."""
    from_a = _coasting(q_a, omega_a, t)
    from_b = _coasting(q_b, -omega_b, duration - t)
    return slerp(from_a, from_b, smoothstep(t / duration)[None, :])


def blend_translations(x_a, v_a, x_b, v_b, t, duration, tau):
    """(J, M, 3): the same blend for translations, each end's velocity
    dying away over tau."""
    from_a = x_a[:, None] + v_a[:, None] * coast(t, tau)[None, :, None]
    from_b = x_b[:, None] - v_b[:, None] * coast(duration - t, tau)[None, :, None]
    s = smoothstep(t / duration)[None, :, None]
    return (1.0 - s) * from_a + s * from_b


def transition(a: Motion, b: Motion, frames: int = 24) -> Motion:
    """Clip `a`, a transition, then clip `b` placed to continue `a`.

    Parameters
    ----------
    a, b : Motion
        The clips to leave and to join, of at least 2 frames each (the rates
        at the joins come from splines through each clip's frames); they
        must share a skeleton and frame time (resample one first otherwise).
    frames : int
        Frames of transition, a whole number >= 1.

    Returns
    -------
    Motion

    Raises
    ------
    ValueError
        For a clip of fewer than 2 frames, clips with different joints or
        frame times, or frames that is not a whole number >= 1.
    TypeError
        For a clip that is not a Motion or frames that is not a number.

    Notes
    -----
    Over the transition each joint's rotation continues `a`'s last frame at
    `a`'s end angular velocity, then slows to a stop within COAST_SECONDS,
    having turned on by COAST_ANGLE at most; likewise it runs back from `b`'s
    first frame at `b`'s start angular velocity; a smoothstep slerps the first
    into the second.  Translations do the same, each velocity dying away
    within COAST_SECONDS (or half the transition).  So poses and velocities
    match both clips, and a long transition does not hold a velocity for its
    whole length (which made joints spin turn after turn).  The root travels
    on a cubic Hermite path in the horizontal plane that matches both root
    velocities; `b` is turned about the vertical by the difference of headings
    and moved to start where that path ends, at its own height.
    """
    check_motion(a, "a")
    check_motion(b, "b")
    for name, clip in (("a", a), ("b", b)):
        if clip.num_frames < 2:
            raise ValueError(f"{name} has {clip.num_frames} frame(s); transition needs clips of "
                             f"at least 2 frames (the rates at the joins come from splines "
                             f"through each clip's frames)")
    if [j.name for j in a.joints] != [j.name for j in b.joints]:
        raise ValueError("the two clips must have the same joints in the same order")
    if abs(a.frame_time - b.frame_time) > 1e-9 * a.frame_time:
        raise ValueError(f"the clips' frame times differ ({a.frame_time} and {b.frame_time}): "
                         f"resample one to the other's rate first")
    frames = _check_count("frames", frames, 1)
    root = moving_root(a)
    dt = a.frame_time
    duration = (frames + 1) * dt
    tau = min(COAST_SECONDS, 0.5 * duration)
    a_rot, a_tr = a.rotations(), a.translations()
    a_omega, a_vel = _end_rates(a, at_end=True)
    yaw = heading(a_rot[root, -1]) - heading(b.rotations()[root, 0])
    b_omega0, b_vel0 = _end_rates(b, at_end=False)
    turn = quat_to_matrix(quat_from_axis_angle(UP, yaw))
    b_vel0 = b_vel0 @ turn.T                     # b's velocities in a's heading
    b_omega0[root] = turn @ b_omega0[root]
    flat = np.eye(3) - np.outer(UP, UP)
    start = a_tr[root, -1] + 0.5 * (a_vel[root] + b_vel0[root]) @ flat * duration
    start += UP * (b.translations()[root, 0] @ UP)   # b keeps its own height
    b_rot, b_tr = place(b, root, yaw, start)

    t = np.arange(1, frames + 1) * dt
    rot = blend_rotations(a_rot[:, -1], a_omega, b_rot[:, 0], b_omega0, t, duration)
    tr = blend_translations(a_tr[:, -1], a_vel, b_tr[:, 0], b_vel0, t, duration, tau)
    path = PositionSpline([0.0, duration], np.stack([a_tr[root, -1], b_tr[root, 0]]),
                          ends="clamped", start_velocity=a_vel[root],
                          end_velocity=b_vel0[root])(t)
    tr[root] = tr[root] @ np.outer(UP, UP) + path @ flat
    rotations = np.concatenate([a_rot, rot, b_rot], axis=1)
    translations = np.concatenate([a_tr, tr, b_tr], axis=1)
    out = a.with_frames(rotations, translations, dt)
    # a's frames are kept as they were; what follows continues from its last
    # frame on the same turn of each Euler channel
    out.align_turns(a.num_frames - 1, a.frames[-1])
    out.frames[:a.num_frames] = a.frames
    return out
