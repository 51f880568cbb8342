"""Exhaustive enumeration: the independent exact method for tiny rigid instances.

Every order of the jobs (and, for single-server jobs, every server assignment) through the
serial SGS. Over all orders the serial SGS generates every *active* schedule, and for a
regular objective such as sum w_j C_j some active schedule is optimal (Sprecher, Kolisch &
Drexl 1995), so the minimum found is the optimum. Instances must be *pure*: every job spans
servers, or every job is single-server.

Tested in ``tests/rigid/test_exact.py``.
"""

from __future__ import annotations

import itertools

from optsched.core.instance import Instance
from optsched.core.objectives import objective_value
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidOptionError
from optsched.rigid.sgs import serial_sgs


def brute_force_optimum(instance: Instance, *, max_jobs: int = 8) -> tuple[float, Schedule]:
    """Return ``(optimal sum w_j C_j, an optimal schedule)`` by enumeration (n <= ``max_jobs``).

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import brute_force_optimum
    >>> value, schedule = brute_force_optimum(optsched.load_instance("toy:rigid-2x2-five"))
    >>> value
    19.0
    """
    n = instance.n_jobs
    if n > max_jobs:
        raise InvalidOptionError(f"Enumeration over {n}! orders is too slow; max_jobs={max_jobs}.")
    single = [j.single_server for j in instance.jobs]
    if any(single) and not all(single):
        raise InvalidOptionError("brute_force_optimum needs a pure instance (all single-server or all spanning).")
    ids = instance.job_ids
    G = instance.cluster.gpus
    assignments: list = [None]
    if all(single) and n:
        choices = [[m for m in range(len(G)) if G[m] >= j.gpus] for j in instance.jobs]
        assignments = [dict(zip(ids, a, strict=True)) for a in itertools.product(*choices)]
    best, best_s = float("inf"), None
    for server_of in assignments:
        for perm in itertools.permutations(ids):
            s = serial_sgs(instance, perm, server_of=server_of)
            v = objective_value(instance, s, "total_weighted_completion_time")
            if v < best - 1e-12:
                best, best_s = v, s
    return best, best_s
