# Types of the private extension module (its C source: kbspline/_ext/).
# Arrays are float64, C-contiguous; shapes are in each function's docstring.
from typing import Callable, Optional

import numpy as np
from numpy.typing import NDArray

_F64 = NDArray[np.float64]
_Out = NDArray[np.float64] | NDArray[np.float32]

class CoreError(ValueError): ...

COMPILER: str
TIMING_KB: int
TIMING_3DS: int
TIMING_PARABOLIC: int
TIMING_AVERAGE: int
ENDS_NATURAL: int
ENDS_PHANTOM: int
ENDS_REFLECT: int
ENDS_CLAMPED: int
ENDS_CLOSED: int
EXTRAP_CLAMP: int
EXTRAP_LINEAR: int
EXTRAP_PERIODIC: int
EXTRAP_ERROR: int
MAX_THREADS: int
Q_MULTIPLY: int
Q_CONJUGATE: int
Q_LOG: int
Q_EXP: int
Q_SLERP: int
Q_SQUAD: int
Q_FROM_AXIS_ANGLE: int
Q_TO_AXIS_ANGLE: int
Q_TO_MATRIX: int
Q_FROM_MATRIX: int
Q_FROM_EULER: int
Q_TO_EULER: int

def tcb_build(
    times: _F64, values: _F64, tension: _F64, continuity: _F64, bias: _F64,
    ease_from: _F64, ease_to: _F64, start_tangent: Optional[_F64],
    end_tangent: Optional[_F64], timing: int, ends: int, with_ease: bool,
    with_tangents: bool, n_threads: int, given_in: Optional[_F64],
    given_out: Optional[_F64], /,
) -> tuple[Optional[_F64], Optional[_F64], _F64, Optional[_F64]]: ...
def alpha_times(values: _F64, alpha: float, /) -> _F64: ...
def curve_eval(
    knots: _F64, coef: _F64, ease: Optional[_F64], extrap: int, nu: int, n_threads: int,
    t: _F64, out: _Out, /,
) -> None: ...
def rot_build(
    times: _F64, quats: _F64, tension: _F64, continuity: _F64, bias: _F64,
    ease_from: _F64, ease_to: _F64, start_omega: Optional[_F64],
    end_omega: Optional[_F64], timing: int, ends: int, with_ease: bool, n_threads: int,
    chords: Optional[_F64], with_ctrl: bool, given_in: Optional[_F64],
    given_out: Optional[_F64], /,
) -> tuple[_F64, _F64, _F64, Optional[_F64], NDArray[np.uint8], Optional[_F64]]: ...
def rot_eval(
    knots: _F64, seg: _F64, kind: NDArray[np.uint8], ease: Optional[_F64],
    extrap: int, nu: int,
    body: bool, scalar_first: bool, n_threads: int, t: _F64, out: _Out, /,
) -> None: ...
def angle_table(
    knots: _F64, seg: _F64, kind: NDArray[np.uint8], ease: Optional[_F64],
    extrap: int, /,
) -> tuple[NDArray[np.intp], _F64]: ...
def angle_query(
    knots: _F64, seg: _F64, kind: NDArray[np.uint8], ease: Optional[_F64],
    extrap: int, op: int,
    seg_start: NDArray[np.intp], panels: _F64, q: _F64, out: _Out, /,
) -> None: ...
def length_table(
    knots: _F64, coef: _F64, ease: Optional[_F64], extrap: int, /,
) -> tuple[NDArray[np.intp], _F64]: ...
def length_query(
    knots: _F64, coef: _F64, ease: Optional[_F64], extrap: int, op: int,
    seg_start: NDArray[np.intp], panels: _F64, q: _F64, out: _Out, /,
) -> None: ...
def quat_util(
    op: int, n: int, inputs: tuple[_F64, ...], outputs: tuple[_F64, ...],
    axes: tuple[int, int, int], extrinsic: bool, /,
) -> None: ...
def playback_check(samples: _F64, u: _F64, rotation: bool, /) -> tuple[_F64, _F64, _F64]: ...
def reduce_greedy(
    times: _F64, rotations: _F64, translations: _F64, angle_tolerance: _F64,
    distance_tolerance: _F64, /,
) -> tuple[list[NDArray[np.intp]], _F64, _F64]: ...
def reduce_greedy_order(
    times: _F64, rotations: _F64, translations: _F64, angle_tolerance: float,
    distance_tolerance: float, floor: float, keyed: Optional[NDArray[np.intp]] = None, /,
) -> tuple[NDArray[np.intp], _F64]: ...
def reduce_rebuild(
    times: _F64, rotations: _F64, translations: _F64, keys: NDArray[np.intp],
    rotation_tcb: Optional[_F64], translation_tcb: Optional[_F64], errors: bool = True,
    translation: bool = True,
    since: Optional[tuple[NDArray[np.intp], Optional[_F64], Optional[_F64], _F64,
                          Optional[_F64]]] = None, tangent_keys: bool = False, /,
) -> tuple[_F64, Optional[_F64], Optional[_F64], Optional[_F64]]: ...
def reduce_errors(
    times: _F64, rotations: _F64, translations: _F64, curve_rotations: _F64,
    curve_translations: Optional[_F64], /,
) -> tuple[_F64, Optional[_F64]]: ...
def joint_world(
    parent_rot: Optional[_F64], parent_origin: Optional[_F64], rotations: _F64,
    offsets: _F64, sites: _F64, truth: Optional[_F64], limit: float = ...,
    frame_worst: Optional[_F64] = ..., out: Optional[tuple[_F64, _F64]] = ..., /,
) -> tuple[_F64, _F64, Optional[_F64], Optional[float]]: ...
def reduce_clip(
    rotations: _F64, translations: _F64, frame_time: float, parents: NDArray[np.intp],
    moves: NDArray[np.bool_], offsets: _F64, n_sites: NDArray[np.intp], sites: _F64,
    position_tolerance: float, angle_tolerance: float, distance_tolerance: float,
    virtual_distance: float, greedy: bool, n_threads: int,
    progress: Optional[Callable[[int, int], object]], /,
) -> tuple[list[NDArray[np.intp]], Optional[list[_F64]], Optional[list[_F64]], _F64, _F64,
           _F64]: ...
