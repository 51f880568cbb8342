"""Exact solves of the rigid-job problem: HiGHS time-indexed MILP or CP-SAT."""

from __future__ import annotations

from optsched.core.instance import Instance
from optsched.core.objectives import objective_value
from optsched.core.registry import check_kind, register_algorithm
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidOptionError
from optsched.rigid.formulation import build_cpsat, build_time_indexed
from optsched.rigid.sgs import decode_placements
from optsched.solvers import SolveOptions
from optsched.solvers.exact import ExactModel, run_exact

__all__ = ["solve_exact", "schedule_from_time_indexed", "schedule_from_cpsat", "build_exact", "decode_exact"]

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


def _integral_weights(instance: Instance) -> bool:
    return all(abs(j.weight - round(j.weight)) < 1e-12 for j in getattr(instance, "jobs", ()))


def build_exact(instance: Instance, backend: str, options: SolveOptions, *, horizon_slots: int | None = None,
                max_size: int | None = None) -> ExactModel:
    """The model :func:`solve_exact` solves: (C1)-(C4) for ``cpsat``, else (T1)-(T5).

    Both minimise total weighted completion time in slots (``scale`` = slot length); with
    integer weights that is an integer, so ``step`` = one slot length (see
    :mod:`optsched.solvers.exact`)."""
    step = instance.slot if _integral_weights(instance) else None
    if backend == "cpsat":
        model, handles = build_cpsat(instance, horizon_slots=horizon_slots, max_size=max_size)
    else:
        model, handles = build_time_indexed(instance, horizon_slots=horizon_slots, max_size=max_size), None
    return ExactModel(model, handles, scale=instance.slot, step=step)


def decode_exact(instance: Instance, em: ExactModel, sr) -> Schedule:
    """The schedule of a solved :func:`build_exact` model."""
    if em.handles is not None:
        return schedule_from_cpsat(instance, sr.raw, em.handles)
    return schedule_from_time_indexed(instance, em.model)


@register_algorithm("rigid-exact", "rigid", exact=True, backends=("highs", "cpsat"),
                    suite_options={"options": SolveOptions(time_limit=30, threads=1)})
def solve_exact(instance: Instance, *, backend: str = "highs", options: SolveOptions | None = None,
                seed=None, horizon_slots: int | None = None, max_size: int | None = None,
                write_model: str | None = None) -> Result:
    """Exact minimum total weighted completion time of rigid jobs (time-indexed MILP or CP-SAT).

    Parameters
    ----------
    instance : Instance (kind ``rigid``); every work and arrival a whole number of slots.
    backend : {"highs", "cpsat"} or any Pyomo solver name
        ``highs``/Pyomo solvers solve the time-indexed MILP (T1)-(T5); ``cpsat`` the interval
        model (C1)-(C4).
    options : SolveOptions
        Time limit, gaps, threads, seed. Default: 60 s, gap 0, one thread. When all weights are
        integers and ``mip_abs_gap`` is None it is set to 0.999 (the objective in slots is then
        an integer, so a gap below 1 proves optimality).
    seed : int or numpy.random.Generator, optional
        Overrides ``options.seed``.
    write_model : str, optional
        Also write the built model to this file (.lp/.mps, or .pb/.pbtxt for CP-SAT).

    Returns
    -------
    Result
        Certified by :func:`optsched.solvers.exact.run_exact`: objective recomputed from the
        decoded schedule, bound (rounded up to a whole slot with integer weights) never above
        it, gap, status optimal only within ``info["optimality_tolerance"]``.

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
    from optsched.solvers.exact import resolve_options

    check_kind(instance, "rigid", "rigid-exact")
    options = resolve_options(options, seed)
    if options.mip_abs_gap is None and _integral_weights(instance):
        # integer objective (in slots): an absolute gap below 1 proves optimality
        options = options.replace(mip_abs_gap=0.999)
    return run_exact(
        instance,
        build=lambda inst, b, o: build_exact(inst, b, o, horizon_slots=horizon_slots, max_size=max_size),
        decode=lambda em, sr: decode_exact(instance, em, sr),
        evaluate=lambda s: objective_value(instance, s, OBJECTIVE),
        backend=backend, algorithm=f"rigid-exact[{backend}]", objective_name=OBJECTIVE, options=options,
        write_model=write_model)
