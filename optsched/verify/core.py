"""``verify(instance, schedule)``: run every registered check of the instance's kind."""

from __future__ import annotations

import math
from typing import Any

from optsched.core.result import Result
from optsched.exceptions import InvalidOptionError
from optsched.verify.registry import checks_for, evaluator_for
from optsched.verify.report import Report, Violation

__all__ = ["verify", "verify_result", "verify_checks"]


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
    """
    kind = str(getattr(instance, "kind", None))
    checks = checks_for(kind)
    if not checks:
        raise InvalidOptionError(
            f"No checks are registered for instance kind {kind!r}; import its package (optsched.load_plugins())."
        )
    report = Report(instance=getattr(instance, "name", "instance"))
    for label, check in checks:
        report.checks.append(label)
        try:
            report.violations.extend(check(instance, schedule))
        except Exception as e:  # a malformed schedule must not crash the verifier
            report.violations.append(Violation(label, f"check could not run on this schedule: {e!r}"))
    if objective is not None:
        ev = evaluator_for(kind)
        if ev is None:
            raise InvalidOptionError(f"No objective evaluator is registered for kind {kind!r}.")
        report.checks.append("objective")
        try:
            value = float(ev(instance, schedule, objective))
            report.objectives[objective] = value
        except Exception as e:
            report.violations.append(Violation("objective", f"objective {objective!r} cannot be computed: {e!r}"))
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


def verify_result(instance: Any, result: Result, **kw: Any) -> Report:
    """Verify ``result.schedule`` and that ``result.objective`` matches the recomputed value."""
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
    for label, check in checks:
        if label in skip:
            continue
        try:
            out.extend(check(instance, schedule))
        except Exception as e:  # a malformed schedule must not crash the verifier
            out.append(Violation(label, f"check could not run on this schedule: {e!r}"))
    return out
