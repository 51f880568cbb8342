"""Tests you can find: every module of optsched with logic of its own has a test module of its name
(``tests/<package>/test_<module>.py``, or ``tests/test_<module>.py`` at the top) or says in its
docstring where its tests are (``Tested in ``tests/...````), and every test file it names exists.

A package ``__init__`` that only imports, lists ``__all__`` and loads its plugin has no logic of its own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import optsched

PKG = Path(optsched.__file__).parent
ROOT = PKG.parent
TESTED_IN = re.compile(r"Tested\s+(?:in|through|by)\s+``tests/")
NAMED = re.compile(r"``(tests/[\w/]+\.py)``")
#: Modules still without their tests named, the list may only shrink (a module that gains either
#: leaves it). A command's docstring is its ``--help`` text, so it cannot carry the line: those
#: wait for a test module of their own (``tests/commands/test_<command>.py``).
NOT_YET = {
    "optsched/commands/compare.py",
    "optsched/commands/data.py",
    "optsched/commands/demo.py",
    "optsched/commands/info.py",
    "optsched/commands/instances.py",
    "optsched/commands/reproduce.py",
    "optsched/commands/simulate.py",
    "optsched/commands/solve.py",
    "optsched/commands/verify.py",
}
#: The compiled kernel's parts (tested through ``tests/sim/test_kernel*.py``) are not named yet.
NOT_YET_PREFIXES = ("optsched/sim/compiled/",)


def _no_logic(tree: ast.Module) -> bool:
    """Only a docstring, imports, ``__all__`` / plain assignments and ``load_plugin(__name__)``."""
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # the docstring
            continue
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "load_plugin"
        ):
            continue
        return False
    return True


def _test_modules(rel: Path) -> list[str]:
    name = rel.stem if rel.stem != "__init__" else rel.parent.name
    if len(rel.parts) == 2:  # optsched/<module>.py or optsched/__init__.py
        return [f"tests/test_{name}.py"]
    package = rel.parts[1]
    return [f"tests/{package}/test_{name}.py", f"tests/{'/'.join(rel.parts[1:-1])}/test_{name}.py"]


def _status() -> dict[str, str]:
    """module -> "own" (its test module), "named" (its docstring names its tests), "none" or "no logic"."""
    out = {}
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(ROOT)
        tree = ast.parse(f.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree) or ""
        if f.name == "__main__.py" or _no_logic(tree):
            out[rel.as_posix()] = "no logic"
        elif any((ROOT / t).is_file() for t in _test_modules(rel)):
            out[rel.as_posix()] = "own"
        elif TESTED_IN.search(doc):
            out[rel.as_posix()] = "named"
        else:
            out[rel.as_posix()] = "none"
    return out


def _not_yet(module: str) -> bool:
    return module in NOT_YET or module.startswith(NOT_YET_PREFIXES)


def test_every_module_has_a_test_module_or_names_its_tests():
    missing = sorted(m for m, s in _status().items() if s == "none" and not _not_yet(m))
    assert missing == [], (
        "modules without tests/<package>/test_<module>.py and without a 'Tested in ``tests/...``' line in "
        f"their docstring: {missing}"
    )


def test_the_modules_left_for_later_are_still_without():
    done = sorted(m for m, s in _status().items() if s != "none" and m in NOT_YET)
    assert done == [], f"these have their tests now: remove them from NOT_YET: {done}"


def test_every_test_file_a_docstring_names_exists():
    wrong = []
    for f in sorted(PKG.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(f.read_text(encoding="utf-8"))) or ""
        if TESTED_IN.search(doc):
            wrong += [f"{f.relative_to(ROOT)}: {t}" for t in NAMED.findall(doc) if not (ROOT / t).is_file()]
    assert wrong == [], f"docstrings name test files that do not exist: {wrong}"


def test_the_checker_reads_a_module_as_it_should():
    assert _no_logic(ast.parse('"""doc"""\nfrom x import y\n__all__ = ["y"]\nload_plugin(__name__)\n'))
    assert not _no_logic(ast.parse("def f():\n    pass\n"))
    assert _test_modules(Path("optsched/core/io.py")) == ["tests/core/test_io.py", "tests/core/test_io.py"]
    assert _test_modules(Path("optsched/exceptions.py")) == ["tests/test_exceptions.py"]
    assert TESTED_IN.search("Tested in\n``tests/core/test_io.py``.") and not TESTED_IN.search("Tested in the suite")
