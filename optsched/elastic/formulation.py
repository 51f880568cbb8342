"""Exact models of paper 001 over the restricted Gamma_j (build only; :mod:`optsched.elastic.exact` solves).

* :func:`build_set_partitioning`: (2) / (15) with ``sense="min"`` (``one_schedule_per_job`` = (2a),
  ``capacity`` = (2h) / (15b) in the form (8a), objective ``weighted_completion`` = (2)), or (8) /
  (17) with ``sense="max"`` (``at_most_one_schedule`` = (8b), ``capacity`` = (8a), objective
  ``scheduled_weight`` = (8)), both on binary ``x[k]`` over the flat column list ``model.cols``.
* :func:`build_set_partitioning_cpsat`: the same model in CP-SAT (integer weights are required
  there; fractional ones are scaled and rounded, ``resolution`` reported).

Columns come from :mod:`optsched.elastic.gamma`; the size is estimated from counts before any
column is enumerated (:class:`~optsched.exceptions.ModelTooLargeError`). Component names are the
labels of ``formulations/elastic.md#exact``.

>>> from optsched.elastic import toy_instance
>>> m = build_set_partitioning(toy_instance())
>>> len(m.cols), len(m.one_schedule_per_job)
(114, 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from optsched.elastic.gamma import Column, columns, configs, estimate_columns
from optsched.elastic.model import ElasticInstance
from optsched.exceptions import InvalidOptionError
from optsched.solvers import check_model_size

__all__ = ["ColumnSet", "column_set", "build_set_partitioning", "build_set_partitioning_cpsat", "SENSES"]

SENSES = ("min", "max")


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


def column_set(instance: ElasticInstance, *, sense: str = "min", tau: int | None = None, arrivals: bool | None = None,
               max_size: int | None = None, configs_by_job: list | None = None) -> ColumnSet:
    """Enumerate the columns of every job and the binding capacity rows (after a size estimate).

    ``configs_by_job`` replaces the restricted Gamma_j (e.g. by :func:`~optsched.elastic.gamma.all_configs`
    in the tests); the size estimate then counts those columns."""
    if sense not in SENSES:
        raise InvalidOptionError(f"The 'sense' option must be one of {SENSES}; got {sense!r}.")
    if arrivals is None:
        arrivals = sense == "min"  # (7) has no (2j)
    T = instance.horizon if tau is None else int(tau)
    if configs_by_job is None:
        est = estimate_columns(instance, tau=T, arrivals=arrivals)
    else:
        est = sum(max(0, T - c.d - (instance.jobs[j].arrival if arrivals else 0) + 1)
                  for j, cl in enumerate(configs_by_job) for c in cl)
    rows_est = instance.H * instance.R * T
    check_model_size(f"elastic {'(2)' if sense == 'min' else '(8)'} set-partitioning", est,
                     instance.n_jobs + rows_est, max_size)
    cols: list[Column] = []
    by_job: list[list[int]] = []
    for j in range(instance.n_jobs):
        cfgs = configs(instance, j) if configs_by_job is None else configs_by_job[j]
        cj = columns(instance, j, tau=T, arrivals=arrivals, cfgs=cfgs)
        by_job.append(list(range(len(cols), len(cols) + len(cj))))
        cols.extend(cj)
    touch: dict[tuple[int, int, int], list[tuple[int, float]]] = {}
    for k, c in enumerate(cols):
        for h, vec in c.config.use:
            for r, f in enumerate(vec):
                if f > 0:
                    for t in range(c.start, c.end):
                        touch.setdefault((h, r, t), []).append((k, f))
    job_of = [c.j for c in cols]
    rows = {}
    for key, lst in touch.items():
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


def build_set_partitioning(instance: ElasticInstance, *, sense: str = "min", tau: int | None = None,
                           arrivals: bool | None = None, max_size: int | None = None, cs: ColumnSet | None = None):
    """Pyomo set-partitioning model over the restricted Gamma_j (see the module doc).

    ``model.cols`` is the flat column list and ``model.x[k]`` the choice of column k.
    """
    import pyomo.environ as pyo

    cs = cs or column_set(instance, sense=sense, tau=tau, arrivals=arrivals, max_size=max_size)
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

    @m.Constraint(m.ROWS)
    def capacity(m, h, r, t):  # (2h) / (8a) / (15b) / (17a)
        return sum(f * m.x[k] for k, f in cs.rows[h, r, t]) <= instance.C[h][r]

    expr = sum(_coef(instance, cs, k) * m.x[k] for k in range(len(cs.cols)))
    if cs.sense == "min":
        m.weighted_completion = pyo.Objective(expr=expr, sense=pyo.minimize)  # (2)
    else:
        m.scheduled_weight = pyo.Objective(expr=expr, sense=pyo.maximize)  # (8)
    return m


def build_set_partitioning_cpsat(instance: ElasticInstance, *, sense: str = "min", tau: int | None = None,
                                 arrivals: bool | None = None, max_size: int | None = None,
                                 cs: ColumnSet | None = None) -> tuple[Any, dict[str, Any]]:
    """The same model in CP-SAT. Returns ``(model, handles)`` with ``handles["x"]`` the Booleans,
    ``handles["scale"]`` the objective scale (integer coefficients) and ``handles["eps"]`` the
    rounding of each coefficient (0 when every weight is an integer). Capacities are scaled to
    integers by the smallest power of 10 that makes every use integral (up to 10^6)."""
    from optsched.solvers import new_cp_model

    cs = cs or column_set(instance, sense=sense, tau=tau, arrivals=arrivals, max_size=max_size)
    model = new_cp_model()
    x = [model.NewBoolVar(f"x[{k}]") for k in range(len(cs.cols))]
    for j in range(instance.n_jobs):
        if cs.sense == "min":
            model.AddExactlyOne(x[k] for k in cs.by_job[j])
        elif cs.by_job[j]:
            model.AddAtMostOne(x[k] for k in cs.by_job[j])

    def _int_scale(vals: list[float]) -> int:
        for s in (1, 10, 100, 1000, 10**4, 10**5, 10**6):
            if all(abs(v * s - round(v * s)) < 1e-9 * max(1.0, abs(v * s)) for v in vals):
                return s
        return 10**6

    for (h, r, _t), lst in cs.rows.items():
        s = _int_scale([f for _, f in lst] + [instance.C[h][r]])
        model.Add(sum(int(round(f * s)) * x[k] for k, f in lst) <= int(round(instance.C[h][r] * s + 1e-9)))
    coefs = [_coef(instance, cs, k) for k in range(len(cs.cols))]
    sc = _int_scale(coefs)
    eps = 0.0 if sc < 10**6 else 0.5 / sc * max(1, instance.n_jobs)
    obj = sum(int(round(c * sc)) * x[k] for k, c in enumerate(coefs))
    if cs.sense == "min":
        model.Minimize(obj)
    else:
        model.Maximize(obj)
    return model, {"x": x, "scale": sc, "eps": eps, "cs": cs}
