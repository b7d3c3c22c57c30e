"""The README's code runs as written, and its quick start has exactly the two
commands, the test one being what .ci/run runs."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) >= 2
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)


def test_quick_start_commands():
    quick = README.split("## Quick start")[1].split("\n## ")[0]
    commands = re.findall(r"```\n(.*?)\n```", quick, re.S)
    assert len(commands) == 2
    assert "python -m kbspline demo" in commands[0]
    assert commands[1] in (ROOT / ".ci" / "run").read_text()
