"""Pricing: the cheapest schedule of one job at given resource prices, (12)/(13) (PS) and (20)/(21) (RAR).

* :func:`min_cost` - the **exact oracle** (ties in cost: earliest completion first). By the dominance argument of
  ``formulations/elastic.md#gamma`` (nonnegative prices never make a dominating schedule dearer)
  it enumerates worker type m, PS type p, q, the useful N with d = d_q(N), the start t^-, and for
  q = 0 the PS server n and its worker count g < N; the other N - g workers go greedily to the
  servers with the least window price per worker (exact: workers of one type are identical, so the
  cost is linear in the per-server counts with per-server caps). RAR q = 0 must span two servers:
  when the greedy puts every worker on the cheapest server, one worker moves to the next cheapest
  (that is the best spanning placement). Every schedule respects the residual capacity
  omega = C - beta over its whole window (or the empty servers with ``residual=False``, which is
  what the dual (9) needs).
* :func:`a_mincost1` (Alg. 4, q = 0), :func:`a_mincost2` (Alg. 5, q = 1), :func:`a_ramincost1`
  (Alg. 6, q = 1), :func:`a_ramincost2` (Alg. 7, q = 0) - the paper's subroutines as printed, with
  the readings of ``formulations/elastic.md#pricing``.
* :func:`brute_force` - every feasible schedule (``gamma.all_configs`` x starts); tiny sizes only.

Prices live in :class:`Prices`: ``beta[t, h, r]`` allocated, ``delta[t, h, r]`` unit prices, for
t in [0, tau).

>>> from optsched.elastic import toy_instance
>>> inst = toy_instance()
>>> pr = Prices.zero(inst, 20)
>>> pr.allocate(inst, 0, Priced(0.0, _toy_cfg(inst), 0).config, 0, lam=10.0)
>>> c = min_cost(inst, 1, pr)
>>> c.config.d, c.start, round(c.cost, 6)
(10, 10, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.elastic.gamma import Config, _all_configs, _make, _useful_counts
from optsched.elastic.model import ElasticInstance, guarded_ceil

__all__ = [
    "Prices",
    "Priced",
    "min_cost",
    "brute_force",
    "a_mincost1",
    "a_mincost2",
    "a_ramincost1",
    "a_ramincost2",
    "paper_min_cost",
    "window_cost",
    "compare_with_brute_force",
    "random_prices",
    "pricing_case",
    "min_cost_reference",
    "least_use",
]

EPS = 1e-9


@dataclass
class Prices:
    """Allocated amounts beta[t, h, r] and unit prices delta[t, h, r] for slots t in [0, tau)."""

    beta: np.ndarray
    delta: np.ndarray

    @property
    def tau(self) -> int:
        return int(self.beta.shape[0])

    @classmethod
    def zero(cls, instance: ElasticInstance, tau: int) -> Prices:
        shape = (int(tau), instance.H, instance.R)
        return cls(np.zeros(shape), np.zeros(shape))

    def residual(self, instance: ElasticInstance) -> np.ndarray:
        """omega = C - beta, shape (tau, H, R)."""
        return np.asarray(instance.C, dtype=float)[None, :, :] - self.beta

    def allocate(self, instance: ElasticInstance, j: int, config: Config, start: int, *, lam: float) -> None:
        """beta += f_jh^r(l) on T(l) (Alg. 3 line 13) and delta by (11): lambda^(beta / C) - 1 (line 14)."""
        C = np.asarray(instance.C, dtype=float)
        for h, vec in config.use:
            sl = slice(start, start + config.d)
            self.beta[sl, h, :] += np.asarray(vec)[None, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = np.where(C[h] > 0, self.beta[sl, h, :] / np.where(C[h] > 0, C[h], 1.0), 0.0)
            self.delta[sl, h, :] = lam**frac - 1.0


@dataclass(frozen=True)
class Priced:
    """A schedule and its cost sum_{t in T(l)} sum_h sum_r delta_h^r(t) f_jh^r(l)."""

    cost: float
    config: Config
    start: int


def window_cost(prices: Prices, config: Config, start: int) -> float:
    """The cost of a configuration at a start, recomputed from the prices."""
    tot = 0.0
    for h, vec in config.use:
        tot += float((prices.delta[start : start + config.d, h, :] * np.asarray(vec)[None, :]).sum())
    return tot


def _window_prefix(prices: Prices, vec: np.ndarray) -> np.ndarray:
    """P[t, h] = sum over slots < t of delta[., h, :] . vec (a row of zeros first): the price of one
    copy of ``vec`` on server h over [t, t + d) is P[t + d, h] - P[t, h]."""
    H = prices.delta.shape[1]
    return np.vstack([np.zeros(H), np.cumsum((prices.delta * vec[None, None, :]).sum(-1), axis=0)])


def sliding_min(a: np.ndarray, d: int) -> np.ndarray:
    """out[t] = a[t : t + d].min(axis=0) for t = 0..len(a) - d: the minimum over every window of d
    rows, by doubling (windows of 2, 4, ... rows, then two overlapping ones): O(len(a) log d) and
    equal to the direct minimum (a minimum of the same numbers)."""
    m, k = a, 1
    while 2 * k <= d:
        m = np.minimum(m[:-k], m[k:])  # m[t] = the minimum of a[t : t + 2k]
        k *= 2
    n = a.shape[0] - d + 1
    return np.minimum(m[:n], m[d - k : d - k + n])


def _fits(omega_min_h: np.ndarray, vec: np.ndarray) -> bool:
    return bool(np.all(vec <= omega_min_h + EPS))


def _caps(omega_min: np.ndarray, e: np.ndarray, limit: int) -> np.ndarray:
    """Workers of vector e that fit on each server within omega_min (H, R), capped at ``limit``."""
    pos = e > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.floor(omega_min[:, pos] / e[pos][None, :] + EPS)
    cap = per.min(axis=1) if pos.any() else np.full(omega_min.shape[0], limit)
    return np.clip(cap, 0, limit).astype(int)


def _greedy_costs(order: np.ndarray, caps: np.ndarray, costs: np.ndarray, exclude: int | None, kmax: int) -> np.ndarray:
    """out[k] = the least cost of k workers on the servers (cheapest first), excluding ``exclude``; inf if
    they do not fit."""
    out = np.full(kmax + 1, np.inf)
    out[0] = 0.0
    k, tot = 0, 0.0
    for h in order:
        if h == exclude or caps[h] <= 0:
            continue
        for _ in range(int(min(caps[h], kmax - k))):
            k += 1
            tot += costs[h]
            out[k] = tot
        if k >= kmax:
            break
    return out


def _greedy_place(order, caps, k, exclude=None) -> dict[int, int] | None:
    out: dict[int, int] = {}
    left = k
    for h in order:
        if h == exclude or caps[h] <= 0 or left == 0:
            continue
        y = int(min(caps[h], left))
        out[int(h)] = y
        left -= y
    return out if left == 0 else None


def _min_cost_reference(
    instance: ElasticInstance,
    j: int,
    prices: Prices,
    *,
    q: int | None = None,
    residual: bool = True,
    types: Iterable[tuple[int, Any]] | None = None,
) -> Priced | None:
    """The exact oracle, one start at a time in plain loops (the reference for :func:`min_cost`)."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    best: Priced | None = None
    ps_types = list(range(instance.P)) if instance.is_ps else [None]
    pairs = list(types) if types is not None else [(m, p) for m in range(instance.M) for p in ps_types]
    qs = (1, 0) if q is None else (q,)
    for m, p in pairs:
        e = np.asarray(instance.e[m])
        PW = _window_prefix(prices, e)
        z = np.asarray(instance.z[p]) if p is not None else None
        PZ = _window_prefix(prices, z) if z is not None else None
        for qq in qs:
            for n_w, d in _useful_counts(instance, j, m, p, qq):
                if d > tau:
                    continue
                for t in range(0, tau - d + 1):
                    c = PW[t + d] - PW[t]
                    cz = PZ[t + d] - PZ[t] if PZ is not None else None
                    wmin = omega[t : t + d].min(axis=0)
                    cand = _best_at(instance, j, m, p, qq, n_w, d, t, c, cz, wmin, e, z)
                    if cand is None:
                        continue
                    tol = 1e-12 * max(1.0, abs(cand[0]))
                    # ties (e.g. every price 0 at the start of Alg. 3): earliest completion, then least use
                    if (
                        best is None
                        or cand[0] < best.cost - tol
                        or (
                            cand[0] <= best.cost + tol
                            and (t + d, cand[1].total_use) < (best.start + best.config.d, best.config.total_use)
                        )
                    ):
                        best = Priced(float(cand[0]), cand[1], t)
    return best


