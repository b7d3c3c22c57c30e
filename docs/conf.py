"""Sphinx configuration: ``python -m sphinx -W -b html docs docs/_build/html``.

The notebooks in ../notebooks are committed without outputs; they are copied
into _notebooks here and executed by myst-nb at build time, so the pages
show what the current code draws.
"""
import pathlib
import shutil

import kbspline

HERE = pathlib.Path(__file__).resolve().parent

project = "kbspline"
author = "the kbspline developers"
copyright = "the kbspline developers, MIT licence"
release = version = kbspline.__version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.mathjax", "sphinx_copybutton"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "notebooks/*.png", "**.ipynb_checkpoints"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

nb_execution_mode = "force"
nb_execution_timeout = 180
nb_execution_raise_on_error = True
nb_execution_show_tb = True

autodoc_member_order = "bysource"
autodoc_typehints = "none"        # the signatures carry them; numpydoc the prose

html_theme = "pydata_sphinx_theme"
html_title = f"kbspline {release}"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}


def copy_notebooks(app):
    """../notebooks/*.ipynb and their helper module into _notebooks."""
    target = HERE / "_notebooks"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for path in sorted((HERE.parent / "notebooks").glob("*")):
        if path.suffix in (".ipynb", ".py"):
            shutil.copy(path, target / path.name)


def plain_docstrings(app, what, name, obj, options, lines):
    """kbspline's docstrings are plain text ("name : meaning" lists,
    formulas with |x|): the first paragraph as prose, with reST's markup
    characters escaped, the rest verbatim in a literal block."""
    if not lines:
        return
    end = lines.index("") if "" in lines else len(lines)
    summary = [line.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")
               .replace("`", "'") for line in lines[:end]]
    rest = lines[end:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    lines[:] = summary + ([""] + ["::", ""] + ["    " + line for line in rest] if rest else [])


def setup(app):
    app.connect("builder-inited", copy_notebooks)
    app.connect("autodoc-process-docstring", plain_docstrings, priority=900)
