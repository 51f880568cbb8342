"""Lemmas 1-3 and Theorem 1 of the A-SRPT paper, each computed from its definition.

Single-machine instances (Sec. IV-C): A_1 has job i with release r_i and processing time
(g_i/G) n_i alpha~min_i; Ã_1 the same with the prediction ñ_i. OPT_{A_1}, OPT_{Ã_1} are their
preemptive SRPT total completion times (SRPT is optimal for 1|r_j, pmtn|sum C_j; Schrage 1968).

* Lemma 1: OPT_{A_1} <= rho OPT_A, rho = max_i alpha^max_i / alpha~min_i.
* Lemma 2: Gamma_A <= (1 + tau + rho G/(G - g^max)) OPT_{Ã_1} + I g^max alpha^max eps / (G - g^max) + rho OPT_A.
* Lemma 3: OPT_{Ã_1} <= OPT_{A_1} + I g^max alpha^max eps / G.
* Theorem 1: Gamma_A / OPT_A <= (2 + tau + rho G/(G - g^max)) rho
  + (2 rho g^max alpha^max / alpha^min) (1 + tau + (1 + rho) G/(G - g^max)) eps_bar.

eps = sum_i |n_i - ñ_i| (eq. 9), eps_bar = eps / I, alpha^max = max_i alpha^max_i,
alpha^min = min_i alpha^min_i (exact minimum on the empty cluster), g^max = max_i g_i.
Lemma 2 and Theorem 1 need G > g^max (else their right-hand sides are +inf).

:func:`check_bounds` returns one row per inequality (lhs, rhs, holds); the verifier checks
``lemma_1_corrected`` (through the schedule's total completion time) and ``lemma_3`` (no schedule
needed) are registered for kind ``asrpt``.

Finding: Lemma 1 as stated (constant rho) fails on instances/papers/asrpt/lemma1-counterexample.json
(Heavy-Edge suboptimal): OPT_{A_1} = 40.0 > rho OPT_A = 33.6. It holds with
kappa = max_i alpha~min_i / alpha^min_i instead of rho (:func:`lemma1_corrected_rhs`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from optsched.asrpt.heavy_edge import alpha_min_estimate
from optsched.asrpt.model import AsrptInstance
from optsched.asrpt.placement import alpha_min_exact
from optsched.asrpt.timing import alpha_max
from optsched.verify import Violation


def srpt_completions(releases: Sequence[float], sizes: Sequence[float]) -> np.ndarray:
    """Preemptive SRPT on one machine: completion time of each job (ties by index).

    Guarantee
    ---------
    sum of the returned completions = min total completion time of 1|r_j, pmtn|sum C_j.

    Examples
    --------
    >>> srpt_completions([0, 1], [3, 1]).tolist()
    [4.0, 2.0]
    """
    r = np.asarray(releases, dtype=float)
    p = np.asarray(sizes, dtype=float)
    n = len(r)
    C = np.zeros(n)
    rem = p.copy()
    order = np.argsort(r, kind="stable")
    t, k = 0.0, 0
    active: list[int] = []
    done = 0
    while done < n:
        while k < n and r[order[k]] <= t + 1e-12:
            active.append(int(order[k]))
            k += 1
        if not active:
            t = float(r[order[k]])
            continue
        j = min(active, key=lambda i: (rem[i], i))
        nxt = float(r[order[k]]) if k < n else math.inf
        if t + rem[j] <= nxt + 1e-12:
            t += rem[j]
            rem[j] = 0.0
            C[j] = t
            active.remove(j)
            done += 1
        else:
            rem[j] -= nxt - t
            t = nxt
    return C


def srpt_total(releases, sizes) -> float:
    return float(srpt_completions(releases, sizes).sum())


@dataclass(frozen=True)
class BoundInputs:
    """The paper's quantities for one instance (seconds unless noted)."""

    I: int  # noqa: E741  (the paper's symbol)
    G: int
    g_max: int
    alpha_max: np.ndarray  # alpha^max_i
    alpha_min_est: np.ndarray  # alpha~min_i (Heavy-Edge)
    alpha_min: np.ndarray  # alpha^min_i (exact)
    n: np.ndarray
    n_pred: np.ndarray
    g: np.ndarray
    r: np.ndarray

    @property
    def rho(self) -> float:
        return float(np.max(self.alpha_max / self.alpha_min_est))

    @property
    def kappa(self) -> float:
        """max_i alpha~min_i / alpha^min_i >= 1: how far Heavy-Edge is from the exact minimum."""
        return float(np.max(self.alpha_min_est / self.alpha_min))

    @property
    def rho_hat(self) -> float:
        """max_i alpha^max_i / alpha^min_i (exact minimum): the constant Appendix B's last step needs.

        rho_hat <= rho * kappa, and rho_hat = rho when Heavy-Edge is optimal (kappa = 1)."""
        return float(np.max(self.alpha_max / self.alpha_min))

    @property
    def eps(self) -> float:
        return float(np.abs(self.n - self.n_pred).sum())

    @property
    def eps_bar(self) -> float:
        return self.eps / self.I

    @property
    def a_max(self) -> float:
        return float(self.alpha_max.max())

    @property
    def a_min(self) -> float:
        return float(self.alpha_min.min())


