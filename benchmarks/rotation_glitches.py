"""Measures the two glitches issue 18 removed, on the code at hand.

    python benchmarks/rotation_glitches.py

1. Inside rotation segments: the largest angular speed over the SPEC's bound
   2 max(|w(t_n+)|, |w(t_(n+1)-)|) + 2 pi / dt, on random 8-key tracks
   (neighbours up to 115 degrees apart, TCB in [-1, 1], spacing 0.2-2,
   clamped end rates up to 3 rad/s per axis), per timing and end condition.
2. Transitions between the clips of ../shared/data/mocap: the fastest
   frame-to-frame turn of any joint in the transition against the clips'
   own fastest, and the most a joint sweeps beyond the gap between the
   transition's end poses.
"""
import itertools
import pathlib
import sys

import numpy as np

import kbspline as kb

TIMINGS = ["kb", "3ds", "parabolic", "average"]
ENDS = ["natural", "phantom", "reflect", "clamped", "closed"]


def random_tracks(rng, n, ends, K=8):
    axes = rng.normal(size=(n, K, 3))
    steps = kb.quat_from_axis_angle(axes / np.linalg.norm(axes, axis=-1, keepdims=True),
                                    np.radians(rng.uniform(0, 115, (n, K))))
    q = np.empty((n, K, 4))
    q[:, 0] = steps[:, 0]
    for k in range(1, K):
        q[:, k] = kb.quat_multiply(q[:, k - 1], steps[:, k])
    times = np.concatenate([np.zeros((n, 1)), np.cumsum(rng.uniform(0.2, 2.0, (n, K - 1)), 1)],
                           axis=1)
    tcb = rng.uniform(-1, 1, (3, n, K))
    kw = {}
    if ends == "closed":
        q[:, -1] = q[:, 0]
        tcb[:, :, -1] = tcb[:, :, 0]
    if ends == "clamped":
        kw = dict(start_angular_velocity=rng.uniform(-3, 3, (n, 3)),
                  end_angular_velocity=rng.uniform(-3, 3, (n, 3)))
    return times, q, tcb, kw


def worst_ratio(spline, per_segment=400):
    tin, tout = spline.tangents
    knots = spline.breakpoints
    n, S = knots.shape[0], knots.shape[1] - 1
    first = 1 if spline.ends == "phantom" else 0
    u = (np.arange(per_segment) + 0.5) / per_segment
    dt = np.diff(knots, axis=1)
    t = knots[:, :-1, None] + dt[:, :, None] * u
    speed = np.linalg.norm(spline.angular_velocity(t.reshape(n, -1)), axis=-1)
    speed = speed.reshape(n, S, per_segment).max(axis=-1)
    seg = np.arange(S) + first
    bound = 2 * np.maximum(2 * np.linalg.norm(tout[:, seg], axis=-1),
                           2 * np.linalg.norm(tin[:, seg + 1], axis=-1)) + 2 * np.pi / dt
    return (speed / bound).max()


def segments():
    print("| timing | " + " | ".join(ENDS) + " |")
    print("|---|" + "---|" * len(ENDS))
    for timing in TIMINGS:
        row = []
        for ends in ENDS:
            rng = np.random.default_rng([TIMINGS.index(timing), ENDS.index(ends)])
            times, q, tcb, kw = random_tracks(rng, 300, ends)
            row.append(worst_ratio(kb.RotationSpline(times, q, *tcb, timing=timing, ends=ends,
                                                     **kw)))
        print(f"| {timing} | " + " | ".join(f"{r:.2f}" for r in row) + " |")


def transitions():
    from kbspline.motion import read_bvh, transition
    mocap = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"
    clips = {p.name.split("_")[1]: read_bvh(p) for p in sorted(mocap.glob("*.bvh"))}
    if not clips:
        print(f"(no clips in {mocap}: transitions not measured)")
        return

    def turns(r):
        return 2 * np.arccos(np.clip(np.abs(np.sum(r[:, 1:] * r[:, :-1], axis=-1)), 0, 1))

    worst_turn, worst_sweep = (0.0, ""), (0.0, "")
    for (na, a), (nb, b) in itertools.product(clips.items(), repeat=2):
        fastest = max(turns(a.rotations()).max(), turns(b.rotations()).max())
        for frames in [6, 12, 24, 48, 96]:
            r = transition(a, b, frames).rotations()[:, a.num_frames - 1:a.num_frames + frames + 1]
            step = turns(r)
            direct = 2 * np.arccos(np.clip(np.abs(np.sum(r[:, 0] * r[:, -1], axis=-1)), 0, 1))
            where = f"{na} -> {nb}, {frames} frames"
            worst_turn = max(worst_turn, (step.max() / fastest, where))
            worst_sweep = max(worst_sweep, (np.degrees((step.sum(axis=1) - direct).max()), where))
    print(f"fastest transition frame: {worst_turn[0]:.2f} of the clips' fastest turn "
          f"({worst_turn[1]})")
    print(f"largest sweep beyond the pose gap: {worst_sweep[0]:.0f} degrees ({worst_sweep[1]})")


if __name__ == "__main__":
    segments()
    transitions()
    sys.exit(0)
