"""Exact solves of the rigid-job problem: HiGHS time-indexed MILP or CP-SAT."""

from __future__ import annotations

import math
import time
from dataclasses import replace

from optsched.core.instance import Instance
from optsched.core.io import paused_gc
from optsched.core.objectives import objective_value
from optsched.core.registry import check_kind
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidOptionError
from optsched.rigid.bounds import area_bound
from optsched.rigid.decode import decode_exact, warm_start_exact
from optsched.rigid.formulation import (
    IntervalVariables,
    TimeIndexedVariables,
    build_interval_cpsat,
    build_time_indexed,
    slot_data,
    time_indexed_size,
)
from optsched.rigid.heuristics import list_schedule
from optsched.rigid.time_indexed import (
    RELAX_SHARE,
    lp_relaxation_bound,
    model_seconds,
    plan_time_indexed,
    solve_time_indexed,
)
from optsched.solvers import SolveOptions, progress
from optsched.solvers.exact import resolve_options, run_exact
from optsched.solvers.model import ExactModel
from optsched.solvers.portfolio import auto_time_indexed, plan_backend
from optsched.solvers.staged import cpsat_probe, solve_cpsat_staged
from optsched.verify import verify

OBJECTIVE = "total_weighted_completion_time"


def _integral_weights(instance: Instance) -> bool:
    return all(abs(j.weight - round(j.weight)) < 1e-12 for j in getattr(instance, "jobs", ()))


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
    (:func:`optsched.solvers.staged.solve_cpsat_staged`): a short CP-SAT probe without presolve
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
    and set up in the time left (:func:`~optsched.rigid.time_indexed.plan_time_indexed`,
    ``formulations/rigid.md#time-limit``): otherwise only its relaxation, or only the LP bound, is
    solved (``em.model`` is ``None``), or :class:`~optsched.exceptions.TimeLimitReached` ends the
    call with the warm start."""
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
        plan = plan_time_indexed(d, backend, options, relax, info)
        model, handles = None, None  # type: ignore[assignment]
        if plan == "full":
            t0 = time.perf_counter()
            model = build_time_indexed(
                instance, horizon_slots=horizon_slots, max_size=max_size, deadline=options.deadline
            )
            rstate["speed"] = (time.perf_counter() - t0) / max(model_seconds(time_indexed_size(d))[0], 1e-3)
            handles = TimeIndexedVariables.of(model)
        if plan != "full" or relax:
            solve = lambda em, o: solve_time_indexed(instance, em, o, backend, horizon_slots, rstate, plan)  # noqa: E731
    em = ExactModel(model, handles, scale=instance.slot, step=step, info=info, solve=solve, probe=probe)

    def warm_start(sched: Schedule) -> None:
        if em.model is not None:
            warm_start_exact(instance, em, sched)
        rstate["initial"] = sched

    return replace(em, warm_start=warm_start)


#: Share of the time left that the warm start (:func:`best_heuristic`) may take in :func:`solve_exact`
#: (half: from a few thousand jobs on it is the schedule a short limit returns; smaller instances
#: take milliseconds), and the seconds it may always take (a call with little or no time left then
#: still list-schedules a few thousand jobs before it appends the rest: it may end up to this much
#: after its deadline).
WARM_START_SHARE, WARM_START_MIN_SECONDS = 0.5, 0.5
#: Seconds per job kept back, from the time left, for what follows a warm start however short the
#: limit: certifying, verifying and writing the result (O(n) each; the list scheduler's warm start
#: is not checked before the solve, the result is verified once; measured with ``python -m
#: benchmarks.bench_solve_limit --case 50mb``): the area bound and the warm start take their
#: shares of the time left after it.
AFTER_SECONDS_PER_JOB = 12e-6
#: Share of the time left (after :data:`AFTER_SECONDS_PER_JOB`) that the area bound's sweep may take
#: before it settles for the trivial bound sum w_j (r_j + p_j).
AREA_BOUND_SHARE = 0.25
#: The list-scheduling rules of the warm start, in the order they are run (WSPT first: Smith's rule,
#: usually the best for the weighted objective, and as fast as FIFO: 0.5-0.8 s CPU for 5,000 jobs;
#: a short limit returns FIFO's twice as costly schedule when only FIFO finished) ...
WARM_START_RULES = ("wspt", "fifo", "spt")
#: ... and the order in which equal objectives are preferred.
WARM_START_PREFERENCE = ("wspt", "fifo", "spt")


def best_heuristic(instance: Instance, *, deadline: float | None = None, info: dict | None = None) -> Schedule:
    """The best of the fast list-scheduling rules (WSPT, FIFO, SPT; among equal objectives the
    first of these): the default warm start.

    ``deadline`` (a ``time.monotonic()`` value): the rules run in the order of
    :data:`WARM_START_RULES`; one is started only when it is expected to end by then (it takes
    about as long as the slowest rule before it); the one running at the deadline places the jobs
    it has not placed yet one after another at the end (a feasible schedule, poorer the earlier
    the cut), and no rule runs after it. ``info`` (a dict) receives ``rules``, the rules that
    finished or were cut, and ``cut``, what the cut did, when one was."""

    done: dict[str, Result] = {}
    took = 0.0
    for rule in WARM_START_RULES:
        if deadline is not None and done and time.monotonic() + took > deadline:
            break
        t0 = time.monotonic()
        r = done[rule] = list_schedule(instance, rule=rule, deadline=deadline, on_deadline="append")
        took = max(took, time.monotonic() - t0)
        if r.info.get("appended") and info is not None:
            n = instance.n_jobs
            info["cut"] = (
                f"{rule.upper()} list scheduling reached the warm start's share of the time limit after "
                f"{n - r.info['appended']} of {n} jobs; the other {r.info['appended']} run one after another at the end"
            )
        if r.info.get("appended"):
            break
    if info is not None:
        info["rules"] = [r for r in WARM_START_PREFERENCE if r in done]
    return min((done[r] for r in WARM_START_PREFERENCE if r in done), key=lambda r: r.objective).schedule


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
    instance : Instance
        Of kind ``rigid``; every work and arrival a whole number of slots.
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
        with one run per job starting on a whole slot; ``None`` for none. A given schedule is
        checked by the verifier first (the default one, built here, is not: verify the result, as
        ``optsched solve`` does); it is installed as CP-SAT hints or a HiGHS MIP start, and the
        result is never worse.
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

    check_kind(instance, "rigid", "rigid-exact")

    options = resolve_options(options, seed).started()  # the time limit counts from here: the warm start too
    if isinstance(initial, str) and initial != "heuristic":
        raise InvalidOptionError(f"The 'initial' option must be 'heuristic', a Schedule or None; got {initial!r}.")
    slot_data(instance, horizon_slots)  # O(n): an instance beyond the models' slot limit is refused before any work
    if options.mip_abs_gap is None and _integral_weights(instance):
        # integer objective (in slots): an absolute gap below 1 proves optimality
        options = options.replace(mip_abs_gap=0.999)
    evaluate = lambda s: objective_value(instance, s, OBJECTIVE)  # noqa: E731
    reserve = AFTER_SECONDS_PER_JOB * instance.n_jobs  # checking, verifying and writing the schedule found
    with progress.timeline():  # the warm start's seconds in result.info["phases"] too
        progress.phase("area bound")
        left = options.time_left()
        cut_at = None if left is None else time.monotonic() + max(0.0, AREA_BOUND_SHARE * (left - reserve))
        bound = area_bound(instance, deadline=cut_at)  # the result has a bound even if no solver proves one
        bound_cut = cut_at is not None and time.monotonic() > cut_at  # then the trivial bound sum w (r + p)
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
        built = isinstance(initial, str)  # the default warm start, built below by the list scheduler
        if built:
            progress.phase("warm start (list scheduling)")
            left = options.time_left()
            end = (
                None
                if left is None
                else time.monotonic() + max(WARM_START_MIN_SECONDS, WARM_START_SHARE * (left - reserve))
            )
            with paused_gc():  # a schedule of many jobs: segments and dicts, none of them garbage
                initial = best_heuristic(instance, deadline=end, info=warm)
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
            # a schedule given by the caller is checked before the solver sees it; the list scheduler's
            # is not checked twice: the result's schedule, whichever it is, is what the verifier
            # checks afterwards (``optsched solve`` verifies it once, as any result)
            check_initial=None if built else lambda s: verify(instance, s).violations,
            own_backends=plan.own_backends,
            initial_bound=bound,
            bound_name="area",
        )
    if bound_cut:
        result.info["area_bound_cut"] = (
            "the area bound's sweep reached its share of the time limit: sum w_j (r_j + p_j)"
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
