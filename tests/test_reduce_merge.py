"""The world search's piecewise check (csrc/motion/reduce/kb_reduce_merge.c,
_core.reduce_merge, and kb_joint_world's frame_worst): the merge of a
joint's old and new tangent keys against a plain Python oracle written
from its description, on random legal input, and its refusals of bad
input (the world search keeping the pieces that hold: test_reduce_world.py)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import _kbspline as _core
from kbspline.motion import reduce_keys
from test_reduce_world import walk, world_error  # noqa: F401 (a fixture)


def oracle(F, old, old_r, old_t, new, new_r, new_t, worst, limit):
    """Keys both share with equal rows cut [0, F) into pieces (each with the
    frames from the cut before it to the cut after, both included); a piece
    with keys between its cuts takes the new ones where every frame has
    worst <= limit ** 2 (NaN not; nothing for a negative limit), else the
    old."""
    old, new = [int(k) for k in old], [int(k) for k in new]
    at_old, at_new = {k: i for i, k in enumerate(old)}, {k: i for i, k in enumerate(new)}

    def holds(a, b):
        return limit >= 0 and all(worst[f] <= limit * limit for f in range(a, b + 1))

    cuts = [k for k in old if k in at_new
            and list(old_r[at_old[k]]) + list(old_t[at_old[k]])
            == list(new_r[at_new[k]]) + list(new_t[at_new[k]])]
    out, held = [], False
    for a, b in zip([None] + cuts, cuts + [None]):
        def between(keys):
            return [k for k in keys if (a is None or k > a) and (b is None or k < b)]
        old_in, new_in = between(old), between(new)
        ok = bool(old_in or new_in) and holds(0 if a is None else a, F - 1 if b is None else b)
        held |= ok
        out += [("new", k) for k in new_in] if ok else [("old", k) for k in old_in]
        if b is not None:
            out.append(("new", b))
    if not held:
        return None
    rows = {"old": (at_old, old_r, old_t), "new": (at_new, new_r, new_t)}
    return (np.array([k for _, k in out], dtype=np.intp),
            np.array([rows[s][1][rows[s][0][k]] for s, k in out]),
            np.array([rows[s][2][rows[s][0][k]] for s, k in out]))


@st.composite
def merges(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    F = int(rng.integers(2, 40))

    def keys():
        ks = set(rng.choice(F, int(rng.integers(2, F + 1)), replace=False).tolist())
        if rng.random() < 0.8:
            ks |= {0, F - 1}
        return np.array(sorted(ks), dtype=np.intp)

    old = keys()
    new = (np.array(sorted({0, F - 1} | {k for k in old.tolist() if rng.random() < 0.6}),
                    dtype=np.intp) if rng.random() < 0.6 else keys())
    if len(new) < 2:
        new = old[[0, -1]]
    values = [0.0, 1.0, -0.0, np.nan] if rng.random() < 0.2 else [0.0, 1.0]
    rows = [rng.choice(values, (len(k), 3)) for k in (old, old, new, new)]
    for w, k in enumerate(new):  # shared keys mostly keep their rows
        i = np.searchsorted(old, k)
        if i < len(old) and old[i] == k and rng.random() < 0.7:
            rows[2][w], rows[3][w] = rows[0][i], rows[1][i]
    worst = rng.choice([0.0, 0.5, 1.0, 2.0, np.nan, np.inf], F, p=[.5, .2, .1, .1, .05, .05])
    limit = float(rng.choice([1.0, 0.0, -1.0, -0.5, np.inf, np.nan, np.sqrt(0.5)]))
    return F, old, rows[0], rows[1], new, rows[2], rows[3], worst, limit


@settings(max_examples=400, deadline=None)
@given(case=merges())
def test_merge_is_the_oracles(case):
    F, old, old_r, old_t, new, new_r, new_t, worst, limit = case
    got = _core.reduce_merge(old, old_r, old_t, new, new_r, new_t, worst, limit)
    want = oracle(F, old, old_r, old_t, new, new_r, new_t, worst, limit)
    assert (got is None) == (want is None)
    if got is not None:
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_a_negative_limit_holds_no_frame():
    """As kb_joint_world's, a negative limit is one that every point is past:
    no piece holds, however small its errors (its square is positive)."""
    F = 10
    args = (np.array([0, 3, 6, 9]), np.zeros((4, 3)), np.zeros((4, 3)),
            np.array([0, 6, 9]), np.ones((3, 3)), np.zeros((3, 3)), np.full(F, 0.25))
    assert _core.reduce_merge(*args, 0.5) is not None
    assert _core.reduce_merge(*args, -0.5) is None


def bad_merges():
    F = 10
    good = [np.array([0, 3, 6, 9]), np.zeros((4, 3)), np.zeros((4, 3)), np.array([0, 6, 9]),
            np.ones((3, 3)), np.zeros((3, 3)), np.zeros(F), 1.0]

    def variant(i, value):
        args = list(good)
        args[i] = value
        return args

    return [
        variant(0, np.array([0])), variant(0, np.array([], dtype=np.intp)),
        variant(0, np.array([0, 6, 3, 9])), variant(0, np.array([0, 3, 3, 9])),
        variant(0, np.array([-1, 3, 6, 9])), variant(0, np.array([0, 3, 6, 10])),
        variant(0, np.array([0.0, 3, 6, 9])), variant(0, np.array([[0, 3, 6, 9]])),
        variant(0, None), variant(3, np.array([0])), variant(3, np.array([0, 2**62])),
        variant(1, np.zeros((3, 3))), variant(1, np.zeros((4, 4))),
        variant(1, np.zeros((4, 3), np.float32)), variant(1, np.zeros(12)),
        variant(1, np.zeros((4, 6))[:, ::2]), variant(2, [[0.0] * 3] * 4),
        variant(4, np.zeros((2, 3))), variant(6, np.zeros(F, int)),
        variant(6, np.zeros((F, 1))), variant(6, np.zeros(5)), variant(6, None),
        variant(7, "x"), good[:7], good + [None],
    ]


@pytest.mark.parametrize("args", bad_merges())
def test_bad_input_is_refused(args):
    with pytest.raises((TypeError, ValueError)):
        _core.reduce_merge(*args)


def test_joint_world_writes_each_frames_worst():
    """frame_worst takes each frame's largest squared distance of the
    joint's points where larger than it holds (no limit given)."""
    rng = np.random.default_rng(4)
    F = 13
    q = rng.normal(size=(F, 4))
    offsets, sites = rng.normal(size=(F, 3)), rng.normal(size=(2, 3))
    _, _, points, _ = _core.joint_world(None, None, q, offsets, sites, None)
    truth = points + rng.normal(scale=1e-3, size=points.shape)
    held = np.where(np.arange(F) % 2, 0.0, 1e-6)
    worst = held.copy()
    _, _, _, error = _core.joint_world(None, None, q, offsets, sites, truth, np.inf, worst)
    want = np.maximum(((points - truth) ** 2).sum(axis=-1).max(axis=-1), held)
    np.testing.assert_allclose(worst, want, rtol=1e-12)
    assert error == pytest.approx(np.sqrt(((points - truth) ** 2).sum(axis=-1).max()))
    with pytest.raises(ValueError, match="frame_worst needs truth"):
        _core.joint_world(None, None, q, offsets, sites, None, np.inf, worst)
    with pytest.raises(ValueError):
        _core.joint_world(None, None, q, offsets, sites, truth, np.inf, np.zeros(F - 1))
