"""kbspline: Kochanek-Bartels keyframe splines over NumPy arrays, with a C core.

IMPORTANT: quaternions are (w, x, y, z), scalar first, unless a function or
class is given scalar_first=False, which reads and writes (x, y, z, w) as
SciPy does.
"""
from .position import PositionSpline
from .rotation import RotationSpline

__version__ = "0.1.0"
__all__ = ["PositionSpline", "RotationSpline", "__version__"]
