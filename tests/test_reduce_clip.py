"""kb_reduce_clip (csrc/include/kbspline/reduce.h), the C entry point of
key reduction, called through ctypes from the extension (which links the
core in): the same keys, tangents and errors as reduce_keys, bit for bit,
on random hierarchies, and bad input refused with the status it names.
reduce_keys calls it too (through the extension's binding), so this checks
the struct layout and the binding's conversions; the searches' oracles are
in test_reduce_world.py and test_reduce_contract.py."""
import ctypes as C

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import _kbspline
from kbspline.motion import reduce_keys
from kbspline.motion.world_error import moves
from test_reduce_contract import hard_clips

P = C.POINTER
KB_EBADSHAPE, KB_ENONFINITE, KB_ERANGE = 1, 3, 9
KB_ESTOPPED = 11


class Clip(C.Structure):
    _fields_ = [("n_joints", C.c_ssize_t), ("n_frames", C.c_ssize_t), ("frame_time", C.c_double),
                ("parents", P(C.c_ssize_t)), ("rotations", P(C.c_double)),
                ("translations", P(C.c_double)), ("moves", P(C.c_ubyte)),
                ("offsets", P(C.c_double)), ("n_sites", P(C.c_ssize_t)), ("sites", P(C.c_double))]


class Options(C.Structure):
    _fields_ = [("position_tolerance", C.c_double), ("angle_cap", C.c_double),
                ("distance_cap", C.c_double), ("virtual_distance", C.c_double),
                ("greedy", C.c_int), ("n_threads", C.c_int),
                ("progress", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int, C.c_int)),
                ("progress_data", C.c_void_p)]


class Reduction(C.Structure):
    _fields_ = [("n_joints", C.c_ssize_t), ("n_frames", C.c_ssize_t),
                ("keys", P(C.c_ssize_t)), ("n_keys", P(C.c_ssize_t)),
                ("rotation_tangents", P(C.c_double)), ("translation_tangents", P(C.c_double)),
                ("max_position", P(C.c_double)), ("max_angle", P(C.c_double)),
                ("max_distance", P(C.c_double))]


class Error(C.Structure):
    _fields_ = [("status", C.c_int), ("arg", C.c_int), ("track", C.c_ssize_t),
                ("index", C.c_ssize_t)]


LIB = C.CDLL(_kbspline.__file__)
if not hasattr(LIB, "kb_reduce_clip"):  # a build that does not export the core's symbols
    pytest.skip("the extension does not export kb_reduce_clip", allow_module_level=True)
LIB.kb_reduce_clip.argtypes = [P(Clip), P(Options), P(Reduction), P(Error)]
LIB.kb_reduce_clip.restype = C.c_int
LIB.kb_reduction_free.argtypes = [P(Reduction)]


def _pointer(array, ctype):
    return array.ctypes.data_as(P(ctype))


def clip_arrays(motion):
    """The arrays of kb_motion_clip for a Motion, as reduce_keys reads it."""
    joints = motion.joints
    sites = [j.end_site for j in joints if j.end_site is not None]
    return dict(parents=np.array([j.parent for j in joints], dtype=np.intp),
                rotations=np.ascontiguousarray(motion.rotations()),
                translations=np.ascontiguousarray(motion.translations()),
                moves=np.array([moves(j) for j in joints], dtype=np.uint8),
                offsets=np.array([j.offset for j in joints], dtype=np.float64),
                n_sites=np.array([j.end_site is not None for j in joints], dtype=np.intp),
                sites=np.array(sites, dtype=np.float64).reshape(-1, 3))


def reduce_clip(arrays, frame_time, **options):
    """kb_reduce_clip's status, and on success (keys, rotation tangents,
    translation tangents or None, max_position, max_angle, max_distance)."""
    J, F = arrays["rotations"].shape[:2]
    clip = Clip(J, F, frame_time, _pointer(arrays["parents"], C.c_ssize_t),
                _pointer(arrays["rotations"], C.c_double),
                _pointer(arrays["translations"], C.c_double),
                _pointer(arrays["moves"], C.c_ubyte), _pointer(arrays["offsets"], C.c_double),
                _pointer(arrays["n_sites"], C.c_ssize_t), _pointer(arrays["sites"], C.c_double))
    out, err = Reduction(), Error()
    status = LIB.kb_reduce_clip(C.byref(clip), C.byref(Options(**options)), C.byref(out),
                                C.byref(err))
    if status:
        return status, err
    n_keys = np.ctypeslib.as_array(out.n_keys, (J,)).copy()
    keys = np.ctypeslib.as_array(out.keys, (J, F))
    keys = [keys[j, :n_keys[j]].copy() for j in range(J)]
    tangents = [None if not rows else
                [row[:n].copy() for row, n in zip(np.ctypeslib.as_array(rows, (J, F, 3)), n_keys)]
                for rows in (out.rotation_tangents, out.translation_tangents)]
    errors = [np.ctypeslib.as_array(e, (J,)).copy()
              for e in (out.max_position, out.max_angle, out.max_distance)]
    LIB.kb_reduction_free(C.byref(out))
    return status, (keys, *tangents, *errors)


