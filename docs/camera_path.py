"""A camera path sampled at equal steps of time and at equal steps of arc
length, and its speed both ways: writes docs/camera_path.png.

    python docs/camera_path.py [OUTPUT.png]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from kbspline import PositionSpline  # noqa: E402

# Keys an animator might set: uneven in time and in distance.
TIMES = [0.0, 1.0, 1.5, 3.0, 3.5, 5.0]
KEYS = [[0.0, 0.0], [4.0, 3.0], [5.0, 3.2], [9.0, 0.0], [9.5, -0.5], [12.0, 2.0]]


def main(path="docs/camera_path.png"):
    path_spline = PositionSpline(TIMES, KEYS, tension=0.1)
    n = 40
    t_uniform = np.linspace(*path_spline.domain, n)
    t_constant = path_spline.equal_length_times(n)
    fine = np.linspace(*path_spline.domain, 400)
    speed = np.linalg.norm(path_spline.velocity(fine), axis=-1)
    # The reparameterised path played over the same duration: new time tau
    # maps to arc length s = total * (tau - start) / duration.  Its speed is
    # measured from positions, |dX| / dtau, not assumed.
    start, end = path_spline.domain
    s = path_spline.total_length * (fine - start) / (end - start)
    moved = np.linalg.norm(np.diff(path_spline.position_at_length(s), axis=0), axis=-1)
    tau_mid, constant_speed = 0.5 * (fine[1:] + fine[:-1]), moved / np.diff(fine)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), height_ratios=[3, 2])
    curve = path_spline(fine)
    top.plot(curve[:, 0], curve[:, 1], color="0.7", lw=1)
    top.plot(*path_spline(t_uniform).T, "o", ms=5, color="tab:red",
             label="equal steps of time")
    top.plot(*(path_spline(t_constant).T + np.array([[0.0], [-0.6]])), "o", ms=5,
             color="tab:blue", label="equal steps of arc length (shifted down)")
    top.plot(*np.array(KEYS).T, "k^", ms=8, label="keys")
    top.set_aspect("equal")
    top.legend(fontsize=8, loc="upper left")
    top.set_title(f"camera path, {n} samples each")
    bottom.plot(fine, speed, color="tab:red", label="speed sampling in t")
    bottom.plot(tau_mid, constant_speed, color="tab:blue",
                label="speed at equal arc length (measured)")
    bottom.set_xlabel("time")
    bottom.set_ylabel("speed (units / time)")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print("wrote", main(*sys.argv[1:]))
