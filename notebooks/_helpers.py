"""Plot helpers shared by the notebooks (kept out of kbspline itself)."""
import pathlib

import numpy as np

# Eberly's demo: eight control points, the middle six selectable (seed 000).
EIGHT_POINTS = np.array([[0.0, 0.0], [1.0, 2.0], [2.5, 2.5], [4.0, 1.0], [5.5, 2.2],
                         [7.0, 0.5], [8.0, 2.0], [9.5, 1.0]])

def repo_folder(name):
    """The repository's folder `name` (benchmarks, tests), found from the
    notebooks folder or from the docs build's copy of it."""
    here = pathlib.Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / name).is_dir() and (folder / "notebooks").is_dir():
            return str(folder / name)
    raise FileNotFoundError(f"no {name} folder above {here}")


# CMU's clips that every clone has (tests/data/cmu/README.md says where they
# come from): 131_01 "Start Walk Stop", 131_03 "Start Hop Stop", 120 Hz.
CMU_CENTIMETRES = 2.54 / 0.45   # their length unit is 1/0.45 inch


def read_cmu(name, first=0, last=None):
    """The CMU clip tests/data/cmu/<name>.bvh, frames first:last, in centimetres."""
    from dataclasses import replace
    from kbspline.motion import Motion, read_bvh
    clip = read_bvh(pathlib.Path(repo_folder("tests")) / "data" / "cmu" / f"{name}.bvh")
    s = CMU_CENTIMETRES
    joints = [replace(j, offset=j.offset * s,
                      end_site=None if j.end_site is None else j.end_site * s)
              for j in clip.joints]
    frames = clip.frames[first:last].copy()
    for j, joint in enumerate(clip.joints):
        columns = range(*clip.channel_slice(j).indices(frames.shape[1]))
        for c, channel in zip(columns, joint.channels):
            if channel.endswith("position"):
                frames[:, c] *= s
    return Motion(joints, clip.frame_time, frames)


def draw_curve(ax, spline, keys, n=400, tangents=True, title=None, color="tab:blue"):
    """The curve, its keys, and (optionally) each key's incoming and
    outgoing tangents, scaled to a third of the neighbouring segment."""
    t = np.linspace(*spline.domain, n)
    p = spline(t)
    ax.plot(p[:, 0], p[:, 1], color=color, lw=2)
    ax.plot(keys[:, 0], keys[:, 1], "ko", ms=4)
    if tangents:
        tin, tout = spline.tangents
        times = np.asarray(spline.breakpoints)
        dt = np.diff(times)
        for i, k in enumerate(keys):
            if np.all(np.isfinite(tin[i])) and i > 0:
                back = k - tin[i] * dt[i - 1] / 3
                ax.plot([back[0], k[0]], [back[1], k[1]], color="tab:orange", lw=1)
            if np.all(np.isfinite(tout[i])) and i < len(keys) - 1:
                ahead = k + tout[i] * dt[i] / 3
                ax.plot([k[0], ahead[0]], [k[1], ahead[1]], color="tab:green", lw=1)
    ax.set_aspect("equal")
    if title:
        ax.set_title(title, fontsize=9)


def speed(spline, t):
    return np.linalg.norm(np.atleast_2d(spline.velocity(t)), axis=-1)
