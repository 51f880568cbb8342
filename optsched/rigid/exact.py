"""Exact solves of the rigid-job problem: HiGHS time-indexed MILP or CP-SAT."""

from __future__ import annotations

import math
import time
from dataclasses import replace

from optsched.core.instance import Instance
from optsched.core.objectives import objective_value
from optsched.core.registry import check_kind, register_algorithm
from optsched.core.result import Result, Status
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidOptionError, InvalidScheduleError, TimeLimitReached
from optsched.rigid.bounds import area_bound
from optsched.rigid.formulation import (
    IntervalVariables,
    ModelSize,
    TimeIndexedVariables,
    add_packing_rows,
    build_interval_cpsat,
    build_time_indexed,
    slot_data,
    time_indexed_size,
)
from optsched.rigid.sgs import decode_placements
from optsched.solvers import SolveOptions, interrupt, progress
from optsched.solvers.exact import (
    LP_MAX_SECONDS,
    ExactModel,
    cpsat_probe,
    lp_relaxation_value,
    run_exact,
    solve_cpsat_staged,
)
from optsched.solvers.portfolio import auto_time_indexed, plan_backend

__all__ = [
    "solve_exact",
    "schedule_from_time_indexed",
    "schedule_from_cpsat",
    "build_exact",
    "decode_exact",
    "warm_start_exact",
    "best_heuristic",
    "lp_relaxation_bound",
]

OBJECTIVE = "total_weighted_completion_time"


def schedule_from_time_indexed(instance: Instance, model, variables: TimeIndexedVariables | None = None) -> Schedule:
    """Read start slots (and per-server splits, when modelled) from a solved time-indexed model."""
    import pyomo.environ as pyo

    v = variables if variables is not None else TimeIndexedVariables.of(model)
    d, s = v.data, instance.slot
    jobs = instance.jobs
    start_slot = {}
    for (j, t), x in v.x.items():
        if x.value is not None and x.value > 0.5:
            start_slot[j] = t
    if len(start_slot) != len(jobs):
        raise InvalidOptionError("The model has no complete solution loaded (some job has no start).")
    if not d.mixed:
        return decode_placements(instance, {jobs[j].id: start_slot[j] * s for j in start_slot})
    sched = Schedule()
    for j, t in start_slot.items():
        pl: dict[int, int] = {}
        for srv in range(len(d.G)):
            if d.single[j]:
                if (j, srv, t) in v.y and pyo.value(v.y[j, srv, t]) > 0.5:
                    pl[srv] = d.g[j]
            else:
                k = int(round(pyo.value(v.w[j, srv, t])))
                if k > 0:
                    pl[srv] = k
        sched.add(jobs[j].id, t * s, t * s + jobs[j].work, pl)
    return sched


def schedule_from_cpsat(instance: Instance, solver, variables: IntervalVariables) -> Schedule:
    """Read starts and placements from a solved :func:`build_interval_cpsat` model."""
    s = instance.slot
    sched = Schedule()
    for j, job in enumerate(instance.jobs):
        t = solver.value(variables.start[j])
        pl = {}
        for srv, a in enumerate(variables.alloc[j]):
            k = int(solver.value(a)) if not isinstance(a, int) else a
            if k > 0:
                pl[srv] = k
        sched.add(job.id, t * s, t * s + job.work, pl)
    return sched


def _integral_weights(instance: Instance) -> bool:
    return all(abs(j.weight - round(j.weight)) < 1e-12 for j in getattr(instance, "jobs", ()))


