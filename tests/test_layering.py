"""Imports go one way: core <- {solvers, sim, traces, verify, plot} <- papers <- experiments <- CLI;
no module of optsched is over 600 lines and few functions are long or wide; no private ``_name`` is
imported across packages and no module but an ``__init__.py`` only re-exports.

A paper package (every subpackage that is not a shared layer) never imports another paper, the
experiments, the CLI, or the top-level ``optsched`` package (whose names load every plugin).
Between files, too, imports go one way: the import graph of every module of optsched (imports at
the top of a file and inside functions alike, not those under ``if TYPE_CHECKING:``) has no circle.
Checked on the source with ``ast`` (imports in docstrings do not count).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
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


# -- circles between files -------------------------------------------------------------------------
#: Circles other work is removing now, each with where it runs; the list is emptied as that work
#: lands (a circle listed here that no longer exists fails ``test_the_allowed_circles_still_exist``,
#: so the list never outlives its reason). None is left.
ALLOWED_CIRCLES: dict[frozenset[str], str] = {}


def _module_names(root: Path) -> dict[str, Path]:
    """Dotted name -> file for every module of the package at ``root`` (a package is its __init__)."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``, at any depth, except the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for sub in child.orelse:
                yield from _import_nodes_of(sub)
            continue
        yield from _import_nodes_of(child)


def _import_nodes_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    yield from _import_nodes(node)


def _file_graph(root: Path = PKG) -> dict[str, set[str]]:
    """module -> the modules of the package it imports (``from pkg import name`` counts as importing
    ``pkg.name`` when that is a module, else ``pkg``)."""
    mods = _module_names(root)
    top = root.name
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in _import_nodes(ast.parse(path.read_text(), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:  # relative: from the package of this file, up level - 1
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for t in targets:
                if not (t == top or t.startswith(top + ".")):
                    continue
                while t not in mods and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in mods and t != mod:
                    graph[mod].add(t)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))
    return out


def _describe(circle: frozenset[str], graph: dict[str, set[str]]) -> str:
    inner = sorted(f"{a} -> {b}" for a in circle for b in graph[a] if b in circle)
    return "{" + ", ".join(sorted(circle)) + "}: " + "; ".join(inner)


def test_no_import_circle_between_files():
    graph = _file_graph()
    new = [c for c in _circles(graph) if c not in ALLOWED_CIRCLES]
    assert new == [], (
        "import circles between files (move what both files need into a third, lower module): "
        + " | ".join(_describe(c, graph) for c in new)
    )


def test_the_allowed_circles_still_exist():
    found = set(_circles(_file_graph()))
    gone = [sorted(c) for c in ALLOWED_CIRCLES if c not in found]
    assert gone == [], f"these circles are gone: remove them from ALLOWED_CIRCLES in {__file__}: {gone}"


def test_the_file_checker_sees_circles(tmp_path):
    pkg = tmp_path / "fakepkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from fakepkg.sub.a import f\n")
    (pkg / "sub" / "a.py").write_text('"""import fakepkg.sub.c"""\ndef f():\n    from fakepkg.sub import b\n')
    (pkg / "sub" / "b.py").write_text("import fakepkg.sub.a\n")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fakepkg.sub import d\nelse:\n    import os\n"
    )
    (pkg / "sub" / "d.py").write_text("from . import c\nfrom .a import f\n")
    graph = _file_graph(pkg)
    assert graph["fakepkg.sub.a"] == {"fakepkg.sub.b"}  # a function-level import counts; a docstring does not
    assert graph["fakepkg.sub.c"] == set()  # under TYPE_CHECKING: not an import at run time
    assert graph["fakepkg.sub.d"] == {"fakepkg.sub.c", "fakepkg.sub.a"}  # relative imports resolved
    assert _circles(graph) == [frozenset({"fakepkg.sub.a", "fakepkg.sub.b"})]


# -- module size -----------------------------------------------------------------------------------
MAX_LINES = 600


