"""Exact optimal job order for objective (1) (static setting): four independent back ends.

* ``highs`` - Pyomo linear-ordering MILP (:func:`~optsched.sojourn.formulation.build_lop`) solved
  by HiGHS, with the 3-cycle rows (L2) added lazily (default) or all at once.
* ``cpsat`` - the same model in CP-SAT (one worker, ``linearization_level=2``), scaled integer costs.
* ``dp`` - dynamic program over subsets (N <= 20).
* ``enumerate`` - all N! orders (N <= 10), the paper's OPTIMAL.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from optsched.core.registry import register_algorithm
from optsched.core.result import Result, Status
from optsched.exceptions import InvalidOptionError, SolverLimitWarning
from optsched.sojourn.evaluate import PairCosts, pair_costs
from optsched.sojourn.model import OBJECTIVE, SojournInstance, SojournSchedule, check_instance
from optsched.solvers import SolveOptions

__all__ = ["solve_exact", "solve_lop_highs", "solve_lop_cpsat", "local_search", "BACKENDS", "OPT_RTOL"]

BACKENDS = ("highs", "cpsat", "dp", "enumerate")
#: An order is called optimal when (objective - bound) <= OPT_RTOL * objective (+1e-9).
OPT_RTOL = 1e-7


def local_search(pc: PairCosts, order: list[int]) -> list[int]:
    """Adjacent-swap descent (each swap changes (1) by ``c[j,i] - c[i,j]``, Eq. 13)."""
    order = list(order)
    improved = True
    while improved:
        improved = False
        for p in range(len(order) - 1):
            i, j = order[p], order[p + 1]
            if pc.c[j, i] < pc.c[i, j] - 1e-15:
                order[p], order[p + 1] = j, i
                improved = True
    return order


def _status(obj: float, bound: float | None) -> Status:
    if bound is None:
        return Status.FEASIBLE
    return Status.OPTIMAL if obj - bound <= OPT_RTOL * abs(obj) + 1e-9 else Status.FEASIBLE


def solve_lop_highs(pc: PairCosts, options: SolveOptions, *, cycles: str = "lazy", solver: str = "highs",
                    write_model: str | None = None, max_rounds: int = 200) -> dict[str, Any]:
    """Solve the linear-ordering MILP with HiGHS (or another Pyomo MILP solver).

    ``cycles="lazy"``: start without (L2) rows, solve, add every 3-cycle of the incumbent's
    tournament, repeat until the tournament is acyclic (then it is optimal for the full model:
    it is feasible and optimal for a relaxation). ``cycles="all"``: all C(N,3) rows up front.
    A time limit during the loop returns the best *feasible* order found (a cyclic tournament is
    repaired, never returned) with the last relaxation's bound.
    """
    from optsched.sojourn.formulation import (
        add_transitivity,
        before_matrix,
        build_lop,
        order_from_y,
        three_cycles,
    )
    from optsched.solvers import solve_pyomo
    from optsched.solvers import write_model as _write

    n = pc.n
    t0 = time.perf_counter()
    deadline = None if options.time_limit is None else t0 + options.time_limit
    from optsched.sojourn.policies import pair_criterion  # noqa: F401  (keeps import graph explicit)

    rank_idx = list(np.argsort((pc.a + pc.b) / pc.s, kind="stable"))
    incumbent = local_search(pc, rank_idx)
    inc_val = pc.order_value(incumbent)
    if n == 1:
        return {"order": [0], "objective": float(pc.d.sum()), "bound": float(pc.d.sum()), "rounds": 0,
                "rows": 0, "message": "one job", "solver": "none", "solver_version": ""}
    # objective (1) is not integral: an absolute gap such as the CLI's 0.999 (meant for integer
    # objectives) or HiGHS's default 1e-6 would stop early; prove to 1e-10 (use mip_rel_gap to stop early)
    options = options.replace(mip_abs_gap=1e-10)
    model = build_lop(pc, cycles="all" if cycles == "all" else "none")
    if write_model:
        _write(model, write_model)
    bound, rounds, msg, version = None, 0, "", ""
    proven = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        while rounds < max_rounds:
            rounds += 1
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0.01:
                msg = "time limit in the lazy loop"
                break
            sr = solve_pyomo(model, solver, options.replace(time_limit=left))
            version, msg = sr.solver_version, sr.message
            if sr.bound is not None:
                bound = sr.bound if bound is None else max(bound, sr.bound)
            if not sr.has_solution:
                break
            y = {(i, j): model.y[i, j].value for (i, j) in model.PAIRS}
            B = before_matrix(n, y)
            cyc = three_cycles(B)
            if not cyc:
                order = order_from_y(B)
                val = pc.order_value(order)
                if val < inc_val:
                    incumbent, inc_val = order, val
                proven = sr.status == Status.OPTIMAL
                if proven:
                    bound = max(bound if bound is not None else -np.inf, sr.objective if sr.bound is None else sr.bound)
                break
            if cycles == "all":  # cannot happen with every row present
                raise InvalidOptionError("HiGHS returned a cyclic order with every 3-cycle row present (a bug).")
            # repair the cyclic tournament into an order (never returned as is) and keep the best
            cand = local_search(pc, order_from_y(B))
            v = pc.order_value(cand)
            if v < inc_val:
                incumbent, inc_val = cand, v
            add_transitivity(model, cyc)
    return {"order": incumbent, "objective": inc_val, "bound": bound, "rounds": rounds, "rows": len(model.CYCLES),
            "message": msg, "solver": solver, "solver_version": version, "proven": proven}


def solve_lop_cpsat(pc: PairCosts, options: SolveOptions, *, write_model: str | None = None) -> dict[str, Any]:
    """Solve the linear-ordering model with CP-SAT (all 3-cycle rows; RANK order as a hint)."""
    from optsched.sojourn.formulation import build_lop_cpsat, order_from_y
    from optsched.solvers import solve_cpsat
    from optsched.solvers import write_model as _write

    n = pc.n
    rank_idx = local_search(pc, list(np.argsort((pc.a + pc.b) / pc.s, kind="stable")))
    if n == 1:
        return {"order": [0], "objective": float(pc.d.sum()), "bound": float(pc.d.sum()), "message": "one job",
                "solver": "none", "solver_version": ""}
    model, h = build_lop_cpsat(pc, hint=rank_idx)
    if write_model:
        _write(model, write_model)
    so = dict(options.solver_options)
    so.setdefault("linearization_level", 2)
    opts = options.replace(threads=options.threads or 1, solver_options=so)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        sr = solve_cpsat(model, opts)
    out = {"message": sr.message, "solver": "cpsat", "solver_version": sr.solver_version, "order": None,
           "objective": None, "bound": None}
    if sr.bound is not None:
        out["bound"] = h["constant"] + sr.bound / h["scale"] - h["eps"]
    if sr.has_solution:
        B = np.zeros((n, n), dtype=bool)
        for (i, j), v in h["y"].items():
            if sr.raw.Value(v):
                B[i, j] = True
            else:
                B[j, i] = True
        order = order_from_y(B)
        out["order"], out["objective"] = order, pc.order_value(order)
    return out


@register_algorithm("sojourn-exact", "sojourn", exact=True, backends=BACKENDS,
                    suite_options={"options": SolveOptions(time_limit=30, threads=1)})
def solve_exact(instance: SojournInstance, *, backend: str = "highs", options: SolveOptions | None = None,
                seed: int | None = None, write_model: str | None = None, cycles: str = "lazy",
                pc: PairCosts | None = None) -> Result:
    """Optimal non-preemptive job order for objective (1) (one server, all arrivals 0).

    By Thm III.1 an optimal *static* schedule never preempts, so the best order is the optimum
    over static schedules (the paper's OPTIMAL); see :mod:`optsched.sojourn.adaptive` for
    adaptive policies.

    Parameters
    ----------
    instance : SojournInstance
    backend : {"highs", "cpsat", "dp", "enumerate"} or a Pyomo MILP solver name
    options : SolveOptions
        Time limit (default 60 s), threads, seed; ``dp``/``enumerate`` ignore them.
    seed : int, optional
        Overrides ``options.seed``.
    write_model : str, optional
        Write the built model (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT).
    cycles : {"lazy", "all"}
        3-cycle rows for the MILP: added lazily (default) or all up front.
    pc : PairCosts, optional
        Precomputed pair costs.

    Returns
    -------
    Result
        ``schedule`` (an order), ``objective`` recomputed exactly from it, ``bound`` (a valid lower
        bound on objective (1)), ``gap``, ``status`` OPTIMAL only when ``objective - bound <= 1e-7
        objective``; a time-limited run is FEASIBLE with a :class:`SolverLimitWarning`.

    Raises
    ------
    InvalidInstanceError
        Arrivals or several servers (not the static setting).
    ModelTooLargeError
        ``dp`` above N = 20, or a model above the size limit.

    Guarantee
    ---------
    ``status == OPTIMAL``  =>  ``objective <= (1 + 1e-7) * min over orders of E[S]``.

    Notes
    -----
    Pair costs O(N^3). ``dp`` O(2^N N^2); ``enumerate`` O(N! N^2); the MILP has N(N-1)/2 binaries
    and up to C(N,3) rows.

    References
    ----------
    Yao, Paolieri, Golubchik, Eq. (1), Thm III.1-III.2; ``formulations/sojourn.md#exact-order``.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> r = solve_exact(inst, options=SolveOptions(time_limit=10, threads=1))
    >>> r.status.value, r.schedule.order, round(r.objective, 10)
    ('optimal', (1, 2), 9.1)
    """
    from optsched.sojourn.dp import exhaustive_search, subset_dp

    check_instance(instance)
    options = options or SolveOptions()
    if seed is not None:
        options = options.replace(seed=int(seed))
    if not isinstance(backend, str):
        raise InvalidOptionError(f"The 'backend' option must be one of {BACKENDS}; got {backend!r}.")
    if cycles not in ("lazy", "all"):
        raise InvalidOptionError(f"The 'cycles' option must be 'lazy' or 'all'; got {cycles!r}.")
    t0 = time.perf_counter()
    pc = pc or pair_costs(instance)
    info: dict[str, Any] = {"backend": backend}
    solver = backend
    if backend == "dp":
        obj, order = subset_dp(pc)
        bound, status = obj, Status.OPTIMAL
    elif backend == "enumerate":
        obj, order = exhaustive_search(pc)
        bound, status = obj, Status.OPTIMAL
    else:
        if backend == "cpsat":
            out = solve_lop_cpsat(pc, options, write_model=write_model)
        else:
            out = solve_lop_highs(pc, options, cycles=cycles, solver=backend, write_model=write_model)
            info.update(rounds=out["rounds"], cycle_rows=out["rows"])
        solver = f"{out['solver']} {out['solver_version']}".strip()
        info["solver_message"] = out["message"]
        order, bound = out["order"], out["bound"]
        obj = None if order is None else pc.order_value(order)
        if bound is not None and obj is not None and bound > obj:
            # a solver's bound can exceed the true value of its own solution by its tolerances
            info["solver_bound"] = bound
            bound = obj
        if obj is None:
            status = Status.NO_SOLUTION
        else:
            status = _status(obj, bound)
            if backend != "cpsat" and not out.get("proven", True):
                status = Status.FEASIBLE if status == Status.OPTIMAL and bound is None else status
        if status != Status.OPTIMAL:
            warnings.warn(f"sojourn-exact[{backend}] stopped ({out['message']}) with objective {obj}, bound {bound}: "
                          f"not proven optimal.", SolverLimitWarning, stacklevel=2)
    sched = None if order is None else SojournSchedule(order=[instance.jobs[k].id for k in order])
    gap = None if obj is None or bound is None else max(0.0, obj - bound) / max(abs(obj), 1e-10)
    return Result(algorithm=f"sojourn-exact[{backend}]", instance=instance.name, objective=obj,
                  objective_name=OBJECTIVE, schedule=sched, status=status, bound=bound, gap=gap,
                  runtime=time.perf_counter() - t0, solver=solver, info=info)
