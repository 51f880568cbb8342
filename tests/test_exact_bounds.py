"""Every exact solve says how far it is from the optimum: each kind's result names its cheap bound
(``info["cheap_bound"]``, or why it has none), and its bound is never on the wrong side of it nor
negative where the objective cannot be, even when stopped before any solver ran
(docs/exact.md#cheap-bound)."""

from __future__ import annotations

import warnings

import pytest

import optsched
from optsched.solvers import SolveOptions

KINDS = {
    "rigid-2x2-five": "optsched.rigid.exact",
    "asrpt-2x2-three": "optsched.asrpt.exact",
    "elastic-intro": "optsched.elastic.exact",
    "rarddls-2x2-three": "optsched.rarddls.exact",
    "sojourn-two-jobs": "optsched.sojourn.exact",
}


def _solve(toy: str, time_limit: float):
    import importlib

    inst = optsched.load_instance(optsched.toy_path(toy))
    mod = importlib.import_module(KINDS[toy])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mod.solve_exact(inst, options=SolveOptions(threads=1, time_limit=time_limit))


@pytest.mark.parametrize("toy", sorted(KINDS))
def test_every_kind_names_its_cheap_bound_and_reports_at_least_it(toy):
    r = _solve(toy, 20)
    assert r.status.value == "optimal"
    assert isinstance(r.info.get("cheap_bound"), str) and r.info["cheap_bound"]
    assert 0 <= r.bound <= r.objective + 1e-9
    if "initial_bound" in r.info:
        assert r.bound >= r.info["initial_bound"] - 1e-9


@pytest.mark.parametrize("toy", ["rigid-2x2-five", "asrpt-2x2-three", "elastic-intro"])
def test_a_solve_with_no_time_reports_a_positive_bound(toy):
    r = _solve(toy, 1e-6)
    assert r.bound is not None and 0 < r.bound <= r.objective


#: Twice the largest size of each kind's random_instance (default cluster, default back end) that
#: every seed 0-4 proved within 60 s (docs/exact.md#frontier): the size and the time limit here.
TWICE_THE_FRONTIER = {
    "rigid": ("optsched.rigid.generate", "optsched.rigid.exact", 64, 20),
    "asrpt": ("optsched.asrpt.generate", "optsched.asrpt.exact", 32, 20),
    "elastic": ("optsched.elastic.generate", "optsched.elastic.exact", 8, 20),
    "rarddls": ("optsched.rarddls.generate", "optsched.rarddls.exact", 8, 20),
    "sojourn": ("optsched.sojourn.generate", "optsched.sojourn.exact", 512, 60),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(TWICE_THE_FRONTIER))
def test_the_bound_at_twice_the_proven_size_is_positive_and_below_the_incumbent(kind):
    import importlib

    gen, mod, n, limit = TWICE_THE_FRONTIER[kind]
    inst = importlib.import_module(gen).random_instance(n, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = importlib.import_module(mod).solve_exact(inst, options=SolveOptions(threads=1, time_limit=limit))
    assert r.objective is not None and r.bound is not None
    assert 0 < r.bound <= r.objective + 1e-9