#: Seconds per non-zero to build a time-indexed Pyomo model, and to hand it to HiGHS (Pyomo's
#: ``set_instance``) per non-zero and per row: measured on the 200-job instances of issue 28
#: (``random_instance(200, n_servers=4, gpus_per_server=8, seed=0)``, single_server 0 and 1; 0.76
#: and 2.9 million non-zeros; build 2.7 and 9.1 s, hand-over 2.3 and 21.6 s; load 0.1).
BUILD_SECONDS_PER_NONZERO = 3.5e-6
HANDOVER_SECONDS_PER_NONZERO = 3.0e-6
HANDOVER_SECONDS_PER_ROW = 9.0e-5
#: Seconds per non-zero HiGHS's MIP takes before its branch and bound reports a bound (presolve,
#: root set-up, root LP): on the aggregated 200-job model (0.71 million non-zeros) presolve alone
#: took 15 s and, without presolve, no LP iteration had run after 17 s; its time limit is not
#: checked in between. The MILP is solved only when this fits; otherwise its LP relaxation
#: (presolve off: simplex checks the deadline) gives the bound.
MIP_SETUP_SECONDS_PER_NONZERO = 2.5e-5
#: A time-indexed model is built for its LP bound only when building it and handing it over are
#: expected to take at most this share of the time left; a MILP only when that plus its set-up
#: take at most :data:`MIP_SHARE` of it (the rest is for the search).
BUILD_SHARE = 0.5
MIP_SHARE = 0.8
#: HiGHS options of the LP bounds: presolve does not reduce the time-indexed LP ("Not reduced") and
#: took 17 s of 23 on the 200-job one, without checking the time limit; simplex alone took 5.6 s.
LP_OPTIONS = {"presolve": "off"}


def model_seconds(size: ModelSize) -> tuple[float, float]:
    """Estimated seconds to build a time-indexed model of ``size`` and to hand it to HiGHS
    (at the speed measured for :data:`BUILD_SECONDS_PER_NONZERO`; a loaded machine is slower)."""
    return (
        BUILD_SECONDS_PER_NONZERO * size.nonzeros,
        HANDOVER_SECONDS_PER_NONZERO * size.nonzeros + HANDOVER_SECONDS_PER_ROW * size.rows,
    )


def mip_seconds(size: ModelSize) -> float:
    """Estimated seconds from nothing to a MILP search that reports a bound: build, hand-over and
    :data:`MIP_SETUP_SECONDS_PER_NONZERO`."""
    return sum(model_seconds(size)) + MIP_SETUP_SECONDS_PER_NONZERO * size.nonzeros


def lp_relaxation_bound(
    instance: Instance,
    *,
    horizon_slots: int | None = None,
    time_limit: float | None = LP_MAX_SECONDS,
    deadline: float | None = None,
) -> float | None:
    """The LP relaxation value of the time-indexed model (T1), (T2), (T5) in the kind's units
    (seconds times weights): a lower bound on the optimum.

    It is solved on the aggregated model (every job may span servers): that model is a relaxation
    of the per-server one ((T4) summed over the servers gives (T2)), so its LP value is a valid
    bound also with single-server jobs; it equals the per-server model's LP value when every
    server fits every job (measured: the same value on n30-4x4, n40-4x4, n50-4x8, 6-27x faster).
    ``None`` if HiGHS does not prove the LP optimal within ``time_limit`` seconds, all of it
    (building the model included) before ``deadline`` (a ``time.monotonic()`` value), or if the
    model is not expected to be built and handed to HiGHS in half that time (:func:`model_seconds`).

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
    >>> round(lp_relaxation_bound(inst), 6) <= 19.0
    True
    """
    import dataclasses

    check_kind(instance, "rigid", "lp_relaxation_bound")
    ends = [deadline, None if time_limit is None else time.monotonic() + float(time_limit)]
    end = min((x for x in ends if x is not None), default=None)
    spanning = instance.replace(jobs=[dataclasses.replace(j, single_server=False) for j in instance.jobs])
    if end is not None:
        size = time_indexed_size(slot_data(spanning, horizon_slots), aggregated=True)
        if sum(model_seconds(size)) > BUILD_SHARE * (end - time.monotonic()):
            return None
    try:
        model = build_time_indexed(spanning, horizon_slots=horizon_slots, deadline=end)
    except TimeLimitReached:
        return None
    lp = lp_relaxation_value(
        model, None if end is None else max(0.01, end - time.monotonic()), deadline=end, solver_options=LP_OPTIONS
    )
    return None if lp is None else lp * instance.slot


