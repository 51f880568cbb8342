"""Lower bounds on the total JCT of every online policy on a trace of rigid jobs:

* :func:`jct_lower_bound`: a bound on the total (and mean) job completion time that every online
  policy respects (``optsched compare``), and :func:`nonpreemptive_lower_bound`, the proven
  non-preemptive optimum of small workloads.

For :func:`jct_lower_bound`, three relaxations of any schedule of jobs on a cluster of G GPUs,
job i released at r_i, holding at most g_i GPUs at a time and needing at least g_i p_i
GPU-seconds (p_i: its *least* processing time over every configuration a policy may choose)
(``formulations/rigid.md#jct-bound``):

* **own length**: job i cannot finish before r_i + p_i, so sum_i JCT_i >= sum_i p_i;
* **fluid**: the cluster does at most G GPU-seconds of work per second, so the completion times
  of any schedule are those of a preemptive schedule of the works w_i = g_i p_i on one machine of
  speed G (fractional sharing allowed), whose least total completion time is SRPT's
  (Schrage 1968; SRPT is optimal for 1|r_j, pmtn|sum C_j, and sharing does not help);
* **mean busy time**: on that machine job i runs at a share of at most g_i / G, so it completes at
  least p_i / 2 after its mean busy time, and the mean busy times of any schedule are bounded below
  by those of the preemptive schedule by least work first (Goemans 1997).

The bound is the largest of the three: ``jct_lower_bound(...).total``. Arrivals are measured from
the first one before any sum, so the bound is the same at any time origin (Unix timestamps
included).

:func:`nonpreemptive_lower_bound` solves the exact model (:func:`optsched.rigid.exact.solve_exact`);
the bound of one instance, without a solver, is :func:`optsched.rigid.bounds.area_bound`.
Tested in ``tests/rigid/test_jct_bound.py``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from optsched.core.instance import Instance
from optsched.core.job import Job
from optsched.exceptions import InvalidInstanceError
from optsched.rigid.exact import solve_exact
from optsched.solvers import SolveOptions

__all__ = [
    "JctBound",
    "jct_lower_bound",
    "srpt_total_completion",
    "mean_busy_total_completion",
    "NonPreemptiveBound",
    "nonpreemptive_lower_bound",
    "beats_tolerance",
]


@dataclass(frozen=True)
class JctBound:
    """The bound and its parts (seconds). ``total`` = max(``own_length``, ``fluid``,
    ``mean_busy``); ``mean`` = ``total`` / ``n_jobs``; ``which`` names the largest part (the first
    of own_length, fluid, mean_busy on a tie); ``parts`` maps each name to its value."""

    total: float
    own_length: float
    fluid: float
    n_jobs: int
    gpus: int
    mean_busy: float = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.n_jobs if self.n_jobs else float("nan")

    @property
    def parts(self) -> dict[str, float]:
        return {"own_length": self.own_length, "fluid": self.fluid, "mean_busy": self.mean_busy}

    @property
    def which(self) -> str:
        parts = self.parts
        return max(parts, key=lambda k: (parts[k], -list(parts).index(k)))


def srpt_total_completion(release: Sequence[float], work: Sequence[float], speed: float = 1.0) -> float:
    """sum_i C_i of preemptive SRPT on one machine of ``speed`` (work units per second).

    Examples
    --------
    >>> srpt_total_completion([0, 0], [2, 1])        # 1 + 3
    4.0
    >>> srpt_total_completion([0, 1], [3, 1], speed=1)  # the short job preempts at 1: 2 + 4
    6.0
    """
    r = np.asarray(release, dtype=float)
    w = np.asarray(work, dtype=float) / float(speed)
    order = np.argsort(r, kind="stable")
    r, w = r[order].tolist(), w[order].tolist()
    n = len(r)
    heap: list[float] = []
    t = 0.0
    total = 0.0
    k = 0
    while k < n or heap:
        if not heap:
            t = max(t, r[k])
        while k < n and r[k] <= t:
            heapq.heappush(heap, w[k])
            k += 1
        rem = heapq.heappop(heap)
        nxt = r[k] if k < n else math.inf
        if t + rem <= nxt:  # finishes before the next release
            t += rem
            total += t
        else:  # runs until the next release, then competes again
            heapq.heappush(heap, rem - (nxt - t))
            t = nxt
    return float(total)


def mean_busy_total_completion(
    release: Sequence[float], processing: Sequence[float], gpus: Sequence[float], total_gpus: float
) -> float:
    """A lower bound on sum_i C_i over every schedule in which job i, released at ``release[i]``,
    holds at most ``gpus[i]`` of ``total_gpus`` GPUs at a time and at least ``gpus[i] *
    processing[i]`` GPU-seconds in all: sum_i (M_i + p_i / 2), M_i the mean busy times of the
    preemptive schedule of one machine (all GPUs pooled) that always runs the released job of least
    work g_i p_i first (Goemans 1997, unit weights).

    Why: keep only the first g_i p_i GPU-seconds of each job (its completion can only move earlier).
    On the pooled machine job i then has q_i = g_i p_i / G units of work done at a rate of at most
    g_i / G, so its mean busy time M_i (the mean of the times its work is done) is at most
    C_i - p_i / 2; and the least-work-first preemptive schedule minimises sum_i M_i over every
    schedule of that machine, processor sharing included. Equal to :func:`area_bound_slots` with
    unit weights (before its max with sum_i (r_i + p_i)), in seconds.

    Examples
    --------
    >>> mean_busy_total_completion([0, 0], [10, 10], [2, 2], 2)   # one after the other: 10 + 20
    30.0
    >>> mean_busy_total_completion([0, 0], [10, 10], [1, 1], 2)   # side by side: 10 + 10
    20.0
    """
    r = np.asarray(release, dtype=float)
    p = np.asarray(processing, dtype=float)
    g = np.asarray(gpus, dtype=float)
    n = len(r)
    if n == 0:
        return 0.0
    q = g * p / float(total_gpus)  # work on the pooled machine of unit speed
    order = np.argsort(r, kind="stable").tolist()
    rl, ql = r.tolist(), q.tolist()
    left = list(ql)
    busy = [0.0] * n  # integral of t over the machine time given to j
    heap: list[tuple[float, int]] = []
    t, i = 0.0, 0
    while i < n or heap:
        if not heap:
            t = max(t, rl[order[i]])
        while i < n and rl[order[i]] <= t:
            j = order[i]
            heapq.heappush(heap, (ql[j], j))
            i += 1
        j = heap[0][1]
        if ql[j] <= 0.0:  # a job of no work: its mean busy time is its release (p_j = 0 or g_j = 0)
            heapq.heappop(heap)
            busy[j] = rl[j]
            continue
        run = left[j] if i >= n else min(left[j], rl[order[i]] - t)
        busy[j] += run * (t + run / 2)
        left[j] -= run
        t += run
        if left[j] <= 1e-12 * max(1.0, ql[j]):
            heapq.heappop(heap)
    total = 0.0
    for j in range(n):
        m = busy[j] / ql[j] if ql[j] > 0 else busy[j]
        total += m + float(p[j]) / 2
    return float(total)


def beats_tolerance(n_jobs: int, horizon: float, bound: float, slot: float = 0.0) -> float:
    """How far below ``bound`` a total JCT may fall from rounding alone (seconds).

    ``n_jobs`` x (64 eps x ``horizon`` + 1e-9 x ``slot``) + 1e-12 x ``bound``: every completion time
    is a float of magnitude at most the horizon (the latest completion, measured from the first
    arrival), each off by a few dozen roundings of eps = 2^-52 relative at most; a slotted engine
    counts a time within 1e-9 slot of a boundary as that boundary; the bound itself is a sum of n
    such values. A total below ``bound - beats_tolerance(...)`` is a real violation
    (formulations/rigid.md#jct-bound).

    >>> beats_tolerance(400, 2.0e6, 1.0e8) < 1e-3
    True
    """
    eps = 2.0**-52
    return float(n_jobs) * (64 * eps * abs(float(horizon)) + 1e-9 * abs(float(slot))) + 1e-12 * abs(float(bound))


def jct_lower_bound(
    arrival: Sequence[float], gpus: Sequence[float], processing: Sequence[float], total_gpus: int
) -> JctBound:
    """max(sum_i p_i, SRPT's sum_i C_i of works g_i p_i at speed G minus sum_i r_i, the mean busy
    time bound minus sum_i r_i), arrivals measured from the first one.

    Parameters
    ----------
    arrival, gpus, processing : sequences of one value per job
        r_i (s), g_i, and the least processing time p_i (s) of job i over every configuration
        (placement, worker count, ...) any policy may run it in, with the load time each job must
        pay once before it trains, if the run has one. Every schedule the bound covers gives job i
        at most g_i GPUs at a time and at least g_i p_i GPU-seconds in all
        (formulations/rigid.md#jct-bound explains how each paper's jobs meet this).
    total_gpus : int
        G.

    Raises
    ------
    InvalidInstanceError
        Lengths differ, or a value is negative, NaN or infinite, or G < 1.

    Guarantee
    ---------
    sum_i (C_i - r_i) >= ``total`` for every schedule in which job i holds at most g_i GPUs at a
    time and at least g_i p_i GPU-seconds in all (formulations/rigid.md#jct-bound).

    Notes
    -----
    O(n log n): two sweeps with a heap (10^6 jobs in a few seconds).

    Examples
    --------
    >>> b = jct_lower_bound([0, 0], [2, 2], [10, 10], total_gpus=2)   # one runs after the other
    >>> b.total, b.own_length, b.fluid, b.mean_busy, b.which
    (30.0, 20.0, 30.0, 30.0, 'fluid')
    >>> b = jct_lower_bound([1.6e9, 1.6e9 + 5], [1, 1], [10, 1], total_gpus=1)  # epoch times: 11 + 1
    >>> b.total
    12.0
    """
    r = np.asarray(arrival, dtype=float)
    g = np.asarray(gpus, dtype=float)
    p = np.asarray(processing, dtype=float)
    if not (len(r) == len(g) == len(p)):
        raise InvalidInstanceError(
            f"arrival, gpus and processing must have one value per job; got {len(r)}, {len(g)}, {len(p)}."
        )
    for name, a in (("arrival", r), ("gpus", g), ("processing", p)):
        bad = ~(np.isfinite(a) & (a >= 0))
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            raise InvalidInstanceError(f"The '{name}' of job {i} must be a finite number >= 0; got {a[i]!r}.")
    if not (isinstance(total_gpus, (int, np.integer)) and total_gpus >= 1):
        raise InvalidInstanceError(f"total_gpus must be an integer >= 1; got {total_gpus!r}.")
    if len(r) == 0:
        return JctBound(total=0.0, own_length=0.0, fluid=0.0, n_jobs=0, gpus=int(total_gpus), mean_busy=0.0)
    r = r - r.min()  # the time origin at the first arrival: sums of C_i and r_i stay small
    own = float(p.sum())
    sum_r = float(r.sum())
    fluid = max(srpt_total_completion(r, g * p, float(total_gpus)) - sum_r, 0.0)
    busy = max(mean_busy_total_completion(r, p, g, float(total_gpus)) - sum_r, 0.0)
    return JctBound(
        total=max(own, fluid, busy), own_length=own, fluid=fluid, n_jobs=len(r), gpus=int(total_gpus), mean_busy=busy
    )


@dataclass(frozen=True)
class NonPreemptiveBound:
    """A lower bound on the total JCT of every *non-preemptive* schedule of rigid jobs (seconds):
    ``total`` from the exact model's proven bound on slot-floored data (``optimal``: the model was
    solved to optimality, so ``total`` is its optimum, converted), ``slot`` the slot length used.
    ``exact_data``: every release and processing time is a whole number of slots and no job was left
    out, so the floored instance is the real one and an optimal ``total`` is the real optimum;
    otherwise it is the optimum of the slot-rounded instance, a bound on the real one."""

    total: float
    optimal: bool
    slot: float
    n_jobs: int
    solver_status: str
    exact_data: bool = False

    @property
    def description(self) -> str:
        """What ``total`` is, in words: "proven optimum", "optimum of the slot-rounded instance" or
        "proven bound"."""
        if not self.optimal:
            return "proven bound of the slot-rounded instance"
        return "proven optimum" if self.exact_data else f"optimum of the slot-rounded instance ({self.slot:g} s slots)"

    @property
    def mean(self) -> float:
        return self.total / self.n_jobs if self.n_jobs else float("nan")


def nonpreemptive_lower_bound(
    arrival: Sequence[float],
    gpus: Sequence[float],
    processing: Sequence[float],
    cluster,
    *,
    max_slots: int = 400,
    time_limit: float = 10.0,
    backend: str = "cpsat",
) -> NonPreemptiveBound:
    """A lower bound on sum_i (C_i - r_i) over every non-preemptive schedule in which job i holds
    g_i GPUs of ``cluster`` for at least p_i seconds from one start S_i >= r_i
    (formulations/rigid.md#jct-bound, "non-preemptive optimum").

    Releases (measured from the first one) and processing times are floored to whole slots of Delta
    seconds (Delta the least whole number of seconds with max r + sum p <= ``max_slots`` slots);
    flooring a schedule's starts keeps it feasible and its completions no later, so the floored
    instance's optimum is at most the real one. Jobs shorter than a slot are left out of the model
    (removing jobs cannot raise the others' optimum) and counted with their own length. The exact
    model's proven bound (its optimum when solved) is used, never its incumbent.

    Raises
    ------
    InvalidInstanceError
        Bad data (as :func:`jct_lower_bound`).
    """
    r = np.asarray(arrival, dtype=float)
    g = np.asarray(gpus, dtype=float)
    p = np.asarray(processing, dtype=float)
    jct_lower_bound(r, g, p, int(cluster.total_gpus))  # validates the data
    if len(r):
        r = r - r.min()  # from the first arrival: the slots cover the jobs, not the clock's origin
    span = float(r.max() + p.sum()) if len(r) else 0.0
    delta = float(max(1, math.ceil(span / max_slots)))
    rs = np.floor(r / delta + 1e-9)
    ps = np.floor(p / delta + 1e-9)
    keep = ps >= 1
    short = float(p[~keep].sum())
    exact = bool(
        keep.all() and np.allclose(rs * delta, r, rtol=0, atol=1e-9) and np.allclose(ps * delta, p, rtol=0, atol=1e-9)
    )
    if not keep.any():
        return NonPreemptiveBound(short, True, delta, len(r), "no job longer than a slot", exact_data=True)
    jobs = [
        Job(int(i), work=float(ps[i] * delta), gpus=int(g[i]), arrival=float(rs[i] * delta))
        for i in np.nonzero(keep)[0]
    ]
    res = solve_exact(
        Instance(cluster, jobs, name="np-bound", slot=delta),
        backend=backend,
        options=SolveOptions(time_limit=time_limit, threads=1),
    )
    if res.bound is None:
        return NonPreemptiveBound(float(p.sum()), False, delta, len(r), str(res.status))
    total = float(res.bound) - float(r[keep].sum()) + short
    return NonPreemptiveBound(
        max(total, float(p.sum())), str(res.status) == "optimal", delta, len(r), str(res.status), exact_data=exact
    )
