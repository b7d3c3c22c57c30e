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

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.mathjax", "sphinx_copybutton",
              "numpydoc"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "notebooks/*.png", "**.ipynb_checkpoints"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

nb_execution_mode = "force"
nb_execution_timeout = 180
# A failing notebook is a warning holding its traceback, which -W makes the
# build's error: raising instead would leave the cause in a log file only.
nb_execution_raise_on_error = False
nb_execution_show_tb = True

autodoc_member_order = "bysource"
autodoc_typehints = "none"        # the signatures carry them; numpydoc the prose
numpydoc_show_class_members = False  # api.md lists the members
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

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


def setup(app):
    app.connect("builder-inited", copy_notebooks)
