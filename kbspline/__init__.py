"""kbspline: Kochanek-Bartels keyframe splines over NumPy arrays, with a C core.

IMPORTANT: quaternions are (w, x, y, z), scalar first, unless a function or
class is given scalar_first=False, which reads and writes (x, y, z, w) as
SciPy does.
"""
from .position import PositionSpline
from .quaternion import (quat_conjugate, quat_exp, quat_from_axis_angle, quat_from_euler,
                         quat_from_matrix, quat_log, quat_multiply, quat_to_axis_angle,
                         quat_to_euler, quat_to_matrix, slerp, squad)
from .rotation import RotationSpline
from ._threads import get_num_threads, set_num_threads

__version__ = "0.1.0"
__all__ = ["PositionSpline", "RotationSpline", "quat_multiply", "quat_conjugate", "quat_log",
           "quat_exp", "slerp", "squad", "quat_from_axis_angle", "quat_to_axis_angle",
           "quat_from_matrix", "quat_to_matrix", "quat_from_euler", "quat_to_euler",
           "set_num_threads", "get_num_threads", "__version__"]
