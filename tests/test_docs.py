"""The documentation's figure script runs (it is what the README shows)."""
import importlib.util
import pathlib

import numpy as np
import pytest

pytest.importorskip("matplotlib")
SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "docs" / "camera_path.py"


def test_camera_path_figure(tmp_path):
    spec = importlib.util.spec_from_file_location("camera_path", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(str(tmp_path / "camera.png"))
    assert pathlib.Path(out).read_bytes()[:4] == b"\x89PNG"
    # what the figure claims: constant speed at equal arc length
    from kbspline import PositionSpline
    spline = PositionSpline(module.TIMES, module.KEYS, tension=0.1)
    steps = np.diff(spline.length(spline.equal_length_times(200)))
    np.testing.assert_allclose(steps, spline.total_length / 199, rtol=1e-9)


GUIDE = ["getting-started", "guide/tour", "guide/arc-length", "guide/rotations", "guide/timing",
         "guide/ends", "guide/motion", "guide/interchange", "guide/interop"]


def test_documentation_python_blocks_run(tmp_path, monkeypatch):
    """Every ```python block of the site's pages runs, page after page in one
    namespace as a reader would (later pages use earlier pages' names)."""
    import re
    docs = pathlib.Path(__file__).resolve().parent.parent / "docs"
    monkeypatch.chdir(tmp_path)
    namespace = {}
    ran = 0
    for page in GUIDE:
        text = (docs / f"{page}.md").read_text()
        for block in re.findall(r"```python\n(.*?)```", text, re.S):
            # a block of an optional extra (dask) runs where it is installed
            needs = re.findall(r"^(?:import|from) (\w+)", block, re.M)
            if any(importlib.util.find_spec(name) is None for name in needs):
                continue
            exec(compile(block, f"docs/{page}.md", "exec"), namespace)
            ran += 1
    assert ran >= 5


def test_every_page_is_in_the_site():
    """No page is left out of the table of contents, nor linked from the
    README without existing."""
    import re
    root = pathlib.Path(__file__).resolve().parent.parent
    docs = root / "docs"
    index = (docs / "index.md").read_text()
    pages = {p.relative_to(docs).with_suffix("").as_posix() for p in docs.rglob("*.md")
             if "_build" not in p.parts and "_notebooks" not in p.parts}
    assert pages - {"index"} <= set(re.findall(r"^([\w/-]+)$", index, re.M))
    for link in re.findall(r"\]\((docs/[\w/.-]+|CHANGELOG.md)\)", (root / "README.md").read_text()):
        assert (root / link).exists(), link


def public_callables():
    """Every public function, class and method the API page documents."""
    import inspect

    import kbspline
    import kbspline.dask
    import kbspline.formats.adaptive
    import kbspline.formats.gltf
    import kbspline.formats.convert
    import kbspline.formats.threeds
    import kbspline.formats.usd
    import kbspline.motion
    modules = [kbspline, kbspline.motion, kbspline.formats.gltf, kbspline.formats.usd,
               kbspline.formats.adaptive, kbspline.formats.threeds,
               kbspline.formats.convert, kbspline.dask]
    seen = set()
    for module in modules:
        for name in getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")]):
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{module.__name__}.{name}", obj
            for attr, value in (vars(obj).items() if inspect.isclass(obj) else ()):
                function = getattr(value, "__func__", value)
                if inspect.isfunction(function) and (attr == "__call__" or attr[0] != "_"):
                    yield f"{module.__name__}.{name}.{attr}", function


def test_docstrings_are_numpydoc():
    """Whatever takes arguments says what each is, in numpydoc's sections
    (the site renders them with numpydoc)."""
    import inspect
    missing = []
    for name, obj in public_callables():
        doc = inspect.getdoc(obj) or ""
        try:
            takes = [p for p in inspect.signature(obj).parameters if p not in ("self", "cls")]
        except (TypeError, ValueError):
            takes = []
        if takes and "Parameters\n----------" not in doc and "Attributes\n----------" not in doc:
            missing.append(name)
    assert not missing, missing


@pytest.mark.no_core   # a sphinx build of a notebook that imports nothing of ours
def test_a_failing_notebook_shows_its_cause_in_the_build_output(tmp_path):
    """docs/conf.py's notebook settings: `sphinx -W` stops on a notebook's
    error and prints its cause, not only a log file's name."""
    import ast
    import json
    import subprocess
    import sys
    pytest.importorskip("myst_nb")
    conf = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "conf.py").read_text()
    settings = [node for node in ast.parse(conf).body if isinstance(node, ast.Assign)
                and node.targets[0].id.startswith("nb_execution")]
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["myst_nb"]\n' + "\n".join(
        ast.unparse(node) for node in settings) + "\n")
    (source / "index.md").write_text("# Index\n\n```{toctree}\nbroken\n```\n")
    cell = {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {},
            "outputs": [], "source": ["import no_such_module_kb50\n"]}
    (source / "broken.ipynb").write_text(json.dumps(
        {"cells": [{"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Broken"]},
                   cell],
         "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}},
         "nbformat": 4, "nbformat_minor": 5}))
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html",
                            str(source), str(tmp_path / "out")], capture_output=True, text=True)
    assert build.returncode != 0
    assert "No module named 'no_such_module_kb50'" in build.stderr, build.stderr[-2000:]
