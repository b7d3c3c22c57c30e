"""The watch behind the `no_core` mark (conftest.py) sees every way into the
C extension, and leaves the extension as it found it."""
import types

import numpy as np

import kbspline
from kbspline import _kbspline as core
from kbspline.position import PositionSpline
from kbspline.rotation import RotationSpline

from core_calls import core_calls


def test_calls_through_the_module_and_held_references_are_seen():
    with core_calls() as called:
        path = PositionSpline([0.0, 1.0, 3.0], [[0.0, 0.0], [1.0, 2.0], [4.0, 0.0]])
        path(0.5)
        path.total_length                       # the class's staticmethod reference
        turn = RotationSpline([0.0, 1.0, 2.0], kbspline.quat_from_axis_angle(
            [0.0, 0.0, 1.0], [0.0, 1.0, 2.0]))
        turn.total_angle
        kbspline.quat_conjugate([1.0, 0.0, 0.0, 0.0])
    assert {"tcb_build", "curve_eval", "length_table", "rot_build", "angle_table",
            "quat_util"} <= set(called)


def test_nothing_is_seen_without_a_call_and_everything_is_put_back():
    before = {name: value for name, value in vars(core).items()
              if isinstance(value, types.BuiltinFunctionType)}
    with core_calls() as called:
        np.linspace(0.0, 1.0, 5)
        assert not isinstance(core.curve_eval, types.BuiltinFunctionType)
    assert called == []
    assert {name: getattr(core, name) for name in before} == before
    assert PositionSpline.__dict__["_table_fn"].__func__ is core.length_table
    assert PositionSpline([0.0, 1.0], [0.0, 2.0]).total_length == 2.0
