"""Stronger bounds of the rigid exact models (issue 12 item 3): the energy rows (E) hold for every
schedule, the LP relaxation value is a valid bound, and CP-SAT reports at least it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Status
from optsched.core.cluster import Cluster
from optsched.rigid import list_schedule, random_instance, solve_exact
from optsched.rigid.formulation import energy_rows, slot_data
from optsched.rigid.time_indexed import lp_relaxation_bound
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
    import optsched.solvers.staged as exact_mod  # the probe budget lives there

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
    import optsched.solvers.staged as exact_mod  # the probe budget lives there

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
    import optsched.solvers.staged as exact_mod  # the probe budget lives there

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


# ---- relax-and-repair (formulations/rigid.md#relax-and-repair)


@settings(max_examples=25, deadline=None)
@given(rigid_instances(max_jobs=8, max_servers=3, max_gpus=4, single=True), st.integers(0, 2**31 - 1))
def test_packing_rows_hold_for_every_schedule(inst, seed):
    """(P): with identical servers, every single-server schedule (a random list schedule) satisfies
    every packing row of the aggregated model."""
    import dataclasses

    import pyomo.environ as pyo

    from optsched.rigid.formulation import add_packing_rows, build_time_indexed

    inst = inst.replace(cluster=Cluster.homogeneous(inst.cluster.n_servers, inst.cluster.max_server_gpus))
    span = inst.replace(jobs=[dataclasses.replace(j, single_server=False) for j in inst.jobs])
    model = build_time_indexed(span)
    add_packing_rows(model, [True] * len(inst.jobs))
    sched = list_schedule(inst, rule="random", seed=seed).schedule
    starts = _starts(inst, sched)
    for (j, t), x in model.x.items():
        x.value = 1.0 if starts[j] == t else 0.0
    for c in model.packing.values():
        assert pyo.value(c.body) <= pyo.value(c.upper) + 1e-9


def test_packing_rows_cut_what_the_gpu_count_allows():
    """Three 3-GPU single-server jobs released at 0 on two 4-GPU servers: (P) allows two of them
    in a slot and refuses three; with servers of different sizes no row is added."""
    import pyomo.environ as pyo

    from optsched.core.instance import Instance
    from optsched.core.job import Job
    from optsched.rigid.formulation import add_packing_rows, build_time_indexed

    jobs = [Job(i, work=1, gpus=3, arrival=0, weight=1, single_server=False) for i in range(3)]
    inst = Instance(Cluster.homogeneous(2, 4), jobs, name="p")
    model = build_time_indexed(inst)
    assert add_packing_rows(model, [True] * 3) == model.data.T  # one per slot: 3 big jobs may run in each
    for (j, t), x in model.x.items():  # two of them at 0 (6 <= 8 GPUs): allowed
        x.value = 1.0 if t == (0 if j < 2 else 1) else 0.0
    assert all(pyo.value(c.body) <= pyo.value(c.upper) for c in model.packing.values())
    for (_j, t), x in model.x.items():  # all three at 0: the GPU row (9 > 8) and (P) (3 > 2) refuse it
        x.value = 1.0 if t == 0 else 0.0
    assert any(pyo.value(c.body) > pyo.value(c.upper) for c in model.packing.values())
    hetero = Instance(Cluster([{"gpus": 4}, {"gpus": 8}]), jobs, name="h")
    assert add_packing_rows(build_time_indexed(hetero), [True] * 3) == 0  # servers differ: no rows


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
@settings(max_examples=15, deadline=None)
@given(rigid_instances(max_jobs=7, max_servers=3, max_gpus=4))
def test_relax_and_repair_keeps_the_optimum(inst):
    """The time-indexed back end with the relaxation (default) and without it (RELAX_SHARE = 0),
    and CP-SAT: one certified optimum, verified schedules, valid bounds."""
    import optsched.rigid.exact as rexact

    r = solve_exact(inst, backend="highs", options=OPT)
    old, rexact.RELAX_SHARE = rexact.RELAX_SHARE, 0.0
    try:
        plain = solve_exact(inst, backend="highs", options=OPT)
    finally:
        rexact.RELAX_SHARE = old
    cp = solve_exact(inst, backend="cpsat", options=OPT)
    assert r.status == plain.status == cp.status == Status.OPTIMAL
    assert r.objective == pytest.approx(plain.objective, rel=1e-9) == pytest.approx(cp.objective, rel=1e-9)
    assert r.bound <= r.objective + 1e-9 and verify_result(inst, r).ok
    if any(j.single_server for j in inst.jobs):
        assert "relaxation" in r.info and "relaxation" not in plain.info


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
def test_relax_and_repair_proves_n30_4x4():
    """Issue 12's n30-4x4: the aggregated relaxation with (P), repaired to single servers, is the
    optimum that the per-server model proves (406)."""
    inst = random_instance(30, n_servers=4, gpus_per_server=4, single_server=1.0, seed=10)
    r = solve_exact(inst, backend="highs", options=SolveOptions(time_limit=60, threads=1))
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(406.0)
    assert r.info["relaxation"]["repair"] == "optimal" and verify_result(inst, r).ok


@pytest.mark.filterwarnings("ignore::optsched.exceptions.SolverLimitWarning")
def test_relax_and_repair_falls_back_when_the_relaxation_cannot_be_repaired():
    """Two 3-GPU single-server jobs, servers of 4 and 2 GPUs: the relaxation runs both at once
    (6 <= 6 GPUs, objective 2), no server assignment exists, so the per-server model decides:
    one after the other (objective 3), bound never above it."""
    from optsched.core.instance import Instance
    from optsched.core.job import Job

    jobs = [Job(i, work=1, gpus=3, arrival=0, weight=1, single_server=True) for i in range(2)]
    inst = Instance(Cluster([{"gpus": 4}, {"gpus": 2}]), jobs, name="unrepairable")
    r = solve_exact(inst, backend="highs", options=OPT, initial=None)
    rel = r.info["relaxation"]
    assert rel["objective"] == pytest.approx(2.0) and rel["repair"] == "infeasible"
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(3.0 * inst.slot)
    assert r.bound <= r.objective + 1e-9 and verify_result(inst, r).ok
