"""The time-indexed back end of the rigid exact solve under a time limit: size estimates, the plan
(``full``, ``relaxation``, ``lp`` or nothing), the LP bound, and relax-and-repair
(``formulations/rigid.md#time-limit``, ``#relax-and-repair``).

Tested in ``tests/rigid/test_time_limit.py``."""

from __future__ import annotations

import dataclasses
import math
import time

from optsched.core.instance import Instance
from optsched.core.objectives import objective_value
from optsched.core.registry import check_kind
from optsched.core.result import Status
from optsched.exceptions import ModelTooLargeError, TimeLimitReached
from optsched.rigid.decode import schedule_from_cpsat, warm_start_exact
from optsched.rigid.formulation import (
    ModelSize,
    TimeIndexedVariables,
    add_packing_rows,
    build_interval_cpsat,
    build_time_indexed,
    slot_data,
    time_indexed_size,
)
from optsched.solvers import SolveOptions, SolveResult, interrupt, progress, sharing, solve_cpsat
from optsched.solvers.model import ExactModel
from optsched.solvers.pyomo_backend import solve_pyomo
from optsched.solvers.staged import LP_MAX_SECONDS, lp_relaxation_value

OBJECTIVE = "total_weighted_completion_time"


#: Seconds per non-zero to build a time-indexed Pyomo model, and to hand it to HiGHS (Pyomo's
#: ``set_instance``) per non-zero and per row: measured on 200-job instances
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


#: Share of the time limit that the aggregated relaxation of the time-indexed back end may take
#: (:func:`solve_time_indexed`; 0 switches it off).
RELAX_SHARE = 0.5


def plan_time_indexed(d, backend: str, options: SolveOptions, relax: bool, info: dict) -> str:
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


def solve_time_indexed(
    instance: Instance,
    em: ExactModel,
    options: SolveOptions,
    backend: str,
    horizon_slots: int | None,
    state: dict,
    plan: str,
):
    """``ExactModel.solve`` of the time-indexed back end (``formulations/rigid.md#relax-and-repair``
    and ``#time-limit``), for the ``plan`` of :func:`plan_time_indexed`.

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