def _least_use(instance: ElasticInstance, j: int, T: int | None = None) -> float | None:
    """min over j's schedules completing within ``T`` slots (default the horizon) of the total use
    sum_{t, h, r} f_jh^r(l): the exact oracle at unit prices on the empty cluster. The cost does not
    depend on the start, so the window is cut to the longest useful duration (at most T) instead of
    T; ``None`` if no schedule fits.

    >>> from optsched.elastic import toy_instance
    >>> round(least_use(toy_instance(), 0), 6)
    40.0
    """
    T = int(T or instance.horizon)
    ps_types = list(range(instance.P)) if instance.is_ps else [None]
    longest = max(
        (
            d
            for m in range(instance.M)
            for p in ps_types
            for q in (0, 1)
            for _, d in _useful_counts(instance, j, m, p, q)
            if d <= T
        ),
        default=None,
    )
    if longest is None:
        return None
    shape = (longest, instance.H, instance.R)
    c = _min_cost(instance, j, Prices(np.zeros(shape), np.ones(shape)), residual=False)
    return None if c is None else c.cost


def _better(cost: float, t: int, d: int, cfg: Config, best: Priced | None) -> bool:
    if best is None:
        return True
    tol = 1e-12 * max(1.0, abs(cost))
    return cost < best.cost - tol or (
        cost <= best.cost + tol and (t + d, cfg.total_use) < (best.start + best.config.d, best.config.total_use)
    )


