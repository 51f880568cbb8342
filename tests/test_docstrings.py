"""Every public function and class has a docstring, and one with an example; every public
constant has a docstring.

Public = listed in the ``__all__`` of ``optsched`` or of one of its subpackages (a package's face),
or defined, without a leading ``_``, by one of the modules that the API reference renders on a page
of their own (:data:`MODULE_PAGES`, :func:`module_public_names`): what the API reference of the
documentation site shows. The examples run as doctests in ``tests/test_doctests.py``. A
constant's docstring is a string right after its assignment (what the API generator, griffe,
reads). The names still without an example or a docstring are listed below: the lists may only
shrink (a name that gains one must leave them, a new public name must bring one).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import itertools
import pkgutil
import re
from pathlib import Path

import optsched

ROOT = Path(__file__).resolve().parents[1]

#: Modules that the API reference renders one by one, the modules of ``optsched.experiments``
#: (``EXPERIMENT_MODULES`` of ``docs/_hooks/docs_pages.py``; a package without a face of its own):
#: the names each defines are public (:func:`module_public_names`).
MODULE_PAGES = (
    "optsched.experiments.registry",
    "optsched.experiments.sweep",
    "optsched.experiments.compare",
    "optsched.experiments.demo",
)

#: Public names whose docstring has no example yet (``>>>``). Remove a name when you add one.
MISSING_EXAMPLES = {
    "optsched.asrpt.Stage",
    "optsched.asrpt.alpha_max",
    "optsched.asrpt.stage_times",
    "optsched.core.AlgorithmSpec",
    "optsched.core.KindSpec",
    "optsched.core.register_kind",
    "optsched.elastic.solve_direct",
    "optsched.elastic.solve_direct_maxweight",
    "optsched.elastic.ElasticInstance",
    "optsched.elastic.WorkerType",
    "optsched.elastic.PsType",
    "optsched.lazer.Decision",
    "optsched.lazer.DeferralChooser",
    "optsched.lazer.ZeroDeferral",
    "optsched.lazer.FixedDeferral",
    "optsched.lazer.OracleDeferral",
    "optsched.lazer.check_lifecycle",
    "optsched.rarddls.first_fit",
    "optsched.rarddls.list_scheduling",
    "optsched.rarddls.random_schedule",
    "optsched.rigid.to_pyjobshop",
    "optsched.sim.RunRecord",
    "optsched.sim.Migrate",
    "optsched.sim.CancelTimer",
    "optsched.sojourn.enumerate_outcomes",
    "optsched.sojourn.monte_carlo",
    "optsched.sojourn.adjacent_pair_violations",
    "optsched.solvers.run_exact",
    "optsched.solvers.ExactModel",
    "optsched.verify.register_check",
    "optsched.verify.register_cluster_checks",
    "optsched.verify.register_evaluator",
    "optsched.verify.check_gpu_exclusive",
}


#: Public constants without a docstring yet. Remove a name when you document it.
MISSING_CONSTANT_DOCS: set[str] = set()


def public_modules() -> list[str]:
    """The modules whose public names are checked: every subpackage, :data:`MODULE_PAGES`, ``optsched``."""
    optsched.load_plugins()
    subpackages = [f"optsched.{m.name}" for m in pkgutil.iter_modules(optsched.__path__) if m.ispkg]
    return [*subpackages, *MODULE_PAGES, "optsched"]


def module_public_names(mod: object) -> list[str]:
    """What the API generator (griffe) shows of a module: the ``__all__`` of a package's
    ``__init__`` (its face, the only modules that list one); else every name the module itself
    defines (``def``, ``class`` or an assignment, at the top level or under a top-level
    ``if``/``try``) that does not start with ``_``, in source order; an imported name is not
    public there."""
    if hasattr(mod, "__all__"):
        return list(mod.__all__)
    return [n for n in dict.fromkeys(_defined(ast.parse(Path(mod.__file__).read_text("utf-8")).body)) if n[0] != "_"]


def _defined(body: list[ast.stmt]):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            yield from (t.id for t in (getattr(node, "targets", None) or [node.target]) if isinstance(t, ast.Name))
        elif isinstance(node, ast.If):
            yield from _defined([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            yield from _defined(
                [*node.body, *(s for h in node.handlers for s in h.body), *node.orelse, *node.finalbody]
            )


def public_names() -> dict[str, tuple[str, object]]:
    """Every public object once (by identity for functions and classes), under the first module that
    lists it (``optsched.core.Job``, not ``optsched.Job``): qualified name -> (module, object)."""
    found: dict[object, tuple[str, str, object]] = {}
    for modname in public_modules():
        mod = importlib.import_module(modname)
        names = module_public_names(mod) if modname in MODULE_PAGES else getattr(mod, "__all__", ())
        for name in names:
            obj = getattr(mod, name)
            if inspect.ismodule(obj):
                continue
            key = id(obj) if callable(obj) else f"{modname}.{name}"
            found.setdefault(key, (f"{modname}.{name}", modname, obj))
    return {qual: (modname, obj) for qual, modname, obj in found.values()}


def public_objects() -> dict[str, object]:
    """Every public function or class once, under its subpackage's name; constants are left out."""
    return {name: obj for name, (_, obj) in public_names().items() if callable(obj)}


