"""Serial schedule generation (list scheduling) for rigid jobs, and placement decoding.

Jobs are taken in a given order; each starts at the earliest time >= its release at which it
fits for its whole run, given the jobs already placed (RCPSP's *serial SGS*; Kolisch 1996).
Over all orders it generates every active schedule, so it also serves as the exhaustive
method of :mod:`optsched.rigid.brute`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from optsched.core.instance import Instance
from optsched.core.placement import place
from optsched.core.schedule import Schedule
from optsched.exceptions import InfeasibleError

__all__ = ["serial_sgs", "decode_placements"]


def _max_use(intervals: list[tuple[float, float, int]], a: float, b: float) -> int:
    """Peak of sum(g) over [a, b) for intervals (s, e, g)."""
    pts = [a] + [s for s, e, g in intervals if a < s < b]
    best = 0
    for t in pts:
        u = sum(g for s, e, g in intervals if s <= t < e)
        best = max(best, u)
    return best


def decode_placements(instance: Instance, starts: Mapping, rule: str = "consolidate") -> Schedule:
    """Per-server placements for start times that respect the *total* GPU capacity.

    Sweeps jobs by start time, freeing GPUs at completions, and gives each starting job GPUs by
    ``rule``. Always succeeds when the total capacity holds at every time, because a job keeps
    whatever free GPUs it gets (GPUs are interchangeable and jobs may span servers).

    Examples
    --------
    >>> from optsched.core import Cluster, Instance, Job
    >>> from optsched.rigid import decode_placements
    >>> inst = Instance(Cluster.homogeneous(2, 2), [Job(0, work=2, gpus=3), Job(1, work=2, gpus=1)])
    >>> decode_placements(inst, {0: 0, 1: 0}).segments(0)[0].placement
    {0: 2, 1: 1}
    """
    jobs = {j.id: j for j in instance.jobs}
    free = instance.cluster.gpus.copy()
    running: list[tuple[float, object, dict[int, int]]] = []
    sched = Schedule()
    for jid in sorted(starts, key=lambda k: (starts[k], str(k))):
        t = float(starts[jid])
        running.sort(key=lambda x: x[0])
        while running and running[0][0] <= t + 1e-9:
            _, _, pl = running.pop(0)
            for m, g in pl.items():
                free[m] += g
        job = jobs[jid]
        pl = place(free, job.gpus, rule=rule, single_server=job.single_server)
        if pl is None:
            raise InfeasibleError(
                f"Start times overload the cluster at t={t:g} ({job.label} does not fit); "
                f"they violate the capacity constraint."
            )
        for m, g in pl.items():
            free[m] -= g
        running.append((t + job.work, jid, pl))
        sched.add(jid, t, t + job.work, pl)
    return sched


def serial_sgs(
    instance: Instance,
    order: Sequence,
    *,
    server_of: Mapping | None = None,
    rule: str = "consolidate",
    rng: np.random.Generator | None = None,
) -> Schedule:
    """Serial SGS over ``order`` (job ids).

    If every job may span servers, feasibility is checked on the total GPUs and placements are
    decoded afterwards (:func:`decode_placements`). Otherwise each server keeps its own usage
    timeline; a single-server job takes ``server_of[j]`` if given, else the server chosen by
    ``rule`` among those where it fits earliest.

    Examples
    --------
    >>> from optsched.core import Cluster, Instance, Job
    >>> from optsched.rigid import serial_sgs
    >>> inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=2, gpus=2), Job(1, work=1, gpus=1)])
    >>> sched = serial_sgs(inst, [1, 0])
    >>> sched.start(1), sched.start(0)
    (0.0, 1.0)
    """
    jobs = {j.id: j for j in instance.jobs}
    G = instance.cluster.gpus
    if sorted(map(str, order)) != sorted(str(j) for j in jobs):
        raise InfeasibleError("The order must list every job of the instance exactly once.")
    all_span = not any(j.single_server for j in instance.jobs)
    if all_span and server_of is None:
        total = int(G.sum())
        placed: list[tuple[float, float, int]] = []
        starts = {}
        for jid in order:
            job = jobs[jid]
            cands = sorted({job.arrival} | {e for _, e, _ in placed if e > job.arrival})
            for t in cands:
                if _max_use(placed, t, t + job.work) + job.gpus <= total:
                    starts[jid] = t
                    placed.append((t, t + job.work, job.gpus))
                    break
        return decode_placements(instance, starts, rule)
    per: list[list[tuple[float, float, int]]] = [[] for _ in range(len(G))]
    sched = Schedule()
    for jid in order:
        job = jobs[jid]
        ends = {e for lst in per for _, e, _ in lst if e > job.arrival}
        for t in sorted({job.arrival} | ends):
            free = np.array([G[m] - _max_use(per[m], t, t + job.work) for m in range(len(G))])
            if server_of is not None and job.single_server:
                m = server_of[jid]
                pl = {int(m): job.gpus} if free[m] >= job.gpus else None
            else:
                pl = place(free, job.gpus, rule=rule, single_server=job.single_server, rng=rng)
            if pl is not None:
                for m, g in pl.items():
                    per[m].append((t, t + job.work, g))
                sched.add(jid, t, t + job.work, pl)
                break
    return sched