def build_exact(
    instance: Instance,
    backend: str,
    options: SolveOptions,
    *,
    horizon_slots: int | None = None,
    max_size: int | None = None,
    lower_bound: float | None = None,
) -> ExactModel:
    """The model :func:`solve_exact` solves: (C1)-(C4) with the energy rows (E) for ``cpsat``,
    else (T1)-(T5).

    Both minimise total weighted completion time in slots (``scale`` = slot length); with
    integer weights that is an integer, so ``step`` = one slot length (see
    :mod:`optsched.solvers.exact`). For ``cpsat`` the solve is staged
    (:func:`optsched.solvers.exact.solve_cpsat_staged`): a short CP-SAT probe without presolve
    (what proves small instances in milliseconds); only if it does not prove the optimum, the LP
    relaxation of the time-indexed model (:func:`lp_relaxation_bound`, at most a quarter of the
    time limit, taken from CP-SAT's): ``info["lp_bound"]`` (seconds, ``None`` when the probe
    proved), added to the CP-SAT model as the row ``objective_bound`` (rounded up to a whole
    slot) and never above the reported bound; then CP-SAT with presolve for the rest.
    ``lower_bound`` (a valid bound in the kind's units, e.g. :func:`~optsched.rigid.bounds.area_bound`)
    becomes the CP-SAT row ``area_bound`` (rounded up to a whole slot): with many jobs the energy
    rows are thinned (:data:`~optsched.rigid.formulation.ENERGY_MAX_NONZEROS`) and this row keeps
    their bound.

    The time-indexed model is built only when it is expected to be built, handed to the solver
    and set up in the time left (:func:`_plan_time_indexed`, ``formulations/rigid.md#time-limit``):
    otherwise only its relaxation, or only the LP bound, is solved (``em.model`` is ``None``), or
    :class:`~optsched.exceptions.TimeLimitReached` ends the call with the warm start."""
    step = instance.slot if _integral_weights(instance) else None
    handles: IntervalVariables | TimeIndexedVariables
    info: dict = {}
    solve = probe = None
    rstate: dict = {}  # the warm start, for the relaxation of the time-indexed back end
    if backend == "cpsat":
        model, handles = build_interval_cpsat(
            instance, horizon_slots=horizon_slots, max_size=max_size, deadline=options.deadline
        )
        info.update(energy_rows=sum(1 for c in model.proto.constraints if c.name == "energy"))
        if lower_bound is not None and math.isfinite(lower_bound):
            lb = lower_bound / instance.slot
            model.add(handles.objective >= math.ceil(lb - 1e-6 * max(1.0, abs(lb)))).with_name("area_bound")
        cp_handles = handles

        def lp_row(seconds: float) -> tuple[float | None, dict]:
            t0 = time.perf_counter()
            lp = lp_relaxation_bound(
                instance, horizon_slots=horizon_slots, time_limit=seconds, deadline=options.deadline
            )
            row = None if lp is None else math.ceil(lp / instance.slot - 1e-6 * max(1.0, abs(lp / instance.slot)))
            if row is not None:
                model.add(cp_handles.objective >= row).with_name("objective_bound")
            return row, {"lp_bound": lp, "lp_row": row, "lp_time": time.perf_counter() - t0}

        state: dict = {}  # the probe's result, shared by probe and solve (also across a fork)
        solve = lambda em, o: solve_cpsat_staged(em, o, lp_row, state)  # noqa: E731
        probe = lambda em, o: cpsat_probe(em, o, state)  # noqa: E731
    else:
        d = slot_data(instance, horizon_slots)
        relax = d.mixed and _integral_weights(instance) and RELAX_SHARE > 0
        plan = _plan_time_indexed(d, backend, options, relax, info)
        model, handles = None, None  # type: ignore[assignment]
        if plan == "full":
            t0 = time.perf_counter()
            model = build_time_indexed(
                instance, horizon_slots=horizon_slots, max_size=max_size, deadline=options.deadline
            )
            rstate["speed"] = (time.perf_counter() - t0) / max(model_seconds(time_indexed_size(d))[0], 1e-3)
            handles = TimeIndexedVariables.of(model)
        if plan != "full" or relax:
            solve = lambda em, o: _solve_time_indexed(instance, em, o, backend, horizon_slots, rstate, plan)  # noqa: E731
    em = ExactModel(model, handles, scale=instance.slot, step=step, info=info, solve=solve, probe=probe)

    def warm_start(sched: Schedule) -> None:
        if em.model is not None:
            warm_start_exact(instance, em, sched)
        rstate["initial"] = sched

    return replace(em, warm_start=warm_start)


