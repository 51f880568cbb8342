"""Two exact methods that use no solver: a dynamic program over subsets (N <= 20) and exhaustive
search over all N! orders (N <= 10).

Both minimise ``sum_i d_i + sum_{k before i} c[k, i]`` (the pair costs of
``formulations/sojourn.md#pair-costs``): appending job i after the set S of jobs already run
adds ``sum_{k in S} c[k, i]``, whatever the order inside S, so
``F(S + i) = min_i F(S) + sum_{k in S} c[k, i]`` (Held-Karp style).

Tested in ``tests/sojourn/test_exact.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from optsched.exceptions import InvalidOptionError, ModelTooLargeError
from optsched.sojourn.evaluate import PairCosts

DP_MAX_JOBS = 20
EXHAUSTIVE_MAX_JOBS = 10


def subset_dp(pc: PairCosts, *, max_jobs: int = DP_MAX_JOBS) -> tuple[float, list[int]]:
    """Optimal order by dynamic programming over subsets: O(2^N N^2) time, O(2^N) memory.

    Returns ``(objective (1), order as indices)``.

    Raises
    ------
    ModelTooLargeError
        N > ``max_jobs`` (2^20 states use ~10 MB and a few seconds).

    Guarantee
    ---------
    The returned order minimises objective (1) over all N! orders (Bellman's principle on the
    pair decomposition); by Thm III.1 it is also optimal over static stage sequences.

    References
    ----------
    ``formulations/sojourn.md#exact-order``.

    Examples
    --------
    >>> import optsched
    >>> from optsched.sojourn.evaluate import pair_costs
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> v, order = subset_dp(pair_costs(inst))
    >>> round(v, 10), order
    (9.1, [0, 1])
    """
    n = pc.n
    if n > max_jobs:
        raise ModelTooLargeError(
            f"The subset DP needs 2^{n} states; above the limit of N = {max_jobs} jobs. "
            f"Use backend='highs' or 'cpsat', or raise max_jobs."
        )
    c = pc.c
    full = (1 << n) - 1
    F = np.full(1 << n, np.inf)
    F[0] = 0.0
    idx = np.arange(1 << n, dtype=np.int64)
    pop = np.zeros(1 << n, dtype=np.int8)
    for k in range(n):
        pop += ((idx >> k) & 1).astype(np.int8)
    order_by_pop = np.argsort(pop, kind="stable")
    starts = np.searchsorted(pop[order_by_pop], np.arange(n + 2))
    for L in range(n):
        S = order_by_pop[starts[L] : starts[L + 1]]
        bits = ((S[:, None] >> np.arange(n)[None, :]) & 1).astype(np.float64)  # (|S|, n)
        A = bits @ c  # A[s, i] = sum_{k in S} c[k, i]
        FS = F[S]
        for i in range(n):
            free = (S >> i) & 1 == 0
            if not free.any():
                continue
            T = S[free] | (1 << i)
            np.minimum.at(F, T, FS[free] + A[free, i])
    # reconstruct backwards: the last job of T is an i with F[T - i] + A_i(T - i) = F[T]
    order = []
    T = full
    while T:
        best = None
        for i in range(n):
            if (T >> i) & 1:
                S = T & ~(1 << i)
                members = [k for k in range(n) if (S >> k) & 1]
                v = F[S] + c[members, i].sum()
                if best is None or v < best[0] - 1e-15:
                    best = (v, i, S)
        order.append(best[1])
        T = best[2]
    order.reverse()
    return float(F[full] + pc.d.sum()), order


def exhaustive_search(
    pc: PairCosts, *, max_jobs: int = EXHAUSTIVE_MAX_JOBS, chunk: int = 40_320
) -> tuple[float, list[int]]:
    """Optimal order by evaluating all N! orders (what the paper calls OPTIMAL), vectorised.

    Returns ``(objective (1), order as indices)``; ties go to the lexicographically first order.
    """
    n = pc.n
    if n > max_jobs:
        raise InvalidOptionError(
            f"Exhaustive search over {n}! = {math.factorial(n):,} orders is too slow; "
            f"max_jobs={max_jobs}. Use backend='dp', 'highs' or 'cpsat'."
        )
    P, Q = np.triu_indices(n, 1)
    best_v, best_o = np.inf, None
    it = itertools.permutations(range(n))
    while True:
        block = np.array(list(itertools.islice(it, chunk)), dtype=np.int64)
        if block.size == 0:
            break
        vals = pc.c[block[:, P], block[:, Q]].sum(axis=1)
        k = int(np.argmin(vals))
        if vals[k] < best_v - 1e-15:
            best_v, best_o = float(vals[k]), block[k].tolist()
    return best_v + float(pc.d.sum()), best_o
