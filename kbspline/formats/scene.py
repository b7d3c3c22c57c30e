"""One scene model for every reader: nodes with a parent and a rest
transform, skins, and animation channels that play back as their format
says (glTF samplers, 3D Studio TCB tracks, LightWave envelopes, BVH frames).

`Scene.to_motion` turns any of them into a BVH-style `Motion` (NumPy only).
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Optional, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from .._checks import _check_positive
from ..motion.clip import POSITION_CHANNELS, Joint, Motion

__all__ = ["Node", "Channel", "Skin", "Scene", "TRANSFORM_PATHS"]

# The most frames `Scene.to_motion` samples (a bound, before allocating).
MAX_FRAMES = 10_000_000

# The channel paths that move a node (others, such as "weights" or "fov", do not).
TRANSFORM_PATHS = ("translation", "rotation", "scale")


@dataclasses.dataclass(frozen=True)
class Node:
    """A node of a scene.

    Attributes
    ----------
    name : str
        Unique in its scene (an unnamed glTF node i is ``node<i>``).
    parent : int
        Index of the parent in `Scene.nodes`, -1 for a root.
    children : list of int
        Indices of the children.
    translation : ndarray (3,)
        Rest translation.
    rotation : ndarray (4,)
        Rest rotation, unit (w, x, y, z).
    scale : ndarray (3,)
        Rest scale.
    kind : str
        ``"node"``, ``"joint"``, ``"mesh"``, ``"camera"``, ``"light"``,
        ``"null"``, ``"bone"``, ``"target"``... as the format says.
    pivot : ndarray (3,)
        The point, in the node's own frame, that it turns and scales about
        (3D Studio and LightWave pivots; zero elsewhere): its geometry is
        drawn at T(translation) R S T(-pivot).
    extras : dict
        Facts particular to the format (a glTF node's mesh or camera index,
        an instance name, a camera's field of view...).
    pivot_inherited : bool
        Whether the -pivot shift is part of the node's frame, which its
        children and `Scene.to_motion`'s joint take: True for LightWave
        (Assimp's importer hangs children below the shift), False for 3D
        Studio, whose pivot places only the node's own mesh (lib3ds, Assimp).
    """
    name: str
    parent: int
    children: list[int]
    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray
    kind: str = "node"
    pivot: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)
    pivot_inherited: bool = True


@runtime_checkable
class Channel(Protocol):
    """What every animation channel offers.

    Attributes
    ----------
    path : str
        ``"translation"``, ``"rotation"`` or ``"scale"`` (formats may add
        others, such as ``"roll"`` or ``"fov"``).
    times : ndarray (K,)
        Key times, seconds, increasing.
    interpolation : str
        ``"STEP"``, ``"LINEAR"``, ``"CUBICSPLINE"`` (glTF), ``"TCB"``...

    Calling a channel with times (M,) gives its values (M, n); rotations
    (M, 4) as unit (w, x, y, z).  A channel that is exactly one kbspline
    spline track may also offer ``spline() -> (spline, index)``.
    """
    @property
    def path(self) -> str: ...

    @property
    def times(self) -> np.ndarray: ...

    @property
    def interpolation(self) -> str: ...

    def __call__(self, t: ArrayLike) -> np.ndarray: ...


@dataclasses.dataclass(frozen=True)
class Skin:
    """A skin: the skeleton a mesh is bound to.

    Attributes
    ----------
    name : str
        Its name.
    joints : list of int
        The joints' node indices.
    """
    name: str
    joints: list[int]


@dataclasses.dataclass(frozen=True)
class Scene:
    """What a reader read: nodes, skins and animations.

    Attributes
    ----------
    nodes : list of Node
        Every node, in file order.
    skins : list of Skin
        Every skin.
    animations : dict
        ``{animation name: {(node name, path): Channel}}``.
    up_axis : str
        ``"Y"`` or ``"Z"``.
    handedness : str
        ``"right"`` or ``"left"``.
    source : str
        The format read: ``"gltf"``, ``"3ds"``, ``"lws"``, ``"bvh"``.
    """
    nodes: list[Node]
    skins: list[Skin]
    animations: dict[str, dict[tuple[str, str], Channel]]
    up_axis: str = "Y"
    handedness: str = "right"
    source: str = ""

    def to_motion(self, animation: str, fps: float, skin: Optional[int] = None) -> Motion:
        """A skeleton animated by `animation`, as a BVH-style Motion.

        Parameters
        ----------
        animation : str
            The animation's name, a key of `animations`.
        fps : float
            Frames per second, sampled from the animation's first key time to its
            last (frame 0 at the first).
        skin : int, optional
            Which skin's joints make the skeleton.  By default skin 0, or, in a
            scene without skins, the animated nodes and their ancestors.

        Returns
        -------
        Motion
            Parents before children.  A joint's parent is its nearest ancestor
            in the skeleton; the transforms of the nodes in between, and above
            the roots (e.g. a Y-up correction), are carried by the joints, so
            every joint's world position is exact at every frame, scales
            included.  Every joint has rotation channels (ZXY Euler); roots,
            joints with an animated translation and joints whose distance from
            their parent changes also have position channels.

        Raises
        ------
        ValueError
            For an unknown animation, a skin index out of range, an animation
            without translation, rotation or scale channels, more than
            `MAX_FRAMES` frames, a node hierarchy with a cycle, or a joint
            whose world transform overflows float64.

        Warns
        -----
        UserWarning
            BVH has no scale: where a joint's world scale is not uniform (its
            axes stretched by more than 1e-3 relative to each other) or mirrors,
            its rotation is the nearest rotation to its world matrix.
        """
        return _to_motion(self, animation, fps, skin)


def _looped_node(parents: list[int]) -> Optional[int]:
    """A node that is its own ancestor, or None where every parent chain
    (-1 for a root) ends at a root; each node is walked once."""
    state = [0] * len(parents)     # 0 unseen, 1 on the current walk, 2 under a root
    for start in range(len(parents)):
        walk, node = [], start
        while node >= 0 and state[node] == 0:
            state[node] = 1
            walk.append(node)
            node = parents[node]
        if node >= 0 and state[node] == 1:
            return node
        for seen in walk:
            state[seen] = 2
    return None


def _to_motion(scene, animation, fps, skin):
    from ..motion.resample import WHOLE_FRAMES_TOLERANCE
    from ..quaternion import quat_conjugate, quat_from_matrix, quat_multiply
    if animation not in scene.animations:
        raise ValueError(f"animation {animation!r} is not one of {sorted(scene.animations)}")
    fps = _check_positive("fps", fps)
    channels = {key: c for key, c in scene.animations[animation].items()
                if key[1] in TRANSFORM_PATHS}
    if not channels:
        raise ValueError(f"animation {animation!r} has no translation, rotation or scale "
                         f"channels")
    start = min(c.times[0] for c in channels.values())
    end = max(c.times[-1] for c in channels.values())
    steps = (end - start) * fps   # within resample's tolerance of a whole number: that one
    if not steps < MAX_FRAMES:
        raise ValueError(f"animation {animation!r} lasts {end - start:.6g} s: at fps {fps:g} "
                         f"that is more than {MAX_FRAMES} frames")
    whole = round(steps)
    if abs(steps - whole) > WHOLE_FRAMES_TOLERANCE * max(steps, 1.0):
        whole = int(np.floor(steps))
    times = start + np.arange(whole + 1) / fps
    nodes = scene.nodes
    members = _skeleton(scene, channels, skin)
    order, parent = _parents_first(nodes, members)

    def sample(i, path):
        channel = channels.get((nodes[i].name, path))
        return channel(times) if channel is not None else getattr(nodes[i], path)[None]

    with np.errstate(over="ignore", invalid="ignore"):    # overflow is refused below
        world = _world_matrices(nodes, order, sample, len(times))
        rest = _world_matrices(nodes, order, lambda i, path: getattr(nodes[i], path)[None], 1)
    for j in order:
        if not np.all(np.isfinite(world[j])):
            raise ValueError(f"node {nodes[j].name!r}: its world transform overflows float64")
    # every joint at once, (J, F, ...): roots' parents point at themselves
    up = np.array([order.index(parent[j]) if parent[j] >= 0 else k
                   for k, j in enumerate(order)])
    root = up == np.arange(len(order))
    turns, stretched = _rotation_part(np.stack([world[j][:, :3, :3] for j in order]))
    rest_turns, _ = _rotation_part(np.stack([rest[j][:, :3, :3] for j in order]))
    if np.any(stretched):
        names_ = [nodes[j].name for j, odd in zip(order, stretched) if odd]
        warnings.warn(f"{', '.join(names_[:5])}{' ...' if len(names_) > 5 else ''}: "
                      f"BVH has no scale, and these joints' world scale is not uniform or "
                      f"mirrors; their rotations are the nearest rotations", stacklevel=3)
    world_q = quat_from_matrix(turns)
    rotations = np.where(root[:, None, None], world_q,
                         quat_multiply(quat_conjugate(world_q[up]), world_q))
    positions = np.stack([world[j][:, :3, 3] for j in order])
    rest_positions = np.stack([rest[j][:, :3, 3] for j in order])
    # a joint's offset in its parent's turned frame (a root's: its world position)
    local = np.where(root[:, None, None], positions,
                     np.einsum("jfki,jfk->jfi", turns[up], positions - positions[up]))
    rest_local = np.einsum("jfki,jfk->jfi", rest_turns[up], rest_positions - rest_positions[up])
    drift = np.abs(local - local[:, :1]).max(axis=(1, 2))
    moving = root | (drift > 1e-9 * max(1.0, np.abs(positions).max()))

    joints, names = [], set()
    for k, j in enumerate(order):
        moving[k] |= (nodes[j].name, "translation") in channels
        offset = local[k, 0] if root[k] or not moving[k] else rest_local[k, 0]
        name = "_".join(nodes[j].name.split()) or f"node{j}"
        name = name if name not in names else f"{name}_{j}"
        names.add(name)
        channels_ = (list(POSITION_CHANNELS) if moving[k] else []) + \
            ["Zrotation", "Xrotation", "Yrotation"]
        joints.append(Joint(name, -1 if root[k] else int(up[k]), offset.copy(), channels_))
    width = sum(len(joint.channels) for joint in joints)
    template = Motion(joints, 1.0 / fps, np.zeros((1, width)))
    return template.with_frames(rotations, local, 1.0 / fps)


def _skeleton(scene, channels, skin):
    """The node indices that become joints."""
    if skin is None and not scene.skins:
        by_name = {node.name: i for i, node in enumerate(scene.nodes)}
        members = set()
        for name, _ in channels:
            i = by_name[name]
            while i >= 0 and i not in members and len(members) <= len(scene.nodes):
                members.add(i)
                i = scene.nodes[i].parent
        return members
    skin = 0 if skin is None else skin
    if not (isinstance(skin, int) and not isinstance(skin, bool)
            and 0 <= skin < len(scene.skins)):
        raise ValueError(f"skin must index one of the {len(scene.skins)} skins, not {skin!r}")
    return set(scene.skins[skin].joints)


def _parents_first(nodes, members):
    """(joints in order, each one's nearest ancestor among them or -1), each
    root's subtree in turn, in file order."""
    def skeleton_parent(i):
        p, steps = nodes[i].parent, 0
        while p >= 0 and p not in members:
            p, steps = nodes[p].parent, steps + 1
            if steps > len(nodes):
                raise ValueError(f"node {nodes[i].name!r}: its ancestors form a cycle")
        return p

    parent = {j: skeleton_parent(j) for j in sorted(members)}
    children = {}
    for j in sorted(members):
        children.setdefault(parent[j], []).append(j)
    order, pending = [], children.get(-1, [])[::-1]
    while pending:
        j = pending.pop()
        order.append(j)
        pending += children.get(j, [])[::-1]
    if len(order) != len(members):
        raise ValueError("the skeleton's joints form a cycle")
    return order, parent


def _world_matrices(nodes, wanted, sample, n_frames):
    """{node: (F, 4, 4) world matrix} for the `wanted` nodes and their
    ancestors; `sample(i, path)` gives a node's (F or 1, n) local values."""
    from ..quaternion import quat_to_matrix
    world = {}

    def local(i):
        m = np.tile(np.eye(4), (n_frames, 1, 1))
        m[:, :3, :3] = quat_to_matrix(sample(i, "rotation")) * sample(i, "scale")[:, None, :]
        m[:, :3, 3] = sample(i, "translation")
        if nodes[i].pivot_inherited and np.any(nodes[i].pivot):   # about the pivot
            m[:, :3, 3] -= m[:, :3, :3] @ nodes[i].pivot
        return m

    for i in wanted:
        chain = []
        while i >= 0 and i not in world:
            chain.append(i)
            i = nodes[i].parent
            if len(chain) > len(nodes):
                raise ValueError(f"node {nodes[chain[0]].name!r}: its ancestors form a cycle")
        above = world.get(i)
        for k in reversed(chain):
            above = local(k) if above is None else above @ local(k)
            world[k] = above
    return world


def _rotation_part(matrix):
    """((..., 3, 3) the rotations nearest the matrices (polar decomposition),
    (J,) whether any of a joint's frames has scale that is not uniform or
    mirrors); `matrix` is (J, F, 3, 3)."""
    u, s, vt = np.linalg.svd(matrix)
    det = np.linalg.det(u @ vt)
    u[..., 2] *= np.where(det < 0, -1.0, 1.0)[..., None]
    odd = (s[..., 0] > s[..., 2] * (1 + 1e-3)) | (det < 0)
    return u @ vt, odd.any(axis=1)
