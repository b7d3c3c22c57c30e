"""The C core of key reduction (csrc/motion/reduce/kb_reduce_*.c) against its NumPy oracle
(reduce_oracles.py, the first implementation): the same greedy keys on every
clip, and clear errors for input the core refuses."""
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import _kbspline as core
from kbspline.motion import read_bvh
from reduce_oracles import select_keys
from test_reduce_world import random_clips

HERE = pathlib.Path(__file__).resolve().parent
CLIPS = sorted((HERE.parents[1] / "shared" / "data" / "mocap").glob("*.bvh")) + sorted(
    (HERE / "data" / "cmu").glob("*.bvh"))


def greedy(times, rotations, translations, angle, distance):
    return core.reduce_greedy(np.ascontiguousarray(times), np.ascontiguousarray(rotations),
                              np.ascontiguousarray(translations), angle, distance)


def assert_same_greedy(times, rotations, translations, angle, distance):
    keys, max_angle, max_distance = select_keys(times, rotations, translations, angle, distance)
    ours, angles, distances = greedy(times, rotations, translations, angle, distance)
    for mine, theirs in zip(ours, keys):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_allclose(angles.max(axis=1), max_angle, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(distances.max(axis=1), max_distance, rtol=1e-12, atol=1e-14)
    return ours


@pytest.mark.parametrize("degrees, distance", [(0.05, 0.01), (1.0, 0.3)])
@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_greedy_keys_are_the_oracles(path, degrees, distance):
    if not path.exists():
        pytest.skip("no clip")
    clip = read_bvh(path)
    J = len(clip.joints)
    angle, dist = np.full(J, np.radians(degrees)), np.full(J, distance)
    angle[1::5], dist[::3] = np.inf, np.inf  # unchecked channels, as world mode gives
    assert_same_greedy(clip.times, clip.rotations(), clip.translations(), angle, dist)


@settings(max_examples=30, deadline=None)
@given(clip=random_clips(), degrees=st.floats(0.01, 20.0), distance=st.floats(1e-3, 1.0))
def test_random_clips_greedy_keys_are_the_oracles(clip, degrees, distance):
    J = len(clip.joints)
    assert_same_greedy(clip.times, clip.rotations(), clip.translations(),
                       np.full(J, np.radians(degrees)), np.full(J, distance))


def frames(F=20):
    t = np.arange(F) * 0.1
    q = np.zeros((1, F, 4))
    q[..., 0] = np.cos(t / 2)
    q[..., 3] = np.sin(t / 2)
    return t, q, np.stack([t, t ** 2, 0 * t], axis=-1)[None]


def test_a_uniform_turn_and_a_line_need_two_keys():
    t, q, x = frames()
    x[0, :, 1] = 0.0
    keys, angle, distance = greedy(t, q, x, np.array([1e-9]), np.array([1e-9]))
    np.testing.assert_array_equal(keys[0], [0, 19])
    assert angle.max() < 1e-12 and distance.max() < 1e-12


@pytest.mark.parametrize("change, match", [
    (lambda t, q, x, a, d: (t[::-1].copy(), q, x, a, d), "strictly increasing"),
    (lambda t, q, x, a, d: (t, np.where(q > 0.5, np.nan, q), x, a, d), "must be finite"),
    # a zero quaternion, not a key (reported as no error before)
    (lambda t, q, x, a, d: (t, np.where(np.arange(20)[:, None] == 7, 0.0, q), x, a, d),
     "nonzero norm"),
    (lambda t, q, x, a, d: (t, q, x, np.array([np.nan]), d), "out of range"),
    (lambda t, q, x, a, d: (t, q, x, a, np.array([0.0])), "out of range"),
    (lambda t, q, x, a, d: (t[:1], q[:, :1], x[:, :1], a, d), "size out of range"),
])
def test_greedy_refuses_bad_input(change, match):
    t, q, x = frames()
    with pytest.raises(core.CoreError, match=match):
        greedy(*change(t, q, x, np.array([0.01]), np.array([0.01])))


@pytest.mark.parametrize("keys, error, match", [
    ([0, 5, 5, 19], core.CoreError, "strictly increasing"),
    ([1, 19], core.CoreError, "size out of range"),
    ([0, 18], core.CoreError, "size out of range"),
    (list(range(20)) + [19], ValueError, "more keys than frames"),
])
def test_drop_refuses_bad_keys(keys, error, match):
    t, q, x = frames()
    rows = np.zeros((len(keys), 3))
    with pytest.raises(error, match=match):
        core.reduce_drop(t, q, x, 0.01, 0.01, np.array(keys), rows, rows)


@st.composite
def raw_tracks(draw):
    """One joint's frames at extreme but legal values: frame times from 1 ms
    to 10 s and far from zero, translations from 1e-6 to 1e6 units, turns
    of up to a half turn a frame, each quaternion's sign at random."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    F = draw(st.integers(2, 60))
    dt = draw(st.sampled_from([1e-3, 1 / 30, 10.0]))
    times = draw(st.sampled_from([0.0, 1e6])) + np.arange(F) * dt
    step = draw(st.sampled_from([0.0, 0.05, 0.5, 3.0]))
    angles = np.cumsum(rng.normal(size=(F, 3)) * step, axis=0)
    half = np.linalg.norm(angles, axis=1, keepdims=True) / 2
    axis = angles / np.maximum(2 * half, 1e-300)
    q = np.hstack([np.cos(half), np.sin(half) * axis])
    q *= rng.choice([-1.0, 1.0], size=(F, 1))
    scale = draw(st.sampled_from([1e-6, 1.0, 1e6]))
    x = np.cumsum(rng.normal(size=(F, 3)), axis=0) * scale
    angle = draw(st.sampled_from([1e-9, 1e-3, 0.1, np.inf]))
    distance = draw(st.sampled_from([1e-9, 1e-3, 0.1])) * scale
    return times, q[None], x[None], angle, distance


@settings(max_examples=100, deadline=None)
@given(track=raw_tracks())
def test_extreme_tracks_keep_their_tolerances(track):
    """Greedy and fitted keys keep every frame within the tolerances (as a
    RotationSpline and a PositionSpline through them evaluate it) and match
    the oracle's greedy keys."""
    from kbspline import PositionSpline, RotationSpline
    from kbspline.quaternion import _angle_between
    times, q, x, angle, distance = track
    keys = assert_same_greedy(times, q, x, np.array([angle]), np.array([distance]))[0]
    swept = core.reduce_sweep(times, q, x, angle, distance)
    fitted, rtcb, ttcb = core.reduce_drop(times, q, x, angle, distance, *swept)[:3]
    zero = np.zeros(len(keys))
    for k, r, t in [(keys, (zero, zero, zero), (zero, zero, zero)),
                    (fitted, {"tangents": (rtcb, rtcb)}, {"tangents": (ttcb, ttcb)})]:
        rot = (RotationSpline(times[k], q[0][k], **r) if isinstance(r, dict)
               else RotationSpline(times[k], q[0][k], *r))(times)
        pos = (PositionSpline(times[k], x[0][k], **t) if isinstance(t, dict)
               else PositionSpline(times[k], x[0][k], *t))(times)
        assert _angle_between(rot, q[0]).max() <= angle * (1 + 1e-9) + 1e-15
        assert np.linalg.norm(pos - x[0], axis=1).max() <= distance * (1 + 1e-12)
    assert set(fitted) <= set(swept[0])


@settings(max_examples=25, deadline=None)
@given(clip=random_clips(), floors=st.lists(st.floats(0.05, 50.0), min_size=2, max_size=4),
       distance=st.sampled_from([1e-2, np.inf]))
def test_greedy_order_carried_on_is_one_run(clip, floors, distance):
    """The order carried on from an earlier call's frames, floor after lower
    floor, is one run's to the last floor, bit for bit, scores and all
    (with the translation scored, and not: then the worst frames are found
    by their half angles)."""
    floors = sorted(floors, reverse=True)
    frames = (clip.times, np.ascontiguousarray(clip.rotations()[:1]),
              np.ascontiguousarray(clip.translations()[:1]))
    order, score = np.empty(0, np.intp), np.empty(0)
    for floor in floors:
        more, more_score = core.reduce_greedy_order(*frames, 1e-3, distance, floor, order)
        order, score = np.concatenate([order, more]), np.concatenate([score, more_score])
    whole, whole_score = core.reduce_greedy_order(*frames, 1e-3, distance, floors[-1])
    np.testing.assert_array_equal(order, whole)
    assert whole_score.tobytes() == score.tobytes()


@settings(max_examples=40, deadline=None)
@given(clip=random_clips(), pick=st.integers(0, 10 ** 6))
def test_worst_frames_by_half_angles_are_those_by_score(clip, pick):
    """Where the rotation alone is scored, the selection finds a segment's
    worst frame by its half angle's sine and cosine, and by score where that
    is within rounding of the floor: the same keys, in the same order, as
    with the translation scored too (constant, so that it never counts), at
    an angle tolerance equal, to the bit, to a frame's error, and every
    frame is kept within it."""
    times = clip.times
    rotations = np.ascontiguousarray(clip.rotations()[:1])
    still = np.zeros((1, len(times), 3))
    # the errors of the spline through the first and last frames alone
    _, errors, _ = greedy(times, rotations, still, np.array([10.0]), np.array([np.inf]))
    errors = np.unique(errors[errors > 1e-9])
    if not len(errors):
        return
    for tolerance in (errors[-1], errors[pick % len(errors)]):  # the worst: a tie at once
        (keys,), angles, _ = greedy(times, rotations, still, np.array([tolerance]),
                                    np.array([np.inf]))
        assert angles.max() <= tolerance
        (scored,), _, _ = greedy(times, rotations, still, np.array([tolerance]),
                                 np.array([1.0]))
        np.testing.assert_array_equal(keys, scored)
        halves, order = (core.reduce_greedy_order(times, rotations, still, tolerance, distance,
                                                  1.0) for distance in (np.inf, 1.0))
        for mine, theirs in zip(halves, order):
            assert mine.tobytes() == theirs.tobytes()


def turns(*halves):
    """A track whose spline through its first and last frames (identity) is
    the identity, so that an interior frame (cos, 0, 0, sin) has, to the
    bit, its own half angle's cosine and sine."""
    q = np.zeros((1, len(halves) + 2, 4))
    q[0, 0, 0] = q[0, -1, 0] = 1.0
    q[0, 1:-1, 0], q[0, 1:-1, 3] = np.transpose(halves)
    return np.arange(q.shape[1]) * 0.1, q, np.zeros((1, q.shape[1], 3))


def test_a_worst_frame_a_rounding_past_the_tolerance_is_keyed():
    """Frames 2 and 1 differ by an ulp of their cosines: frame 2's angle is
    the larger, but the ratios of sines to cosines that find a segment's
    worst frame round equal, so frame 1 is found first.  At a tolerance of
    frame 1's angle exactly, its score ties the floor, and the segment is
    searched again by score: frame 2 is keyed, not left an ulp past it."""
    times, q, x = turns((0.8596405965484012, 0.5108992510915524),
                        (0.8596405965484011, 0.5108992510915524))
    _, errors, _ = greedy(times, q, x, np.array([10.0]), np.array([np.inf]))
    assert errors[0, 2] > errors[0, 1]  # the premise: angles an ulp apart
    (keys,), angles, _ = greedy(times, q, x, errors[:, 1], np.array([np.inf]))
    np.testing.assert_array_equal(keys, [0, 2, 3])
    assert angles.max() <= errors[0, 1]


@pytest.mark.parametrize("norm", [1e-161, 1.0, 3e154])
def test_worst_frames_of_any_norm_are_found(norm):
    """Quaternions of any finite norm: the ratio of a half angle's sine to
    its cosine orders the frames as their angles do (products of them would
    overflow or lose bits), so the worst is keyed and none is left above
    the tolerance (found by a review)."""
    times, q, x = turns((np.cos(0.305), np.sin(0.305)), (np.cos(0.3575), np.sin(0.3575)))
    q *= norm
    for tolerance in (0.66, 0.1, 1e-3):
        (keys,), angles, _ = greedy(times, q, x, np.array([tolerance]), np.array([np.inf]))
        (scored,), _, _ = greedy(times, q, x, np.array([tolerance]), np.array([1e300]))
        np.testing.assert_array_equal(keys, scored)
        assert angles.max() <= tolerance


def test_the_earliest_of_equal_worst_frames_is_keyed():
    times, q, x = turns(*[(np.cos(a), np.sin(a)) for a in (0.1, 0.3, 0.3, 0.1)])
    for distance in (np.inf, 1.0):  # the rotation alone scored, and not
        order, _ = core.reduce_greedy_order(times, q, x, 0.1, distance, 1.0)
        assert order[0] == 2


@st.composite
def key_choices(draw, frames):
    """Keys (from the first frame to the last) and their TCB or None."""
    inner = draw(st.sets(st.integers(1, max(1, frames - 2)), max_size=frames))
    keys = np.array(sorted({0, frames - 1} | {f for f in inner if f < frames - 1}), np.intp)
    tcb = [draw(st.sampled_from([None, "random"])) for _ in range(2)]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    return keys, *(None if t is None else rng.uniform(-1, 1, (len(keys), 3)) for t in tcb)


@settings(max_examples=30, deadline=None)
@given(clip=random_clips(), data=st.data())
def test_errors_of_curves_are_the_rebuilds(clip, data):
    """reduce_errors of a rebuild's curves (a rotation of either sign) gives
    the rebuild's own errors, bit for bit."""
    frames = (clip.times, np.ascontiguousarray(clip.rotations()[:1]),
              np.ascontiguousarray(clip.translations()[:1]))
    rotations, translations, angle, distance = core.reduce_rebuild(
        *frames, *data.draw(key_choices(clip.num_frames)))
    rotations[::2] *= -1
    errors = core.reduce_errors(*frames, rotations, translations)
    assert errors[0].tobytes() == angle.tobytes() and errors[1].tobytes() == distance.tobytes()
    assert core.reduce_errors(*frames, rotations, None)[1] is None


@pytest.mark.parametrize("curves, error, match", [
    (lambda q, x: (q[:-1], x), ValueError, "curve_rotations"),
    (lambda q, x: (q, x[:, :2]), ValueError, "curve_translations"),
    (lambda q, x: (q.astype(np.float32), x), TypeError, "curve_rotations"),
    (lambda q, x: (None, x), TypeError, "curve_rotations"),
])
def test_errors_of_curves_refuse_bad_input(curves, error, match):
    t, q, x = frames()
    rotations, translations = core.reduce_rebuild(t, q, x, np.array([0, 19]), None, None)[:2]
    with pytest.raises(error, match=match):
        core.reduce_errors(t, q, x, *curves(rotations, translations))


@pytest.mark.parametrize("keyed", [[0], [5, 5], [-1], [10 ** 6], [[1, 2]], ["a"],
                                   list(range(1, 1000))])
def test_greedy_order_refuses_frames_keyed_that_are_not_interior(keyed):
    clip = read_bvh(HERE / "data" / "cmu" / "131_01.bvh")
    frames = (clip.times, np.ascontiguousarray(clip.rotations()[:1]),
              np.ascontiguousarray(clip.translations()[:1]))
    with pytest.raises((ValueError, TypeError)):
        core.reduce_greedy_order(*frames, 1e-3, 1e-2, 1.0, keyed)


def test_neighbouring_keys_of_zero_dot_keep_the_tolerance():
    """Where two neighbouring keys' rotations have a dot of exactly zero
    (half turns apart), the second keeps its sign whatever the first's, so
    the chord between them turns with the signs of every key before: a
    window of keys is not the whole spline there.  Greedy, fitted and
    dropped keys still keep every frame of the whole spline within the
    tolerance, and report its errors to the bit (a fuzzed clip of half
    turns, its frames' signs flipped at random; the greedy selection kept
    frames up to 31 times over the tolerance, scored on windows)."""
    case = np.load(HERE / "data" / "zero_dot_neighbours.npz")
    times, translations = case["times"], case["translations"]
    rng = np.random.default_rng(0)
    for _ in range(60):
        rotations = case["rotations"] * rng.choice([-1.0, 1.0], size=(1, len(times), 1))
        angle = float(case["angle_tolerance"][0]) * rng.uniform(0.01, 2.0)
        distance = float(case["distance_tolerance"][0]) * rng.uniform(0.5, 5.0)
        frames = (times, rotations, translations)
        greedy_keys, greedy_angle, _ = greedy(*frames, np.array([angle]), np.array([distance]))
        swept = core.reduce_sweep(*frames, angle, distance)
        dropped = core.reduce_drop(*frames, 1.5 * angle, 1.5 * distance, *swept)
        for (keys, rtcb, ttcb, reported), limit, tangents in [
                ((greedy_keys[0], None, None, greedy_angle[0]), angle, False),
                (dropped[:4], 1.5 * angle, True)]:
            rebuilt = core.reduce_rebuild(*frames, keys, rtcb, ttcb, True, True, None,
                                          tangents)[2]
            assert reported.tobytes() == rebuilt.tobytes()
            assert rebuilt.max() <= limit


@pytest.mark.parametrize("signs, angle, start", [
    ([1, 1, -1, 1, -1, 1, -1, 1, 1, -1, -1, -1, -1, -1, 1, -1, 1, -1, 1, 1], 1.8975031120515995,
     [0, 1, 4, 5, 9, 16, 19]),
    ([-1, 1, -1, -1, 1, 1, -1, -1, 1, 1, -1, 1, -1, -1, 1, -1, -1, 1, 1, -1], 1.0366533528958914,
     [0, 1, 7, 9, 10, 11, 19])])
def test_fitted_keys_beside_zero_dot_neighbours_keep_the_tolerance(signs, angle, start):
    """Drops of keys a few apart at once, each checked on the frames it
    shapes, left frames up to 2.8 times over the tolerance where the keys
    left had neighbours half a turn apart (found with TCB keys, whose
    tangents reached past their neighbours): two signings of the fuzzed
    clip that did so, now swept and dropped, hold the tolerance."""
    case = np.load(HERE / "data" / "zero_dot_neighbours.npz")
    frames = (case["times"], case["rotations"] * np.array(signs)[None, :, None],
              case["translations"])
    swept = core.reduce_sweep(*frames, angle, np.inf)
    fitted = core.reduce_drop(*frames, angle, np.inf, *swept)
    rebuilt = core.reduce_rebuild(*frames, *fitted[:3], True, True, None, True)[2]
    assert fitted[3].tobytes() == rebuilt.tobytes()
    assert rebuilt.max() <= angle


@pytest.mark.parametrize("times, keyed", [([-1e308, 1e308], []), ([0.0, 5e-324], []),
                                           ([-1e308, 0.0, 1e308], [1]),
                                           ([0.0, 5e-324, 1e-323], [1])])
def test_greedy_order_refuses_bad_times_with_every_frame_a_key(times, keyed):
    """Times whose span overflows or whose spacing is below the normal
    range are refused even where no frame lies between keys to evaluate
    (every frame keyed already, or a clip of two)."""
    times = np.array(times)
    q = np.array([[[1.0, 0, 0, 0], [0.9, 0.1, 0, 0], [0.8, 0.6, 0, 0]]])[:, :len(times)]
    x = np.zeros((1, len(times), 3))
    with pytest.raises(core.CoreError, match="out of range"):
        core.reduce_greedy_order(times, q, x, 0.1, 0.1, 1.0, np.array(keyed, dtype=np.intp))


class _Meddler:
    """Key frames whose conversion (__array__) changes another argument's
    keys, already converted, as any Python code the conversion runs could."""

    def __init__(self, keys, victim, value):
        self.keys, self.victim, self.value = keys, victim, value

    def __array__(self, dtype=None, copy=None):
        self.victim[1] = self.value
        return self.keys


def test_merge_takes_the_old_keys_as_converted():
    F = 12
    old, new = np.array([0, 2, 4, 6, 8, 10, 11], np.intp), np.array([0, 4, 8, 11], np.intp)
    new_rotation = np.zeros((4, 3))
    new_rotation[1] = 1.0  # two pieces differ, 0 .. 8 and 8 .. 11
    rows = (np.zeros((7, 3)), np.zeros((7, 3)), new_rotation, np.zeros((4, 3)))
    worst = np.full(F, 0.25)
    worst[2] = 1.0  # the first fails: the old keys there
    want = core.reduce_merge(old, *rows[:2], new, *rows[2:], worst, 0.5)
    assert want is not None and want[0].tolist() == [0, 2, 4, 6, 8, 11]
    given = old.copy()
    got = core.reduce_merge(given, *rows[:2], _Meddler(new, given, 3), *rows[2:], worst, 0.5)
    assert given[1] == 3
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_rebuild_reads_its_own_keys_while_another_thread_changes_the_callers():
    """The core reads the keys with the GIL released: another thread that
    changes the caller's array then (to a frame past the clip, here) must
    not reach the core between its check of the keys and its reads."""
    import threading
    import time
    F = 100_000
    t = np.arange(F) / 30.0
    q = np.zeros((1, F, 4))
    q[..., 0] = 1.0
    x = np.zeros((1, F, 3))
    keys = np.arange(0, F, 2, dtype=np.intp)
    keys[-1] = F - 1
    i = len(keys) // 2
    good, done = keys[i], threading.Event()

    def meddle():
        while not done.is_set():
            keys[i] = 1 << 40
            time.sleep(0.0002)
            keys[i] = good
            time.sleep(0.0002)

    thread = threading.Thread(target=meddle)
    thread.start()
    try:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                core.reduce_rebuild(t, q, x, keys, None, None, True, True)
            except core.CoreError:
                pass  # the keys as converted were past the clip: refused
    finally:
        done.set()
        thread.join()
