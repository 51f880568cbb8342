"""Exact RAR-DDLS makespan on the slot grid: the time-indexed MILP (HiGHS via Pyomo) or, for <= 3
jobs, enumeration of every (placement, start slot) combination ((10)-(13) over whole schedules);
and theta*_u of (14)-(16)."""

from __future__ import annotations

import itertools
import time

from optsched.core.registry import register_algorithm, requires_kind
from optsched.core.result import Result, Status
from optsched.exceptions import InternalError, InvalidOptionError, ModelTooLargeError
from optsched.rarddls.evaluate import build_schedule, replay
from optsched.rarddls.formulation import build_milp, build_theta_star, patterns
from optsched.rarddls.model import KIND, OBJECTIVE, RarInstance
from optsched.solvers import SolveOptions, solve_pyomo

__all__ = ["solve_exact", "enumerate_optimum", "theta_star", "heuristic_horizon", "ENUM_MAX_JOBS"]

ENUM_MAX_JOBS = 3


def heuristic_horizon(instance: RarInstance) -> int:
    """The best makespan of SJF-BCO (kappa over sizes), LS and FF: an upper bound on T*."""
    from optsched.rarddls.sjfbco import first_fit, list_scheduling, sjf_bco

    best = instance.serial_horizon()
    for f, kw in ((sjf_bco, {"kappas": "sizes"}), (list_scheduling, {}), (first_fit, {})):
        try:
            best = min(best, int(f(instance, **kw).objective))
        except Exception:  # noqa: BLE001 - a heuristic that finds nothing gives no bound
            continue
    return best


def _feasible(instance: RarInstance, starts, pls, comp) -> bool:
    """(2): at every start slot (the only moments use grows), GPUs in use per server <= O_s."""
    caps = instance.O
    for t in set(starts):
        use = [0] * len(caps)
        for j, a in enumerate(starts):
            if a <= t < comp[j]:
                for s, y in enumerate(pls[j]):
                    use[s] += y
        if any(x > o for x, o in zip(use, caps, strict=True)):
            return False
    return True


def enumerate_optimum(instance: RarInstance, *, horizon: int | None = None,
                      max_combinations: int = 2_000_000) -> tuple[int, list[int], list[tuple[int, ...]]]:
    """Minimum makespan by enumeration of placements x start slots (min start 0, starts < horizon).

    Returns (T*, starts, placements). Only for <= 3 jobs (raises ModelTooLargeError beyond
    ``max_combinations``)."""
    J = instance.n_jobs
    if J > ENUM_MAX_JOBS:
        raise ModelTooLargeError(f"Enumeration is for <= {ENUM_MAX_JOBS} jobs; this instance has {J}. Use the MILP.")
    H = int(horizon) if horizon is not None else heuristic_horizon(instance)
    pats = [patterns(instance, j) for j in range(J)]
    n_comb = H ** J
    for p in pats:
        n_comb *= len(p)
    if n_comb > max_combinations:
        raise ModelTooLargeError(f"Enumeration would visit about {n_comb:,} combinations (> {max_combinations:,}); "
                                 f"use the MILP or a shorter horizon.")
    best, arg = H + 1, None
    for pl in itertools.product(*pats):
        dicts = [{s: y for s, y in enumerate(p) if y > 0} for p in pl]
        for st in itertools.product(range(H), repeat=J):
            if min(st) != 0 or max(st) >= best - 1:
                continue
            comp = replay(instance, st, dicts).completion
            ms = max(comp)
            if ms < best and _feasible(instance, st, pl, comp):
                best, arg = ms, (list(st), list(pl))
    if arg is None:
        raise InternalError(f"Enumeration found no schedule within the horizon {H}, which came from a feasible "
                            f"heuristic schedule; please report this bug.")
    return best, arg[0], arg[1]


@register_algorithm("rarddls-exact", KIND, exact=True, backends=("highs", "enumerate"),
                    suite_options={"options": SolveOptions(time_limit=30, threads=1)})
