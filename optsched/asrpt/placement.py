"""Exact placement of one job on given free GPUs: MILP (Pyomo, HiGHS) and enumeration.

The MILP minimizes alpha_i(x) of eq. (4)-(7) over count matrices x[s, m] with eq. (2) (every
replica placed) and eq. (3) (at most ``free[m]`` GPUs on server m). Under our reading of (5)-(6)
(``formulations/asrpt.md#reading``) beta^m_{i,s} is *linear* in the neighbours' counts
x[s-1, m], x[s+1, m] once we know whether stage s is on m (y) and whether all of stage s is on m
(z), so the model is small and exact: S*M integers, 2*S*M binaries, one continuous alpha.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.asrpt.model import AsrptInstance, AsrptJob
from optsched.asrpt.timing import allreduce_time, alpha, beta_upper, check_reading, params
from optsched.core.result import Status
from optsched.core.seeds import as_generator
from optsched.exceptions import (
    InfeasibleError,
    InternalError,
    InvalidInstanceError,
    ModelTooLargeError,
    SolverError,
)
from optsched.solvers import SolveOptions, check_model_size, solve_pyomo


@dataclass
class PlacementResult:
    """An exact (or enumerated) placement: ``x`` (S x n_servers), ``alpha`` recomputed from x."""

    x: np.ndarray | None
    alpha: float | None
    status: Status
    bound: float | None = None
    gap: float | None = None
    runtime: float = 0.0
    method: str = ""
    info: dict[str, Any] = field(default_factory=dict)


def _check_free(job: AsrptJob, free, exact_usage: bool) -> np.ndarray:
    free = np.asarray(free)
    if free.ndim != 1 or np.any(free < 0) or not np.all(np.mod(free, 1) == 0):
        raise InvalidInstanceError(f"'free' must list non-negative integer GPU counts per server; got {free.tolist()}.")
    free = free.astype(np.int64)
    tot = int(free.sum())
    if tot < job.gpus or (exact_usage and tot != job.gpus):
        need = "exactly" if exact_usage else "at least"
        raise InfeasibleError(
            f"{job.label} needs {need} g_i = {job.gpus} GPUs; the free GPUs {free.tolist()} add "
            f"up to {tot}. Free more GPUs or choose other servers."
        )
    return free


def build_placement(
    job: AsrptJob,
    free,
    *,
    instance: AsrptInstance | None = None,
    g: int | None = None,
    b_inter: float | None = None,
    b_intra: float | None = None,
    exact_usage: bool = False,
    max_size: int | None = None,
    reading: str = "nic-share",
):
    """Build (never solve) the placement MILP for ``job`` on servers with ``free`` GPUs.

    Components are named after the labels of ``formulations/asrpt.md``: ``replicas_placed`` (2),
    ``server_capacity`` (3), ``comp`` (4), ``comm`` (5), ``allreduce`` (6), ``bottleneck`` (7),
    ``stage_on_server`` / ``stage_local`` (the indicator links) and the objective
    ``per_iteration_time``. ``exact_usage=True`` makes (3) an equality (a Problem (8) pattern).
    ``reading="ring-boundary"`` (the second reading of (6)) adds binaries ``w[s, m, v]`` = [x[s, m] = v]
    (label ``replica_count``) so that the AllReduce time, a function of x[s, m] alone, stays linear.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> m = build_placement(inst.jobs[0], [2, 2], instance=inst)
    >>> sorted(c.name for c in m.component_objects(ctype=None, descend_into=False))[:4]
    ['A', 'K', 'M', 'S']
    """
    import pyomo.environ as pyo

    check_reading(reading)
    g, b_inter, b_intra = params(instance, g, b_inter, b_intra)
    free = _check_free(job, free, exact_usage)
    S, M = job.n_stages, len(free)
    check_model_size("asrpt placement", 3 * S * M + 1, 5 * S * M + S + M, max_size)
    st = job.stages
    m = pyo.ConcreteModel(name=f"placement[{job.label}]")
    m.S = pyo.RangeSet(0, S - 1)
    m.M = pyo.RangeSet(0, M - 1)
    m.A = pyo.Set(initialize=[s for s in range(S) if st[s].k > 1])  # stages with an AllReduce
    m.K = pyo.Param(m.S, initialize={s: st[s].k for s in range(S)})
    m.x = pyo.Var(m.S, m.M, domain=pyo.NonNegativeIntegers, bounds=lambda _, s, mm: (0, min(st[s].k, int(free[mm]))))
    m.y = pyo.Var(m.S, m.M, domain=pyo.Binary)  # stage s has a replica on server m
    m.z = pyo.Var(m.A, m.M, domain=pyo.Binary)  # all k_s replicas of stage s are on server m
    m.alpha = pyo.Var(domain=pyo.NonNegativeReals)

    @m.Constraint(m.S)
    def replicas_placed(m, s):  # (2)
        return sum(m.x[s, k] for k in m.M) == st[s].k

    @m.Constraint(m.M)
    def server_capacity(m, k):  # (3), one job
        used = sum(m.x[s, k] for s in m.S)
        return used == int(free[k]) if exact_usage else used <= int(free[k])

    @m.Constraint(m.S, m.M, [0, 1])
    def stage_on_server(m, s, k, side):  # y = [x > 0]
        return m.x[s, k] <= st[s].k * m.y[s, k] if side == 0 else m.y[s, k] <= m.x[s, k]

    @m.Constraint(m.A, m.M, [0, 1])
    def stage_local(m, s, k, side):  # z = [x == k_s]
        return st[s].k * m.z[s, k] <= m.x[s, k] if side == 0 else m.x[s, k] - (st[s].k - 1) <= m.z[s, k]

    @m.Expression(m.S)
    def comp(m, s):  # (4) (counted only where y = 1, through the bottleneck rows)
        return st[s].p_f + st[s].p_b

    @m.Expression(m.S, m.M)
    def comm(m, s, k):  # (5): NIC share g * bytes / B_inter, local bytes / B_intra
        e = 0.0
        if s > 0:
            loc = m.x[s - 1, k] / st[s - 1].k
            e += 2.0 * st[s].d_in * ((1 - loc) * g / b_inter + loc / b_intra)
        if s + 1 < S:
            loc = m.x[s + 1, k] / st[s + 1].k
            e += 2.0 * st[s].d_out * ((1 - loc) * g / b_inter + loc / b_intra)
        return e

    if reading == "ring-boundary":
        m.AV = pyo.Set(
            dimen=3,
            initialize=[
                (s, k, v)
                for s in range(S)
                if st[s].k > 1
                for k in range(M)
                for v in range(1, min(st[s].k, int(free[k])) + 1)
            ],
        )
        m.w = pyo.Var(m.AV, domain=pyo.Binary)  # w[s, m, v] = [x[s, m] = v]

        @m.Constraint(m.A, m.M, [0, 1])
        def replica_count(m, s, k, side):  # x = sum_v v w, at most one v
            ws = [(v, m.w[s, k, v]) for v in range(1, min(st[s].k, int(free[k])) + 1)]
            if side == 0:
                return m.x[s, k] == sum(v * w for v, w in ws)
            return sum(w for _, w in ws) <= 1

    @m.Expression(m.S, m.M)
    def allreduce(m, s, k):  # (6)
        if st[s].k <= 1:
            return 0.0
        vol = 2.0 * (st[s].k - 1) * st[s].h / st[s].k
        if reading == "ring-boundary":
            return sum(
                allreduce_time(job, s, v, g, b_inter, b_intra, reading) * m.w[s, k, v]
                for v in range(1, min(st[s].k, int(free[k])) + 1)
            )
        return vol * g / b_inter - vol * (g / b_inter - 1.0 / b_intra) * m.z[s, k]

    @m.Constraint(m.S, m.M)
    def bottleneck(m, s, k):  # (7): alpha >= beta where the stage is present
        big = beta_upper(job, s, g=g, b_inter=b_inter, b_intra=b_intra)
        return m.alpha >= m.comp[s] + m.comm[s, k] + m.allreduce[s, k] - big * (1 - m.y[s, k])

    m.per_iteration_time = pyo.Objective(expr=m.alpha, sense=pyo.minimize)
    m.free = [int(v) for v in free]
    return m


def _decode(model, S: int, M: int) -> np.ndarray:
    return np.array([[int(round(model.x[s, k].value or 0)) for k in range(M)] for s in range(S)], dtype=np.int64)


def solve_placement(
    job: AsrptJob,
    free,
    *,
    instance: AsrptInstance | None = None,
    g=None,
    b_inter=None,
    b_intra=None,
    exact_usage: bool = False,
    options: SolveOptions | None = None,
    backend: str = "highs",
    reading: str = "nic-share",
) -> PlacementResult:
    """Exact minimum-alpha placement of ``job`` on ``free`` GPUs per server (MILP, HiGHS by default).

    Returns
    -------
    PlacementResult
        ``x`` decoded from the solution and ``alpha`` *recomputed* from x by
        :func:`optsched.asrpt.timing.alpha`; ``status`` OPTIMAL only when HiGHS proves it (gap 0 by
        default); ``bound`` the solver's proven lower bound on alpha.

    Raises
    ------
    InfeasibleError
        Fewer free GPUs than g_i.

    Guarantee
    ---------
    status OPTIMAL => alpha = min { alpha_i(x) : (2), (3) } up to the solver's tolerances.

    References
    ----------
    formulations/asrpt.md#placement-milp; paper Table II (ILP column).

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> r = solve_placement(inst.jobs[0], [1, 2], instance=inst, options=SolveOptions(threads=1))
    >>> r.status.value, r.x.tolist(), round(r.alpha, 6)
    ('optimal', [[0, 2]], 0.3)
    """
    g, b_inter, b_intra = params(instance, g, b_inter, b_intra)
    options = options or SolveOptions(time_limit=60, threads=1)
    t0 = time.perf_counter()
    model = build_placement(job, free, g=g, b_inter=b_inter, b_intra=b_intra, exact_usage=exact_usage, reading=reading)
    sr = solve_pyomo(model, backend, options)
    x = _decode(model, job.n_stages, len(model.free)) if sr.has_solution else None
    a = alpha(job, x, g=g, b_inter=b_inter, b_intra=b_intra, reading=reading) if x is not None else None
    if a is not None and sr.objective is not None and not np.isclose(a, sr.objective, rtol=1e-6, atol=1e-6):
        raise InternalError(
            f"The placement MILP's alpha {sr.objective} differs from eq. (7) on its x, {a}; "
            f"model and formula disagree (a bug: please report it)."
        )
    gap = None if a is None or sr.bound is None else max(0.0, a - sr.bound) / max(a, 1e-12)
    return PlacementResult(
        x=x,
        alpha=a,
        status=sr.status,
        bound=sr.bound,
        gap=gap,
        runtime=time.perf_counter() - t0,
        method=f"milp[{backend}]",
        info={"solver_runtime": sr.runtime, "solver": f"{sr.solver} {sr.solver_version}"},
    )


def _stage_splits(k: int, caps: np.ndarray):
    """All ways to put k replicas on servers with capacities ``caps``."""
    n = len(caps)

    def rec(i, left):
        if i == n - 1:
            if left <= caps[i]:
                yield (left,)
            return
        for v in range(min(left, int(caps[i])) + 1):
            for rest in rec(i + 1, left - v):
                yield (v, *rest)

    yield from rec(0, k)


def count_placements(job: AsrptJob, free) -> int:
    """Number of count matrices the enumeration would visit (upper bound, ignoring capacity coupling)."""
    free = np.asarray(free, dtype=np.int64)
    total = 1
    for st in job.stages:
        total *= sum(1 for _ in _stage_splits(st.k, free))
    return total


def enumerate_placement(
    job: AsrptJob,
    free,
    *,
    instance: AsrptInstance | None = None,
    g=None,
    b_inter=None,
    b_intra=None,
    exact_usage: bool = False,
    limit: int = 2_000_000,
    reading: str = "nic-share",
) -> PlacementResult:
    """Exhaustive search over count matrices (the cross-check of :func:`solve_placement`).

    Raises
    ------
    ModelTooLargeError
        More than ``limit`` candidate matrices.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> r = enumerate_placement(inst.jobs[0], [1, 2], instance=inst)
    >>> r.x.tolist(), round(r.alpha, 6)
    ([[0, 2]], 0.3)
    """
    g, b_inter, b_intra = params(instance, g, b_inter, b_intra)
    free = _check_free(job, free, exact_usage)
    n = count_placements(job, free)
    if n > limit:
        raise ModelTooLargeError(
            f"Enumerating placements of {job.label} on {free.tolist()} visits up to {n:,} "
            f"matrices, above the limit {limit:,}; use solve_placement (MILP)."
        )
    t0 = time.perf_counter()
    best, best_x = np.inf, None
    rows = [list(_stage_splits(st.k, free)) for st in job.stages]
    for combo in itertools.product(*rows):
        x = np.array(combo, dtype=np.int64)
        used = x.sum(axis=0)
        if np.any(used > free) or (exact_usage and np.any(used != free)):
            continue
        a = alpha(job, x, g=g, b_inter=b_inter, b_intra=b_intra, reading=reading)
        if a < best - 1e-15:
            best, best_x = a, x
    if best_x is None:
        raise InfeasibleError(f"No placement of {job.label} uses exactly {free.tolist()}.")
    return PlacementResult(
        x=best_x,
        alpha=float(best),
        status=Status.OPTIMAL,
        bound=float(best),
        gap=0.0,
        runtime=time.perf_counter() - t0,
        method="enumeration",
        info={"candidates": n},
    )


def alpha_min_exact(
    job: AsrptJob, instance: AsrptInstance, *, options: SolveOptions | None = None, reading: str = "nic-share"
) -> float:
    """alpha^min_i: the exact minimum of eq. (7) over all placements on the empty cluster.

    Raises :class:`~optsched.exceptions.SolverError` if the MILP is not proven optimal (a true minimum
    is needed by the bounds).
    """
    free = [instance.g] * min(instance.M, job.gpus)  # identical empty servers: g_i of them always suffice
    try:
        r = enumerate_placement(job, free, instance=instance, limit=20_000, reading=reading)
    except ModelTooLargeError:
        r = solve_placement(job, free, instance=instance, options=options, reading=reading)
    if r.status != Status.OPTIMAL:
        raise SolverError(
            f"alpha^min of {job.label} was not proven optimal ({r.status}); raise the time limit "
            f"(options=SolveOptions(time_limit=...))."
        )
    return float(r.alpha)


def availability_patterns(
    g_i: int, g: int, n: int = 20, *, min_servers: int = 2, max_servers: int = 4, seed=0
) -> list[list[int]]:
    """``n`` random GPU availabilities (free GPUs per server, each <= g, adding up to g_i, spread over
    ``min_servers``..``max_servers`` servers): a fragmented cluster."""
    rng = as_generator(seed)
    out = []
    while len(out) < n:
        k = int(rng.integers(min_servers, max_servers + 1))
        cuts = np.sort(rng.choice(np.arange(1, g_i), size=k - 1, replace=False))
        parts = np.diff(np.concatenate([[0], cuts, [g_i]]))
        if np.all(parts <= g):
            out.append([int(p) for p in parts])
    return out
