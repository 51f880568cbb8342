"""Exact (2) / (15) and (8) / (17) over the restricted Gamma_j, through :func:`optsched.solvers.exact.run_exact`.

* ``elastic-exact`` (:func:`solve_exact`): minimum sum_j w_j c_j, set partitioning (HiGHS via
  Pyomo, default, or CP-SAT), warm-started by :func:`greedy`.
* :func:`solve_maxweight`: (8), the largest total weight of jobs that complete by ``tau``
  (no arrivals inside a round, (7)); sense ``max``. Not a registered algorithm of the kind (its
  objective is ``scheduled_weight``, not the kind's).
* ``elastic-greedy`` (:func:`greedy`): jobs by arrival (then weight, descending), each on the
  column of Gamma_j that completes first in the residual capacity. A baseline and the warm start.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optsched.core.registry import check_kind, requires_kind
from optsched.core.result import Result, Status
from optsched.elastic.cheap_bounds import max_weight_bound, min_sum_bound
from optsched.elastic.checks import evaluate_objective, violations
from optsched.elastic.constants import KIND, OBJECTIVE
from optsched.elastic.formulation import (
    ColumnVariables,
    build_direct_cpsat,
    build_set_partitioning,
    build_set_partitioning_cpsat,
    column_set,
    decode_direct_cpsat,
)
from optsched.elastic.gamma import configs_by_index
from optsched.elastic.model import ElasticInstance
from optsched.elastic.primal_dual import a_maxweight
from optsched.elastic.schedule import ElasticSchedule
from optsched.exceptions import InfeasibleError, InvalidOptionError, TimeLimitReached
from optsched.solvers import SolveOptions, SolveResult, progress
from optsched.solvers.exact import run_exact
from optsched.solvers.model import ExactModel

BACKENDS = ("highs", "cpsat", "cpsat-direct")


class _Usage:
    """Per-slot use (T, H, R) with a fit test for one configuration at one start."""

    def __init__(self, instance: ElasticInstance, T: int) -> None:
        self.C = np.array(instance.C, dtype=float)
        self.use = np.zeros((T, instance.H, instance.R))

    def fits(self, cfg, t: int) -> bool:
        for h, vec in cfg.use:
            if np.any(self.use[t : t + cfg.d, h, :] + np.asarray(vec)[None, :] > self.C[h][None, :] + 1e-9):
                return False
        return True

    def add(self, cfg, t: int) -> None:
        for h, vec in cfg.use:
            self.use[t : t + cfg.d, h, :] += np.asarray(vec)[None, :]


def greedy_schedule(
    instance: ElasticInstance,
    *,
    order: str = "arrival",
    tau: int | None = None,
    arrivals: bool = True,
    require_all: bool = True,
) -> ElasticSchedule | None:
    """The greedy list schedule (see the module doc); ``None`` if a job does not fit by the horizon
    and ``require_all`` (else that job is left out, as in a round of (7))."""
    T = instance.horizon if tau is None else int(tau)
    if order == "arrival":
        idx = sorted(range(instance.n_jobs), key=lambda j: (instance.jobs[j].arrival, -instance.jobs[j].weight, j))
    elif order == "weight":
        idx = sorted(range(instance.n_jobs), key=lambda j: (-instance.jobs[j].weight, j))
    elif order == "short":
        idx = sorted(range(instance.n_jobs), key=lambda j: (instance.min_duration(j), -instance.jobs[j].weight, j))
    else:
        raise InvalidOptionError(f"The 'order' option must be 'arrival', 'weight' or 'short'; got {order!r}.")
    usage = _Usage(instance, T)
    out = {}
    for j in idx:
        a = instance.jobs[j].arrival if arrivals else 0
        best = None
        for cfg in configs_by_index(instance, j):
            for t in range(a, T - cfg.d + 1):
                if best is not None and t + cfg.d >= best[0]:
                    break
                if usage.fits(cfg, t):
                    key = (t + cfg.d, cfg.total_use)
                    if best is None or key < best[:2]:
                        best = (key[0], key[1], cfg, t)
                    break
        if best is None:
            if require_all:
                return None
            continue
        usage.add(best[2], best[3])
        out[instance.jobs[j].id] = best[2].assignment(best[3])
    return ElasticSchedule(out)


@requires_kind(KIND)
def greedy(instance: ElasticInstance, *, order: str = "arrival", seed: Any = None) -> Result:
    """Greedy list schedule: each job (by arrival) on its earliest-completing column of Gamma_j.

    Raises
    ------
    InfeasibleError
        A job does not fit by the horizon T after the jobs before it.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> greedy(toy_instance()).objective
    25.0
    """
    t0 = time.perf_counter()
    late = instance.late_jobs()
    if late:
        raise InfeasibleError(
            f"elastic-greedy: job(s) {list(late)} of {instance.name!r} cannot complete by T = {instance.horizon} "
            f"slots even alone on the cluster (earliest completions {list(late.values())}); raise 'horizon'."
        )
    s = greedy_schedule(instance, order=order)
    if s is None:
        raise InfeasibleError(
            f"elastic-greedy: some job of {instance.name!r} does not fit by T = {instance.horizon} "
            f"after the jobs before it; raise 'horizon'."
        )
    obj = evaluate_objective(instance, s, OBJECTIVE)
    return Result(
        algorithm=f"{KIND}-greedy",
        instance=instance.name,
        objective=obj,
        objective_name=OBJECTIVE,
        schedule=s,
        status=Status.HEURISTIC,
        runtime=time.perf_counter() - t0,
        info={"order": order},
    )


def late_result(instance: ElasticInstance, algorithm: str, objective_name: str = OBJECTIVE) -> Result | None:
    """The Result of (2) / (15) when some job cannot complete by T even alone (``status = infeasible``,
    no schedule, the jobs named in ``info``), else None: infeasibility is reported by the run, never by
    loading the instance (docs/conventions.md#infeasibility)."""
    late = instance.late_jobs()
    if not late:
        return None
    shown = ", ".join(f"job {jid!r} (earliest completion {c})" for jid, c in list(late.items())[:5])
    return Result(
        algorithm=algorithm,
        instance=instance.name,
        objective=None,
        objective_name=objective_name,
        schedule=None,
        status=Status.INFEASIBLE,
        info={
            "late_jobs": dict(late),
            "message": f"(2) is infeasible: {shown} cannot complete by T = {instance.horizon} slots even alone "
            f"on the cluster; raise 'horizon'.",
        },
    )


def _builder(sense: str, tau: int | None, max_size: int | None, arrivals: bool | None = None):
    def build(instance: ElasticInstance, backend: str, options: SolveOptions) -> ExactModel:
        if backend == "cpsat-direct":
            if sense != "min":
                raise InvalidOptionError("The direct CP-SAT model is (2) only; use 'highs' or 'cpsat' for (8).")
            model, h = build_direct_cpsat(instance, max_size=max_size)
            return ExactModel(
                model, h, scale=1.0 / h.wscale, step=1.0 if h.wscale == 1 else None, info={"model": "direct"}
            )
        t_build = time.perf_counter()
        cs = column_set(instance, sense=sense, tau=tau, max_size=max_size, arrivals=arrivals, deadline=options.deadline)
        integer = all(float(j.weight).is_integer() for j in instance.jobs)
        info = {"columns": len(cs.cols), "capacity_rows": len(cs.rows), "horizon_slots": cs.tau or instance.horizon}
        if not cs.cols:  # (8) with a deadline no job can meet: the empty schedule, weight 0

            def empty(em: ExactModel, options: SolveOptions) -> SolveResult:
                return SolveResult(Status.OPTIMAL, 0.0, 0.0, 0.0, "none", "", message="no column fits by tau")

            return ExactModel(None, ColumnVariables(cs=cs), solve=empty, info=info)
        if backend == "cpsat":
            model, h = build_set_partitioning_cpsat(instance, cs=cs, deadline=options.deadline)

            def warm(sched: ElasticSchedule) -> None:
                model.clear_hints()
                chosen = _chosen(instance, cs, sched)
                for k, v in enumerate(h.x):
                    model.add_hint(v, k in chosen)

            return ExactModel(
                model,
                h,
                scale=1.0 / h.scale,
                resolution=h.eps,
                step=1.0 if integer else None,
                info=info,
                warm_start=warm,
            )
        model = build_set_partitioning(instance, cs=cs, deadline=options.deadline)
        built = time.perf_counter() - t_build
        if not handoff_fits(built, options.time_left()):
            raise TimeLimitReached(
                f"the time limit was reached while building the model: {len(cs.cols):,} columns took {built:.1f} s "
                f"to build and handing them to {backend} takes about as long, with {options.time_left():.1f} s left"
            )

        def warm_p(sched: ElasticSchedule) -> None:
            chosen = _chosen(instance, cs, sched)
            for k in range(len(cs.cols)):
                model.x[k].value = 1.0 if k in chosen else 0.0

        return ExactModel(model, ColumnVariables(cs=cs), step=1.0 if integer else None, info=info, warm_start=warm_p)

    return build


def handoff_fits(build_seconds: float, left: float | None) -> bool:
    """Whether a set-partitioning model built in ``build_seconds`` can still be handed to a Pyomo
    solver with ``left`` seconds to go (``None``: no deadline). Pyomo's hand-off of these models
    takes about as long as building them (18 s each for 53,580 columns), and no solver clock sees
    it: with less time left than the build took, the call ends now with the warm start and the
    cheap bound instead of after the deadline.

    >>> handoff_fits(18.0, 30.0), handoff_fits(18.0, 10.0), handoff_fits(18.0, None)
    (True, False, True)
    """
    return left is None or left >= build_seconds


def _chosen(instance: ElasticInstance, cs, sched: ElasticSchedule) -> set[int]:
    """Column indices equal to the assignments of ``sched`` (a warm start is a set of columns)."""
    out = set()
    want = {}
    for jid, a in sched.items():
        want[jid] = (
            int(a.start),
            int(a.d),
            a.m,
            a.p,
            a.q,
            tuple(sorted((h, int(y)) for h, y in a.workers.items() if y > 0)),
            tuple(sorted((h, int(s)) for h, s in a.ps.items() if s > 0)),
        )
    for k, c in enumerate(cs.cols):
        cfg = c.config
        key = (c.start, cfg.d, cfg.m, cfg.p, cfg.q, cfg.workers, cfg.ps)
        if want.get(instance.jobs[c.j].id) == key:
            out.add(k)
    return out


def _decode(instance: ElasticInstance):
    def decode(em: ExactModel, sr: SolveResult) -> ElasticSchedule:
        if em.info.get("model") == "direct":
            return decode_direct_cpsat(instance, em.handles, sr.raw)
        cs = em.handles.cs
        if em.model is None:
            chosen = []
        elif em.handles.x is not None:  # CP-SAT
            chosen = [k for k, v in enumerate(em.handles.x) if sr.raw.value(v)]
        else:
            chosen = [k for k in range(len(cs.cols)) if (em.model.x[k].value or 0.0) > 0.5]
        out = {}
        for k in chosen:
            c = cs.cols[k]
            out[instance.jobs[c.j].id] = c.config.assignment(c.start)
        return ElasticSchedule(out)

    return decode


def _prepare(options: SolveOptions | None, integer: bool, backend: str) -> SolveOptions:
    options = options or SolveOptions(time_limit=60.0, threads=1)
    if integer and options.mip_abs_gap is None:
        options = options.replace(mip_abs_gap=0.999)
    if backend in ("highs", "appsi_highs") and "presolve" not in options.solver_options:
        # HiGHS's presolve spends seconds on the few dense capacity rows of these models and removes
        # little (J = 8, H = 3: 44 s with it, 9 s without); CP-SAT has no such option name
        options = options.replace(solver_options={**options.solver_options, "presolve": "off"})
    return options.started()  # the time limit bounds the whole call: the warm start and the columns too


@requires_kind(KIND)
def solve_exact(
    instance: ElasticInstance,
    *,
    backend: str = "highs",
    options: SolveOptions | None = None,
    seed: Any = None,
    write_model: str | None = None,
    max_size: int | None = None,
    initial: Any = "heuristic",
) -> Result:
    """Exact minimum sum_j w_j c_j of (2) / (15) as set partitioning over the restricted Gamma_j.

    Parameters
    ----------
    instance : ElasticInstance
    backend : {"highs", "cpsat", "cpsat-direct"} or a Pyomo MILP solver name
        ``cpsat-direct`` is (2) without Gamma_j (:func:`~optsched.elastic.formulation.build_direct_cpsat`).
    options : SolveOptions
        Default 60 s, one thread, ``mip_abs_gap = 0.999`` when every weight is an integer, HiGHS
        presolve off (``solver_options={"presolve": "on"}`` restores it).
    initial : "heuristic", ElasticSchedule or None
        Warm start (default :func:`greedy`; used only if it places every job by T). For
        :func:`solve_maxweight` the heaviest of greedy by weight, greedy shortest first and A_maxweight.
    max_size : int, optional
        Refuse (ModelTooLargeError) when the estimated columns + rows exceed it.

    Returns
    -------
    Result
        The schedule, sum w_j c_j recomputed by the verifier's evaluator, bound and gap. The bound
        is never below :func:`~optsched.elastic.cheap_bounds.min_sum_bound` (``info["cheap_bound"]``
        names its part; :func:`solve_maxweight`'s never above
        :func:`~optsched.elastic.cheap_bounds.max_weight_bound`).

    Guarantee
    ---------
    status OPTIMAL => objective = min of (2) / (15) over integer starts (no optimum is lost by the
    restriction of Gamma_j: formulations/elastic.md#gamma).

    References
    ----------
    Zhou et al., (2), (8), (15); formulations/elastic.md#exact.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> r = solve_exact(toy_instance(), options=SolveOptions(time_limit=20, threads=1))
    >>> r.status.value, r.objective
    ('optimal', 25.0)
    """
    integer = all(float(j.weight).is_integer() for j in instance.jobs)
    options = _prepare(options, integer, backend)
    if isinstance(initial, str) and initial != "heuristic":
        raise InvalidOptionError(f"The 'initial' option must be 'heuristic', a schedule or None; got {initial!r}.")
    late = late_result(instance, f"{KIND}-exact[{backend}]")
    if late is not None:
        return late
    with progress.timeline():  # the cheap bound's and the warm start's seconds in info["phases"] too
        progress.phase("cheap bound")
        bound, which = min_sum_bound(instance)  # milliseconds: a bound whatever the solver proves
        if isinstance(initial, str):
            progress.phase("warm start (greedy)")
            initial = greedy_schedule(instance)
        return run_exact(
            instance,
            build=_builder("min", None, max_size),
            decode=_decode(instance),
            evaluate=lambda s: evaluate_objective(instance, s, OBJECTIVE),
            backend=backend,
            algorithm=f"{KIND}-exact[{backend}]",
            objective_name=OBJECTIVE,
            options=options,
            seed=seed,
            write_model=write_model,
            sense="min",
            initial=initial,
            check_initial=lambda s: violations(instance, s),
            own_backends=("cpsat", "cpsat-direct"),
            initial_bound=bound,
            bound_name=which,
            stop_at_bound=True,
        )


def _best_maxweight_start(instance: ElasticInstance, T: int, arrivals: bool = False) -> ElasticSchedule:
    """The heaviest of three fast schedules for (8): greedy by weight, greedy shortest first, A_maxweight
    (the last one only without arrivals: it has no (2j))."""
    cands = [
        greedy_schedule(instance, order=o, tau=T, arrivals=arrivals, require_all=False) for o in ("weight", "short")
    ]
    if not arrivals:
        run = a_maxweight(instance, tau=T)
        cands.append(
            ElasticSchedule({instance.jobs[j].id: c.config.assignment(c.start) for j, c in run.chosen.items()})
        )
    return max(cands, key=lambda s: evaluate_objective(instance, s, "scheduled_weight"))


def solve_maxweight(
    instance: ElasticInstance,
    *,
    tau: int | None = None,
    backend: str = "highs",
    options: SolveOptions | None = None,
    seed: Any = None,
    write_model: str | None = None,
    max_size: int | None = None,
    initial: Any = "heuristic",
    arrivals: bool = False,
) -> Result:
    """Exact (8) / (17): the largest total weight of jobs completing by ``tau`` (default T); jobs left out
    are absent from the schedule.

    ``arrivals=False`` (default) is (8) as printed, starts in [0, tau - d] ((7) has no (2j): a round's jobs
    have all arrived); ``arrivals=True`` adds (2j), starts in [a_j, tau - d] (the max-weight problem of the
    instance as it is, e.g. to compare with (2) on the same data).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> r = solve_maxweight(toy_instance(), tau=12, options=SolveOptions(time_limit=20, threads=1))
    >>> r.status.value, r.objective, len(r.schedule)
    ('optimal', 1.0, 1)
    >>> solve_maxweight(toy_instance(), tau=12, arrivals=True, options=SolveOptions(time_limit=20, threads=1)).objective
    1.0
    """
    check_kind(instance, KIND, "solve_maxweight")
    integer = all(float(j.weight).is_integer() for j in instance.jobs)
    options = _prepare(options, integer, backend)
    T = instance.horizon if tau is None else int(tau)
    bound, which = max_weight_bound(instance, T, arrivals=arrivals)
    if isinstance(initial, str):
        if initial != "heuristic":
            raise InvalidOptionError(f"The 'initial' option must be 'heuristic', a schedule or None; got {initial!r}.")
        initial = _best_maxweight_start(instance, T, arrivals)
    return run_exact(
        instance,
        build=_builder("max", T, max_size, arrivals),
        decode=_decode(instance),
        evaluate=lambda s: evaluate_objective(instance, s, "scheduled_weight"),
        backend=backend,
        algorithm=f"{KIND}-maxweight-exact[{backend}]",
        objective_name="scheduled_weight",
        options=options,
        seed=seed,
        write_model=write_model,
        sense="max",
        initial=initial,
        check_initial=lambda s: violations(instance, s, require_all=False, tau=T, arrivals=arrivals),
        own_backends=("cpsat", "cpsat-direct"),
        initial_bound=bound,
        bound_name=which,
        stop_at_bound=True,
    )
