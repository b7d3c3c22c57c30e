"""motion_to_gltf's generated End Site nodes never take a joint's name
(issue 51 item 9): the written hierarchy, offsets and channel targets are
the clip's, whatever its names."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kbspline.motion import Joint, Motion, motion_to_gltf

pytest.importorskip("pygltflib")


def tree(names, parents, ends=()):
    """Two frames of the given joints, each turning about z by its own
    angle, with distinct offsets and End Sites."""
    joints = [Joint(name, parent, np.array([j + 1.0, 0.5, 0.0]), ["Zrotation"],
                    np.array([0.0, j + 2.0, 0.0]) if j in ends else None)
              for j, (name, parent) in enumerate(zip(names, parents))]
    return Motion(joints, 0.1, np.outer([0.0, 1.0], 10.0 * np.arange(1, len(joints) + 1)))


def check_hierarchy(clip):
    """Every joint and End Site is one node, under its own parent, at its
    own offset, and each rotation channel drives its own joint's node."""
    doc = motion_to_gltf(clip, None).gltf
    nodes = doc.nodes
    assert len(nodes) == len(clip.joints) + sum(j.end_site is not None for j in clip.joints)
    parent_of = {c: i for i, node in enumerate(nodes) for c in (node.children or [])}
    index = {}
    for j, joint in enumerate(clip.joints):
        mine = [i for i, node in enumerate(nodes) if node.name == joint.name]
        assert len(mine) == 1, joint.name
        index[j] = mine[0]
        assert parent_of.get(mine[0], -1) == (index[joint.parent] if joint.parent >= 0 else -1)
        np.testing.assert_allclose(nodes[mine[0]].translation, joint.offset)
    sites = [i for i in range(len(nodes)) if i not in index.values()]
    want = sorted((index[j], tuple(joint.end_site)) for j, joint in enumerate(clip.joints)
                  if joint.end_site is not None)
    assert sorted((parent_of[i], tuple(nodes[i].translation)) for i in sites) == want
    assert len({node.name for node in nodes}) == len(nodes)
    (animation,) = doc.animations
    driven = sorted(c.target.node for c in animation.channels if c.target.path == "rotation")
    assert driven == sorted(index.values())
    return nodes


def test_end_site_name_of_a_joint(tmp_path):
    # joints Foot_end and Foot, Foot with an End Site: Foot_end was taken for
    # the End Site, moved under Foot at the End Site's offset
    clip = tree(["Hips", "Foot_end", "Foot"], [-1, 0, 0], ends={2})
    nodes = check_hierarchy(clip)
    assert [n.name for n in nodes if n.name.startswith("Foot_end")] == ["Foot_end", "Foot_end_2"]


def test_suffix_skips_names_joints_have():
    clip = tree(["Hips", "Foot", "Foot_end", "Foot_end_2", "Hips_end"], [-1, 0, 0, 0, 0],
                ends={0, 1, 4})
    names = {n.name for n in check_hierarchy(clip)}
    assert {"Foot_end_3", "Hips_end_2", "Hips_end_end"} <= names


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "a_end", "a_end_2", "b", "b_end", "a_end_end"]),
                          st.integers(0, 40), st.booleans()), min_size=1, max_size=6,
                unique_by=lambda x: x[0]))
def test_random_colliding_names(spec):
    names = ["root"] + [name for name, _, _ in spec]
    parents = [-1] + [parent % (j + 1) for j, (_, parent, _) in enumerate(spec)]
    check_hierarchy(tree(names, parents, {j + 1 for j, (_, _, end) in enumerate(spec) if end} | {0}))


def test_repeated_joint_names_are_named():
    clip = tree(["Hips", "Leg", "Leg", "Arm", "Arm"], [-1, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="not unique .*: 'Arm', 'Leg' name several joints"):
        motion_to_gltf(clip, None)
