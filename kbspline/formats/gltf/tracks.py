"""The channels `export_gltf` writes: one track of a kbspline spline
(`_Track`), or a scene channel keyed by `channel_keys` (`_ChannelTrack`),
each sampled as glTF stores it and measured against what glTF plays."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...position import PositionSpline
from ...quaternion import _angle_between
from ...rotation import RotationSpline
from ..adaptive import DENSE_CHECKS, SPLIT_ANGLE, _channel_keys, key_times_in
from .playback import _play_cubic, _play_linear, _play_slerp

# Points per stored interval where what glTF will play back is compared
# with the spline (besides the stored keys themselves).
CHECKS_PER_INTERVAL = DENSE_CHECKS
_CHUNK = 1 << 16     # times measured at once

_PATHS: dict[str, type[Any]] = {"translation": PositionSpline, "scale": PositionSpline,
                                "rotation": RotationSpline}


def _is_channel(entry):
    """A scene Channel (a callable with key times), not a spline entry."""
    return (not isinstance(entry, (tuple, PositionSpline, RotationSpline))
            and callable(entry) and hasattr(entry, "times"))


def _as_float32(what, rows, times):
    """`rows` (one per time) as glTF's float32, or a ValueError naming the
    first row that is not finite there: accessors must not hold inf or NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        stored = np.asarray(rows).astype(np.float32)
    finite = np.isfinite(stored).reshape(len(stored), -1).all(axis=1)
    if not finite.all():
        i = int(np.argmin(finite))
        raise ValueError(f"{what} {float(times[i])!r} (row {i}) is not finite as glTF's "
                         f"float32 (|x| < 3.4e38): {np.asarray(rows)[i].tolist()}")
    return stored


class _Track:
    """One channel: a single track of a spline, checked against its path."""

    def __init__(self, node, target, entry):
        where = f"channels[{node!r}][{target!r}]"
        if target not in _PATHS:
            raise ValueError(f"{where}: the path must be one of {sorted(_PATHS)}")
        spline, index = entry if isinstance(entry, tuple) else (entry, ())
        if not isinstance(spline, _PATHS[target]):
            raise TypeError(f"{where} must be a {_PATHS[target].__name__}, "
                            f"not {type(spline).__name__}")
        index = index if isinstance(index, tuple) else (index,)
        try:
            one_track = np.ndim(np.empty(spline.batch_shape)[index]) == 0
        except (IndexError, TypeError, ValueError):
            one_track = False
        if not one_track:
            raise ValueError(f"{where}: index {index} does not pick one track of a batch "
                             f"of shape {spline.batch_shape}")
        if isinstance(spline, PositionSpline) and spline.dim != 3:
            raise ValueError(f"{where}: a {target} needs D = 3, not D = {spline.dim}")
        self.where, self.target, self.spline, self.index = where, target, spline, index
        self.scalar_first, self.jumps = getattr(spline, "scalar_first", False), None
        self.flat_index = int(np.arange(np.prod(spline.batch_shape, dtype=int))
                              .reshape(spline.batch_shape)[index])
        knots = spline.breakpoints
        self.knots = knots[index] if knots.ndim > 1 else knots

    def __call__(self, t):
        return self.spline(t)[self.index]

    def sampled(self, times, offset):
        """(glTF times, output rows, interpolation, measured max error):
        LINEAR keys at `times`, or the spline's own keys as CUBICSPLINE
        when `times` is None."""
        cubic = times is None
        times = self.knots if cubic else times
        stored = _as_float32(f"{self.where}: time", times - offset, times)
        if stored[0] < 0:
            raise ValueError(f"{self.where}: times start at {times[0]}, before time_offset "
                             f"{offset}; glTF times cannot be negative")
        if not np.all(np.diff(stored) > 0):
            raise ValueError(f"{self.where}: key times are too close to stay increasing "
                             f"as glTF's float32 (pass a time_offset near the start)")
        if cubic:
            output = _as_float32(f"{self.where}: the key (in-tangent, value, out-tangent) "
                                 f"at time", self._hermite_rows(), times)
            play = _play_cubic
        else:
            output = self(times)
            if self.target == "rotation":
                output = _shortest_path(output if not self.scalar_first
                                        else output[..., [1, 2, 3, 0]])
            output = _as_float32(f"{self.where}: the sample at time", output, times)
            play = _play_slerp if self.target == "rotation" else _play_linear
        error = self._max_error(stored.astype(np.float64), output.astype(np.float64), play,
                                offset)
        return stored, output, "CUBICSPLINE" if cubic else "LINEAR", error

    def baked_times(self, rate):
        """Every key time and a grid of `rate` per second."""
        t0, t1 = float(self.knots[0]), float(self.knots[-1])
        grid = t0 + np.arange(int(np.floor((t1 - t0) * rate)) + 1) / rate
        # keep every key time; drop grid points that would nearly repeat one
        k = np.clip(np.searchsorted(self.knots, grid), 1, len(self.knots) - 1)
        gap = np.minimum(grid - self.knots[k - 1], self.knots[k] - grid)
        times = np.union1d(grid[np.abs(gap) >= 1e-3 / rate], self.knots)
        return self._split_spins(times) if self.target == "rotation" else times

    def _split_spins(self, times):
        """`times` with more where the spline turns by more than a quarter
        turn between two, at equal steps of the angle it sweeps, so that
        glTF's slerp, which takes the shorter way between neighbouring keys,
        replays every turn of a spin."""
        swept = self.spline.angle(times)[self.index]
        steps = np.ceil(np.diff(swept) / SPLIT_ANGLE).astype(int)
        extra = [swept[i] + (swept[i + 1] - swept[i]) * np.arange(1, n) / n
                 for i, n in enumerate(steps) if n > 1]
        if not extra:
            return times
        return np.union1d(times, self.spline.time_at_angle(np.concatenate(extra))[self.index])

    def _hermite_rows(self):
        """(K, 3, 3): glTF's (in-tangent, value, out-tangent) per key, the
        tangents per second (glTF multiplies them by the key interval)."""
        coef = self.spline.coefficients[self.index]          # (S, 4, 3) in u
        dt = np.diff(self.knots)[:, None]
        rows = np.zeros((len(self.knots), 3, 3))
        rows[:-1, 1] = coef[:, 0]
        rows[-1, 1] = coef[-1].sum(axis=0)
        rows[:-1, 2] = coef[:, 1] / dt                        # d/dt at the segment's start
        rows[1:, 0] = (coef[:, 1] + 2 * coef[:, 2] + 3 * coef[:, 3]) / dt  # and at its end
        return rows

    def _max_error(self, times, output, play, offset):
        u = np.arange(CHECKS_PER_INTERVAL + 1) / (CHECKS_PER_INTERVAL + 1)
        inner = times[:-1, None] + np.diff(times)[:, None] * u
        last = times[-1:]
        if self.jumps is not None:         # a jump's pair: only its start is checked
            inner[self.jumps, 1:] = inner[self.jumps, :1]
            last = last[:0] if len(self.jumps) and self.jumps[-1] else last
        probe = np.append(inner.ravel(), last)
        # in chunks: memory stays bounded however many keys there are
        return max(self._probe_error(times, output, play, offset, probe[i:i + _CHUNK])
                   for i in range(0, len(probe), _CHUNK))

    def _probe_error(self, times, output, play, offset, probe):
        # float32 key times can round just past the spline's domain
        truth = self(np.clip(probe + offset, self.knots[0], self.knots[-1]))
        # one key (a scene of one frame): glTF holds it
        played = (play(times, output, probe) if len(times) > 1
                  else np.repeat(output[:1], len(probe), axis=0))
        if self.target == "rotation":
            if self.scalar_first:
                truth = truth[..., [1, 2, 3, 0]]
            return float(np.max(_angle_between(played, truth)))
        return float(np.max(np.linalg.norm(played - truth, axis=-1)))