def test_no_module_of_optsched_over_600_lines():
    """A module longer than this mixes several jobs: split it along them (a package's name stays
    importable by re-exporting from the former module)."""
    sizes = {
        f.relative_to(PKG.parent).as_posix(): len(f.read_text(encoding="utf-8").splitlines()) for f in PKG.rglob("*.py")
    }
    over = {name: n for name, n in sorted(sizes.items()) if n > MAX_LINES}
    assert over == {}, f"modules over {MAX_LINES} lines (split them along what they mix): {over}"


# -- function size ---------------------------------------------------------------------------------
#: Bodies longer than this read as several steps: name each one. Model builders whose rows follow a
#: paper's equations (labels inline) may stay long, :data:`MAX_LONG_BODIES` of them at most.
MAX_BODY_LINES = 120
MAX_LONG_BODIES = 3
#: A function of this many parameters takes several things that travel together: group them into an
#: options object. The compiled core passes its state arrays instead (``layout.ARRAYS``, checked in
#: the kernel's tests).
MAX_PARAMETERS = 15
MAX_WIDE_FUNCTIONS = 5
COMPILED = "optsched/sim/compiled/"


def _function_sizes(root: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Each function's body length (lines, its docstring left out) and parameter count (``self``
    and ``cls`` left out), by ``path:line name``."""
    bodies, params = {}, {}
    for f in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            body = node.body
            first = (
                body[1]
                if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                else body[0]
            )
            name = f"{f.relative_to(root.parent).as_posix()}:{node.lineno} {node.name}"
            bodies[name] = node.end_lineno - first.lineno + 1
            a = node.args
            n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
            params[name] = n - (1 if a.args and a.args[0].arg in ("self", "cls") else 0)
    return bodies, params


def test_functions_of_a_readable_size():
    bodies, params = _function_sizes(PKG)
    long_ = {k: v for k, v in bodies.items() if v > MAX_BODY_LINES}
    wide = {k: v for k, v in params.items() if v >= MAX_PARAMETERS and not k.startswith(COMPILED)}
    assert len(long_) <= MAX_LONG_BODIES, f"bodies over {MAX_BODY_LINES} lines (name their steps): {long_}"
    assert len(wide) <= MAX_WIDE_FUNCTIONS, f"functions of {MAX_PARAMETERS}+ parameters (group them): {wide}"


def test_the_size_checker_measures_bodies_and_parameters(tmp_path):
    pkg = tmp_path / "fakepkg"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        'def f(a, b, *, c):\n    """doc"""\n    x = 1\n    return x\n\n'
        "class C:\n    def g(self, a):\n        return a\n"
    )
    bodies, params = _function_sizes(pkg)
    assert bodies == {"fakepkg/m.py:1 f": 2, "fakepkg/m.py:7 g": 1}
    assert params == {"fakepkg/m.py:1 f": 3, "fakepkg/m.py:7 g": 1}


# -- one name, one home ----------------------------------------------------------------------------
def _package_of(mod: str, path: Path) -> str:
    return mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _from_imports(root: Path = PKG) -> Iterator[tuple[str, int, str, list[str]]]:
    """(importing module, line, imported module resolved to absolute, names) for every ``from ... import``
    of the package at ``root``, at any depth (function-level imports too)."""
    mods = _module_names(root)
    for mod, path in mods.items():
        package = _package_of(mod, path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                base = ".".join(anchor[: len(anchor) - (node.level - 1)] + ([base] if base else []))
            if base == root.name or base.startswith(root.name + "."):
                yield mod, node.lineno, base, [a.name for a in node.names]


def _private_imports(root: Path = PKG) -> list[str]:
    """A ``_name`` imported from another package, or a ``_module`` imported from outside the package
    it sits in (its package's ``__init__`` presents it)."""
    mods = _module_names(root)
    bad = []
    for mod, line, base, names in _from_imports(root):
        here = _package_of(mod, mods[mod])
        for name in names:
            target = f"{base}.{name}" if f"{base}.{name}" in mods else base
            owner_package = _package_of(target, mods[target]) if target in mods else base
            parts = target.split(".")
            hidden = [".".join(parts[:i]) for i in range(1, len(parts)) if _private(parts[i])]
            if _private(name) and target == base and owner_package != here:
                bad.append(f"{mod}:{line} imports {name} from {base} (another package): make it public there")
            elif hidden and not any(here == h or here.startswith(h + ".") for h in hidden):
                bad.append(f"{mod}:{line} imports {target}, private to {hidden[-1]}")
    return bad


def _names_all(node: ast.stmt) -> bool:
    """An assignment to ``__all__`` (``=``, ``+=`` or annotated)."""
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in targets
    )


