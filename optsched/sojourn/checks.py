"""Verifier checks for kind ``sojourn`` (labels of ``formulations/sojourn.md``) and the
objective evaluator registered with :mod:`optsched.verify`.

Feasibility of a static schedule is combinatorial: an order is a permutation of the jobs
(``permutation``); a stage sequence lists each job's stages once, in order (``stage_order``).
The bound checks (``bounds.py``) are separate functions used by the tests and the experiments.

Tested in ``tests/sojourn/test_model.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from optsched.exceptions import InvalidScheduleError, UnknownNameError
from optsched.sojourn.bounds import pairwise_lower_bound
from optsched.sojourn.evaluate import as_indices, expected_sojourn, pair_costs, stage_indices
from optsched.sojourn.model import OBJECTIVE, SojournInstance, SojournSchedule
from optsched.verify.report import Violation


def _as_schedule(schedule: Any) -> SojournSchedule:
    if isinstance(schedule, SojournSchedule):
        return schedule
    if isinstance(schedule, dict):
        return SojournSchedule.from_dict(schedule)
    return SojournSchedule(order=schedule)


def check_permutation(instance: SojournInstance, schedule: Any) -> Iterable[Violation]:
    """(L1) an order contains every job exactly once."""
    s = _as_schedule(schedule)
    if not s.is_order:
        return
    try:
        as_indices(instance, s.order)
    except InvalidScheduleError as e:
        yield Violation("permutation", str(e))


def check_stage_order(instance: SojournInstance, schedule: Any) -> Iterable[Violation]:
    """(S1) a stage sequence lists stages 1..M_i of every job once, in increasing order."""
    s = _as_schedule(schedule)
    if s.is_order:
        return
    try:
        stage_indices(instance, s.stages)
    except InvalidScheduleError as e:
        yield Violation("stage_order", str(e))


def check_static_setting(instance: SojournInstance, schedule: Any) -> Iterable[Violation]:
    """A static schedule is evaluated in the setting of Sec. III (W = 1, all a_i = 0)."""
    if not instance.static:
        yield Violation(
            "static_setting",
            "A static order is only defined for one server and arrivals at 0; "
            "this instance has arrivals or several servers (use the online policies).",
        )


def check_pairwise_lower_bound(instance: SojournInstance, schedule: Any) -> Iterable[Violation]:
    """Objective (1) of any static schedule >= sum_i d_i + sum_{i<j} min(c_ij, c_ji) (bounds.py)."""
    if not instance.static:
        return
    s = _as_schedule(schedule)
    try:
        pc = pair_costs(instance)
        v = expected_sojourn(instance, s, pc)
    except InvalidScheduleError:
        return  # reported by permutation / stage_order
    lb = pairwise_lower_bound(pc)
    if v < lb - 1e-9 * max(1.0, abs(lb)):
        yield Violation(
            "pairwise_lower_bound",
            f"objective (1) {v!r} is below the pairwise lower bound {lb!r} "
            f"(the evaluator or the bound is wrong: please report it).",
        )


def evaluate(instance: SojournInstance, schedule: Any, objective: str) -> float:
    if objective not in (OBJECTIVE, "total_weighted_completion_time"):
        raise UnknownNameError(f"Kind 'sojourn' has one objective, {OBJECTIVE!r}; got {objective!r}.")
    return expected_sojourn(instance, _as_schedule(schedule))
