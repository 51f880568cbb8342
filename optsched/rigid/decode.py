"""Rigid exact models' schedules: read a solved model's schedule (:func:`decode_exact`), and map a
schedule onto a model as its solver's start (:func:`warm_start_exact`).

Tested in ``tests/rigid/test_exact.py`` and ``tests/rigid/test_time_limit.py`` (every solve decodes
its schedule; warm starts)."""

from __future__ import annotations

from optsched.core.instance import Instance
from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidOptionError, InvalidScheduleError
from optsched.rigid.formulation import IntervalVariables, TimeIndexedVariables
from optsched.rigid.sgs import decode_placements
from optsched.solvers.model import ExactModel


def schedule_from_time_indexed(instance: Instance, model, variables: TimeIndexedVariables | None = None) -> Schedule:
    """Read start slots (and per-server splits, when modelled) from a solved time-indexed model."""
    import pyomo.environ as pyo

    v = variables if variables is not None else TimeIndexedVariables.of(model)
    d, s = v.data, instance.slot
    jobs = instance.jobs
    start_slot = {}
    for (j, t), x in v.x.items():
        if x.value is not None and x.value > 0.5:
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
                if (j, srv, t) in v.y and pyo.value(v.y[j, srv, t]) > 0.5:
                    pl[srv] = d.g[j]
            else:
                k = int(round(pyo.value(v.w[j, srv, t])))
                if k > 0:
                    pl[srv] = k
        sched.add(jobs[j].id, t * s, t * s + jobs[j].work, pl)
    return sched


def schedule_from_cpsat(instance: Instance, solver, variables: IntervalVariables) -> Schedule:
    """Read starts and placements from a solved :func:`build_interval_cpsat` model."""
    s = instance.slot
    sched = Schedule()
    for j, job in enumerate(instance.jobs):
        t = solver.value(variables.start[j])
        pl = {}
        for srv, a in enumerate(variables.alloc[j]):
            k = int(solver.value(a)) if not isinstance(a, int) else a
            if k > 0:
                pl[srv] = k
        sched.add(job.id, t * s, t * s + job.work, pl)
    return sched


def decode_exact(instance: Instance, em: ExactModel, sr) -> Schedule:
    """The schedule of a solved :func:`build_exact` model."""
    if isinstance(sr.raw, dict) and "schedule" in sr.raw:  # a schedule found outside the model (relax-and-repair)
        return sr.raw["schedule"]
    if isinstance(em.handles, IntervalVariables):
        return schedule_from_cpsat(instance, sr.raw, em.handles)
    return schedule_from_time_indexed(instance, em.model, em.handles)


def _starts_of(instance: Instance, schedule: Schedule, T: int) -> list[tuple[int, dict[int, int]]]:
    """(start slot, placement) per job index; refuses what the model cannot represent."""
    out = []
    for job in instance.jobs:
        segs = schedule.segments(job.id)
        if len(segs) != 1:
            raise InvalidScheduleError(
                f"The initial schedule runs job {job.id!r} in {len(segs)} pieces; the exact "
                f"rigid models need one run per job."
            )
        t = segs[0].start / instance.slot
        if abs(t - round(t)) > 1e-9 or not 0 <= round(t) <= T - round(job.work / instance.slot):
            raise InvalidScheduleError(
                f"The initial schedule starts job {job.id!r} at {segs[0].start!r} s, not a "
                f"whole slot within the model's horizon of {T} slots of {instance.slot} s."
            )
        out.append((int(round(t)), {int(k): int(v) for k, v in segs[0].placement.items()}))
    return out


def warm_start_exact(instance: Instance, em: ExactModel, schedule: Schedule) -> None:
    """Install a feasible schedule as the start of a :func:`build_exact` model: CP-SAT hints on
    the starts (and the splits of spanning jobs), or a full assignment of x (and y/w) for HiGHS."""
    v = em.handles
    if isinstance(v, IntervalVariables):  # CP-SAT
        model = em.model
        model.clear_hints()
        for j, (t, pl) in enumerate(_starts_of(instance, schedule, v.data.T)):
            model.add_hint(v.start[j], t)
            if v.data.single[j]:
                for srv, b in v.on[j].items():
                    model.add_hint(b, pl.get(srv, 0) > 0)
            else:
                for srv, a in enumerate(v.alloc[j]):
                    model.add_hint(a, pl.get(srv, 0))
        # (CP-SAT may lose a hint in presolve and end worse; run_exact then returns the start)
        return
    d = v.data
    chosen = _starts_of(instance, schedule, d.T)
    for (j, t), x in v.x.items():
        x.value = 1.0 if chosen[j][0] == t else 0.0
    if d.mixed:
        for (j, srv, t), y in v.y.items():
            y.value = 1.0 if chosen[j][0] == t and chosen[j][1].get(srv, 0) > 0 else 0.0
        for (j, srv, t), w in v.w.items():
            w.value = float(chosen[j][1].get(srv, 0)) if chosen[j][0] == t else 0.0