def _only_reexports(root: Path = PKG) -> list[str]:
    """Modules other than an ``__init__.py`` that list ``__all__`` (only a package's ``__init__``
    presents a face; a module's public names are those it defines), or whose body is nothing but
    imports and names bound to what they import (a forwarding address: import from the owner)."""
    bad = []
    for mod, path in _module_names(root).items():
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imported, own = set(), []
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif _names_all(node):
                bad.append(f"{mod}:{node.lineno} lists __all__: only a package's __init__.py presents a face")
            elif isinstance(node, ast.Assign) and _root_name(node.value) in imported:
                pass  # ``name = imported`` (or ``imported.attr``): one more address of a name owned elsewhere
            elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # not the docstring
                own.append(node)
        if imported and not own:
            bad.append(f"{mod} only re-exports what it imports")
    return bad


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def test_no_private_name_imported_across_packages():
    assert _private_imports() == []


def test_no_module_but_an_init_only_reexports():
    assert _only_reexports() == []


def test_the_name_checkers_see_violations(tmp_path):
    pkg = tmp_path / "fakepkg"
    for sub in ("a", "b", "b/_hidden"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "own.py").write_text("def _helper():\n    pass\n\n\ndef f():\n    pass\n")
    (pkg / "a" / "mate.py").write_text(
        "from fakepkg.a.own import _helper\n\n\ndef k():\n    _helper()\n"
    )  # same package: fine
    (pkg / "b" / "_hidden" / "core.py").write_text("def g():\n    pass\n")
    (pkg / "b" / "__init__.py").write_text("from fakepkg.b._hidden.core import g\n")  # its own package: fine
    (pkg / "b" / "user.py").write_text(
        "def h():\n    from fakepkg.a.own import _helper, f\n    from fakepkg.b._hidden.core import g\n"
    )
    (pkg / "b" / "face.py").write_text('"""A face."""\nfrom fakepkg.a.own import f\n\n__all__ = ["f"]\n')
    (pkg / "b" / "shim.py").write_text('"""A shim."""\nfrom fakepkg.a.own import f  # noqa: F401\n')
    (pkg / "b" / "alias.py").write_text('"""Old names."""\nfrom fakepkg.a import own\n\nold_f = own.f\n')
    (pkg / "b" / "listed.py").write_text(
        "from fakepkg.a.own import f\n\n__all__: list[str] = []\n__all__ += ['k']\n\n\ndef k():\n    f()\n"
    )
    (pkg / "b" / "ok.py").write_text("from fakepkg.a.own import f\n\ng = f\n\n\ndef k():\n    g()\n")
    (pkg / "c.py").write_text("from fakepkg.b._hidden import core\n\n\ndef k():\n    core.g()\n")
    assert _private_imports(pkg) == [
        "fakepkg.b.user:2 imports _helper from fakepkg.a.own (another package): make it public there",
        "fakepkg.c:1 imports fakepkg.b._hidden.core, private to fakepkg.b",
    ]
    assert sorted(_only_reexports(pkg)) == [
        "fakepkg.b.alias only re-exports what it imports",
        "fakepkg.b.face only re-exports what it imports",  # without its __all__, still a face
        "fakepkg.b.face:4 lists __all__: only a package's __init__.py presents a face",
        "fakepkg.b.listed:3 lists __all__: only a package's __init__.py presents a face",
        "fakepkg.b.listed:4 lists __all__: only a package's __init__.py presents a face",
        "fakepkg.b.shim only re-exports what it imports",
    ]
