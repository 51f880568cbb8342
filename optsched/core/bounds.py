"""Lower bounds on the total (weighted) flow time sum_i w_i (C_i - r_i) of every schedule of jobs on a
pool of resources, computed without a solver in O(n log n): what ``optsched compare`` measures every
policy against, and the cheap bound every exact solve reports before its solver starts.

Three relaxations of any schedule of jobs on a cluster of G GPUs (or G units of any resource), job i
released at r_i, holding at most g_i units at a time and needing at least w_i = g_i p_i unit-seconds
(p_i its *least* processing time) (``formulations/rigid.md#jct-bound``):

* **own length**: job i cannot finish before r_i + p_i, so sum_i (C_i - r_i) >= sum_i p_i;
* **fluid**: the cluster does at most G unit-seconds of work per second, so the completion times of
  any schedule are those of a preemptive schedule of the works g_i p_i on one machine of speed G,
  whose least total completion time is SRPT's (Schrage 1968); unit weights only;
* **mean busy time**: on that machine job i runs at a share of at most g_i / G, so it completes at
  least p_i / 2 after its mean busy time, and the weighted mean busy times of any schedule are
  bounded below by those of the preemptive schedule by largest weight per work first (Goemans 1997).

**No cancellation.** Each part is summed per job *as a flow time*: the sweeps keep the time as an
offset from the latest release (an input value), so every term is a difference of nearby numbers
(a release gap, a piece of work) and every sum is of non-negative terms (``math.fsum``). The parts
are then exact to a few roundings relative (below 1e-15) whatever the span of the arrivals (1e8 s of
Unix time) and the size of the durations (1e-6 s); a bound computed as sum_i C_i - sum_i r_i would
lose the digits of the small flow times to those of the large clock values.

:func:`jct_lower_bound` is the bound of a trace (unit weights, all three parts);
:func:`flow_time_bound` the general one (weights, a least duration apart from the work's, a real
capacity) that the exact solvers of the papers use. Tested in ``tests/core/test_bounds.py``.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from optsched.exceptions import InvalidInstanceError

#: The most jobs a cheap bound is computed for: beyond it (10^8 jobs, gigabytes of lists) the
#: bound's own sweep would exhaust memory, and an instance that large is refused before any work.
MAX_BOUND_JOBS = 50_000_000


@dataclass(frozen=True)
class JctBound:
    """The bound and its parts (seconds, weighted when weights were given). ``total`` =
    max(``own_length``, ``fluid``, ``mean_busy``); ``mean`` = ``total`` / ``n_jobs``; ``which``
    names the largest part (the first of own_length, fluid, mean_busy on a tie); ``parts`` maps
    each name to its value."""

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


def srpt_total_flow(release: ArrayLike, work: ArrayLike, speed: float = 1.0) -> float:
    """sum_i (C_i - r_i) of preemptive SRPT on one machine of ``speed`` (work units per second),
    summed as the number of jobs present times each piece of time, the time an offset from the
    latest release (no cancellation, see the module doc).

    Examples
    --------
    >>> srpt_total_flow([0, 0], [2, 1])           # C = 1, 3
    4.0
    >>> srpt_total_flow([1.6e9, 1.6e9], [2e-6, 1e-6])  # the same at Unix time with microsecond jobs
    4e-06
    """
    r = np.asarray(release, dtype=float)
    w = np.asarray(work, dtype=float) / float(speed)
    order = np.argsort(r, kind="stable")
    rl, wl = r[order].tolist(), w[order].tolist()
    n = len(rl)
    heap: list[float] = []
    terms: list[float] = []
    base, off, k = 0.0, 0.0, 0  # the time is base (a release) + off
    while k < n or heap:
        if k < n and (not heap or rl[k] - base <= off):
            base, off = rl[k], 0.0  # rebase at every release: the offset stays small
            while k < n and rl[k] == base:
                heapq.heappush(heap, wl[k])
                k += 1
            continue
        rem = heapq.heappop(heap)
        gap = rl[k] - base - off if k < n else math.inf  # until the next release
        if rem <= gap:  # finishes before the next release: every present job waits rem
            terms.append(rem * (len(heap) + 1))
            off += rem
        else:  # runs until the next release, then competes again
            terms.append(gap * (len(heap) + 1))
            heapq.heappush(heap, rem - gap)
            off = rl[k] - base  # exactly the release: it is taken next
    return float(math.fsum(terms))


def srpt_total_completion(release: ArrayLike, work: ArrayLike, speed: float = 1.0) -> float:
    """sum_i C_i of preemptive SRPT on one machine of ``speed``: :func:`srpt_total_flow` plus sum_i r_i.

    Examples
    --------
    >>> srpt_total_completion([0, 0], [2, 1])        # 1 + 3
    4.0
    >>> srpt_total_completion([0, 1], [3, 1], speed=1)  # the short job preempts at 1: 2 + 4
    6.0
    """
    return float(math.fsum([srpt_total_flow(release, work, speed), *np.asarray(release, dtype=float).tolist()]))


def mean_busy_total_flow(
    release: ArrayLike,
    processing: ArrayLike,
    gpus: ArrayLike,
    total_gpus: float,
    weights: ArrayLike | None = None,
) -> float:
    """A lower bound on sum_i w_i (C_i - r_i) over every schedule in which job i, released at
    ``release[i]``, holds at most ``gpus[i]`` of ``total_gpus`` units at a time and at least
    ``gpus[i] * processing[i]`` unit-seconds in all: sum_i w_i (M_i - r_i + p_i / 2), M_i the mean
    busy times of the preemptive schedule of one machine (all units pooled) that always runs the
    released job of largest w_i / (g_i p_i) first (Goemans 1997; unit weights: least work first).

    Why: keep only the first g_i p_i unit-seconds of each job (its completion can only move earlier).
    On the pooled machine job i then has q_i = g_i p_i / G units of work done at a rate of at most
    g_i / G, so its mean busy time M_i is at most C_i - p_i / 2; and that preemptive schedule
    minimises sum_i w_i M_i over every schedule of that machine, processor sharing included.
    Each M_i - r_i is summed from its pieces, (base - r_i) + offset + run / 2 (module doc).

    Examples
    --------
    >>> mean_busy_total_flow([0, 0], [10, 10], [2, 2], 2)   # one after the other: 10 + 20
    30.0
    >>> mean_busy_total_flow([0, 0], [10, 10], [1, 1], 2)   # side by side: 10 + 10
    20.0
    >>> mean_busy_total_flow([0, 0], [10, 10], [2, 2], 2, weights=[1, 3])  # the heavy one first: 3 x 10 + 20
    50.0
    """
    r = np.asarray(release, dtype=float)
    p = np.asarray(processing, dtype=float)
    g = np.asarray(gpus, dtype=float)
    w = np.ones(len(r)) if weights is None else np.asarray(weights, dtype=float)
    n = len(r)
    if n == 0:
        return 0.0
    q = g * p / float(total_gpus)  # work on the pooled machine of unit speed
    order = np.argsort(r, kind="stable").tolist()
    rl, ql, wl = r.tolist(), q.tolist(), w.tolist()
    left = list(ql)
    busy: list[list[float]] = [[] for _ in range(n)]  # pieces of the integral of (t - r_j) over j's time
    heap: list[tuple[float, int]] = []
    base, off, i = 0.0, 0.0, 0
    while i < n or heap:
        if i < n and (not heap or rl[order[i]] - base <= off):
            base, off = rl[order[i]], 0.0
            while i < n and rl[order[i]] == base:
                j = order[i]
                key = -wl[j] / ql[j] if ql[j] > 0 else -math.inf
                heapq.heappush(heap, (key, j))
                i += 1
            continue
        j = heap[0][1]
        if ql[j] <= 0.0:  # a job of no work: its mean busy time is its release (p_j = 0 or g_j = 0)
            heapq.heappop(heap)
            continue
        gap = rl[order[i]] - base - off if i < n else math.inf
        done = left[j] <= gap
        run = left[j] if done else gap
        busy[j].append(run * ((base - rl[j]) + off + run / 2))
        left[j] -= run
        if done:
            heapq.heappop(heap)
            off += run
        else:  # preempted (perhaps) at the next release, taken next
            off = rl[order[i]] - base
    terms = []
    for j in range(n):
        m = math.fsum(busy[j]) / ql[j] if ql[j] > 0 else 0.0
        terms.append(wl[j] * (m + float(p[j]) / 2))
    return float(math.fsum(terms))


def mean_busy_total_completion(release: ArrayLike, processing: ArrayLike, gpus: ArrayLike, total_gpus: float) -> float:
    """:func:`mean_busy_total_flow` (unit weights) plus sum_i r_i: a lower bound on sum_i C_i.

    Examples
    --------
    >>> mean_busy_total_completion([0, 0], [10, 10], [2, 2], 2)   # one after the other: 10 + 20
    30.0
    """
    flow = mean_busy_total_flow(release, processing, gpus, total_gpus)
    return float(math.fsum([flow, *np.asarray(release, dtype=float).tolist()]))


def beats_tolerance(n_jobs: int, horizon: float, bound: float, slot: float = 0.0) -> float:
    """How far below ``bound`` a total JCT may fall from rounding alone (seconds).

    ``n_jobs`` x (64 eps x ``horizon`` + 1e-9 x ``slot``) + 1e-12 x ``bound``: every completion time
    is a float of magnitude at most the horizon (the latest completion, measured from the first
    arrival), each off by a few dozen roundings of eps = 2^-52 relative at most; a slotted engine
    counts a time within 1e-9 slot of a boundary as that boundary; the bound itself is exact to a
    few roundings relative (module doc). A total below ``bound - beats_tolerance(...)`` is a real
    violation (formulations/rigid.md#jct-bound).

    >>> beats_tolerance(400, 2.0e6, 1.0e8) < 1e-3
    True
    """
    eps = 2.0**-52
    return float(n_jobs) * (64 * eps * abs(float(horizon)) + 1e-9 * abs(float(slot))) + 1e-12 * abs(float(bound))


def _checked(name: str, values: ArrayLike | None, n: int) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.shape != (n,):
        raise InvalidInstanceError(f"'{name}' must have one value per job ({n}); got shape {a.shape}.")
    bad = ~(np.isfinite(a) & (a >= 0))
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        raise InvalidInstanceError(f"The '{name}' of job {i} must be a finite number >= 0; got {a[i]!r}.")
    return a


def flow_time_bound(
    release: ArrayLike,
    gpus: ArrayLike,
    processing: ArrayLike,
    capacity: float,
    *,
    weights: ArrayLike | None = None,
    least_duration: ArrayLike | None = None,
) -> JctBound:
    """A lower bound on sum_i w_i (C_i - r_i) over every schedule in which job i, released at
    ``release[i]``, holds at most ``gpus[i]`` of ``capacity`` units at a time, at least
    ``gpus[i] * processing[i]`` unit-seconds in all, and runs at least ``least_duration[i]``
    (default ``processing[i]``) seconds.

    Parts (module doc): own length sum_i w_i d_i; fluid (SRPT of the works at speed ``capacity``,
    unit weights only: 0 when weights are given); weighted mean busy time. ``total`` is the largest.

    Raises
    ------
    InvalidInstanceError
        A length differs, a value is negative, NaN or infinite, ``capacity`` is not positive, or
        there are more than :data:`MAX_BOUND_JOBS` jobs.

    Guarantee
    ---------
    sum_i w_i (C_i - r_i) >= ``total`` (up to a few roundings relative, below 1e-15) for every such
    schedule, whatever the time origin and scale (formulations/rigid.md#jct-bound).

    Examples
    --------
    >>> b = flow_time_bound([0, 0], [2, 2], [10, 10], 2, weights=[1, 3])  # the heavy job first: 3 x 10 + 20
    >>> b.total, b.which
    (50.0, 'mean_busy')
    """
    n = len(np.asarray(release, dtype=float).reshape(-1))
    if n > MAX_BOUND_JOBS:
        raise InvalidInstanceError(
            f"{n:,} jobs is more than the cheap bound handles ({MAX_BOUND_JOBS:,}); split the workload."
        )
    r = _checked("arrival", release, n)
    g = _checked("gpus", gpus, n)
    p = _checked("processing", processing, n)
    w = None if weights is None else _checked("weight", weights, n)
    d = p if least_duration is None else _checked("least_duration", least_duration, n)
    if not (isinstance(capacity, (int, float, np.integer, np.floating)) and math.isfinite(capacity) and capacity > 0):
        raise InvalidInstanceError(f"The capacity must be a finite number > 0; got {capacity!r}.")
    if n == 0:
        return JctBound(total=0.0, own_length=0.0, fluid=0.0, n_jobs=0, gpus=int(capacity), mean_busy=0.0)
    own = float(math.fsum((d if w is None else w * d).tolist()))
    fluid = srpt_total_flow(r, g * p, float(capacity)) if w is None else 0.0
    busy = mean_busy_total_flow(r, p, g, float(capacity), weights=w)
    return JctBound(
        total=max(own, fluid, busy), own_length=own, fluid=fluid, n_jobs=n, gpus=int(capacity), mean_busy=busy
    )


def jct_lower_bound(arrival: ArrayLike, gpus: ArrayLike, processing: ArrayLike, total_gpus: int) -> JctBound:
    """max(sum_i p_i, SRPT's sum_i (C_i - r_i) of works g_i p_i at speed G, the mean busy time bound
    on sum_i (C_i - r_i)), each summed per job without cancellation (module doc).

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
    lengths = [len(np.asarray(a, dtype=float).reshape(-1)) for a in (arrival, gpus, processing)]
    if len(set(lengths)) > 1:
        raise InvalidInstanceError(
            f"arrival, gpus and processing must have one value per job; got {lengths[0]}, {lengths[1]}, {lengths[2]}."
        )
    if not (isinstance(total_gpus, (int, np.integer)) and not isinstance(total_gpus, bool) and total_gpus >= 1):
        raise InvalidInstanceError(f"total_gpus must be an integer >= 1; got {total_gpus!r}.")
    return flow_time_bound(arrival, gpus, processing, int(total_gpus))
