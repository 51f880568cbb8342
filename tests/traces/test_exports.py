"""The public names of ``optsched.traces``: one list for the lazy imports, the static readers
(``__all__`` and the ``TYPE_CHECKING`` imports that the API generator reads) and the objects."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import optsched.traces as traces

INIT = Path(traces.__file__)


def static_exports() -> tuple[list[str], dict[str, str]]:
    """``__all__`` as written, and name -> module of the imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    written: list[str] = []
    imports: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            written = [ast.literal_eval(e) for e in node.value.elts]  # a literal list, or this fails
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom), ast.dump(imp)
                imports.update({a.name: imp.module for a in imp.names})
    return written, imports


def test_all_the_type_checking_imports_and_the_lazy_table_agree():
    written, imports = static_exports()
    assert written == traces.__all__ == sorted(traces._WHERE)
    assert imports == {name: f"optsched.traces.{mod}" for name, mod in traces._WHERE.items()}


def test_every_public_name_is_the_object_of_its_module():
    for name, mod in static_exports()[1].items():
        assert getattr(traces, name) is getattr(importlib.import_module(mod), name), name


def test_importing_the_datasets_module_stays_light():
    """The command line imports ``optsched.traces.datasets``: neither NumPy nor pandas comes with it."""
    code = (
        "import sys, optsched.traces, optsched.traces.datasets; print('numpy' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
