"""Executes every notebook in notebooks/ and saves the last figure of each as
docs/notebooks/<name>.png, the pictures the README shows.

    python docs/render_notebooks.py
"""
import base64
import pathlib

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parent.parent


def last_png(nb):
    for cell in reversed(nb.cells):
        for output in reversed(cell.get("outputs", [])):
            data = output.get("data", {})
            if "image/png" in data:
                return base64.b64decode(data["image/png"])
    return None


def main():
    out = ROOT / "docs" / "notebooks"
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        png = last_png(nb)
        if png:
            (out / f"{path.stem}.png").write_bytes(png)
            print("wrote", out / f"{path.stem}.png")


if __name__ == "__main__":
    main()