class _ChannelTrack(_Track):
    """A scene channel, keyed by `channel_keys` over a range (LINEAR only)."""

    def __init__(self, node, target, channel, span):
        self.where = f"channels[{node!r}][{target!r}]"
        if target not in _PATHS:
            raise ValueError(f"{self.where}: the path must be one of {sorted(_PATHS)}")
        if getattr(channel, "path", target) != target:
            raise ValueError(f"{self.where}: the channel's path is {channel.path!r}")
        times = np.asarray(channel.times, dtype=np.float64)
        if span is None:
            if not (times.ndim == 1 and len(times) and np.all(np.isfinite(times))):
                raise ValueError(f"{self.where}: the channel's times must be finite seconds")
            span = (float(times[0]), float(times[-1]))
        self.target, self.channel, self.span = target, channel, span
        self.scalar_first, self.jumps, self.spline = True, None, None
        self.knots = key_times_in(channel, *span)

    def __call__(self, t):
        t = np.asarray(t, dtype=np.float64)
        return np.asarray(self.channel(t.ravel()), dtype=np.float64).reshape(t.shape + (-1,))

    def keys(self, tolerance, rounding, spacing):
        """The key times within `tolerance`; notes the jumps' intervals."""
        try:
            times, _, self.jumps, _ = _channel_keys(self.channel, tolerance, *self.span,
                                                    spacing, rounding)
        except ValueError as error:
            raise ValueError(f"{self.where}: {error}") from None
        return times


def _shortest_path(q):
    """Flips quaternions so that each is within 90 degrees of the previous
    one: slerp between neighbours then takes the short way round."""
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    flips = np.cumsum(np.sum(q[1:] * q[:-1], axis=-1) < 0) % 2
    q[1:][flips == 1] *= -1
    return q
