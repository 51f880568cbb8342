"""Problem (8) on the slot grid: each job picks a start slot t_i >= r_i (1) and a placement pattern.

A *pattern* of job i is a vector a = (a_1..a_M) of GPUs per server with sum a_m = g_i; its
per-iteration time is the best stage split for those server counts,
alpha_i(a) = min { alpha_i(x) : sum_m x[s,m] = k_s (2), sum_s x[s,m] = a_m }, and the job holds
a_m GPUs of server m during its ceil(n_i alpha_i(a) / slot) slots (3). The objective is the
paper's (8), sum_i (t_i + n_i alpha_i), with t_i on the slot grid and n_i alpha_i real.

Two builders (build only; :mod:`optsched.asrpt.exact` solves):

* :func:`build_problem8_cpsat`: CP-SAT, one optional interval per (job, pattern), a cumulative
  per server, a redundant cumulative on the whole cluster;
* :func:`build_problem8`: time-indexed MILP x[i, p, t] (cross-check on small instances);
* :func:`build_problem8_ti_cpsat`: the time-indexed model for CP-SAT.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
from optsched.asrpt.placement import enumerate_placement, solve_placement
from optsched.core.limits import check_slots
from optsched.exceptions import ModelTooLargeError, SolverError
from optsched.solvers import SolveOptions, check_model_size, new_cp_model

#: CP-SAT objective unit = slot / OBJ_SCALE (durations n_i alpha_i are rounded to it;
#: error <= 0.5/OBJ_SCALE slot per job).
OBJ_SCALE = 10_000


@dataclass(frozen=True)
class Pattern:
    """Server GPU counts ``counts`` (length M), the best stage split ``x`` (S x M), its ``alpha`` (s),
    ``slots`` = ceil(n_i alpha / slot) occupied and ``time`` = n_i alpha (s)."""

    counts: tuple[int, ...]
    x: np.ndarray
    alpha: float
    slots: int
    time: float


def job_shape_key(job: AsrptJob):
    return (tuple((s.k, s.p_f, s.p_b, s.d_in, s.d_out, s.h) for s in job.stages), job.allreduce)


@lru_cache(maxsize=4096)
def _best_split_cached(job_key, parts: tuple[int, ...], g: int, b_inter: float, b_intra: float):
    stages, ar = job_key
    job = AsrptJob("pattern", [Stage(*s) for s in stages], iterations=1, allreduce=ar)
    try:
        r = enumerate_placement(job, list(parts), g=g, b_inter=b_inter, b_intra=b_intra, exact_usage=True, limit=50_000)
    except ModelTooLargeError:
        r = solve_placement(
            job,
            list(parts),
            g=g,
            b_inter=b_inter,
            b_intra=b_intra,
            exact_usage=True,
            options=SolveOptions(time_limit=60, threads=1),
        )
        if r.status.value != "optimal":
            raise SolverError(
                f"The best stage split of a job on servers with {list(parts)} GPUs was not proven "
                f"optimal by the placement MILP within 60 s ({r.status}); Problem (8) needs it exact. "
                f"Use fewer replicas per stage or fewer servers per job."
            ) from None
    return r.x, float(r.alpha)


def best_split(job: AsrptJob, counts, instance: AsrptInstance) -> tuple[np.ndarray, float]:
    """The stage split x minimizing alpha_i for fixed GPUs per server ``counts`` (exact; memoised
    on the sorted non-zero counts, since servers are identical)."""
    counts = [int(c) for c in counts]
    nz = sorted([(c, m) for m, c in enumerate(counts) if c > 0], key=lambda cm: (-cm[0], cm[1]))
    parts = tuple(c for c, _ in nz)
    xs, a = _best_split_cached(job_shape_key(job), parts, instance.g, instance.b_inter, instance.b_intra)
    x = np.zeros((job.n_stages, len(counts)), dtype=np.int64)
    for col, (_, m) in enumerate(nz):
        x[:, m] = xs[:, col]
    return x, a


def job_patterns(job: AsrptJob, instance: AsrptInstance) -> list[Pattern]:
    """Every server-count vector of job i (sum = g_i, each <= g) with its best split and duration.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> [(p.counts, p.slots) for p in job_patterns(inst.jobs[0], inst)]
    [((0, 2), 6), ((1, 1), 44), ((2, 0), 6)]
    """
    M, g, gi = instance.M, instance.g, job.gpus
    out = []
    for counts in itertools.product(range(min(g, gi) + 1), repeat=M):
        if sum(counts) != gi:
            continue
        x, a = best_split(job, counts, instance)
        t = job.iterations * a
        out.append(Pattern(tuple(counts), x, a, max(1, math.ceil(t / instance.slot - 1e-9)), t))
    return out


def arrival_slot(job: AsrptJob, instance: AsrptInstance) -> int:
    """Earliest start slot of job i: max(first_slot, ceil(r_i / slot)) (eq. (1) on the slot grid; the paper's
    t_i in [T] = {1, ..., T} when ``instance.first_slot`` = 1, the default)."""
    return max(instance.first_slot, int(math.ceil(job.arrival / instance.slot - 1e-9)))


def horizon_slots(instance: AsrptInstance, patterns: dict) -> int:
    """T = max r_i + sum_i min_p slots: running the jobs one after another in their fastest pattern is
    feasible, so some optimal schedule ends by T."""
    r = max((arrival_slot(j, instance) for j in instance.jobs), default=0)
    T = r + sum(min(p.slots for p in patterns[j.id]) for j in instance.jobs)
    return check_slots("asrpt", T, "latest arrival + each job's fastest pattern, in slots of 'slot' seconds")


@dataclass(frozen=True)
class Problem8Variables:
    """The variables of a :func:`build_problem8_cpsat` model (CP-SAT intervals).

    ``start[i]`` (1) start slot of job i (instance order); ``use[i][p]`` the Boolean of pattern
    ``patterns[job id][p]`` (one per job, (2)); ``interval[i][p]`` its optional interval
    (present iff ``use[i][p]``); ``patterns`` by job id; ``horizon`` T in slots.
    """

    start: list[Any]
    use: list[list[Any]]
    interval: list[list[Any]]
    patterns: dict
    horizon: int


@dataclass(frozen=True)
class Problem8TimeIndexedVariables:
    """The variables of a time-indexed model of Problem (8): ``x[(i, p, t)]`` = 1 iff job i (instance
    order) starts at slot t with pattern ``patterns[job id][p]`` (CP-SAT Booleans for
    :func:`build_problem8_ti_cpsat`, the Pyomo ``x`` for :func:`build_problem8`); ``patterns``;
    ``horizon`` T in slots."""

    x: Any
    patterns: dict
    horizon: int

    @classmethod
    def of(cls, model: Any) -> Problem8TimeIndexedVariables:
        """The handles of a Pyomo model built by :func:`build_problem8`."""
        return cls(x=model.x, patterns=model.patterns, horizon=model.horizon)


def energy_rows(instance: AsrptInstance, patterns: dict) -> list[tuple[list[int], list[int], int]]:
    """The energy (area) rows of Problem (8) (``formulations/asrpt.md#problem-8-bounds``) as
    ``(jobs, coefficients, rhs)``: ``sum_k coefficients[k] * t_{jobs[k]} >= rhs`` on the start slots.

    Job i holds g_i GPUs for at least d_i = min_a d_{i,a} slots from t_i; shrinking every run to
    its first d_i slots keeps a feasible packing on the G = M g GPUs, so with e_i = g_i d_i and
    r = min_{i in S} t^min_i: sum_{i in S} e_i (t_i + d_i / 2) >= e(S) r + e(S)^2 / (2G), i.e.
    sum_{i in S} 2 e_i t_i >= ceil(2 e(S) r + e(S)^2 / G - sum_{i in S} e_i d_i). Rows: for every
    distinct earliest start r, the nested prefixes of {i : t^min_i >= r} by increasing e_i (Smith's
    order for unit weights)."""
    jobs = instance.jobs
    n, G = len(jobs), instance.G
    r = [arrival_slot(j, instance) for j in jobs]
    dmin = [min(p.slots for p in patterns[j.id]) for j in jobs]
    e = [jobs[i].gpus * dmin[i] for i in range(n)]
    out = []
    for r0 in sorted(set(r)):
        S = sorted((i for i in range(n) if r[i] >= r0), key=lambda i: (e[i], r[i], i))
        area = area_d = 0
        for k, i in enumerate(S):
            area += e[i]
            area_d += e[i] * dmin[i]
            rhs = -(-(2 * area * r0 * G + area * area - area_d * G) // G)  # exact integer ceil
            if rhs > sum(2 * e[q] * r[q] for q in S[: k + 1]):  # implied by the releases otherwise
                out.append((S[: k + 1], [2 * e[q] for q in S[: k + 1]], rhs))
    return out


def build_problem8_cpsat(
    instance: AsrptInstance,
    *,
    patterns: dict | None = None,
    max_size: int | None = None,
    energy: bool = True,
    objective_lower_bound: int | None = None,
) -> tuple[Any, Problem8Variables]:
    """CP-SAT model of Problem (8): returns ``(model, variables)`` (:class:`Problem8Variables`).

    Objective: sum_i (slot * t_i + n_i alpha_i(p)) in units of slot / OBJ_SCALE. Constraints are
    named after the labels of ``formulations/asrpt.md`` (``one_pattern_per_job``, ``horizon``,
    ``capacity``, ``cluster_capacity``, ``energy``, ``objective_bound``).

    Parameters
    ----------
    energy : bool
        Add the energy (area) rows (:func:`energy_rows`), named ``energy``.
    objective_lower_bound : int, optional
        A proven lower bound on the objective in model units (e.g. from the LP relaxation of
        the time-indexed model), added as the row ``objective_bound``.
    """
    pats = patterns or {j.id: job_patterns(j, instance) for j in instance.jobs}
    T = horizon_slots(instance, pats)
    n_pat = sum(len(v) for v in pats.values())
    check_model_size(
        "asrpt Problem (8) CP-SAT", 2 * instance.n_jobs + 2 * n_pat, instance.M + 1 + 3 * instance.n_jobs, max_size
    )
    m = new_cp_model()
    M, g = instance.M, instance.g
    start, use, intervals = [], [], []
    per_server: list[list[Any]] = [[] for _ in range(M)]
    demands: list[list[int]] = [[] for _ in range(M)]
    all_iv, all_dem, obj = [], [], []
    for job in instance.jobs:
        P = pats[job.id]
        r = arrival_slot(job, instance)
        dmin = min(p.slots for p in P)
        s = m.new_int_var(r, T - dmin, f"t[{job.id}]")  # (1) release
        bs = [m.new_bool_var(f"use[{job.id},{p.counts}]") for p in P]
        m.add_exactly_one(bs).with_name("one_pattern_per_job")  # (2): the pattern fixes x^m_{i,s}
        ivs = []
        for b, p in zip(bs, P, strict=True):
            m.add(s + p.slots <= T).only_enforce_if(b).with_name("horizon")
            iv = m.new_optional_fixed_size_interval_var(s, p.slots, b, f"run[{job.id},{p.counts}]")
            ivs.append(iv)
            all_iv.append(iv)
            all_dem.append(job.gpus)
            for k in range(M):
                if p.counts[k] > 0:
                    per_server[k].append(iv)
                    demands[k].append(p.counts[k])
        start.append(s)
        use.append(bs)
        intervals.append(ivs)
        obj.append(OBJ_SCALE * s)
        obj += [round(p.time / instance.slot * OBJ_SCALE) * b for b, p in zip(bs, P, strict=True)]
    for k in range(M):  # (3) capacity per server
        if per_server[k]:
            m.add_cumulative(per_server[k], demands[k], g).with_name("capacity")
    if all_iv:  # redundant: the whole cluster
        m.add_cumulative(all_iv, all_dem, instance.G).with_name("cluster_capacity")
    if energy:
        for idx, coef, rhs in energy_rows(instance, pats):
            m.add(sum(c * start[i] for c, i in zip(coef, idx, strict=True)) >= rhs).with_name("energy")
    objective = sum(obj)
    if objective_lower_bound is not None:
        m.add(objective >= int(objective_lower_bound)).with_name("objective_bound")
    m.minimize(objective)
    return m, Problem8Variables(start=start, use=use, interval=intervals, patterns=pats, horizon=T)


def build_problem8(instance: AsrptInstance, *, patterns: dict | None = None, max_size: int | None = None):
    """Time-indexed MILP of Problem (8) (build only).

    x[i, p, t] = 1 iff job i starts at slot t with pattern p. Components named after
    ``formulations/asrpt.md``: ``one_pattern_per_job`` ((2) through the pattern), ``release`` (1),
    ``capacity`` (3), objective ``total_completion_time`` (8).
    """
    import pyomo.environ as pyo

    pats = patterns or {j.id: job_patterns(j, instance) for j in instance.jobs}
    T = horizon_slots(instance, pats)
    idx = [
        (i, p, t)
        for i, j in enumerate(instance.jobs)
        for p, pat in enumerate(pats[j.id])
        for t in range(T - pat.slots + 1)
    ]
    check_model_size("asrpt Problem (8) time-indexed", len(idx), instance.n_jobs * 2 + instance.M * T, max_size)
    jobs = instance.jobs
    m = pyo.ConcreteModel(name=f"problem8[{instance.name}]")
    m.IPT = pyo.Set(initialize=idx, dimen=3)
    m.I = pyo.RangeSet(0, len(jobs) - 1)
    m.Mset = pyo.RangeSet(0, instance.M - 1)
    m.T = pyo.RangeSet(0, T - 1)
    m.x = pyo.Var(m.IPT, domain=pyo.Binary)
    by_job: dict[int, list] = {}
    for key in idx:
        by_job.setdefault(key[0], []).append(key)

    @m.Constraint(m.I)
    def one_pattern_per_job(m, i):
        return sum(m.x[k] for k in by_job[i]) == 1

    @m.Constraint(m.I)
    def release(m, i):  # (1)
        r = arrival_slot(jobs[i], instance)
        early = [k for k in by_job[i] if k[2] < r]
        return sum(m.x[k] for k in early) == 0 if early else pyo.Constraint.Skip

    cover: dict[tuple[int, int], list] = {}
    for i, p, t in idx:
        pat = pats[jobs[i].id][p]
        for k in range(instance.M):
            if pat.counts[k]:
                for u in range(t, t + pat.slots):
                    cover.setdefault((k, u), []).append((pat.counts[k], (i, p, t)))

    @m.Constraint(m.Mset, m.T)
    def capacity(m, k, u):  # (3)
        terms = cover.get((k, u))
        if not terms:
            return pyo.Constraint.Skip
        return sum(c * m.x[key] for c, key in terms) <= instance.g

    m.total_completion_time = pyo.Objective(  # (8)
        expr=sum((t * instance.slot + pats[jobs[i].id][p].time) * m.x[i, p, t] for (i, p, t) in idx), sense=pyo.minimize
    )
    m.patterns = pats
    m.horizon = T
    return m


def build_problem8_ti_cpsat(
    instance: AsrptInstance, *, patterns: dict | None = None, max_size: int | None = None
) -> tuple[Any, Problem8TimeIndexedVariables]:
    """Time-indexed CP-SAT model of Problem (8): Booleans x[i, p, t] (start slot t, pattern p), per-server
    per-slot capacity (3) as linear constraints, objective (8) in units of slot / OBJ_SCALE. Its LP
    relaxation is the strong time-indexed one (better bounds than the interval model on many jobs).

    Returns ``(model, variables)`` (:class:`Problem8TimeIndexedVariables`, ``x`` a dict of Booleans).
    """
    pats = patterns or {j.id: job_patterns(j, instance) for j in instance.jobs}
    T = horizon_slots(instance, pats)
    jobs = instance.jobs
    idx = [
        (i, p, t)
        for i, j in enumerate(jobs)
        for p, pat in enumerate(pats[j.id])
        for t in range(arrival_slot(j, instance), T - pat.slots + 1)
    ]
    check_model_size("asrpt Problem (8) CP-SAT time-indexed", len(idx), instance.n_jobs + instance.M * T, max_size)
    m = new_cp_model()
    x = {k: m.new_bool_var(f"x[{k[0]},{k[1]},{k[2]}]") for k in idx}
    by_job: dict[int, list] = {}
    cover: dict[tuple[int, int], list] = {}
    for (i, p, t), v in x.items():
        by_job.setdefault(i, []).append(v)
        pat = pats[jobs[i].id][p]
        for k in range(instance.M):
            if pat.counts[k]:
                for u in range(t, t + pat.slots):
                    cover.setdefault((k, u), []).append((pat.counts[k], v))
    for i in range(len(jobs)):
        m.add_exactly_one(by_job[i]).with_name("one_pattern_per_job")
    for terms in cover.values():
        if sum(c for c, _ in terms) > instance.g:
            m.add(sum(c * v for c, v in terms) <= instance.g).with_name("capacity")
    m.minimize(
        sum(
            (OBJ_SCALE * t + round(pats[jobs[i].id][p].time / instance.slot * OBJ_SCALE)) * v
            for (i, p, t), v in x.items()
        )
    )
    return m, Problem8TimeIndexedVariables(x=x, patterns=pats, horizon=T)
