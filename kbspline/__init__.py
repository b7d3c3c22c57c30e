"""kbspline: Kochanek-Bartels keyframe splines over NumPy arrays, with a C core.

Quaternions, once rotations exist, are (w, x, y, z) unless scalar_first=False.
"""
from .position import PositionSpline

__version__ = "0.1.0"
__all__ = ["PositionSpline", "__version__"]
