"""Exact Problem (8): CP-SAT vs the time-indexed MILP, independent verification."""

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.asrpt import toy_instance
from optsched.asrpt.exact import solve_exact
from optsched.asrpt.formulation import build_problem8, horizon_slots, job_patterns
from optsched.asrpt.generate import random_instance
from optsched.core.registry import get_algorithm
from optsched.core.schedule import Schedule
from optsched.solvers import SolveOptions
from optsched.verify import verify, verify_result

OPT = SolveOptions(threads=1, time_limit=30)


def test_toy_known_optimum_both_backends():
    inst = toy_instance()
    known = inst.known_optima["total_completion_time"]["value"]
    for b in ("cpsat", "highs"):
        r = solve_exact(inst, backend=b, options=OPT)
        assert r.status.value == "optimal"
        assert r.objective == pytest.approx(known, abs=1e-3)
        assert r.bound <= r.objective + 1e-9
        rep = verify_result(inst, r)
        assert rep.ok, rep.violations


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4))
def test_cpsat_equals_time_indexed_on_random_small(seed, n):
    inst = random_instance(
        n, n_servers=2, gpus_per_server=2, seed=seed, single_gpu=0.3, mean_slots=2.0, arrival_rate=1.0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = solve_exact(inst, backend="cpsat", options=OPT, stop_at_bound=False)
        b = solve_exact(inst, backend="highs", options=OPT, stop_at_bound=False)
    assert a.optimal and b.optimal
    assert a.objective == pytest.approx(b.objective, abs=a.info["objective_rounding"] + 1e-6)
    for r in (a, b):
        assert verify_result(inst, r).ok
    # the serial schedule behind the horizon is feasible and no better than the optimum
    pats = {j.id: job_patterns(j, inst) for j in inst.jobs}
    assert horizon_slots(inst, pats) * inst.slot >= max(a.schedule.completions().values()) - 1e-9


def test_verifier_catches_short_and_overlapping_runs():
    inst = toy_instance()
    r = solve_exact(inst, options=OPT)
    bad = Schedule()
    for jid, segs in r.schedule.items():
        s = segs[0]
        bad.add(jid, s.start, s.start + 0.5 * s.duration, s.placement)  # too short
    rep = verify(inst, bad)
    assert not rep.ok and any(v.label == "bottleneck" for v in rep.violations)
    clash = Schedule()
    for jid, segs in r.schedule.items():
        s = segs[0]
        clash.add(jid, inst.job(jid).arrival, inst.job(jid).arrival + s.duration, {0: inst.job(jid).gpus})
    rep = verify(inst, clash)
    assert any(v.label in ("capacity", "release") for v in rep.violations)


def test_registered_and_model_labels():
    spec = get_algorithm("asrpt-exact")
    assert spec.exact and spec.kind == "asrpt"
    m = build_problem8(toy_instance())
    for name in ("one_pattern_per_job", "release", "capacity", "total_completion_time"):
        assert hasattr(m, name)


def test_wrong_kind_rejected():
    from optsched.exceptions import InvalidInstanceError

    class Other:
        kind = "rigid"

    with pytest.raises(InvalidInstanceError, match="kind 'asrpt'"):
        solve_exact(Other())


@pytest.mark.slow
def test_eight_jobs_three_by_four_proven_within_60s():
    inst = random_instance(8, n_servers=3, gpus_per_server=4, seed=0, single_gpu=0.3, arrival_rate=2.0)
    r = solve_exact(inst, options=SolveOptions(threads=1, time_limit=60))
    assert r.optimal and verify_result(inst, r).ok


def test_demo_rows_quick():
    from optsched.asrpt.demo import demo_rows

    rows = demo_rows(quick=True)
    assert rows and all(r["verified"] for r in rows)
    assert all(r["ratio"] >= 1 - 1e-9 for r in rows if r["ratio"] is not None)


def test_solve_exact_is_the_registered_exact_algorithm():
    assert get_algorithm("asrpt-exact").func is solve_exact


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4))
def test_certified_results_three_backends(seed, n):
    """Objective recomputed from the schedule; bound never above it; the exact Pyomo model is
    certified within 1e-9, the CP-SAT models within twice their rounding of n_i alpha_i."""
    from optsched.asrpt.exact import OBJECTIVE, solve_exact
    from optsched.core.objectives import objective_value

    inst = random_instance(
        n, n_servers=2, gpus_per_server=2, seed=seed, single_gpu=0.3, mean_slots=2.0, arrival_rate=1.0
    )
    res = {
        b: solve_exact(inst, backend=b, options=OPT, seed=seed, stop_at_bound=False)
        for b in ("cpsat", "cpsat-ti", "highs")
    }
    for b, r in res.items():
        assert r.optimal, (b, r)
        assert r.objective == objective_value(inst, r.schedule, OBJECTIVE)
        assert r.bound <= r.objective and r.objective - r.bound <= r.info["optimality_tolerance"]
        tol = 2 * r.info["objective_rounding"] * (1 + 1e-9) if b != "highs" else 1e-9 * r.objective
        assert r.info["optimality_tolerance"] == pytest.approx(max(tol, 1e-9 * r.objective))
        # every optimum is within the others' certified tolerance
        for other in res.values():
            assert r.objective <= other.objective + r.info["optimality_tolerance"] + 1e-9


