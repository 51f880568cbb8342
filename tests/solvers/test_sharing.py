"""Incumbents shared during a portfolio run (optsched.solvers.sharing): CP-SAT publishes its
improving schedules, HiGHS takes them mid-solve through its user-solution callback; results stay
certified and a member ending early hangs nothing."""

from __future__ import annotations

import dataclasses
import math
import multiprocessing as mp
import queue
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

from optsched.core.objectives import objective_value
from optsched.core.result import Status
from optsched.exceptions import SolverLimitWarning
from optsched.rigid import random_instance, solve_exact
from optsched.rigid.decode import decode_exact
from optsched.rigid.exact import OBJECTIVE, best_heuristic, build_exact
from optsched.solvers import SolveOptions, SolveResult, members, sharing, solve_cpsat, solve_pyomo
from optsched.solvers.exact import run_exact
from optsched.solvers.portfolio import plan_backend
from optsched.verify import verify, verify_result
from tests.strategies import rigid_instances

fork_only = pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs the fork start method")


@pytest.fixture(autouse=True)
def _no_sharing_left():
    sharing.reset()
    yield
    sharing.reset()


def _value(inst, sched):
    return objective_value(inst, sched, OBJECTIVE)


def _inst():
    # HiGHS needs a branch and bound here (not solved by presolve): its callback is called
    return random_instance(14, n_servers=2, gpus_per_server=4, single_server=0.0, seed=3)


def test_highs_takes_a_shared_incumbent_mid_solve():
    """In one process, deterministic: the optimum (from CP-SAT) waits in the inbox; HiGHS,
    without a MIP start, is handed it at its first user-solution call and its incumbent is that
    value at the next call."""
    inst = _inst()
    opt = SolveOptions(time_limit=20, threads=1, mip_abs_gap=0.999)
    best = solve_exact(inst, backend="cpsat", options=opt)
    assert best.status == Status.OPTIMAL
    em = build_exact(inst, "highs", opt)
    inbox: queue.Queue = queue.Queue()
    inbox.put((best.schedule, best.objective))
    sharing.install(inbox=inbox)
    with sharing.register(em.model, em.warm_start, scale=em.scale, offset=em.offset):
        sr = solve_pyomo(em.model, "highs", opt)
    s = sharing.stats()
    assert s["received"] == 1 and s["given"] == 1 and s["taken"] == 1 and s["failed"] == 0
    assert sr.status == Status.OPTIMAL
    assert em.offset + em.scale * sr.objective == pytest.approx(best.objective, rel=1e-9)
    assert not verify(inst, decode_exact(inst, em, sr)).violations


def test_highs_without_registration_or_inbox_is_untouched():
    inst = _inst()
    em = build_exact(inst, "highs", SolveOptions())
    inbox: queue.Queue = queue.Queue()
    inbox.put((best_heuristic(inst), 1.0))  # an absurd objective: would be given if read
    sharing.install(inbox=inbox)
    solve_pyomo(em.model, "highs", SolveOptions(time_limit=20, threads=1, mip_abs_gap=0.999))  # not registered
    assert sharing.stats()["received"] == 0 and not sharing.takes(em.model)


def test_a_schedule_the_model_cannot_take_is_counted_not_raised():
    """A broken mapping (or a schedule of another instance) never stops HiGHS."""
    inst = _inst()
    opt = SolveOptions(time_limit=20, threads=1, mip_abs_gap=0.999)
    em = build_exact(inst, "highs", opt)
    inbox: queue.Queue = queue.Queue()
    inbox.put(("not a schedule", 1.0))
    sharing.install(inbox=inbox)

    def bad(_s):
        raise ValueError("cannot map")

    with sharing.register(em.model, bad, scale=em.scale, offset=em.offset):
        sr = solve_pyomo(em.model, "highs", opt)
    assert sr.status == Status.OPTIMAL
    assert sharing.stats()["failed"] == 1 and sharing.stats()["given"] == 0


def test_cpsat_publishes_strictly_improving_decoded_schedules():
    inst = _inst()
    em = build_exact(inst, "cpsat", SolveOptions())
    out: queue.Queue = queue.Queue()

    def decode(cb):
        sr = SolveResult(Status.FEASIBLE, float(cb.objective_value), None, 0.0, "cpsat", "", raw=cb)
        sched = decode_exact(inst, em, sr)
        return sched, _value(inst, sched)

    start = _value(inst, best_heuristic(inst))
    sharing.install(outboxes=(out,), publish={id(em.model): decode}, start=start)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        solve_cpsat(em.model, SolveOptions(time_limit=10, threads=1))
    got = []
    while not out.empty():
        got.append(out.get_nowait())
    assert len(got) == sharing.stats()["sent"] and sharing.stats()["failed"] == 0
    objs = [o for _, o in got]
    assert all(o < start for o in objs) and objs == sorted(objs, reverse=True) and len(set(objs)) == len(objs)
    for sched, o in got:  # each is a feasible schedule with the value sent
        assert not verify(inst, sched).violations
        assert _value(inst, sched) == pytest.approx(o, rel=1e-12)