def _same(a, b):
    if a is None or b is None:
        assert a is None and b is None
        return
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@settings(max_examples=25, deadline=None)
@given(clip=hard_clips(), tolerance=st.floats(1e-3, 10.0),
       virtual=st.sampled_from([None, 1.0, 20.0]), fit=st.booleans(),
       cap=st.sampled_from([None, 0.01, 0.5]), threads=st.sampled_from([1, 2]))
def test_the_c_entry_point_is_reduce_keys(clip, tolerance, virtual, fit, cap, threads):
    try:
        expected = reduce_keys(clip, cap, position_tolerance=tolerance,
                               virtual_distance=virtual, fit=fit)
    except ValueError:
        expected = None
    status, got = reduce_clip(clip_arrays(clip), clip.frame_time, position_tolerance=tolerance,
                              angle_cap=cap or 0.0, virtual_distance=virtual or 0.0,
                              greedy=not fit, n_threads=threads)
    if expected is None:
        assert status == KB_ERANGE
        return
    assert status == 0
    keys, rotation_rows, translation_rows, position, angle, distance = got
    _same(keys, expected.key_frames)
    _same(rotation_rows, expected.rotation_tangents)
    _same(translation_rows, expected.translation_tangents)
    for a, b in ((position, expected.max_position), (angle, expected.max_angle),
                 (distance, expected.max_distance)):
        np.testing.assert_array_equal(a, b)


def test_bad_input_gives_its_status():
    from test_reduce_contract import chain
    motion = chain()
    arrays = clip_arrays(motion)
    good = dict(position_tolerance=0.1)
    assert reduce_clip(arrays, motion.frame_time, **good)[0] == 0
    for options in ({"position_tolerance": 0.0}, {"position_tolerance": np.inf},
                    {"position_tolerance": 0.1, "angle_cap": -1.0},
                    {"position_tolerance": 0.1, "virtual_distance": np.nan}):
        assert reduce_clip(arrays, motion.frame_time, **options)[0] == KB_ERANGE
    assert reduce_clip(arrays, 0.0, **good)[0] == KB_ERANGE
    bad = dict(arrays, rotations=arrays["rotations"].copy())
    bad["rotations"][-1, 3, 2] = np.nan
    status, err = reduce_clip(bad, motion.frame_time, **good)
    assert (status, err.track, err.index) == (KB_ENONFINITE, len(arrays["parents"]) - 1, 3)
    bad = dict(arrays, parents=arrays["parents"].copy())
    bad["parents"][0] = 0
    status, err = reduce_clip(bad, motion.frame_time, **good)
    assert (status, err.track) == (KB_EBADSHAPE, 0)
    for count in (-1, 2**62):
        bad = dict(arrays, n_sites=arrays["n_sites"].copy())
        bad["n_sites"][0] = count
        status, err = reduce_clip(bad, motion.frame_time, **good)
        assert (status, err.track) == (KB_EBADSHAPE, 0)
    # far below what even every frame keyed reproduces (rounding's)
    assert reduce_clip(arrays, motion.frame_time, position_tolerance=1e-300)[0] == KB_ERANGE


@pytest.mark.parametrize("fit", [True, False])
def test_the_c_entry_point_is_reduce_keys_on_a_real_clip(fit):
    from test_reduce_contract import CMU
    from kbspline.motion import read_bvh
    motion = read_bvh(CMU / "131_03.bvh")
    tolerance = 0.5 / 5.644  # 0.5 cm
    expected = reduce_keys(motion, position_tolerance=tolerance, fit=fit, virtual_distance=1.0)
    status, (keys, *_, position, angle, distance) = reduce_clip(
        clip_arrays(motion), motion.frame_time, position_tolerance=tolerance, greedy=not fit,
        virtual_distance=1.0, n_threads=2)
    assert status == 0
    _same(keys, expected.key_frames)
    np.testing.assert_array_equal(position, expected.max_position)


PROGRESS = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int, C.c_int)


@pytest.mark.parametrize("fit", [True, False])
def test_progress_counts_the_passes_and_stops_the_search(fit):
    """The options' progress(done, total) is called as reduce_keys calls
    its own, and a non-zero return stops the search: KB_ESTOPPED, nothing
    to free."""
    from test_reduce_contract import chain
    motion = chain()
    expected = []
    reduce_keys(motion, position_tolerance=0.1, fit=fit,
                progress=lambda done, total: expected.append((done, total)))
    assert expected and expected[-1][0] <= expected[-1][1]
    for stop_at in (None, 1):
        calls = []

        def report(_, done, total):
            calls.append((done, total))
            return done == stop_at

        callback = PROGRESS(report)
        status, _ = reduce_clip(clip_arrays(motion), motion.frame_time, position_tolerance=0.1,
                                greedy=not fit, progress=callback)
        if stop_at is None:
            assert (status, calls) == (0, expected)
        else:
            assert (status, calls) == (KB_ESTOPPED, expected[:1])
