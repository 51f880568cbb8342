"""Solver options and the common result of every exact solve.

Tested in ``tests/solvers/test_params.py`` and ``tests/solvers/test_solvers.py``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any

from optsched.core.result import Status, relative_gap
from optsched.core.validation import check_int, check_number
from optsched.exceptions import InvalidOptionError

#: Largest solver seed: CP-SAT's ``random_seed`` and HiGHS's ``random_seed`` are 32-bit integers
#: (CP-SAT raises a TypeError beyond it, HiGHS refuses it).
MAX_SEED = 2**31 - 1


def max_threads() -> int:
    """The most solver threads an exact solve may use: the CPUs this process may run on
    (``os.sched_getaffinity``, else ``os.cpu_count()``). More only slow the solvers down (HiGHS
    took 18 s on a one-variable MIP with 1,000 threads and aborts the process with 100,000;
    CP-SAT refuses more than 10,000 workers).

    >>> max_threads() >= 1
    True
    """
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        n = os.cpu_count() or 1
    return max(1, n)


@dataclass(frozen=True)
class SolveOptions:
    """Options understood by every back end.

    Parameters
    ----------
    time_limit : float or None
        Seconds; ``None`` = no limit. Default 60. For an exact solve
        (:func:`optsched.solvers.exact.run_exact`, every paper's ``solve_exact``) it bounds the
        **whole call**: warm start, bounds, model building, the relaxations, the solves and the
        certification share it (each phase gets what is left; see ``deadline``).
    mip_rel_gap : float
        Relative gap at which the solver may stop and call it optimal. Default 0 (prove it).
    mip_abs_gap : float or None
        Absolute gap; for integer objectives ``0.999`` proves optimality without rounding doubt.
        Default ``None`` = the solver's default (HiGHS 1e-6, CP-SAT 1e-4).
    threads : int or None
        Worker threads, at most :func:`max_threads` (the CPUs this process may use); ``None`` =
        the back end's default (HiGHS 1 for the MIP search in practice; CP-SAT 2 here, matching
        this project's 2-core machines).
    seed : int
        Random seed passed to the solver, in [0, 2^31 - 1] (:data:`MAX_SEED`; results are
        reproducible for a fixed seed and thread count).
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
    deadline : float or None
        ``time.monotonic()`` by which the whole call must end. ``None`` (the default): an exact
        solve sets it to its start + ``time_limit`` (:meth:`started`); the CLI sets it before
        loading the instance, so loading counts too. Every solver call gets at most
        :meth:`limit` seconds: the smaller of ``time_limit`` (a phase's share) and the time
        left until the deadline.

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
    deadline: float | None = None

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
            hint = " (the CPUs this process may use: more only slow the solvers, and HiGHS aborts with too many)"
            object.__setattr__(
                self,
                "threads",
                check_int(self.threads, "threads", "the solve options", lo=1, hi=max_threads(), hint=hint, exc=e),
            )
        object.__setattr__(
            self,
            "seed",
            check_int(
                self.seed, "seed", "the solve options", lo=0, hi=MAX_SEED, hint=" (the solvers' 32-bit seeds)", exc=e
            ),
        )
        object.__setattr__(
            self,
            "optimality_tolerance",
            check_number(self.optimality_tolerance, "optimality_tolerance", "the solve options", lo=0.0, hi=1.0, exc=e),
        )
        if self.deadline is not None:
            object.__setattr__(
                self,
                "deadline",
                check_number(self.deadline, "deadline", "the solve options", hint=" (a time.monotonic() value)", exc=e),
            )
        if not isinstance(self.solver_options, dict):
            raise e(f"The 'solver_options' field of the solve options must be a dict; got {self.solver_options!r}.")

    def replace(self, **kw: Any) -> SolveOptions:
        return replace(self, **kw)

    def started(self, at: float | None = None) -> SolveOptions:
        """These options with ``deadline`` = ``at`` (default now, ``time.monotonic()``) +
        ``time_limit``; unchanged when a deadline is set already or there is no time limit."""
        if self.deadline is not None or self.time_limit is None:
            return self
        return self.replace(deadline=(time.monotonic() if at is None else float(at)) + float(self.time_limit))

    def time_left(self) -> float | None:
        """Seconds until ``deadline`` (negative once past it); ``None`` without a deadline."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def limit(self) -> float | None:
        """The time limit of one solver call: the smaller of ``time_limit`` and :meth:`time_left`
        (never below 0); ``None`` when neither is set."""
        left = self.time_left()
        if left is None:
            return self.time_limit
        left = max(0.0, left)
        return left if self.time_limit is None else min(float(self.time_limit), left)

    def expired(self, margin: float = 0.0) -> bool:
        """True when less than ``margin`` seconds are left until ``deadline``."""
        left = self.time_left()
        return left is not None and left <= margin


@dataclass
class SolveResult:
    """The outcome of one exact solve, the same for every back end.

    ``objective`` is the incumbent's value (None without a solution); ``bound`` the best proven
    bound; ``gap`` is recomputed here from both (never taken from the solver's log); ``status``
    INTERRUPTED: stopped by Ctrl-C, with the incumbent (if any) and the bound so far.
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
        """OPTIMAL or FEASIBLE, or INTERRUPTED with an incumbent (``objective`` set)."""
        if self.status == Status.INTERRUPTED:
            return self.objective is not None
        return self.status in (Status.OPTIMAL, Status.FEASIBLE)

    def __repr__(self) -> str:
        f = lambda x: "None" if x is None else f"{x:.6g}"  # noqa: E731
        return (
            f"SolveResult(status={self.status.value}, objective={f(self.objective)}, bound={f(self.bound)}, "
            f"gap={f(self.gap)}, runtime={self.runtime:.3f}s, solver={self.solver} {self.solver_version})"
        )
