"""Exact rigid models: HiGHS == CP-SAT == exhaustive enumeration; optimum <= every heuristic."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

import optsched
from optsched.core import Status
from optsched.rigid import (
    brute_force_optimum,
    list_schedule,
    random_instance,
    solve_exact,
)
from optsched.solvers import SolveOptions
from optsched.verify import verify_result
from tests.strategies import rigid_instances

OPT = SolveOptions(time_limit=30, threads=1, mip_abs_gap=0.999)


@pytest.mark.parametrize("name", ["rigid-2x2-five", "rigid-1x4-release", "rigid-3x2-single"])
def test_toy_known_optimum_three_ways(name):
    inst = optsched.load_instance(optsched.toy_path(name))
    known = inst.known_optima["total_weighted_completion_time"]["value"]
    bf, _sched = brute_force_optimum(inst)
    assert bf == known
    for backend in ("highs", "cpsat"):
        r = solve_exact(inst, backend=backend, options=OPT)
        assert r.status == Status.OPTIMAL
        assert r.objective == pytest.approx(known)
        assert r.bound <= r.objective + 1e-9
        assert verify_result(inst, r).ok


@settings(max_examples=25)
@given(rigid_instances(max_jobs=4, single=False))
def test_exact_equals_enumeration_spanning(inst):
    bf, _ = brute_force_optimum(inst)
    r = solve_exact(inst, options=OPT)
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(bf)


@settings(max_examples=20)
@given(rigid_instances(max_jobs=4, max_servers=2, single=True))
def test_exact_equals_enumeration_single_server(inst):
    bf, _ = brute_force_optimum(inst)
    r = solve_exact(inst, backend="cpsat", options=OPT)
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(bf)


@settings(max_examples=25)
@given(rigid_instances(max_jobs=5))
def test_optimum_below_every_heuristic_and_backends_agree(inst):
    a = solve_exact(inst, backend="highs", options=OPT)
    b = solve_exact(inst, backend="cpsat", options=OPT)
    assert a.status == b.status == Status.OPTIMAL
    assert a.objective == pytest.approx(b.objective)
    assert verify_result(inst, a).ok and verify_result(inst, b).ok
    for rule in ("wspt", "fifo", "spt", "random"):
        assert a.objective <= list_schedule(inst, rule=rule, seed=0).objective + 1e-9


def test_bench_instance_solves_and_write_model(tmp_path):
    inst = random_instance(10, n_servers=3, gpus_per_server=4, single_server=0.5, seed=2)
    r = solve_exact(inst, options=OPT, write_model=str(tmp_path / "m.lp"))
    assert r.status == Status.OPTIMAL and (tmp_path / "m.lp").read_text().count("one_start_per_job") >= 1


def test_fractional_data_is_refused_with_fix():
    from optsched.core import Cluster, Instance, Job
    from optsched.exceptions import InvalidInstanceError

    inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=1.5)])
    with pytest.raises(InvalidInstanceError, match="slot"):
        solve_exact(inst)
    r = solve_exact(inst.replace(slot=0.5), options=OPT)
    assert r.objective == pytest.approx(1.5)


def _labels(prefix: str) -> list[str]:
    md = (Path(__file__).resolve().parents[2] / "formulations" / "rigid.md").read_text()
    return re.findall(r"\*\*\((" + prefix + r"\d)\) (\w+)\*\*", md)


def test_every_verifier_label_in_the_markdown_is_registered():
    from optsched.verify import checks_for

    registered = {lab for lab, _ in checks_for("rigid")}
    for _tag, name in _labels("R"):
        assert name in registered


@settings(max_examples=15, deadline=None)
@given(rigid_instances(max_jobs=5))
def test_result_is_certified_by_the_shared_flow(inst):
    """Objective = the evaluator's value of the schedule; bound never above it; the gap is
    relative_gap; optimal only within the stated tolerance (a whole slot with integer weights)."""
    from optsched.core.objectives import objective_value
    from optsched.core.result import relative_gap

    for backend in ("highs", "cpsat"):
        r = solve_exact(inst, backend=backend, options=OPT, seed=np.random.default_rng(1))
        assert r.objective == objective_value(inst, r.schedule, "total_weighted_completion_time")
        assert r.bound <= r.objective and r.gap == relative_gap(r.objective, r.bound)
        assert r.status == Status.OPTIMAL
        assert r.objective - r.bound <= r.info["optimality_tolerance"]
        assert r.info["optimality_tolerance"] <= 1e-9 * max(r.objective, 1e-10)


def test_time_limited_run_is_feasible_with_a_warning_and_a_valid_bound():
    import warnings

    from optsched.exceptions import SolverLimitWarning

    inst = random_instance(30, n_servers=4, gpus_per_server=4, single_server=1.0, seed=10)
    opt = SolveOptions(time_limit=0.5, threads=1, mip_abs_gap=0.999)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = solve_exact(inst, backend="cpsat", options=opt)
    assert r.status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.OPTIMAL)
    if r.status != Status.OPTIMAL:
        assert sum(issubclass(x.category, SolverLimitWarning) for x in w) == 1
    if r.objective is not None:
        assert verify_result(inst, r).ok and r.bound <= r.objective
        best_heuristic = min(list_schedule(inst, rule=rule, seed=0).objective for rule in ("wspt", "fifo", "spt"))
        assert r.bound <= best_heuristic


# --- warm starts (issue 12 item 2) ---------------------------------------------------------------


@settings(max_examples=10, deadline=None)
@given(rigid_instances(max_jobs=5))
def test_warm_start_is_encoded_exactly_cpsat(inst):
    """Fixing every hinted variable reproduces the initial schedule's objective: the hints are a
    complete, feasible encoding of it."""
    from optsched.rigid.exact import best_heuristic

    init = best_heuristic(inst)
    init_obj = list_schedule(inst, rule="wspt").objective
    fixed = SolveOptions(time_limit=10, threads=1, solver_options={"fix_variables_to_their_hinted_value": True})
    r = solve_exact(inst, backend="cpsat", options=fixed, initial=init)
    assert r.info["incumbent"] == "solver" and r.info["warm_start"]
    assert r.objective == pytest.approx(r.info["initial_objective"]) and r.objective <= init_obj


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
@settings(max_examples=10, deadline=None)
@given(rigid_instances(max_jobs=5))
def test_warm_start_reaches_highs_as_a_mip_start(inst):
    """With no search, no heuristics and no presolve, HiGHS's incumbent can only be the start
    (or a better integral root LP): it is the solver's, never worse than the start."""
    no_search = SolveOptions(
        time_limit=10, threads=1, solver_options={"mip_max_nodes": 0, "mip_heuristic_effort": 0.0, "presolve": "off"}
    )
    r = solve_exact(inst, backend="highs", options=no_search)
    assert r.info["incumbent"] == "solver", r.info
    assert r.objective <= r.info["initial_objective"] + 1e-9


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_exact_solve_never_worse_than_its_warm_start(backend):
    import warnings

    inst = random_instance(40, n_servers=4, gpus_per_server=4, single_server=1.0, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_exact(inst, backend=backend, options=SolveOptions(time_limit=1, threads=1))
    best = min(list_schedule(inst, rule=rule).objective for rule in ("wspt", "fifo", "spt"))
    assert r.objective is not None and r.objective <= best and verify_result(inst, r).ok
    assert r.info["initial_objective"] == pytest.approx(best)


def test_infeasible_or_foreign_initial_schedule_is_refused_naming_job_and_label():
    from optsched.core.schedule import Schedule
    from optsched.exceptions import InvalidOptionError, InvalidScheduleError

    inst = optsched.load_instance(optsched.toy_path("rigid-1x4-release"))
    good = list_schedule(inst).schedule
    late = max(inst.jobs, key=lambda j: j.arrival)
    bad = Schedule()
    for jid, segs in good.items():
        s = segs[0]
        start = 0.0 if jid == late.id else s.start  # before its release
        bad.add(jid, start, start + (s.end - s.start), s.placement)
    with pytest.raises(InvalidScheduleError, match=rf"job {late.id!r}.*\(release\)"):
        solve_exact(inst, initial=bad)
    other = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
    with pytest.raises(InvalidScheduleError, match="not feasible for instance"):
        solve_exact(inst, initial=list_schedule(other).schedule)
    with pytest.raises(InvalidOptionError, match="'initial'"):
        solve_exact(inst, initial="best")
    assert solve_exact(inst, initial=None, options=OPT).info["warm_start"] is False


@settings(max_examples=15, deadline=None)
@given(rigid_instances(max_jobs=5))
def test_the_default_warm_start_is_not_verified_before_the_solve_a_given_one_is(inst):
    """The list scheduler's schedule goes to the solver unchecked (the result's schedule is what
    the verifier checks, once); a caller's schedule is checked first. The result is the same
    either way and passes the verifier."""
    rexact = sys.modules["optsched.rigid.exact"]
    calls = []
    real = rexact.verify

    def counting(instance, schedule, **kw):
        calls.append(schedule)
        return real(instance, schedule, **kw)

    rexact.verify = counting
    try:
        r = solve_exact(inst, options=OPT)
        assert calls == []
        given_one = solve_exact(inst, options=OPT, initial=list_schedule(inst, rule="wspt").schedule)
        assert len(calls) == 1
    finally:
        rexact.verify = real
    assert verify_result(inst, r).ok
    assert (r.status, r.objective) == (given_one.status, given_one.objective)
