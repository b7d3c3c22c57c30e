"""_looped_node, the cycle check the glTF and LightWave readers share,
against walking each node's parents n steps (an exact fact: a chain of n
nodes that has not reached a root by then has looped)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from kbspline.formats.scene import _looped_node


def _reaches_root(parents, node):
    for _ in range(len(parents) + 1):
        if node < 0:
            return True
        node = parents[node]
    return node < 0


def _on_cycle(parents, node):
    walk = parents[node]
    for _ in range(len(parents)):
        if walk < 0:
            return False
        if walk == node:
            return True
        walk = parents[walk]
    return False


@st.composite
def parent_lists(draw):
    n = draw(st.integers(0, 12))
    return [draw(st.integers(-1, n - 1)) for _ in range(n)]


@settings(max_examples=200)
@given(parent_lists())
def test_a_looped_node_exactly_where_some_chain_never_ends(parents):
    looped = _looped_node(parents)
    if all(_reaches_root(parents, n) for n in range(len(parents))):
        assert looped is None
    else:
        assert looped is not None and _on_cycle(parents, looped)


def test_self_parent_and_long_chain():
    assert _looped_node([0]) == 0
    assert _looped_node([-1] + list(range(999))) is None
    assert _looped_node([-1, 2, 3, 1]) in (1, 2, 3)
