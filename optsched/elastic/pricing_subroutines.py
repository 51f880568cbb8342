"""The paper's pricing subroutines as printed, by job position: Alg. 4 (A_mincost1, PS, q = 0),
Alg. 5 (A_mincost2, PS, q = 1), Alg. 6 (A_RAmincost1, RAR, q = 1), Alg. 7 (A_RAmincost2, RAR, q = 0)
and Alg. 3 lines 3-7 (the cheaper of the two), with the readings of
``formulations/elastic.md#pricing``. The public forms, by job id, are in
:mod:`optsched.elastic.pricing`. Tested in ``tests/elastic/test_pricing.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.elastic.constants import guarded_ceil
from optsched.elastic.gamma import make_config
from optsched.elastic.model import ElasticInstance
from optsched.elastic.prices import EPS, Priced, Prices, fits, greedy_place, window_cost, worker_caps


# -- the paper's subroutines, as printed -----------------------------------------------------------
def _l_range(instance: ElasticInstance, j: int, m: int, p: Any, q: int) -> range:
    """Alg. 4 line 5: L from ceil(E K / rho) (D workers) to ceil(E D K / rho) (one worker)."""
    job = instance.jobs[j]
    t_it = instance.iteration_ms(j, m, p, q, 1)
    per_slot = 1000.0 * instance.slot / t_it
    lo = guarded_ceil(job.epochs * job.minibatches / per_slot)
    hi = guarded_ceil(job.work / per_slot)
    return range(max(1, lo), hi + 1)


def _window_min(omega: np.ndarray, t: int, L: int) -> np.ndarray:
    return omega[t : t + L].min(axis=0)


def a_mincost1_by_index(
    instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True, reset_n_hat: bool = True
) -> Priced | None:
    """Alg. 4 (A_mincost1, PS, q = 0) as printed, with the readings: N^ is reset for each PS server n
    (line 10 resets y and s only; carrying N^ over would leave the later n without workers), starts
    t^- in [0, tau - L] (0-based: completion t^- + L <= tau), and the returned q is the placement's
    (Alg. 4 can end with every worker on the PS server; its L, computed with the q = 0 rate, is then
    still enough). ``reset_n_hat=False`` is the literal text: N^ is set once per L (line 6, before the
    loop on t^-) and keeps decreasing over the loops on t^- and n (formulations/elastic.md#findings, 2)."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    H = instance.H
    best: Priced | None = None
    for m in range(instance.M):
        e = np.asarray(instance.e[m])
        b = instance.worker_types[m].bandwidth
        wc = (prices.delta * e[None, None, :]).sum(-1)
        for p in range(instance.P):
            z = np.asarray(instance.z[p])
            B = instance.ps_types[p].bandwidth
            rho = 1000.0 * instance.slot / instance.iteration_ms(j, m, p, 0, 1)
            for L in _l_range(instance, j, m, p, 0):
                N = guarded_ceil(instance.jobs[j].work / (L * rho))
                if instance.jobs[j].chunks < N:
                    continue
                N_hat = N  # line 6: once per L (the literal text; reset below for each n by default)
                for t in range(0, tau - L + 1):
                    Omega = wc[t : t + L].sum(axis=0)
                    order = np.argsort(Omega, kind="stable")
                    wmin = _window_min(omega, t, L)
                    for n_pos in range(H):
                        n = int(order[n_pos])
                        y = np.zeros(H, dtype=int)
                        s = np.zeros(H, dtype=int)
                        if reset_n_hat:
                            N_hat = N
                        for k in order:
                            k = int(k)
                            y_hat = min(int(worker_caps(wmin[k : k + 1], e, 10**9)[0]), N_hat)
                            y[k] = y_hat
                            if k == n:
                                for g in range(0, y_hat + 1):
                                    free = wmin[n] - g * e
                                    pos = z > 0
                                    s_hat = int(np.floor(free[pos] / z[pos] + EPS).min()) if pos.any() else 10**9
                                    if s_hat * B >= (N - g) * b - EPS:
                                        y[n] = g
                                        s[n] = min(s_hat, guarded_ceil((N - g) * b / B))
                            N_hat -= int(y[k])
                        if N_hat > 0 or s[n] < 1:
                            continue
                        workers = {h: int(y[h]) for h in range(H) if y[h] > 0}
                        used = set(workers) | {n}
                        cfg = make_config(instance, j, m, p, 1 if len(used) == 1 else 0, N, L, workers, {n: int(s[n])})
                        cost = window_cost(prices, cfg, t)
                        if best is None or cost < best.cost - 1e-12:
                            best = Priced(cost, cfg, t)
    return best


def a_mincost2_by_index(instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 5 (A_mincost2, PS, q = 1): for m, p, L (q = 1 rate), t^-, each server h holding
    N = ceil(E D K / (L rho)) workers and one PS (line 6, "respecting (2h) and (13a)")."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    best: Priced | None = None
    for m in range(instance.M):
        e = np.asarray(instance.e[m])
        for p in range(instance.P):
            z = np.asarray(instance.z[p])
            rho = 1000.0 * instance.slot / instance.iteration_ms(j, m, p, 1, 1)
            for L in _l_range(instance, j, m, p, 1):
                N = guarded_ceil(instance.jobs[j].work / (L * rho))
                if instance.jobs[j].chunks < N:
                    continue
                for t in range(0, tau - L + 1):
                    wmin = _window_min(omega, t, L)
                    for h in range(instance.H):
                        if fits(wmin[h], N * e + z):
                            cfg = make_config(instance, j, m, p, 1, N, L, {h: N}, {h: 1})
                            cost = window_cost(prices, cfg, t)
                            if best is None or cost < best.cost - 1e-12:
                                best = Priced(cost, cfg, t)
    return best


def a_ramincost1_by_index(instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 6 (A_RAmincost1, RAR, q = 1): for m, Phi' in 1..D, d^ = ceil(E D K / (Phi' rho)), t^-, each
    server h with y = min(cap, Phi'); infeasible if y < Phi'."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    best: Priced | None = None
    for m in range(instance.M):
        e = np.asarray(instance.e[m])
        for phi in range(1, instance.jobs[j].chunks + 1):
            d = instance.duration(j, m, None, 1, phi)
            for t in range(0, tau - d + 1):
                caps = worker_caps(_window_min(omega, t, d), e, phi)
                for h in range(instance.H):
                    if caps[h] < phi:
                        continue
                    cfg = make_config(instance, j, m, None, 1, phi, d, {h: phi}, {})
                    cost = window_cost(prices, cfg, t)
                    if best is None or cost < best.cost - 1e-12:
                        best = Priced(cost, cfg, t)
    return best


def a_ramincost2_by_index(instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 7 (A_RAmincost2, RAR, q = 0): for m, Phi', d^ with the q = 0 rate of (14), t^-, workers
    greedily on the servers of least Omega_h (line 5 read as N^ = Phi'); the returned q is the
    placement's (the greedy may use one server)."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    best: Priced | None = None
    for m in range(instance.M):
        e = np.asarray(instance.e[m])
        wc = (prices.delta * e[None, None, :]).sum(-1)
        for phi in range(1, instance.jobs[j].chunks + 1):
            d = instance.duration(j, m, None, 0, phi)
            for t in range(0, tau - d + 1):
                order = np.argsort(wc[t : t + d].sum(axis=0), kind="stable")
                caps = worker_caps(_window_min(omega, t, d), e, phi)
                place = greedy_place(order, caps, phi)
                if place is None:
                    continue
                cfg = make_config(instance, j, m, None, 1 if len(place) == 1 else 0, phi, d, place, {})
                cost = window_cost(prices, cfg, t)
                if best is None or cost < best.cost - 1e-12:
                    best = Priced(cost, cfg, t)
    return best


def paper_min_cost_by_index(
    instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True
) -> Priced | None:
    """Alg. 3 lines 3-7: the cheaper of the two printed subroutines (PS: Alg. 5 and 4; RAR: Alg. 6 and 7)."""
    if instance.is_ps:
        cands = [
            a_mincost2_by_index(instance, j, prices, residual=residual),
            a_mincost1_by_index(instance, j, prices, residual=residual),
        ]
    else:
        cands = [
            a_ramincost1_by_index(instance, j, prices, residual=residual),
            a_ramincost2_by_index(instance, j, prices, residual=residual),
        ]
    cands = [c for c in cands if c is not None]
    return min(cands, key=lambda c: c.cost) if cands else None