def public_constants() -> dict[str, str]:
    """Every public name that is not a function, class or module: qualified name -> its module."""
    return {name: modname for name, (modname, obj) in public_names().items() if not callable(obj)}


def documented_assignments(source: str) -> set[str]:
    """Names assigned at the top level of a module and followed by a string (their docstring)."""
    body = ast.parse(source).body
    out: set[str] = set()
    for stmt, nxt in itertools.pairwise(body):
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def has_constant_docstring(modname: str, name: str) -> bool:
    """Whether ``name`` is assigned with a docstring in ``modname`` or in one of its modules (a
    package re-exports what its modules define)."""
    mod = importlib.import_module(modname)
    files = [Path(mod.__file__)]
    if hasattr(mod, "__path__"):
        files += sorted(Path(next(iter(mod.__path__))).rglob("*.py"))
    return any(name in documented_assignments(f.read_text(encoding="utf-8")) for f in files)


def own_docstring(obj: object) -> str:
    """The docstring written for ``obj`` itself: not inherited, not the signature a dataclass
    makes up when it has none."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    if inspect.isclass(obj) and doc and doc.startswith(f"{obj.__name__}("):
        doc = None
    return (doc or "").strip()


def test_every_public_name_has_a_docstring():
    missing = sorted(name for name, obj in public_objects().items() if not own_docstring(obj))
    assert not missing, f"public names without a docstring: {missing}"


def test_every_public_name_has_an_example():
    objects = public_objects()
    lacking = sorted(n for n, obj in objects.items() if ">>>" not in own_docstring(obj) and n not in MISSING_EXAMPLES)
    assert not lacking, f"public names without an example (a '>>>' doctest in the docstring): {lacking}"
    gained = sorted(n for n in MISSING_EXAMPLES if n in objects and ">>>" in own_docstring(objects[n]))
    assert not gained, f"these have an example now: remove them from MISSING_EXAMPLES: {gained}"
    gone = sorted(MISSING_EXAMPLES - set(objects))
    assert not gone, f"no longer public names: remove them from MISSING_EXAMPLES: {gone}"


def test_every_public_constant_has_a_docstring():
    constants = public_constants()
    lacking = sorted(
        n
        for n, mod in constants.items()
        if n not in MISSING_CONSTANT_DOCS and not has_constant_docstring(mod, n.rsplit(".", 1)[1])
    )
    assert not lacking, f"public constants without a docstring (a string right after the assignment): {lacking}"
    gained = sorted(
        n for n in MISSING_CONSTANT_DOCS if n in constants and has_constant_docstring(constants[n], n.rsplit(".", 1)[1])
    )
    assert not gained, f"these have a docstring now: remove them from MISSING_CONSTANT_DOCS: {gained}"
    gone = sorted(MISSING_CONSTANT_DOCS - set(constants))
    assert not gone, f"no longer public names: remove them from MISSING_CONSTANT_DOCS: {gone}"


def test_the_module_pages_are_those_the_site_renders():
    """:data:`MODULE_PAGES` is the list of modules the documentation hook renders for
    ``optsched.experiments`` (read from its source, without importing mkdocs)."""
    hook = (ROOT / "docs" / "_hooks" / "docs_pages.py").read_text(encoding="utf-8")
    m = re.search(r"EXPERIMENT_MODULES\s*=\s*\(([^)]*)\)", hook)
    assert m, "EXPERIMENT_MODULES not found in docs/_hooks/docs_pages.py: update MODULE_PAGES' source"
    rendered = tuple(f"optsched.experiments.{n}" for n in re.findall(r'"(\w+)"', m.group(1)))
    assert rendered == MODULE_PAGES


def test_a_module_page_shows_what_its_module_defines_as_the_site_reads_it(tmp_path, monkeypatch):
    """:func:`module_public_names` keeps what a module defines and drops what it imports or keeps
    private; the site's hook (``docs_pages.module_public_names``) reads every module page alike."""
    (tmp_path / "fakemod.py").write_text(
        '"""Doc."""\nfrom os import path\nimport sys\n\nfrom json import dumps as DUMPS\n\n'
        "A = 1\nB: int = 2\n_C = 3\nD = path\nif sys:\n    E = 4\nelse:\n    F = 5\n"
        "try:\n    G = 6\nexcept ImportError:\n    H = 7\n\n\ndef f():\n    inner = 8\n\n\n"
        "def _g():\n    pass\n\n\nclass K:\n    attr = 9\n\n\nA = 10\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    fake = importlib.import_module("fakemod")
    assert module_public_names(fake) == ["A", "B", "D", "E", "F", "G", "H", "f", "K"]
    monkeypatch.setattr(fake, "__all__", ["f"], raising=False)  # a package's face
    assert module_public_names(fake) == ["f"]
    monkeypatch.delattr(fake, "__all__")
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "_hooks"))  # the hooks import each other by name
    spec = importlib.util.spec_from_file_location("docs_pages_rule", ROOT / "docs" / "_hooks" / "docs_pages.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    for modname in (*MODULE_PAGES, "optsched.exceptions", "fakemod"):
        mod = importlib.import_module(modname)
        assert hook.module_public_names(mod) == module_public_names(mod), modname


def test_the_traces_and_experiments_pages_are_covered():
    """The lazily exported names of ``optsched.traces`` and the modules of ``optsched.experiments``
    are checked like every other public name (the coverage the test exists for)."""
    objects, constants = public_objects(), public_constants()
    for name in ("optsched.traces.load_trace", "optsched.traces.read_jobs", "optsched.experiments.sweep.sweep"):
        assert name in objects
    assert "optsched.experiments.demo.collect_rows" in objects
    assert "optsched.traces.TABLE_COLUMNS" in constants and "optsched.experiments.sweep.EXECUTORS" in constants
    registry = importlib.import_module("optsched.experiments.registry")
    assert "Reproduction" in module_public_names(registry)  # an alias assigned there is shown there
    assert "optsched.experiments.compare.Comparison" in objects  # a package on the page: its face


def test_helpers_see_what_they_should():
    class Documented:
        """A class with a docstring.

        >>> 1
        1
        """

    class Plain:
        pass

    assert ">>>" in own_docstring(Documented)
    assert own_docstring(Plain) == ""
    assert own_docstring(type("Sub", (Documented,), {})) == ""  # not inherited
    assert "optsched.core.Job" in public_objects()
    assert documented_assignments('A = 1\n"""A."""\nB: int = 2\n"""B."""\nC = 3\nx = "not a docstring of C"\n') == {
        "A",
        "B",
    }
