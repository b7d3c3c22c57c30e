"""Every notebook runs top to bottom, headless, without error, in a copy of
the repository's folders with no ../shared beside it, as in a user's clone."""
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")
pytest.importorskip("ipykernel")

# The kernel is a child that imports the installed kbspline, never the copy
# that .ci/run builds with sanitizers: there, these tests would add time only.
pytestmark = pytest.mark.no_core

REPO = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A folder holding the notebooks and (linked) the folders they read,
    with nothing named shared above it."""
    root = tmp_path_factory.mktemp("clone")
    assert not any((folder / "shared").exists() for folder in (root, *root.parents))
    (root / "notebooks").mkdir()
    for path in (REPO / "notebooks").glob("*"):
        if path.suffix in (".ipynb", ".py"):
            (root / "notebooks" / path.name).write_bytes(path.read_bytes())
    for name in ("tests", "benchmarks"):
        (root / name).symlink_to(REPO / name, target_is_directory=True)
    return root / "notebooks"


def test_all_ten_are_here():
    assert len(NOTEBOOKS) == 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, clone):
    nb = nbformat.read(clone / path.name, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), \
        "notebooks are committed without outputs"
    # the limit stops a hung kernel, it does not time one: 08's sweep of six
    # tolerances passed 120 s per cell on a busy two-core machine
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(clone)}}).execute()
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    assert images, "each notebook draws at least one figure"


MOTION = [p for p in NOTEBOOKS if p.stem[:2] in ("06", "07", "08", "09")]


@pytest.mark.parametrize("path", MOTION, ids=lambda p: p.stem)
def test_motion_notebooks_show_data_a_clone_has(path):
    """Real clips a clone has, named: no ../shared, no synthetic fallback."""
    text = path.read_text()
    assert "shared" not in text and "synthetic" not in text and "uniform_clip" not in text
    assert "tests/data/cmu" in text and "mocap.cs.cmu.edu" in text
