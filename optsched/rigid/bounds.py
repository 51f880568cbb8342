"""Lower bounds for rigid jobs that need no solver: :func:`area_bound`, a combinatorial lower bound
on the total weighted completion time of an instance, in O(n log n): what an exact solve reports
before (or instead of) a solver's bound (``formulations/rigid.md#area-bound``), and
:func:`area_bound_slots`, the same from slot data.

The bounds on the total JCT of every online policy on a trace are in :mod:`optsched.core.bounds`.
Tested in ``tests/rigid/test_time_limit.py``.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from optsched.core.instance import Instance
from optsched.core.registry import check_kind
from optsched.rigid.formulation import slot_data


def area_bound_slots(
    p: list[int], r: list[int], g: list[int], w: list[float], G: int, *, deadline: float | None = None
) -> float:
    """The bound of :func:`area_bound` in slots, from slot data (work ``p``, release ``r``, GPUs
    ``g``, weight ``w`` per job, ``G`` GPUs in the cluster).

    Once every job is released, the jobs left run in the heap's order to the end: that part is
    done with NumPy (sequential sums, so the same floats). ``deadline`` (a ``time.monotonic()``
    value): past it, the sweep stops and the bound is the trivial one, sum w_j (r_j + p_j).

    >>> area_bound_slots([2, 2], [0, 0], [4, 4], [1, 1], 4)  # two 4-GPU jobs on 4 GPUs: C = 2, 4
    6.0
    """
    n = len(p)
    if n == 0:
        return 0.0
    trivial = float(sum(w[j] * (r[j] + p[j]) for j in range(n)))
    q = [g[j] * p[j] / G for j in range(n)]  # the job's area on a machine of speed G
    order = sorted(range(n), key=lambda j: r[j])
    left = list(q)
    busy = [0.0] * n  # integral of t over the machine time given to j
    heap: list[tuple[float, int]] = []
    t, i, steps = 0.0, 0, 0
    while i < n or heap:
        steps += 1
        if deadline is not None and steps % 1024 == 0 and time.monotonic() > deadline:
            return trivial
        if not heap:
            t = max(t, float(r[order[i]]))
        while i < n and r[order[i]] <= t:
            j = order[i]
            heapq.heappush(heap, (-w[j] / q[j], j))
            i += 1
        if i >= n:  # every job released: the rest run in the heap's order
            _run_to_the_end(heap, left, busy, t)
            break
        j = heap[0][1]
        run = min(left[j], r[order[i]] - t)
        busy[j] += run * (t + run / 2)
        left[j] -= run
        t += run
        if left[j] <= 1e-12 * max(1.0, q[j]):
            heapq.heappop(heap)
    mean_busy = sum(w[j] * (busy[j] / q[j] + p[j] / 2) for j in range(n))
    return max(mean_busy, trivial)


def _run_to_the_end(heap: list[tuple[float, int]], left: list[float], busy: list[float], t: float) -> None:
    """The jobs of ``heap`` run one after another in its order from ``t``, each its ``left``: their
    ``busy`` integrals, as the sweep's loop adds them (the times are cumulative sums from ``t``, in
    the loop's order of additions)."""
    if not heap:
        return
    heap.sort()  # the order in which the loop pops them: (-ratio, index)
    idx = np.array([j for _, j in heap], dtype=np.int64)
    run = np.array(left, dtype=float)[idx]
    times = np.cumsum(np.concatenate([[t], run]))[:-1]  # t before each run, summed in order
    added = np.array(busy, dtype=float)[idx] + run * (times + run / 2)
    for j, b in zip(idx.tolist(), added.tolist(), strict=True):
        busy[j] = b
        left[j] = 0.0
    heap.clear()


def area_bound(instance: Instance, *, deadline: float | None = None) -> float:
    """A lower bound on the minimum total weighted completion time (seconds times weights),
    computed in O(n log n) without a solver.

    Every schedule runs job j on g_j of the G GPUs for p_j from S_j: on one machine of speed G
    (all GPUs pooled), j takes the share g_j / G for p_j, an amount q_j = g_j p_j / G of work
    whose *mean busy time* is the midpoint M_j = S_j + p_j / 2 = C_j - p_j / 2. The mean busy
    times of any schedule of that machine are bounded below by those of the preemptive schedule
    that always runs the released job of largest w_j / q_j (Goemans 1997: it minimises
    sum_j w_j M_j over all preemptive schedules with release dates), so
    sum_j w_j C_j >= sum_j w_j (M_j^LP + p_j / 2). The bound is the larger of that and
    sum_j w_j (r_j + p_j). It is the value of the energy rows (E) of the CP-SAT model
    (``formulations/rigid.md#bounds``), without an LP.

    Guarantee
    ---------
    ``area_bound(instance) <= OPT`` (tested against the brute-force optimum).

    Notes
    -----
    O(n log n): one sweep over the releases with a heap.

    References
    ----------
    M. X. Goemans. Improved approximation algorithms for scheduling with release dates. SODA 1997.
    ``formulations/rigid.md#area-bound``.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
    >>> area_bound(inst) <= 19.0
    True
    """
    check_kind(instance, "rigid", "area_bound")
    d = slot_data(instance)
    value = area_bound_slots(d.p, d.r, d.g, d.w, sum(d.G), deadline=deadline) * instance.slot
    return value if math.isfinite(value) else 0.0
