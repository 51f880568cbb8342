"""Lazer's deferral predictor (Sec. 4.2, (3)-(5)): Bayesian optimisation of X with a GP.

Input z = (X / h, log1p c) with c of (5) = (mean gap of the last hour's arrivals, T'_new,
l_new, max p over J_r); target f = |X - F| (4), observed at t0 + p* + l_new. Surrogate:
scikit-learn ``GaussianProcessRegressor`` with a Matern-5/2 ARD kernel (times a constant) plus a
white-noise kernel, targets normalised; hyperparameters refit every ``refit_every`` updates (in
between, the GP is refit on the new data with the last hyperparameters).

Stages (formulations/lazer.md, readings 5-6):

1. bootstrap: the first M decisions take X from the M equal strata of [l, h] (Latin hypercube in
   one dimension: a seeded permutation, a uniform point in each stratum);
2. acquisition: log-EI (incumbent = lowest observed f), scored on ``n_random`` random X and a
   ``grid``-point grid in one GP call, then L-BFGS-B from the best (``search="printed"``: the
   paper's loop, L-BFGS-B from each of 5 random starts); stop when at least ``min_updates`` updates
   were made and the EI of the chosen X is below ``ei_threshold`` (standardised units), or at ``cap``;
3. exploitation: X = argmin of the GP mean over [l, h] ((3) read as (4): P(f = 0) is 0 for a
   continuous surrogate); X < ``zero_below`` counts as 0.

The GP's linear algebra is tiny (a few hundred training points at most), so the predictor runs
it with BLAS on one thread (threadpoolctl): a multi-threaded BLAS wakes its worker threads for
each of the tens of thousands of small calls of a long run, and on a busy machine every wake-up
waits for a free core (on the Lazer study's workloads one thread or two give the same decisions
bit for bit).
"""

from __future__ import annotations

import math
import time
import warnings
from contextlib import AbstractContextManager

import numpy as np

from optsched.core.seeds import as_generator
from optsched.exceptions import InvalidOptionError, OptschedWarning
from optsched.lazer.deferral import Decision, DeferralChooser


class PredictorWarning(OptschedWarning):
    """The deferral predictor kept going after a problem (a failed GP fit, l_new > h)."""


_GTOL = 1e-5  # L-BFGS-B's projected-gradient tolerance (scipy's default, given explicitly)
_SQRT_HALF_PI = math.sqrt(math.pi / 2)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def log_ei(mu, sigma, best):
    """log of the expected improvement below ``best`` of N(mu, sigma^2), stable for very
    negative z (EI ~ 0): log EI = log sigma + log phi(z) + log1p(z sqrt(pi/2) erfcx(-z/sqrt 2)).

    Examples
    --------
    >>> round(float(np.exp(log_ei(np.array([0.0]), np.array([1.0]), 0.0))[0]), 6)   # phi(0)
    0.398942
    >>> bool(np.isfinite(log_ei(np.array([50.0]), np.array([1.0]), 0.0)[0]))
    True
    """
    from scipy.special import erfcx

    mu = np.asarray(mu, float)
    sigma = np.maximum(np.asarray(sigma, float), 1e-12)
    z = (best - mu) / sigma
    out = np.empty_like(z)
    neg = z < 0
    zn = z[neg]
    out[neg] = -0.5 * zn * zn - _LOG_SQRT_2PI + np.log1p(zn * _SQRT_HALF_PI * erfcx(-zn / math.sqrt(2)))
    zp = z[~neg]
    from scipy.stats import norm

    out[~neg] = np.log(norm.pdf(zp) + zp * norm.cdf(zp))
    return out + np.log(sigma)


