"""The keyframe animation of Eberly's paper (section 4): a leg.

The hip follows a PositionSpline; the hip, knee and ankle angles are
rotations about (0, 0, 1) interpolated by one batched RotationSpline (three
tracks), read back as signed angles as the seed does (the interpolated axis
may come out as (0, 0, -1), and then the angle changes sign); inverse
kinematics places knee, ankle and foot.
Like the seed, keys 0 and 6 repeat their neighbours and only shape the
tangents (ends='phantom'), so the animation runs over t in [0, 4].
"""
import numpy as np

from .position import PositionSpline
from .quaternion import quat_from_axis_angle, quat_to_axis_angle
from .rotation import RotationSpline

TIMES = np.arange(7.0) - 1.0
HIP = np.array([[50.0, 34.0], [50.0, 34.0], [80.0, 33.0], [110.0, 33.0], [140.0, 34.0],
                [207.0, 34.0], [207.0, 34.0]])
ANGLES = np.array([  # hip, knee, ankle (radians), one row per track
    [0.0, 0.0, 0.392699, 0.589049, 0.490874, 0.0, 0.0],
    [2.748894, 2.748894, 1.963495, 2.356194, 2.748894, 2.748894, 2.748894],
    [-1.178097, -1.178097, -1.178097, -1.570796, -1.963495, -1.178097, -1.178097],
])
THIGH, CALF, FOOT = 70.0, 70.0, 15.0


def inverse_kinematics(hip, hip_angle, knee_angle, ankle_angle):
    """Knee, ankle and foot positions (..., 2) from the seed's equation (6),
    in screen coordinates (y points down)."""
    knee = hip + THIGH * np.stack([np.sin(hip_angle), np.cos(hip_angle)], axis=-1)

    def turn(origin, towards, angle, length, unit):
        d = (towards - origin) / unit
        c, s = np.cos(angle)[..., None], np.sin(angle)[..., None]
        rotated = np.concatenate([c * d[..., :1] + s * d[..., 1:],
                                  -s * d[..., :1] + c * d[..., 1:]], axis=-1)
        return origin + length * rotated

    ankle = turn(knee, hip, knee_angle, CALF, THIGH)
    foot = turn(ankle, knee, ankle_angle, FOOT, CALF)
    return knee, ankle, foot


def leg_splines():
    """(hip spline, angle rotation spline) as in the seed: KB timing, phantom ends."""
    hip = PositionSpline(TIMES, HIP, timing="kb", ends="phantom")
    angles = RotationSpline(TIMES, quat_from_axis_angle([0.0, 0.0, 1.0], ANGLES),
                            timing="kb", ends="phantom")
    return hip, angles


def joint_angles(times):
    """Hip, knee and ankle angles (3, M): the interpolated rotations about z,
    with the angle negated where the axis came out as (0, 0, -1)."""
    axis, angle = quat_to_axis_angle(leg_splines()[1](times))
    return np.where(axis[..., 2] >= 0, angle, -angle)


def animate(times):
    """Hip, knee, ankle, foot positions (M, 2) each, and the hip velocity."""
    hip_spline = leg_splines()[0]
    hip = hip_spline(times)
    return (hip, *inverse_kinematics(hip, *joint_angles(times))), hip_spline.velocity(times)


def print_table(frames, write=print):
    times = np.linspace(0.0, 4.0, frames)
    (hip, knee, ankle, foot), velocity = animate(times)
    angles = joint_angles(times)
    write("Eberly's leg (Eberly's paper, section 4): hip by PositionSpline, angles by "
          "RotationSpline")
    write(f"{'t':>5} {'hip x':>8} {'hip y':>7} {'vx':>7} {'vy':>7} {'hip°':>7} "
          f"{'knee°':>7} {'ankle°':>7} {'foot x':>8} {'foot y':>7}")
    for i, t in enumerate(times):
        deg = np.round(np.degrees(angles[:, i]), 2) + 0.0  # no "-0.00"
        write(f"{t:5.2f} {hip[i, 0]:8.2f} {hip[i, 1]:7.2f} {velocity[i, 0]:7.2f} "
              f"{velocity[i, 1]:7.2f} {deg[0]:7.2f} {deg[1]:7.2f} {deg[2]:7.2f} "
              f"{foot[i, 0]:8.2f} {foot[i, 1]:7.2f}")


def plot(path):
    """Writes a PNG of the key poses, interpolated poses, and the hip path
    with velocity arrows.  Returns False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig = figure(plt)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


#: Seconds of travel an arrow of the hip's velocity is drawn as.
ARROW_SECONDS = 0.5
#: Times of the arrows, centred on the hip: halfway between keys, so the path
#: shows between them and none runs past its ends.
ARROW_TIMES = np.arange(0.5, 4.0, 1.0)


def figure(plt):
    """The demo's figure: the key poses in black, the poses between in red,
    the hip's path in blue and its velocity as arrows laid along it; the
    legend under the axes, margins around the leg."""
    fig, ax = plt.subplots(figsize=(8.0, 7.4))
    t_path = np.linspace(0.0, 4.0, 200)
    (hip, *_), _ = animate(t_path)
    t_pose = np.linspace(0.0, 4.0, 17)
    (p_hip, knee, ankle, foot), _ = animate(t_pose)
    for i in range(len(t_pose)):
        chain = np.stack([p_hip[i], knee[i], ankle[i], foot[i]])
        ax.plot(chain[:, 0], chain[:, 1], color="tab:red", alpha=0.35, lw=1,
                label="poses between the keys" if i == 0 else None)
    key_hip, key_angles = HIP[1:-1], ANGLES[:, 1:-1]
    k_knee, k_ankle, k_foot = inverse_kinematics(key_hip, *key_angles)
    for i in range(len(key_hip)):
        chain = np.stack([key_hip[i], k_knee[i], k_ankle[i], k_foot[i]])
        ax.plot(chain[:, 0], chain[:, 1], color="black", lw=2.2,
                label="key frames" if i == 0 else None)
    ax.plot(key_hip[:, 0], key_hip[:, 1], "ko", ms=5)
    ax.plot(hip[:, 0], hip[:, 1], color="tab:blue", lw=1.5, label="hip path")
    (a_hip, *_), velocity = animate(ARROW_TIMES)
    ax.quiver(a_hip[:, 0], a_hip[:, 1], velocity[:, 0], velocity[:, 1], color="tab:green",
              angles="xy", scale_units="xy", scale=1.0 / ARROW_SECONDS, pivot="middle",
              width=0.005, headwidth=3.5, headlength=4.5, zorder=3,
              label=f"hip velocity (arrow: {ARROW_SECONDS:g} s of travel)")
    points = np.vstack([hip, knee, ankle, foot])
    pad = 12.0
    ax.set_xlim(points[:, 0].min() - pad, points[:, 0].max() + pad)
    ax.set_ylim(points[:, 1].max() + pad, points[:, 1].min() - 1.5 * pad)  # y grows downwards
    ax.set_aspect("equal")
    ax.set_xlabel("x (pixels)")
    ax.set_ylabel("y (pixels, growing downwards as on a screen)")
    ax.set_title("kbspline demo: the keyframed leg of Eberly's paper, section 4")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.09), ncol=2, fontsize=9,
              frameon=False)
    fig.tight_layout()
    return fig