#: Share of the time limit that the aggregated relaxation of the time-indexed back end may take
#: (:func:`_solve_time_indexed`; 0 switches it off).
RELAX_SHARE = 0.5


def _plan_time_indexed(d, backend: str, options: SolveOptions, relax: bool, info: dict) -> str:
    """What the time-indexed back end builds and solves in the time left (size estimates, before
    any model is built; ``info["time_indexed_plan"]`` says why):

    ``"full"``
        The model (T1)-(T5) as a MILP (with single-server jobs after relax-and-repair).
    ``"relaxation"``
        With single-server jobs, only relax-and-repair: the per-server model does not fit.
    ``"lp"``
        No MILP fits: the LP relaxation of the aggregated model gives the bound; the schedule is
        the warm start.

    Raises :class:`TimeLimitReached` when not even the LP fits (the call ends with the warm
    start and the combinatorial bound)."""
    left = options.time_left()
    full = time_indexed_size(d)
    agg = time_indexed_size(d, aggregated=True) if d.mixed else full
    info["model_estimate"] = {
        "variables": full.variables,
        "rows": full.rows,
        "nonzeros": full.nonzeros,
        "milp_seconds": round(mip_seconds(full), 2),
    }
    if left is None:
        return "full"
    need_full = mip_seconds(full) + (mip_seconds(agg) if relax else 0.0)
    why = (
        f"{max(left, 0.0):.0f} s left; the time-indexed MILP ({full.nonzeros:,} non-zeros) needs about "
        f"{need_full:.0f} s"
    )
    if need_full <= MIP_SHARE * left:
        plan = "full"
    elif relax and mip_seconds(agg) <= MIP_SHARE * left:
        plan, why = "relaxation", why + f"; its relaxation about {mip_seconds(agg):.0f} s"
    elif sum(model_seconds(agg)) <= BUILD_SHARE * left:
        plan, why = "lp", why + f"; the LP relaxation about {sum(model_seconds(agg)):.0f} s to build and hand over"
    else:
        raise TimeLimitReached(why + f": not even its LP relaxation fits ({sum(model_seconds(agg)):.0f} s)")
    info["time_indexed_plan"] = f"{plan}: {why}"
    return plan


