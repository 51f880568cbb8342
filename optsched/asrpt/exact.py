"""Exact Problem (8) on the slot grid: CP-SAT (optional intervals per pattern) or a HiGHS
time-indexed MILP, decoded into a verified :class:`~optsched.core.Schedule`.

Tested in ``tests/asrpt/test_problem8.py``.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from optsched.asrpt.formulation import (
    OBJ_SCALE,
    Problem8TimeIndexedVariables,
    Problem8Variables,
    arrival_slot,
    build_problem8,
    build_problem8_cpsat,
    build_problem8_ti_cpsat,
    horizon_slots,
    job_patterns,
)
from optsched.asrpt.model import KIND, AsrptInstance
from optsched.asrpt.workload import least_processing
from optsched.core.bounds import flow_time_bound
from optsched.core.objectives import objective_value
from optsched.core.registry import check_kind
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidOptionError, InvalidScheduleError, ModelTooLargeError
from optsched.solvers import SolveOptions, progress
from optsched.solvers.exact import resolve_options, run_exact
from optsched.solvers.model import ExactModel
from optsched.solvers.staged import LP_MAX_SECONDS, lp_relaxation_value, lp_time_budget, solve_cpsat_with_lp_bound
from optsched.verify import verify

OBJECTIVE = "total_completion_time"


def _schedule(instance: AsrptInstance, starts: dict, chosen: dict) -> Schedule:
    sched = Schedule()
    for j in instance.jobs:
        p = chosen[j.id]
        t0 = starts[j.id] * instance.slot
        sched.add(
            j.id, t0, min(t0 + p.time, t0 + p.slots * instance.slot), {m: c for m, c in enumerate(p.counts) if c > 0}
        )
    return sched


def grid_list_schedule(instance: AsrptInstance, order, patterns: dict | None = None) -> Schedule:
    """Serial schedule generation on the slot grid of Problem (8): each job in ``order`` (job ids)
    takes the (pattern, start slot) that ends first (slots, then seconds) where every server it
    uses has the pattern's GPUs free for the pattern's whole run. Feasible for (1)-(3) and
    representable in every exact model (it ends by the horizon T)."""
    pats = patterns or {j.id: job_patterns(j, instance) for j in instance.jobs}
    T = horizon_slots(instance, pats)
    free = np.full((instance.M, T + 1), instance.g, dtype=np.int64)
    starts, chosen = {}, {}
    for jid in order:
        job = instance.job(jid)
        best = None
        r = arrival_slot(job, instance)
        for p in pats[jid]:
            need = np.asarray(p.counts)[:, None]
            for t in range(r, T - p.slots + 1):
                if (free[:, t : t + p.slots] >= need).all():
                    key = (t + p.slots, t * instance.slot + p.time)
                    if best is None or key < best[0]:
                        best = (key, t, p)
                    break
        if best is None:  # cannot happen: the fastest pattern fits after every earlier job
            raise InvalidOptionError(f"No grid start for job {jid!r} within the horizon of {T} slots.")
        _, t, p = best
        free[:, t : t + p.slots] -= np.asarray(p.counts)[:, None]
        starts[jid], chosen[jid] = t, p
    return _schedule(instance, starts, chosen)


def best_heuristic(instance: AsrptInstance, patterns: dict | None = None) -> Schedule:
    """The default warm start: the best :func:`grid_list_schedule` over three orders (shortest
    fastest-pattern time first, arrival then that, and shortest time x GPUs first)."""
    pats = patterns or {j.id: job_patterns(j, instance) for j in instance.jobs}
    fastest = {j.id: min(p.time for p in pats[j.id]) for j in instance.jobs}
    orders = [
        sorted(fastest, key=lambda i: (fastest[i], str(i))),
        sorted(fastest, key=lambda i: (instance.job(i).arrival, fastest[i], str(i))),
        sorted(fastest, key=lambda i: (fastest[i] * instance.job(i).gpus, str(i))),
    ]
    scheds = [grid_list_schedule(instance, o, pats) for o in orders]
    return min(scheds, key=lambda sc: objective_value(instance, sc, OBJECTIVE))


def _grid_starts(instance: AsrptInstance, schedule: Schedule, pats: dict, T: int) -> list[tuple[int, int]]:
    """(start slot, pattern index) per job; refuses what Problem (8) on the grid cannot represent."""
    out = []
    for job in instance.jobs:
        segs = schedule.segments(job.id)
        if len(segs) != 1:
            raise InvalidScheduleError(
                f"The initial schedule runs job {job.id!r} in {len(segs)} pieces; Problem (8) needs one run per job."
            )
        seg = segs[0]
        t = seg.start / instance.slot
        counts = tuple(int(seg.placement.get(m, 0)) for m in range(instance.M))
        idx = next((k for k, p in enumerate(pats[job.id]) if p.counts == counts), None)
        if (
            abs(t - round(t)) > 1e-9
            or idx is None
            or not (arrival_slot(job, instance) <= round(t) <= T - pats[job.id][idx].slots)
        ):
            raise InvalidScheduleError(
                f"The initial schedule starts job {job.id!r} at {seg.start!r} s on GPUs {counts}: not a start slot "
                f"and pattern of Problem (8) (slot {instance.slot} s, horizon {T} slots). Use "
                f"optsched.asrpt.exact.grid_list_schedule for a grid schedule."
            )
        out.append((int(round(t)), idx))
    return out


def _is_cpsat_x(v: Problem8TimeIndexedVariables) -> bool:
    return isinstance(v.x, dict)  # CP-SAT Booleans by key; the Pyomo model's x otherwise


def warm_start_exact(instance: AsrptInstance, em: ExactModel, schedule: Schedule) -> None:
    """Install a grid schedule as the start of a :func:`build_exact` model (CP-SAT hints or a
    full HiGHS MIP start)."""
    v = em.handles
    chosen = _grid_starts(instance, schedule, v.patterns, v.horizon)
    if isinstance(v, Problem8Variables):
        em.model.clear_hints()
        for i, (t, k) in enumerate(chosen):
            em.model.add_hint(v.start[i], t)
            for q, b in enumerate(v.use[i]):
                em.model.add_hint(b, q == k)
    elif _is_cpsat_x(v):
        em.model.clear_hints()
        for (i, q, t), x in v.x.items():
            em.model.add_hint(x, chosen[i] == (t, q))
    else:
        for (i, q, t), x in v.x.items():
            x.value = 1.0 if chosen[i] == (t, q) else 0.0


#: The LP relaxation of the ``cpsat`` path takes at most solvers.exact.lp_time_budget (a quarter of the
#: time limit, at most LP_MAX_SECONDS); it is skipped when the time-indexed model would have more than
#: LP_MAX_NONZEROS capacity coefficients (n30 on 2x4: 270,000, built in 0.8 s, LP 2.3 s; n40 on 3x4:
#: 2.2 million, > 90 s).
LP_MAX_NONZEROS = 500_000


def _ti_nonzeros(instance: AsrptInstance, pats: dict) -> int:
    T = horizon_slots(instance, pats)
    return sum(
        max(0, T - p.slots + 1) * p.slots * sum(1 for c in p.counts if c) for j in instance.jobs for p in pats[j.id]
    )


def lp_relaxation_bound(
    instance: AsrptInstance,
    *,
    patterns: dict | None = None,
    time_limit: float | None = LP_MAX_SECONDS,
    max_nonzeros: int | None = LP_MAX_NONZEROS,
) -> float | None:
    """The LP relaxation value of the time-indexed Problem (8) (:func:`build_problem8`, seconds): a
    lower bound on the optimum. ``None`` if HiGHS does not prove the LP optimal within
    ``time_limit`` seconds or the model would have more than ``max_nonzeros`` capacity coefficients
    (checked before building).

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> round(lp_relaxation_bound(toy_instance()), 6) <= 21.9
    True
    """

    check_kind(instance, KIND, "lp_relaxation_bound")
    pats = patterns or {j.id: job_patterns(j, instance) for j in instance.jobs}
    if max_nonzeros is not None and _ti_nonzeros(instance, pats) > max_nonzeros:
        return None
    try:
        model = build_problem8(instance, patterns=pats)
    except ModelTooLargeError:
        return None
    return lp_relaxation_value(model, time_limit)


def cheap_bound(instance: AsrptInstance) -> tuple[float, str]:
    """A lower bound on Problem (8) (seconds) computed in milliseconds, without patterns or a
    solver, and the name of its larger part (``formulations/asrpt.md#problem-8-bounds``):

    * ``own_length``: sum_i (slot a_i + d_i), a_i the earliest start slot (:func:`arrival_slot`),
      d_i = n_i alpha^min_i the job's least time over every placement
      (:func:`optsched.asrpt.workload.least_processing`, the fastest pattern's time);
    * ``area``: the same plus slot x max(0, B - sum_i s_i), where s_i = ceil(d_i / slot) >= 1 is
      the fewest slots a job occupies and B the cheap bound (:func:`optsched.core.bounds.flow_time_bound`:
      fluid SRPT or mean busy time) on sum_i (t_i + s_i - a_i) of the job holding its g_i of the
      G GPUs pooled for s_i slots from t_i: sum_i t_i >= B + sum_i (a_i - s_i), and every job
      completes at slot t_i plus at least d_i.

    Guarantee
    ---------
    ``cheap_bound(instance)[0] <=`` the optimum of Problem (8) on the slot grid (tested against
    the exact optimum on random instances).

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> b, which = cheap_bound(toy_instance())
    >>> bool(0 < b <= 21.9), which
    (True, 'own_length')
    """
    check_kind(instance, KIND, "cheap_bound")
    if not instance.jobs:
        return 0.0, "own_length"
    d = np.asarray(least_processing(instance), dtype=float)
    a = np.array([arrival_slot(j, instance) for j in instance.jobs], dtype=float)
    occ = np.maximum(1.0, np.ceil(d / instance.slot - 1e-9))
    gpus = np.array([j.gpus for j in instance.jobs], dtype=float)
    b = flow_time_bound(a, gpus, occ, instance.G)
    own = math.fsum([*(a * instance.slot).tolist(), *d.tolist()])
    wait = max(0.0, max(b.fluid, b.mean_busy) - math.fsum(occ.tolist()))  # slots every schedule waits in all
    if wait > 0:
        return own + instance.slot * wait, "area"
    return own, "own_length"


def build_exact(
    instance: AsrptInstance,
    backend: str,
    options: SolveOptions,
    *,
    max_size: int | None = None,
    lower_bound: float | None = None,
    patterns: dict | None = None,
) -> ExactModel:
    """The model :func:`solve_exact` solves for ``backend``; its ``handles`` are the model's
    variables (:class:`~optsched.asrpt.formulation.Problem8Variables` or
    :class:`~optsched.asrpt.formulation.Problem8TimeIndexedVariables`).

    CP-SAT models count time in units of slot / OBJ_SCALE with the durations n_i alpha_i rounded
    to that unit: ``resolution`` = n * 0.5 * slot / OBJ_SCALE (the worst-case total rounding),
    so the bound is lowered by it and optimality is certified within twice it. The Pyomo model
    is exact (``scale`` 1, ``resolution`` 0). ``lower_bound`` (seconds, e.g. :func:`cheap_bound`)
    joins the LP relaxation's as the CP-SAT objective's floor (the row ``objective_bound``).
    ``patterns`` (by job id, :func:`~optsched.asrpt.formulation.job_patterns`) when computed already."""
    pats = patterns or {j.id: job_patterns(j, instance) for j in instance.jobs}
    info: dict = {"patterns": sum(len(v) for v in pats.values())}
    if backend == "cpsat":
        scale = instance.slot / OBJ_SCALE
        rounding = instance.n_jobs * 0.5 * scale
        t0 = time.perf_counter()
        try:
            lp = lp_relaxation_bound(instance, patterns=pats, time_limit=lp_time_budget(options))
        except MemoryError:  # the relaxation does not fit: the cheap bound stays, and says so
            lp, info["lp_skipped"] = None, "out of memory building the time-indexed LP"
        # the CP-SAT objective (rounded durations) is within `rounding` of (8) for every schedule
        floor = max((v for v in (lp, lower_bound) if v is not None), default=None)
        row = None if floor is None else math.floor((floor - rounding) / scale - 1e-6 * max(1.0, abs(floor / scale)))
        model, h = build_problem8_cpsat(instance, patterns=pats, max_size=max_size, objective_lower_bound=row)
        info.update(
            horizon_slots=h.horizon,
            objective_rounding=rounding,
            lp_bound=lp,
            lp_row=row,
            lp_time=time.perf_counter() - t0,
            energy_rows=sum(1 for c in model.proto.constraints if c.name == "energy"),
        )
        em = ExactModel(model, h, scale=scale, resolution=rounding, info=info, solve=solve_cpsat_with_lp_bound)
    elif backend == "cpsat-ti":
        model, h = build_problem8_ti_cpsat(instance, patterns=pats, max_size=max_size)
        scale = instance.slot / OBJ_SCALE
        rounding = instance.n_jobs * 0.5 * scale
        info.update(horizon_slots=h.horizon, objective_rounding=rounding)
        em = ExactModel(model, h, scale=scale, resolution=rounding, info=info)
    else:
        model = build_problem8(instance, patterns=pats, max_size=max_size)
        info.update(horizon_slots=model.horizon, objective_rounding=0.0)
        em = ExactModel(model, Problem8TimeIndexedVariables.of(model), info=info)
    return replace(em, warm_start=lambda sched: warm_start_exact(instance, em, sched))


def decode_exact(instance: AsrptInstance, em: ExactModel, sr) -> Schedule:
    """The schedule of a solved :func:`build_exact` model."""
    v = em.handles
    pats = v.patterns
    starts, chosen = {}, {}
    if isinstance(v, Problem8Variables):
        val = sr.raw.value
        for i, j in enumerate(instance.jobs):
            starts[j.id] = val(v.start[i])
            chosen[j.id] = next(p for b, p in zip(v.use[i], pats[j.id], strict=True) if val(b))
    elif _is_cpsat_x(v):
        val = sr.raw.value
        for (i, p, t), x in v.x.items():
            if val(x):
                j = instance.jobs[i]
                starts[j.id], chosen[j.id] = t, pats[j.id][p]
    else:
        for (i, p, t), x in v.x.items():
            if (x.value or 0) > 0.5:
                j = instance.jobs[i]
                starts[j.id], chosen[j.id] = t, pats[j.id][p]
    return _schedule(instance, starts, chosen)


def solve_exact(
    instance: AsrptInstance,
    *,
    backend: str = "cpsat",
    options: SolveOptions | None = None,
    seed=None,
    initial="heuristic",
    write_model: str | None = None,
    max_size: int | None = None,
    stop_at_bound: bool = True,
) -> Result:
    """Exact Problem (8): minimum total completion time sum_i (t_i + n_i alpha_i), t_i on the slot grid.

    Parameters
    ----------
    instance : AsrptInstance
    backend : {"cpsat", "cpsat-ti", "highs"} or a Pyomo solver name
        ``cpsat``: optional intervals per (job, pattern) with cumulative capacity per server.
        ``cpsat-ti``: CP-SAT on the time-indexed Boolean model (stronger bounds on more jobs).
        Otherwise the time-indexed MILP through Pyomo (O(I P T) binaries).
    options : SolveOptions
        Default: 60 s, gap 0, 1 thread.
    seed : int or numpy.random.Generator, optional
        Overrides ``options.seed``.
    initial : "heuristic", Schedule or None
        Warm start: by default :func:`best_heuristic` (grid list schedules); a feasible schedule
        with one run per job, starting on a slot with a pattern's GPU counts; ``None`` for none.
        Checked by the verifier; CP-SAT hints or a HiGHS MIP start; the result is never worse.
    write_model : str, optional
        Write the model (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT).
    stop_at_bound : bool
        True (default): when the warm start meets :func:`cheap_bound` it is optimal, returned
        without building or solving a model; False: solve the model anyway (to test it).

    Returns
    -------
    Result
        Certified by :func:`optsched.solvers.exact.run_exact`: ``objective`` recomputed from the
        decoded schedule (seconds); ``bound`` a valid lower bound never above it; ``gap``;
        ``status`` optimal only within ``info["optimality_tolerance"]``; the bound is never below
        :func:`cheap_bound` (``info["cheap_bound"]`` names its part, ``info["bound_from"]`` is
        ``"initial_bound"`` when it is the one reported). For CP-SAT the
        durations n_i alpha_i enter the objective rounded to slot/10^4
        (``info["objective_rounding"]`` is the worst-case total error in seconds; the bound is
        lowered by it and the tolerance is at least twice it).

    Guarantee
    ---------
    status OPTIMAL => objective <= that of every schedule with starts on the slot grid satisfying
    (1)-(3), up to ``info["optimality_tolerance"]``.

    Notes
    -----
    Patterns per job: all vectors of GPUs per server with sum g_i (<= (g+1)^M); each gets its best
    stage split by enumeration (or the placement MILP). Horizon T = max r + sum_i min_p duration.

    References
    ----------
    Luo et al., Problem (8); formulations/asrpt.md#problem-8.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> r = solve_exact(inst, options=SolveOptions(threads=1, time_limit=10))
    >>> r.status.value, round(r.objective, 4)
    ('optimal', 21.9)
    """
    check_kind(instance, KIND, "asrpt-exact")
    if isinstance(initial, str) and initial != "heuristic":
        raise InvalidOptionError(f"The 'initial' option must be 'heuristic', a Schedule or None; got {initial!r}.")
    options = resolve_options(options, seed).started()  # the time limit bounds the whole call
    with progress.timeline():  # the cheap bound's, the patterns' and the warm start's seconds in info["phases"]
        progress.phase("cheap bound")
        bound, which = cheap_bound(instance)  # milliseconds: the result has a bound whatever the solver proves
        progress.phase("patterns")
        pats = {j.id: job_patterns(j, instance) for j in instance.jobs}
        if isinstance(initial, str):
            progress.phase("warm start (grid list schedules)")
            initial = best_heuristic(instance, pats)
        result = run_exact(
            instance,
            build=lambda inst, b, o: build_exact(inst, b, o, max_size=max_size, lower_bound=bound, patterns=pats),
            decode=lambda em, sr: decode_exact(instance, em, sr),
            evaluate=lambda s: objective_value(instance, s, OBJECTIVE),
            backend=backend,
            algorithm=f"asrpt-exact[{backend}]",
            objective_name=OBJECTIVE,
            options=options,  # the seed applied already
            write_model=write_model,
            initial=initial,
            check_initial=lambda s: verify(instance, s).violations,
            own_backends=("cpsat", "cpsat-ti"),
            initial_bound=bound,
            bound_name=which,
            stop_at_bound=stop_at_bound,
        )
    # no model built (the warm start met the cheap bound): the objective is the schedule's own, unrounded
    result.info.setdefault("objective_rounding", 0.0)
    return result
