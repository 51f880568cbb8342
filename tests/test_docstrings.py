"""Every public function and class has a docstring, and one with an example.

Public = listed in the ``__all__`` of ``optsched`` or of one of its subpackages (what the API
reference of the documentation site shows). The examples run as doctests in
``tests/test_doctests.py``. The names still without an example are listed below: the list may
only shrink (a name that gains an example must leave it, a new public name must bring one).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import optsched

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
    "optsched.traces.fetch",
    "optsched.traces.find_file",
    "optsched.verify.register_check",
    "optsched.verify.register_cluster_checks",
    "optsched.verify.register_evaluator",
    "optsched.verify.check_gpu_exclusive",
}


def public_objects() -> dict[str, object]:
    """Every public function or class once, under its subpackage's name (``optsched.core.Job``,
    not ``optsched.Job``); constants and modules are left out."""
    optsched.load_plugins()
    subpackages = [f"optsched.{m.name}" for m in pkgutil.iter_modules(optsched.__path__) if m.ispkg]
    found: dict[int, tuple[str, object]] = {}
    for pkg in [*subpackages, "optsched"]:
        mod = importlib.import_module(pkg)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            found.setdefault(id(obj), (f"{pkg}.{name}", obj))
    return dict(found.values())


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
