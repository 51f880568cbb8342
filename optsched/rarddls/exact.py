"""Exact RAR-DDLS makespan on the slot grid: the time-indexed MILP (HiGHS via Pyomo) or, for <= 3
jobs, enumeration of every (placement, start slot) combination ((10)-(13) over whole schedules);
and theta*_u of (14)-(16)."""

from __future__ import annotations

import itertools
import math
import time

from optsched.core.registry import requires_kind
from optsched.core.result import Result, Status
from optsched.exceptions import InternalError, InvalidOptionError, ModelTooLargeError
from optsched.rarddls.evaluate import build_schedule, decisions, replay_unchecked
from optsched.rarddls.formulation import build_milp, build_theta_star, milp_to_cpsat, patterns
from optsched.rarddls.model import KIND, OBJECTIVE, RarInstance
from optsched.rarddls.sjfbco import first_fit, list_scheduling, sjf_bco, theta_lower_bound
from optsched.solvers import SolveOptions, solve_cpsat, solve_pyomo
from optsched.solvers import write_model as _write

ENUM_MAX_JOBS = 3


def best_heuristic(instance: RarInstance) -> tuple[int, list[int] | None, list[dict[int, int]] | None]:
    """The best schedule of SJF-BCO (kappa over sizes), LS, FF and :func:`sgs_schedule`:
    (makespan, starts, placements), an upper bound on T* with a schedule that attains it (starts and placements
    None only for the serial bound, when every heuristic fails)."""
    best: tuple[int, list[int] | None, list[dict[int, int]] | None] = (instance.serial_horizon(), None, None)
    for f, kw in ((sjf_bco, {"kappas": "sizes"}), (list_scheduling, {}), (first_fit, {})):
        try:
            r = f(instance, **kw)
        except Exception:
            continue
        if int(r.objective) < best[0] or (int(r.objective) == best[0] and best[1] is None):
            st, pl = decisions(instance, r.schedule)
            best = (int(r.objective), st, pl)
    ms, st, pl = sgs_schedule(instance)
    if ms < best[0] or (ms == best[0] and best[1] is None):
        best = (int(ms), st, pl)
    return best


def heuristic_horizon(instance: RarInstance) -> int:
    """The best makespan of SJF-BCO (kappa over sizes), LS, FF and :func:`sgs_schedule`: an upper bound on T*."""
    return best_heuristic(instance)[0]


def _fits(instance: RarInstance, starts, pls, comp, jobs) -> bool:
    """(2) for the given job indices: GPUs in use per server <= O_s at each of their start slots."""
    caps = instance.O
    for t in {starts[j] for j in jobs}:
        use = [0] * len(caps)
        for j in jobs:
            if starts[j] <= t < comp[j]:
                for s, y in pls[j].items():
                    use[s] += y
        if any(x > o for x, o in zip(use, caps, strict=True)):
            return False
    return True