def _solve_time_indexed(
    instance: Instance,
    em: ExactModel,
    options: SolveOptions,
    backend: str,
    horizon_slots: int | None,
    state: dict,
    plan: str,
):
    """``ExactModel.solve`` of the time-indexed back end (``formulations/rigid.md#relax-and-repair``
    and ``#time-limit``), for the ``plan`` of :func:`_plan_time_indexed`.

    1. **Relax** (single-server jobs): the aggregated model (T1), (T2), (T5), every job allowed to
       span servers, is a relaxation of the per-server one ((T4) summed over the servers gives
       (T2)); it is M times smaller. Solved by the same MILP solver for at most
       :data:`RELAX_SHARE` of the time limit (all of it under plan ``"relaxation"``),
       warm-started with the initial schedule: its bound (its optimum, when proven) is a valid
       bound of the per-server model. When, once built, the MILP no longer fits in the time left
       (the measured build speed rescales the estimates), its LP relaxation is solved instead.
    2. **Repair**: its starts fixed, CP-SAT looks for a server for every job (a packing per
       slot). Found: a schedule of the original instance with the same completion times, so with
       the relaxation's objective; if that was proven optimal for the relaxation, it is optimal.
    3. Otherwise (plan ``"full"``) the per-server model (T1)-(T5) for the rest of the time,
       warm-started with the better of the initial and the repaired schedule; its bound is
       raised to the relaxation's.

    Plan ``"lp"``: only the LP relaxation of the aggregated model (its bound; no schedule).
    """
    import dataclasses

    from optsched.exceptions import ModelTooLargeError
    from optsched.solvers import SolveResult, sharing, solve_cpsat
    from optsched.solvers.pyomo_backend import solve_pyomo

    t0 = time.perf_counter()
    info: dict = em.info  # type: ignore[assignment]  # a dict: run_exact copies it after the solve
    tl = options.time_limit
    full = em.model is not None

    def left() -> float | None:
        lims = [options.limit(), None if tl is None else float(tl) - (time.perf_counter() - t0)]
        lim = min((x for x in lims if x is not None), default=None)
        return None if lim is None else max(0.0, lim)

    span = instance.replace(jobs=[dataclasses.replace(j, single_server=False) for j in instance.jobs])
    d_span = slot_data(span, horizon_slots)
    size = time_indexed_size(d_span)
    initial = state.get("initial")
    rel: dict = {}
    info["relaxation"] = rel
    repaired = None
    agg_bound = None
    agg = None
    lim = left()
    # the relaxation's share: half with the per-server model to follow, else all but the repair's time
    budget = None if lim is None else (RELAX_SHARE if full else 0.85 if plan == "relaxation" else 0.95) * lim
    end = None if budget is None else time.monotonic() + budget
    progress.phase(f"relaxation: building the aggregated model ({backend})")
    try:
        agg = build_time_indexed(span, horizon_slots=horizon_slots, deadline=end)
        state.setdefault("speed", (time.perf_counter() - t0) / max(model_seconds(size)[0], 1e-3))
    except (ModelTooLargeError, TimeLimitReached) as e:
        rel["skipped"] = str(e)
    speed = max(1.0, state.get("speed", 1.0))  # measured build time / estimate: > 1 on a loaded machine
    mip = plan != "lp" and (
        end is None or speed * (mip_seconds(size) - model_seconds(size)[0]) <= end - time.monotonic()
    )
    if agg is not None and not interrupt.requested() and not mip:
        rel["lp_only"] = True
        progress.phase("LP bound (highs)")
        lp = lp_relaxation_value(
            agg, None if end is None else max(0.01, end - time.monotonic()), deadline=end, solver_options=LP_OPTIONS
        )
        agg_bound = lp
        rel.update(status="lp" if lp is not None else "lp not solved in time", bound=lp)
    elif agg is not None and not interrupt.requested():
        rel["packing_rows"] = add_packing_rows(agg, [j.single_server for j in instance.jobs])
        agg_em = ExactModel(agg, TimeIndexedVariables.of(agg))
        if initial is not None:
            warm_start_exact(span, agg_em, initial)
        o1 = options if end is None else options.replace(time_limit=max(0.01, end - time.monotonic()))
        # in a portfolio, the other members' incumbents reach the relaxation too (a schedule of
        # the instance is one of the relaxation: the same mapping as the warm start)
        progress.phase(f"relaxation ({backend})")
        with (
            sharing.register(agg, lambda s: warm_start_exact(span, agg_em, s), scale=em.scale, offset=em.offset),
            progress.units(em.scale, em.offset, incumbents=False),  # its incumbents are not schedules
        ):
            sr1 = solve_pyomo(agg, backend, o1, warm_start=initial is not None)
        agg_bound = sr1.bound if sr1.bound is not None and math.isfinite(sr1.bound) else None
        rel.update(status=sr1.status.value, objective=sr1.objective, bound=agg_bound, seconds=round(sr1.runtime, 3))
        if sr1.has_solution and not interrupt.requested():
            v = agg_em.handles
            starts = {j: t for (j, t), x in v.x.items() if x.value is not None and x.value > 0.5}
            cp, cv = build_interval_cpsat(instance, horizon_slots=horizon_slots, energy=False)
            for j, t in starts.items():
                cp.add(cv.start[j] == t)
            lim = left()
            o_rep = SolveOptions(
                time_limit=lim if tl is None else max(0.01, min(lim or 0.0, max(1.0, 0.1 * float(tl)))),
                threads=1,
                deadline=options.deadline,
            )
            progress.phase("repair (cpsat)")
            sr_rep = solve_cpsat(cp, o_rep)
            rel["repair"] = sr_rep.status.value
            if sr_rep.has_solution and sr_rep.objective is not None:
                repaired = (float(sr_rep.objective), schedule_from_cpsat(instance, sr_rep.raw, cv))
                progress.report(incumbent=repaired[0])
                if sr1.status == Status.OPTIMAL and agg_bound is not None and repaired[0] - agg_bound < 1 - 1e-6:
                    return SolveResult(
                        Status.OPTIMAL,
                        repaired[0],
                        agg_bound,
                        time.perf_counter() - t0,
                        sr1.solver,
                        sr1.solver_version,
                        message="the relaxation's optimum, repaired to single servers",
                        raw={"schedule": repaired[1]},
                    )
    if agg_bound is not None:
        progress.report(bound=agg_bound)
    sr2 = None
    lim = left()
    if full and not interrupt.requested():
        fsize = time_indexed_size(em.handles.data)
        need = speed * (mip_seconds(fsize) - model_seconds(fsize)[0])
        if lim is not None and need > lim:
            info["model_skipped"] = (
                f"the per-server model was built, but handing it to {backend} and its MILP set-up would take "
                f"about {need:.0f} s; {lim:.0f} s were left"
            )
        else:
            warm = initial is not None
            init_obj = None if initial is None else objective_value(instance, initial, OBJECTIVE) / instance.slot
            if repaired is not None and (init_obj is None or repaired[0] < init_obj - 1e-9):
                warm_start_exact(instance, em, repaired[1])
                warm = True
            progress.phase(f"solving the per-server model ({backend})")
            o2 = options if tl is None or lim is None else options.replace(time_limit=max(0.01, lim))
            sr2 = solve_pyomo(em.model, backend, o2, warm_start=warm)
    if sr2 is None:  # the relaxation (and its repair) is all there is
        status = Status.INTERRUPTED if interrupt.requested() else Status.NO_SOLUTION
        why = info.get("model_skipped") or info.get("time_indexed_plan") or "no time left"
        sr2 = SolveResult(status, None, None, 0.0, backend, "", message="interrupted" if interrupt.requested() else why)
    bounds = [b for b in (sr2.bound, agg_bound) if b is not None and math.isfinite(b)]
    out = dataclasses.replace(sr2, bound=max(bounds) if bounds else None, runtime=time.perf_counter() - t0)
    if repaired is not None and (not sr2.has_solution or sr2.objective is None or repaired[0] < sr2.objective - 1e-9):
        status = Status.INTERRUPTED if interrupt.requested() else Status.FEASIBLE
        out = dataclasses.replace(out, status=status, objective=repaired[0], raw={"schedule": repaired[1]})
    return out


