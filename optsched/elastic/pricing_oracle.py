"""The exact pricing oracle of (12)/(13) (PS) and (20)/(21) (RAR): the cheapest schedule of one job
(by its position in ``instance.jobs``) at given prices. The public forms, by job id, are in
:mod:`optsched.elastic.pricing` (see its module doc for the dominance argument).

* :func:`min_cost_by_index` - vectorised over the starts; :func:`min_cost_reference_by_index` - one start at a time in
  plain loops (the reference it is tested against);
* :func:`least_use_by_index` - the least total use of a job's schedules (the oracle at unit prices on the
  empty cluster), which ``weights="resource"`` of the generators and the online algorithm's F use.

Tested in ``tests/elastic/test_pricing.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from optsched.elastic.gamma import Config, make_config, useful_counts_by_index
from optsched.elastic.model import ElasticInstance
from optsched.elastic.prices import (
    EPS,
    Priced,
    Prices,
    fits,
    greedy_costs,
    greedy_place,
    sliding_min,
    window_prefix_of,
    worker_caps,
)


def min_cost_reference_by_index(
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
        PW = window_prefix_of(prices, e)
        z = np.asarray(instance.z[p]) if p is not None else None
        PZ = window_prefix_of(prices, z) if z is not None else None
        for qq in qs:
            for n_w, d in useful_counts_by_index(instance, j, m, p, qq):
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


def least_use_by_index(instance: ElasticInstance, j: int, T: int | None = None) -> float | None:
    """min over j's schedules completing within ``T`` slots (default the horizon) of the total use
    sum_{t, h, r} f_jh^r(l): the exact oracle at unit prices on the empty cluster. The cost does not
    depend on the start, so the window is cut to the longest useful duration (at most T) instead of
    T; ``None`` if no schedule fits."""
    T = int(T or instance.horizon)
    ps_types = list(range(instance.P)) if instance.is_ps else [None]
    longest = max(
        (
            d
            for m in range(instance.M)
            for p in ps_types
            for q in (0, 1)
            for _, d in useful_counts_by_index(instance, j, m, p, q)
            if d <= T
        ),
        default=None,
    )
    if longest is None:
        return None
    shape = (longest, instance.H, instance.R)
    c = min_cost_by_index(instance, j, Prices(np.zeros(shape), np.ones(shape)), residual=False)
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
    before_n = np.empty_like(before)  # caps of the servers cheaper than n, per (t, n)
    np.put_along_axis(before_n, order, before, axis=1)
    return F, before_n


def one_worker_costs(c: np.ndarray, caps: np.ndarray):
    """What :func:`_slot_costs` gives for one worker, without sorting: F1[t] = F[t, 1] (the least
    window price of a server with room), n1[t] the first such server in the stable cost order (the
    only server n whose ``before_n`` is below 1 and whose cap is positive) and far1[t] =
    F[t, 1 + cap_n1] - cap_n1 c[t, n1] (one worker on the servers other than n1), all equal to the
    last bit: F[t, 1] adds the price to zeros, F[t, 1 + cap_n1] = cap_n1 c_n1 + c_n2 with n2 the next
    server with room (inf without one). Tested against :func:`_slot_costs` in
    ``tests/elastic/test_pricing.py``."""
    n_t = c.shape[0]
    tt = np.arange(n_t)
    room = caps > 0
    cpos = np.where(room, c, np.inf)
    n1 = np.argmin(cpos, axis=1)  # the first of the least (argmin's tie rule is the stable sort's)
    F1 = cpos[tt, n1]
    k1 = caps[tt, n1]
    cpos[tt, n1] = np.inf
    c2 = cpos.min(axis=1)
    has = np.isfinite(F1)
    with np.errstate(invalid="ignore"):
        far1 = np.where(has & np.isfinite(c2), (c[tt, n1] * k1 + c2) - k1 * c[tt, n1], np.inf)
    return F1, n1, far1


def min_cost_by_index(
    instance: ElasticInstance,
    j: int,
    prices: Prices,
    *,
    q: int | None = None,
    residual: bool = True,
    types: Iterable[tuple[int, Any]] | None = None,
    fast: bool = True,
) -> Priced | None:
    """The exact oracle: the least-cost schedule of job index ``j`` that completes by tau (see the
    module doc); ``q`` restricts to one of the two cases; ``None`` if no schedule fits. ``fast=False``
    turns off the two short cuts below (the plain computation they are tested against).

    Vectorised over the starts (and the PS server and its worker count g for q = 0): for each
    (m, p, q, useful N) a lower bound N min_h c + min_h c_z skips the block when it cannot beat the
    best so far; the greedy cost of k workers on the servers other than n is F(k) if the servers
    cheaper than n hold at least k, else F(k + cap_n) - cap_n c_n (n's block is then wholly taken).
    The winning start is rebuilt by :func:`min_cost_reference`'s per-start routine. Same optimum as
    the reference (tested against it and against brute force).

    Only the starts up to the prices' frontier (:meth:`Prices.frontier`) are looked at: every window
    that starts at or after it has the prices and room of the one that starts there (zero prices,
    the whole cluster), so the later ones repeat its costs and never win the earliest-start tie
    (cuts each call from the round's tau starts to the slots allocated so far).

    Two short cuts give the same numbers as the plain computation (tested against it): one worker
    (N = 1) is priced by :func:`one_worker_costs` instead of the sorted fill; and a PS q = 0 block with
    N > 1 looked at when the best so far costs 0 (so only a start that completes earlier can win, at
    cost 0) is priced over those earlier starts only, unless their least cost is within 1e-11 of 0
    without being 0."""
    tau = prices.tau
    last = prices.frontier() + 1  # starts t < last differ; every later one repeats t = last - 1
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
    wmins: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def wmin_of(d: int) -> tuple[np.ndarray, np.ndarray]:
        if d not in wmins:
            n = min(tau - d + 1, last)
            w = prices.window_min(instance, d, n) if residual else sliding_min(omega[: n + d - 1], d)  # (n, H, R)
            wmins[d] = (w, w + EPS)
        return wmins[d]

    slot_cache: dict[tuple[int, int], tuple] = {}
    ones: dict[tuple[int, int], tuple] = {}  # (m, d) -> one_worker_costs

    def nonneg(m: int, p: Any, d: int) -> bool:  # no window price below 0 (so no cost below 0)
        return bool(cmins[m, d].min() >= 0.0) and bool(np.min(czmins[p, d]) >= 0.0)

    capws: dict[tuple[int, int], np.ndarray] = {}
    # Blocks (m, p, q, N) in order of their lower bound N min_h c + min_h c_z (then d, then the
    # enumeration order, so that exact ties resolve as in a plain scan): once a block's bound exceeds
    # the best cost found, so do all the later ones.
    PWs: dict[int, np.ndarray] = {}
    PZs: dict[Any, np.ndarray | None] = {}
    cmins: dict[tuple[int, int], np.ndarray] = {}
    czmins: dict[tuple[Any, int], np.ndarray | float] = {}
    cwins: dict[tuple[int, int], np.ndarray] = {}  # (m, d) -> PW[d:] - PW[:-d], the window prices
    czwins: dict[tuple[Any, int], np.ndarray | None] = {}
    blocks = []
    for m, p in pairs:
        if m not in PWs:
            e = np.asarray(instance.e[m], dtype=float)
            PWs[m] = window_prefix_of(prices, e)
        if p not in PZs:
            if p is None:
                PZs[p] = None
            else:
                z = np.asarray(instance.z[p], dtype=float)
                PZs[p] = window_prefix_of(prices, z)
        for qq in qs:
            for n_w, d in useful_counts_by_index(instance, j, m, p, qq):
                if d > tau:
                    continue
                n_t = min(tau - d + 1, last)  # the starts looked at
                if (m, d) not in cmins:
                    PW = PWs[m]
                    cwins[m, d] = PW[d : d + n_t] - PW[:n_t]
                    cmins[m, d] = cwins[m, d].min(axis=1)
                if (p, d) not in czmins:
                    PZ = PZs[p]
                    czwins[p, d] = PZ[d : d + n_t] - PZ[:n_t] if PZ is not None else None
                    czmins[p, d] = czwins[p, d].min(axis=1) if PZ is not None else 0.0
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
        c = cwins[m, d]  # (T', H) window price of one worker
        cz = czwins[p, d]
        wmin, wmin_eps = wmin_of(d)
        if (m, d) not in capws:  # type-m workers that fit per (window, server), at most D
            pos = np.flatnonzero(e > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                capw = (
                    np.full(c.shape, D, dtype=float) if not len(pos) else np.floor(wmin[:, :, pos[0]] / e[pos[0]] + EPS)
                )
                for r in pos[1:]:  # the least over the resources, one at a time (no (T', H, R) temporaries)
                    np.minimum(capw, np.floor(wmin[:, :, r] / e[r] + EPS), out=capw)
            capws[m, d] = np.clip(capw, 0, D)
        capw = capws[m, d]
        if (
            fast
            and qq == 0
            and p is not None
            and n_w > 1
            and best is not None
            and best.cost == 0.0
            and nonneg(m, p, d)
            and d < best.start + best.config.d
        ):
            # Only a start t < K = (best's completion) - d can still win (the earliest-completion tie of
            # cost 0; no cost is below 0), and only where some PS window costs at most 1e-11 (a cost is
            # at least its PS's window price, in floating point too: s >= 1 and every term >= 0):
            # those rows decide, unless their least is within 1e-11 of 0 without being 0 (then the
            # plain path below, over every start).
            K = min(best.start + best.config.d - d, c.shape[0])  # >= 1: d < best's completion here
            rows = tie_rows(czmins[p, d], K)
            if not len(rows):  # every start that could win costs more than the tie allows
                continue
            key = (m, d)
            if key in slot_cache:
                F_h, before_h = slot_cache[key][0][rows], slot_cache[key][1][rows]
            else:
                F_h, before_h = _slot_costs(c[rows], capw[rows], 2 * D + 1)
            per_h = _ps_split_costs(
                instance, m, p, n_w, D, e, z, c[rows], cz[rows], capw[rows], wmin_eps[rows], F_h, before_h, capw.max()
            )
            v_h = float(per_h.min())
            if v_h > 1e-11:
                continue
            lb2_h = float((F_h[:, n_w] + czmins[p, d][rows]).min())
            if v_h == 0.0 and lb2_h <= 1e-12:  # the plain path's bound lets it through and its t is here
                t = int(rows[np.flatnonzero(per_h <= 1e-12)[0]])
                cand = _best_at(instance, j, m, p, qq, n_w, d, t, c[t], cz[t], wmin[t], e, z)
                if cand is not None and _better(float(cand[0]), t, d, cand[1], best):
                    best = Priced(float(cand[0]), cand[1], t)
                continue
        if qq == 0 and best is not None:
            # a tighter bound: N workers anywhere within the caps (F) plus the cheapest PS
            key = (m, d)
            if n_w == 1 and fast:  # F[:, 1] without sorting (the same numbers)
                if key not in ones:
                    ones[key] = one_worker_costs(c, capw)
                fn = ones[key][0]
            else:
                if key not in slot_cache:
                    slot_cache[key] = _slot_costs(c, capw, 2 * D + 1)
                fn = slot_cache[key][0][:, n_w]
            lb2 = float((fn + (cz.min(axis=1) if cz is not None else 0.0)).min())
            tol = 1e-12 * max(1.0, abs(best.cost))
            if lb2 > best.cost + tol or (lb2 >= best.cost - tol and d >= best.start + best.config.d):
                continue
        if qq == 1:
            need = n_w * e + (z if z is not None else 0.0)
            ok = need[0] <= wmin_eps[:, :, 0]
            for r in range(1, len(need)):
                ok &= need[r] <= wmin_eps[:, :, r]
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
        elif n_w == 1 and fast:  # PS q = 0, one worker: g = 0, the worker on the cheapest server with room but n
            key = (m, d)
            if key not in ones:
                ones[key] = one_worker_costs(c, capw)
            F1, n1, far1 = ones[key]
            s_1 = np.array([instance.ps_needed(m, p, 1)], dtype=float)
            use = np.zeros(1, dtype=int)[:, None] * e[None, :] + s_1[:, None] * z[None, :]  # as below, g = 0
            fit = use[0, 0] <= wmin_eps[:, :, 0]
            for r in range(1, use.shape[1]):
                fit &= use[0, r] <= wmin_eps[:, :, r]
            tt = np.arange(c.shape[0])
            others = np.repeat(F1[:, None], H, axis=1)  # before_n >= 1, or no room (F[t, 1] - 0 c)
            others[tt, n1] = np.where(capw[tt, n1] > 0, far1, F1)
            tot = 0 * c + s_1[0] * cz + others
            per_t = np.where(fit, tot, np.inf).min(axis=1)
        else:  # PS q = 0: PS server n with g < N workers, the rest greedily elsewhere
            key = (m, d)
            if key not in slot_cache:
                slot_cache[key] = _slot_costs(c, capw, 2 * D + 1)
            F, before_n = slot_cache[key]
            per_t = _ps_split_costs(instance, m, p, n_w, D, e, z, c, cz, capw, wmin_eps, F, before_n, capw.max())
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


def tie_rows(czmin: np.ndarray, K: int) -> np.ndarray:
    """The starts t < K whose cheapest PS window price czmin[t] is at most 1e-11: the only ones where
    a schedule can cost at most 1e-11 (the oracle's PS q = 0 short cut looks at these only)."""
    return np.flatnonzero(czmin[:K] <= 1e-11)


def _ps_split_costs(instance, m, p, n_w, D, e, z, c, cz, capw, wmin_eps, F, before_n, capmax):
    """per_t of the PS q = 0 block (the PS on server n with g < N workers beside it, the other N - g
    greedily elsewhere), each row from its own row of the arrays only (``capmax``: the caps' maximum
    over every start, which bounds g), so a block of rows gives those rows' values to the last bit."""
    H = instance.H
    # g workers beside the PS on its server: g <= the caps (else g e does not fit there)
    g = np.arange(int(min(n_w - 1, capmax)) + 1)
    k = n_w - g
    s_g = np.array([instance.ps_needed(m, p, int(x)) for x in k], dtype=float)
    use = g[:, None] * e[None, :] + s_g[:, None] * z[None, :]  # (g, R)
    fit = np.ones((c.shape[0], H, len(g)), dtype=bool)
    for r in range(use.shape[1]):
        fit &= use[None, None, :, r] <= wmin_eps[:, :, None, r]
    tt = np.arange(c.shape[0])[:, None, None]
    capn = capw[:, :, None]
    idx = np.minimum(k[None, None, :] + capn, 2 * D + 1).astype(int)
    far = F[tt, idx] - capn * c[:, :, None]
    near = F[:, k][:, None, :]
    others = np.where(k[None, None, :] <= before_n[:, :, None], near, far)
    tot = g[None, None, :] * c[:, :, None] + s_g[None, None, :] * cz[:, :, None] + others
    return np.where(fit, tot, np.inf).min(axis=(1, 2))


def _best_at(instance, j, m, p, q, n_w, d, t, c, cz, wmin, e, z):
    H = instance.H
    best = None
    if q == 1:
        need = n_w * e + (z if z is not None else 0.0)
        ok = np.all(need[None, :] <= wmin + EPS, axis=1)  # fits(wmin[n], need) for every n at once
        costs = n_w * c + (cz if cz is not None else 0.0)
        for n in np.flatnonzero(ok).tolist():
            cost = costs[n]
            if best is None or cost < best[0] - 1e-12:
                best = (cost, n)
        if best is None:
            return None
        n = best[1]
        return best[0], make_config(instance, j, m, p, 1, n_w, d, {n: n_w}, {n: 1} if p is not None else {})
    caps = worker_caps(wmin, e, n_w)
    order = np.argsort(c, kind="stable")
    if p is None:  # RAR, q = 0: at least two servers
        place = greedy_place(order, caps, n_w)
        if place is None:
            return None
        if len(place) == 1:
            (h1,) = place
            caps2 = caps.copy()
            caps2[h1] = n_w - 1
            place = greedy_place(order, caps2, n_w)
            if place is None or len(place) < 2:
                return None
        cost = float(sum(y * c[h] for h, y in place.items()))
        return cost, make_config(instance, j, m, None, 0, n_w, d, place, {})
    for n in range(H):
        others = greedy_costs(order, caps, c, n, n_w)
        for g in range(0, min(n_w - 1, int(caps[n])) + 1):
            rest = others[n_w - g]
            if not math.isfinite(rest):
                continue
            s = instance.ps_needed(m, p, n_w - g)
            if not fits(wmin[n], g * e + s * z):
                continue
            cost = g * c[n] + s * cz[n] + rest
            if best is None or cost < best[0] - 1e-12:
                best = (cost, n, g, s)
    if best is None:
        return None
    _, n, g, s = best
    place = greedy_place(order, caps, n_w - g, exclude=n)
    if g:
        place[n] = g
    return best[0], make_config(instance, j, m, p, 0, n_w, d, place, {n: s})
