"""The keyer's final check (kbspline.formats.adaptive): an interval whose
bound passes on the CHECKS grid but whose playback misses between those
checks is found on the denser grid and split; a window at the key-spacing
floor keeps even spacing wherever that meets the tolerance."""
import numpy as np

from kbspline.formats.adaptive import (CHECKS, DENSE_CHECKS, MIN_KEY_SPACING, _window_keys,
                                       channel_keys)


class Bump:
    """A translation channel keyed at 0 and 1: flat but for a narrow smooth
    bump, 0.01 high (slow enough for keys MIN_KEY_SPACING apart), that
    falls between the CHECKS grid's points (j / CHECKS) and on the
    DENSE_CHECKS grid's."""
    path = "translation"
    times = np.array([0.0, 1.0])
    centre = (8 + 0.5) / CHECKS + 0.25 / DENSE_CHECKS
    width = 0.2 / DENSE_CHECKS

    def __call__(self, t):
        t = np.asarray(t, dtype=np.float64)
        x = 0.01 * np.exp(-0.5 * ((t - self.centre) / self.width) ** 2)
        return np.stack([x, 0 * t, 0 * t], axis=-1)


def lerp(times, values, t):
    return np.stack([np.interp(t, times, values[:, i]) for i in range(values.shape[1])], -1)


def test_a_bump_between_the_bound_checks_is_keyed():
    bump = Bump()
    u = np.linspace(0, 1, CHECKS + 1)
    assert bump(u)[:, 0].max() < 1e-8          # the coarse grid sees nothing
    tolerance = 1e-3
    times, values = channel_keys(bump, tolerance, start=0.0, end=1.0)
    t = np.linspace(0, 1, 200001)
    error = np.abs(lerp(times, values.astype(np.float32), t) - bump(t)).max()
    assert error <= tolerance * (1 + 1e-9), (len(times), error)


def test_a_window_keeps_even_spacing_where_it_meets_the_tolerance():
    s = MIN_KEY_SPACING
    lo, hi = np.array([0.0]), np.array([10.9 * s])

    def worst(starts, ends):     # a fast spot in the first piece, slow elsewhere
        accel = np.where(starts < 0.5 * s, 1.0, 1e-3)
        return (ends - starts) ** 2 * accel / 8 / s ** 2

    tolerance = 0.2             # even pieces (1.09 s) give 0.149: met
    keys = _window_keys(lo, hi, np.array([10.0]), lambda t: t, worst, s, tolerance)
    np.testing.assert_allclose(np.diff(np.concatenate([lo, keys, hi])), 1.09 * s)
    # where even pieces miss, the packed layout (all s but one) still wins
    keys = _window_keys(lo, hi, np.array([10.0]), lambda t: t, worst, s, 0.1)
    gaps = np.diff(np.concatenate([lo, keys, hi]))
    assert np.isclose(gaps[0], s) and np.isclose(gaps.max(), 1.9 * s)
