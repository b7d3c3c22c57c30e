"""Public docstrings hold no ``|x|`` outside literals: reStructuredText reads
it as a substitution, which fails the docs build (``sphinx -W``), the one
step of CI that would otherwise be the first to see it."""
import ast
import pathlib
import re

import kbspline

PACKAGE = pathlib.Path(kbspline.__file__).parent
# |x| with no space inside its bars, as RST's substitution reference
SUBSTITUTION = re.compile(r"(?<![\w|])\|[^\s|][^|\n]*?(?<!\s)\|(?![\w|])")


def _public_docstrings():
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(part.startswith("_") and part != "__init__.py"
               for part in path.relative_to(PACKAGE).parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        yield path, "module", ast.get_docstring(tree, clean=False)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not node.name.startswith("_"):
                yield path, node.name, ast.get_docstring(node, clean=False)


def _bare_substitutions(doc):
    text = re.sub(r"``.*?``", "", doc, flags=re.S)      # inline literals
    text = re.sub(r"`[^`\n]*`", "", text)               # roles and references
    text = re.sub(r"^(\s*)>>>.*$", "", text, flags=re.M)  # doctest lines
    return SUBSTITUTION.findall(text)


def test_the_pattern_finds_a_bare_substitution_and_skips_literals():
    assert _bare_substitutions("scales |A| s") == ["|A|"]
    assert _bare_substitutions("scales ``|A| s`` and `|B|`") == []
    assert _bare_substitutions("a | b | c") == []


def test_no_public_docstring_has_a_bare_substitution():
    found = [f"{path.relative_to(PACKAGE)}: {name}: {hits}"
             for path, name, doc in _public_docstrings() if doc
             for hits in [_bare_substitutions(doc)] if hits]
    assert not found, "wrap these in ``...``:\n" + "\n".join(found)
