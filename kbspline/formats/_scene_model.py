"""Stand-in for the Scene model (kbspline/formats/scene.py, scene-model.md)
until it lands on main; only what the 3DS reader needs.  Dropped at the merge."""
from __future__ import annotations

import dataclasses

import numpy as np


class FormatError(ValueError):
    """A malformed file of any format; the message says where."""


@dataclasses.dataclass(frozen=True)
class Node:
    name: str
    parent: int
    children: list
    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray
    kind: str = "node"
    pivot: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    extras: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Scene:
    nodes: list
    skins: list
    animations: dict
    up_axis: str = "Y"
    handedness: str = "right"
    source: str = ""
