"""Static policies of Sec. III-IV: RANK (23), SERPT, SR rank (2), RANDOM, and the adjacent-pair
criterion R^N_{i,j} of Thm III.2 (3)-(4).

Each policy returns a :class:`~optsched.core.Result` whose ``schedule`` is a
:class:`~optsched.sojourn.model.SojournSchedule` and whose ``objective`` is objective (1)
recomputed exactly from it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from optsched.core.result import Result, Status
from optsched.core.seeds import SeedLike, as_generator
from optsched.sojourn.evaluate import PairCosts, as_indices, expected_sojourn, pair_costs
from optsched.sojourn.model import (
    OBJECTIVE,
    SojournInstance,
    SojournSchedule,
    StagedJob,
    check_instance,
)


# --------------------------------------------------------------------------- indices
def sr_rank(job: StagedJob, done: int = 0) -> tuple[float, int]:
    """SR rank (2) of ``job`` after ``done`` completed stages (alive), and its quantum end.

    ``r = min_l [sum_{m<=l} (x_m - x_done) p_m + (x_l - x_done)(P - sum_{m<=l} p_m)] / sum_{m<=l} p_m``
    over checkpoints ``l > done`` (``P`` = probability of being alive). Ties in ``l``: the largest.

    >>> sr_rank(StagedJob(1, [1, 10], [0.25, 0.75]))
    (4.0, 1)
    >>> sr_rank(StagedJob(1, [1, 10], [0.25, 0.75]), done=1)
    (9.0, 2)
    """
    x0 = job.sizes[done - 1] if done else 0.0
    P = sum(job.probs[done:])
    best, arg = np.inf, done + 1
    num, mass = 0.0, 0.0
    for ll in range(done, job.n_stages):
        x, p = job.sizes[ll] - x0, job.probs[ll]
        num += x * p
        mass += p
        r = (num + x * max(P - mass, 0.0)) / mass
        if r <= best * (1 + 1e-12):
            best, arg = min(r, best), ll + 1
    return float(best), arg


def remaining_expected_size(job: StagedJob, done: int = 0) -> float:
    """``E[X - x_done | X > x_done]``: the ERPT of an alive job after ``done`` stages."""
    x0 = job.sizes[done - 1] if done else 0.0
    P = sum(job.probs[done:])
    return sum((x - x0) * p for x, p in zip(job.sizes[done:], job.probs[done:], strict=True)) / P


def index_stage_sequence(instance: SojournInstance, index: Callable[[StagedJob, int], float]) -> list[tuple[Any, int]]:
    """Static stage sequence of the index policy "run the alive job of least ``index(job, done)``
    for one stage, then re-rank" (ties: lower position in the instance).

    The sequence is built as if every job survived; since a job's index changes only when it
    runs, dropping the stages of terminated jobs gives exactly the decisions of the adaptive
    index policy on every outcome (``formulations/sojourn.md#stage-sequences``).
    """
    done = [0] * instance.n_jobs
    seq = []
    for _ in range(sum(j.n_stages for j in instance.jobs)):
        cand = [(index(j, done[k]), k) for k, j in enumerate(instance.jobs) if done[k] < j.n_stages]
        _, k = min(cand)
        done[k] += 1
        seq.append((instance.jobs[k].id, done[k]))
    return seq


def sr_stage_sequence(instance: SojournInstance) -> list[tuple[Any, int]]:
    """SR rank policy with preemption at checkpoints, as a static stage sequence."""
    return index_stage_sequence(instance, lambda j, d: sr_rank(j, d)[0])


def rank_order(instance: SojournInstance) -> list[Any]:
    """Job ids by ascending ``R(i) = E[X_i] / p_{i,M_i}``, Eq. (23) (stable: ties keep instance order)."""
    keys = [j.rank for j in instance.jobs]
    return [instance.jobs[k].id for k in np.argsort(keys, kind="stable")]


def serpt_order(instance: SojournInstance) -> list[Any]:
    """Job ids by ascending expected size ``ERPT(i)`` (non-preemptive SERPT of Sec. IV-A3)."""
    keys = [j.expected_size for j in instance.jobs]
    return [instance.jobs[k].id for k in np.argsort(keys, kind="stable")]


def random_order(instance: SojournInstance, seed: SeedLike = None) -> list[Any]:
    """A uniformly random job order (RANDOM of Sec. IV-A3)."""
    rng = as_generator(seed)
    return [instance.jobs[k].id for k in rng.permutation(instance.n_jobs)]


# --------------------------------------------------------------------------- Results
def _result(
    instance: SojournInstance, name: str, schedule: SojournSchedule, t0: float, pc: PairCosts | None = None, **info: Any
) -> Result:
    obj = expected_sojourn(instance, schedule, pc)
    return Result(
        algorithm=name,
        instance=instance.name,
        objective=obj,
        objective_name=OBJECTIVE,
        schedule=schedule,
        status=Status.HEURISTIC,
        runtime=time.perf_counter() - t0,
        info=info,
    )


def rank(instance: SojournInstance, *, seed: SeedLike = None, pc: PairCosts | None = None) -> Result:
    """RANK: jobs in ascending ``R(i) = E[X_i]/p_{i,M_i}`` (Eq. 23), non-preemptive.

    Parameters
    ----------
    instance : SojournInstance (one server, all arrivals 0)
    seed : ignored (deterministic)
    pc : PairCosts, optional
        Precomputed pair costs (saves O(N^3) when evaluating several policies).

    Returns
    -------
    Result
        ``objective`` = objective (1) of the order, exactly.

    Guarantee
    ---------
    Asymptotically optimal as N -> infinity when the success probabilities are i.i.d. with
    ``1 < beta = E[s/(1-s)] < inf`` (Thm III.4); no finite-N ratio bound is claimed.

    Notes
    -----
    O(sum M_i + N log N) for the order; the exact evaluation adds O(N^3).

    References
    ----------
    Yao, Paolieri, Golubchik, Eq. (23), Thm III.4; ``formulations/sojourn.md#rank``.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> r = rank(inst)
    >>> r.schedule.order, round(r.objective, 10)
    ((1, 2), 9.1)
    """
    t0 = time.perf_counter()
    check_instance(instance)
    return _result(instance, "sojourn-rank", SojournSchedule(order=rank_order(instance)), t0, pc)


def serpt(
    instance: SojournInstance, *, seed: SeedLike = None, preemptive: bool = False, pc: PairCosts | None = None
) -> Result:
    """SERPT: shortest expected (remaining) processing time first.

    ``preemptive=False`` (default, Sec. IV-A3): jobs sorted by ``ERPT(i)``, each run to its end.
    ``preemptive=True``: re-rank by ``E[X - x_j | X > x_j]`` at every checkpoint (Sec. III-A).

    Guarantee
    ---------
    None for objective (1) (it minimises the mean sojourn time of *all* jobs among
    non-preemptive orders).

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> round(serpt(inst).objective, 10)
    9.75
    """
    t0 = time.perf_counter()
    check_instance(instance)
    if preemptive:
        sch = SojournSchedule(stages=index_stage_sequence(instance, remaining_expected_size))
        return _result(instance, "sojourn-serpt-preemptive", sch, t0, pc)
    return _result(instance, "sojourn-serpt", SojournSchedule(order=serpt_order(instance)), t0, pc)


def sr(
    instance: SojournInstance, *, seed: SeedLike = None, preemptive: bool = True, pc: PairCosts | None = None
) -> Result:
    """SR rank (2) (Sevcik; equivalent to the Gittins index), re-ranked at every checkpoint.

    ``preemptive=False``: jobs sorted by their initial SR rank and run to the end.

    Guarantee
    ---------
    Minimises the mean sojourn time of *all* jobs (Sevcik 1974); none for objective (1).

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> r = sr(inst)
    >>> r.schedule.stages, round(r.objective, 10)
    (((1, 1), (2, 1), (2, 2), (1, 2)), 10.0)
    """
    t0 = time.perf_counter()
    check_instance(instance)
    if preemptive:
        return _result(instance, "sojourn-sr", SojournSchedule(stages=sr_stage_sequence(instance)), t0, pc)
    keys = [sr_rank(j)[0] for j in instance.jobs]
    order = [instance.jobs[k].id for k in np.argsort(keys, kind="stable")]
    return _result(instance, "sojourn-sr-nonpreemptive", SojournSchedule(order=order), t0, pc)


def random_policy(instance: SojournInstance, *, seed: SeedLike = None, pc: PairCosts | None = None) -> Result:
    """RANDOM: one uniformly random job order, each job run to its end.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> any(abs(random_policy(inst, seed=0).objective - v) < 1e-9 for v in (9.1, 9.75))
    True
    """
    t0 = time.perf_counter()
    check_instance(instance)
    return _result(instance, "sojourn-random", SojournSchedule(order=random_order(instance, seed)), t0, pc)


# --------------------------------------------------------------------------- Thm III.2
def pair_criterion(pc: PairCosts, i: int, j: int) -> tuple[float, float]:
    """``(R^N_{i,j}(i), R^N_{i,j}(j))`` of Eqs. (3)-(4) for job indices i, j.

    Swapping adjacent i (first) and j changes objective (1) by
    ``c[j,i] - c[i,j] = s_i s_j h1_ij (R(j) - R(i))`` (Eq. 13).
    """
    al = pc.h2[i, j] / pc.h1[i, j]
    return (pc.b[i] / pc.s[i] + al * pc.xM[i], pc.b[j] / pc.s[j] + al * pc.xM[j])


def adjacent_pair_violations(
    instance: SojournInstance, order: Sequence[Any], pc: PairCosts | None = None, rtol: float = 1e-9
) -> list[tuple[Any, Any, float, float]]:
    """Adjacent pairs (i before j) of ``order`` with ``R^N_{ij}(i) > R^N_{ij}(j)`` (beyond ``rtol``).

    Empty for every optimal order (Thm III.2, with <= instead of < to allow ties).
    """
    pc = pc or pair_costs(instance)
    idx = as_indices(instance, order)
    out = []
    for i, j in itertools.pairwise(idx):
        ri, rj = pair_criterion(pc, i, j)
        if ri > rj + rtol * max(1.0, abs(rj)):
            out.append((instance.jobs[i].id, instance.jobs[j].id, ri, rj))
    return out
