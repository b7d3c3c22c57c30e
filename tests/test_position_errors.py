"""Every bad input of SPEC section 8 that applies to positions: the right
exception, a message naming the argument and index, and nothing written."""
import numpy as np
import pytest

from kbspline import PositionSpline

T4 = [0.0, 1.0, 2.0, 3.0]
X4 = [[0.0, 0.0], [1.0, 2.0], [3.0, 1.0], [4.0, 3.0]]


def build(**changes):
    kw = dict(times=T4, values=X4)
    kw.update(changes)
    return PositionSpline(**kw)


@pytest.mark.parametrize("changes, error, match", [
    (dict(times=[0.0, 2.0, 1.0, 3.0]), ValueError, r"times\[2\] must be strictly increasing"),
    (dict(times=[0.0, 1.0, 1.0, 3.0]), ValueError, r"times\[2\] must be strictly increasing"),
    (dict(times=[0.0, np.nan, 2.0, 3.0]), ValueError, r"times\[1\] must be finite"),
    (dict(times=[0.0, 1.0, 2.0, np.inf]), ValueError, r"times\[3\] must be finite"),
    (dict(times=[[0.0, 1, 2, 3], [0.0, 1, 1, 3]], values=[X4, X4]), ValueError,
     r"times\[1, 2\] must be strictly increasing"),
    (dict(values=[[0.0, 0.0], [1.0, np.nan], [3.0, 1.0], [4.0, 3.0]]), ValueError,
     r"values\[1\] must be finite"),
    (dict(values=np.zeros((2, 3, 4, 2)) + [[[[0], [1], [2], [np.inf]]]]), ValueError,
     r"values\[0, 0, 3\] must be finite"),
    (dict(tension=[0.0, 0.0, np.nan, 0.0]), ValueError, r"tension\[2\] must be finite"),
    (dict(continuity=np.inf), ValueError, r"continuity\[0\] must be finite"),
    (dict(bias=[0.0, 0.0, 0.0, -np.inf]), ValueError, r"bias\[3\] must be finite"),
    (dict(ease_from=[0.0, 1.5, 0.0, 0.0]), ValueError, r"ease_from\[1\] must be in \[0, 1\]"),
    (dict(ease_to=[0.0, -0.1, 0.0, 0.0]), ValueError, r"ease_to\[1\] must be in \[0, 1\]"),
    (dict(times=[0.0, 1.0, 2.0]), ValueError, r"times of shape \(3,\) must have K = 4"),
    (dict(tension=[0.0, 0.1]), ValueError, r"tension of shape \(2,\) does not broadcast"),
    (dict(values=np.zeros((3, 4, 2)), bias=np.zeros((2, 4))), ValueError,
     r"bias of shape \(2, 4\) does not broadcast to \(3, 4\)"),
    (dict(times=np.arange(4.0) * np.ones((2, 1)), values=np.zeros((3, 4, 2))), ValueError,
     r"times of shape \(2, 4\) does not broadcast"),
    (dict(values=[[0.0, 0.0]]), ValueError, r"values has 1 keys; ends='natural' needs at least 2"),
    (dict(ends="phantom", values=X4[:3], times=T4[:3]), ValueError, r"needs at least 4"),
    (dict(ends="closed"), ValueError, r"values\[3\] the last key must repeat the first"),
    (dict(ends="closed", values=X4[:3] + X4[:1], tension=[0.5, 0, 0, 0]), ValueError,
     r"tension\[3\] the last key must repeat the first"),
    (dict(timing="bezier"), ValueError, r"timing must be one of .* not 'bezier'"),
    (dict(ends="open"), ValueError, r"ends must be one of"),
    (dict(extrapolate="wrap"), ValueError, r"extrapolate must be one of"),
    (dict(timing=1), TypeError, r"timing must be a string"),
    (dict(values=np.array(X4) + 0j), TypeError, r"values must be real numbers.*complex"),
    (dict(values=np.array(X4, dtype=object)), TypeError, r"values must be real numbers.*object"),
    (dict(times=["a", "b", "c", "d"]), TypeError, r"times must be real numbers"),
    (dict(tension=[[1, 2], [3]]), TypeError, r"tension must be a numeric array"),
    (dict(values=5.0), ValueError, r"values must have shape \(K,\) or \(..., K, D\)"),
    (dict(start_velocity=[1.0, 0.0]), ValueError, r"need ends='clamped'"),
    (dict(ends="clamped", start_velocity=[1.0, 0.0, 2.0]), ValueError,
     r"start_velocity of shape \(3,\) does not broadcast to \(2,\)"),
    (dict(ends="clamped", end_velocity=[1.0, np.nan]), ValueError,
     r"end_velocity\[1\] must be finite"),
    (dict(times=None, alpha=0.5, values=[[0.0, 0], [1, 1], [1, 1], [2, 0]]), ValueError,
     r"values\[2\] repeats the key before it"),
    (dict(alpha=0.5), TypeError, r"pass times or alpha, not both"),
    (dict(times=[-1e308, 0.0, 1.0, 1e308]), ValueError,
     r"times\[3\] is too far from the first time"),
    (dict(values=[[1e308, 0.0], [-1e308, 0.0], [1e308, 0.0], [0.0, 0.0]]), ValueError,
     r"values\[0\] is too large"),
    (dict(times=None, alpha=-1.0), ValueError, r"alpha must be a finite number >= 0"),
])
def test_bad_construction(changes, error, match):
    with pytest.raises(error, match=match):
        build(**changes)


