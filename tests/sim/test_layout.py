"""The layout of ``optsched.sim``: arrows between its files go one way (no import circle, counting
imports inside functions too, not those under ``if TYPE_CHECKING``), no module is over 600 lines,
policies and rate models do not import the engine (they are typed against ``SimView``), and the
engine implements every member of ``SimView``. Checked on the source with ``ast``."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import optsched.sim
from optsched.core import Cluster, Job
from optsched.sim import SRTF, Simulator, SimView

SIM = Path(optsched.sim.__file__).parent
MAX_LINES = 600
#: Modules still over MAX_LINES: the list may only shrink (a listed module that fits must leave it).
OVER_MAX_LINES: set[str] = set()


def _module_name(path: Path, root: Path, prefix: str) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([prefix, *parts] if prefix else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.AST, module: str, is_package: bool, known: set[str], type_checking: bool) -> set[str]:
    """The modules of ``known`` that ``tree`` (the source of ``module``) imports, anywhere (under
    ``if TYPE_CHECKING`` only with ``type_checking``); ``from pkg import name`` counts as importing
    ``pkg.name`` when that is a module."""
    out: set[str] = set()

    def resolve(name: str) -> None:
        while name and name not in known:  # optsched.sim.x.Y -> optsched.sim.x
            name = name.rpartition(".")[0]
        if name:
            out.add(name)

    def visit(node: ast.AST) -> None:
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                resolve(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                pkg = ".".join(base + ([node.module] if node.module else []))
            else:
                pkg = node.module or ""
            for a in node.names:
                full = f"{pkg}.{a.name}"
                resolve(full if full in known else pkg)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    out.discard(module)
    return out


def import_graph(root: Path, prefix: str = "", *, type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of the package at ``root`` (named ``prefix.<root's name>``) it imports
    (with ``type_checking``, under ``if TYPE_CHECKING`` too)."""
    files = {_module_name(f, root, prefix): f for f in sorted(root.rglob("*.py"))}
    known = set(files)
    return {
        m: _imported(ast.parse(f.read_text(), filename=str(f)), m, f.name == "__init__.py", known, type_checking)
        for m, f in files.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (a list of modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def dfs(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state:
                found = dfs(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = dfs(m)
            if found:
                return found
    return None


def test_no_import_circle_between_the_files_of_optsched_sim():
    graph = import_graph(SIM, "optsched")
    assert "optsched.sim.engine" in graph and "optsched.sim.model.state" in graph["optsched.sim.model.inputs"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])
    # nor counting the imports made for annotations only
    assert find_cycle(import_graph(SIM, "optsched", type_checking=True)) is None


def test_the_checker_sees_a_circle(tmp_path):
    pkg = tmp_path / "sim"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sim import b\n")
    (pkg / "b.py").write_text("def f():\n    from sim.sub import c\n")
    (pkg / "sub" / "c.py").write_text('"""import sim.b"""\nfrom .. import a\n')
    graph = import_graph(pkg)
    assert graph["sim.a"] == set() and graph["sim.b"] == {"sim.sub.c"} and graph["sim.sub.c"] == {"sim.a"}
    assert find_cycle(graph) is None  # an import under TYPE_CHECKING is no arrow
    assert find_cycle(import_graph(pkg, type_checking=True)) == ["sim.a", "sim.b", "sim.sub.c", "sim.a"]
    (pkg / "a.py").write_text("import sim.b\n")
    assert find_cycle(import_graph(pkg)) == ["sim.a", "sim.b", "sim.sub.c", "sim.a"]


def test_no_module_over_600_lines():
    sizes = {str(f.relative_to(SIM)): len(f.read_text().splitlines()) for f in SIM.rglob("*.py")}
    over = {name for name, n in sizes.items() if n > MAX_LINES}
    assert over <= OVER_MAX_LINES, {name: sizes[name] for name in over - OVER_MAX_LINES}
    assert not (OVER_MAX_LINES - over), f"now within {MAX_LINES} lines: drop them from OVER_MAX_LINES"


@pytest.mark.parametrize("module", ["policy", "rates", "view", "rules", "options", "limits", "registry"])
def test_the_layers_below_the_engine_never_import_it(module):
    """Not even under TYPE_CHECKING: policies and rate models are typed against SimView."""
    path = SIM / f"{module}.py"
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in names if m.startswith(("optsched.sim.engine", "optsched.sim.actions"))}


def test_the_engine_implements_every_member_of_the_view():
    sim = Simulator(Cluster.homogeneous(1, 2), [Job(0, work=1)], SRTF(), engine="python")
    members = set(SimView.__annotations__) | {
        n for n, v in vars(SimView).items() if not n.startswith("_") and (callable(v) or isinstance(v, property))
    }
    assert {"now", "jobs", "free", "start", "preempt", "set_timer", "free_gpus"} <= members
    for name in sorted(members):
        assert hasattr(sim, name), name
        want = vars(SimView).get(name)
        if callable(want):
            got = inspect.signature(getattr(sim, name)).parameters
            assert list(got) == [p for p in inspect.signature(want).parameters if p != "self"], name
