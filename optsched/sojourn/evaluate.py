"""Exact evaluation of objective (1) in polynomial time, and two independent checks of it.

* :func:`pair_costs` - the ordered-pair decomposition of ``formulations/sojourn.md#pair-costs``:
  ``E[S] = sum_i d_i + sum_{k before i} c[k, i]``.
* :func:`expected_sojourn` - objective (1) of a job order or of a static stage sequence.
* :func:`enumerate_outcomes` - brute force over every joint outcome (exponential, tiny N).
* :func:`monte_carlo` - sampling with a confidence interval.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.seeds import SeedLike, as_generator
from optsched.exceptions import InvalidOptionError, InvalidScheduleError
from optsched.sojourn.model import SojournInstance, SojournSchedule, check_instance


def poisson_binomial(probs: Sequence[float]) -> np.ndarray:
    """pmf of the number of successes of independent Bernoulli(``probs``) trials (O(n^2) DP).

    >>> poisson_binomial([0.5, 0.5]).tolist()
    [0.25, 0.5, 0.25]
    """
    pmf = np.zeros(len(probs) + 1)
    pmf[0] = 1.0
    for k, p in enumerate(probs):
        pmf[1 : k + 2] = pmf[1 : k + 2] * (1 - p) + pmf[0 : k + 1] * p
        pmf[0] *= 1 - p
    return pmf


def inverse_moments(probs: Sequence[float], shift: int) -> float:
    """``E[1 / (shift + B)]`` for ``B`` Poisson-binomial(``probs``), by the DP (reference method)."""
    pmf = poisson_binomial(probs)
    return float(np.dot(pmf, 1.0 / (shift + np.arange(len(pmf)))))


@dataclass(frozen=True)
class PairCosts:
    """The data of the linear-ordering form of objective (1) (static setting).

    Attributes
    ----------
    d : (N,) array
        ``d_i = s_i x_{i,M_i} E[1/(1+B_{-i})]``: job i's own contribution.
    c : (N, N) array
        ``c[k, i] = s_i (a_k E[1/(2+B_{-ik})] + b_k E[1/(1+B_{-ik})])``: what job k adds when it
        runs before job i (diagonal 0).
    h1, h2 : (N, N) arrays
        ``E[1/(1+B_{-ik})]`` and ``E[1/(2+B_{-ik})]``; ``alpha = h2 / h1`` is Eq. (4).
    hs : (N,) array
        ``E[1/(1+B_{-i})]``.
    s, a, b, xM : (N,) arrays
        success probability, ``a = s x_M``, ``b`` = failure work, full size.
    """

    d: np.ndarray
    c: np.ndarray
    h1: np.ndarray
    h2: np.ndarray
    hs: np.ndarray
    s: np.ndarray
    a: np.ndarray
    b: np.ndarray
    xM: np.ndarray

    @property
    def n(self) -> int:
        return len(self.d)

    @property
    def constant(self) -> float:
        return float(self.d.sum())

    @property
    def alpha(self) -> np.ndarray:
        """``alpha_{i,j}(N)`` of Eq. (4) (diagonal undefined, set to 1)."""
        al = np.ones_like(self.h1)
        off = ~np.eye(self.n, dtype=bool)
        al[off] = self.h2[off] / self.h1[off]
        return al

    def order_value(self, order: Sequence[int]) -> float:
        """Objective (1) of a job order given as indices 0..N-1."""
        pos = np.empty(self.n, dtype=int)
        pos[np.asarray(order)] = np.arange(self.n)
        before = pos[:, None] < pos[None, :]
        return float(self.d.sum() + (self.c * before).sum())


def _gauss_legendre01(n: int) -> tuple[np.ndarray, np.ndarray]:
    u, w = np.polynomial.legendre.leggauss(n)
    return (u + 1) / 2, w / 2


def pair_costs(instance: SojournInstance, *, method: str = "quadrature") -> PairCosts:
    """Pair costs of ``formulations/sojourn.md#pair-costs`` (all arrivals 0, one server).

    Parameters
    ----------
    method : {"quadrature", "dp"}
        ``quadrature`` (default, O(N^3)): ``E[1/(r+B)] = int_0^1 u^(r-1) prod_j (1 - s_j + s_j u) du``,
        a polynomial of degree < N integrated exactly by Gauss-Legendre with N/2+2 nodes.
        ``dp`` (O(N^4)): the Poisson-binomial pmf of every leave-two-out set, as in Eq. (4).

    Returns
    -------
    PairCosts

    Raises
    ------
    InvalidInstanceError
        Not a sojourn instance, or not the static setting (one server, arrivals 0).

    Guarantee
    ---------
    ``E[S] = sum_i d_i + sum_{k before i} c[k, i]`` for every order S, exactly (up to rounding).

    References
    ----------
    Yao, Paolieri, Golubchik, Eqs. (1), (4), (13); ``formulations/sojourn.md#pair-costs``.

    Examples
    --------
    >>> from optsched.sojourn.model import SojournInstance, StagedJob
    >>> inst = SojournInstance([StagedJob(1, [1, 10], [0.25, 0.75]), StagedJob(2, [3, 6], [0.6, 0.4])])
    >>> pc = pair_costs(inst)
    >>> round(pc.order_value([0, 1]), 10), round(pc.order_value([1, 0]), 10)
    (9.1, 9.75)
    """
    check_instance(instance).require_static("The exact evaluation of objective (1)")
    jobs = instance.jobs
    n = len(jobs)
    s = np.array([j.success_prob for j in jobs])
    xM = np.array([j.size for j in jobs])
    b = np.array([j.failure_work for j in jobs])
    a = s * xM
    if method == "quadrature":
        u, w = _gauss_legendre01(n // 2 + 2)
        # log(1 - s_j + s_j u) >= log(u) > -inf: no cancellation, no underflow
        L = np.log1p(-s[:, None] * (1 - u[None, :]))  # (n, q)
        T = L.sum(axis=0)
        hs = np.exp(T[None, :] - L) @ w
        h1 = np.empty((n, n))
        h2 = np.empty((n, n))
        wu = w * u
        for i in range(n):  # row by row: O(n q) memory
            E = np.exp(T[None, :] - L[i][None, :] - L)  # (n, q): leave out i and k
            h1[i] = E @ w
            h2[i] = E @ wu
    elif method == "dp":
        hs = np.array([inverse_moments(np.delete(s, i), 1) for i in range(n)])
        h1 = np.ones((n, n))
        h2 = np.full((n, n), 0.5)
        for i in range(n):
            for k in range(i + 1, n):
                pmf = poisson_binomial(np.delete(s, [i, k]))
                ll = np.arange(len(pmf))
                h1[i, k] = h1[k, i] = float(pmf @ (1.0 / (1 + ll)))
                h2[i, k] = h2[k, i] = float(pmf @ (1.0 / (2 + ll)))
    else:
        raise InvalidOptionError(f"The 'method' option must be 'quadrature' or 'dp'; got {method!r}.")
    np.fill_diagonal(h1, 0.0)
    np.fill_diagonal(h2, 0.0)
    c = s[None, :] * (a[:, None] * h2 + b[:, None] * h1)
    np.fill_diagonal(c, 0.0)
    d = a * hs
    return PairCosts(d=d, c=c, h1=h1, h2=h2, hs=hs, s=s, a=a, b=b, xM=xM)


def as_indices(instance: SojournInstance, order: Sequence[Any]) -> list[int]:
    """Job ids -> indices, checking that ``order`` is a permutation of the jobs."""
    idx = [instance.index_of(j) for j in order]
    if sorted(idx) != list(range(instance.n_jobs)):
        missing = [instance.jobs[k].id for k in range(instance.n_jobs) if k not in idx]
        dup = sorted({instance.jobs[k].id for k in idx if idx.count(k) > 1}, key=str)
        raise InvalidScheduleError(f"The order must contain every job exactly once; missing {missing}, repeated {dup}.")
    return idx


def stage_indices(instance: SojournInstance, stages: Sequence[tuple[Any, int]]) -> list[tuple[int, int]]:
    """Stage sequence of ids -> (index, stage), checking each job's stages 1..M_i appear once, in order."""
    out = []
    nxt = [1] * instance.n_jobs
    for jid, st in stages:
        k = instance.index_of(jid)
        if st != nxt[k]:
            raise InvalidScheduleError(
                f"In the stage sequence, stage {st} of job {jid!r} comes where stage "
                f"{nxt[k]} is expected; each job's stages 1..M_i appear once, in order."
            )
        nxt[k] += 1
        out.append((k, st))
    for k, j in enumerate(instance.jobs):
        if nxt[k] != j.n_stages + 1:
            raise InvalidScheduleError(
                f"The stage sequence has {nxt[k] - 1} of the {j.n_stages} stages of job {j.id!r}; list every stage."
            )
    return out