def _slot_costs(c: np.ndarray, caps: np.ndarray, xmax: int):
    """F[t, x] = the least cost of x workers on the servers at window t (cheapest first, per-server caps),
    inf beyond the total cap; with the sort order, the rank and the caps before each server."""
    order = np.argsort(c, axis=1, kind="stable")
    cs = np.take_along_axis(c, order, axis=1)
    ks = np.take_along_axis(caps, order, axis=1).astype(float)
    cumk = np.cumsum(ks, axis=1)
    cumc = np.cumsum(cs * ks, axis=1)
    before = cumk - ks
    n_t, n_h = c.shape
    x = np.arange(xmax + 1, dtype=float)
    # i[t, x] = the servers wholly taken by x workers (caps summing to <= x), by one sorted search over
    # the rows laid end to end (row t shifted by t * off, off above any cap sum and x)
    off = float(cumk[:, -1].max() + xmax + 2)
    shift = np.arange(n_t, dtype=float)[:, None] * off
    i = np.searchsorted((cumk + shift).ravel(), (x[None, :] + shift).ravel(), side="right").reshape(n_t, -1)
    i -= np.arange(n_t)[:, None] * n_h
    tt = np.arange(n_t)[:, None]
    prev = np.maximum(i - 1, 0)
    prev_k = np.where(i > 0, cumk[tt, prev], 0.0)
    prev_c = np.where(i > 0, cumc[tt, prev], 0.0)
    rest = x[None, :] - prev_k  # workers on the next server, within its cap unless every server is full
    nxt = cs[tt, np.minimum(i, n_h - 1)]
    with np.errstate(invalid="ignore"):
        F = np.where(rest > 0, prev_c + rest * nxt, prev_c)
    F[(i >= n_h) & (rest > 0)] = np.inf
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(order.shape[1])[None, :].repeat(order.shape[0], 0), axis=1)
    before_n = np.take_along_axis(before, rank, axis=1)  # caps of the servers cheaper than n, per (t, n)
    return F, before_n


