"""Rotations evaluated in lanes: every query gets the same bits however it
is asked for (SPEC 3, 9).

The C core evaluates squad values and rates four or eight queries at a time
(a single query is lane 0 of the four-lane code), locates queries shared by
every track once per block of 256, sends runs of eight uneased queries on
squad segments through track_block8 (in-register transposes for float64
output), and blends segment broadcasts by lane where a group straddles a
knot.  None of that may show: a query's rotation, angular velocity or angular
acceleration is the same alone, among any neighbours, in any order or chunk,
shared or per track, in a batch or its own spline, into float32 or float64,
in either component order, and on one thread or several.

Random splines reach the paths' edges: 2 to 40 keys, uneven times far from
zero, identical, antipodal, half-turn and multi-turn keys, random TCB, with
and without easing, every timing, end condition and extrapolation, queries
on knots, at the ends, just beside them and outside, sorted, shuffled and
repeated, in counts around the group (4, 8) and block (256) sizes.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import kbspline
from kbspline import RotationSpline

TIMINGS = ["kb", "3ds", "parabolic", "average"]
MIN_KEYS = {"natural": 2, "phantom": 4, "reflect": 2, "clamped": 2, "closed": 3}
EXTRAPOLATIONS = [None, "clamp", "linear", "periodic", "error"]
METHODS = [("__call__", None), ("angular_velocity", "world"), ("angular_velocity", "body"),
           ("angular_acceleration", "world"), ("angular_acceleration", "body")]
# around the lane groups (4, 8) and the located blocks (256)
COUNTS = [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 33, 255, 256, 257, 263, 512, 513]
BATCHES = [(), (1,), (2,), (3,), (2, 2)]
# "small" steps weighted up: squad segments, where the runs of eight go
STEPS = ["small"] * 4 + ["random", "tiny", "identical", "antipodal", "half_turn",
                        "near_half_turn"]
PARAMS = ("tension", "continuity", "bias", "ease_from", "ease_to")
TO_SCALAR_LAST = [1, 2, 3, 0]

SETTINGS = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


@pytest.fixture
def restore_threads():
    previous = kbspline.get_num_threads()
    yield
    kbspline.set_num_threads(previous)


# -- evaluation and comparison ------------------------------------------------

def evaluate(spline, method, frame, t, out=None):
    if frame is None:
        return spline(t, out=out)
    return getattr(spline, method)(t, frame=frame, out=out)


def assert_same(got, expected, what):
    """Bit for bit: equal values (and equal NaN-free shapes), with the first
    differing entry named when not."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    if not np.array_equal(got, expected):
        bad = np.argwhere(got != expected)
        index = tuple(int(i) for i in bad[0]) if len(bad) else "NaN"
        raise AssertionError(f"{what}: {len(bad)} entries differ, first at {index}: "
                             f"{got[index]!r} != {expected[index]!r}")


# -- random keys --------------------------------------------------------------

def qmul(a, b):
    w1, x1, y1, z1 = np.moveaxis(a, -1, 0)
    w2, x2, y2, z2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def turn(axis, angle):
    """exp(angle / 2 axis) for a unit axis."""
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def unit(rng, n):
    v = rng.normal(size=n)
    return v / np.linalg.norm(v)


def track_keys(draw, rng, K):
    """K keys (w, x, y, z), each a step from the one before of a kind that
    stresses squad (repeats, sign flips, half turns, near half turns),
    flipped in sign and scaled at random: the spline normalises and aligns."""
    steps = draw(st.lists(st.sampled_from(STEPS), min_size=K - 1, max_size=K - 1))
    keys = [unit(rng, 4)]
    for step in steps:
        prev, axis = keys[-1], unit(rng, 3)
        if step == "random":
            q = unit(rng, 4)
        elif step == "identical":
            q = prev.copy()
        elif step == "antipodal":
            q = -prev
        elif step == "half_turn":
            q = qmul(prev, np.concatenate([[0.0], axis]))
        else:
            angle = {"small": rng.uniform(0, 1.5), "tiny": 10.0 ** rng.uniform(-12, -5),
                     "near_half_turn": np.pi - 10.0 ** rng.uniform(-12, -2)}[step]
            q = qmul(prev, turn(axis, angle))
        keys.append(q)
    keys = np.array(keys)
    keys *= np.where(rng.random((K, 1)) < 0.3, -1.0, 1.0) * 10.0 ** rng.uniform(-3, 3, (K, 1))
    return keys