def order_value(instance: SojournInstance, order: Sequence[Any], pc: PairCosts | None = None) -> float:
    """Objective (1) of the non-preemptive job ``order`` (job ids)."""
    pc = pc or pair_costs(instance)
    return pc.order_value(as_indices(instance, order))


def stage_value(instance: SojournInstance, stages: Sequence[tuple[Any, int]], pc: PairCosts | None = None) -> float:
    """Objective (1) of a static stage sequence (entries of terminated jobs are skipped).

    Job k contributes ``min(X_k, x_{k,m})`` to the completion time of job i, where m is the
    number of k's stages before i's last stage (``formulations/sojourn.md#stage-sequences``).
    """
    pc = pc or pair_costs(instance)
    seq = stage_indices(instance, stages)
    n = instance.n_jobs
    last_pos = {k: p for p, (k, st) in enumerate(seq) if st == instance.jobs[k].n_stages}
    count = np.zeros((n, n), dtype=int)  # count[k, i] = stages of k before i's last stage
    done = [0] * n
    for p, (k, _st) in enumerate(seq):
        done[k] += 1
        if p == last_pos[k]:  # job k's last stage: freeze what every other job ran before it
            count[:, k] = done
            count[k, k] = 0
    total = float(pc.d.sum())
    for k, job in enumerate(instance.jobs):
        x = np.array(job.sizes)
        pk = np.array(job.probs)
        for i in range(n):
            m = count[k, i]
            if i == k or m == 0:
                continue
            xm = x[m - 1]
            succ = pc.s[k] * xm
            fail = float(np.dot(pk[:-1], np.minimum(x[:-1], xm)))
            total += pc.s[i] * (succ * pc.h2[i, k] + fail * pc.h1[i, k])
    return float(total)