def _starts_of(instance: Instance, schedule: Schedule, T: int) -> list[tuple[int, dict[int, int]]]:
    """(start slot, placement) per job index; refuses what the model cannot represent."""
    out = []
    for job in instance.jobs:
        segs = schedule.segments(job.id)
        if len(segs) != 1:
            raise InvalidScheduleError(
                f"The initial schedule runs job {job.id!r} in {len(segs)} pieces; the exact "
                f"rigid models need one run per job."
            )
        t = segs[0].start / instance.slot
        if abs(t - round(t)) > 1e-9 or not 0 <= round(t) <= T - round(job.work / instance.slot):
            raise InvalidScheduleError(
                f"The initial schedule starts job {job.id!r} at {segs[0].start!r} s, not a "
                f"whole slot within the model's horizon of {T} slots of {instance.slot} s."
            )
        out.append((int(round(t)), {int(k): int(v) for k, v in segs[0].placement.items()}))
    return out


def warm_start_exact(instance: Instance, em: ExactModel, schedule: Schedule) -> None:
    """Install a feasible schedule as the start of a :func:`build_exact` model: CP-SAT hints on
    the starts (and the splits of spanning jobs), or a full assignment of x (and y/w) for HiGHS."""
    v = em.handles
    if isinstance(v, IntervalVariables):  # CP-SAT
        model = em.model
        model.clear_hints()
        for j, (t, pl) in enumerate(_starts_of(instance, schedule, v.data.T)):
            model.add_hint(v.start[j], t)
            if v.data.single[j]:
                for srv, b in v.on[j].items():
                    model.add_hint(b, pl.get(srv, 0) > 0)
            else:
                for srv, a in enumerate(v.alloc[j]):
                    model.add_hint(a, pl.get(srv, 0))
        # (CP-SAT may lose a hint in presolve and end worse; run_exact then returns the start)
        return
    d = v.data
    chosen = _starts_of(instance, schedule, d.T)
    for (j, t), x in v.x.items():
        x.value = 1.0 if chosen[j][0] == t else 0.0
    if d.mixed:
        for (j, srv, t), y in v.y.items():
            y.value = 1.0 if chosen[j][0] == t and chosen[j][1].get(srv, 0) > 0 else 0.0
        for (j, srv, t), w in v.w.items():
            w.value = float(chosen[j][1].get(srv, 0)) if chosen[j][0] == t else 0.0


