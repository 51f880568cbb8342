"""Stronger bounds of the rigid exact models (issue 12 item 3): the energy rows (E) hold for every
schedule, the LP relaxation value is a valid bound, and CP-SAT reports at least it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Status
from optsched.rigid import list_schedule, random_instance, solve_exact
from optsched.rigid.exact import lp_relaxation_bound
from optsched.rigid.formulation import energy_rows, slot_data
from optsched.solvers import SolveOptions
from optsched.verify import verify_result
from tests.strategies import rigid_instances

OPT = SolveOptions(time_limit=30, threads=1, mip_abs_gap=0.999)


def _starts(inst, schedule) -> list[int]:
    return [round(schedule.segments(j.id)[0].start / inst.slot) for j in inst.jobs]


def _trivial(inst) -> float:
    return sum(j.weight * (j.arrival + j.work) for j in inst.jobs)


@settings(max_examples=40, deadline=None)
@given(rigid_instances(max_jobs=6), st.integers(0, 10))
def test_energy_rows_hold_for_every_schedule(inst, seed):
    """Any feasible schedule (random list schedules and the exact optimum) satisfies every row."""
    d = slot_data(inst)
    rows = energy_rows(d)
    scheds = [list_schedule(inst, rule="random", seed=seed).schedule, list_schedule(inst, rule="wspt").schedule]
    for sched in scheds:
        s = _starts(inst, sched)
        for jobs, coef, rhs in rows:
            assert sum(c * s[j] for c, j in zip(coef, jobs, strict=True)) >= rhs


def test_energy_rows_are_tight_for_one_job_filling_the_cluster():
    """One job on every GPU: its row is sum 2 e s >= 2 e r + e^2/G - e p = 2 e r (equality at s = r);
    a second identical job makes the row of both bind at the serial schedule."""
    from optsched.core import Cluster, Instance, Job

    inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=3, gpus=2), Job(1, work=3, gpus=2)])
    rows = energy_rows(slot_data(inst))
    both = [r for r in rows if len(r[0]) == 2]
    assert both and both[0][2] == 2 * 6 * 3  # 2 e_0 * 0 + 2 e_1 * 3 with e = 6
    assert not any(len(r[0]) == 1 for r in rows)  # a single job's row is implied by its release


@settings(max_examples=15, deadline=None)
@given(rigid_instances(max_jobs=5))
def test_lp_bound_between_the_trivial_bound_and_the_optimum(inst):
    r = solve_exact(inst, backend="highs", options=OPT)
    lp = lp_relaxation_bound(inst)
    assert r.status == Status.OPTIMAL and lp is not None
    assert _trivial(inst) - 1e-6 <= lp <= r.objective + 1e-6


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
def test_cpsat_reports_the_lp_bound_and_never_less(monkeypatch):
    import optsched.solvers.exact as exact_mod

    monkeypatch.setattr(exact_mod, "PROBE_MAX_SECONDS", 0.0)  # no probe: the LP is always solved
    inst = random_instance(12, n_servers=2, gpus_per_server=4, single_server=1.0, seed=3)
    r = solve_exact(inst, backend="cpsat", options=SolveOptions(time_limit=5, threads=1))
    lp = r.info["lp_bound"]
    assert lp is not None and _trivial(inst) <= lp <= r.objective + 1e-9
    assert r.bound >= math.ceil(lp / inst.slot - 1e-6) * inst.slot - 1e-9
    assert r.info["energy_rows"] > 0 and verify_result(inst, r).ok


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
@pytest.mark.parametrize("energy", [False, True])
def test_the_extra_rows_keep_the_optimum(energy):
    """With or without (E) and the LP row, CP-SAT proves the same optimum as HiGHS."""
    from optsched.rigid.formulation import build_interval_cpsat
    from optsched.solvers import solve_cpsat

    inst = random_instance(8, n_servers=2, gpus_per_server=4, single_server=1.0, seed=1)
    ref = solve_exact(inst, backend="highs", options=OPT)
    lp = lp_relaxation_bound(inst)
    model, _ = build_interval_cpsat(
        inst, energy=energy, objective_lower_bound=math.ceil(lp / inst.slot - 1e-6) if energy else None
    )
    sr = solve_cpsat(model, SolveOptions(time_limit=20, threads=1))
    assert sr.status == Status.OPTIMAL and sr.objective * inst.slot == pytest.approx(ref.objective)


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
@settings(max_examples=12, deadline=None)
@given(rigid_instances(max_jobs=6), st.sampled_from([0.0, 1e-4, 0.5]))
def test_the_staged_cpsat_solve_proves_the_optimum(inst, probe):
    """Probe only (it proves), probe stopped at once (then the LP row and the main solve), or no
    probe: the same certified optimum as HiGHS, a bound never above it, a verified schedule."""
    import optsched.solvers.exact as exact_mod

    ref = solve_exact(inst, backend="highs", options=OPT)
    old, exact_mod.PROBE_MAX_SECONDS = exact_mod.PROBE_MAX_SECONDS, probe
    try:
        r = solve_exact(inst, backend="cpsat", options=OPT)
    finally:
        exact_mod.PROBE_MAX_SECONDS = old
    assert ref.status == Status.OPTIMAL and r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(ref.objective, rel=1e-9)
    assert r.bound <= r.objective + 1e-9 and verify_result(inst, r).ok
    if probe == 0.0:
        assert "probe" not in r.info and r.info["lp_bound"] is not None
    else:
        assert r.info["probe"]["status"] in ("optimal", "feasible", "no_solution")
        if r.info["probe"]["status"] == "optimal":
            assert r.info["lp_bound"] is None  # proven by the probe: the LP was skipped
        else:
            assert "lp_bound" in r.info  # the LP was tried before the main solve


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
def test_the_main_solve_after_an_unproven_probe_keeps_the_optimum():
    """A probe too short to prove (1 microsecond): the LP row is added, the main solve proves the
    optimum of HiGHS, and the bound holds (the probe's and the row's bounds are merged)."""
    import optsched.solvers.exact as exact_mod

    inst = random_instance(12, n_servers=2, gpus_per_server=4, single_server=1.0, seed=3)
    ref = solve_exact(inst, backend="highs", options=OPT)
    old, exact_mod.PROBE_MAX_SECONDS = exact_mod.PROBE_MAX_SECONDS, 1e-6
    try:
        r = solve_exact(inst, backend="cpsat", options=OPT)
    finally:
        exact_mod.PROBE_MAX_SECONDS = old
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(ref.objective, rel=1e-9)
    assert verify_result(inst, r).ok and r.bound <= r.objective + 1e-9
    if r.info["probe"]["status"] != "optimal":
        assert r.info["lp_bound"] is not None and r.info["lp_bound"] <= r.objective + 1e-9