def sgs_schedule(
    instance: RarInstance, *, n_orders: int = 24, seed: int = 0
) -> tuple[int, list[int], list[dict[int, int]]]:
    """Serial schedule generation: jobs one by one (in a few fixed and ``n_orders`` seeded random orders), each at
    the (placement, start) that ends it earliest among the starts {0} U {completions so far}, keeping (2) for every
    job placed so far (completions replayed with (6)-(9), so a later start may slow an earlier job).

    Returns (makespan, starts, placements) of the best order; a feasible schedule, an upper bound on T*."""
    import numpy as np

    n = instance.n_jobs
    pats = [[{s: y for s, y in enumerate(p) if y > 0} for p in patterns(instance, j)] for j in range(n)]
    d1 = [-(-job.iterations // instance.phi(j, 1, 0)) for j, job in enumerate(instance.jobs)]
    area = [instance.jobs[j].gpus * d1[j] for j in range(n)]
    orders = [
        sorted(range(n), key=lambda j: (-area[j], j)),
        sorted(range(n), key=lambda j: (-d1[j], j)),
        sorted(range(n), key=lambda j: (-instance.jobs[j].gpus, -d1[j], j)),
    ]
    rng = np.random.default_rng(seed)
    orders += [list(rng.permutation(n)) for _ in range(n_orders)]
    far = 10**9
    best = (far, None, None)
    for order in orders:
        starts, pls = [far] * n, [pats[j][0] for j in range(n)]
        done: list[int] = []
        comp = [far] * n
        ok = True
        for j in order:
            cand = sorted({0} | {comp[k] for k in done})
            choice = None
            for pl in pats[j]:
                for t in cand:
                    if choice is not None and t >= choice[0]:
                        break
                    starts[j], pls[j] = t, pl
                    c = replay_unchecked(instance, starts, pls, stop_at=far).completion
                    if _fits(instance, starts, pls, c, [*done, j]):
                        key = (c[j], max(c[k] for k in [*done, j]))
                        if choice is None or key < choice[1]:
                            choice = (c[j], key, t, pl)
                        break
            if choice is None:
                ok = False
                break
            starts[j], pls[j] = choice[2], choice[3]
            done.append(j)
            comp = replay_unchecked(instance, starts, pls, stop_at=far).completion
        if ok:
            ms = max(comp)
            if ms < best[0]:
                best = (ms, list(starts), [dict(p) for p in pls])
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


def enumerate_optimum(
    instance: RarInstance, *, horizon: int | None = None, max_combinations: int = 2_000_000
) -> tuple[int, list[int], list[tuple[int, ...]]]:
    """Minimum makespan by enumeration of placements x start slots (min start 0, starts < horizon).

    Returns (T*, starts, placements). Only for <= 3 jobs (raises ModelTooLargeError beyond
    ``max_combinations``)."""
    J = instance.n_jobs
    if J > ENUM_MAX_JOBS:
        raise ModelTooLargeError(f"Enumeration is for <= {ENUM_MAX_JOBS} jobs; this instance has {J}. Use the MILP.")
    H = int(horizon) if horizon is not None else heuristic_horizon(instance)
    pats = [patterns(instance, j) for j in range(J)]
    n_comb = H**J
    for p in pats:
        n_comb *= len(p)
    if n_comb > max_combinations:
        raise ModelTooLargeError(
            f"Enumeration would visit about {n_comb:,} combinations (> {max_combinations:,}); "
            f"use the MILP or a shorter horizon."
        )
    best, arg = H + 1, None
    for pl in itertools.product(*pats):
        dicts = [{s: y for s, y in enumerate(p) if y > 0} for p in pl]
        for st in itertools.product(range(H), repeat=J):
            if min(st) != 0 or max(st) >= best - 1:
                continue
            comp = replay_unchecked(instance, st, dicts).completion
            ms = max(comp)
            if ms < best and _feasible(instance, st, pl, comp):
                best, arg = ms, (list(st), list(pl))
    if arg is None:
        raise InternalError(
            f"Enumeration found no schedule within the horizon {H}, which came from a feasible "
            f"heuristic schedule; please report this bug."
        )
    return best, arg[0], arg[1]


@requires_kind(KIND)
def solve_exact(
    instance: RarInstance,
    *,
    backend: str = "highs",
    options: SolveOptions | None = None,
    seed=None,
    horizon: int | None = None,
    max_size: int | None = None,
    write_model: str | None = None,
    heuristic_start: bool = True,
) -> Result:
    """Exact minimum makespan of RAR-DDLS (1)-(9) on the slot grid.

    Parameters
    ----------
    instance : RarInstance
    backend : {"highs", "cpsat", "enumerate"} or a Pyomo solver name
        ``highs``: the time-indexed MILP (:func:`~optsched.rarddls.formulation.build_milp`);
        ``cpsat``: the same rows with every variable integral, solved by CP-SAT
        (:func:`~optsched.rarddls.formulation.milp_to_cpsat`; ``threads`` = workers);
        ``enumerate``: every placement x start slot (<= 3 jobs).
    options : SolveOptions
        Default 60 s, 1 thread, ``mip_abs_gap = 0.999`` (integer makespan).
    write_model : str, optional
        Write the model: ``.lp``/``.mps`` the MILP (with either back end), ``.pb``/``.pbtxt`` the
        CP-SAT model (``cpsat`` only).
    horizon : int, optional
        Upper bound on the makespan searched (slots); default the best heuristic makespan H_heur
        (:func:`best_heuristic`: SJF-BCO, LS, FF, SGS). With a heuristic schedule of makespan H_heur <= horizon
        in hand the MILP is built on H_heur - 1 slots and only looks for a shorter schedule (infeasible there:
        the heuristic schedule is optimal); if H_heur meets :func:`lower_bound` no MILP is solved.
    heuristic_start : bool
        True (default): run :func:`best_heuristic` first, as above. False: no heuristic at all; the
        model is built on ``horizon`` slots (default the serial bound :meth:`RarInstance.T`) and solved
        from scratch (the MILP alone; slower, the same optimum).

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
    if heuristic_start:
        H_heur, st0, pl0 = best_heuristic(instance)
        H = int(horizon) if horizon is not None else H_heur
    else:
        st0 = pl0 = None
        H = int(horizon) if horizon is not None else instance.T()
        H_heur = H + 1  # no incumbent: the model searches every makespan up to H
    if H < 1:
        raise InvalidOptionError(f"horizon must be >= 1 slot; got {horizon!r}.")
    info: dict = {"horizon_slots": H, "heuristic_makespan": H_heur if heuristic_start else None}
    if backend == "enumerate":
        return _enumerated(instance, H, info, t0)
    lb = lower_bound(instance)
    info["lower_bound"] = lb
    info["cheap_bound"] = "lower_bound: the longest job's least slots, or the cluster's GPU-slot area"
    # prove the incumbent: with a heuristic schedule of makespan H_heur <= H in hand, the MILP only has to look for
    # a strictly shorter one, on H_heur - 1 slots (no solution there = the incumbent is optimal)
    incumbent = st0 is not None and H_heur <= H
    grid = H_heur - 1 if incumbent else H
    info["model_slots"] = grid
    solver, sr = "none", None
    if incumbent and H_heur <= lb:
        info.update(
            {
                "n_vars": 0,
                "n_constraints": 0,
                "solver_message": "incumbent meets the lower bound",
                "solver_runtime": 0.0,
                "milp_objective": None,
            }
        )
    else:
        model = build_milp(instance, horizon=grid, max_size=max_size)
        sr, value = _solve_model(model, backend, options, write_model, info)
        solver = f"{sr.solver} {sr.solver_version}"
    sched, obj, bound = None, None, None
    if sr is not None and sr.has_solution:
        sched, obj, bound = _decoded(instance, model, grid, sr, value)
    elif incumbent:
        obj = float(H_heur)
        sched = build_schedule(instance, st0, pl0)
        if sr is None or sr.status == Status.INFEASIBLE:
            bound = obj  # nothing shorter exists on the grid of H_heur - 1 slots
        elif sr.bound is not None:
            bound = float(math.ceil(sr.bound - 1e-6))
    if obj is not None:
        bound = max(float(lb), bound if bound is not None else float(lb))
        bound = min(bound, obj)  # never beyond the incumbent
    gap = None if obj is None or bound is None else max(0.0, obj - bound) / max(abs(obj), 1e-10)
    status = sr.status if sr is not None else Status.OPTIMAL
    if obj is not None:
        status = Status.OPTIMAL if (bound is not None and obj - bound < 1 - 1e-9) else Status.FEASIBLE
    return Result(
        algorithm=f"rarddls-exact[{backend}]",
        instance=instance.name,
        objective=obj,
        objective_name=OBJECTIVE,
        schedule=sched,
        status=status,
        bound=bound,
        gap=gap,
        runtime=time.perf_counter() - t0,
        solver=solver,
        info=info,
    )


def _enumerated(instance: RarInstance, H: int, info: dict, t0: float) -> Result:
    """:func:`solve_exact`'s ``enumerate`` back end: every placement x start slot within H slots."""
    best, starts, pl = enumerate_optimum(instance, horizon=H)
    pls = [{s: y for s, y in enumerate(p) if y > 0} for p in pl]
    return Result(
        algorithm="rarddls-exact[enumerate]",
        instance=instance.name,
        objective=float(best),
        objective_name=OBJECTIVE,
        schedule=build_schedule(instance, starts, pls),
        status=Status.OPTIMAL,
        bound=float(best),
        gap=0.0,
        runtime=time.perf_counter() - t0,
        solver="enumeration",
        info=info,
    )


def _solve_model(model, backend: str, options: SolveOptions, write_model: str | None, info: dict):
    """Solve the MILP with HiGHS (or a Pyomo solver) or, ``cpsat``, its all-integral copy with
    CP-SAT, writing the model first when asked. Returns the solver's result and a function giving a
    model variable's value in the solution (None without one)."""
    info["n_vars"] = model.nvariables()
    info["n_constraints"] = model.nconstraints()
    cpsat_file = bool(write_model) and str(write_model).lower().endswith((".pb", ".pbtxt"))
    if write_model and not cpsat_file:  # .lp/.mps: the MILP (also of the cpsat back end)
        _write(model, write_model)
    if backend == "cpsat":  # the same rows, all variables integral, solved by CP-SAT
        cm, cvar = milp_to_cpsat(model)
        if cpsat_file:
            _write(cm, write_model)
        sr = solve_cpsat(cm, options)

        def value(v):
            return sr.raw.value(cvar[v]) if sr.has_solution else None
    else:
        sr = solve_pyomo(model, backend, options)

        def value(v):
            return v.value

    info.update({"solver_message": sr.message, "solver_runtime": sr.runtime, "milp_objective": sr.objective})
    return sr, value


def _decoded(instance: RarInstance, model, grid: int, sr, value) -> tuple:
    """The schedule of a solution (starts and placements read from the variables, replayed), its
    makespan and the solver's bound rounded up to a whole slot."""
    starts, pls = [], []
    for j in range(instance.n_jobs):
        starts.append(max(range(grid), key=lambda t: value(model.s[j, t]) or 0))
        q = max(range(len(model.pats[j])), key=lambda q: value(model.use[j, q]) or 0)
        pls.append({s: y for s, y in enumerate(model.pats[j][q]) if y > 0})
    rep = replay_unchecked(instance, starts, pls)
    obj = float(rep.makespan)
    if sr.objective is not None and obj > sr.objective + 1e-6:
        raise InternalError(
            f"The replayed makespan {obj} exceeds the MILP's {sr.objective}: model and evaluator "
            f"disagree (a bug: please report it)."
        )
    bound = float(math.ceil(sr.bound - 1e-6)) if sr.bound is not None else None  # integer makespan
    return build_schedule(instance, starts, pls, completion=rep.completion), obj, bound


def min_slots(instance: RarInstance, j: int) -> int:
    """Fewest slots job index j can run: min over its placements (r servers) of ceil(F_j / phi_j(r, 1 if split));
    phi is nonincreasing in p and a split job counts itself (p >= 1)."""
    F = instance.jobs[j].iterations
    rs = {sum(1 for y in q if y > 0) for q in patterns(instance, j)}
    return min(-(-F // instance.phi(j, r, 1 if r >= 2 else 0)) for r in rs)


def lower_bound(instance: RarInstance) -> int:
    """max(max_j d_j, ceil(sum_j G_j d_j / N)) with d_j = :func:`min_slots`: every job runs at least d_j slots on
    G_j GPUs."""
    d = [min_slots(instance, j) for j in range(instance.n_jobs)]
    area = sum(job.gpus * dj for job, dj in zip(instance.jobs, d, strict=True))
    return int(max(max(d), -(-area // instance.N)))


def theta_star(
    instance: RarInstance, *, options: SolveOptions | None = None, max_size: int | None = None
) -> tuple[float, float, bool]:
    """theta*_u of (14)-(16): (value, proven lower bound, proven optimal)."""
    lb = theta_lower_bound(instance)
    options = options or SolveOptions(time_limit=20, threads=1)
    m = build_theta_star(instance, max_size=max_size)
    sr = solve_pyomo(m, "highs", options)
    if not sr.has_solution:
        return float("nan"), lb, False
    val = float(sr.objective)
    bound = max(lb, float(sr.bound) if sr.bound is not None else lb)
    return val, min(bound, val), sr.status == Status.OPTIMAL