def bound_inputs(instance: AsrptInstance, *, predictions: Sequence[float] | None = None, seed=0) -> BoundInputs:
    """alpha^max_i, alpha~min_i (Heavy-Edge), alpha^min_i (exact), n, ñ (``predictions`` or each job's
    ``predicted_iterations``, unseen = 0 as in the paper, None = perfect), g_i, r_i."""
    jobs = instance.jobs
    if predictions is None:
        predictions = [j.predicted() for j in jobs]
    return BoundInputs(
        I=len(jobs),
        G=instance.G,
        g_max=max(j.gpus for j in jobs),
        alpha_max=np.array([alpha_max(j, instance=instance) for j in jobs]),
        alpha_min_est=np.array([alpha_min_estimate(j, instance, seed=seed) for j in jobs]),
        alpha_min=np.array([alpha_min_exact(j, instance) for j in jobs]),
        n=np.array([j.iterations for j in jobs], dtype=float),
        n_pred=np.asarray(predictions, dtype=float),
        g=np.array([j.gpus for j in jobs], dtype=float),
        r=np.array([j.arrival for j in jobs], dtype=float),
    )


def opt_a1(b: BoundInputs) -> float:
    """OPT_{A_1}: SRPT on sizes (g_i/G) n_i alpha~min_i."""
    return srpt_total(b.r, b.g / b.G * b.n * b.alpha_min_est)


def opt_a1_tilde(b: BoundInputs) -> float:
    """OPT_{Ã_1}: SRPT on sizes (g_i/G) ñ_i alpha~min_i."""
    return srpt_total(b.r, b.g / b.G * b.n_pred * b.alpha_min_est)


def lemma1_rhs(b: BoundInputs, opt_a: float) -> float:
    return b.rho * opt_a


def lemma1_corrected_rhs(b: BoundInputs, opt_a: float) -> float:
    """kappa OPT_A, kappa = max_i alpha~min_i / alpha^min_i (our corrected Lemma 1, see formulations/asrpt.md#findings).

    Proof: in an optimal schedule of A job i runs n_i alpha_i >= n_i alpha^min_i; stretching time by kappa
    gives each job room for n_i alpha~min_i <= kappa n_i alpha^min_i on its g_i GPUs, and sharing the
    cluster as in Appendix A gives a schedule of A_1 with total completion time <= kappa OPT_A.
    """
    return b.kappa * opt_a


def lemma3_rhs(b: BoundInputs) -> float:
    return opt_a1(b) + b.I * b.g_max * b.a_max * b.eps / b.G


