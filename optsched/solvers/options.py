"""Solver options and the common result of every exact solve."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from optsched.core.result import Status, relative_gap
from optsched.core.validation import check_int, check_number
from optsched.exceptions import InvalidOptionError

__all__ = ["SolveOptions", "SolveResult"]


@dataclass(frozen=True)
class SolveOptions:
    """Options understood by every back end.

    Parameters
    ----------
    time_limit : float or None
        Seconds; ``None`` = no limit. Default 60.
    mip_rel_gap : float
        Relative gap at which the solver may stop and call it optimal. Default 0 (prove it).
    mip_abs_gap : float or None
        Absolute gap; for integer objectives ``0.999`` proves optimality without rounding doubt.
        Default ``None`` = the solver's default (HiGHS 1e-6, CP-SAT 1e-4).
    threads : int or None
        Worker threads; ``None`` = the back end's default (HiGHS 1 for the MIP search in
        practice; CP-SAT 2 here, matching this project's 2-core machines).
    seed : int
        Random seed passed to the solver (results are reproducible for a fixed seed and thread count).
    verbose : bool
        Print the solver log.
    duals : bool
        For LP models: read the constraint duals into :attr:`SolveResult.duals`.
    solver_options : dict
        Raw options passed through to the solver (HiGHS option names or CP-SAT parameter names).
    optimality_tolerance : float
        An exact solve (:func:`optsched.solvers.exact.run_exact`) is called optimal only when
        |objective - bound| <= this * |objective|, both recomputed (default 1e-9; a model with
        rounded coefficients cannot certify below twice its rounding).

    Examples
    --------
    >>> from optsched.solvers import SolveOptions
    >>> SolveOptions(time_limit=10, threads=1).time_limit
    10.0
    """

    time_limit: float | None = 60.0
    mip_rel_gap: float = 0.0
    mip_abs_gap: float | None = None
    threads: int | None = None
    seed: int = 0
    verbose: bool = False
    duals: bool = False
    solver_options: dict[str, Any] = field(default_factory=dict)
    optimality_tolerance: float = 1e-9

    def __post_init__(self) -> None:
        e = InvalidOptionError
        if self.time_limit is not None:
            object.__setattr__(
                self,
                "time_limit",
                check_number(
                    self.time_limit,
                    "time_limit",
                    "the solve options",
                    lo=0.0,
                    lo_open=True,
                    hint=" (seconds), or None for no limit",
                    exc=e,
                ),
            )
        object.__setattr__(
            self,
            "mip_rel_gap",
            check_number(self.mip_rel_gap, "mip_rel_gap", "the solve options", lo=0.0, hi=1.0, exc=e),
        )
        if self.mip_abs_gap is not None:
            object.__setattr__(
                self, "mip_abs_gap", check_number(self.mip_abs_gap, "mip_abs_gap", "the solve options", lo=0.0, exc=e)
            )
        if self.threads is not None:
            object.__setattr__(self, "threads", check_int(self.threads, "threads", "the solve options", lo=1, exc=e))
        object.__setattr__(self, "seed", check_int(self.seed, "seed", "the solve options", lo=0, exc=e))
        object.__setattr__(
            self,
            "optimality_tolerance",
            check_number(self.optimality_tolerance, "optimality_tolerance", "the solve options", lo=0.0, hi=1.0, exc=e),
        )
        if not isinstance(self.solver_options, dict):
            raise e(f"The 'solver_options' field of the solve options must be a dict; got {self.solver_options!r}.")

    def replace(self, **kw: Any) -> SolveOptions:
        from dataclasses import replace

        return replace(self, **kw)


@dataclass
class SolveResult:
    """The outcome of one exact solve, the same for every back end.

    ``objective`` is the incumbent's value (None without a solution); ``bound`` the best proven
    bound; ``gap`` is recomputed here from both (never taken from the solver's log).
    ``raw`` is the back end's own object: the Pyomo model with the solution loaded, or the
    ``CpSolver`` (read values with ``result.raw.value(var)``).

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import build_time_indexed
    >>> from optsched.solvers import solve_pyomo
    >>> r = solve_pyomo(build_time_indexed(optsched.load_instance("toy:rigid-2x2-five")))
    >>> r.status.value, r.objective, r.gap
    ('optimal', 19.0, 0.0)
    """

    status: Status
    objective: float | None
    bound: float | None
    runtime: float
    solver: str
    solver_version: str
    message: str = ""
    duals: dict[str, float] | None = None
    raw: Any = None
    gap: float | None = None

    def __post_init__(self) -> None:
        if self.gap is None:
            self.gap = relative_gap(self.objective, self.bound)

    @property
    def has_solution(self) -> bool:
        return self.status in (Status.OPTIMAL, Status.FEASIBLE)

    def __repr__(self) -> str:
        f = lambda x: "None" if x is None else f"{x:.6g}"  # noqa: E731
        return (
            f"SolveResult(status={self.status.value}, objective={f(self.objective)}, bound={f(self.bound)}, "
            f"gap={f(self.gap)}, runtime={self.runtime:.3f}s, solver={self.solver} {self.solver_version})"
        )
