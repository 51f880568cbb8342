"""The LP relaxation of (8) / (17), its dual (9), and column generation with the exact pricing oracle.

* :func:`build_lp8`: the LP of (8) / (17) over the whole restricted Gamma_j (columns start in
  [0, tau - d], no arrivals: (7) has no (2j)): ``at_most_one_schedule`` = (8b),
  ``capacity`` = (8a), objective ``scheduled_weight``. Restricting Gamma_j loses nothing in the LP
  either (a fractional solution moves its mass to dominating columns: ``formulations/elastic.md#gamma``).
* :func:`build_dual9`: the dual (9) as its own LP: ``u[j] >= 0``, ``delta[t, h, r] >= 0`` for every
  slot t in [0, tau), server and resource ((9b)); ``dual_feasibility`` = (9a), one row per column of
  Gamma_j; objective ``dual_objective`` = sum_j u_j + sum delta_h^r(t) C_h^r.
* :func:`solve_lp8`, :func:`solve_dual9`: both solved with HiGHS through Pyomo; their values are
  equal (strong duality, tested).
* :func:`column_generation`: the LP of (8) by column generation. The restricted master is solved
  with **highspy directly** (``master="highspy"``, default): new columns are appended with
  ``addCol`` and HiGHS re-solves from the previous basis; ``master="pyomo"`` rebuilds the Pyomo LP
  each iteration (the same values; measured slower, see ``formulations/elastic.md#lp``). Pricing is
  the exact oracle :func:`optsched.elastic.pricing.min_cost` (``residual=False``: all of Gamma_j) at
  the master's duals: delta_h^r(t) = dual of the capacity row (t, h, r) (0 for rows no column of the
  master touches), u_j = dual of (8b). A column of job j improves iff its reduced cost
  w_j - u_j - cost_j(delta) > 0.

The two builders are defined with the other exact models in :mod:`optsched.elastic.formulation`
(and importable from here), the two restricted masters in :mod:`optsched.elastic.lp_master`. Tested
in ``tests/elastic/test_lp.py``.

Every iteration gives a **valid upper bound**: with the master's delta (clipped at 0) and
u'_j = max(0, w_j - least cost of j) from the exact oracle, (u', delta) is feasible for (9), so
D = sum u'_j + sum delta C >= LP(8). The LP value is reported (``Result.info["lp_value"]``, status
``optimal``) only once pricing proves that no column has a positive reduced cost (then D equals the
master's value within the LP tolerance); otherwise the status is ``feasible``, ``lp_value`` is None
and ``objective`` (the master's value) <= LP(8) <= ``bound`` (= D).

>>> from optsched.elastic import toy_instance
>>> r = column_generation(toy_instance(), tau=12)
>>> r.status.value, round(r.objective, 6), round(solve_lp8(toy_instance(), tau=12).objective, 6)  # OPT(8) = 1
('optimal', 1.5, 1.5)
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.result import Result, Status, relative_gap
from optsched.elastic.exact import greedy_schedule
from optsched.elastic.formulation import build_dual9, build_lp8, check_tau
from optsched.elastic.gamma import Column, configs_by_index
from optsched.elastic.lp_master import HighspyMaster, PyomoMaster
from optsched.elastic.model import ElasticInstance
from optsched.elastic.prices import Prices
from optsched.elastic.pricing_oracle import min_cost_by_index
from optsched.exceptions import InvalidOptionError, SolverLimitWarning
from optsched.solvers import SolveOptions, check_model_size, solve_pyomo
from optsched.solvers.exact import resolve_options

#: Relative tolerance of the LP equalities (HiGHS's primal/dual feasibility tolerances are 1e-7).
LP_TOLERANCE = 1e-6
MASTERS = ("highspy", "pyomo")
LP_OBJECTIVE = "lp_scheduled_weight"
DUAL_OBJECTIVE = "dual_objective"


def _lp_options(options: SolveOptions | None, seed: Any) -> SolveOptions:
    return resolve_options(options, seed, SolveOptions(time_limit=60.0, threads=1))


def _solve_lp_model(
    model: Any, instance: ElasticInstance, algorithm: str, objective_name: str, options: SolveOptions, t0: float, info
) -> Result:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        sr = solve_pyomo(model, "highs", options)
    obj = sr.objective if sr.has_solution else None
    bound = obj if sr.status == Status.OPTIMAL else None
    status = sr.status if sr.status == Status.OPTIMAL else (Status.FEASIBLE if obj is not None else sr.status)
    if status != Status.OPTIMAL:
        warnings.warn(
            f"{algorithm} on {instance.name!r}: HiGHS stopped ({sr.message}); the LP value is not proven.",
            SolverLimitWarning,
            stacklevel=3,
        )
    return Result(
        algorithm=algorithm,
        instance=instance.name,
        objective=obj,
        objective_name=objective_name,
        schedule=None,
        status=status,
        bound=bound,
        gap=relative_gap(obj, bound),
        runtime=time.perf_counter() - t0,
        solver=f"{sr.solver} {sr.solver_version}".strip(),
        info={**info, "lp_value": obj if status == Status.OPTIMAL else None, "solver_runtime": sr.runtime},
    )


def solve_lp8(
    instance: ElasticInstance,
    *,
    tau: int | None = None,
    options: SolveOptions | None = None,
    seed: Any = None,
    max_size: int | None = None,
) -> Result:
    """The LP of (8) / (17) over all of the restricted Gamma_j, solved directly (HiGHS via Pyomo).

    Returns
    -------
    Result
        ``objective`` = ``bound`` = LP(8) when HiGHS proves the LP optimal; ``schedule`` is the
        fractional solution ``{(job id, start, config): x}`` (positive shares only); ``info`` has
        the column and row counts.

    Guarantee
    ---------
    OPT(8) <= LP(8) = (9) (strong duality); LP(8) >= every feasible schedule's weight (A_maxweight's).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> round(solve_lp8(toy_instance(), tau=15).objective, 6)
    2.0
    """
    t0 = time.perf_counter()
    options = _lp_options(options, seed)
    model = build_lp8(instance, tau=tau, max_size=max_size)
    cs = model.colset
    if not cs.cols:  # no schedule completes by tau: the LP is max 0 over the empty set of columns
        return Result(
            algorithm="elastic-lp8[highs]",
            instance=instance.name,
            objective=0.0,
            objective_name=LP_OBJECTIVE,
            schedule={},
            status=Status.OPTIMAL,
            bound=0.0,
            gap=0.0,
            runtime=time.perf_counter() - t0,
            solver="none",
            info={"columns": 0, "capacity_rows": 0, "tau": check_tau(instance, tau), "lp_value": 0.0},
        )
    r = _solve_lp_model(
        model,
        instance,
        "elastic-lp8[highs]",
        LP_OBJECTIVE,
        options,
        t0,
        {"columns": len(cs.cols), "capacity_rows": len(cs.rows), "tau": check_tau(instance, tau)},
    )
    if r.objective is not None:
        r.schedule = {
            (instance.jobs[c.j].id, c.start, c.config): float(model.x[k].value)
            for k, c in enumerate(cs.cols)
            if (model.x[k].value or 0.0) > 1e-9
        }
    return r


def solve_dual9(
    instance: ElasticInstance,
    *,
    tau: int | None = None,
    options: SolveOptions | None = None,
    seed: Any = None,
    max_size: int | None = None,
) -> Result:
    """The dual (9) solved directly as its own LP (HiGHS via Pyomo); ``schedule`` holds the optimal
    ``{"u": [...], "delta": array (tau, H, R)}``.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> round(solve_dual9(toy_instance(), tau=15).objective, 6)
    2.0
    """
    t0 = time.perf_counter()
    options = _lp_options(options, seed)
    T = check_tau(instance, tau)
    model = build_dual9(instance, tau=T, max_size=max_size)
    r = _solve_lp_model(
        model,
        instance,
        "elastic-dual9[highs]",
        DUAL_OBJECTIVE,
        options,
        t0,
        {"columns": len(model.cols), "tau": T},
    )
    if r.objective is not None:
        delta = np.zeros((T, instance.H, instance.R))
        for (t, h, rr), v in model.delta.items():
            delta[t, h, rr] = v.value or 0.0
        r.schedule = {"u": [float(model.u[j].value or 0.0) for j in range(instance.n_jobs)], "delta": delta}
    return r


# --- column generation --------------------------------------------------------------------------


@dataclass
class ColumnGenerationStats:
    """Per run: iterations (master solves), columns generated, the master's value and the dual bound
    D of each iteration, and the CPU seconds spent in the master and in pricing."""

    iterations: int = 0
    columns: int = 0
    values: list[float] | None = None
    bounds: list[float] | None = None
    master_seconds: float = 0.0
    pricing_seconds: float = 0.0


def _key(c: Column) -> tuple:
    cfg = c.config
    return (c.j, c.start, cfg.m, cfg.p, cfg.q, cfg.d, cfg.workers, cfg.ps)


def _greedy_columns(instance: ElasticInstance, T: int) -> list[Column]:
    """The columns of the greedy schedule by weight within T (none when it finds no schedule)."""
    g = greedy_schedule(instance, order="weight", tau=T, arrivals=False, require_all=False)
    out: list[Column] = []
    for jid, a in (g or {}).items():
        j = instance.index(jid)
        for cfg in configs_by_index(instance, j):
            if (cfg.d, cfg.m, cfg.p, cfg.q, cfg.workers) == (
                a.d,
                a.m,
                a.p,
                a.q,
                tuple(sorted(a.workers.items())),
            ) and cfg.ps == tuple(sorted(a.ps.items())):
                out.append(Column(cfg, a.start))
                break
    return out


def _priced(
    instance: ElasticInstance, prices: Prices, weights: np.ndarray, u: np.ndarray, tol: float
) -> tuple[list[Column], np.ndarray]:
    """One pricing round: each job's cheapest column at ``prices`` (exact oracle), those with a
    positive reduced cost (above ``tol``), and each job's u*_j = max(0, w_j - cost) for the bound."""
    new, ustar = [], np.zeros(instance.n_jobs)
    for j in range(instance.n_jobs):
        best = min_cost_by_index(instance, j, prices, residual=False)
        if best is None:  # no schedule of j completes by tau
            continue
        ustar[j] = max(0.0, weights[j] - best.cost)
        if weights[j] - u[j] - best.cost > tol:
            new.append(Column(best.config, best.start))
    return new, ustar


