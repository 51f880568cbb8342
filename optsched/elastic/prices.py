"""Resource prices of the primal-dual algorithm and what a schedule costs at them.

:class:`Prices` holds the allocated amounts ``beta[t, h, r]`` and the unit prices
``delta[t, h, r]`` of (11) for slots t in [0, tau); :class:`Priced` is a schedule with its cost
sum_{t in T(l)} sum_h sum_r delta_h^r(t) f_jh^r(l) (:func:`window_cost`). The small helpers below
(window prices, per-server caps, the greedy placement of identical workers) are shared by the exact
oracle (:mod:`optsched.elastic.pricing_oracle`) and the paper's subroutines
(:mod:`optsched.elastic.pricing_subroutines`). A_maxweight's prices are ``incremental``: they keep
the residual, each vector's unit prices and window prefixes, and the residual's window minima per
window length, between oracle calls and redo only what an allocation changed, by the same sums in
the same order and minima of the same numbers (the same schedules to the last bit).
Tested in ``tests/elastic/test_pricing.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from optsched.elastic.gamma import Config
from optsched.elastic.model import ElasticInstance

EPS = 1e-9


@dataclass
class Prices:
    """Allocated amounts beta[t, h, r] and unit prices delta[t, h, r] for slots t in [0, tau).

    ``incremental=True`` (A_maxweight's prices, which change only through :meth:`allocate`) keeps the
    residual and the window prefixes of :func:`window_prefix_of` between oracle calls: an allocation
    from slot s recomputes the prefixes from row s on, by the same sums in the same order, so they
    equal a recomputation to the last bit. Such prices must change only through :meth:`allocate`.
    """

    beta: np.ndarray
    delta: np.ndarray
    incremental: bool = field(default=False, compare=False, repr=False)
    # residual (key "omega") and window prefixes (key ("prefix", vec bytes): [P, rows of P valid])
    _kept: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    # window minima of the residual by window length d: [minima, slot ranges allocated since], the
    # most recently used last
    _mins: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    _mins_bytes: int = field(default=0, init=False, compare=False, repr=False)

    @property
    def tau(self) -> int:
        return int(self.beta.shape[0])

    @classmethod
    def zero(cls, instance: ElasticInstance, tau: int, *, incremental: bool = False) -> Prices:
        shape = (int(tau), instance.H, instance.R)
        return cls(np.zeros(shape), np.zeros(shape), incremental=incremental)

    def residual(self, instance: ElasticInstance) -> np.ndarray:
        """omega = C - beta, shape (tau, H, R) (read only: with ``incremental`` it is kept)."""
        if not self.incremental:
            return np.asarray(instance.C, dtype=float)[None, :, :] - self.beta
        if "omega" not in self._kept:
            self._kept["omega"] = np.asarray(instance.C, dtype=float)[None, :, :] - self.beta
        return self._kept["omega"]

    def allocate(self, instance: ElasticInstance, j: int, config: Config, start: int, *, lam: float) -> None:
        """beta += f_jh^r(l) on T(l) (Alg. 3 line 13) and delta by (11): lambda^(beta / C) - 1 (line 14)."""
        C = np.asarray(instance.C, dtype=float)
        for h, vec in config.use:
            sl = slice(start, start + config.d)
            self.beta[sl, h, :] += np.asarray(vec)[None, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = np.where(C[h] > 0, self.beta[sl, h, :] / np.where(C[h] > 0, C[h], 1.0), 0.0)
            self.delta[sl, h, :] = lam**frac - 1.0
            if not self.incremental:
                continue
            for key, kept in self._kept.items():
                if key == "omega":
                    kept[sl, h, :] = C[h][None, :] - self.beta[sl, h, :]
                elif key != "frontier" and kept[2] is not None:  # the unit prices of the changed slots, the same sum
                    kept[2][sl, h] = _unit_prices(self.delta[sl, h, :], kept[3])
        if self.incremental:
            for kept in self._mins.values():  # the slots changed since; None: too many to redo one by one
                if kept[1] is not None:
                    kept[1].append((int(start), int(start) + int(config.d)))
                    if len(kept[1]) > 32:
                        kept[1] = None
            for key, kept in self._kept.items():
                if key == "frontier":
                    self._kept[key] = max(kept, int(start) + int(config.d))
                elif key != "omega":
                    kept[1] = min(kept[1], int(start))  # P[t] for t <= start sums slots before start only

    def window_min(self, instance: ElasticInstance, d: int, n: int) -> np.ndarray:
        """out[t] = the residual's minimum over slots [t, t + d), for t < n (:func:`sliding_min`; read
        only: with ``incremental`` the minima of the most recently used lengths d, up to
        :data:`KEPT_MINIMA_BYTES`, are kept and only the windows that an allocation since touched are
        redone: the same minima)."""
        omega = self.residual(instance)
        if not self.incremental:
            return sliding_min(omega[: n + d - 1], d)
        kept = self._mins.pop(d, None)  # put back last: the most recently used
        old = kept[0] if kept is not None else None
        if kept is None:
            kept = [sliding_min(omega[: n + d - 1], d), []]
        else:
            w, since = kept
            rows = w.shape[0]
            spans = [(max(0, a - d + 1), min(b, rows)) for a, b in since or ()]  # windows t: [t, t + d) & [a, b)
            spans = [(lo, hi) for lo, hi in spans if lo < hi]
            if since is None or sum(hi - lo for lo, hi in spans) >= rows // 2:
                w = sliding_min(omega[: rows + d - 1], d)
            else:
                for lo, hi in spans:
                    w[lo:hi] = sliding_min(omega[lo : hi + d - 1], d)
            if n > rows:
                w = np.concatenate([w, sliding_min(omega[rows : n + d - 1], d)])
            kept = [w, []]
        self._mins[d] = kept
        self._mins_bytes += kept[0].nbytes - (old.nbytes if old is not None else 0)
        while self._mins_bytes > KEPT_MINIMA_BYTES and len(self._mins) > 1:
            self._mins_bytes -= self._mins.pop(next(iter(self._mins)))[0].nbytes
        return kept[0][:n]

    def frontier(self) -> int:
        """One past the last slot whose beta or delta is nonzero (0 if none): the slots from here on
        are untouched, so every window that starts at or after it has the same prices and room
        (with ``incremental`` it is kept: at most one past the last allocated slot)."""
        if self.incremental and "frontier" in self._kept:
            return self._kept["frontier"]
        touched = np.flatnonzero((self.beta != 0).any(axis=(1, 2)) | (self.delta != 0).any(axis=(1, 2)))
        out = int(touched[-1]) + 1 if len(touched) else 0
        if self.incremental:
            self._kept["frontier"] = out
        return out

    def window_prefix(self, vec: np.ndarray) -> np.ndarray:
        """P[t, h] = sum over slots < t of delta[., h, :] . vec, a row of zeros first (read only: with
        ``incremental`` it is kept, and only the rows after the earliest allocation since are redone)."""
        H = self.delta.shape[1]
        if not self.incremental:
            return np.vstack([np.zeros(H), np.cumsum((self.delta * vec[None, None, :]).sum(-1), axis=0)])
        key = ("prefix", vec.dtype.str, vec.tobytes())
        kept = self._kept.get(key)
        if kept is None:  # [P, rows of P valid, unit prices delta . vec (kept for R < 8), vec]
            units = _unit_prices(self.delta, vec) if len(vec) < _SEQUENTIAL_R else None
            kept = self._kept[key] = [np.zeros((self.delta.shape[0] + 1, H)), 0, units, vec.copy()]
        P, s, units = kept[0], kept[1], kept[2]
        if s < self.delta.shape[0]:  # rows s + 1.. again, accumulated from row s as the full cumsum does
            P[s + 1 :] = units[s:] if units is not None else (self.delta[s:] * vec[None, None, :]).sum(-1)
            np.cumsum(P[s:], axis=0, out=P[s:])
            kept[1] = self.delta.shape[0]
        return P


#: The most bytes of window minima that incremental prices keep (:meth:`Prices.window_min`).
KEPT_MINIMA_BYTES = 256 * 2**20

#: Below this many resources numpy's sum over the last axis adds left to right (its pairwise
#: summation starts at 8 terms), so :func:`_unit_prices` equals ``(delta * vec).sum(-1)`` to the bit.
_SEQUENTIAL_R = 8


def _unit_prices(delta: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """delta[..., :] . vec, added left to right over the last axis (as numpy's sum does for R < 8)."""
    out = delta[..., 0] * vec[0]
    for r in range(1, len(vec)):
        out = out + delta[..., r] * vec[r]
    return out


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


def window_prefix_of(prices: Prices, vec: np.ndarray) -> np.ndarray:
    """P[t, h] = sum over slots < t of delta[., h, :] . vec (a row of zeros first): the price of one
    copy of ``vec`` on server h over [t, t + d) is P[t + d, h] - P[t, h] (:meth:`Prices.window_prefix`)."""
    return prices.window_prefix(vec)


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


def fits(omega_min_h: np.ndarray, vec: np.ndarray) -> bool:
    return bool(np.all(vec <= omega_min_h + EPS))


def worker_caps(omega_min: np.ndarray, e: np.ndarray, limit: int) -> np.ndarray:
    """Workers of vector e that fit on each server within omega_min (H, R), capped at ``limit``."""
    pos = e > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.floor(omega_min[:, pos] / e[pos][None, :] + EPS)
    cap = per.min(axis=1) if pos.any() else np.full(omega_min.shape[0], limit)
    return np.clip(cap, 0, limit).astype(int)


def greedy_costs(order: np.ndarray, caps: np.ndarray, costs: np.ndarray, exclude: int | None, kmax: int) -> np.ndarray:
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


def greedy_place(order, caps, k, exclude=None) -> dict[int, int] | None:
    out: dict[int, int] = {}
    left = k
    for h in order:
        if h == exclude or caps[h] <= 0 or left == 0:
            continue
        y = int(min(caps[h], left))
        out[int(h)] = y
        left -= y
    return out if left == 0 else None
