"""Exact models of paper 001 over the restricted Gamma_j (build only; :mod:`optsched.elastic.exact` solves).

* :func:`build_set_partitioning`: (2) / (15) with ``sense="min"`` (``one_schedule_per_job`` = (2a),
  ``capacity`` = (2h) / (15b) in the form (8a), objective ``weighted_completion`` = (2)), or (8) /
  (17) with ``sense="max"`` (``at_most_one_schedule`` = (8b), ``capacity`` = (8a), objective
  ``scheduled_weight`` = (8)), both on binary ``x[k]`` over the flat column list ``model.cols``.
* :func:`build_set_partitioning_cpsat`: the same model in CP-SAT (integer weights are required
  there; fractional ones are scaled and rounded, ``resolution`` reported).
* :func:`build_direct_cpsat`: (2) / (15) directly in CP-SAT, without Gamma_j (one interval per job,
  a cumulative per server and resource with variable demands, (2f) by table, (2d) / (2i) by
  enforcement): an independent check of the Gamma_j restriction.
* :func:`build_lp8`, :func:`build_dual9`: the LP relaxation of (8) / (17) and its dual (9)
  (:mod:`optsched.elastic.lp` solves them, directly and by column generation).

Columns come from :mod:`optsched.elastic.gamma`; the size is estimated from counts before any
column is enumerated (:class:`~optsched.exceptions.ModelTooLargeError`). Component names are the
labels of ``formulations/elastic.md#exact``.

>>> from optsched.elastic import toy_instance
>>> m = build_set_partitioning(toy_instance())
>>> len(m.cols), len(m.one_schedule_per_job)
(1554, 2)

Tested in ``tests/elastic/test_exact.py``, ``tests/elastic/test_lp.py`` and ``tests/test_formulation_labels.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.elastic.gamma import Column, columns_by_index, configs_by_index, estimate_columns
from optsched.elastic.model import ElasticInstance
from optsched.elastic.schedule import Assignment, ElasticSchedule
from optsched.exceptions import InvalidOptionError, TimeLimitReached
from optsched.solvers import check_model_size, new_cp_model

SENSES = ("min", "max")


@dataclass(frozen=True)
class ColumnVariables:
    """Handles of the set-partitioning models over Gamma_j: the column set, and for CP-SAT the
    Boolean of each column (``x``), the objective scale (integer coefficients) and the rounding of
    each coefficient (``eps``, 0 when every weight is an integer). The Pyomo model keeps its
    variables as ``model.x``; its handles carry ``x=None``."""

    cs: ColumnSet
    x: list | None = None
    scale: int = 1
    eps: float = 0.0


@dataclass(frozen=True)
class DirectJobVariables:
    """One job of the direct CP-SAT model: start, duration, one-hot worker type ``msel`` and PS
    type ``psel``, workers ``y[h][m]`` and PSs ``s[h][p]`` per server, and ``q`` (one server)."""

    start: Any
    d: Any
    msel: list
    psel: list
    y: list
    s: list
    q: Any


@dataclass(frozen=True)
class DirectVariables:
    """Handles of :func:`build_direct_cpsat`: one :class:`DirectJobVariables` per job and the
    weight scale of the objective."""

    jobs: list
    wscale: int


@dataclass
class ColumnSet:
    """The flat column list, the columns of each job index, and the capacity rows that can bind:
    ``rows[(h, r, t)] = [(k, f_jh^r(l_k)), ...]`` kept only if sum over jobs of their largest use
    there exceeds C_h^r (a row that can never be violated is left out)."""

    cols: list[Column]
    by_job: list[list[int]]
    rows: dict[tuple[int, int, int], list[tuple[int, float]]]
    sense: str
    tau: int | None
    arrivals: bool


def check_deadline(deadline: float | None, what: str, every: int = 1, count: int = 0) -> None:
    """Raise :class:`~optsched.exceptions.TimeLimitReached` naming ``what`` once ``deadline``
    (``time.monotonic()``) is past; the clock is read when ``count`` is a multiple of ``every``
    (a loop passes its counter). ``None``: no deadline."""
    if deadline is not None and count % every == 0 and time.monotonic() >= deadline:
        raise TimeLimitReached(f"the time limit was reached while {what}")


def column_set(
    instance: ElasticInstance,
    *,
    sense: str = "min",
    tau: int | None = None,
    arrivals: bool | None = None,
    max_size: int | None = None,
    configs_by_job: list | None = None,
    deadline: float | None = None,
) -> ColumnSet:
    """Enumerate the columns of every job and the binding capacity rows (after a size estimate).

    ``configs_by_job`` replaces the restricted Gamma_j (e.g. by :func:`~optsched.elastic.gamma.all_configs`
    in the tests); the size estimate then counts those columns. ``deadline`` (``time.monotonic()``):
    :class:`~optsched.exceptions.TimeLimitReached` once it is past (checked after every job and
    every 4,096 columns or rows)."""
    if sense not in SENSES:
        raise InvalidOptionError(f"The 'sense' option must be one of {SENSES}; got {sense!r}.")
    if arrivals is None:
        arrivals = sense == "min"  # (7) has no (2j)
    T = instance.horizon if tau is None else int(tau)
    if configs_by_job is None:
        est = estimate_columns(instance, tau=T, arrivals=arrivals)
    else:
        est = sum(
            max(0, T - c.d - (instance.jobs[j].arrival if arrivals else 0) + 1)
            for j, cl in enumerate(configs_by_job)
            for c in cl
        )
    rows_est = instance.H * instance.R * T
    check_model_size(
        f"elastic {'(2)' if sense == 'min' else '(8)'} set-partitioning", est, instance.n_jobs + rows_est, max_size
    )
    cols: list[Column] = []
    by_job: list[list[int]] = []
    for j in range(instance.n_jobs):
        check_deadline(deadline, f"enumerating the columns of Gamma_j (job {j + 1} of {instance.n_jobs})")
        cfgs = configs_by_index(instance, j) if configs_by_job is None else configs_by_job[j]
        cj = columns_by_index(instance, j, tau=T, arrivals=arrivals, cfgs=cfgs)
        by_job.append(list(range(len(cols), len(cols) + len(cj))))
        cols.extend(cj)
    touch: dict[tuple[int, int, int], list[tuple[int, float]]] = {}
    for k, c in enumerate(cols):
        check_deadline(deadline, f"collecting the capacity rows ({len(cols):,} columns)", 4096, k)
        for h, vec in c.config.use:
            for r, f in enumerate(vec):
                if f > 0:
                    for t in range(c.start, c.end):
                        touch.setdefault((h, r, t), []).append((k, f))
    job_of = [c.j for c in cols]
    rows = {}
    for i, (key, lst) in enumerate(touch.items()):
        check_deadline(deadline, f"collecting the capacity rows ({len(touch):,} slots)", 4096, i)
        h, r, _ = key
        best: dict[int, float] = {}
        for k, f in lst:
            j = job_of[k]
            if f > best.get(j, 0.0):
                best[j] = f
        if sum(best.values()) > instance.C[h][r] + 1e-9:
            rows[key] = lst
    return ColumnSet(cols, by_job, rows, sense, tau, arrivals)


def _coef(instance: ElasticInstance, cs: ColumnSet, k: int) -> float:
    c = cs.cols[k]
    w = instance.jobs[c.j].weight
    return w * (c.start + c.config.d) if cs.sense == "min" else w


def build_set_partitioning(
    instance: ElasticInstance,
    *,
    sense: str = "min",
    tau: int | None = None,
    arrivals: bool | None = None,
    max_size: int | None = None,
    cs: ColumnSet | None = None,
    deadline: float | None = None,
):
    """Pyomo set-partitioning model over the restricted Gamma_j (see the module doc).

    ``model.cols`` is the flat column list and ``model.x[k]`` the choice of column k. ``deadline``
    as in :func:`column_set` (checked while the rows are built too).
    """
    import pyomo.environ as pyo  # deferred: Pyomo is heavy

    cs = cs or column_set(instance, sense=sense, tau=tau, arrivals=arrivals, max_size=max_size, deadline=deadline)
    check_deadline(deadline, "building the set-partitioning model")
    m = pyo.ConcreteModel(name=f"elastic-{'min' if cs.sense == 'min' else 'maxweight'}[{instance.name}]")
    m.cols = cs.cols
    m.colset = cs
    m.K = pyo.RangeSet(0, len(cs.cols) - 1) if cs.cols else pyo.Set(initialize=[])
    m.x = pyo.Var(m.K, domain=pyo.Binary)
    m.J = pyo.RangeSet(0, instance.n_jobs - 1)
    if cs.sense == "min":

        @m.Constraint(m.J)
        def one_schedule_per_job(m, j):  # (2a) = (8b) with equality
            return sum(m.x[k] for k in cs.by_job[j]) == 1
    else:

        @m.Constraint(m.J)
        def at_most_one_schedule(m, j):  # (8b)
            if not cs.by_job[j]:
                return pyo.Constraint.Skip
            return sum(m.x[k] for k in cs.by_job[j]) <= 1

    keys = sorted(cs.rows)
    m.ROWS = pyo.Set(initialize=keys, dimen=3)
    built = [0]

    @m.Constraint(m.ROWS)
    def capacity(m, h, r, t):  # (2h) / (8a) / (15b) / (17a)
        built[0] += 1
        check_deadline(deadline, f"building the capacity rows ({len(keys):,})", 256, built[0])
        return sum(f * m.x[k] for k, f in cs.rows[h, r, t]) <= instance.C[h][r]

    check_deadline(deadline, "building the objective")
    expr = sum(_coef(instance, cs, k) * m.x[k] for k in range(len(cs.cols)))
    if cs.sense == "min":
        m.weighted_completion = pyo.Objective(expr=expr, sense=pyo.minimize)  # (2)
    else:
        m.scheduled_weight = pyo.Objective(expr=expr, sense=pyo.maximize)  # (8)
    return m


def build_set_partitioning_cpsat(
    instance: ElasticInstance,
    *,
    sense: str = "min",
    tau: int | None = None,
    arrivals: bool | None = None,
    max_size: int | None = None,
    cs: ColumnSet | None = None,
    deadline: float | None = None,
) -> tuple[Any, ColumnVariables]:
    """The same model in CP-SAT. Returns ``(model, ColumnVariables)``: the Booleans ``x``, the
    objective ``scale`` (integer coefficients) and ``eps``, the rounding of each coefficient (0 when
    every weight is an integer). Capacities are scaled to
    integers by the smallest power of 10 that makes every use integral (up to 10^6). ``deadline`` as
    in :func:`column_set`."""
    cs = cs or column_set(instance, sense=sense, tau=tau, arrivals=arrivals, max_size=max_size, deadline=deadline)
    model = new_cp_model()
    x = [model.new_bool_var(f"x[{k}]") for k in range(len(cs.cols))]
    for j in range(instance.n_jobs):
        if cs.sense == "min":
            model.add_exactly_one(x[k] for k in cs.by_job[j])
        elif cs.by_job[j]:
            model.add_at_most_one(x[k] for k in cs.by_job[j])

    for i, ((h, r, _t), lst) in enumerate(cs.rows.items()):
        check_deadline(deadline, f"building the capacity rows ({len(cs.rows):,})", 256, i)
        s = _int_scale_of([f for _, f in lst] + [instance.C[h][r]])
        model.add(sum(int(round(f * s)) * x[k] for k, f in lst) <= int(round(instance.C[h][r] * s + 1e-9)))
    coefs = [_coef(instance, cs, k) for k in range(len(cs.cols))]
    sc = _int_scale_of(coefs)
    eps = 0.0 if sc < 10**6 else 0.5 / sc * max(1, instance.n_jobs)
    obj = sum(int(round(c * sc)) * x[k] for k, c in enumerate(coefs))
    if cs.sense == "min":
        model.minimize(obj)
    else:
        model.maximize(obj)
    return model, ColumnVariables(cs=cs, x=x, scale=sc, eps=eps)


def _int_scale_of(vals: list[float], what: str | None = None) -> int:
    """The smallest power of 10 (up to 10^6) that makes every value integral. Past 10^6: 10^6 (the
    caller accounts for the rounding) or, if ``what`` names the values, InvalidOptionError."""
    for s in (1, 10, 100, 1000, 10**4, 10**5, 10**6):
        if all(abs(v * s - round(v * s)) < 1e-9 * max(1.0, abs(v * s)) for v in vals):
            return s
    if what is None:
        return 10**6
    raise InvalidOptionError(f"The direct CP-SAT model needs {what} with at most 6 decimals; scale the instance.")


def build_direct_cpsat(instance: ElasticInstance, *, max_size: int | None = None) -> tuple[Any, DirectVariables]:
    """(2) / (15) directly in CP-SAT, without Gamma_j: per job one-hot worker type ``msel`` and PS type
    ``psel``, integer workers ``y[h][m]`` and PSs ``s[h][p]`` per server, one-hot worker count
    ``nsel`` ((2f) by table: d >= d_q(N) for the chosen m, p, q, N), ``q`` <=> exactly one server used
    ((2d) / (15a) by enforcement), (2i) enforced per (m, p) on each server that holds a PS, and one
    interval [start, start + d) per job in a cumulative per (server, resource) with variable demands
    ((2h) / (15b)). Objective (2): sum_j w_j (start_j + d_j), weights scaled to integers.

    Returns ``(model, DirectVariables)``; the decoder reads ``handles.jobs[j]``.
    """
    H, R, T = instance.H, instance.R, instance.horizon
    M, P = instance.M, instance.P
    ps = instance.is_ps
    n_vars = sum(H * (M + P) + M + P + j.chunks + 4 + H * R for j in instance.jobs)
    check_model_size("elastic (2) direct CP-SAT", n_vars, instance.n_jobs * (H * (M * P + 4) + 8) + H * R, max_size)
    rscale = [
        _int_scale_of(
            [instance.C[h][r] for h in range(H)]
            + [instance.e[m][r] for m in range(M)]
            + [instance.z[p][r] for p in range(P)],
            f"resource '{instance.resources[r]}'",
        )
        for r in range(R)
    ]
    bw = [t.bandwidth for t in instance.worker_types] + [t.bandwidth for t in instance.ps_types]
    bscale = _int_scale_of(bw, "bandwidths")
    wscale = _int_scale_of([j.weight for j in instance.jobs], "weights")
    model = new_cp_model()
    jobs = []
    dem_by = {(h, r): [] for h in range(H) for r in range(R)}
    ivs = []
    for j, job in enumerate(instance.jobs):
        D = job.chunks
        start = model.new_int_var(job.arrival, T - 1, f"start[{j}]")
        d = model.new_int_var(1, T, f"d[{j}]")
        end = model.new_int_var(1, T, f"end[{j}]")
        iv = model.new_interval_var(start, d, end, f"iv[{j}]")
        msel = [model.new_bool_var(f"m[{j},{m}]") for m in range(M)]
        model.add_exactly_one(msel)
        psel = [model.new_bool_var(f"p[{j},{p}]") for p in range(P)]
        if ps:
            model.add_exactly_one(psel)
        y = [[model.new_int_var(0, D, f"y[{j},{h},{m}]") for m in range(M)] for h in range(H)]
        s = [[model.new_int_var(0, D + 1, f"s[{j},{h},{p}]") for p in range(P)] for h in range(H)]
        for h in range(H):
            for m in range(M):
                model.add(y[h][m] == 0).only_enforce_if(msel[m].negated())  # (2b)
            for p in range(P):
                model.add(s[h][p] == 0).only_enforce_if(psel[p].negated())  # (2c)
        n = sum(y[h][m] for h in range(H) for m in range(M))
        nsel = [model.new_bool_var(f"n[{j},{k}]") for k in range(1, D + 1)]
        model.add_exactly_one(nsel)
        model.add(n == sum((k + 1) * nsel[k] for k in range(D)))  # 1 <= N <= D (2g)
        if ps:
            model.add(sum(s[h][p] for h in range(H) for p in range(P)) >= 1)  # (2e)
        used = [model.new_bool_var(f"u[{j},{h}]") for h in range(H)]
        hasps = [model.new_bool_var(f"hp[{j},{h}]") for h in range(H)]
        for h in range(H):
            tot = sum(y[h]) + sum(s[h])
            model.add(tot >= 1).only_enforce_if(used[h])
            model.add(tot == 0).only_enforce_if(used[h].negated())
            model.add(sum(s[h]) >= 1).only_enforce_if(hasps[h])
            model.add(sum(s[h]) == 0).only_enforce_if(hasps[h].negated())
        q = model.new_bool_var(f"q[{j}]")
        model.add(sum(used) == 1).only_enforce_if(q)  # (2d) / (15a)
        model.add(sum(used) >= 2).only_enforce_if(q.negated())
        if ps:  # (2i): b_m (N - y_h) <= B_p s_h on every server holding a PS
            for h in range(H):
                for m in range(M):
                    bm = round(instance.worker_types[m].bandwidth * bscale)
                    for p in range(P):
                        Bp = round(instance.ps_types[p].bandwidth * bscale)
                        model.add(bm * (n - y[h][m]) <= Bp * s[h][p]).only_enforce_if([msel[m], psel[p], hasps[h]])
        # (2f) by table: d >= d_q(N) for the chosen m, p, q and N
        for m in range(M):
            for p in range(P) if ps else [None]:
                for qq in (0, 1):
                    for k in range(1, D + 1):
                        lits = [msel[m], nsel[k - 1], q if qq else q.negated()] + ([psel[p]] if ps else [])
                        model.add(d >= instance.duration(j, m, p, qq, k)).only_enforce_if(lits)
        for h in range(H):
            for r in range(R):
                expr = sum(round(instance.e[m][r] * rscale[r]) * y[h][m] for m in range(M)) + sum(
                    round(instance.z[p][r] * rscale[r]) * s[h][p] for p in range(P)
                )
                ub = round(instance.C[h][r] * rscale[r])
                dem = model.new_int_var(0, max(ub, 0), f"dem[{j},{h},{r}]")  # a demand above C is infeasible anyway
                model.add(dem == expr)
                dem_by[h, r].append(dem)
        ivs.append(iv)
        jobs.append(DirectJobVariables(start=start, d=d, msel=msel, psel=psel, y=y, s=s, q=q))
    for h in range(H):
        for r in range(R):
            model.add_cumulative(ivs, dem_by[h, r], round(instance.C[h][r] * rscale[r]))  # (2h) / (15b)
    model.minimize(
        sum(round(j.weight * wscale) * (jobs[k].start + jobs[k].d) for k, j in enumerate(instance.jobs))
    )  # (2)
    return model, DirectVariables(jobs=jobs, wscale=wscale)


def decode_direct_cpsat(instance: ElasticInstance, handles: DirectVariables, solver: Any):
    """The schedule of a solved :func:`build_direct_cpsat` model (``solver`` is the ``CpSolver``)."""
    out = {}
    for k, job in enumerate(instance.jobs):
        v = handles.jobs[k]
        m = next(i for i, b in enumerate(v.msel) if solver.value(b))
        p = next((i for i, b in enumerate(v.psel) if solver.value(b)), None) if instance.is_ps else None
        workers = {h: int(solver.value(v.y[h][m])) for h in range(instance.H) if solver.value(v.y[h][m])}
        psd = (
            {h: int(solver.value(v.s[h][p])) for h in range(instance.H) if solver.value(v.s[h][p])}
            if p is not None
            else {}
        )
        out[job.id] = Assignment(
            start=int(solver.value(v.start)),
            d=int(solver.value(v.d)),
            m=m,
            p=p,
            q=int(solver.value(v.q)),
            workers=workers,
            ps=psd,
        )
    return ElasticSchedule(out)


# -- the LP relaxation of (8) / (17) and its dual (9) ---------------------------------------------
def check_tau(instance: ElasticInstance, tau: int | None) -> int:
    T = instance.horizon if tau is None else tau
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or int(T) < 1:
        raise InvalidOptionError(f"The 'tau' option must be an integer >= 1 (slots); got {tau!r}.")
    return int(T)


def build_lp8(
    instance: ElasticInstance,
    *,
    tau: int | None = None,
    max_size: int | None = None,
    cs: ColumnSet | None = None,
):
    """The LP relaxation of (8) / (17) over the restricted Gamma_j (see the module doc).

    ``model.x[k] >= 0`` is the share of column ``model.cols[k]`` (the paper relaxes x_jl in {0, 1}
    to x_jl >= 0; x_jl <= 1 follows from (8b), and an explicit upper bound would take the dual
    value of (8b) away from u_j); ``model.colset`` the
    :class:`~optsched.elastic.formulation.ColumnSet` (binding capacity rows only: a row that no set
    of columns can violate is redundant in the LP as well).
    """
    import pyomo.environ as pyo  # deferred: Pyomo is heavy

    cs = cs or column_set(instance, sense="max", tau=check_tau(instance, tau), max_size=max_size)
    m = pyo.ConcreteModel(name=f"elastic-lp8[{instance.name}]")
    m.cols = cs.cols
    m.colset = cs
    m.K = pyo.RangeSet(0, len(cs.cols) - 1) if cs.cols else pyo.Set(initialize=[])
    m.x = pyo.Var(m.K, domain=pyo.NonNegativeReals)  # (8c) relaxed to x >= 0 as in the paper; x <= 1 by (8b)
    m.J = pyo.RangeSet(0, instance.n_jobs - 1)

    @m.Constraint(m.J)
    def at_most_one_schedule(m, j):  # (8b)
        if not cs.by_job[j]:
            return pyo.Constraint.Skip
        return sum(m.x[k] for k in cs.by_job[j]) <= 1

    m.ROWS = pyo.Set(initialize=sorted(cs.rows), dimen=3)

    @m.Constraint(m.ROWS)
    def capacity(m, h, r, t):  # (8a) / (17a)
        return sum(f * m.x[k] for k, f in cs.rows[h, r, t]) <= instance.C[h][r]

    m.scheduled_weight = pyo.Objective(  # (8)
        expr=sum(instance.jobs[c.j].weight * m.x[k] for k, c in enumerate(cs.cols)), sense=pyo.maximize
    )
    return m


def build_dual9(
    instance: ElasticInstance,
    *,
    tau: int | None = None,
    max_size: int | None = None,
    cs: ColumnSet | None = None,
):
    """The dual (9) of the LP of (8) as its own LP (see the module doc): one ``delta[t, h, r]`` for
    every slot, server and resource (the paper's (9), not only the binding rows), one (9a) row per
    column of the restricted Gamma_j (a column outside it is dominated, so its (9a) row is implied:
    a dominating column costs no more at nonnegative prices)."""
    import pyomo.environ as pyo  # deferred: Pyomo is heavy

    T = check_tau(instance, tau)
    cs = cs or column_set(instance, sense="max", tau=T, max_size=max_size)
    H, R = instance.H, instance.R
    check_model_size("elastic dual (9)", instance.n_jobs + T * H * R, len(cs.cols), max_size)
    m = pyo.ConcreteModel(name=f"elastic-dual9[{instance.name}]")
    m.cols = cs.cols
    m.colset = cs
    m.J = pyo.RangeSet(0, instance.n_jobs - 1)
    m.SLOTS = pyo.Set(initialize=[(t, h, r) for t in range(T) for h in range(H) for r in range(R)], dimen=3)
    m.u = pyo.Var(m.J, domain=pyo.NonNegativeReals)  # (9b)
    m.delta = pyo.Var(m.SLOTS, domain=pyo.NonNegativeReals)  # (9b)
    m.K = pyo.RangeSet(0, len(cs.cols) - 1) if cs.cols else pyo.Set(initialize=[])

    @m.Constraint(m.K)
    def dual_feasibility(m, k):  # (9a): u_j >= w_j - sum_{t in T(l)} sum_h sum_r delta f
        c = cs.cols[k]
        cost = sum(
            f * m.delta[t, h, r]
            for h, vec in c.config.use
            for r, f in enumerate(vec)
            if f > 0
            for t in range(c.start, c.end)
        )
        return m.u[c.j] + cost >= instance.jobs[c.j].weight

    m.dual_objective = pyo.Objective(
        expr=sum(m.u[j] for j in m.J) + sum(instance.C[h][r] * m.delta[t, h, r] for t, h, r in m.SLOTS),
        sense=pyo.minimize,
    )
    return m
