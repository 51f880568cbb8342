"""The strengthening rows of the rarddls MILP (formulations/rarddls.md#milp-cuts) are valid: every replayed
schedule that ends by the horizon satisfies every row of the built model (after the relabelling the symmetry
rows allow), the dual-feasible functions are dual feasible, the SGS heuristic gives verified schedules, and the
optimum is unchanged on instances with identical jobs and on those the lower bound alone settles."""

from __future__ import annotations

import itertools

import pyomo.environ as pyo
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from optsched.rarddls import RarInstance, build_schedule, replay
from optsched.rarddls.exact import _fits, enumerate_optimum, lower_bound, sgs_schedule, solve_exact
from optsched.rarddls.formulation import _dffs, build_milp, patterns, set_start
from optsched.rarddls.generate import random_instance
from optsched.solvers import SolveOptions
from optsched.verify import verify, verify_result
from tests.rarddls.strategies import small_instances, what_if_replay

OPTS = SolveOptions(time_limit=20, threads=1)


def violated_rows(model, tol=1e-6):
    bad = []
    for c in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(c.body)
        lo = None if c.lower is None else pyo.value(c.lower)
        up = None if c.upper is None else pyo.value(c.upper)
        if (lo is not None and body < lo - tol) or (up is not None and body > up + tol):
            bad.append((c.name, lo, body, up))
    return bad


def with_twins(instance: RarInstance, copies: int) -> RarInstance:
    """Job 0 repeated ``copies`` more times (new ids): identical jobs."""
    j0 = instance.jobs[0]
    extra = [
        j0.__class__(f"twin{k}", j0.gpus, j0.iterations, j0.grad_size, j0.compute, j0.rho_hat) for k in range(copies)
    ]
    return instance.replace(jobs=(*instance.jobs, *extra))


@st.composite
def schedules(draw, max_jobs=4):
    caps = draw(st.sampled_from([[2, 2], [2, 3], [4, 4], [2, 2, 2], [4, 2], [3, 3, 3]]))
    inst = draw(small_instances(max_jobs=max_jobs, caps=caps))
    if draw(st.booleans()):
        inst = with_twins(inst, draw(st.integers(1, 2)))
    n = inst.n_jobs
    pls = [draw(st.sampled_from(patterns(inst, j))) for j in range(n)]
    pls = [{s: y for s, y in enumerate(p) if y > 0} for p in pls]
    starts = [draw(st.integers(0, 6)) for _ in range(n)]
    starts = [a - min(starts) for a in starts]
    return inst, starts, pls


@settings(max_examples=60, deadline=None)
@given(schedules(), st.integers(0, 2))
def test_every_replayed_schedule_satisfies_every_row(sched, extra):
    inst, starts, pls = sched
    comp = what_if_replay(inst, starts, pls)  # random decisions, filtered by _fits below
    assume(_fits(inst, starts, pls, comp, range(inst.n_jobs)))
    model = build_milp(inst, horizon=max(comp) + extra)
    set_start(model, inst, starts, pls)
    assert not violated_rows(model)
    assert pyo.value(model.cmax) == max(comp)


@settings(max_examples=15, deadline=None)
@given(small_instances(max_jobs=5), st.integers(0, 50))
def test_sgs_schedules_are_feasible_and_satisfy_every_row(inst, seed):
    ms, starts, pls = sgs_schedule(inst, n_orders=3, seed=seed)
    sched = build_schedule(inst, starts, pls)
    assert verify(inst, sched).ok
    assert replay(inst, starts, pls).makespan == ms
    assert ms >= lower_bound(inst)
    model = build_milp(inst, horizon=ms)
    set_start(model, inst, starts, pls)
    assert not violated_rows(model)


def test_dual_feasible_functions():
    for cap in range(1, 11):
        fs = _dffs(cap)
        for f in fs:
            assert len(f) == cap + 1 and f[0] == 0 and f[cap] == cap
            assert f != tuple(range(cap + 1))
            # brute force: every multiset of sizes 1..cap with sum <= cap
            for r in range(1, cap + 1):
                for items in itertools.combinations_with_replacement(range(1, cap + 1), r):
                    if sum(items) <= cap:
                        assert sum(f[x] for x in items) <= cap, (cap, f, items)
    assert (0, 0, 2, 4, 4) in _dffs(4)  # a 3-GPU piece blocks a 4-GPU server for all but 1-GPU pieces
    assert (0, 0, 3, 3) in _dffs(3)


def test_identical_jobs_keep_the_optimum():
    for seed in (2, 5):
        inst = with_twins(random_instance(2, gpus_per_server=[2, 2], seed=seed, max_iterations=12), 1)
        m = build_milp(inst, horizon=10)
        assert len(m.TWINS) == 1
        r = solve_exact(inst, options=OPTS)
        best, _, _ = enumerate_optimum(inst)
        assert r.optimal and r.objective == best
        assert verify_result(inst, r).ok


def test_symmetry_job_breaks_the_server_swap():
    # on 2 equal servers a job with odd G_j has no swap-invariant pattern: it is the one restricted
    inst = random_instance(8, gpus_per_server=[4, 4], seed=7)
    m = build_milp(inst, horizon=14)
    assert inst.jobs[m.sym_job].gpus % 2 == 1
    assert all(m.pats[j][q][0] < m.pats[j][q][1] for j, q in m.SYM)


def test_incumbent_at_the_lower_bound_needs_no_solve():
    inst = random_instance(1, gpus_per_server=[2, 2], seed=3)
    r = solve_exact(inst, options=OPTS)
    assert r.optimal and r.info["n_vars"] == 0
    assert r.objective == lower_bound(inst)
    assert verify_result(inst, r).ok


def test_horizon_below_the_optimum_is_infeasible():
    inst = random_instance(3, gpus_per_server=[2, 2], seed=11)
    best, _, _ = enumerate_optimum(inst)
    r = solve_exact(inst, options=OPTS, horizon=best - 1)
    assert r.objective is None and not r.optimal


@settings(max_examples=8, deadline=None)
@given(small_instances(max_jobs=3, caps=[2, 2]))
def test_cpsat_backend_agrees_with_enumeration(instance):
    best, _, _ = enumerate_optimum(instance)
    r = solve_exact(instance, backend="cpsat", options=OPTS)
    assert r.optimal and r.objective == best
    assert verify_result(instance, r).ok


@settings(max_examples=10, deadline=None)
@given(schedules(max_jobs=3))
def test_cpsat_translation_accepts_every_replayed_schedule(sched):
    from ortools.sat.python import cp_model

    from optsched.rarddls.formulation import milp_to_cpsat

    inst, starts, pls = sched
    comp = what_if_replay(inst, starts, pls)  # random decisions, filtered by _fits below
    assume(_fits(inst, starts, pls, comp, range(inst.n_jobs)))
    model = build_milp(inst, horizon=max(comp))
    set_start(model, inst, starts, pls)
    cm, var = milp_to_cpsat(model)
    for v in model.component_data_objects(pyo.Var):
        cm.add(var[v] == int(round(v.value)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 10
    assert solver.solve(cm) == cp_model.OPTIMAL
    assert solver.objective_value == max(comp)
