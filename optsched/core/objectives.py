"""Objectives of cluster schedules, computed from the schedule and the instance alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from optsched.exceptions import UnknownNameError


def total_weighted_completion_time(instance: Any, schedule: Any) -> float:
    view = getattr(schedule, "segment_lists", None)
    if view is not None:  # a Schedule: its completions read in place (the same sum, term by term)
        runs = view()
        return float(
            sum(
                j.weight * (segs[0].end if len(segs := runs[j.id]) == 1 else max(s.end for s in segs))
                for j in instance.jobs
            )
        )
    return float(sum(j.weight * schedule.completion(j.id) for j in instance.jobs))


def total_completion_time(instance: Any, schedule: Any) -> float:
    return float(sum(schedule.completion(j.id) for j in instance.jobs))


def total_flow_time(instance: Any, schedule: Any) -> float:
    """Sum of job completion times (JCT) measured from arrival: sum_j (C_j - r_j)."""
    return float(sum(schedule.completion(j.id) - j.arrival for j in instance.jobs))


def total_weighted_flow_time(instance: Any, schedule: Any) -> float:
    return float(sum(j.weight * (schedule.completion(j.id) - j.arrival) for j in instance.jobs))


def mean_jct(instance: Any, schedule: Any) -> float:
    return total_flow_time(instance, schedule) / max(1, instance.n_jobs)


def makespan(instance: Any, schedule: Any) -> float:
    return float(max((schedule.completion(j.id) for j in instance.jobs), default=0.0))


OBJECTIVES: dict[str, Callable[[Any, Any], float]] = {
    "total_weighted_completion_time": total_weighted_completion_time,
    "total_completion_time": total_completion_time,
    "total_flow_time": total_flow_time,
    "total_weighted_flow_time": total_weighted_flow_time,
    "mean_jct": mean_jct,
    "makespan": makespan,
}
"""Objective name -> function ``(instance, schedule) -> value``, recomputed from a schedule alone."""


def register_objective(name: str, func: Callable[[Any, Any], float]) -> None:
    OBJECTIVES[name] = func


def objective_value(instance: Any, schedule: Any, name: str) -> float:
    """The objective ``name`` (a key of ``OBJECTIVES``, e.g. ``"makespan"``) of ``schedule``,
    recomputed from the schedule alone; an unknown name raises :class:`~optsched.exceptions.UnknownNameError`.

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import objective_value
    >>> from optsched.rigid import list_schedule
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> sched = list_schedule(inst, rule="wspt").schedule
    >>> objective_value(inst, sched, "total_weighted_completion_time")
    20.0
    """
    try:
        f = OBJECTIVES[name]
    except KeyError:
        raise UnknownNameError(f"Unknown objective {name!r}; known: {sorted(OBJECTIVES)}.") from None
    return f(instance, schedule)