def relative_turns(rng, K):
    """Axes and angles for from_relative: small turns, exact half turns and
    turns of up to three revolutions either way."""
    axes = rng.normal(size=(K, 3))
    kinds = rng.integers(0, 4, K)
    angles = np.select([kinds == 0, kinds == 1, kinds == 2],
                       [rng.uniform(-1, 1, K), np.pi * rng.choice([-1, 1], K),
                        2 * np.pi * rng.integers(-3, 4, K) + rng.uniform(-0.5, 0.5, K)],
                       rng.uniform(-20, 20, K))
    return axes, angles


def key_times(draw, rng, shape):
    """Strictly increasing times: even or very uneven gaps, near zero or
    offset by up to 1e6 (u is local, so nothing is lost)."""
    offset = draw(st.sampled_from([0.0, -3.25, 1e-7, 1e3, 1e6, -1e6]))
    scale = draw(st.sampled_from([1.0, 0.01, 37.5]))
    if draw(st.booleans()):
        gaps = np.full(shape, scale)
    else:
        gaps = scale * 10.0 ** rng.uniform(-2.5, 1.5, shape)
    return offset + np.cumsum(gaps, axis=-1)


@st.composite
def spline_recipes(draw):
    """A RotationSpline's constructor arguments (keys scalar first) with the
    names of the arguments given per track."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    ends = draw(st.sampled_from(sorted(MIN_KEYS)))
    K = draw(st.integers(MIN_KEYS[ends], 40))
    batch = draw(st.sampled_from(BATCHES))
    B = math.prod(batch)
    closed = ends == "closed"
    recipe = {"batch": batch, "per_track": set(), "relative": not closed and draw(
        st.sampled_from([False, False, False, True]))}
    kw = {"timing": draw(st.sampled_from(TIMINGS)), "ends": ends,
          "extrapolate": draw(st.sampled_from(EXTRAPOLATIONS))}
    times_kind = draw(st.sampled_from(["none", "shared", "per_track"] if batch
                                      else ["none", "shared"]))
    kw["times"] = (None if times_kind == "none" else
                   key_times(draw, rng, (K,) if times_kind == "shared" else batch + (K,)))
    if times_kind == "per_track":
        recipe["per_track"].add("times")
    if recipe["relative"]:
        turns = [relative_turns(rng, K) for _ in range(B)]
        kw["axes"] = np.reshape([a for a, _ in turns], batch + (K, 3))
        kw["angles"] = np.reshape([b for _, b in turns], batch + (K,))
        recipe["per_track"] |= {"axes", "angles"}
        if draw(st.booleans()):
            kw["start"] = unit(rng, 4)
    else:
        keys = np.reshape([track_keys(draw, rng, K) for _ in range(B)], batch + (K, 4))
        if closed:  # the last key repeats the first, up to sign
            keys[..., -1, :] = keys[..., 0, :] * rng.choice([-1.0, 1.0])
        kw["quaternions"] = keys
        recipe["per_track"].add("quaternions")
    eased = draw(st.sampled_from([False, False, True]))
    for name in PARAMS:
        if name in PARAMS[3:] and not eased:
            continue
        kind = draw(st.sampled_from(["scalar", "per_key", "per_track"] if batch
                                    else ["scalar", "per_key"]))
        lo, hi = (-1.0, 1.0) if name in PARAMS[:3] else (0.0, 1.0)
        if kind == "scalar":
            kw[name] = float(draw(st.sampled_from([lo, 0.0, hi, rng.uniform(lo, hi)])))
            continue
        shape = (K,) if kind == "per_key" else batch + (K,)
        value = rng.uniform(lo, hi, shape)
        value[rng.random(shape) < 0.2] = 0.0
        if closed:
            value[..., -1] = value[..., 0]
        kw[name] = value
        if kind == "per_track":
            recipe["per_track"].add(name)
    if ends == "clamped":
        for name in ("start_angular_velocity", "end_angular_velocity"):
            if draw(st.booleans()):
                kw[name] = rng.normal(scale=10.0 ** rng.uniform(-1, 1.5), size=batch + (3,))
                recipe["per_track"].add(name)
    recipe["kw"] = kw
    return recipe


def build(recipe, scalar_first=True, track=None):
    """The recipe's spline in either component order, or only its flat
    track `track` as a spline of its own."""
    kw = dict(recipe["kw"])
    n_batch = len(recipe["batch"])
    if track is not None:
        for name in recipe["per_track"]:
            arr = kw[name]
            kw[name] = np.reshape(arr, (-1,) + arr.shape[n_batch:])[track]
    if not scalar_first:
        for name in ("quaternions", "start"):
            if name in kw:
                kw[name] = kw[name][..., TO_SCALAR_LAST]
    if recipe["relative"]:
        times, axes, angles = kw.pop("times"), kw.pop("axes"), kw.pop("angles")
        tcb = [kw.pop(name, 0.0) for name in PARAMS[:3]]
        return RotationSpline.from_relative(times, axes, angles, *tcb,
                                            scalar_first=scalar_first, **kw)
    times, keys = kw.pop("times"), kw.pop("quaternions")
    return RotationSpline(times, keys, scalar_first=scalar_first, **kw)


# -- random queries -----------------------------------------------------------

CATEGORIES = ["inside", "knot", "end", "beside_knot", "outside", "far"]


def track_queries(draw, rng, knots, M, extrapolate):
    """M query times for one track's knots: inside, exactly on knots and
    ends, one ulp beside them, just and far outside (within the 1e-12
    tolerance with extrapolate='error'), sorted, shuffled or reversed, with
    repeats."""
    lo, hi = float(knots[0]), float(knots[-1])
    span = hi - lo
    if draw(st.booleans()):  # evenly spaced: long sorted runs on one segment
        margin = 0.0 if extrapolate == "error" else draw(st.sampled_from([0.0, 0.1, 1.5]))
        t = np.linspace(lo - margin * span, hi + margin * span, M)
    else:
        cats = sorted(draw(st.sets(st.sampled_from(CATEGORIES), min_size=1)))
        pick = rng.integers(0, len(cats), M)
        t = np.empty(M)
        for i in range(M):
            cat = cats[pick[i]]
            side = rng.choice([-1.0, 1.0])
            if cat == "inside":
                t[i] = rng.uniform(lo, hi)
            elif cat == "knot":
                t[i] = rng.choice(knots)
            elif cat == "end":  # -0.0 for a domain from 0.0 too (u is then -0.0)
                t[i] = hi if side > 0 else -0.0 if lo == 0.0 and rng.random() < 0.5 else lo
            elif cat == "beside_knot":
                t[i] = np.nextafter(rng.choice(knots), side * np.inf)
            elif cat == "outside":
                t[i] = (lo - rng.uniform(0, 2) * span) if side < 0 else (
                    hi + rng.uniform(0, 2) * span)
            else:
                far = span * 10.0 ** rng.uniform(1, 4)
                t[i] = lo - far if side < 0 else hi + far
        if draw(st.booleans()):  # repeats
            n_rep = rng.integers(0, M + 1)
            t[rng.integers(0, M, n_rep)] = t[rng.integers(0, M, n_rep)]
    if extrapolate == "error":  # keep inside, within the tolerance the core allows
        tol = 1e-12 * span
        slack_lo, slack_hi = lo - 0.5 * tol, hi + 0.5 * tol
        t = np.where(t < lo, slack_lo if slack_lo >= lo - tol else lo, t)
        t = np.where(t > hi, slack_hi if slack_hi <= hi + tol else hi, t)
    order = draw(st.sampled_from(["as drawn", "sorted", "reversed"]))
    if order == "sorted":
        t = np.sort(t)
    elif order == "reversed":
        t = np.sort(t)[::-1].copy()
    return t


def query_times(draw, rng, spline, recipe):
    """(M,) queries shared by every track, or (..., M) one row per track."""
    M = draw(st.sampled_from(COUNTS))
    knots = np.reshape(spline.breakpoints, (-1, spline.breakpoints.shape[-1]))
    extrapolate = recipe["kw"]["extrapolate"]
    batch = recipe["batch"]
    # extrapolate='error' with per-track knots needs each track's own domain
    per_track = bool(batch) and (draw(st.sampled_from([False, False, True])) or (
        extrapolate == "error" and len(knots) > 1))
    if not per_track:
        return track_queries(draw, rng, knots[0], M, extrapolate)
    rows = [track_queries(draw, rng, knots[min(i, len(knots) - 1)], M, extrapolate)
            for i in range(math.prod(batch))]
    return np.reshape(rows, batch + (M,))


# -- the properties -----------------------------------------------------------

def check_queries(recipe, spline, twin, t, rng):
    """Every method at queries t, against each query alone, permuted,
    chunked, float32, the other component order, per-track rows, and the
    first track's own spline."""
    batch, M = recipe["batch"], t.shape[-1]
    for method, frame in METHODS:
        what = f"{method}({frame or ''})"
        together = evaluate(spline, method, frame, t)
        # finite, and rotations unit
        assert np.all(np.isfinite(together)), what
        if frame is None:
            norms = np.linalg.norm(together, axis=-1)
            assert np.all(np.abs(norms - 1.0) <= 1e-12), (what, np.abs(norms - 1).max())
        # each query alone (a scalar: lane 0 of the four-lane code)
        if t.ndim == 1:
            alone = np.stack([evaluate(spline, method, frame, x) for x in t], axis=-2)
        else:
            alone = np.concatenate([evaluate(spline, method, frame, t[..., i:i + 1])
                                    for i in range(M)], axis=-2)
        assert_same(together, alone, f"{what}: batch against each query alone")
        # any order
        order = rng.permutation(M)
        assert_same(evaluate(spline, method, frame, t[..., order]), together[..., order, :],
                    f"{what}: permuted queries")
        # any chunks (block edges moved)
        cuts = np.unique(rng.integers(0, M + 1, rng.integers(1, 5)))
        pieces = [evaluate(spline, method, frame, t[..., a:b])
                  for a, b in zip(np.r_[0, cuts], np.r_[cuts, M]) if b > a]
        assert_same(np.concatenate(pieces, axis=-2), together, f"{what}: chunks")
        # float32 out= is float64 cast; float64 out= the same bits
        out32 = np.empty(together.shape, np.float32)
        evaluate(spline, method, frame, t, out=out32)
        assert_same(out32, together.astype(np.float32), f"{what}: float32 out")
        # into NaNs one double past a 64-byte boundary: every entry written,
        # and the eight-lane stores need no alignment beyond the dtype's
        buffer = np.full(together.size + 8, np.nan)
        start = (-buffer.ctypes.data // 8) % 8 + 1
        out64 = buffer[start:start + together.size].reshape(together.shape)
        evaluate(spline, method, frame, t, out=out64)
        assert_same(out64, together, f"{what}: float64 out")
        # the other component order
        other = evaluate(twin, method, frame, t)
        assert_same(other, together[..., TO_SCALAR_LAST] if frame is None else together,
                    f"{what}: scalar_first=False")
        other32 = np.empty(together.shape, np.float32)
        evaluate(twin, method, frame, t, out=other32)
        assert_same(other32, other.astype(np.float32), f"{what}: scalar_first=False float32")
        if batch and t.ndim == 1:  # shared queries as per-track rows (no blocks)
            rows = np.broadcast_to(t, batch + (M,))
            assert_same(evaluate(spline, method, frame, rows), together,
                        f"{what}: shared queries as per-track rows")
        if batch:  # the first track as a spline of its own
            own = build(recipe, track=0)
            row = t if t.ndim == 1 else np.reshape(t, (-1, M))[0]
            first = np.reshape(together, (-1,) + together.shape[len(batch):])[0]
            assert_same(evaluate(own, method, frame, row), first,
                        f"{what}: first track alone")


def assert_alone_and_shuffled(spline, t, rng):
    """Each method at (M,) queries t: the batch is each query alone, the
    batch shuffled, and float32 out= the float64 result cast."""
    for method, frame in METHODS:
        what = f"{method}({frame or ''})"
        together = evaluate(spline, method, frame, t)
        alone = np.stack([evaluate(spline, method, frame, x) for x in t], axis=-2)
        assert_same(together, alone, f"{what}: batch against each query alone")
        order = rng.permutation(len(t))
        assert_same(evaluate(spline, method, frame, t[order]), together[..., order, :],
                     f"{what}: shuffled")
        out32 = np.empty(together.shape, np.float32)
        evaluate(spline, method, frame, t, out=out32)
        assert_same(out32, together.astype(np.float32), f"{what}: float32 out")


def small_steps(rng, shape, K):
    """Keys of tracks `shape`, K each, turning up to about a radian a key."""
    steps = np.concatenate([np.ones(shape + (K, 1)), 0.4 * rng.normal(size=shape + (K, 3))],
                           axis=-1)
    keys = steps.copy()
    for n in range(1, K):
        keys[..., n, :] = qmul(keys[..., n - 1, :], steps[..., n, :])
    return keys


@pytest.mark.parametrize("M", [255, 256, 257, 263, 520])
@pytest.mark.parametrize("scalar_first", [True, False])
def test_runs_of_eight_across_block_edges(M, scalar_first):
    # Dense sorted queries over few squad segments: most go eight at a time
    # through track_block8, whose runs restart at each block of 256 and
    # end at knots and where linear extrapolation leaves the domain; the
    # queries left over take the groups of four or eight.
    rng = np.random.default_rng(M)
    keys = small_steps(rng, (3,), 6)
    times = 1e6 + np.cumsum(rng.uniform(0.2, 2.0, 6))
    if not scalar_first:
        keys = keys[..., TO_SCALAR_LAST]
    s = RotationSpline(times, keys, 0.2, -0.1, 0.3, extrapolate="linear",
                       scalar_first=scalar_first)
    assert s.squad_segments.all()
    t = np.sort(np.concatenate([np.linspace(times[0] - 0.3, times[-1] + 0.3, M - 6), times]))
    assert_alone_and_shuffled(s, t, rng)


def test_groups_straddling_knots_in_every_pattern():
    # Unsorted queries whose groups of eight (and the four-lane groups of
    # the last few) lie on segments in the patterns the lane blend must
    # undo: one lane off at either end, alternating, every lane its own,
    # and a segment coming back after another.
    rng = np.random.default_rng(21)
    times = np.cumsum(rng.uniform(0.5, 1.5, 10))
    s = RotationSpline(times, small_steps(rng, (2,), 10), 0.1, 0.4, -0.2, timing="parabolic")
    patterns = [[3] * 7 + [4], [4] + [3] * 7, [2, 5] * 4, list(range(8)), [1, 1, 6, 6, 1, 1, 6, 1],
                [0, 8, 0, 8, 8, 0, 0, 8], [7] * 8, [2, 3, 2], [5, 6, 7, 5, 6]]
    seg = np.concatenate([np.array(p) for p in patterns])
    u = rng.uniform(0, 1, len(seg))
    u[::5] = 0.0  # on the knots too
    t = times[seg] + u * (times[seg + 1] - times[seg])
    assert_alone_and_shuffled(s, t, rng)


def test_runs_skip_cumulative_segments_per_track():
    # Track 0 has a cumulative segment (number 5), track 1 none: the
    # tracks share the located block, but only track 1's runs over segment
    # 5 may take the squad lanes.
    rng = np.random.default_rng(0)
    s = RotationSpline(None, rng.normal(size=(2, 8, 4)), -0.5, 0.3, 0.2)
    assert s.squad_segments.tolist() == [[1, 1, 1, 1, 1, 0, 1], [1] * 7]
    t = np.concatenate([np.linspace(4.5, 6.5, 40), np.linspace(0, 7, 57)])
    assert_alone_and_shuffled(s, t, rng)


@settings(max_examples=500, **SETTINGS)
@given(st.data())
def test_query_results_do_not_depend_on_how_they_are_asked(data):
    recipe = data.draw(spline_recipes(), label="recipe")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    spline = build(recipe)
    twin = build(recipe, scalar_first=False)
    t = query_times(data.draw, rng, spline, recipe)
    check_queries(recipe, spline, twin, t, rng)


@settings(max_examples=40, **SETTINGS)
@given(st.data())
def test_threads_give_the_same_bits(restore_threads, data):
    # Enough queries times tracks (10 per query >= 1e5 of work) for the
    # core to split the tracks over the threads; each thread then locates
    # its own blocks of 256 for its own tracks.
    recipe = data.draw(spline_recipes(), label="recipe")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    B = math.prod(recipe["batch"])
    kw = dict(recipe["kw"])
    # the recipe's tracks repeated to 12: (12, ...) per-track arrays
    reps = -(-12 // B)
    for name in recipe["per_track"]:
        arr = np.reshape(kw[name], (B,) + kw[name].shape[len(recipe["batch"]):])
        kw[name] = np.concatenate([arr] * reps)[:12]
    big = dict(recipe, kw=kw, batch=(12,))
    spline = build(big)
    t = query_times(data.draw, rng, spline, dict(big, batch=(12,)))
    if t.shape[-1] < 1000:
        t = np.concatenate([t] * -(-1000 // t.shape[-1]), axis=-1)
    results = {}
    for n in (1, 2, 3):
        kbspline.set_num_threads(n)
        results[n] = []
        for method, frame in METHODS:
            results[n].append(evaluate(spline, method, frame, t))
            out32 = np.empty(results[n][-1].shape, np.float32)
            results[n].append(evaluate(spline, method, frame, t, out=out32))
    for n in (2, 3):
        for (method, frame), a, b in zip([m for m in METHODS for _ in (0, 1)], results[1],
                                         results[n]):
            assert_same(b, a, f"{method}({frame or ''}): {n} threads against one")
    # and a few tracks as splines of their own (too little work to split)
    flat = [np.reshape(r, (12,) + r.shape[-2:]) for r in results[2]]
    for i in (0, 5, 11):
        own = build(big, track=i)
        row = t if t.ndim == 1 else t[i]
        for k, (method, frame) in enumerate(METHODS):
            assert_same(evaluate(own, method, frame, row), flat[2 * k][i],
                        f"{method}({frame or ''}): track {i} alone")


# -- cumulative segments in the lanes -------------------------------------------

def conj(q):
    return q * np.array([1.0, -1.0, -1.0, -1.0])


@st.composite
def cumulative_recipes(draw):
    """Tracks with cumulative segments: keys 115-180 degrees apart with
    clamped fast end spins and TCB at the corners (ill-conditioned squad),
    or turns of up to five revolutions (spins), among them, at times, a
    spin of 2e5-1e6 radians, whose logs are too long for the vector sine.
    Returns the spline's maker (one track, or all), the times and the
    largest angle a key turns."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    n, K = draw(st.integers(1, 3)), draw(st.integers(2, 9))
    times = draw(st.sampled_from([0.0, 1e3])) + np.cumsum(rng.uniform(0.2, 2.0, K))
    timing = draw(st.sampled_from(TIMINGS))
    if draw(st.booleans()):
        axes = rng.normal(size=(n, K, 3))
        axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
        angles = rng.uniform(2.0, np.pi, (n, K))
        keys = np.concatenate([np.cos(angles / 2)[..., None],
                               np.sin(angles / 2)[..., None] * axes], axis=-1)
        for k in range(1, K):
            keys[:, k] = qmul(keys[:, k - 1], keys[:, k])
        tcb = rng.choice([-1.0, 0.0, 0.5, 1.0], size=(3, n, K))
        spins = rng.normal(scale=10.0 ** rng.uniform(0, 1.5), size=(2, n, 3))

        def make(i=slice(None)):
            return RotationSpline(times, keys[i], *tcb[:, i], timing=timing, ends="clamped",
                                  start_angular_velocity=spins[0, i],
                                  end_angular_velocity=spins[1, i])
        return make, times, np.pi
    axes = rng.normal(size=(n, K, 3))
    angles = 2 * np.pi * rng.uniform(-5, 5, (n, K))
    if draw(st.booleans()):
        angles[:, rng.integers(1, K)] = rng.choice([-1, 1]) * rng.uniform(2e5, 1e6)
    tcb = rng.uniform(-1, 1, (3, n, K))

    def make(i=slice(None)):
        return RotationSpline.from_relative(times, axes[i], angles[i], *tcb[:, i], timing=timing)
    return make, times, np.abs(angles).max()


@settings(max_examples=500, **SETTINGS)
@given(st.data())
def test_cumulative_lanes_against_differences_and_alone(data):
    # The cumulative cubic runs in the vector lanes (and on the C library's
    # sine beyond its range): its rates are the derivatives of its values,
    # and every query gives the same bits alone, shuffled, in any batch of
    # tracks and as its own track's spline.
    make, times, angle = data.draw(cumulative_recipes(), label="recipe")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    spline = make()
    cumulative = ~np.asarray(spline.squad_segments)
    assume(cumulative.any())
    # most queries on cumulative segments (any track's), inside them
    S = len(times) - 1
    on = np.flatnonzero(cumulative.any(axis=0))
    M = data.draw(st.sampled_from([1, 3, 8, 13, 40]), label="M")
    seg = np.where(rng.random(M) < 0.8, rng.choice(on, M), rng.integers(0, S, M))
    u = rng.uniform(0.02, 0.98, M)
    t = times[seg] + u * (times[seg + 1] - times[seg])
    q, w = spline(t), spline.angular_velocity(t)
    body, acc = spline.angular_velocity(t, frame="body"), spline.angular_acceleration(t)
    # central differences over a step the fastest turn takes c rad in: their
    # error is about c^2 of the rates' size from truncation, and from the
    # values' rounding (1e-16 of the angles turned, up to `angle`) divided
    # by the step, 1e-16 angle / c: c balances the two (20 c^2 seen at most).
    # The rates' size is the queried segments', not the queries' own: where
    # a turn slows to a stop between fast stretches, the truncation follows
    # the fast ones (from the queries' rates alone, CI met 340 c^2 there)
    inside = times[seg, None] + np.linspace(0, 1, 65) * (times[seg + 1] - times[seg])[:, None]
    big = 1.0 + max(np.abs(spline.angular_velocity(inside.ravel())).max(),
                    np.sqrt(np.abs(spline.angular_acceleration(inside.ravel())).max()))
    c = np.cbrt(1e-16 * (1.0 + angle))
    h = min(1e-3 * np.diff(times).min(), c / big)
    tp, tm = t + h, t - h
    step = (tp - tm)[:, None]
    qd = (spline(tp) - spline(tm)) / step
    tol = 200 * c ** 2
    np.testing.assert_allclose(2 * qmul(qd, conj(q))[..., 1:], w, rtol=0, atol=tol * big)
    np.testing.assert_allclose(2 * qmul(conj(q), qd)[..., 1:], body, rtol=0, atol=tol * big)
    alpha = (spline.angular_velocity(tp) - spline.angular_velocity(tm)) / step
    # (the acceleration's size: w^2, where it may be 0 itself)
    np.testing.assert_allclose(alpha, acc, rtol=0, atol=tol * (big ** 2 + np.abs(acc).max()))
    # bit for bit: alone, shuffled, float32, and each track as its own spline
    assert_alone_and_shuffled(spline, t, rng)
    for method, frame in METHODS:
        together = evaluate(spline, method, frame, t)
        for i in range(together.shape[0]):
            assert_same(evaluate(make(i), method, frame, t), together[i],
                        f"{method}({frame or ''}): track {i} alone")


def test_spins_beyond_the_vector_sine():
    # Steps of 3e5 radians (logs of 1.5e5, past the vector sine's range:
    # the scalar code) beside a spin of 4 pi and ordinary steps (the lanes),
    # in groups that straddle the knots: a constant spin where the steps
    # are equal, and the same bits alone as in the batch.
    times = np.arange(6.0)
    angles = [0.0, 3e5, 3e5, 4 * np.pi, 0.5, 0.3]
    s = RotationSpline.from_relative(times, [[0, 0, 1]] * 6, angles)
    assert not s.squad_segments[:3].any()
    t = np.linspace(0.0, 1.0, 77)[1:-1]
    np.testing.assert_allclose(s.angular_velocity(t), np.tile([0, 0, 3e5], (75, 1)), rtol=1e-12)
    half = 1.5e5 * t
    np.testing.assert_allclose(s(t), np.column_stack([np.cos(half), 0 * t, 0 * t, np.sin(half)]),
                               atol=1e-10)
    t = np.sort(np.random.default_rng(4).uniform(0, 5, 203))
    assert_alone_and_shuffled(s, t, np.random.default_rng(5))
