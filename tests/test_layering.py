"""Imports go one way: core <- {solvers, sim, traces, verify, plot} <- papers <- experiments <- CLI.

A paper package (every subpackage that is not a shared layer) never imports another paper, the
experiments, the CLI, or the top-level ``optsched`` package (whose names load every plugin).
Checked on the source with ``ast`` (imports in docstrings do not count).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import optsched

PKG = Path(optsched.__file__).parent
SHARED_BASE = {"core": {"exceptions"}}
for layer in ("solvers", "sim", "traces", "verify", "plot"):
    SHARED_BASE[layer] = {"core", "exceptions"}
PAPER_ALLOWED = {"core", "exceptions", "solvers", "sim", "traces", "verify", "plot"}
PAPERS = [p.rsplit(".", 1)[-1] for p in optsched.plugin_packages()]


def _imports(path: Path, root: Path = PKG) -> list[tuple[int, str]]:
    """(line, first component after ``optsched.``) for every absolute optsched import; 'TOP' for
    ``import optsched`` or ``from optsched import name`` where name is not a subpackage."""
    out = []
    subpackages = {p.name for p in root.iterdir() if p.is_dir()} | {p.stem for p in root.glob("*.py")}
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "optsched":
                    out.append((node.lineno, "TOP"))
                elif a.name.startswith("optsched."):
                    out.append((node.lineno, a.name.split(".")[1]))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "optsched":
                for a in node.names:
                    out.append((node.lineno, a.name if a.name in subpackages else "TOP"))
            elif node.module.startswith("optsched."):
                out.append((node.lineno, node.module.split(".")[1]))
    return out


def _violations(layer: str, allowed: set[str], root: Path = PKG) -> list[str]:
    bad = []
    for f in sorted((root / layer).rglob("*.py")):
        for line, tgt in _imports(f, root):
            if tgt != layer and tgt not in allowed:
                bad.append(
                    f"{f.relative_to(root.parent)}:{line} imports optsched.{tgt}"
                    if tgt != "TOP"
                    else f"{f.relative_to(root.parent)}:{line} imports the top-level optsched package"
                )
    return bad


@pytest.mark.parametrize("layer", sorted(SHARED_BASE))
def test_shared_layers_import_only_core(layer):
    if not (PKG / layer).is_dir():
        pytest.skip(f"no optsched/{layer} in this version")
    assert _violations(layer, SHARED_BASE[layer]) == []


@pytest.mark.parametrize("paper", PAPERS)
def test_paper_packages_import_only_shared_layers(paper):
    assert _violations(paper, PAPER_ALLOWED) == []


def test_experiments_never_import_the_cli():
    assert _violations("experiments", PAPER_ALLOWED | set(PAPERS) | {"TOP"}) == []


def test_the_checker_sees_a_violation(tmp_path):
    bad = tmp_path / "optsched" / "fake"
    bad.mkdir(parents=True)
    (bad / "m.py").write_text(
        '"""import optsched.experiments"""\nimport optsched\nfrom optsched.experiments import demo\n'
    )
    assert len(_violations("fake", PAPER_ALLOWED, tmp_path / "optsched")) == 2