def column_generation(
    instance: ElasticInstance,
    *,
    tau: int | None = None,
    master: str = "highspy",
    max_iterations: int = 10_000,
    options: SolveOptions | None = None,
    seed: Any = None,
    initial: str | None = None,
) -> Result:
    """The LP of (8) / (17) by column generation with the exact pricing oracle (see the module doc).

    Parameters
    ----------
    tau : int, optional
        The deadline of (8) (default the instance horizon T).
    master : {"highspy", "pyomo"}
        How the restricted master is solved (default highspy: incremental, warm basis).
    max_iterations : int
        Master solves at most (default 10,000); stopping earlier leaves the LP value unproven.
    options : SolveOptions
        ``time_limit`` (default 60 s) for the whole loop, ``threads`` (1), ``seed``.
    initial : {None, "greedy"}
        Start from the empty master (default; at zero prices pricing then adds each job's
        earliest-completing column) or from the columns of the greedy schedule by weight.

    Returns
    -------
    Result
        ``objective``: the master's value (a feasible LP solution's weight, <= LP(8));
        ``bound``: D of the last iteration (a feasible solution of (9), >= LP(8)); status
        ``optimal`` and ``info["lp_value"]`` only when pricing found no column with a positive
        reduced cost (reduced costs <= LP_TOLERANCE * max(1, max w)). ``info``: ``iterations``,
        ``columns`` (generated), ``master``, ``master_seconds``, ``pricing_seconds`` (CPU),
        ``values``/``bounds`` per iteration, ``proven``. ``schedule``: the fractional solution
        ``{(job id, start, config): x}``.

    Guarantee
    ---------
    ``objective <= LP(8) <= bound`` at every stop; ``objective == bound == LP(8)`` (within the LP
    tolerance) when ``info["proven"]``.

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> r = column_generation(toy_instance(), tau=15)
    >>> r.info["proven"], round(r.objective, 6), round(r.bound, 6)
    (True, 2.0, 2.0)
    """
    if master not in MASTERS:
        raise InvalidOptionError(f"The 'master' option must be one of {MASTERS}; got {master!r}.")
    if initial not in (None, "greedy"):
        raise InvalidOptionError(f"The 'initial' option must be None or 'greedy'; got {initial!r}.")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or max_iterations < 1:
        raise InvalidOptionError(f"The 'max_iterations' option must be an integer >= 1; got {max_iterations!r}.")
    t0 = time.perf_counter()
    options = _lp_options(options, seed)
    T = check_tau(instance, tau)
    J, H, R = instance.n_jobs, instance.H, instance.R
    check_model_size("elastic column-generation master (8)", 0, J + T * H * R, None)
    mst: Any = HighspyMaster(instance, T, options) if master == "highspy" else PyomoMaster(instance, T, options)
    cols: list[Column] = []
    seen: set[tuple] = set()

    def add(c: Column) -> bool:
        k = _key(c)
        if k in seen:
            return False
        seen.add(k)
        cols.append(c)
        mst.add(c)
        return True

    if initial == "greedy":
        for c in _greedy_columns(instance, T):
            add(c)
    weights = np.asarray([j.weight for j in instance.jobs], dtype=float)
    tol = LP_TOLERANCE * max(1.0, float(weights.max()))
    C = np.asarray(instance.C, dtype=float)
    stats = ColumnGenerationStats(values=[], bounds=[])
    proven, message = False, ""
    value, bound, x = 0.0, math.inf, np.zeros(0)
    beta0 = np.zeros((T, H, R))
    while True:
        if stats.iterations >= max_iterations:
            message = f"iteration limit ({max_iterations})"
            break
        left = None if options.time_limit is None else options.time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            message = f"time limit ({options.time_limit} s)"
            break
        c0 = time.process_time()
        if cols:
            ok, value, u, delta, x = mst.solve(left)
        else:  # the empty master: x = 0, every dual 0
            ok, value, u, delta, x = True, 0.0, np.zeros(J), np.zeros((T, H, R)), np.zeros(0)
        stats.master_seconds += time.process_time() - c0
        stats.iterations += 1
        if not ok:
            message = "the master LP was not solved to optimality"
            break
        delta = np.maximum(delta, 0.0)
        c0 = time.process_time()
        new, ustar = _priced(instance, Prices(beta0, delta), weights, u, tol)
        stats.pricing_seconds += time.process_time() - c0
        bound = min(bound, float(ustar.sum() + (delta * C[None, :, :]).sum()))
        stats.values.append(value)
        stats.bounds.append(bound)
        if not new:
            proven = True
            break
        added = sum(add(c) for c in new)
        stats.columns += added
        if not added:  # every improving column is already in the master: LP tolerances
            message = "pricing returned only columns already in the master (numerical tolerance)"
            break
    solved = cols[: len(x)]  # columns added after the last master solve have no value yet
    obj = float(weights[[c.j for c in solved]] @ x) if solved else 0.0
    bound = max(bound, obj) if math.isfinite(bound) else bound
    gap = relative_gap(obj, bound)
    if proven and gap is not None and abs(bound - obj) > 10 * tol * max(1, J):
        proven, message = False, f"the dual bound {bound!r} is above the master's value {obj!r}"
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    if not proven:
        warnings.warn(
            f"elastic-lp8-colgen on {instance.name!r}: stopped by {message}; the LP value is not proven "
            f"(master {obj}, dual bound {bound}).",
            SolverLimitWarning,
            stacklevel=2,
        )
    return Result(
        algorithm=f"elastic-lp8-colgen[{master}]",
        instance=instance.name,
        objective=obj,
        objective_name=LP_OBJECTIVE,
        schedule={(instance.jobs[c.j].id, c.start, c.config): float(x[k]) for k, c in enumerate(solved) if x[k] > 1e-9},
        status=status,
        bound=bound if math.isfinite(bound) else None,
        gap=gap,
        runtime=time.perf_counter() - t0,
        solver="highspy" if master == "highspy" else "highs (pyomo)",
        info={
            "lp_value": obj if proven else None,
            "proven": proven,
            "message": message or "no column with a positive reduced cost",
            "iterations": stats.iterations,
            "columns": stats.columns,
            "master": master,
            "master_seconds": stats.master_seconds,
            "pricing_seconds": stats.pricing_seconds,
            "values": stats.values,
            "bounds": stats.bounds,
            "tau": T,
            "reduced_cost_tolerance": tol,
        },
    )