def lemma2_rhs(b: BoundInputs, opt_a: float, *, tau: float) -> float:
    if b.g_max >= b.G:
        return math.inf
    d = b.G - b.g_max
    return (1 + tau + b.rho * b.G / d) * opt_a1_tilde(b) + b.I * b.g_max * b.a_max * b.eps / d + b.rho * opt_a


def lemma2_corrected_rhs(b: BoundInputs, opt_a: float, *, tau: float) -> float:
    """Corrected Lemma 2 (formulations/asrpt.md#lemma-2-corrected):

    Gamma_A <= (1 + tau + rho G/(G - g^max)) OPT_{Ã_1} + I g^max alpha^max eps / (G - g^max) + rho_hat OPT_A,

    rho_hat = max_i alpha^max_i / alpha^min_i. Appendix B's last step, sum_i n_i alpha^max_i <= rho sum_i n_i
    alpha^min_i, needs alpha^max_i <= rho alpha^min_i, which fails when Heavy-Edge is suboptimal
    (alpha~min_i > alpha^min_i); with rho_hat it holds by definition (and rho_hat <= rho kappa, so
    the printed bound with rho kappa in place of the last rho also holds)."""
    if b.g_max >= b.G:
        return math.inf
    d = b.G - b.g_max
    return (1 + tau + b.rho * b.G / d) * opt_a1_tilde(b) + b.I * b.g_max * b.a_max * b.eps / d + b.rho_hat * opt_a


def theorem1_corrected_ratio(b: BoundInputs, *, tau: float) -> float:
    """Theorem 1 from the corrected Lemmas 1 (kappa) and 2 (rho_hat):

    Gamma_A / OPT_A <= (1 + tau + rho q) kappa + rho_hat
                       + (2 g^max alpha^max / alpha^min)(1 + tau + (1 + rho) q) eps_bar,
    q = G / (G - g^max). (I / OPT_A <= 2 G / (alpha^min (I + 1)) directly: the k-th completion in any
    schedule of A is >= k alpha^min / G, so no rho is needed in front of the eps_bar term.)"""
    if b.g_max >= b.G:
        return math.inf
    q = b.G / (b.G - b.g_max)
    return (
        (1 + tau + b.rho * q) * b.kappa
        + b.rho_hat
        + 2 * b.g_max * b.a_max / b.a_min * (1 + tau + (1 + b.rho) * q) * b.eps_bar
    )


def theorem1_ratio(b: BoundInputs, *, tau: float) -> float:
    """The competitive-ratio bound of Theorem 1 (dimensionless)."""
    if b.g_max >= b.G:
        return math.inf
    q = b.G / (b.G - b.g_max)
    return (2 + tau + b.rho * q) * b.rho + 2 * b.rho * b.g_max * b.a_max / b.a_min * (
        1 + tau + (1 + b.rho) * q
    ) * b.eps_bar


@dataclass
class BoundRow:
    name: str
    lhs: float
    rhs: float
    holds: bool
    note: str = ""

    def to_dict(self):
        return asdict(self)


