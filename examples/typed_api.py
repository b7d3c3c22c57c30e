"""Every part of kbspline's public API, used from fully annotated code.

    mypy --strict examples/typed_api.py     # type-checks (tests/test_typing.py)
    python examples/typed_api.py            # and runs
"""
from __future__ import annotations

import pathlib
import tempfile

import numpy as np
from numpy.typing import NDArray

import kbspline
from kbspline import (PositionSpline, RotationSpline, quat_conjugate, quat_exp,
                      quat_from_axis_angle, quat_from_euler, quat_from_matrix, quat_log,
                      quat_multiply, quat_to_axis_angle, quat_to_euler, quat_to_matrix, slerp,
                      squad)
from kbspline.motion import (BvhError, Joint, Loop, Motion, Reduction, find_cycle, make_loop,
                             read_bvh, reduce_keys, resample, transition, world_positions,
                             write_bvh)

Array = NDArray[np.float64]

def positions() -> float:
    times: Array = np.array([0.0, 1.0, 2.5, 3.0, 4.0])
    keys: Array = np.random.default_rng(0).normal(size=(2, 5, 3))
    spline = PositionSpline(times, keys, tension=0.2, continuity=[0, 0.1, 0, 0, 0], bias=-0.1,
                            timing="3ds", ends="natural", ease_from=0.0, ease_to=0.0,
                            extrapolate="linear")
    t: Array = np.linspace(*spline.domain, 50)
    out = np.empty((2, 50, 3), dtype=np.float32)
    spline.position(t, out=out)
    p: Array = spline(t)
    v: Array = spline.velocity(t)
    a: Array = spline.acceleration(t)
    s: Array = spline.length(t)
    back: Array = spline.time_at_length(s)
    even: Array = spline.equal_length_times(20)
    on_path: Array = spline.position_at_length(np.linspace(0.0, 1.0, 5))
    unit: Array = spline.velocity_at_length(np.linspace(0.0, 1.0, 5))
    normal: Array = spline.acceleration_at_length(np.linspace(0.0, 1.0, 5))
    tangent_in, tangent_out = spline.tangents
    coefficients: Array = spline.coefficients
    breakpoints: Array = spline.breakpoints
    shape: tuple[int, ...] = spline.batch_shape
    counts: tuple[int, int] = (spline.num_keys, spline.dim)
    names: tuple[str, str, str] = (spline.timing, spline.ends, spline.extrapolate)
    total = spline.total_length
    camera = PositionSpline(None, keys[0], alpha=0.5, ends="clamped",
                            start_velocity=[0.0, 0.0, 1.0], end_velocity=None)
    ppoly = camera.to_ppoly()
    assert np.allclose(ppoly(camera.domain[0]), camera(camera.domain[0]))
    assert p.shape == v.shape == a.shape and back.shape == s.shape and even.shape == (2, 20)
    assert on_path.shape == unit.shape == normal.shape == (2, 5, 3)
    assert tangent_in.shape == tangent_out.shape and coefficients.shape[-2:] == (4, 3)
    assert len(breakpoints) == 5 and shape == (2,) and counts == (5, 3) and names[0] == "3ds"
    return float(np.sum(total))


def rotations() -> float:
    times: Array = np.array([0.0, 1.0, 2.0, 3.5])
    keys: Array = quat_from_axis_angle([0.0, 0.0, 1.0], np.array([0.0, 0.5, 1.5, 2.0]))
    spline = RotationSpline(times, keys, tension=0.1, ends="clamped",
                            start_angular_velocity=[0.0, 0.0, 0.2],
                            end_angular_velocity=[0.0, 0.0, 0.0], scalar_first=True)
    t: Array = np.linspace(0.0, 3.5, 30)
    q: Array = spline(t)
    w: Array = spline.angular_velocity(t, frame="body")
    dw: Array = spline.angular_acceleration(t)
    swept: Array = spline.angle(t)
    when: Array = spline.time_at_angle(swept)
    ctrl: Array = spline.control_points
    tangent_in, tangent_out = spline.tangents
    first: bool = spline.scalar_first
    total = spline.total_angle
    scipy_rotation = spline.as_rotation(t)
    again = RotationSpline.from_rotation(times, spline.as_rotation(times))
    xyzw: Array = again(times)  # from_rotation keeps SciPy's (x, y, z, w) order
    assert not again.scalar_first and np.allclose(xyzw[:, [3, 0, 1, 2]], spline(times))
    assert scipy_rotation is not None and q.shape == (30, 4) and first
    assert w.shape == dw.shape == (30, 3)
    assert when.shape == (30,) and ctrl.shape == (3, 4, 4)
    assert tangent_in.shape == tangent_out.shape == (4, 3)
    return float(np.sum(total))