def expected_sojourn(
    instance: SojournInstance, schedule: SojournSchedule | Sequence[Any], pc: PairCosts | None = None
) -> float:
    """Objective (1), exactly, for a :class:`SojournSchedule` or a list of job ids (an order).

    Guarantee
    ---------
    Exact up to floating-point rounding (the Poisson-binomial moments are integrated exactly).

    Notes
    -----
    O(N^3) for the pair costs, then O(N^2) per order (O(N^2 + sum M) per stage sequence).

    References
    ----------
    Eq. (1) of Yao, Paolieri, Golubchik; ``formulations/sojourn.md#exact-evaluation``.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> round(expected_sojourn(inst, [1, 2]), 12)
    9.1
    >>> round(expected_sojourn(inst, SojournSchedule(stages=[(1, 1), (2, 1), (2, 2), (1, 2)])), 12)
    10.0
    """
    if not isinstance(schedule, SojournSchedule):
        schedule = SojournSchedule(order=schedule)
    if schedule.is_order:
        return order_value(instance, schedule.order, pc)
    return stage_value(instance, schedule.stages, pc)


# --------------------------------------------------------------------------- independent checks
def _outcome_value(instance: SojournInstance, seq: list[tuple[int, int]], outcome: Sequence[int]) -> float:
    """(sum of successful completion times) / |C| for one joint outcome (stage index at which
    each job stops, 1-based); 0 if no job succeeds."""
    t = 0.0
    tot, cnt = 0.0, 0
    for k, st in seq:
        job = instance.jobs[k]
        if outcome[k] >= st:  # alive: this stage runs
            t += job.sizes[st - 1] - (job.sizes[st - 2] if st > 1 else 0.0)
            if st == job.n_stages:
                tot += t
                cnt += 1
    return tot / cnt if cnt else 0.0


