"""The quaternion utilities against SciPy's Rotation and against each other."""
import itertools

import numpy as np
import pytest

import kbspline as kb

Rotation = pytest.importorskip("scipy.spatial.transform").Rotation

ORDERS = ["".join(p) for p in itertools.product("xyz", repeat=3) if p[0] != p[1] != p[2]]
ORDERS += [o.upper() for o in ORDERS]


@pytest.fixture
def quats():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(300, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def scipy_rot(q):
    return Rotation.from_quat(q[..., [1, 2, 3, 0]])


def same_rotation(a, b, tol=1e-12):
    return np.abs(np.abs(np.sum(a * b, axis=-1)) - 1).max() <= tol


def test_multiply_and_conjugate_match_scipy(quats):
    p, q = quats[:150], quats[150:]
    got = kb.quat_multiply(p, q)
    expected = (scipy_rot(p) * scipy_rot(q)).as_quat()[:, [3, 0, 1, 2]]
    assert same_rotation(got, expected)
    np.testing.assert_allclose(kb.quat_multiply(p, kb.quat_conjugate(p)),
                               np.tile([1.0, 0, 0, 0], (150, 1)), atol=1e-15)


def test_matrices_match_scipy(quats):
    np.testing.assert_allclose(kb.quat_to_matrix(quats), scipy_rot(quats).as_matrix(),
                               atol=1e-15)
    assert same_rotation(kb.quat_from_matrix(scipy_rot(quats).as_matrix()), quats)
    assert np.all(kb.quat_from_matrix(scipy_rot(quats).as_matrix())[:, 0] >= 0)


@pytest.mark.parametrize("order", ORDERS)
def test_euler_matches_scipy_in_every_order(quats, order):
    np.testing.assert_allclose(kb.quat_to_euler(quats, order), scipy_rot(quats).as_euler(order),
                               atol=1e-12)
    angles = scipy_rot(quats).as_euler(order, degrees=True)
    assert same_rotation(kb.quat_from_euler(angles, order, degrees=True), quats)


@pytest.mark.parametrize("order", ORDERS)
def test_euler_round_trips_at_gimbal_lock(order):
    middle = 0.0 if order[0].lower() == order[2].lower() else np.pi / 2
    angles = np.array([[0.3, middle, -0.7], [1.2, -middle if middle else np.pi, 0.4]])
    q = kb.quat_from_euler(angles, order)
    assert same_rotation(kb.quat_from_euler(kb.quat_to_euler(q, order), order), q)


def test_axis_angle_matches_scipy(quats):
    axis, angle = kb.quat_to_axis_angle(quats)
    np.testing.assert_allclose(axis * angle[:, None], scipy_rot(quats).as_rotvec(), atol=1e-12)
    assert same_rotation(kb.quat_from_axis_angle(axis * 3.0, angle), quats)
    axis, angle = kb.quat_to_axis_angle([1.0, 0, 0, 0])
    assert angle == 0.0 and np.array_equal(axis, [1.0, 0, 0])


def test_log_and_exp_are_inverse(quats):
    scaled = quats * np.linspace(0.5, 3, 300)[:, None]
    np.testing.assert_allclose(kb.quat_exp(kb.quat_log(scaled)), scaled, atol=1e-14)
    tiny = kb.quat_from_axis_angle([1.0, 2.0, 3.0], 1e-12)
    np.testing.assert_allclose(kb.quat_exp(kb.quat_log(tiny)), tiny, atol=1e-16)
    rotvec = 2 * kb.quat_log(quats * np.where(quats[:, :1] < 0, -1, 1))[:, 1:]
    np.testing.assert_allclose(rotvec, scipy_rot(quats).as_rotvec(), atol=1e-12)


def test_slerp_matches_scipy_and_takes_the_shorter_arc(quats):
    from scipy.spatial.transform import Slerp
    p, q = quats[0], -quats[1]
    u = np.linspace(0, 1, 11)
    expected = Slerp([0, 1], scipy_rot(np.stack([p, q])))(u).as_quat()[:, [3, 0, 1, 2]]
    got = kb.slerp(p, q, u)
    assert same_rotation(got, expected)
    assert np.all(np.sum(got[1:] * got[:-1], axis=-1) > 0)
    np.testing.assert_allclose(kb.slerp(p, p, 0.3), p, atol=1e-15)


def test_squad_matches_wild_magic_and_reduces_to_slerp(quats):
    from oracles import wm_squad
    p, a, b, q = quats[:4]
    u = np.linspace(0, 1, 9)
    np.testing.assert_allclose(kb.squad(p, a, b, q, u), [wm_squad(x, p, a, b, q) for x in u],
                               atol=1e-12)
    q = q * np.sign(np.dot(p, q))
    np.testing.assert_allclose(kb.squad(p, p, q, q, u), kb.slerp(p, q, u), atol=1e-14)


def test_scalar_last_everywhere(quats):
    xyzw = quats[:, [1, 2, 3, 0]]
    np.testing.assert_array_equal(kb.quat_to_matrix(xyzw, scalar_first=False),
                                  kb.quat_to_matrix(quats))
    np.testing.assert_array_equal(kb.quat_multiply(xyzw, xyzw, scalar_first=False),
                                  kb.quat_multiply(quats, quats)[:, [1, 2, 3, 0]])
    np.testing.assert_array_equal(kb.quat_to_euler(xyzw, "ZXY", scalar_first=False),
                                  kb.quat_to_euler(quats, "ZXY"))


def test_broadcasting():
    q = kb.quat_from_axis_angle([0, 0, 1], np.linspace(0, 1, 5))
    assert q.shape == (5, 4)
    assert kb.slerp(q[:, None], q[None, :], 0.5).shape == (5, 5, 4)
    assert kb.quat_to_matrix(q.reshape(5, 1, 4)).shape == (5, 1, 3, 3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: kb.slerp([1, 0, 0, 0], [0, 0, 0, 0], 0.5), ValueError, r"q must have a nonzero norm"),
    (lambda: kb.quat_to_matrix([[1, 0, 0, 0], [np.nan, 0, 0, 1]]), ValueError,
     r"q\[1\] must be finite"),
    (lambda: kb.quat_from_axis_angle([0, 0, 0], 1.0), ValueError, r"axis must have a nonzero"),
    (lambda: kb.quat_from_matrix(np.ones((3, 3))), ValueError, r"matrix must be a rotation"),
    (lambda: kb.quat_from_euler([1, 2, 3], "xxy"), ValueError, r"order must be three of"),
    (lambda: kb.quat_from_euler([1, 2, 3], "XyZ"), ValueError, r"order must be three of"),
    (lambda: kb.quat_to_euler([1, 0, 0, 0], 3), TypeError, r"order must be a string"),
    (lambda: kb.quat_multiply([1, 0, 0], [1, 0, 0, 0]), ValueError, r"p must have shape"),
    (lambda: kb.quat_multiply(np.ones((2, 4)), np.ones((3, 4))), ValueError,
     r"leading shapes do not broadcast"),
    (lambda: kb.slerp([1, 0, 0, 0], [0, 1, 0, 0], "half"), TypeError, r"u must be real"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
