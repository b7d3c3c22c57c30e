"""glTF 2.0's sampler rules (STEP, LINEAR with slerp for rotations,
CUBICSPLINE), shared by the reader's channels and the writer's checks of
what a viewer will play back."""
from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from ...quaternion import slerp

__all__ = ["GltfChannel", "INTERPOLATIONS"]

INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")


def _locate(times, t):
    """Each time's key interval k and its fraction u (M, 1), held at the ends."""
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
    u = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0.0, 1.0)[:, None]
    return k, u


def _play_step(times, values, t):
    k, u = _locate(times, t)
    return np.where(u < 1.0, values[k], values[k + 1])


def _play_linear(times, values, t):
    k, u = _locate(times, t)
    return (1 - u) * values[k] + u * values[k + 1]


def _play_slerp(times, q, t):
    """Rotations (x, y, z, w) as glTF stores them."""
    k, u = _locate(times, t)
    return slerp(q[k], q[k + 1], u[:, 0], scalar_first=False)


def _play_cubic(times, rows, t):
    """`rows` (K, 3, n): (in-tangent, value, out-tangent) per key, tangents per second."""
    k, u = _locate(times, t)
    d = (times[k + 1] - times[k])[:, None]
    u2, u3 = u * u, u * u * u
    return ((2 * u3 - 3 * u2 + 1) * rows[k, 1] + d * (u3 - 2 * u2 + u) * rows[k, 2]
            + (-2 * u3 + 3 * u2) * rows[k + 1, 1] + d * (u3 - u2) * rows[k + 1, 0])


@dataclasses.dataclass(frozen=True)
class GltfChannel:
    """One animation channel, evaluated as the glTF 2.0 sampler rules say
    (the `kbspline.formats.scene.Channel` protocol).

    Attributes
    ----------
    times : ndarray (K,)
        Key times, seconds.
    values : ndarray (K, n) or (3K, n)
        Key values, or for CUBICSPLINE (in-tangent, value, out-tangent) per
        key; rotations as stored, (x, y, z, w).
    interpolation : str
        ``"STEP"``, ``"LINEAR"`` or ``"CUBICSPLINE"``.
    path : str
        ``"translation"``, ``"rotation"``, ``"scale"`` or ``"weights"``.
    """
    times: np.ndarray
    values: np.ndarray
    interpolation: str
    path: str

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """The channel's values at times `t`, clamped outside the keys as viewers do.

        Parameters
        ----------
        t : float or array_like (M,)
            Seconds.

        Returns
        -------
        ndarray (M, n)
            Rotations (M, 4) as unit (w, x, y, z).

        Raises
        ------
        ValueError
            For a time that is not finite, as the splines do.
        """
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        if t.ndim != 1:
            raise ValueError(f"t must be a number or a 1-D array, not shape {t.shape}")
        if not np.all(np.isfinite(t)):
            raise ValueError(f"t must be finite, not {t[~np.isfinite(t)][0]}")
        cubic = self.interpolation == "CUBICSPLINE"
        points = self.values[1::3] if cubic else self.values
        if len(self.times) == 1:
            out = np.repeat(points[:1], len(t), axis=0)
        elif self.interpolation == "STEP":
            out = _play_step(self.times, points, t)
        elif cubic:
            rows = self.values.reshape(len(self.times), 3, -1)
            out = _play_cubic(self.times, rows, t)
        elif self.path == "rotation":
            return _play_slerp(self.times, points, t)[:, [3, 0, 1, 2]]
        else:
            out = _play_linear(self.times, points, t)
        if self.path != "rotation":
            return out
        return (out / np.linalg.norm(out, axis=1, keepdims=True))[:, [3, 0, 1, 2]]
