"""optsched.core.plugins: one way to plug in a paper (a plugin.py with one register()), loaded once,
and the two registries only papers fill (enrichments, reproductions)."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest

import optsched
from optsched.core import plugins
from optsched.core.plugins import (
    SHARED_PACKAGES,
    enrichments,
    get_enrichment,
    load_plugin,
    load_plugins,
    plugin_packages,
    register_reproduction,
    reproduction_specs,
)
from optsched.core.registry import algorithms, discover_kind, kinds
from optsched.exceptions import InvalidOptionError, UnknownNameError

PKG = Path(optsched.__file__).parent
REGISTER_CALLS = {
    "register_kind",
    "register_algorithm",
    "register_check",
    "register_cluster_checks",
    "register_evaluator",
    "register_suite_instances",
    "register_policy",
    "register_enrichment",
    "register_reproduction",
}
#: Registrations still made outside plugin.py, in files other work is changing now (emptied as it
#: lands; the mechanism stays for the next such change).
NOT_YET_IN_PLUGIN: set[str] = set()


def _register_calls(path: Path) -> list[int]:
    """Lines of the calls to a registry in ``path`` (as a call or a decorator)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in REGISTER_CALLS:
                out.append(node.lineno)
    return out


def test_the_paper_packages_are_found_and_each_has_one_plugin_with_register():
    papers = plugin_packages()
    assert {"optsched.rigid", "optsched.asrpt", "optsched.elastic", "optsched.lazer"} <= set(papers)
    assert not {f"optsched.{s}" for s in SHARED_PACKAGES} & set(papers)
    for pkg in papers:
        plugin = PKG / pkg.split(".")[1] / "plugin.py"
        assert plugin.is_file(), f"{pkg} has no plugin.py"
        tree = ast.parse(plugin.read_text())
        assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "register"] == ["register"]


def test_papers_register_only_in_their_plugin():
    elsewhere = []
    for pkg in plugin_packages():
        for f in sorted((PKG / pkg.split(".")[1]).rglob("*.py")):
            rel = f.relative_to(PKG.parent).as_posix()
            if f.name == "plugin.py" or rel in NOT_YET_IN_PLUGIN:
                continue
            elsewhere += [f"{rel}:{line}" for line in _register_calls(f)]
    assert elsewhere == [], f"registrations outside plugin.py (declare them in the package's plugin.py): {elsewhere}"


def test_the_allowed_exceptions_still_register():
    gone = [f for f in sorted(NOT_YET_IN_PLUGIN) if not _register_calls(PKG.parent / f)]
    assert gone == [], f"remove these from NOT_YET_IN_PLUGIN: {gone}"


def test_load_plugin_calls_register_once(monkeypatch):
    calls = []
    pkg = types.ModuleType("optsched_fake_paper")
    pkg.__path__ = []  # a package
    plugin = types.ModuleType("optsched_fake_paper.plugin")
    plugin.register = lambda: calls.append(1)
    monkeypatch.setitem(sys.modules, "optsched_fake_paper", pkg)
    monkeypatch.setitem(sys.modules, "optsched_fake_paper.plugin", plugin)
    monkeypatch.setattr(plugins, "_LOADED", set())
    load_plugin("optsched_fake_paper")
    load_plugin("optsched_fake_paper")
    assert calls == [1]


def test_an_error_inside_a_plugin_is_raised(monkeypatch):
    pkg = types.ModuleType("optsched_broken_paper")
    pkg.__path__ = []
    plugin = types.ModuleType("optsched_broken_paper.plugin")

    def register():
        raise ValueError("broken plugin")

    plugin.register = register
    monkeypatch.setitem(sys.modules, "optsched_broken_paper", pkg)
    monkeypatch.setitem(sys.modules, "optsched_broken_paper.plugin", plugin)
    with pytest.raises(ValueError, match="broken plugin"):
        load_plugin("optsched_broken_paper")


def test_loading_every_plugin_registers_each_kind_and_its_algorithms():
    load_plugins()
    assert {"rigid", "asrpt", "elastic", "rarddls", "sojourn"} <= set(kinds())
    for kind in kinds():
        assert f"optsched.{kind}" in plugin_packages()
        assert algorithms(kind), kind


def test_discovery_imports_paper_packages_only():
    assert not discover_kind("cli") and not discover_kind("commands") and not discover_kind("__main__")


def test_each_enrichment_turns_a_generic_table_into_its_view():
    from optsched.core import Cluster
    from optsched.traces import synthetic_workload

    load_plugins()
    assert set(enrichments()) == {"asrpt", "elastic", "sojourn", "lazer"}
    table = synthetic_workload(12, cluster_gpus=16, max_gpus=4, seed=3)
    cluster = Cluster.homogeneous(2, 8)
    for paper, spec in enrichments().items():
        assert spec.paper == paper and spec.adds
        view = spec(table, cluster, seed=1)  # an instance (asrpt, elastic), a StagedTable (sojourn), a table
        rows = view.jobs if hasattr(view, "jobs") else getattr(view, "table", view)
        assert len(rows) == len(table), paper
    with pytest.raises(UnknownNameError, match="papers with one"):
        get_enrichment("rigid")


def test_each_reproduction_names_its_paper_and_a_function_that_exists():
    load_plugins()
    specs = reproduction_specs()
    assert {s.paper for s in specs.values()} == {"asrpt", "elastic", "rarddls", "sojourn", "lazer"}
    for name, spec in specs.items():
        assert spec.name == name and isinstance(spec.target, str) and spec.target.startswith("optsched.experiments.")
        assert callable(spec.run), name


@pytest.mark.parametrize("target", ["no-colon", ":f", "m:", "m:not an identifier"])
def test_a_bad_reproduction_target_is_refused(target):
    with pytest.raises(InvalidOptionError, match="must be 'module:function'"):
        register_reproduction("bad", target, description="", paper="x")
    assert "bad" not in reproduction_specs()