@requires_kind(KIND)
def solve_exact(instance: RarInstance, *, backend: str = "highs", options: SolveOptions | None = None, seed=None,
                horizon: int | None = None, max_size: int | None = None, write_model: str | None = None) -> Result:
    """Exact minimum makespan of RAR-DDLS (1)-(9) on the slot grid.

    Parameters
    ----------
    instance : RarInstance
    backend : {"highs", "enumerate"} or a Pyomo solver name
        ``highs``: the time-indexed MILP (:func:`~optsched.rarddls.formulation.build_milp`);
        ``enumerate``: every placement x start slot (<= 3 jobs).
    options : SolveOptions
        Default 60 s, 1 thread, ``mip_abs_gap = 0.999`` (integer makespan).
    horizon : int, optional
        Slots of the grid; default the best heuristic makespan (SJF-BCO, LS, FF), an upper bound on T*.

    Returns
    -------
    Result
        ``objective`` = makespan recomputed by replaying the decoded starts and placements; ``bound``
        never above it; ``status`` optimal only if the recomputed gap is below 1 slot.

    Guarantee
    ---------
    status OPTIMAL => objective = min over all schedules satisfying (1)-(9) with integer starts.

    References
    ----------
    Yu et al. (MobiHoc '22), Problem RAR-DDLS and (10)-(13); formulations/rarddls.md#milp.

    Examples
    --------
    >>> from optsched.rarddls import toy_instance
    >>> r = solve_exact(toy_instance(), options=SolveOptions(time_limit=20, threads=1))
    >>> r.status.value, r.objective
    ('optimal', 9.0)
    """
    options = options or SolveOptions(time_limit=60, threads=1, mip_abs_gap=0.999)
    if options.mip_abs_gap is None:
        options = options.replace(mip_abs_gap=0.999)
    if seed is not None:
        options = options.replace(seed=int(seed))
    t0 = time.perf_counter()
    H = int(horizon) if horizon is not None else heuristic_horizon(instance)
    info: dict = {"horizon_slots": H}
    if backend == "enumerate":
        best, starts, pl = enumerate_optimum(instance, horizon=H)
        pls = [{s: y for s, y in enumerate(p) if y > 0} for p in pl]
        sched = build_schedule(instance, starts, pls)
        return Result(algorithm="rarddls-exact[enumerate]", instance=instance.name, objective=float(best),
                      objective_name=OBJECTIVE, schedule=sched, status=Status.OPTIMAL, bound=float(best), gap=0.0,
                      runtime=time.perf_counter() - t0, solver="enumeration", info=info)
    if backend == "cpsat":
        raise InvalidOptionError("rarddls-exact has no CP-SAT model; use backend='highs' or 'enumerate'.")
    model = build_milp(instance, horizon=H, max_size=max_size)
    info["n_vars"] = model.nvariables()
    info["n_constraints"] = model.nconstraints()
    if write_model:
        from optsched.solvers import write_model as _write

        _write(model, write_model)
    sr = solve_pyomo(model, backend, options)
    sched, obj = None, None
    if sr.has_solution:
        J = instance.n_jobs
        starts, pls = [], []
        for j in range(J):
            starts.append(max(range(H), key=lambda t: model.s[j, t].value or 0))
            q = max(range(len(model.pats[j])), key=lambda q: model.use[j, q].value or 0)
            pls.append({s: y for s, y in enumerate(model.pats[j][q]) if y > 0})
        rep = replay(instance, starts, pls)
        obj = float(rep.makespan)
        if sr.objective is not None and obj > sr.objective + 1e-6:
            raise InternalError(f"The replayed makespan {obj} exceeds the MILP's {sr.objective}: model and evaluator "
                                f"disagree (a bug: please report it).")
        sched = build_schedule(instance, starts, pls, completion=rep.completion)
    bound = None if sr.bound is None else float(sr.bound)
    if bound is not None and obj is not None:
        import math

        bound = min(float(math.ceil(bound - 1e-6)), obj)  # integer makespan; never beyond the incumbent
    gap = None if obj is None or bound is None else max(0.0, obj - bound) / max(abs(obj), 1e-10)
    status = sr.status
    if obj is not None:
        status = Status.OPTIMAL if (bound is not None and obj - bound < 1 - 1e-9) else Status.FEASIBLE
    info.update({"solver_message": sr.message, "solver_runtime": sr.runtime,
                 "milp_objective": sr.objective})
    return Result(algorithm=f"rarddls-exact[{backend}]", instance=instance.name, objective=obj,
                  objective_name=OBJECTIVE, schedule=sched, status=status, bound=bound, gap=gap,
                  runtime=time.perf_counter() - t0, solver=f"{sr.solver} {sr.solver_version}", info=info)


def theta_star(instance: RarInstance, *, options: SolveOptions | None = None, max_size: int | None = None
               ) -> tuple[float, float, bool]:
    """theta*_u of (14)-(16): (value, proven lower bound, proven optimal)."""
    from optsched.rarddls.sjfbco import theta_lower_bound

    lb = theta_lower_bound(instance)
    options = options or SolveOptions(time_limit=20, threads=1)
    m = build_theta_star(instance, max_size=max_size)
    sr = solve_pyomo(m, "highs", options)
    if not sr.has_solution:
        return float("nan"), lb, False
    val = float(sr.objective)
    bound = max(lb, float(sr.bound) if sr.bound is not None else lb)
    return val, min(bound, val), sr.status == Status.OPTIMAL
