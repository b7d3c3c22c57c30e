"""Transitions between clips: squad between the two poses with both
angular velocities matched, and a Hermite root path (the future work that
seed 003 names, in place of its linear Euler blend)."""
from __future__ import annotations

import numpy as np

from ..position import PositionSpline
from ..quaternion import quat_from_axis_angle, quat_multiply, quat_to_matrix
from ..rotation import RotationSpline
from .bvh import Motion

UP = np.array([0.0, 1.0, 0.0])  # BVH's vertical axis


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


def transition(a: Motion, b: Motion, frames: int = 24) -> Motion:
    """Clip `a`, then `frames` frames of transition, then clip `b` placed to
    continue `a`'s heading and position.

    Each joint's rotation over the transition is a two-key squad spline from
    a's last pose to b's first, its end angular velocities clamped to those
    of the two clips' own splines; the root follows a cubic Hermite segment
    matching both root velocities.  b is turned about the vertical by the
    difference of headings and moved to start where the Hermite segment
    ends, a's end position plus the mean of the two root velocities times
    the transition's duration.  Both clips must share a skeleton and frame
    time (resample one first otherwise)."""
    if [j.name for j in a.joints] != [j.name for j in b.joints]:
        raise ValueError("the two clips must have the same joints in the same order")
    if abs(a.frame_time - b.frame_time) > 1e-9 * a.frame_time:
        raise ValueError(f"the clips' frame times differ ({a.frame_time} and {b.frame_time}): "
                         f"resample one to the other's rate first")
    frames = int(frames)
    if frames < 1:
        raise ValueError(f"frames must be at least 1, not {frames}")
    root = moving_root(a)
    dt = a.frame_time
    duration = (frames + 1) * dt
    a_rot, a_tr = a.rotations(), a.translations()
    a_omega, a_vel = _end_rates(a, at_end=True)
    yaw = heading(a_rot[root, -1]) - heading(b.rotations()[root, 0])
    b_omega0, b_vel0 = _end_rates(b, at_end=False)
    turn = quat_to_matrix(quat_from_axis_angle(UP, yaw))
    b_vel0 = b_vel0 @ turn.T                     # b's velocities in a's heading
    b_omega0[root] = turn @ b_omega0[root]
    start = a_tr[root, -1] + 0.5 * (a_vel[root] + b_vel0[root]) * duration
    b_rot, b_tr = place(b, root, yaw, start)

    key_times = np.array([0.0, duration])
    t = np.arange(1, frames + 1) * dt
    rot = RotationSpline(key_times, np.stack([a_rot[:, -1], b_rot[:, 0]], axis=1),
                         ends="clamped", start_angular_velocity=a_omega,
                         end_angular_velocity=b_omega0)(t)
    tr = PositionSpline(key_times, np.stack([a_tr[:, -1], b_tr[:, 0]], axis=1),
                        ends="clamped", start_velocity=a_vel, end_velocity=b_vel0)(t)
    rotations = np.concatenate([a_rot, rot, b_rot], axis=1)
    translations = np.concatenate([a_tr, tr, b_tr], axis=1)
    out = a.with_frames(rotations, translations, dt)
    # a's frames are kept as they were; what follows continues from its last
    # frame on the same turn of each Euler channel
    out.align_turns(a.num_frames - 1, a.frames[-1])
    out.frames[:a.num_frames] = a.frames
    return out