#: Share of the time left that the warm start (:func:`best_heuristic`) may take in :func:`solve_exact`
#: (half: from a few thousand jobs on it is the schedule a short limit returns; smaller instances
#: take milliseconds), and the seconds it may always take (so that a call with little or no time left still has a
#: schedule when one is found that fast: the call may end up to this much after its deadline).
WARM_START_SHARE, WARM_START_MIN_SECONDS = 0.5, 0.5
#: The list-scheduling rules of the warm start, in the order they are run (FIFO first: usually the
#: fastest, so a short time limit still gets a schedule) ...
WARM_START_RULES = ("fifo", "wspt", "spt")
#: ... and the order in which equal objectives are preferred.
WARM_START_PREFERENCE = ("wspt", "fifo", "spt")


def best_heuristic(instance: Instance, *, deadline: float | None = None, info: dict | None = None) -> Schedule:
    """The best of the fast list-scheduling rules (WSPT, FIFO, SPT; among equal objectives the
    first of these): the default warm start.

    ``deadline`` (a ``time.monotonic()`` value): the rules run in the order of
    :data:`WARM_START_RULES`; one is started only when it is expected to end by then (it takes
    about as long as the slowest rule before it) and stopped when it does not; the best finished
    schedule is returned, and :class:`~optsched.exceptions.TimeLimitReached` when none finished.
    ``info`` (a dict) receives ``rules``, the rules that finished."""
    from optsched.rigid.heuristics import list_schedule

    done: dict[str, Result] = {}
    took = 0.0
    for rule in WARM_START_RULES:
        if deadline is not None and done and time.monotonic() + took > deadline:
            break
        t0 = time.monotonic()
        try:
            done[rule] = list_schedule(instance, rule=rule, deadline=deadline)
        except TimeLimitReached:
            break
        took = max(took, time.monotonic() - t0)
    if info is not None:
        info["rules"] = [r for r in WARM_START_PREFERENCE if r in done]
    if not done:
        raise TimeLimitReached(
            f"the warm start's share of the time limit ended before a list schedule of the {instance.n_jobs} jobs"
        )
    return min((done[r] for r in WARM_START_PREFERENCE if r in done), key=lambda r: r.objective).schedule


def decode_exact(instance: Instance, em: ExactModel, sr) -> Schedule:
    """The schedule of a solved :func:`build_exact` model."""
    if isinstance(sr.raw, dict) and "schedule" in sr.raw:  # a schedule found outside the model (relax-and-repair)
        return sr.raw["schedule"]
    if isinstance(em.handles, IntervalVariables):
        return schedule_from_cpsat(instance, sr.raw, em.handles)
    return schedule_from_time_indexed(instance, em.model, em.handles)


