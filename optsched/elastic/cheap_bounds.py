"""Bounds on (2) and (8) computed in milliseconds, without Gamma_j or a solver: what every exact
solve of the elastic kind reports before (or instead of) its solver's bound
(``formulations/elastic.md#cheap-bounds``).

* :func:`min_sum_bound`: a lower bound on min sum_j w_j c_j of (2) / (15), the larger of each
  job's own least completion sum_j w_j (a_j + d_j^min) and, for every resource r, the weighted
  mean-busy-time bound of the cluster's C^r pooled into one machine
  (:func:`optsched.core.bounds.flow_time_bound`).
* :func:`max_weight_bound`: an upper bound on (8) / (17), the least over the resources of a
  fractional knapsack of the jobs that can complete by tau into C^r tau unit-slots.

Per job and resource, over every configuration that fits the empty cluster (not only Gamma_j:
the bounds hold for the direct models too): W_j^r, the least unit-slots of r its workers hold
(d_q(N) N e_m^r; parameter servers only add), and rho_j^r, the most of r it holds at a time
(D_j e_m^r for its largest worker type, plus C^r when a parameter server uses r at all, at most
C^r). A configuration holds a constant amount u <= rho_j^r of r for its d >= d_j^min slots, so
the job truncated to its first W_j^r unit-slots has its mean busy time at least
max(d_j^min, W_j^r / rho_j^r) / 2 before c_j: the mean-busy part pairs that with the work W_j^r.

Tested in ``tests/elastic/test_cheap_bounds.py``.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.core.bounds import flow_time_bound
from optsched.elastic.model import ElasticInstance


def resource_use(instance: ElasticInstance, j: int) -> tuple[np.ndarray, np.ndarray]:
    """(W, rho) of job index ``j``, one value per resource (module doc): its least unit-slots of
    each resource and the most of that resource it holds at a time, over every configuration that fits the
    empty cluster.

    >>> from optsched.elastic import toy_instance
    >>> W, rho = resource_use(toy_instance(), 0)
    >>> bool((W > 0).any() and (rho >= 0).all())
    True
    """
    R = instance.R
    cap = np.array([sum(instance.C[h][r] for h in range(instance.H)) for r in range(R)], dtype=float)
    job = instance.jobs[j]
    W = np.full(R, math.inf)
    ps = range(instance.P) if instance.is_ps else [None]
    for m in range(instance.M):
        e = np.asarray(instance.e[m], dtype=float)
        for p in ps:
            for q in (1, 0):
                for n in range(1, job.chunks + 1):
                    if instance.placeable(m, p, q, n):
                        W = np.minimum(W, instance.duration(j, m, p, q, n) * n * e)
    W[~np.isfinite(W)] = 0.0
    rho = np.max([job.chunks * np.asarray(instance.e[m], dtype=float) for m in range(instance.M)], axis=0)
    if instance.is_ps:
        z = np.max([np.asarray(instance.z[p], dtype=float) for p in range(instance.P)], axis=0)
        rho = np.where(z > 0, cap, rho)
    return W, np.minimum(rho, cap)


def _data(instance: ElasticInstance):
    n = instance.n_jobs
    a = np.array([j.arrival for j in instance.jobs], dtype=float)
    w = np.array([j.weight for j in instance.jobs], dtype=float)
    d = np.array([instance.min_duration(i) or 0 for i in range(n)], dtype=float)
    use = [resource_use(instance, i) for i in range(n)]
    W = np.array([u[0] for u in use], dtype=float).reshape(n, instance.R)
    rho = np.array([u[1] for u in use], dtype=float).reshape(n, instance.R)
    cap = np.array([sum(instance.C[h][r] for h in range(instance.H)) for r in range(instance.R)], dtype=float)
    return a, w, d, W, rho, cap


def min_sum_bound(instance: ElasticInstance) -> tuple[float, str]:
    """A lower bound on min sum_j w_j c_j of (2) / (15) (slots times weights) and the name of its
    part: ``"own_length"`` or ``"mean_busy[<resource>]"`` (module doc). Rounded up when every
    weight is an integer (every c_j is a whole slot).

    Guarantee
    ---------
    ``min_sum_bound(instance)[0] <=`` the optimum of (2) (tested against exact optima).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> b, which = min_sum_bound(toy_instance())
    >>> 0 < b <= 25.0   # the toy's optimum: 25
    True
    """
    if instance.n_jobs == 0:
        return 0.0, "own_length"
    a, w, d, W, rho, cap = _data(instance)
    base = math.fsum((w * a).tolist())
    best, which = math.fsum((w * d).tolist()), "own_length"
    for r, name in enumerate(instance.resources):
        if cap[r] <= 0:
            continue
        # job j's W^r unit-slots run at a constant rate u <= rho for d >= max(d^min, W / u) slots:
        # truncated to its first W units its mean busy time is at most c_j - max(d^min, W / rho) / 2
        # (d - W / (2u) >= d / 2 and >= W / (2u)); as a job of width W / p for p slots
        work = W[:, r] > 0
        p = np.where(work, np.maximum(d, W[:, r] / np.where(rho[:, r] > 0, rho[:, r], np.inf)), 0.0)
        g = np.where(work, W[:, r] / np.where(work, p, 1.0), 0.0)
        b = flow_time_bound(a, g, p, float(cap[r]), weights=w)
        if b.mean_busy > best:
            best, which = b.mean_busy, f"mean_busy[{name}]"
    value = base + best
    if all(float(j.weight).is_integer() for j in instance.jobs):
        value = float(math.ceil(value - 1e-9 * max(1.0, abs(value))))
    return value, which


def max_weight_bound(instance: ElasticInstance, tau: int, *, arrivals: bool = False) -> tuple[float, str]:
    """An upper bound on (8) / (17): the most weight of jobs completing by ``tau`` slots, and the
    name of its part: ``"eligible"`` (the total weight of the jobs that can complete by tau alone,
    d_j^min <= tau, with ``arrivals`` a_j + d_j^min <= tau) or ``"knapsack[<resource>]"`` (those
    jobs packed fractionally, heaviest per unit-slot first, into the C^r tau unit-slots of resource
    r). Rounded down when every weight is an integer.

    Guarantee
    ---------
    ``max_weight_bound(instance, tau)[0] >=`` the optimum of (8) (tested against exact optima).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> max_weight_bound(toy_instance(), 12)[0] >= 1.0   # the toy's optimum at tau = 12: 1
    True
    """
    if instance.n_jobs == 0:
        return 0.0, "eligible"
    a, w, d, W, _, cap = _data(instance)
    ok = (d + (a if arrivals else 0.0) <= tau) & (d > 0)
    best, which = math.fsum(w[ok].tolist()), "eligible"
    for r, name in enumerate(instance.resources):
        room = cap[r] * tau
        idx = [i for i in np.nonzero(ok)[0] if W[i, r] > 0]
        free = math.fsum(w[i] for i in np.nonzero(ok)[0] if W[i, r] <= 0)
        idx.sort(key=lambda i: -w[i] / W[i, r])
        total = free
        for i in idx:
            take = min(1.0, room / W[i, r])
            total += take * w[i]
            room -= take * W[i, r]
            if room <= 0:
                break
        if total < best:
            best, which = total, f"knapsack[{name}]"
    if all(float(j.weight).is_integer() for j in instance.jobs):
        best = float(math.floor(best + 1e-9 * max(1.0, abs(best))))
    return best, which
