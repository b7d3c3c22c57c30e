"""Linear samples of any scene channel within a tolerance (lerp for vectors,
slerp along the shorter arc for rotations, as USD replays them): the times
of `kbspline.formats.adaptive.channel_keys` with the channel's float64
values there, and `sample_error`, the playback error measured at any times.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .adaptive import MIN_KEY_SPACING, channel_keys

__all__ = ["channel_samples", "sample_error", "CHECKS"]

CHECKS = 24       # points per interval where the USD writer measures its error


def _replay(times, values, t, rotation):
    """Linear playback of samples (times, values) at `t`."""
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    u = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0.0, 1.0)[:, None]
    a, b = values[k], values[k + 1]
    if not rotation:
        return a + u * (b - a)
    b = np.where(np.sum(a * b, axis=1, keepdims=True) < 0, -b, b)
    cos = np.clip(np.sum(a * b, axis=1, keepdims=True), -1.0, 1.0)
    angle = np.arccos(cos)
    small = angle < 1e-9
    s = np.where(small, 1.0, np.sin(angle))
    wa = np.where(small, 1 - u, np.sin((1 - u) * angle) / s)
    wb = np.where(small, u, np.sin(u * angle) / s)
    out = wa * a + wb * b
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _error(got, want, rotation):
    if not rotation:
        return np.linalg.norm(got - want, axis=1)
    chord = np.minimum(np.linalg.norm(got - want, axis=1), np.linalg.norm(got + want, axis=1))
    return 4 * np.arcsin(np.minimum(chord / 2, 1.0))      # angle between the rotations


def sample_error(channel: Callable, times: np.ndarray, t: np.ndarray, rotation: bool,
                 values: Optional[np.ndarray] = None) -> np.ndarray:
    """Playback error at times `t` of samples at `times` (values: the
    channel's there unless given)."""
    values = channel(times) if values is None else values
    return _error(_replay(times, values, t, rotation), channel(t), rotation)


def channel_samples(channel, tolerance: float, *, start: float, end: float,
                    min_spacing: float = MIN_KEY_SPACING) -> tuple[np.ndarray, np.ndarray]:
    """(times (K,), values (K, n)) of linear samples of `channel` over
    [start, end]: values are the channel's own at those times, float64."""
    times = np.asarray(channel_keys(channel, tolerance, start=start, end=end,
                                    min_spacing=min_spacing)[0], dtype=np.float64)
    return times, np.asarray(channel(times), dtype=np.float64).reshape(len(times), -1)