def _min_cost(
    instance: ElasticInstance,
    j: int,
    prices: Prices,
    *,
    q: int | None = None,
    residual: bool = True,
    types: Iterable[tuple[int, Any]] | None = None,
) -> Priced | None:
    """The exact oracle: the least-cost schedule of job index ``j`` that completes by tau (see the
    module doc); ``q`` restricts to one of the two cases; ``None`` if no schedule fits.

    Vectorised over the starts (and the PS server and its worker count g for q = 0): for each
    (m, p, q, useful N) a lower bound N min_h c + min_h c_z skips the block when it cannot beat the
    best so far; the greedy cost of k workers on the servers other than n is F(k) if the servers
    cheaper than n hold at least k, else F(k + cap_n) - cap_n c_n (n's block is then wholly taken).
    The winning start is rebuilt by :func:`min_cost_reference`'s per-start routine. Same optimum as
    the reference (tested against it and against brute force)."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    H = instance.H
    D = instance.jobs[j].chunks
    best: Priced | None = None
    ps_types = list(range(instance.P)) if instance.is_ps else [None]
    pairs = list(types) if types is not None else [(m, p) for m in range(instance.M) for p in ps_types]
    qs = (1, 0) if q is None else (q,)
    wmins: dict[int, np.ndarray] = {}

    def wmin_of(d: int) -> np.ndarray:
        if d not in wmins:
            wmins[d] = sliding_min(omega, d)  # (tau - d + 1, H, R)
        return wmins[d]

    slot_cache: dict[tuple[int, int], tuple] = {}
    capws: dict[tuple[int, int], np.ndarray] = {}
    # Blocks (m, p, q, N) in order of their lower bound N min_h c + min_h c_z (then d, then the
    # enumeration order, so that exact ties resolve as in a plain scan): once a block's bound exceeds
    # the best cost found, so do all the later ones.
    PWs: dict[int, np.ndarray] = {}
    PZs: dict[Any, np.ndarray | None] = {}
    cmins: dict[tuple[int, int], np.ndarray] = {}
    czmins: dict[tuple[Any, int], np.ndarray | float] = {}
    blocks = []
    for m, p in pairs:
        if m not in PWs:
            e = np.asarray(instance.e[m], dtype=float)
            PWs[m] = _window_prefix(prices, e)
        if p not in PZs:
            if p is None:
                PZs[p] = None
            else:
                z = np.asarray(instance.z[p], dtype=float)
                PZs[p] = _window_prefix(prices, z)
        for qq in qs:
            for n_w, d in _useful_counts(instance, j, m, p, qq):
                if d > tau:
                    continue
                if (m, d) not in cmins:
                    PW = PWs[m]
                    cmins[m, d] = (PW[d:] - PW[:-d]).min(axis=1)
                if (p, d) not in czmins:
                    PZ = PZs[p]
                    czmins[p, d] = (PZ[d:] - PZ[:-d]).min(axis=1) if PZ is not None else 0.0
                lb = float((n_w * cmins[m, d] + czmins[p, d]).min())
                blocks.append((lb, d, len(blocks), m, p, qq, n_w))
    blocks.sort(key=lambda b: (b[0], b[1], b[2]))
    for lb, d, _, m, p, qq, n_w in blocks:
        if best is not None:
            tol = 1e-12 * max(1.0, abs(best.cost))
            if lb > best.cost + tol:
                break
            if lb >= best.cost - tol and d >= best.start + best.config.d:
                continue
        e = np.asarray(instance.e[m], dtype=float)
        z = np.asarray(instance.z[p], dtype=float) if p is not None else None
        PW, PZ = PWs[m], PZs[p]
        c = PW[d:] - PW[:-d]  # (T', H) window price of one worker
        cz = PZ[d:] - PZ[:-d] if PZ is not None else None
        wmin = wmin_of(d)
        if (m, d) not in capws:  # type-m workers that fit per (window, server), at most D
            pos = e > 0
            with np.errstate(divide="ignore", invalid="ignore"):
                capw = (
                    np.floor(wmin[:, :, pos] / e[pos] + EPS).min(axis=2)
                    if pos.any()
                    else np.full(c.shape, D, dtype=float)
                )
            capws[m, d] = np.clip(capw, 0, D)
        capw = capws[m, d]
        if qq == 0 and best is not None:
            # a tighter bound: N workers anywhere within the caps (F) plus the cheapest PS
            key = (m, d)
            if key not in slot_cache:
                slot_cache[key] = _slot_costs(c, capw, 2 * D + 1)
            lb2 = float((slot_cache[key][0][:, n_w] + (cz.min(axis=1) if cz is not None else 0.0)).min())
            tol = 1e-12 * max(1.0, abs(best.cost))
            if lb2 > best.cost + tol or (lb2 >= best.cost - tol and d >= best.start + best.config.d):
                continue
        if qq == 1:
            need = n_w * e + (z if z is not None else 0.0)
            ok = np.all(need[None, None, :] <= wmin + EPS, axis=2)
            cost = np.where(ok, n_w * c + (cz if cz is not None else 0.0), np.inf)
            per_t = cost.min(axis=1)
        elif p is None:  # RAR q = 0, spanning at least two servers
            key = (m, d)
            if key not in slot_cache:
                slot_cache[key] = _slot_costs(c, capw, 2 * D + 1)
            F, before_n = slot_cache[key]
            plain = F[:, n_w]
            first = np.argmin(np.where(capw > 0, c, np.inf), axis=1)
            tt = np.arange(c.shape[0])
            cap0 = capw[tt, first]
            # all N on the cheapest server: move one worker to the next cheapest slot
            excl1 = np.where(
                before_n[tt, first] >= 1,
                F[:, 1],
                F[tt, np.minimum(1 + cap0, 2 * D + 1).astype(int)] - cap0 * c[tt, first],
            )
            per_t = np.where(cap0 >= n_w, (n_w - 1) * c[tt, first] + excl1, plain)
        else:  # PS q = 0: PS server n with g < N workers, the rest greedily elsewhere
            key = (m, d)
            if key not in slot_cache:
                slot_cache[key] = _slot_costs(c, capw, 2 * D + 1)
            F, before_n = slot_cache[key]
            # g workers beside the PS on its server: g <= the caps (else g e does not fit there)
            g = np.arange(int(min(n_w - 1, capw.max())) + 1)
            k = n_w - g
            s_g = np.array([instance.ps_needed(m, p, int(x)) for x in k], dtype=float)
            use = g[:, None] * e[None, :] + s_g[:, None] * z[None, :]  # (g, R)
            fit = np.ones((c.shape[0], H, len(g)), dtype=bool)
            for r in range(use.shape[1]):
                fit &= use[None, None, :, r] <= wmin[:, :, None, r] + EPS
            tt = np.arange(c.shape[0])[:, None, None]
            capn = capw[:, :, None]
            idx = np.minimum(k[None, None, :] + capn, 2 * D + 1).astype(int)
            far = F[tt, idx] - capn * c[:, :, None]
            near = F[:, k][:, None, :]
            others = np.where(k[None, None, :] <= before_n[:, :, None], near, far)
            tot = g[None, None, :] * c[:, :, None] + s_g[None, None, :] * cz[:, :, None] + others
            per_t = np.where(fit, tot, np.inf).min(axis=(1, 2))
        if not np.isfinite(per_t).any():
            continue
        vmin = float(per_t.min())
        t = int(np.flatnonzero(per_t <= vmin + 1e-12 * max(1.0, abs(vmin)))[0])
        if best is not None:
            tol = 1e-12 * max(1.0, abs(best.cost))
            if vmin > best.cost + tol or (vmin >= best.cost - tol and t + d >= best.start + best.config.d):
                continue
        cand = _best_at(instance, j, m, p, qq, n_w, d, t, c[t], cz[t] if cz is not None else None, wmin[t], e, z)
        if cand is not None and _better(float(cand[0]), t, d, cand[1], best):
            best = Priced(float(cand[0]), cand[1], t)
    return best


def _best_at(instance, j, m, p, q, n_w, d, t, c, cz, wmin, e, z):
    H = instance.H
    best = None
    if q == 1:
        need = n_w * e + (z if z is not None else 0.0)
        for n in range(H):
            if _fits(wmin[n], need):
                cost = n_w * c[n] + (cz[n] if cz is not None else 0.0)
                if best is None or cost < best[0] - 1e-12:
                    best = (cost, n)
        if best is None:
            return None
        n = best[1]
        return best[0], _make(instance, j, m, p, 1, n_w, d, {n: n_w}, {n: 1} if p is not None else {})
    caps = _caps(wmin, e, n_w)
    order = np.argsort(c, kind="stable")
    if p is None:  # RAR, q = 0: at least two servers
        place = _greedy_place(order, caps, n_w)
        if place is None:
            return None
        if len(place) == 1:
            (h1,) = place
            caps2 = caps.copy()
            caps2[h1] = n_w - 1
            place = _greedy_place(order, caps2, n_w)
            if place is None or len(place) < 2:
                return None
        cost = float(sum(y * c[h] for h, y in place.items()))
        return cost, _make(instance, j, m, None, 0, n_w, d, place, {})
    for n in range(H):
        others = _greedy_costs(order, caps, c, n, n_w)
        for g in range(0, min(n_w - 1, int(caps[n])) + 1):
            rest = others[n_w - g]
            if not math.isfinite(rest):
                continue
            s = instance.ps_needed(m, p, n_w - g)
            if not _fits(wmin[n], g * e + s * z):
                continue
            cost = g * c[n] + s * cz[n] + rest
            if best is None or cost < best[0] - 1e-12:
                best = (cost, n, g, s)
    if best is None:
        return None
    _, n, g, s = best
    place = _greedy_place(order, caps, n_w - g, exclude=n)
    if g:
        place[n] = g
    return best[0], _make(instance, j, m, p, 0, n_w, d, place, {n: s})


def _brute_force(
    instance: ElasticInstance, j: int, prices: Prices, *, q: int | None = None, residual: bool = True
) -> Priced | None:
    """Every feasible schedule (full enumeration x starts) that fits omega: the reference. Tiny sizes only."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    best = None
    for cfg in _all_configs(instance, j, d_max=tau):
        if q is not None and cfg.q != q:
            continue
        for t in range(0, tau - cfg.d + 1):
            wmin = omega[t : t + cfg.d].min(axis=0)
            if all(_fits(wmin[h], np.asarray(vec)) for h, vec in cfg.use):
                cost = window_cost(prices, cfg, t)
                if best is None or cost < best.cost - 1e-12:
                    best = Priced(cost, cfg, t)
    return best


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


