"""`read_scene`: the reader for a file's extension, as trimesh's
``exchange/load.py`` dispatches."""
from __future__ import annotations

import importlib
import os
import pathlib
from typing import Union

from .scene import Scene

__all__ = ["READERS", "read_scene"]

# extension -> (module of kbspline.formats, function): one line per format;
# modules are imported only when a file of theirs is read.
READERS = {
    ".gltf": ("gltf", "read_gltf"),
    ".glb": ("gltf", "read_gltf"),
    ".bvh": ("bvh", "read_bvh_scene"),
    ".3ds": ("threeds", "read_3ds"),
    ".lws": ("lightwave", "read_lws"),
}


def read_scene(path: Union[str, os.PathLike[str]]) -> Scene:
    """Reads any supported file as a Scene, by its extension.

    Parameters
    ----------
    path : str or os.PathLike
        A file whose extension (any case) is a key of `READERS`:
        ``.gltf``, ``.glb``, ``.bvh``...

    Returns
    -------
    Scene

    Raises
    ------
    ValueError
        For an extension no reader handles (naming it and the known ones);
        the reader's own error (a `FormatError`) for a malformed file.
    """
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in READERS:
        raise ValueError(f"path: no reader for extension {suffix or '(none)'!r} of "
                         f"{os.fspath(path)!r}; known: {', '.join(sorted(READERS))}")
    module, function = READERS[suffix]
    return getattr(importlib.import_module(f"kbspline.formats.{module}"), function)(path)