def _rigid_members(inst, *, highs_waits: bool):
    """The real rigid members, without the probe (both are forked at once); CP-SAT's own status
    made FEASIBLE with no bound (so the run waits for HiGHS); with ``highs_waits`` HiGHS starts
    only once a shared incumbent has arrived: deterministic, whatever the load."""

    def build(i, b, o):
        em = build_exact(i, b, o)
        if b == "cpsat":

            def solve(e, opts):
                sr = solve_cpsat(e.model, opts)
                return dataclasses.replace(sr, status=Status.FEASIBLE, bound=None)

            return dataclasses.replace(em, probe=None, solve=solve)

        def solve_h(e, opts):
            if highs_waits:
                import time

                for _ in range(6000):  # a hang guard (60 s), no timing is asserted
                    if sharing._poll() is not None:
                        break
                    time.sleep(0.01)
            return solve_pyomo(e.model, "highs", opts)

        return dataclasses.replace(em, solve=solve_h)

    return build


def _run(inst, build, share=True):
    old = members.SHARE_INCUMBENTS
    members.SHARE_INCUMBENTS = share
    evaluate = lambda s: _value(inst, s)  # noqa: E731
    plan = plan_backend(
        "portfolio",
        build=build,
        decode=lambda em, sr: decode_exact(inst, em, sr),
        own=("cpsat",),
        evaluate=evaluate,
        method="fork",
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SolverLimitWarning)
            return run_exact(
                inst,
                build=plan.build,
                decode=plan.decode,
                evaluate=evaluate,
                backend=plan.backend,
                algorithm="rigid-exact[portfolio]",
                objective_name=OBJECTIVE,
                options=SolveOptions(time_limit=20, threads=1, mip_abs_gap=0.999),
                own_backends=plan.own_backends,
            )
    finally:
        members.SHARE_INCUMBENTS = old


@fork_only
def test_portfolio_cpsat_incumbent_reaches_highs_and_is_counted():
    inst = _inst()
    ref = solve_exact(inst, backend="highs", options=SolveOptions(time_limit=20, threads=1))
    r = _run(inst, _rigid_members(inst, highs_waits=True))
    rows = r.info["portfolio"]
    assert rows["cpsat"]["incumbents_sent"] >= 1
    assert rows["highs"]["incumbents_received"] >= 1 and rows["highs"]["incumbents_given"] >= 1
    assert r.info["portfolio_sharing"]["sent"] == {"cpsat": rows["cpsat"]["incumbents_sent"]}
    assert r.info["portfolio_sharing"]["taken_by"] == {"highs": rows["highs"]["incumbents_taken"]}
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(ref.objective, rel=1e-9)
    assert r.info["proved_by"] == "highs" and verify_result(inst, r).ok


@fork_only
def test_sharing_off_reports_nothing():
    inst = _inst()
    r = _run(inst, _rigid_members(inst, highs_waits=False), share=False)
    assert "portfolio_sharing" not in r.info
    assert all("incumbents_sent" not in row for row in r.info["portfolio"].values())


@fork_only
def test_no_hang_when_the_taking_member_ends_early():
    """HiGHS fails at once; CP-SAT keeps publishing into a queue nobody reads: the run ends,
    CP-SAT's result is used, its process exits by itself."""
    inst = _inst()

    def build(i, b, o):
        em = build_exact(i, b, o)
        if b == "cpsat":
            return dataclasses.replace(em, probe=None, solve=lambda e, opts: solve_cpsat(e.model, opts))

        def boom(e, opts):
            raise RuntimeError("boom")

        return dataclasses.replace(em, solve=boom)

    r = _run(inst, build)
    rows = r.info["portfolio"]
    assert rows["highs"]["status"] == "error" and rows["cpsat"]["status"] == "optimal"
    assert r.status == Status.OPTIMAL and r.info["winner"] == "cpsat"