# --- warm starts (issue 12 item 2) ---------------------------------------------------------------


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4))
def test_grid_heuristic_is_feasible_no_better_than_optimum_and_hinted_exactly(seed, n):
    from optsched.asrpt.exact import best_heuristic, solve_exact

    inst = random_instance(
        n, n_servers=2, gpus_per_server=2, seed=seed, single_gpu=0.3, mean_slots=2.0, arrival_rate=1.0
    )
    h = best_heuristic(inst)
    assert verify(inst, h).ok
    opt = solve_exact(inst, backend="highs", options=OPT, initial=None)
    fixed = SolveOptions(threads=1, time_limit=10, solver_options={"fix_variables_to_their_hinted_value": True})
    for b in ("cpsat", "cpsat-ti"):
        r = solve_exact(inst, backend=b, options=fixed, initial=h, stop_at_bound=False)
        assert r.info["incumbent"] == "solver" and r.info["warm_start"]
        assert r.objective == pytest.approx(r.info["initial_objective"], abs=1e-9)
    assert opt.objective <= r.info["initial_objective"] + 1e-9


def test_never_worse_than_warm_start_and_bad_initial_refused():
    from optsched.asrpt.exact import best_heuristic, solve_exact
    from optsched.core.objectives import objective_value
    from optsched.exceptions import InvalidOptionError, InvalidScheduleError

    inst = random_instance(8, n_servers=3, gpus_per_server=4, seed=1, single_gpu=0.3, arrival_rate=2.0)
    h = best_heuristic(inst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_exact(inst, backend="highs", options=SolveOptions(threads=1, time_limit=0.5))
    assert r.objective is not None and r.objective <= objective_value(inst, h, "total_completion_time") + 1e-9
    assert verify_result(inst, r).ok
    toy = toy_instance()
    good = best_heuristic(toy)
    first = toy.jobs[0]
    shifted = Schedule()
    for jid, segs in good.items():
        s = segs[0]
        d = s.end - s.start
        start = s.start + 0.5 * toy.slot if jid == first.id else s.start  # off the slot grid
        shifted.add(jid, start, start + d, s.placement)
    assert verify(toy, shifted).ok  # feasible, but not on the grid of Problem (8)
    with pytest.raises(InvalidScheduleError, match=rf"job {first.id!r}.*not a start slot"):
        solve_exact(toy, initial=shifted)
    late = max(toy.jobs, key=lambda j: j.arrival)
    early = Schedule()
    for jid, segs in good.items():
        s = segs[0]
        start = late.arrival - toy.slot if jid == late.id else s.start
        early.add(jid, start, start + (s.end - s.start), s.placement)
    with pytest.raises(InvalidScheduleError, match=rf"job {late.id!r} violates \(release\)"):
        solve_exact(toy, initial=early)
    with pytest.raises(InvalidOptionError, match="'initial'"):
        solve_exact(toy, initial="spjf")
