"""Bad input to RotationSpline: the right exception, naming the argument."""
import numpy as np
import pytest

from kbspline import RotationSpline

Q4 = [[1.0, 0, 0, 0], [0.9, 0.1, 0, 0], [0.8, 0, 0.2, 0], [0.7, 0, 0, 0.3]]


@pytest.mark.parametrize("changes, error, match", [
    (dict(quaternions=[[1.0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]], times=None), ValueError,
     r"quaternions\[1\] must have a nonzero norm"),
    (dict(quaternions=np.array(Q4) * [[1], [1], [np.nan], [1]]), ValueError,
     r"quaternions\[2\] must be finite"),
    (dict(quaternions=np.ones((4, 3))), ValueError, r"quaternions must have shape \(..., K, 4\)"),
    (dict(quaternions=np.ones(4)), ValueError, r"quaternions must have shape"),
    (dict(times=[0.0, 1.0, 0.5, 2.0]), ValueError, r"times\[2\] must be strictly increasing"),
    (dict(ends="closed"), ValueError, r"quaternions\[3\] the last key must repeat the first"),
    (dict(ends="phantom", quaternions=Q4[:3], times=None), ValueError, r"needs at least 4"),
    (dict(tension=[0, 0, np.inf, 0]), ValueError, r"tension\[2\] must be finite"),
    # finite, but the tangents' logs overflow: refused, where it gave NaN rotations
    (dict(tension=[0, -1e200, 0, 0]), ValueError,
     r"quaternions\[0\] is too large, or its tangents or TCB are: the spline's coefficients"),
    (dict(start_angular_velocity=[1.0, 0, 0]), ValueError, r"need ends='clamped'"),
    (dict(ends="clamped", end_angular_velocity=[1.0, np.nan, 0]), ValueError,
     r"end_angular_velocity\[1\] must be finite"),
    (dict(ends="clamped", start_angular_velocity=[1.0, 0]), ValueError,
     r"start_angular_velocity of shape \(2,\) does not broadcast to \(3,\)"),
    (dict(scalar_first="yes"), TypeError, r"scalar_first must be True or False"),
    (dict(timing="slerp"), ValueError, r"timing must be one of"),
    (dict(quaternions=np.array(Q4, dtype=complex)), TypeError, r"quaternions must be real"),
])
def test_bad_construction(changes, error, match):
    kw = dict(times=[0.0, 1.0, 2.0, 3.0], quaternions=Q4)
    kw.update(changes)
    with pytest.raises(error, match=match):
        RotationSpline(**kw)


def test_closed_accepts_the_first_key_negated():
    q = np.array(Q4 + [[-1.0, 0, 0, 0]])
    s = RotationSpline(None, q, ends="closed")
    np.testing.assert_allclose(np.abs(np.sum(s(4.0) * s(0.0))), 1.0, atol=1e-15)


def test_bad_queries_and_out_leave_out_untouched():
    s = RotationSpline(None, Q4, extrapolate="error")
    out = np.full((3, 4), 7.0)
    with pytest.raises(ValueError, match=r"t\[2\] = 9.0 is outside the domain"):
        s([0.5, 1.0, 9.0], out=out)
    assert np.all(out == 7.0)
    with pytest.raises(ValueError, match=r"out has shape \(3, 4\), expected \(3, 3\)"):
        s.angular_velocity([0.5, 1.0, 2.0], out=out)
    with pytest.raises(ValueError, match=r"frame must be one of"):
        s.angular_velocity(0.5, frame="local")


def test_pickle_and_repr():
    import pickle
    s = RotationSpline([0.0, 1.0, 2.5, 3.0], np.array(Q4)[:, [1, 2, 3, 0]], 0.2,
                       scalar_first=False, ends="reflect", ease_from=0.3)
    clone = pickle.loads(pickle.dumps(s))
    t = np.linspace(-1, 4, 21)
    assert np.array_equal(clone(t), s(t))
    assert repr(clone) == ("RotationSpline(batch_shape=(), num_keys=4, timing='kb', "
                           "ends='reflect', scalar_first=False)")


def test_keeps_at_most_five_times_its_keys():
    """Issue 21: a spline keeps its segment records, kinds and a copy of the
    keys for pickling, at most 5x the keys' 32 bytes; the tangents and
    control points come back on first use, on a copy too, equal to a spline's
    built beside it and consistent with its values at the keys."""
    import pickle
    rng = np.random.default_rng(3)
    q = rng.normal(size=(50, 64, 4))
    s = RotationSpline(np.arange(64.0), q, 0.3, -0.2, 0.1)

    def kept(spline):
        held = list(vars(spline).values()) + list(spline.__getstate__().values())
        return sum(v.nbytes for v in held if isinstance(v, np.ndarray))
    assert kept(s) <= 5 * q.nbytes
    clone = pickle.loads(pickle.dumps(s))
    ctrl = clone.control_points
    keys = s(np.arange(64.0))
    np.testing.assert_allclose(ctrl[:, :, 0], keys[:, :-1], atol=1e-15)
    np.testing.assert_allclose(ctrl[:, :, 3], keys[:, 1:], atol=1e-15)
    assert np.array_equal(ctrl, s.control_points)
    assert all(np.array_equal(a, b) for a, b in zip(clone.tangents, s.tangents))
    assert kept(s) > 5 * q.nbytes   # now it keeps them