@fork_only
def test_a_publisher_with_a_full_unread_channel_exits():
    """More than a pipe's buffer of incumbents, never read: the writer still exits (exit code 0)."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    m = members.Member("cpsat", build_exact(_inst(), "cpsat", SolveOptions()))

    def child():
        share = {"inbox": None, "outboxes": (q,), "publish": {}, "maximize": False, "start": None, "role": "sends"}
        members._install_sharing(m, share)
        for k in range(400):
            sharing._send(["x" * 1000, k], float(-k))
        assert sharing.stats()["sent"] == 400

    p = ctx.Process(target=child, daemon=True)
    p.start()
    p.join(timeout=60)  # a hang guard; no timing is asserted
    alive = p.is_alive()
    if alive:  # pragma: no cover - the failure case
        p.kill()
        p.join()
    q.cancel_join_thread()
    q.close()
    assert not alive and p.exitcode == 0


@fork_only
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(rigid_instances(max_jobs=7, max_work=3))
def test_sharing_leaves_the_optimum_of_highs_alone(inst):
    """Random rigid instances, both members forked with sharing on: the certified optimum of
    HiGHS alone."""
    ref = solve_exact(inst, backend="highs", options=SolveOptions(time_limit=20, threads=1))
    r = _run(inst, _rigid_members(inst, highs_waits=False))
    assert ref.status == r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(ref.objective, rel=1e-9)
    assert r.bound <= r.objective + 1e-9 and verify_result(inst, r).ok


def test_objective_shift_bounds_every_presolve_offset():
    s = sharing.objective_shift([5.0, -2.0, 1.5, 0.0], [0.0, 0.0, -2.0, None], [1.0, 4.0, 3.0, None])
    assert s > 5 * 1 + 2 * 4 + 1.5 * 3 and s == 2.0 ** round(math.log2(s))
    assert sharing.objective_shift([1.0, 2.0], [0.0, 0.0], [1.0, None]) == 0.0  # a cost on an unbounded column
    em = build_exact(_inst(), "highs", SolveOptions())
    assert sharing.objective_shift_of(em.model) > 0


def test_the_shifted_objective_is_restored_and_reported_unshifted():
    import pyomo.environ as pyo

    inst = _inst()
    opt = SolveOptions(time_limit=20, threads=1, mip_abs_gap=0.999)
    em = build_exact(inst, "highs", opt)
    objective = next(em.model.component_data_objects(pyo.Objective, active=True))
    before = objective.expr
    sharing.install(inbox=queue.Queue())
    with sharing.register(em.model, em.warm_start, scale=em.scale, offset=em.offset):
        sr = solve_pyomo(em.model, "highs", opt)
    assert objective.expr is before
    ref = solve_pyomo(build_exact(inst, "highs", opt).model, "highs", opt)
    assert sr.objective == pytest.approx(ref.objective, rel=1e-12) and sr.bound == pytest.approx(ref.bound, rel=1e-12)
    assert pyo.value(objective) == pytest.approx(sr.objective, rel=1e-12)


class _Late:
    """An inbox that has one schedule from its k-th poll on (HiGHS is deterministic: the k-th call
    is always at the same point of its search)."""

    def __init__(self, item, k):
        self.item, self.k, self.polls = item, k, 0

    def get_nowait(self):
        self.polls += 1
        if self.polls < self.k or self.item is None:
            raise queue.Empty
        item, self.item = self.item, None
        return item


@pytest.mark.slow
@pytest.mark.parametrize("shift", [True, False])
def test_an_improving_incumbent_is_not_dropped_after_presolve(monkeypatch, shift):
    """Issue 12's n50-4x8, the aggregated relaxation (where HiGHS's presolve leaves an objective
    offset): a CP-SAT schedule of value 616, handed over while HiGHS's incumbent is worse, is
    dropped silently by HiGHS 1.14 unless the objective is shifted (sharing.objective_shift)."""
    import dataclasses as dc

    from ortools.sat.python import cp_model

    from optsched.rigid.decode import schedule_from_cpsat, warm_start_exact
    from optsched.rigid.formulation import (
        TimeIndexedVariables,
        add_packing_rows,
        build_interval_cpsat,
        build_time_indexed,
    )
    from optsched.solvers.model import ExactModel

    inst = random_instance(50, n_servers=4, gpus_per_server=8, single_server=1.0, seed=12)
    cp, cv = build_interval_cpsat(inst)
    sols = []

    class Collect(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            sols.append(schedule_from_cpsat(inst, self, cv))

    s = cp_model.CpSolver()
    s.parameters.num_workers, s.parameters.random_seed, s.parameters.max_deterministic_time = 1, 0, 5.0
    s.solve(cp, Collect())
    target = min((x for x in sols if 602 < _value(inst, x) / inst.slot < 620), key=lambda x: _value(inst, x))
    span = inst.replace(jobs=[dc.replace(j, single_server=False) for j in inst.jobs])
    agg = build_time_indexed(span)
    add_packing_rows(agg, [j.single_server for j in inst.jobs])
    agg_em = ExactModel(agg, TimeIndexedVariables.of(agg))
    warm_start_exact(span, agg_em, best_heuristic(inst))
    if not shift:
        monkeypatch.setattr(sharing, "objective_shift", lambda h: 0.0)
    sharing.install(inbox=_Late((target, _value(inst, target)), 5))
    with sharing.register(agg, lambda x: warm_start_exact(span, agg_em, x), scale=inst.slot):
        sr = solve_pyomo(agg, "highs", SolveOptions(time_limit=30, threads=1, mip_abs_gap=0.999), warm_start=True)
    st = sharing.stats()
    assert st["given"] == 1 and sr.status == Status.OPTIMAL
    assert st["taken"] == (1 if shift else 0)
