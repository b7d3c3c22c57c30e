"""Largest error of the normalising quaternion utilities at each scale of
their input, against the same call at scale 1 and (after a slash) against
SciPy's Rotation or, for quat_log, arccos of the unit quaternion.

    PYTHONPATH=$PWD python benchmarks/quat_scale.py

Each row: 2000 random unit quaternions (seed 0) times the scale; "row" is a
random scale per row (log-uniform over 1e-300 .. 1e300).  An entry is the
largest absolute difference over all rows (radians for angles), or the
error a call raised.
"""
import itertools

import numpy as np
from scipy.spatial.transform import Rotation

import kbspline as kb

SCALES = [1e-300, 1e-200, 1e-162, 1e-100, 1.0, 1e100, 1e200, 1e300, "row"]
ORDERS = ["".join(p) for p in itertools.product("xyz", repeat=3) if p[0] != p[1] != p[2]]
ORDERS += [o.upper() for o in ORDERS]


def unit_quats(n, seed):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def rotvec(q):
    axis, angle = kb.quat_to_axis_angle(q)
    return axis * angle[..., None]


def euler_error(a, b):
    """Largest angle difference, modulo 2 pi."""
    return np.abs(np.angle(np.exp(1j * (a - b)))).max()


def log_vector(q):
    """theta n of unit quaternions q = (cos theta, sin theta n)."""
    v = q[:, 1:]
    return np.arccos(np.clip(q[:, :1], -1, 1)) * v / np.linalg.norm(v, axis=1, keepdims=True)


def measure(q, s):
    """{name: (error against scale 1, error against SciPy)} at scales s (n, 1)."""
    qs, ref = q * s, Rotation.from_quat(q[:, [1, 2, 3, 0]])
    p = unit_quats(len(q), 1)
    ps = p * s[::-1]
    rows = {
        "quat_to_matrix": (kb.quat_to_matrix, lambda m: ref.as_matrix(), np.subtract),
        "quat_to_axis_angle": (rotvec, lambda v: ref.as_rotvec(), np.subtract),
        "quat_log (vector)": (lambda x: kb.quat_log(x)[:, 1:], lambda v: log_vector(q),
                              np.subtract),
        "slerp": (lambda x: kb.slerp(ps if x is qs else p, x, 0.3), None, np.subtract),
        "squad": (lambda x: kb.squad(x, ps if x is qs else p, p, x, 0.3), None, np.subtract),
        "quat_from_axis_angle": (lambda x: kb.quat_from_axis_angle(x[:, 1:], 1.0), None,
                                 np.subtract),
    }
    for order in ORDERS:
        rows[f"quat_to_euler {order}"] = (lambda x, o=order: kb.quat_to_euler(x, o),
                                          lambda e, o=order: ref.as_euler(o), euler_error)
    result = {}
    for name, (f, oracle, diff) in rows.items():
        try:
            got = f(qs)
        except Exception as exc:  # noqa: BLE001 -- a measurement, any failure is reported
            result[name] = (f"{type(exc).__name__}", "")
            continue
        at_one = np.abs(diff(got, f(q))).max()
        vs_oracle = f"{np.abs(diff(got, oracle(got))).max():.1e}" if oracle else ""
        result[name] = (f"{at_one:.1e}", vs_oracle)
    try:
        ln_norm = kb.quat_log(qs)[:, 0]
        result["quat_log ln|q|"] = (f"{np.abs(ln_norm - np.log(s[:, 0])).max():.1e}", "")
    except Exception as exc:  # noqa: BLE001
        result["quat_log ln|q|"] = (type(exc).__name__, "")
    try:
        norms = np.linalg.norm(kb.quat_log(-s * [1.0, 0, 0, 0])[:, 1:], axis=1)
        result["quat_log(-s) |v|"] = (f"{np.abs(norms - np.pi).max():.1e}", "")
    except Exception as exc:  # noqa: BLE001
        result["quat_log(-s) |v|"] = (type(exc).__name__, "")
    return result


def main():
    q = unit_quats(2000, 0)
    rng = np.random.default_rng(2)
    table = {}
    for scale in SCALES:
        s = (10.0 ** rng.uniform(-300, 300, (len(q), 1)) if scale == "row"
             else np.full((len(q), 1), scale))
        for name, (at_one, vs_scipy) in measure(q, s).items():
            table.setdefault(name, {})[scale] = at_one if not vs_scipy else \
                f"{at_one}/{vs_scipy}"
    head = ["function"] + [f"{s:g}" if s != "row" else "row" for s in SCALES]
    print(" | ".join(head))
    for name, row in table.items():
        if name.startswith("quat_to_euler") and name[-3:] not in ("xyz", "ZXY", "zxz", "YXY"):
            continue
        print(" | ".join([name] + [row[s] for s in SCALES]))
    worst = {}
    for name, row in table.items():
        if name.startswith("quat_to_euler"):
            for s in SCALES:
                worst.setdefault(s, []).append(row[s])
    print(" | ".join(["quat_to_euler all 12 orders (worst)"] + [
        max(worst[s], key=lambda e: float(e.split("/")[0]) if e[0].isdigit() else 1e99)
        for s in SCALES]))


if __name__ == "__main__":
    main()
