"""Verification report: every violated constraint by its equation label.

Tested in ``tests/verify/test_feasibility.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from optsched.exceptions import VerificationError


@dataclass(frozen=True)
class Violation:
    """One violated constraint: ``label`` is the equation label in ``formulations/<key>.md``.

    Examples
    --------
    >>> from optsched.verify import Violation
    >>> Violation("release", "job 3 starts at 1 before its release 2", job=3, time=1.0).label
    'release'
    """

    label: str
    message: str
    job: Any = None
    time: float | None = None

    def __str__(self) -> str:
        return f"[{self.label}] {self.message}"


@dataclass
class Report:
    """Outcome of :func:`optsched.verify.verify`.

    Attributes
    ----------
    violations : list of Violation
    checks : list of str
        Labels of the checks that were run.
    objectives : dict
        Objective values recomputed from the schedule alone.

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import list_schedule
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> report = optsched.verify(inst, list_schedule(inst).schedule)
    >>> report.ok, report.violations, "capacity" in report.checks
    (True, [], True)
    """

    instance: str
    violations: list[Violation] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    objectives: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def __bool__(self) -> bool:
        return self.ok

    def by_label(self) -> dict[str, list[Violation]]:
        out: dict[str, list[Violation]] = {}
        for v in self.violations:
            out.setdefault(v.label, []).append(v)
        return out

    def raise_if_failed(self) -> Report:
        if not self.ok:
            raise VerificationError(self.summary())
        return self

    def summary(self, max_lines: int = 10) -> str:
        if self.ok:
            return f"{self.instance}: feasible ({len(self.checks)} checks: {', '.join(self.checks)})"
        lines = [f"{self.instance}: {len(self.violations)} violation(s)"]
        lines += [f"  {v}" for v in self.violations[:max_lines]]
        if len(self.violations) > max_lines:
            lines.append(f"  ... and {len(self.violations) - max_lines} more")
        return "\n".join(lines)

    def to_dataframe(self):
        import pandas as pd

        df = pd.DataFrame(
            [{"label": v.label, "job": v.job, "time": v.time, "message": v.message} for v in self.violations],
            columns=["label", "job", "time", "message"],
        )
        return df.astype({"job": object})

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "ok": self.ok,
            "checks": self.checks,
            "objectives": self.objectives,
            "violations": [
                {"label": v.label, "job": v.job, "time": v.time, "message": v.message} for v in self.violations
            ],
        }
