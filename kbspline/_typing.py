"""Type aliases of the public API (for annotations only)."""
from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "FloatArray", "OutArray"]

# Results are float64 arrays (a NumPy float64 scalar for one query of one track).
FloatArray = NDArray[np.float64]
# Where results may be written: float64 or float32, or None for a new array.
OutArray = Union[NDArray[np.float64], NDArray[np.float32], None]
