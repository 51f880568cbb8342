"""Exact solves of the rigid-job problem: HiGHS time-indexed MILP or CP-SAT."""

from __future__ import annotations

import time

import numpy as np

from optsched.core.instance import Instance
from optsched.core.objectives import objective_value
from optsched.core.registry import register_algorithm
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidOptionError
from optsched.rigid.formulation import build_cpsat, build_time_indexed
from optsched.rigid.sgs import decode_placements
from optsched.solvers import SolveOptions, solve_cpsat, solve_pyomo
from optsched.solvers import write_model as _write

__all__ = ["solve_exact", "schedule_from_time_indexed", "schedule_from_cpsat"]

OBJECTIVE = "total_weighted_completion_time"


def schedule_from_time_indexed(instance: Instance, model) -> Schedule:
    """Read start slots (and per-server splits, when modelled) from a solved time-indexed model."""
    import pyomo.environ as pyo

    d, s = model.data, instance.slot
    jobs = instance.jobs
    start_slot = {}
    for (j, t) in model.JT:
        v = model.x[j, t].value
        if v is not None and v > 0.5:
            start_slot[j] = t
    if len(start_slot) != len(jobs):
        raise InvalidOptionError("The model has no complete solution loaded (some job has no start).")
    if not d.mixed:
        return decode_placements(instance, {jobs[j].id: start_slot[j] * s for j in start_slot})
    sched = Schedule()
    for j, t in start_slot.items():
        pl: dict[int, int] = {}
        for srv in range(len(d.G)):
            if d.single[j]:
                if (j, srv, t) in model.JST_single and pyo.value(model.y[j, srv, t]) > 0.5:
                    pl[srv] = d.g[j]
            else:
                k = int(round(pyo.value(model.w[j, srv, t])))
                if k > 0:
                    pl[srv] = k
        sched.add(jobs[j].id, t * s, t * s + jobs[j].work, pl)
    return sched


def schedule_from_cpsat(instance: Instance, solver, handles) -> Schedule:
    s = instance.slot
    sched = Schedule()
    for j, job in enumerate(instance.jobs):
        t = solver.Value(handles["start"][j])
        pl = {}
        for srv, a in enumerate(handles["alloc"][j]):
            k = int(solver.Value(a)) if not isinstance(a, int) else a
            if k > 0:
                pl[srv] = k
        sched.add(job.id, t * s, t * s + job.work, pl)
    return sched


@register_algorithm("rigid-exact", "rigid", exact=True, backends=("highs", "cpsat"),
                    suite_options={"options": SolveOptions(time_limit=30, threads=1)})
def solve_exact(instance: Instance, *, backend: str = "highs", options: SolveOptions | None = None,
                horizon_slots: int | None = None, max_size: int | None = None, seed=None,
                write_model: str | None = None) -> Result:
    """Exact minimum total weighted completion time of rigid jobs (time-indexed MILP or CP-SAT).

    Parameters
    ----------
    instance : Instance (kind ``rigid``); every work and arrival a whole number of slots.
    backend : {"highs", "cpsat"} or any Pyomo solver name
        ``highs``/Pyomo solvers solve the time-indexed MILP (T1)-(T5); ``cpsat`` the interval
        model (C1)-(C4).
    options : SolveOptions
        Time limit, gaps, threads, seed. Default: 60 s, gap 0. When all weights are integers and
        ``mip_abs_gap`` is None it is set to 0.999 (the objective in slots is then an integer, so
        a gap below 1 proves optimality).
    seed : int, optional
        Overrides ``options.seed``.
    write_model : str, optional
        Also write the built model to this file (.lp/.mps, or .pb/.pbtxt for CP-SAT).

    Returns
    -------
    Result
        Status (optimal / feasible at limit / infeasible / no_solution), objective recomputed
        from the decoded schedule, bound and gap in seconds, runtime, solver version.

    Notes
    -----
    The time-indexed model has O(n T) binaries (O(n M T) with single-server jobs), T = max r +
    sum p slots; it refuses to build above ``max_size`` (ModelTooLargeError).

    References
    ----------
    formulations/rigid.md

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
    >>> r = solve_exact(inst)
    >>> r.status.value, r.objective
    ('optimal', 19.0)
    """
    integral = all(abs(j.weight - round(j.weight)) < 1e-12 for j in getattr(instance, "jobs", ()))
    options = options or SolveOptions()
    if options.mip_abs_gap is None and integral:
        # integer objective (in slots): an absolute gap below 1 proves optimality
        options = options.replace(mip_abs_gap=0.999)
    if seed is not None:
        options = options.replace(seed=int(seed))
    t0 = time.perf_counter()
    if backend == "cpsat":
        model, h = build_cpsat(instance, horizon_slots=horizon_slots, max_size=max_size)
        if write_model:
            _write(model, write_model)
        sr = solve_cpsat(model, options)
        sched = schedule_from_cpsat(instance, sr.raw, h) if sr.has_solution else None
    else:
        model = build_time_indexed(instance, horizon_slots=horizon_slots, max_size=max_size)
        if write_model:
            _write(model, write_model)
        sr = solve_pyomo(model, backend, options)
        sched = schedule_from_time_indexed(instance, model) if sr.has_solution else None
    obj = objective_value(instance, sched, OBJECTIVE) if sched is not None else None
    scale = instance.slot
    bound_slots = sr.bound
    if bound_slots is not None and integral:
        # the objective in slots is an integer: its bound rounds up (to absorb float noise, not gaps)
        bound_slots = float(np.ceil(bound_slots - 1e-6))
    bound = None if bound_slots is None else bound_slots * scale
    if obj is not None and sr.objective is not None and not np.isclose(obj, sr.objective * scale, rtol=1e-6, atol=1e-6):
        raise InvalidOptionError(f"Decoded objective {obj} differs from the solver's {sr.objective * scale}; "
                                 f"the model and the decoder disagree (a bug: please report it).")
    return Result(algorithm=f"rigid-exact[{backend}]", instance=instance.name, objective=obj,
                  objective_name=OBJECTIVE, schedule=sched, status=sr.status, bound=bound,
                  gap=None if obj is None or bound is None else abs(obj - bound) / max(abs(obj), 1e-10),
                  runtime=time.perf_counter() - t0, solver=f"{sr.solver} {sr.solver_version}",
                  info={"solver_message": sr.message, "solver_runtime": sr.runtime})