@register_algorithm(
    "rigid-exact",
    "rigid",
    exact=True,
    backends=("highs", "cpsat", "auto", "portfolio"),
    suite_options={"options": SolveOptions(time_limit=30, threads=1)},
)
def solve_exact(
    instance: Instance,
    *,
    backend: str = "highs",
    options: SolveOptions | None = None,
    seed=None,
    initial="heuristic",
    horizon_slots: int | None = None,
    max_size: int | None = None,
    write_model: str | None = None,
) -> Result:
    """Exact minimum total weighted completion time of rigid jobs (time-indexed MILP or CP-SAT).

    Parameters
    ----------
    instance : Instance (kind ``rigid``); every work and arrival a whole number of slots.
    backend : {"highs", "cpsat", "auto", "portfolio"} or any Pyomo solver name
        ``highs``/Pyomo solvers solve the time-indexed MILP (T1)-(T5); ``cpsat`` the interval
        model (C1)-(C4); ``auto`` picks one by size and horizon, ``portfolio`` runs both side by
        side (:mod:`optsched.solvers.portfolio`, docs/exact.md).
    options : SolveOptions
        Time limit, gaps, threads, seed. Default: 60 s, gap 0, one thread. When all weights are
        integers and ``mip_abs_gap`` is None it is set to 0.999 (the objective in slots is then
        an integer, so a gap below 1 proves optimality).
    seed : int or numpy.random.Generator, optional
        Overrides ``options.seed``.
    initial : "heuristic", Schedule or None
        Warm start: by default the best list schedule (WSPT, FIFO, SPT); a feasible schedule
        with one run per job starting on a whole slot; ``None`` for none. It is checked by the
        verifier, installed as CP-SAT hints or a HiGHS MIP start, and the result is never worse.
    write_model : str, optional
        Also write the built model to this file (.lp/.mps, or .pb/.pbtxt for CP-SAT).

    Returns
    -------
    Result
        Certified by :func:`optsched.solvers.exact.run_exact`: objective recomputed from the
        decoded schedule, bound (rounded up to a whole slot with integer weights) never above
        it, gap, status optimal only within ``info["optimality_tolerance"]``.

    Raises
    ------
    InvalidScheduleError
        ``initial`` is infeasible (names the job and the verifier's label) or not representable.

    Notes
    -----
    The time-indexed model has O(n T) binaries (O(n M T) with single-server jobs), T = max r +
    sum p slots; it refuses to build above ``max_size`` (ModelTooLargeError).

    References
    ----------
    formulations/rigid.md

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
    >>> r = solve_exact(inst)
    >>> r.status.value, r.objective
    ('optimal', 19.0)
    """
    from optsched.solvers.exact import resolve_options

    check_kind(instance, "rigid", "rigid-exact")
    from optsched.verify import verify

    options = resolve_options(options, seed).started()  # the time limit counts from here: the warm start too
    if isinstance(initial, str) and initial != "heuristic":
        raise InvalidOptionError(f"The 'initial' option must be 'heuristic', a Schedule or None; got {initial!r}.")
    if options.mip_abs_gap is None and _integral_weights(instance):
        # integer objective (in slots): an absolute gap below 1 proves optimality
        options = options.replace(mip_abs_gap=0.999)
    evaluate = lambda s: objective_value(instance, s, OBJECTIVE)  # noqa: E731
    with progress.timeline():  # the warm start's seconds in result.info["phases"] too
        progress.phase("area bound")
        bound = area_bound(instance)  # O(n log n): the result has a bound even if no solver proves one
        if _integral_weights(instance):
            bound = math.ceil(bound / instance.slot - 1e-6) * instance.slot
        progress.phase("choosing the back end")  # (imports Pyomo to check a Pyomo solver)
        plan = plan_backend(
            backend,
            build=lambda inst, b, o: build_exact(
                inst, b, o, horizon_slots=horizon_slots, max_size=max_size, lower_bound=bound
            ),
            decode=lambda em, sr: decode_exact(instance, em, sr),
            own=("cpsat",),
            evaluate=evaluate,
            auto=lambda: _auto_backend(instance, horizon_slots),
        )
        warm: dict = {}
        if isinstance(initial, str):
            progress.phase("warm start (list scheduling)")
            left = options.time_left()
            end = None if left is None else time.monotonic() + max(WARM_START_MIN_SECONDS, WARM_START_SHARE * left)
            try:
                initial = best_heuristic(instance, deadline=end, info=warm)
            except TimeLimitReached as e:
                initial, warm["cut"] = None, str(e)
        result = run_exact(
            instance,
            build=plan.build,
            decode=plan.decode,
            evaluate=evaluate,
            backend=plan.backend,
            algorithm=f"rigid-exact[{backend}]",
            objective_name=OBJECTIVE,
            options=options,
            write_model=write_model,
            initial=initial,
            check_initial=lambda s: verify(instance, s).violations,
            own_backends=plan.own_backends,
            initial_bound=bound,
        )
    if "rules" in warm:
        result.info["warm_start_rules"] = warm["rules"]
    if "cut" in warm:
        result.info["warm_start_cut"] = warm["cut"]
    return result


def _auto_backend(instance: Instance, horizon_slots: int | None) -> tuple[str, str]:
    """The ``auto`` rule: start variables of the time-indexed model vs :func:`auto_time_indexed`."""
    d = slot_data(instance, horizon_slots)
    starts = sum(max(0, d.T - p - r + 1) for p, r in zip(d.p, d.r, strict=True))
    return auto_time_indexed(starts, sum(d.p) / max(d.n, 1), cpsat_ok=_integral_weights(instance), n_jobs=d.n)
