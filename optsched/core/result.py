"""Result types shared by exact models, heuristics and policies."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """Outcome of a run.

    ``OPTIMAL``: proven optimal (gap within the requested tolerance, recomputed from objective
    and bound). ``FEASIBLE``: a solution, not proven optimal (a time or gap limit was hit).
    ``NO_SOLUTION``: a limit was hit before any solution was found. ``HEURISTIC``: an algorithm
    with no optimality claim. ``INTERRUPTED``: stopped by the user (Ctrl-C, SIGINT) before its
    limit; ``objective``, ``schedule`` and ``bound`` are the best found so far (the schedule may be
    missing: check ``Result.schedule``), never called optimal (the CLI exits with code 130).

    Examples
    --------
    >>> from optsched.core import Status
    >>> Status("optimal") is Status.OPTIMAL, Status.FEASIBLE.value
    (True, 'feasible')
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NO_SOLUTION = "no_solution"
    ERROR = "error"
    HEURISTIC = "heuristic"
    INTERRUPTED = "interrupted"

    @property
    def has_solution(self) -> bool:
        """OPTIMAL, FEASIBLE or HEURISTIC: a solution is there by the status alone (an INTERRUPTED
        run may or may not have one: look at its schedule or objective)."""
        return self in (Status.OPTIMAL, Status.FEASIBLE, Status.HEURISTIC)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|objective - bound| / max(|objective|, 1e-10), or None when either is missing.

    Examples
    --------
    >>> from optsched.core import relative_gap
    >>> relative_gap(20.0, 19.0), relative_gap(20.0, None)
    (0.05, None)
    """
    if objective is None or bound is None or not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    return abs(objective - bound) / max(abs(objective), 1e-10)


@dataclass
class Result:
    """What an algorithm returns: enough to check it.

    Attributes
    ----------
    algorithm, instance : str
    objective : float or None
        Recomputed from ``schedule`` by the algorithm (the verifier recomputes it again).
    objective_name : str
    schedule : object
        A :class:`~optsched.core.Schedule` for cluster instances, or the kind's own schedule
        object (e.g. an order).
    status : Status
    bound, gap : float or None
        Best proven lower bound (minimization) and relative gap, for exact models.
    runtime : float
        Wall-clock seconds.
    solver : str or None
        Solver name and version for exact models.
    info : dict
        Anything else (model size, node count, options).

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import list_schedule
    >>> inst = optsched.load_instance("toy:rigid-2x2-five")
    >>> res = list_schedule(inst, rule="wspt")
    >>> res.algorithm, res.status.value, res.objective
    ('rigid-wspt', 'heuristic', 20.0)
    """

    algorithm: str
    instance: str
    objective: float | None
    objective_name: str
    schedule: Any = None
    status: Status = Status.HEURISTIC
    bound: float | None = None
    gap: float | None = None
    runtime: float = 0.0
    solver: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def optimal(self) -> bool:
        return self.status == Status.OPTIMAL

    def to_row(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "algorithm": self.algorithm,
            "objective_name": self.objective_name,
            "objective": self.objective,
            "status": str(self.status),
            "bound": self.bound,
            "gap": self.gap,
            "runtime": self.runtime,
            "solver": self.solver,
        }

    def __repr__(self) -> str:
        b = (
            ""
            if self.bound is None
            else f", bound={self.bound:.6g}, gap={self.gap if self.gap is not None else float('nan'):.3g}"
        )
        obj = "None" if self.objective is None else f"{self.objective:.6g}"
        return (
            f"Result({self.algorithm!r} on {self.instance!r}: {self.objective_name}={obj}, "
            f"status={self.status.value}{b}, runtime={self.runtime:.3f}s)"
        )