@pytest.fixture
def spline():
    return build(extrapolate="error")


@pytest.mark.parametrize("t, error, match", [
    ([0.5, np.nan], ValueError, r"t\[1\] must be finite, not nan"),
    ([0.5, 1.0, 3.5], ValueError, r"t\[2\] = 3.5 is outside the domain \[0.0, 3.0\]"),
    (-1.0, ValueError, r"t = -1.0 is outside the domain"),
    ([1 + 2j], TypeError, r"t must be real numbers"),
    (np.zeros((3, 5)), ValueError, r"t of shape \(3, 5\): its leading shape"),
    ("now", TypeError, r"t must be real numbers"),
])
def test_bad_queries(spline, t, error, match):
    with pytest.raises(error, match=match):
        spline(t)


def test_per_track_domain_errors_name_the_track():
    s = PositionSpline([[0.0, 1, 2, 3], [0.0, 1, 2, 5]], [X4, X4], extrapolate="error")
    with pytest.raises(ValueError, match=r"t\[0, 1\] = 4.0 is outside the domain \[0.0, 3.0\]"):
        s([[1.0, 4.0], [1.0, 4.0]])
    np.testing.assert_allclose(s([[1.0, 3.0], [1.0, 4.0]])[:, 0], [X4[1], X4[1]])


@pytest.mark.parametrize("out, error, match", [
    (np.zeros((5, 2), np.int64), TypeError, r"out must have dtype float64 or float32"),
    (np.zeros((5, 2), complex), TypeError, r"out must have dtype"),
    (np.zeros((5, 3)), ValueError, r"out has shape \(5, 3\), expected \(5, 2\)"),
    (np.zeros((2, 5)).T, ValueError, r"out must be a writeable, C-contiguous"),
    ([[0.0] * 2] * 5, TypeError, r"out must be a NumPy array"),
])
def test_bad_out(spline, out, error, match):
    with pytest.raises(error, match=match):
        spline.velocity(np.linspace(0, 3, 5), out=out)


def test_failed_call_leaves_out_untouched(spline):
    out = np.full((3, 2), 7.0)
    with pytest.raises(ValueError):
        spline([0.5, 1.0, 4.0], out=out)
    with pytest.raises(ValueError):
        spline([0.5, np.nan, 1.0], out=out)
    assert np.all(out == 7.0)
    readonly = np.zeros((3, 2))
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        spline([0.5, 1.0, 2.0], out=readonly)


def test_inputs_are_not_modified():
    times, values = np.array(T4), np.array(X4)
    tension = np.array([0.1, 0.2, 0.3, 0.4])
    copies = [a.copy() for a in (times, values, tension)]
    s = PositionSpline(times, values, tension)
    t = np.array([2.5, 0.5, 1.0])
    s(t)
    for a, b in zip((times, values, tension), copies):
        assert np.array_equal(a, b)
    assert np.array_equal(t, [2.5, 0.5, 1.0])


def test_sizes_too_large_fail_cleanly():
    with pytest.raises(MemoryError):
        PositionSpline(None, np.broadcast_to(0.0, (2**40, 4, 3)))
    spline = PositionSpline(None, np.zeros((4, 3)))
    with pytest.raises(MemoryError):
        spline(np.broadcast_to(0.0, (2**45,)))
    with pytest.raises(ValueError):
        spline(np.broadcast_to(0.0, (2**62,)))  # NumPy: "array is too big"


def test_non_contiguous_and_fortran_inputs_are_accepted():
    rng = np.random.default_rng(0)
    values = np.asfortranarray(rng.normal(size=(6, 3)))
    strided = np.zeros((6, 6))[:, ::2] + values
    times = np.arange(12.0)[::2]
    a = PositionSpline(times, values, tension=np.linspace(0, 0.5, 12)[::2])
    b = PositionSpline(np.ascontiguousarray(times), np.ascontiguousarray(strided),
                       tension=np.ascontiguousarray(np.linspace(0, 0.5, 12)[::2]))
    t = np.linspace(0, 10, 40)[::2]
    assert np.array_equal(a(t), b(np.ascontiguousarray(t)))
