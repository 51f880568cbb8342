"""The proven non-preemptive optimum of small workloads of rigid jobs, a lower bound on the total
JCT of every non-preemptive schedule (``optsched compare``): :func:`nonpreemptive_lower_bound`
solves the exact model (:func:`optsched.rigid.exact.solve_exact`) on slot-floored data.

The bounds that need no solver (own length, fluid SRPT, mean busy time) are in
:mod:`optsched.core.bounds`, shared by every paper; the bound of one instance, without a solver,
is :func:`optsched.rigid.bounds.area_bound`. Tested in ``tests/rigid/test_jct_bound.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from optsched.core.bounds import jct_lower_bound
from optsched.core.instance import Instance
from optsched.core.job import Job
from optsched.rigid.exact import solve_exact
from optsched.solvers import SolveOptions


@dataclass(frozen=True)
class NonPreemptiveBound:
    """A lower bound on the total JCT of every *non-preemptive* schedule of rigid jobs (seconds):
    ``total`` from the exact model's proven bound on slot-floored data (``optimal``: the model was
    solved to optimality, so ``total`` is its optimum, converted), ``slot`` the slot length used.
    ``exact_data``: every release and processing time is a whole number of slots and no job was left
    out, so the floored instance is the real one and an optimal ``total`` is the real optimum;
    otherwise it is the optimum of the slot-rounded instance, a bound on the real one."""

    total: float
    optimal: bool
    slot: float
    n_jobs: int
    solver_status: str
    exact_data: bool = False

    @property
    def description(self) -> str:
        """What ``total`` is, in words: "proven optimum", "optimum of the slot-rounded instance" or
        "proven bound"."""
        if not self.optimal:
            return "proven bound of the slot-rounded instance"
        return "proven optimum" if self.exact_data else f"optimum of the slot-rounded instance ({self.slot:g} s slots)"

    @property
    def mean(self) -> float:
        return self.total / self.n_jobs if self.n_jobs else float("nan")


def nonpreemptive_lower_bound(
    arrival: Sequence[float],
    gpus: Sequence[float],
    processing: Sequence[float],
    cluster,
    *,
    max_slots: int = 400,
    time_limit: float = 10.0,
    backend: str = "cpsat",
) -> NonPreemptiveBound:
    """A lower bound on sum_i (C_i - r_i) over every non-preemptive schedule in which job i holds
    g_i GPUs of ``cluster`` for at least p_i seconds from one start S_i >= r_i
    (formulations/rigid.md#jct-bound, "non-preemptive optimum").

    Releases (measured from the first one) and processing times are floored to whole slots of Delta
    seconds (Delta the least whole number of seconds with max r + sum p <= ``max_slots`` slots);
    flooring a schedule's starts keeps it feasible and its completions no later, so the floored
    instance's optimum is at most the real one. Jobs shorter than a slot are left out of the model
    (removing jobs cannot raise the others' optimum) and counted with their own length. The exact
    model's proven bound (its optimum when solved) is used, never its incumbent.

    Raises
    ------
    InvalidInstanceError
        Bad data (as :func:`jct_lower_bound`).
    """
    r = np.asarray(arrival, dtype=float)
    g = np.asarray(gpus, dtype=float)
    p = np.asarray(processing, dtype=float)
    jct_lower_bound(r, g, p, int(cluster.total_gpus))  # validates the data
    if len(r):
        r = r - r.min()  # from the first arrival: the slots cover the jobs, not the clock's origin
    span = float(r.max() + p.sum()) if len(r) else 0.0
    delta = float(max(1, math.ceil(span / max_slots)))
    rs = np.floor(r / delta + 1e-9)
    ps = np.floor(p / delta + 1e-9)
    keep = ps >= 1
    short = float(p[~keep].sum())
    exact = bool(
        keep.all() and np.allclose(rs * delta, r, rtol=0, atol=1e-9) and np.allclose(ps * delta, p, rtol=0, atol=1e-9)
    )
    if not keep.any():
        return NonPreemptiveBound(short, True, delta, len(r), "no job longer than a slot", exact_data=True)
    jobs = [
        Job(int(i), work=float(ps[i] * delta), gpus=int(g[i]), arrival=float(rs[i] * delta))
        for i in np.nonzero(keep)[0]
    ]
    res = solve_exact(
        Instance(cluster, jobs, name="np-bound", slot=delta),
        backend=backend,
        options=SolveOptions(time_limit=time_limit, threads=1),
    )
    if res.bound is None:
        return NonPreemptiveBound(float(p.sum()), False, delta, len(r), str(res.status))
    total = float(res.bound) - float(r[keep].sum()) + short
    return NonPreemptiveBound(
        max(total, float(p.sum())), str(res.status) == "optimal", delta, len(r), str(res.status), exact_data=exact
    )
