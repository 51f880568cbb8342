"""Optimal *adaptive* policies for tiny instances (item 4; ``formulations/sojourn.md#adaptive``).

An adaptive policy chooses the next stage to run after every checkpoint from everything observed
so far. The state that matters is ``(progress of each alive job, number of successes so far)``:
objective (1) equals ``E[sum_r delta_r K_r / (n_r + K_r)]`` over stage runs r (delta_r its
length, n_r the successes before it, K_r the eventual successes among the jobs alive when it
starts), and ``E[K_r/(n_r+K_r) | state]`` depends only on the state, so the Bellman equation

    W(state) = min_k  delta_k * g(state) + E[W(next state)],   g = E[K / (n + K)]

gives the optimum over all adaptive policies. ``preemptive=False`` forces a started job to run
to its end (decisions only between jobs, still adaptive to the successes seen so far).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from optsched.core.seeds import as_generator
from optsched.exceptions import InternalError, InvalidOptionError
from optsched.sojourn.dp import subset_dp
from optsched.sojourn.evaluate import MonteCarloEstimate, pair_costs, poisson_binomial, stage_indices, stage_value
from optsched.sojourn.model import SojournInstance

MAX_STATES = 2_000_000
DONE = -1


@dataclass(frozen=True)
class AdaptiveResult:
    """Value of objective (1) under the optimal adaptive policy and the first decision."""

    value: float
    first_job: Any
    states: int
    preemptive: bool
    policy: Callable[[tuple[int, ...], int], int] | None = None


def _setup(instance: SojournInstance):
    instance.require_static("The adaptive dynamic program")
    n_states = math.prod(j.n_stages + 1 for j in instance.jobs) * (instance.n_jobs + 1)
    if n_states > MAX_STATES:
        raise InvalidOptionError(
            f"The adaptive DP would have up to {n_states:,} states (limit {MAX_STATES:,}); "
            f"use N <= 6 jobs with <= 3 stages."
        )
    jobs = instance.jobs
    # conditional success probability of an alive job after j completed stages
    alive_succ = [[j.success_prob / math.fsum(j.probs[d:]) for d in range(j.n_stages)] for j in jobs]
    term = [[j.probs[d] / math.fsum(j.probs[d:]) for d in range(j.n_stages)] for j in jobs]
    delta = [j.stage_lengths for j in jobs]

    @cache
    def g(progress: tuple[int, ...], ns: int) -> float:
        q = [alive_succ[k][d] for k, d in enumerate(progress) if d != DONE]
        pmf = poisson_binomial(q)
        K = np.arange(len(pmf))
        den = ns + K
        ratio = np.divide(K, den, out=np.zeros(len(pmf)), where=den > 0)
        return float(pmf @ ratio)

    def transitions(progress: tuple[int, ...], ns: int, k: int):
        d = progress[k]
        last = d + 1 == jobs[k].n_stages
        if last:
            nxt = list(progress)
            nxt[k] = DONE
            return [(1.0, tuple(nxt), ns + 1)]
        t = term[k][d]
        fail = list(progress)
        fail[k] = DONE
        cont = list(progress)
        cont[k] = d + 1
        out = [(1 - t, tuple(cont), ns)]
        if t > 0:
            out.append((t, tuple(fail), ns))
        return out

    return jobs, g, transitions, delta, n_states


def optimal_adaptive(instance: SojournInstance, *, preemptive: bool = True) -> AdaptiveResult:
    """Optimal adaptive policy by dynamic programming over (progress, successes so far).

    Parameters
    ----------
    instance : SojournInstance (one server, arrivals 0); at most ~2e6 states
    preemptive : bool
        True: any alive job may run its next stage after each checkpoint. False: a started job
        runs to success or termination (the choice between jobs still adapts to what was seen).

    Guarantee
    ---------
    ``value`` = min over all non-anticipating policies (of the given class) of objective (1).

    Notes
    -----
    O(prod (M_i + 1) (N + 1) N^2) time and memory.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> round(optimal_adaptive(inst).value, 10), round(optimal_adaptive(inst, preemptive=False).value, 10)
    (9.1, 9.1)
    """
    jobs, g, transitions, delta, _n_states = _setup(instance)
    n = len(jobs)

    @cache
    def W(progress: tuple[int, ...], ns: int) -> tuple[float, int]:
        alive = [k for k in range(n) if progress[k] != DONE]
        if not alive:
            return 0.0, -1
        started = [k for k in alive if progress[k] > 0]
        choices = started if (not preemptive and started) else alive
        gv = g(progress, ns)
        best, arg = math.inf, -1
        for k in choices:
            v = delta[k][progress[k]] * gv
            for pr, nxt, ns2 in transitions(progress, ns, k):
                v += pr * W(nxt, ns2)[0]
            if v < best - 1e-15:
                best, arg = v, k
        return best, arg

    start = tuple(0 for _ in jobs)
    val, k0 = W(start, 0)
    info = W.cache_info()
    return AdaptiveResult(
        value=val,
        first_job=jobs[k0].id,
        states=info.currsize,
        preemptive=preemptive,
        policy=lambda p, ns: W(tuple(p), ns)[1],
    )


def policy_value(instance: SojournInstance, choose: Callable[[tuple[int, ...], int], int]) -> float:
    """Objective (1) of a Markov policy ``choose(progress, successes) -> job index`` (by the same
    recursion, without the minimum): an independent evaluator of static schedules too."""
    jobs, g, transitions, delta, _ = _setup(instance)

    @cache
    def V(progress: tuple[int, ...], ns: int) -> float:
        if all(d == DONE for d in progress):
            return 0.0
        k = choose(progress, ns)
        if progress[k] == DONE:
            raise InvalidOptionError(f"The policy chose job {jobs[k].id!r}, which has already finished.")
        v = delta[k][progress[k]] * g(progress, ns)
        for pr, nxt, ns2 in transitions(progress, ns, k):
            v += pr * V(nxt, ns2)
        return v

    return V(tuple(0 for _ in jobs), 0)


def _sequence_policy(instance: SojournInstance, stages: Sequence[tuple[Any, int]]):
    seq = stage_indices(instance, stages)

    def choose(progress, ns):
        for k, st in seq:
            if progress[k] != DONE and progress[k] == st - 1:
                return k
        raise InternalError(
            "The stage sequence has no alive stage left while a job is still alive (a bug: please report it)."
        )

    return choose


def best_stage_sequence(instance: SojournInstance, *, max_sequences: int = 200_000) -> tuple[float, tuple]:
    """Best *static* stage sequence (preemption at checkpoints allowed) by enumerating every
    interleaving of the jobs' stages; a direct check of Thm III.1 on tiny instances."""
    counts = [j.n_stages for j in instance.jobs]
    total = math.factorial(sum(counts)) // math.prod(math.factorial(m) for m in counts)
    if total > max_sequences:
        raise InvalidOptionError(f"{total:,} stage sequences exceed max_sequences={max_sequences:,}.")
    pc = pair_costs(instance)
    best = (math.inf, ())
    n = instance.n_jobs
    for perm in set(itertools.permutations([k for k in range(n) for _ in range(counts[k])])):
        done = [0] * n
        seq = []
        for k in perm:
            done[k] += 1
            seq.append((instance.jobs[k].id, done[k]))
        v = stage_value(instance, seq, pc)
        if v < best[0] - 1e-12:
            best = (v, tuple(seq))
    return best


