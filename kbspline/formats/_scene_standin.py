"""Stand-in for the shared scene model (`scene.py`, `errors.py`) until it
lands on main; the LightWave reader imports these only when those are absent."""
from __future__ import annotations

import dataclasses

import numpy as np


class FormatError(ValueError):
    """A malformed file."""


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
