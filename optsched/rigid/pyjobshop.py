"""The rigid problem as a PyJobShop model: an independent exact reference (optional, ``pip install pyjobshop``).

One renewable resource per server (capacity G_m), one job and one task per rigid job with one
mode per server that can hold it (duration p_j, demand g_j), release r_j; single-server jobs
only. PyJobShop minimises weighted flow time sum w_j (C_j - r_j): add
:func:`flow_time_offset` (sum w_j r_j, in slots) for total weighted completion time.
"""

from __future__ import annotations

from typing import Any

from optsched.core.instance import Instance
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidInstanceError, SolverUnavailableError
from optsched.rigid.formulation import slot_data


def to_pyjobshop(instance: Instance) -> Any:
    """A ``pyjobshop.Model`` of a rigid instance whose jobs are all single-server (times in slots,
    objective weighted flow time). Raises ``InvalidInstanceError`` for a spanning job or a
    non-integer weight, ``SolverUnavailableError`` without pyjobshop."""
    try:
        from pyjobshop import Model
    except ImportError:
        raise SolverUnavailableError("pyjobshop is not installed: pip install pyjobshop (the 'dev' extra).") from None
    d = slot_data(instance)
    for j, job in enumerate(instance.jobs):
        if not d.single[j]:
            raise InvalidInstanceError(
                f"Job {job.id!r} may span servers (single_server false); the PyJobShop model "
                f"takes single-server jobs only."
            )
        if abs(d.w[j] - round(d.w[j])) > 1e-12:
            raise InvalidInstanceError(f"The 'weight' of job {job.id!r} is {d.w[j]!r}; PyJobShop needs integers.")
    m = Model()
    servers = [m.add_renewable(capacity=G, name=f"server_{s}") for s, G in enumerate(d.G)]
    for j in range(d.n):
        job = m.add_job(weight=int(round(d.w[j])), release_date=d.r[j], name=f"job_{j}")
        task = m.add_task(job=job, earliest_start=d.r[j], name=f"task_{j}")
        for s, res in enumerate(servers):
            if d.g[j] <= d.G[s]:
                m.add_mode(task, res, duration=d.p[j], demands=d.g[j])
    m.set_objective(weight_total_flow_time=1)
    return m


def flow_time_offset(instance: Instance) -> int:
    """sum_j w_j r_j in slots: PyJobShop's objective + this = total weighted completion time in slots."""
    d = slot_data(instance)
    return int(round(sum(w * r for w, r in zip(d.w, d.r, strict=True))))


def from_pyjobshop(instance: Instance, model: Any, solution: Any) -> Schedule:
    """The optsched schedule of a PyJobShop solution of :func:`to_pyjobshop`'s model."""
    s, sched = instance.slot, Schedule()
    for job, task in zip(instance.jobs, solution.tasks, strict=True):
        server = model.modes[task.mode].resources[0]
        sched.add(job.id, task.start * s, task.end * s, {server: job.gpus})
    return sched