def compare_policies(instance: SojournInstance, *, with_sequences: bool = False) -> dict[str, float]:
    """Objective (1) of: best order (OPTIMAL), optimal adaptive non-preemptive and preemptive
    policies (and the best static stage sequence if ``with_sequences``)."""
    pc = pair_costs(instance)
    out = {
        "best_order": subset_dp(pc)[0],
        "adaptive_nonpreemptive": optimal_adaptive(instance, preemptive=False).value,
        "adaptive_preemptive": optimal_adaptive(instance, preemptive=True).value,
    }
    if with_sequences:
        out["best_stage_sequence"] = best_stage_sequence(instance)[0]
    return out


def simulate_policy(
    instance: SojournInstance,
    choose: Callable[[tuple[int, ...], int], int],
    *,
    samples: int = 100_000,
    seed=None,
    level: float = 0.999,
):
    """Monte-Carlo estimate of objective (1) under a Markov policy (an independent check of the
    Bellman values): sample every job's stopping checkpoint, run the policy stage by stage."""
    from scipy.stats import norm

    rng = as_generator(seed)
    jobs = instance.jobs
    n = len(jobs)
    stop = np.column_stack(
        [rng.choice(np.arange(1, j.n_stages + 1), size=samples, p=np.array(j.probs) / sum(j.probs)) for j in jobs]
    )
    vals = np.empty(samples)
    for r in range(samples):
        progress = [0] * n
        ns, t, tot = 0, 0.0, 0.0
        for _ in range(sum(j.n_stages for j in jobs)):
            if all(d == DONE for d in progress):
                break
            k = choose(tuple(progress), ns)
            d = progress[k]
            t += jobs[k].stage_lengths[d]
            if d + 1 == stop[r, k]:
                if d + 1 == jobs[k].n_stages:
                    ns += 1
                    tot += t
                progress[k] = DONE
            else:
                progress[k] = d + 1
        vals[r] = tot / ns if ns else 0.0
    mean, se = float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(samples))
    z = float(norm.ppf(0.5 + level / 2))
    return MonteCarloEstimate(mean, se, mean - z * se, mean + z * se, samples)