def enumerate_outcomes(
    instance: SojournInstance, schedule: SojournSchedule | Sequence[Any], *, max_outcomes: int = 200_000
) -> float:
    """Objective (1) by brute force over every joint outcome (prod M_i of them).

    Independent of the pair decomposition: it simulates each outcome and weights it by its
    probability. Refuses above ``max_outcomes``.
    """
    instance.require_static("Outcome enumeration")
    if not isinstance(schedule, SojournSchedule):
        schedule = SojournSchedule(order=schedule)
    seq = stage_indices(instance, schedule.stage_sequence(instance))
    total_outcomes = math.prod(j.n_stages for j in instance.jobs)
    if total_outcomes > max_outcomes:
        raise InvalidOptionError(
            f"Enumeration over {total_outcomes:,} joint outcomes exceeds max_outcomes="
            f"{max_outcomes:,}; use monte_carlo or expected_sojourn."
        )
    val = 0.0
    for outcome in itertools.product(*[range(1, j.n_stages + 1) for j in instance.jobs]):
        pr = math.prod(instance.jobs[k].probs[o - 1] for k, o in enumerate(outcome))
        val += pr * _outcome_value(instance, seq, outcome)
    return val


@dataclass(frozen=True)
class MonteCarloEstimate:
    mean: float
    stderr: float
    lo: float
    hi: float
    samples: int

    def covers(self, value: float) -> bool:
        return self.lo <= value <= self.hi


def monte_carlo(
    instance: SojournInstance,
    schedule: SojournSchedule | Sequence[Any],
    *,
    samples: int = 100_000,
    seed: SeedLike = None,
    level: float = 0.99,
) -> MonteCarloEstimate:
    """Estimate objective (1) by sampling joint outcomes; normal confidence interval at ``level``."""
    from scipy.stats import norm

    instance.require_static("Monte-Carlo evaluation of objective (1)")
    if not isinstance(schedule, SojournSchedule):
        schedule = SojournSchedule(order=schedule)
    rng = as_generator(seed)
    seq = stage_indices(instance, schedule.stage_sequence(instance))
    n = instance.n_jobs
    outcome = np.empty((samples, n), dtype=int)
    for k, j in enumerate(instance.jobs):
        outcome[:, k] = rng.choice(np.arange(1, j.n_stages + 1), size=samples, p=np.array(j.probs) / sum(j.probs))
    t = np.zeros(samples)
    tot = np.zeros(samples)
    cnt = np.zeros(samples)
    for k, st in seq:
        job = instance.jobs[k]
        alive = outcome[:, k] >= st
        t += alive * (job.sizes[st - 1] - (job.sizes[st - 2] if st > 1 else 0.0))
        if st == job.n_stages:
            tot += alive * t
            cnt += alive
    v = np.divide(tot, cnt, out=np.zeros(samples), where=cnt > 0)
    mean, se = float(v.mean()), float(v.std(ddof=1) / math.sqrt(samples))
    z = float(norm.ppf(0.5 + level / 2))
    return MonteCarloEstimate(mean, se, mean - z * se, mean + z * se, samples)