class _OneBlasThread:
    """A reusable context: every BLAS library numpy and scipy loaded on one thread, each set back
    to its own count on exit (nested or concurrent uses share one stack: the counts are back when
    the last use ends). threadpoolctl's ``limit`` does the same through more bookkeeping, about
    0.1 ms a call: too much for one call per decision."""

    def __init__(self) -> None:
        from scipy import linalg, optimize  # noqa: F401  (scipy's BLAS loaded before the listing)
        from threadpoolctl import ThreadpoolController  # a scikit-learn dependency

        self._libs = ThreadpoolController().select(user_api="blas").lib_controllers
        self._saved: list[list] = []

    def __enter__(self) -> None:
        counts = [lib.get_num_threads() for lib in self._libs]
        for lib, n in zip(self._libs, counts, strict=True):
            if n is not None and n != 1:
                lib.set_num_threads(1)
        self._saved.append(counts)

    def __exit__(self, *exc) -> None:
        for lib, n in zip(self._libs, self._saved.pop(), strict=True):
            if n is not None and n != 1:
                lib.set_num_threads(n)


_BLAS: list[_OneBlasThread] = []  # made once per process (listing the loaded libraries takes ~10 ms)


def one_blas_thread() -> AbstractContextManager:
    """A context in which the BLAS libraries numpy and scipy loaded use one thread.

    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float(np.ones((200, 200)) @ np.ones(200) @ np.ones(200))
    40000.0
    """
    if not _BLAS:
        _BLAS.append(_OneBlasThread())
    return _BLAS[0]


