"""Fitted key reduction: each kept key's TCB by least squares (against
SciPy's least_squares as the oracle), every frame still within the
tolerances (by SciPy's rotations from the BVH Euler angles), fewer keys
than greedy selection alone, and the fitted curves rebuilt exactly."""
import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from kbspline import RotationSpline
from kbspline.motion import Motion, Reduction, read_bvh, reduce_keys
from kbspline.motion.fit import Track, fit_tcb
from test_reduce_world import euler_matrices, random_clips

CMU = pathlib.Path(__file__).resolve().parent / "data" / "cmu"


@pytest.fixture(scope="module")
def walk120():
    """The first 2.5 s of CMU 131_01 (120 Hz)."""
    clip = read_bvh(CMU / "131_01.bvh")
    return Motion(clip.joints, clip.frame_time, clip.frames[:300])


def local_errors(clip, result):
    """(J,) worst rotation angle, by SciPy from the Euler frames, and (J,)
    worst translation distance, of the rebuilt clip."""
    rotations, translations = result.rebuild(clip.times)
    rebuilt = Rotation.from_quat(rotations[..., [1, 2, 3, 0]].reshape(-1, 4))
    truth = Rotation.from_matrix(euler_matrices(clip).reshape(-1, 3, 3))
    angle = (truth.inv() * rebuilt).magnitude().reshape(rotations.shape[:2]).max(axis=1)
    distance = np.linalg.norm(translations - clip.translations(), axis=-1).max(axis=1)
    return angle, distance


@pytest.mark.parametrize("joint", [3, 20])
def test_fit_reaches_the_least_squares_optimum(walk120, joint):
    """Levenberg-Marquardt on the banded normal equations reaches what
    SciPy's least_squares (trust region, exact bounds) finds."""
    track = Track(walk120.times, walk120.rotations()[joint], True)
    keys = np.unique(np.r_[np.arange(0, 300, 7), 299])
    zero = np.zeros((len(keys), 3))
    ours = fit_tcb(track, keys, zero, iterations=100)
    oracle = least_squares(lambda p: track(keys, p.reshape(-1, 3))[0].ravel(), zero.ravel(),
                           bounds=(-1.0, 1.0))
    start = np.sum(track(keys, zero)[0] ** 2)
    found = np.sum(track(keys, ours)[0] ** 2)
    assert found < 0.5 * start
    assert found <= 1.01 * np.sum(oracle.fun ** 2)
    assert np.all(np.abs(ours) <= 1.0)


@pytest.mark.parametrize("degrees, distance", [(0.3, 0.01), (1.0, 0.05)])
def test_fitted_keys_keep_every_frame_within_the_tolerances(walk120, degrees, distance):
    result = reduce_keys(walk120, np.radians(degrees), distance)
    angle, dist = local_errors(walk120, result)
    assert angle.max() <= np.radians(degrees) * (1 + 1e-9)
    assert dist.max() <= distance
    np.testing.assert_allclose(result.max_angle, angle, atol=1e-9)
    assert result.rotation_tcb is not None and any(np.any(t) for t in result.rotation_tcb)


def test_fitting_keeps_fewer_keys(walk120):
    greedy = reduce_keys(walk120, np.radians(0.3), 0.01, fit=False)
    fitted = reduce_keys(walk120, np.radians(0.3), 0.01)
    assert fitted.num_keys < 0.85 * greedy.num_keys
    assert all(len(f) <= len(g) for f, g in zip(fitted.key_frames, greedy.key_frames))


def test_rebuild_is_the_fitted_curve_and_survives_json(walk120, tmp_path):
    result = reduce_keys(walk120, np.radians(0.5), 0.02)
    j = 10
    keys = result.key_frames[j]
    tension, continuity, bias = result.rotation_tcb[j].T
    own = RotationSpline(keys * walk120.frame_time, walk120.rotations()[j][keys],
                         tension, continuity, bias)(walk120.times)
    np.testing.assert_array_equal(result.rebuild(walk120.times)[0][j], own)
    path = tmp_path / "fitted.json"
    path.write_text(json.dumps(result.to_json()))
    back = Reduction.from_json(json.loads(path.read_text()))
    for a, b in zip(back.rebuild(walk120.times), result.rebuild(walk120.times)):
        np.testing.assert_array_equal(a, b)
    data = result.to_json()
    data["joints"][3]["rotation_tcb"] = data["joints"][3]["rotation_tcb"][:-1]
    with pytest.raises(ValueError, match="TCB"):
        Reduction.from_json(data)


def test_fit_must_be_a_bool(walk120):
    with pytest.raises(TypeError, match="fit must be True or False"):
        reduce_keys(walk120, 0.1, 0.1, fit="yes")


@settings(max_examples=25, deadline=None)
@given(clip=random_clips(), degrees=st.floats(0.01, 5.0), distance=st.floats(1e-3, 1.0))
def test_random_clips_fitted_within_the_tolerances(clip, degrees, distance):
    result = reduce_keys(clip, np.radians(degrees), distance)
    angle, dist = local_errors(clip, result)
    assert angle.max() <= np.radians(degrees) * (1 + 1e-9) + 1e-12
    assert dist.max() <= distance * (1 + 1e-12)
    greedy = reduce_keys(clip, np.radians(degrees), distance, fit=False)
    assert all(len(f) <= len(g) for f, g in zip(result.key_frames, greedy.key_frames))