def quaternions() -> None:
    q: Array = quat_from_euler([10.0, 20.0, 30.0], "ZXY", degrees=True)
    r: Array = quat_from_matrix(quat_to_matrix(q))
    axis, angle = quat_to_axis_angle(quat_multiply(q, quat_conjugate(r)))
    mid: Array = slerp(q, r, 0.5)
    curve: Array = squad(q, q, r, r, [0.25, 0.75], scalar_first=True)
    logged: Array = quat_exp(quat_log(q))
    euler: Array = quat_to_euler(q, "ZXY", degrees=True)
    assert np.allclose(euler, [10.0, 20.0, 30.0]) and np.allclose(logged, q)
    assert axis.shape == (3,) and float(angle) < 1e-6 and mid.shape == (4,)
    assert curve.shape == (2, 4)


def pipeline(folder: pathlib.Path) -> None:
    rng = np.random.default_rng(1)
    joints: list[Joint] = [
        Joint("hip", -1, np.zeros(3), ["Xposition", "Yposition", "Zposition", "Zrotation",
                                       "Xrotation", "Yrotation"]),
        Joint("knee", 0, np.array([1.0, 0.0, 0.0]), ["Zrotation", "Xrotation", "Yrotation"],
              end_site=np.array([0.0, -2.0, 0.0]))]
    frames: Array = rng.normal(scale=5.0, size=(90, 9)).cumsum(axis=0)
    write_bvh(Motion(joints, 1 / 30, frames), folder / "walk.bvh", precision=6)
    clip = read_bvh(folder / "walk.bvh")
    fine: Motion = resample(clip, 60)
    world, world_rotations = world_positions(fine)
    reduction: Reduction = reduce_keys(clip, 0.01, 0.05)
    start, end, cost = find_cycle(clip, min_seconds=0.5)
    loop: Loop = make_loop(clip, start, end)
    looped_rotations, looped_translations = loop.sample(np.linspace(0.0, 2.0, 10))
    joined: Motion = transition(clip, clip, frames=12)
    (folder / "bad.bvh").write_text("HIERARCHY\nROOT")
    try:
        read_bvh(folder / "bad.bvh")
    except BvhError as exc:
        assert "bad.bvh" in str(exc)
    assert len(clip.joints) == 2 and world.shape[1:] == (2, 3) and world_rotations.shape[0] == 2
    assert 0 < reduction.ratio <= 1 and cost >= 0 and looped_rotations.shape[-1] == 4
    assert looped_translations.shape[-1] == 3 and joined.num_frames > clip.num_frames


def pipelines_beyond_one_machine(folder: pathlib.Path) -> None:
    import dask.array as da

    from kbspline.dask import bake
    from kbspline.formats.gltf import GltfExport, export_gltf

    values = np.random.default_rng(2).normal(size=(40, 6, 3))
    # older Dask (Python 3.9's) does not re-export from_array
    keys = da.from_array(  # type: ignore[no-untyped-call, attr-defined, unused-ignore]
        values, chunks=(10, 6, 3))
    baked = bake(PositionSpline, None, keys, np.linspace(0.0, 5.0, 11), method="velocity",
                 dtype=np.float32, tension=0.3)
    assert baked.compute().shape == (40, 11, 3)
    times: Array = np.array([0.0, 0.5, 1.0])
    hips = PositionSpline(times, [[0.0, 1.0, 0.0], [0.2, 1.1, 0.0], [0.4, 1.0, 0.1]])
    turn = RotationSpline(times, quat_from_axis_angle([0, 1, 0], np.array([0.0, 0.3, 0.6])))
    export: GltfExport = export_gltf({"hips": {"translation": hips, "rotation": turn}},
                                     folder / "clip.glb", rate=60.0, time_offset=0.0,
                                     parents=None, name="walk")
    worst: float = export.max_error["hips", "rotation"]
    assert export.interpolation["hips", "translation"] == "CUBICSPLINE" and worst < 1e-3
    within: GltfExport = export_gltf({"hips": {"rotation": turn, "translation": hips}},
                                     angle_tolerance=1e-4, distance_tolerance=1e-4)
    counts: dict[tuple[str, str], int] = within.key_counts
    assert within.max_error["hips", "rotation"] <= 1e-4 and counts["hips", "rotation"] >= 3

    from kbspline.formats.adaptive import linear_keys, playback_error
    samples: list[Array] = linear_keys(turn, 1e-3, shared=True)
    measured: Array = playback_error(turn, samples)
    assert measured.shape == (1,) and float(measured[0]) <= 1e-3


def main() -> None:
    previous: int = kbspline.set_num_threads(1)
    assert kbspline.get_num_threads() == 1
    kbspline.set_num_threads(previous)
    version: str = kbspline.__version__
    with tempfile.TemporaryDirectory() as tmp:
        print(f"kbspline {version}: lengths {positions():.3f}, angle {rotations():.3f}")
        quaternions()
        pipeline(pathlib.Path(tmp))
        pipelines_beyond_one_machine(pathlib.Path(tmp))
    print("ok")


if __name__ == "__main__":
    main()