def _a_mincost1(
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
                            y_hat = min(int(_caps(wmin[k : k + 1], e, 10**9)[0]), N_hat)
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
                        cfg = _make(instance, j, m, p, 1 if len(used) == 1 else 0, N, L, workers, {n: int(s[n])})
                        cost = window_cost(prices, cfg, t)
                        if best is None or cost < best.cost - 1e-12:
                            best = Priced(cost, cfg, t)
    return best


def _a_mincost2(instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True) -> Priced | None:
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
                        if _fits(wmin[h], N * e + z):
                            cfg = _make(instance, j, m, p, 1, N, L, {h: N}, {h: 1})
                            cost = window_cost(prices, cfg, t)
                            if best is None or cost < best.cost - 1e-12:
                                best = Priced(cost, cfg, t)
    return best


def _a_ramincost1(instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True) -> Priced | None:
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
                caps = _caps(_window_min(omega, t, d), e, phi)
                for h in range(instance.H):
                    if caps[h] < phi:
                        continue
                    cfg = _make(instance, j, m, None, 1, phi, d, {h: phi}, {})
                    cost = window_cost(prices, cfg, t)
                    if best is None or cost < best.cost - 1e-12:
                        best = Priced(cost, cfg, t)
    return best


def _a_ramincost2(instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True) -> Priced | None:
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
                caps = _caps(_window_min(omega, t, d), e, phi)
                place = _greedy_place(order, caps, phi)
                if place is None:
                    continue
                cfg = _make(instance, j, m, None, 1 if len(place) == 1 else 0, phi, d, place, {})
                cost = window_cost(prices, cfg, t)
                if best is None or cost < best.cost - 1e-12:
                    best = Priced(cost, cfg, t)
    return best


def _paper_min_cost(instance: ElasticInstance, j: int, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 3 lines 3-7: the cheaper of the two printed subroutines (PS: Alg. 5 and 4; RAR: Alg. 6 and 7)."""
    if instance.is_ps:
        cands = [
            _a_mincost2(instance, j, prices, residual=residual),
            _a_mincost1(instance, j, prices, residual=residual),
        ]
    else:
        cands = [
            _a_ramincost1(instance, j, prices, residual=residual),
            _a_ramincost2(instance, j, prices, residual=residual),
        ]
    cands = [c for c in cands if c is not None]
    return min(cands, key=lambda c: c.cost) if cands else None


# -- random pricings and the comparison ------------------------------------------------------------
def random_prices(instance: ElasticInstance, tau: int, *, lam: float, fill: float, rng: np.random.Generator) -> Prices:
    """beta: each (t, h, r) allocated a uniform fraction in [0, fill] of C (rounded down to what whole
    workers could hold is not needed: prices only need beta <= C); delta from (11)."""
    C = np.asarray(instance.C, dtype=float)
    # drawn with the resources in sorted-name order (the R axis before it followed the input order), so the
    # pricing of a given (seed, k) of pricing_case is the one the findings were measured on
    names = sorted(instance.resources)
    perm = [names.index(r) for r in instance.resources]
    frac = rng.uniform(0.0, fill, size=(tau, instance.H, instance.R))[:, :, perm]
    beta = frac * C[None, :, :]
    delta = lam**frac - 1.0
    return Prices(beta, delta)


def compare_with_brute_force(n: int, *, seed: int = 0, max_jobs_tau: int = 10, max_servers: int = 3) -> dict[str, Any]:
    """``n`` random pricings on tiny instances (H <= ``max_servers``, D <= 3, M, P <= 2, PS and RAR): the exact oracle
    vs brute force (must agree) and the printed subroutines vs the exact optimum of their case
    (Thm 1 / Thm 6 claim they are optimal). Returns counts and the counterexamples."""

    stats = {"pricings": 0, "oracle_mismatch": 0, "by_case": {}, "counterexamples": []}
    for k in range(n):
        inst, tau, pr = pricing_case(seed, k, max_tau=max_jobs_tau, max_servers=max_servers)
        arch = inst.architecture
        stats["pricings"] += 1
        ref = _brute_force(inst, 0, pr)
        ex = _min_cost(inst, 0, pr)
        if (ref is None) != (ex is None) or (
            ref is not None and not math.isclose(ref.cost, ex.cost, rel_tol=1e-9, abs_tol=1e-9)
        ):
            stats["oracle_mismatch"] += 1
        subs = (
            (
                ("", a_mincost2, 1),
                ("A_mincost1", _a_mincost1, 0),
                ("A_mincost1[N^ not reset]", lambda i, j, p: _a_mincost1(i, j, p, reset_n_hat=False), 0),
            )
            if arch == "ps"
            else (("A_RAmincost1", _a_ramincost1, 1), ("A_RAmincost2", _a_ramincost2, 0))
        )
        for name, f, q in subs:
            opt_q = _brute_force(inst, 0, pr, q=q)
            got = f(inst, 0, pr)
            row = stats["by_case"].setdefault(
                name, {"runs": 0, "suboptimal": 0, "missed_feasible": 0, "worst_ratio": 1.0, "infeasible_output": 0}
            )
            row["runs"] += 1
            if got is not None:
                from optsched.elastic.checks import violations
                from optsched.elastic.model import ElasticSchedule

                bad = [
                    v
                    for v in violations(
                        inst,
                        ElasticSchedule({inst.jobs[0].id: got.config.assignment(got.start)}),
                        require_all=False,
                        tau=tau,
                        arrivals=False,
                    )
                ]
                if bad:
                    row["infeasible_output"] += 1
            if opt_q is not None and got is None:
                row["missed_feasible"] += 1
                stats["counterexamples"].append(
                    {"seed": seed, "k": k, "sub": name, "kind": "missed", "opt": opt_q.cost}
                )
            elif opt_q is not None and got is not None and got.cost > opt_q.cost * (1 + 1e-9) + 1e-9:
                row["suboptimal"] += 1
                ratio = got.cost / opt_q.cost if opt_q.cost > 0 else math.inf
                row["worst_ratio"] = max(row["worst_ratio"], ratio)
                stats["counterexamples"].append(
                    {"seed": seed, "k": k, "sub": name, "kind": "suboptimal", "opt": opt_q.cost, "got": got.cost}
                )
    stats["counterexamples"] = stats["counterexamples"][:50]
    return stats


def pricing_case(seed: int, k: int, *, max_tau: int = 10, max_servers: int = 3) -> tuple[ElasticInstance, int, Prices]:
    """The k-th random pricing of ``compare_with_brute_force(seed=seed)``: a one-job instance (PS for
    even k, RAR for odd k), tau and prices from (11) with lambda in {2, 10, 100} and up to 90 % of
    each capacity allocated. Deterministic in (seed, k), so a counterexample is two integers."""
    from optsched.elastic.generate import random_instance

    rng = np.random.default_rng([int(seed), int(k)])
    arch = "ps" if k % 2 == 0 else "rar"
    inst = random_instance(
        1,
        n_servers=int(rng.integers(1, max_servers + 1)),
        n_worker_types=int(rng.integers(1, 3)),
        n_ps_types=int(rng.integers(1, 3)),
        n_resources=int(rng.integers(1, 4)),
        max_chunks=3,
        architecture=arch,
        seed=int(rng.integers(0, 2**31 - 1)),
    )
    d0 = inst.min_duration(0)
    tau = int(rng.integers(max(2, d0), max(max_tau, d0) + 1))
    lam = float(rng.choice([2.0, 10.0, 100.0]))
    pr = random_prices(inst, tau, lam=lam, fill=float(rng.uniform(0.0, 0.9)), rng=rng)
    return inst, tau, pr


def _toy_cfg(instance: ElasticInstance) -> Config:
    """The 2-GPU configuration of job 0 of the Sec. 1 toy (for the module doctest)."""
    return _make(instance, 0, 1, 0, 1, 1, 10, {0: 1}, {0: 1})


# -- public forms: a job by its id (docs/conventions.md#ids) ----------------------------------------
def min_cost(
    instance: ElasticInstance,
    job: Any,
    prices: Prices,
    *,
    q: int | None = None,
    residual: bool = True,
    types: Iterable[tuple[int, Any]] | None = None,
) -> Priced | None:
    """The exact oracle for the job with id ``job``: its least-cost schedule completing by tau (see
    :func:`_min_cost` and the module doc); ``q`` restricts to one case; ``None`` if no schedule fits."""
    return _min_cost(instance, instance.job_index(job, "min_cost"), prices, q=q, residual=residual, types=types)


def min_cost_reference(
    instance: ElasticInstance,
    job: Any,
    prices: Prices,
    *,
    q: int | None = None,
    residual: bool = True,
    types: Iterable[tuple[int, Any]] | None = None,
) -> Priced | None:
    """The exact oracle one start at a time in plain loops (the reference for :func:`min_cost`), job by id."""
    j = instance.job_index(job, "min_cost_reference")
    return _min_cost_reference(instance, j, prices, q=q, residual=residual, types=types)


def least_use(instance: ElasticInstance, job: Any, T: int | None = None) -> float | None:
    """The least total use sum_{t, h, r} f_jh^r(l) over the schedules of the job with id ``job`` completing
    within ``T`` slots (see :func:`_least_use`).

    >>> from optsched.elastic import toy_instance
    >>> round(least_use(toy_instance(), 0), 6)
    40.0
    """
    return _least_use(instance, instance.job_index(job, "least_use"), T)


def brute_force(
    instance: ElasticInstance, job: Any, prices: Prices, *, q: int | None = None, residual: bool = True
) -> Priced | None:
    """Every feasible schedule of the job with id ``job`` that fits omega (the reference; tiny sizes only)."""
    return _brute_force(instance, instance.job_index(job, "brute_force"), prices, q=q, residual=residual)


def a_mincost1(
    instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True, reset_n_hat: bool = True
) -> Priced | None:
    """Alg. 4 (A_mincost1, PS, q = 0) for the job with id ``job``; see :func:`_a_mincost1` for the readings
    (``reset_n_hat=False``: the literal text, N^ set once per L)."""
    j = instance.job_index(job, "a_mincost1")
    return _a_mincost1(instance, j, prices, residual=residual, reset_n_hat=reset_n_hat)


def a_mincost2(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 5 (A_mincost2, PS, q = 1) for the job with id ``job`` (see :func:`_a_mincost2`)."""
    return _a_mincost2(instance, instance.job_index(job, "a_mincost2"), prices, residual=residual)


def a_ramincost1(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 6 (A_RAmincost1, RAR, q = 1) for the job with id ``job`` (see :func:`_a_ramincost1`)."""
    return _a_ramincost1(instance, instance.job_index(job, "a_ramincost1"), prices, residual=residual)


def a_ramincost2(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 7 (A_RAmincost2, RAR, q = 0) for the job with id ``job`` (see :func:`_a_ramincost2`)."""
    return _a_ramincost2(instance, instance.job_index(job, "a_ramincost2"), prices, residual=residual)


def paper_min_cost(instance: ElasticInstance, job: Any, prices: Prices, *, residual: bool = True) -> Priced | None:
    """Alg. 3 lines 3-7 for the job with id ``job``: the cheaper of the two printed subroutines."""
    return _paper_min_cost(instance, instance.job_index(job, "paper_min_cost"), prices, residual=residual)
