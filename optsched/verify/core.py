"""``verify(instance, schedule)``: run every registered check of the instance's kind.

Tested in ``tests/verify/test_feasibility.py``.
"""

from __future__ import annotations

import math
import os
from typing import Any

from optsched.core.result import Result
from optsched.exceptions import (
    InvalidInstanceError,
    InvalidOptionError,
    InvalidScheduleError,
    OptschedError,
    UnknownNameError,
)
from optsched.verify.feasibility import shared_columns
from optsched.verify.registry import checks_for, evaluator_for
from optsched.verify.report import Report, Violation


def verify(
    instance: Any,
    schedule: Any,
    *,
    objective: str | None = None,
    claimed: float | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-6,
) -> Report:
    """Check ``schedule`` against ``instance`` independently of whoever produced it.

    Parameters
    ----------
    objective : str, optional
        Objective to recompute (e.g. ``"total_weighted_completion_time"``).
    claimed : float, optional
        The value the algorithm or solver reported; a mismatch with the recomputed value is a
        violation labelled ``objective``.

    Returns
    -------
    Report
        ``report.ok`` is True when no constraint is violated.

    Raises
    ------
    InvalidInstanceError
        ``instance`` is not a loaded instance (None, a file name, ...).
    InvalidScheduleError
        ``schedule`` is None or a file name (load it first); a schedule that is malformed or
        infeasible is not an error but a report with violations.

    Examples
    --------
    >>> import optsched
    >>> from optsched.core import Schedule
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> bad = Schedule.from_starts({j.id: j.work for j in inst.jobs}, {j.id: 0 for j in inst.jobs},
    ...                            {j.id: {0: j.gpus} for j in inst.jobs})  # everything at once on server 0
    >>> report = optsched.verify(inst, bad)
    >>> report.ok, "capacity" in {v.label for v in report.violations}
    (False, True)
    """
    _check_arguments(instance, schedule)
    kind = str(getattr(instance, "kind", None))
    checks = checks_for(kind)
    if not checks:
        raise InvalidOptionError(
            f"No checks are registered for instance kind {kind!r}; import its package (optsched.load_plugins())."
        )
    report = Report(instance=getattr(instance, "name", "instance"))
    with shared_columns():  # the columns several checks read, computed once
        for label, check in checks:
            report.checks.append(label)
            try:
                report.violations.extend(check(instance, schedule))
            except Exception as e:  # a malformed schedule must not crash the verifier
                report.violations.append(Violation(label, f"check could not run on this schedule: {_why(instance, e)}"))
    if objective is not None:
        ev = evaluator_for(kind)
        if ev is None:
            raise InvalidOptionError(f"No objective evaluator is registered for kind {kind!r}.")
        report.checks.append("objective")
        try:
            value = float(ev(instance, schedule, objective))
            report.objectives[objective] = value
        except UnknownNameError:
            raise  # an objective the kind does not have: the caller's mistake, not the schedule's
        except Exception as e:
            report.violations.append(
                Violation("objective", f"objective {objective!r} cannot be computed: {_why(instance, e)}")
            )
            return report
        if claimed is not None and not math.isclose(value, float(claimed), rel_tol=rtol, abs_tol=atol):
            report.violations.append(
                Violation(
                    "objective",
                    f"The claimed {objective} {claimed!r} differs from "
                    f"the value recomputed from the schedule, {value!r}.",
                )
            )
    return report


def _check_arguments(instance: Any, schedule: Any) -> None:
    if isinstance(instance, (str, os.PathLike)):
        raise InvalidInstanceError(
            f"verify needs a loaded instance, not the name or path {str(instance)!r}: load it first with "
            f"optsched.load_instance({str(instance)!r})."
        )
    if getattr(instance, "kind", None) is None:
        raise InvalidInstanceError(
            f"verify needs an instance (as optsched.load_instance returns); got {repr(instance)[:80]} "
            f"({type(instance).__name__})."
        )
    if schedule is None:
        raise InvalidScheduleError(
            "verify got no schedule (None); pass the schedule to check, e.g. result.schedule, or load a file with "
            "the kind's schedule class (optsched.Schedule.load(path) for rigid jobs)."
        )
    if isinstance(schedule, (str, os.PathLike)):
        raise InvalidScheduleError(
            f"verify needs a schedule object, not the path {str(schedule)!r}: load it first (optsched.Schedule.load "
            f"for rigid jobs, or `optsched verify INSTANCE {schedule!s}` on the command line)."
        )


def _why(instance: Any, e: Exception) -> str:
    """An exception raised on a malformed schedule, in words (not ``KeyError(4)``)."""
    if isinstance(e, KeyError) and e.args:
        key = e.args[0]
        ids = {getattr(j, "id", None) for j in getattr(instance, "jobs", ())}
        if key in ids:
            return f"the schedule has no entry for job {key!r} of the instance (see the other violations)."
        return f"the schedule refers to {key!r}, which the instance does not have."
    return str(e) if isinstance(e, OptschedError) else f"{type(e).__name__}: {e}"


def verify_result(instance: Any, result: Result, **kw: Any) -> Report:
    """Verify ``result.schedule`` and that ``result.objective`` matches the recomputed value.

    Raises
    ------
    InvalidOptionError
        ``result`` is not a result (None, a schedule, ...).
    InvalidScheduleError
        The result has no schedule (status ``no_solution`` or ``infeasible``): nothing to verify.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> optsched.verify_result(inst, optsched.solve(inst)).ok
    True
    """
    if not all(hasattr(result, a) for a in ("schedule", "objective", "objective_name")):
        hint = " (a schedule: use verify(instance, schedule))" if hasattr(result, "to_dict") else ""
        raise InvalidOptionError(
            f"verify_result needs a Result, as an algorithm or solve_exact returns; got {repr(result)[:80]} "
            f"({type(result).__name__}){hint}."
        )
    if result.schedule is None:
        raise InvalidScheduleError(
            f"The result of {getattr(result, 'algorithm', '?')} has no schedule (status "
            f"{getattr(getattr(result, 'status', None), 'value', getattr(result, 'status', '?'))}); there is "
            f"nothing to verify. Check result.status.has_solution first."
        )
    return verify(instance, result.schedule, objective=result.objective_name, claimed=result.objective, **kw)


def verify_checks(instance: Any, schedule: Any, *, skip: tuple[str, ...] = ()) -> list[Violation]:
    """The violations of every registered check of the instance's kind but those labelled in ``skip``:
    what a public evaluator runs on its input before computing anything (``docs/conventions.md``).

    >>> import optsched
    >>> from optsched.core import Cluster, Instance, Job, Schedule
    >>> optsched.load_plugins()
    >>> inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=5, gpus=2), Job(1, work=5, gpus=2)])
    >>> s = Schedule(); s.add(0, 0.0, 5.0, {0: 2}); s.add(1, 0.0, 5.0, {0: 2})
    >>> sorted({v.label for v in verify_checks(inst, s)})
    ['capacity']
    """
    kind = str(getattr(instance, "kind", None))
    checks = checks_for(kind)
    if not checks:
        raise InvalidOptionError(
            f"No checks are registered for instance kind {kind!r}; import its package (optsched.load_plugins())."
        )
    out: list[Violation] = []
    with shared_columns():  # the columns several checks read, computed once
        for label, check in checks:
            if label in skip:
                continue
            try:
                out.extend(check(instance, schedule))
            except Exception as e:  # a malformed schedule must not crash the verifier
                out.append(Violation(label, f"check could not run on this schedule: {e!r}"))
    return out
