"""Gamma_j: the restricted set of non-dominated schedules of one job (ILP (8) of Sec. 5).

A *configuration* fixes worker type m, PS type p, q, N workers, d = d_q(N) and the workers / PSs
per server; a *column* is a configuration with a start slot. :func:`configs` enumerates the
restricted set of ``formulations/elastic.md#gamma`` (exactly N workers for each useful N, PSs on
one server n with s = max(1, ceil((N - y_n) b / B)), q = 1 iff one server), keeps only those that
fit the empty servers, and drops configurations dominated by another one (d' <= d and no more of
any resource on any server): the proof there shows no optimum of (2), (7), (8), (15) or of the
pricing problems is lost. :func:`all_configs` is the full enumeration (tests only, tiny sizes).

>>> from optsched.elastic import toy_instance
>>> inst = toy_instance()
>>> [(c.m, c.q, c.n_workers, c.d) for c in configs(inst, 0)]
[(1, 1, 1, 10), (0, 1, 1, 15)]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from optsched.elastic.model import ElasticInstance
from optsched.elastic.schedule import Assignment


@dataclass(frozen=True)
class Config:
    """One placement of job ``j`` without its start: ``workers`` / ``ps`` are ((h, count), ...)
    and ``use`` is ((h, (f_jh^r for r in instance.resources)), ...) for the servers it touches."""

    j: int
    m: int
    p: int | None
    q: int
    n_workers: int
    d: int
    workers: tuple[tuple[int, int], ...]
    ps: tuple[tuple[int, int], ...]
    use: tuple[tuple[int, tuple[float, ...]], ...]

    def assignment(self, start: int) -> Assignment:
        return Assignment(
            start=int(start), d=int(self.d), m=self.m, p=self.p, q=self.q, workers=dict(self.workers), ps=dict(self.ps)
        )

    @property
    def total_use(self) -> float:
        """sum_h sum_r f_jh^r per slot."""
        return float(sum(sum(v) for _, v in self.use))


@dataclass(frozen=True)
class Column:
    """A configuration with a start slot: one element l of Gamma_j; T(l) = [start, start + d)."""

    config: Config
    start: int

    @property
    def j(self) -> int:
        return self.config.j

    @property
    def end(self) -> int:
        return self.start + self.config.d


@lru_cache(maxsize=4096)
def _compositions(total: int, caps: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    if not caps:
        return ((),) if total == 0 else ()
    out = []
    rest_cap = sum(caps[1:])
    for y in range(min(total, caps[0]), max(-1, total - rest_cap - 1), -1):
        for rest in _compositions(total - y, caps[1:]):
            out.append((y, *rest))
    return tuple(out)


def count_compositions(total: int, caps: tuple[int, ...]) -> int:
    """Number of y in Z_+^H with sum y = total and y_h <= caps[h] (a DP; no enumeration)."""
    ways = [1] + [0] * total
    for c in caps:
        new = [0] * (total + 1)
        for s in range(total + 1):
            if ways[s]:
                for y in range(0, min(c, total - s) + 1):
                    new[s + y] += ways[s]
        ways = new
    return ways[total]


def useful_counts_by_index(
    instance: ElasticInstance, j: int, m: int, p: int | None, q: int
) -> tuple[tuple[int, int], ...]:
    """(N, d_q(N)) for the useful N in 1..D_j: d_q(N) < d_q(N') for every N' < N.

    Kept on the (immutable) instance after the first call: the pricing oracle asks for it per job,
    type pair and q at every pricing."""
    cache = instance.__dict__.setdefault("_useful_counts", {})
    key = (j, m, p, q)
    if key not in cache:
        cache[key] = tuple(_compute_useful_counts(instance, j, m, p, q))
    return cache[key]


def _compute_useful_counts(instance: ElasticInstance, j: int, m: int, p: int | None, q: int) -> list[tuple[int, int]]:
    out, best = [], math.inf
    for n in range(1, instance.jobs[j].chunks + 1):
        d = instance.duration(j, m, p, q, n)
        if d < best:
            out.append((n, d))
            best = d
    return out


def _use(
    instance: ElasticInstance, m: int, p: int | None, workers: dict[int, int], ps: dict[int, int]
) -> tuple[tuple[int, tuple[float, ...]], ...]:
    out = []
    for h in sorted(set(workers) | set(ps)):
        y, s = workers.get(h, 0), ps.get(h, 0)
        vec = tuple(instance.e[m][r] * y + (instance.z[p][r] * s if p is not None else 0.0) for r in range(instance.R))
        out.append((h, vec))
    return tuple(out)


def make_config(
    instance: ElasticInstance,
    j: int,
    m: int,
    p: int | None,
    q: int,
    n: int,
    d: int,
    workers: dict[int, int],
    ps: dict[int, int],
) -> Config:
    workers = {h: y for h, y in workers.items() if y > 0}
    ps = {h: s for h, s in ps.items() if s > 0}
    return Config(
        j, m, p, q, n, d, tuple(sorted(workers.items())), tuple(sorted(ps.items())), _use(instance, m, p, workers, ps)
    )


def _raw_configs(instance: ElasticInstance, j: int) -> Iterator[Config]:
    H = instance.H
    ps_types = range(instance.P) if instance.is_ps else [None]
    for m in range(instance.M):
        caps = tuple(instance.fit_count(h, instance.e[m]) for h in range(H))
        for p in ps_types:
            for q in (1, 0):
                for n, d in useful_counts_by_index(instance, j, m, p, q):
                    if q == 1:
                        for h in range(H):
                            s = 1 if p is not None else 0
                            if instance.fits(h, m, n, p, s):
                                yield make_config(instance, j, m, p, 1, n, d, {h: n}, {h: s} if s else {})
                        continue
                    for y in _compositions(n, tuple(min(c, n) for c in caps)):
                        if p is None:
                            if sum(1 for v in y if v > 0) >= 2:
                                yield make_config(instance, j, m, None, 0, n, d, dict(enumerate(y)), {})
                            continue
                        for h in range(H):
                            if y[h] == n:
                                continue
                            s = instance.ps_needed(m, p, n - y[h])
                            if instance.fits(h, m, y[h], p, s):
                                yield make_config(instance, j, m, p, 0, n, d, dict(enumerate(y)), {h: s})


def dominates(a: Config, b: Config, tol: float = 1e-12) -> bool:
    """a dominates b: d_a <= d_b and a uses no more of any resource on any server."""
    if a.d > b.d:
        return False
    ub = dict(b.use)
    for h, va in a.use:
        vb = ub.get(h)
        if vb is None:
            if any(x > tol for x in va):
                return False
            continue
        if any(x > y + tol for x, y in zip(va, vb, strict=True)):
            return False
    return True


def prune_dominated(cfgs: list[Config]) -> list[Config]:
    """Drop every configuration dominated by another one (of two equal ones the first is kept)."""
    cfgs = sorted(cfgs, key=lambda c: (c.d, c.total_use))
    kept: list[Config] = []
    for c in cfgs:
        if not any(dominates(k, c) for k in kept):
            kept.append(c)
    return kept


def configs_by_index(instance: ElasticInstance, j: int, *, prune: bool = True) -> list[Config]:
    """The restricted Gamma_j of job index ``j`` without starts (see the module doc)."""
    raw = list(_raw_configs(instance, j))
    return prune_dominated(raw) if prune else raw


def all_configs_by_index(instance: ElasticInstance, j: int, *, d_max: int) -> list[Config]:
    """Every feasible configuration of job ``j`` with d <= d_max: all N <= D_j, every y, every s with at
    least one PS, (2i) on each PS server, q from the servers used, every d from d_q(N) to d_max.
    Exponential: for tests on tiny instances only."""
    H = instance.H
    out = []
    ps_types = range(instance.P) if instance.is_ps else [None]
    for m in range(instance.M):
        caps = tuple(instance.fit_count(h, instance.e[m]) for h in range(H))
        for p in ps_types:
            scaps = tuple(instance.fit_count(h, instance.z[p]) for h in range(H)) if p is not None else (0,) * H
            for n in range(1, instance.jobs[j].chunks + 1):
                for y in _compositions(n, tuple(min(c, n) for c in caps)):
                    for s in itertools.product(*[range(c + 1) for c in scaps]):
                        if p is not None and sum(s) < 1:
                            continue
                        if any(not instance.fits(h, m, y[h], p, s[h]) for h in range(H)):
                            continue
                        if p is not None and any(
                            s[h] > 0
                            and (n - y[h]) * instance.worker_types[m].bandwidth
                            > s[h] * instance.ps_types[p].bandwidth + 1e-9
                            for h in range(H)
                        ):
                            continue
                        used = {h for h in range(H) if y[h] > 0 or s[h] > 0}
                        q = 1 if len(used) == 1 else 0
                        d0 = instance.duration(j, m, p, q, n)
                        for d in range(d0, d_max + 1):
                            out.append(make_config(instance, j, m, p, q, n, d, dict(enumerate(y)), dict(enumerate(s))))
    return out


def columns_by_index(
    instance: ElasticInstance,
    j: int,
    *,
    tau: int | None = None,
    arrivals: bool = True,
    cfgs: list[Config] | None = None,
) -> list[Column]:
    """Columns of job ``j``: each configuration at every start in [a_j, T - d] (or [0, tau - d]
    for (8), ``arrivals=False``)."""
    T = instance.horizon if tau is None else int(tau)
    a = instance.jobs[j].arrival if arrivals else 0
    out = []
    for c in configs_by_index(instance, j) if cfgs is None else cfgs:
        for t in range(a, T - c.d + 1):
            out.append(Column(c, t))
    return out


def estimate_columns(instance: ElasticInstance, *, tau: int | None = None, arrivals: bool = True) -> int:
    """An upper bound on the number of columns, from counts only (no enumeration of placements):
    per (j, m, p, q, useful N) the capped compositions of N over the servers (times H PS servers
    for q = 0, PS) times the starts."""
    T = instance.horizon if tau is None else int(tau)
    H = instance.H
    total = 0
    ps_types = range(instance.P) if instance.is_ps else [None]
    for j, job in enumerate(instance.jobs):
        a = job.arrival if arrivals else 0
        for m in range(instance.M):
            caps = tuple(instance.fit_count(h, instance.e[m]) for h in range(H))
            for p in ps_types:
                for q in (1, 0):
                    for n, d in useful_counts_by_index(instance, j, m, p, q):
                        starts = max(0, T - d - a + 1)
                        if not starts:
                            continue
                        if q == 1:
                            k = H
                        else:
                            k = count_compositions(n, tuple(min(c, n) for c in caps)) * (H if p is not None else 1)
                        total += k * starts
    return total


# -- public forms: a job by its id (docs/conventions.md#ids) ----------------------------------------
def useful_counts(instance: ElasticInstance, job: Any, m: int, p: int | None, q: int) -> tuple[tuple[int, int], ...]:
    """(N, d_q(N)) for the useful N in 1..D_j of the job with id ``job``: d_q(N) < d_q(N') for every N' < N.

    >>> from optsched.elastic import toy_instance
    >>> useful_counts(toy_instance(), 0, 1, 0, 1)
    ((1, 10),)
    """
    return useful_counts_by_index(instance, instance.job_index(job, "useful_counts"), m, p, q)


def configs(instance: ElasticInstance, job: Any, *, prune: bool = True) -> list[Config]:
    """The restricted Gamma_j of the job with id ``job``, without starts (see the module doc)."""
    return configs_by_index(instance, instance.job_index(job, "configs"), prune=prune)


def all_configs(instance: ElasticInstance, job: Any, *, d_max: int) -> list[Config]:
    """Every feasible configuration of the job with id ``job`` with d <= d_max (tiny instances only; see
    :func:`all_configs_by_index`)."""
    return all_configs_by_index(instance, instance.job_index(job, "all_configs"), d_max=d_max)


def columns(
    instance: ElasticInstance,
    job: Any,
    *,
    tau: int | None = None,
    arrivals: bool = True,
    cfgs: list[Config] | None = None,
) -> list[Column]:
    """Columns of the job with id ``job``: each configuration at every start in [a_j, T - d] (or [0, tau - d]
    for (8), ``arrivals=False``)."""
    return columns_by_index(instance, instance.job_index(job, "columns"), tau=tau, arrivals=arrivals, cfgs=cfgs)