def check_bounds(
    instance: AsrptInstance,
    *,
    opt_a: float | None = None,
    gamma_a: float | None = None,
    tau: float = 0.0,
    predictions=None,
    inputs: BoundInputs | None = None,
    rtol: float = 1e-9,
) -> list[BoundRow]:
    """Evaluate every inequality that the given numbers allow.

    Parameters
    ----------
    opt_a : float, optional
        OPT_A, the proven optimum of Problem (8) (:func:`optsched.asrpt.exact.solve_exact`).
    gamma_a : float, optional
        Gamma_A, A-SRPT's total completion time (Lemma 2, Theorem 1).

    Returns
    -------
    list of BoundRow
        lemma_1, lemma_1_corrected, lemma_3, and with ``gamma_a`` lemma_2, lemma_2_corrected,
        theorem_1, theorem_1_corrected (the constants in ``note``).

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> rows = check_bounds(toy_instance(), opt_a=21.9)
    >>> [(r.name, r.holds) for r in rows]
    [('lemma_1', True), ('lemma_1_corrected', True), ('lemma_3', True)]
    """
    b = inputs or bound_inputs(instance, predictions=predictions)
    rows = []
    a1 = opt_a1(b)
    if opt_a is not None:
        rhs = lemma1_rhs(b, opt_a)
        rows.append(BoundRow("lemma_1", a1, rhs, a1 <= rhs * (1 + rtol), f"rho={b.rho:.6g}"))
        rc = lemma1_corrected_rhs(b, opt_a)
        rows.append(BoundRow("lemma_1_corrected", a1, rc, a1 <= rc * (1 + rtol), f"kappa={b.kappa:.6g}"))
    rhs3 = lemma3_rhs(b)
    a1t = opt_a1_tilde(b)
    rows.append(BoundRow("lemma_3", a1t, rhs3, a1t <= rhs3 * (1 + rtol), f"eps={b.eps:g}"))
    if gamma_a is not None and opt_a is not None:
        rhs2 = lemma2_rhs(b, opt_a, tau=tau)
        rows.append(BoundRow("lemma_2", gamma_a, rhs2, gamma_a <= rhs2 * (1 + rtol), f"tau={tau:g}"))
        rc2 = lemma2_corrected_rhs(b, opt_a, tau=tau)
        rows.append(
            BoundRow("lemma_2_corrected", gamma_a, rc2, gamma_a <= rc2 * (1 + rtol), f"rho_hat={b.rho_hat:.6g}")
        )
        ratio = theorem1_ratio(b, tau=tau)
        rows.append(
            BoundRow(
                "theorem_1", gamma_a / opt_a, ratio, gamma_a / opt_a <= ratio * (1 + rtol), f"eps_bar={b.eps_bar:g}"
            )
        )
        rc = theorem1_corrected_ratio(b, tau=tau)
        rows.append(
            BoundRow(
                "theorem_1_corrected",
                gamma_a / opt_a,
                rc,
                gamma_a / opt_a <= rc * (1 + rtol),
                f"kappa={b.kappa:.6g}, rho_hat={b.rho_hat:.6g}",
            )
        )
    return rows


_CACHE: dict[int, tuple[object, BoundInputs]] = {}


def _inputs_cached(instance) -> BoundInputs:
    hit = _CACHE.get(id(instance))
    if hit is not None and hit[0] is instance:
        return hit[1]
    b = bound_inputs(instance)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[id(instance)] = (instance, b)
    return b


def verifier_lemma_1(instance, schedule):
    """Corrected Lemma 1 through any feasible schedule S: OPT_{A_1} <= kappa OPT_A <= kappa * sum_i C_i(S).

    (The paper's constant rho can fail: instances/papers/asrpt/lemma1-counterexample.json. A
    violation of this corrected form means the schedule is infeasible or runs jobs too fast.)"""
    b = _inputs_cached(instance)
    total = sum(schedule.completion(j.id) for j in instance.jobs if j.id in schedule)
    a1 = opt_a1(b)
    if a1 > b.kappa * total * (1 + 1e-9) + 1e-9:
        yield Violation(
            "lemma_1_corrected",
            f"OPT_A1 = {a1:g} > kappa * (total completion of this schedule) = "
            f"{b.kappa:g} * {total:g}: the schedule runs jobs faster than alpha allows.",
        )


def verifier_lemma_3(instance, schedule):
    """Lemma 3 (needs no schedule): OPT_{Ã_1} <= OPT_{A_1} + I g^max alpha^max eps / G."""
    b = _inputs_cached(instance)
    lhs, rhs = opt_a1_tilde(b), lemma3_rhs(b)
    if lhs > rhs * (1 + 1e-9) + 1e-9:
        yield Violation("lemma_3", f"OPT_A1~ = {lhs:g} > OPT_A1 + I g^max alpha^max eps / G = {rhs:g}.")
        return
    return
