"""The world search's piecewise check (csrc/kb_reduce_merge.c,
_core.reduce_merge, and kb_joint_world's frame_worst): the merge of a
joint's old and new tangent keys against an oracle written here from its
definition, on random legal input, with the drops it remembers; bad input
refused; and on a real clip, the world search keeping pieces of joints'
new keys, within the bound, fewer keys than keeping each joint's new keys
whole or not at all."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline import _kbspline as core
from kbspline.motion import reduce_keys
from test_reduce_world import walk, world_error  # noqa: F401 (a fixture)


def merge_oracle(old, new, worst, limit):
    """The pieces between keys both share with the same rows; a piece in
    which a key differs takes the new keys where every frame in it, its
    ends included, has worst <= limit**2, else the old.  Returns the merged
    keys and rows (None where no piece that differs held) and the frames
    of old keys whose drop failed: dropped in a piece kept old, a frame
    from two old keys before to two after past the limit."""
    old_rows = {k: np.concatenate([old[1][i], old[2][i]]) for i, k in enumerate(old[0])}
    new_rows = {k: np.concatenate([new[1][i], new[2][i]]) for i, k in enumerate(new[0])}
    shared = [k for k in new[0] if k in old_rows and np.array_equal(old_rows[k], new_rows[k])]
    bounds = [0, *shared, len(worst) - 1]
    merged, held, failed = {k: new_rows[k] for k in shared}, False, []
    for a, b in zip(bounds, bounds[1:]):
        inner_old = [k for k in old[0] if a <= k <= b and k not in shared]
        inner_new = [k for k in new[0] if a <= k <= b and k not in shared]
        if not inner_old and not inner_new:
            continue
        ok = all(e <= limit * limit for e in worst[a:b + 1])  # NaN is not
        held |= ok
        merged.update({k: new_rows[k] for k in inner_new} if ok
                      else {k: old_rows[k] for k in inner_old})
        keys = list(old[0])
        for k in [] if ok else inner_old:
            i = keys.index(k)
            span = worst[keys[max(i - 2, 0)]:keys[min(i + 2, len(keys) - 1)] + 1]
            if k not in new_rows and not all(e <= limit * limit for e in span):
                failed.append(k)
    if not held:
        return None, failed
    frames = sorted(merged)
    rows = np.array([merged[k] for k in frames]).reshape(-1, 6)
    return (np.array(frames), rows[:, :3], rows[:, 3:]), failed


@st.composite
def old_and_new(draw):
    """Old keys, new keys (some dropped, a few added, rows of some kept),
    and squared errors per frame, some past 1, a few NaN."""
    F = draw(st.integers(2, 40))
    inner = draw(st.sets(st.integers(1, F - 2), max_size=F - 2)) if F > 2 else set()
    old = np.array(sorted({0, F - 1} | inner))
    kept = [k for k in old if k in (0, F - 1) or draw(st.booleans())]
    added = draw(st.sets(st.integers(0, F - 1), max_size=2))
    new = np.array(sorted(set(kept) | added))
    value = st.sampled_from([-1.0, 0.0, 0.5, 2.0])
    old_rows = [np.array(draw(st.lists(value, min_size=3 * len(old), max_size=3 * len(old))))
                .reshape(-1, 3) for _ in range(2)]
    new_rows = [np.array(draw(st.lists(value, min_size=3 * len(new), max_size=3 * len(new))))
                .reshape(-1, 3) for _ in range(2)]
    for i, k in enumerate(new):  # most shared keys keep their rows
        if k in old and draw(st.integers(0, 4)):
            for c in range(2):
                new_rows[c][i] = old_rows[c][list(old).index(k)]
    worst = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, np.nan]),
                                   min_size=F, max_size=F)))
    return (old, *old_rows), (new, *new_rows), worst


def empty_memory(F):
    return (np.zeros((F, 2)), np.full((F, 4), -1, dtype=np.intp), np.zeros((F, 2)),
            np.zeros(F, dtype=np.intp))


@settings(max_examples=400, deadline=None)
@given(old_and_new())
def test_merge_is_the_oracles(case):
    old, new, worst = case
    memory = empty_memory(len(worst))
    got = core.reduce_merge(*old, *new, worst, 1.0, memory)
    want, failed = merge_oracle(old, new, worst, 1.0)
    if want is None:
        assert got is None
    else:
        assert got is not None and all(np.array_equal(g, w) for g, w in zip(got, want))
    remembered = np.flatnonzero(memory[0][:, 0])
    assert list(remembered) == sorted(failed)
    assert np.isinf(memory[0][remembered]).all()
    keys = list(old[0])
    for k in remembered:  # the keys around it, as kb_reduce_drop's memory holds them
        i = keys.index(k)
        around = [keys[i + d] if 0 <= i + d < len(keys) else -1 for d in (-2, -1, 1, 2)]
        assert list(memory[1][k]) == around


def test_merge_refuses_bad_input():
    keys, rows, worst = np.array([0, 4]), np.zeros((2, 3)), np.zeros(5)
    good = (keys, rows, rows, keys, rows, rows, worst, 1.0)
    assert core.reduce_merge(*good) is None  # nothing differs
    for at, bad, error in ((0, np.array([0]), ValueError), (0, np.array([0, 5]), ValueError),
                           (3, np.array([0, 3, 2]), ValueError),
                           (1, np.zeros((3, 3)), ValueError),
                           (5, np.zeros((2, 4)), ValueError),
                           (6, np.zeros(5, dtype=np.float32), TypeError),
                           (6, [0.0] * 5, TypeError)):
        args = list(good)
        args[at] = bad
        with pytest.raises(error):
            core.reduce_merge(*args)
    with pytest.raises(ValueError):  # a memory of another clip's length
        core.reduce_merge(*good, empty_memory(4))
    with pytest.raises(TypeError):
        core.reduce_merge(*good, (np.zeros((5, 2)),))


def test_joint_world_writes_each_frames_worst():
    """frame_worst takes each frame's largest squared distance of the
    joint's points where larger than it holds (no limit given)."""
    rng = np.random.default_rng(4)
    F = 13
    q = rng.normal(size=(F, 4))
    offsets, sites = rng.normal(size=(F, 3)), rng.normal(size=(2, 3))
    _, _, points, _ = core.joint_world(None, None, q, offsets, sites, None)
    truth = points + rng.normal(scale=1e-3, size=points.shape)
    held = np.where(np.arange(F) % 2, 0.0, 1e-6)
    worst = held.copy()
    _, _, _, error = core.joint_world(None, None, q, offsets, sites, truth, np.inf, worst)
    want = np.maximum(((points - truth) ** 2).sum(axis=-1).max(axis=-1), held)
    np.testing.assert_allclose(worst, want, rtol=1e-12)
    assert error == pytest.approx(np.sqrt(((points - truth) ** 2).sum(axis=-1).max()))
    with pytest.raises(ValueError, match="frame_worst needs truth"):
        core.joint_world(None, None, q, offsets, sites, None, np.inf, worst)
    with pytest.raises(ValueError):
        core.joint_world(None, None, q, offsets, sites, truth, np.inf, np.zeros(F - 1))


def test_the_world_search_keeps_pieces_of_new_keys(walk, monkeypatch):
    """Where a joint's new tangent keys take some frame past the bound, the
    loosening keeps the pieces of them that hold: within the bound, fewer
    keys than keeping each joint's new keys whole or not at all."""
    from kbspline.motion import reduce as reduce_module
    merge, merged = core.reduce_merge, []

    def counted(*args):
        result = merge(*args)
        merged.append(result is not None)
        return result

    monkeypatch.setattr(reduce_module._core, "reduce_merge", counted)
    pieces = reduce_keys(walk, position_tolerance=0.3)
    assert any(merged) and world_error(walk, pieces).max() <= 0.3
    monkeypatch.setattr(reduce_module._core, "reduce_merge", lambda *args: None)
    whole = reduce_keys(walk, position_tolerance=0.3)
    assert world_error(walk, whole).max() <= 0.3
    assert pieces.num_keys < whole.num_keys
