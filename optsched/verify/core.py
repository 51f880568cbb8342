"""``verify(instance, schedule)``: run every registered check of the instance's kind."""

from __future__ import annotations

import math
from typing import Any

from optsched.core.result import Result
from optsched.exceptions import InvalidOptionError
from optsched.verify.registry import checks_for, evaluator_for
from optsched.verify.report import Report, Violation

__all__ = ["verify", "verify_result"]


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
            report.violations.append(Violation(label, f"check could not run on this schedule: {_why(instance, e)}"))
    if objective is not None:
        ev = evaluator_for(kind)
        if ev is None:
            raise InvalidOptionError(f"No objective evaluator is registered for kind {kind!r}.")
        report.checks.append("objective")
        try:
            value = float(ev(instance, schedule, objective))
            report.objectives[objective] = value
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


def _why(instance: Any, e: Exception) -> str:
    """An exception raised on a malformed schedule, in words (not ``KeyError(4)``)."""
    if isinstance(e, KeyError) and e.args:
        key = e.args[0]
        ids = {getattr(j, "id", None) for j in getattr(instance, "jobs", ())}
        if key in ids:
            return f"the schedule has no entry for job {key!r} of the instance (see the other violations)."
        return f"the schedule refers to {key!r}, which the instance does not have."
    from optsched.exceptions import OptschedError

    return str(e) if isinstance(e, OptschedError) else f"{type(e).__name__}: {e}"


def verify_result(instance: Any, result: Result, **kw: Any) -> Report:
    """Verify ``result.schedule`` and that ``result.objective`` matches the recomputed value."""
    return verify(instance, result.schedule, objective=result.objective_name, claimed=result.objective, **kw)