def _pos(value, name, *, strict=True, integer=False):
    ok = isinstance(value, (int, float, np.number)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and integer:
        ok = float(value).is_integer()
    if not ok or (value <= 0 if strict else value < 0):
        kind = "an integer" if integer else "a finite number"
        raise InvalidOptionError(
            f"The '{name}' option of the deferral predictor must be {kind} "
            f"{'> 0' if strict else '>= 0'}; got {value!r}."
        )
    return value


class GPDeferral(DeferralChooser):
    """Lazer's BO deferral predictor (see the module docstring).

    Parameters
    ----------
    low, high : float
        Search space [l, h] of X, seconds (0 <= l < h; default [0, 100]).
    n_bootstrap : int
        M, bootstrap samples / LHS strata (>= 2; default 10).
    min_updates : int
        GP updates before acquisition may stop (default 100).
    cap : int
        Acquisition stops after this many updates in any case (>= M; default 500).
    ei_threshold : float
        Stop when the chosen X's EI (standardised units) is below this (> 0; default 0.1).
    refit_every : int
        Refit the kernel hyperparameters every this many updates (default 10).
    search : {"grid", "printed"}
        Acquisition maximiser: ``n_random`` random X + a ``grid``-point grid in one GP call, then
        L-BFGS-B from the best (default); or the paper's L-BFGS-B from each of 5 random starts.
    zero_below : float
        In exploitation, X below this counts as 0 (default 1 s).
    seed : int, Generator or None

    Attributes
    ----------
    stage : str
        "bootstrap", "acquisition" or "exploitation".
    n_updates : int
    timings : dict of lists
        Wall-clock seconds per choose call by stage (for benchmarks; never asserted in tests).

    Examples
    --------
    >>> from optsched.lazer.deferral import Decision
    >>> gp = GPDeferral(seed=0)
    >>> gp.reset(None, None)
    >>> xs = [gp.choose(None, None, Decision(0.0, i, (), (39.0, 600.0, 70.0, 8.0))) for i in range(10)]
    >>> sorted(int(x // 10) for x in xs)     # one X in each of the M = 10 strata
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """

    name = "gp"
    needs_feedback = True

    def __init__(
        self,
        *,
        low: float = 0.0,
        high: float = 100.0,
        n_bootstrap: int = 10,
        min_updates: int = 100,
        cap: int = 500,
        ei_threshold: float = 0.1,
        refit_every: int = 10,
        search: str = "grid",
        n_random: int = 5,
        grid: int = 101,
        zero_below: float = 1.0,
        seed=0,
    ):
        _pos(low, "low", strict=False)
        _pos(high, "high")
        if not high > low:
            raise InvalidOptionError(f"The search space needs low < high; got low={low!r}, high={high!r}.")
        _pos(n_bootstrap, "n_bootstrap", integer=True)
        if n_bootstrap < 2:
            raise InvalidOptionError(f"The 'n_bootstrap' option (M) must be an integer >= 2; got {n_bootstrap!r}.")
        _pos(min_updates, "min_updates", strict=False, integer=True)
        _pos(cap, "cap", integer=True)
        if cap < n_bootstrap:
            raise InvalidOptionError(f"The 'cap' option must be >= n_bootstrap ({n_bootstrap}); got {cap!r}.")
        _pos(ei_threshold, "ei_threshold")
        _pos(refit_every, "refit_every", integer=True)
        _pos(n_random, "n_random", integer=True)
        _pos(grid, "grid", integer=True)
        _pos(zero_below, "zero_below", strict=False)
        if search not in ("grid", "printed"):
            raise InvalidOptionError(f"The 'search' option must be 'grid' or 'printed'; got {search!r}.")
        self.low, self.high = float(low), float(high)
        self.n_bootstrap, self.min_updates, self.cap = int(n_bootstrap), int(min_updates), int(cap)
        self.ei_threshold, self.refit_every, self.search = float(ei_threshold), int(refit_every), search
        self.n_random, self.grid, self.zero_below = int(n_random), int(grid), float(zero_below)
        self.seed = seed

    # -- state ------------------------------------------------------------------------------------
    def reset(self, sim, policy) -> None:
        self.rng = as_generator(self.seed)
        self.stage = "bootstrap"
        self._strata: list[int] = []
        self._z: list[np.ndarray] = []
        self._y: list[float] = []
        self.n_updates = 0
        self.gp = None
        self._kernel = None
        self._fast = None  # see _set_fast_kernel
        self._ctx: tuple = ((), None)  # (context, its scaled feature columns) last used
        self._last_ei = math.inf
        self._warned_l = False
        self.timings: dict[str, list[float]] = {"bootstrap": [], "acquisition": [], "exploitation": [], "fit": []}

    def _features(self, x, c) -> np.ndarray:
        x = np.atleast_1d(np.asarray(x, float))
        cc = np.log1p(np.maximum(np.asarray(c, float), 0.0))
        return np.column_stack([x / self.high, np.broadcast_to(cc, (len(x), len(cc)))])

    # -- choosing ------------------------------------------------------------------------------------
    def choose(self, sim, policy, decision: Decision) -> float:
        t = time.perf_counter()
        c = decision.context
        if c[2] > self.high and not self._warned_l:
            self._warned_l = True
            warnings.warn(
                f"A load time l_new = {c[2]:g} s exceeds the deferral search space's upper end h = "
                f"{self.high:g} s: X can never cover the whole load.",
                PredictorWarning,
                stacklevel=2,
            )
        if self.gp is None:
            stage = "bootstrap"
            if not self._strata:
                self._strata = list(self.rng.permutation(self.n_bootstrap))
            k = self._strata.pop(0)
            w = (self.high - self.low) / self.n_bootstrap
            x = self.low + (k + self.rng.uniform()) * w
        elif self.stage == "acquisition":
            stage = "acquisition"
            with one_blas_thread():
                x, lei = self._acquire(c)
            self._last_ei = math.exp(lei)
        else:
            stage = "exploitation"
            with one_blas_thread():
                x = self._exploit(c)
            if x < self.zero_below:
                x = 0.0
        decision.stage = stage
        self.timings[stage].append(time.perf_counter() - t)
        return float(x)

    def _predict(self, x, c, std=True):
        """GP mean (and std) at X = ``x`` for context ``c``: the same numbers as
        ``gp.predict(..., return_std=std)`` from the fitted factors, without its per-call overhead."""
        gp = self.gp
        ym, ysd = getattr(gp, "_y_train_mean", None), getattr(gp, "_y_train_std", None)
        if ym is None or ysd is None or getattr(gp, "L_", None) is None:
            return gp.predict(self._features(x, c), return_std=std)
        from scipy.linalg import solve_triangular

        K = self._cross_kernel(x, c)
        mu = K @ gp.alpha_ * ysd + ym
        if not std:
            return mu
        v = solve_triangular(gp.L_, K.T, lower=True, check_finite=False)
        var = np.maximum(gp.kernel_.diag(self._features(x, c)) - np.einsum("ij,ij->j", v, v), 0.0)
        return mu, np.sqrt(var) * ysd

    def _set_fast_kernel(self) -> None:
        """After a fit: keep (c, length scales, training inputs / length scales) when the fitted
        kernel has the shape :meth:`_fit` builds, c * Matern(nu=2.5) + white noise, else None."""
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, Product, Sum, WhiteKernel

        k = self.gp.kernel_
        self._fast = None
        self._ctx = ((), None)
        if (
            isinstance(k, Sum)
            and isinstance(k.k1, Product)
            and isinstance(k.k1.k1, ConstantKernel)
            and isinstance(k.k1.k2, Matern)
            and k.k1.k2.nu == 2.5
            and isinstance(k.k2, WhiteKernel)
        ):
            ls = np.squeeze(k.k1.k2.length_scale).astype(float)
            if ls.shape == (self.gp.X_train_.shape[1],):
                self._fast = (k.k1.k1.constant_value, ls, self.gp.X_train_ / ls)

    def _cross_kernel(self, x, c) -> np.ndarray:
        """k(z, Z_train) of the fitted kernel for the inputs z of (X = ``x``, context ``c``): the
        same numbers as ``gp.kernel_(features, gp.X_train_)``. scikit-learn computes c * Matern +
        white as ``full(c) * matern + zeros`` (the white kernel is 0 between two inputs), Matern as
        ``cdist(z / ls, Z / ls)`` then ``(1 + K + K**2 / 3) exp(-K)`` with ``K = sqrt(5) d``; the
        same element-wise operations in the same order here, with ``Z / ls`` and the context's
        columns of ``z / ls`` computed once, without the kernel objects' per-call checks."""
        fast = self._fast
        if fast is None:
            return self.gp.kernel_(self._features(x, c), self.gp.X_train_)
        from scipy.spatial.distance import cdist

        cval, ls, z_train = fast
        last, cols = self._ctx
        if cols is None or last is not c:
            cols = np.log1p(np.maximum(np.asarray(c, float), 0.0)) / ls[1:]
            self._ctx = (c, cols)
        x = np.atleast_1d(np.asarray(x, float))
        z = np.empty((len(x), len(ls)))
        z[:, 0] = x / self.high / ls[0]
        z[:, 1:] = cols
        K = cdist(z, z_train, metric="euclidean") * math.sqrt(5)
        K = (1.0 + K + K**2 / 3.0) * np.exp(-K)
        return cval * K

    def _lbfgsb(self, f, x0: float):
        """L-BFGS-B on [l, h] from ``x0``; ``f`` maps an array of X to values. Function
        value and forward-difference slope come from one batched call per iterate.

        L-BFGS-B's first step evaluates ``x0`` and stops there when the projected gradient's
        norm is at most ``gtol`` (a slope pointing out of the box at a bound, or a flat one):
        that test is made here first, with the same numbers, and scipy is called only when
        it fails (the answer is the same either way; in exploitation most calls stop there).
        """
        from scipy.optimize import minimize

        eps = 1e-6 * (self.high - self.low)
        lo, hi = self.low, self.high

        def fg(v):
            x = float(v[0])
            h = eps if x + eps <= hi else -eps
            a, b = f(np.array([x, x + h]))
            return float(a), np.array([(float(b) - float(a)) / h])

        if lo <= x0 <= hi:  # (scipy would first clip x0 into the box)
            a, g = fg([x0])
            slope = float(g[0])
            if slope == slope:  # projgr of L-BFGS-B (a NaN slope goes on to scipy)
                proj = max(x0 - hi, slope) if slope < 0.0 else min(x0 - lo, slope)
                if abs(proj) <= _GTOL:
                    return float(x0), a
        r = minimize(fg, [x0], jac=True, method="L-BFGS-B", bounds=[(lo, hi)], options={"gtol": _GTOL})
        return float(r.x[0]), float(r.fun)

    def _std_y(self) -> float:
        s = float(np.std(self._y))
        return s if s > 0 else 1.0

    def _neg_log_ei(self, xs, c, best, ys):
        mu, sd = self._predict(xs, c)
        return -log_ei(mu / ys, sd / ys, best / ys)

    def _acquire(self, c):
        best, ys = min(self._y), self._std_y()
        lo, hi = self.low, self.high

        def f(xs):
            return self._neg_log_ei(xs, c, best, ys)

        if self.search == "printed":
            cand = [self._lbfgsb(f, float(s))[::-1] for s in self.rng.uniform(lo, hi, 5)]
            v, x = min(cand)
            return x, -v
        xs = np.concatenate([self.rng.uniform(lo, hi, self.n_random), np.linspace(lo, hi, self.grid)])
        vals = f(xs)
        i = int(np.argmin(vals))
        x, v = self._lbfgsb(f, float(xs[i]))
        if v < vals[i]:
            return x, -v
        return float(xs[i]), -float(vals[i])

    def _exploit(self, c) -> float:
        def f(xs):
            return self._predict(xs, c, std=False)

        xs = np.linspace(self.low, self.high, self.grid)
        mu = f(xs)
        i = int(np.argmin(mu))
        x, v = self._lbfgsb(f, float(xs[i]))
        return x if v < mu[i] else float(xs[i])

    # -- learning -------------------------------------------------------------------------------------
    def observe(self, decision: Decision) -> None:
        if self.stage == "exploitation" or decision.f is None:
            return
        self._z.append(self._features(decision.x, decision.context)[0])
        self._y.append(abs(decision.x - decision.f))  # (4)
        self.n_updates += 1
        if len(self._y) >= self.n_bootstrap:
            self._fit()
            if self.gp is not None and self.stage == "bootstrap":
                self.stage = "acquisition"
        if (
            self.stage == "acquisition"
            and decision.stage == "acquisition"
            and (
                (self.n_updates >= self.min_updates and self._last_ei < self.ei_threshold) or self.n_updates >= self.cap
            )
        ):
            self.stage = "exploitation"

    def _fit(self) -> None:
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        t = time.perf_counter()
        refit = self._kernel is None or self.n_updates % self.refit_every == 0
        if self._kernel is None:
            kernel = ConstantKernel(1.0, (1e-3, 1e3)) * Matern(
                length_scale=np.ones(5), nu=2.5, length_scale_bounds=(1e-2, 1e3)
            ) + WhiteKernel(1e-2, (1e-6, 1e1))
        else:
            kernel = self._kernel
        gp = GaussianProcessRegressor(
            kernel=kernel,
            normalize_y=True,
            optimizer="fmin_l_bfgs_b" if refit else None,
            random_state=int(self.rng.integers(2**31)),
        )
        try:
            with warnings.catch_warnings(), one_blas_thread():
                warnings.simplefilter("ignore")  # convergence chatter of the hyperparameter search
                gp.fit(np.array(self._z), np.array(self._y))
        except Exception as e:
            warnings.warn(
                f"The GP fit failed at {self.n_updates} updates ({type(e).__name__}: {e}); keeping the previous GP.",
                PredictorWarning,
                stacklevel=2,
            )
            return
        self.gp = gp
        self._kernel = gp.kernel_
        self._set_fast_kernel()
        self.timings["fit"].append(time.perf_counter() - t)

    def __repr__(self) -> str:
        return (
            f"GPDeferral(low={self.low:g}, high={self.high:g}, n_bootstrap={self.n_bootstrap}, "
            f"cap={self.cap}, search={self.search!r})"
        )