def reduce_drop(
    times: _F64, rotations: _F64, translations: _F64, angle_tolerance: float,
    distance_tolerance: float, keys: NDArray[np.intp], rotation_rows: _F64,
    translation_rows: _F64, errors: bool = True, /,
) -> tuple[NDArray[np.intp], _F64, _F64, Optional[_F64], Optional[_F64]]: ...
def reduce_merge(
    old_keys: NDArray[np.intp], old_rotation_rows: _F64, old_translation_rows: _F64,
    new_keys: NDArray[np.intp], new_rotation_rows: _F64, new_translation_rows: _F64,
    frame_worst: _F64, limit: float, /,
) -> Optional[tuple[NDArray[np.intp], _F64, _F64]]: ...
def reduce_sweep(
    times: _F64, rotations: _F64, translations: _F64, angle_tolerance: float,
    distance_tolerance: float, /,
) -> tuple[NDArray[np.intp], _F64, _F64]: ...
def fit_tcb(
    times: _F64, rotations: _F64, translations: _F64, rotation: bool, keys: NDArray[np.intp],
    tcb: _F64, iterations: int, jacobian_every: int, per_segment: Optional[int] = None, /,
) -> _F64: ...
def fit_tcb_model(
    times: _F64, rotations: _F64, translations: _F64, rotation: bool, keys: NDArray[np.intp],
    tcb: _F64, steps: int, per_segment: Optional[int] = None, /,
) -> _F64: ...
def joint_reach(parents: NDArray[np.intp], n_sites: NDArray[np.intp], points: _F64, /) -> _F64: ...
