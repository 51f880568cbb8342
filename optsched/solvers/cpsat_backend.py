"""Solve OR-Tools CP-SAT models and report them as a :class:`SolveResult`."""

from __future__ import annotations

import time
import warnings
from typing import Any

from optsched.core.result import Status
from optsched.exceptions import SolverError, SolverLimitWarning, SolverUnavailableError
from optsched.solvers.options import SolveOptions, SolveResult

__all__ = ["solve_cpsat", "new_cp_model", "DEFAULT_CPSAT_WORKERS"]

DEFAULT_CPSAT_WORKERS = 2


def _cp_model():
    try:
        from ortools.sat.python import cp_model
    except Exception as e:  # pragma: no cover
        raise SolverUnavailableError(
            f"OR-Tools CP-SAT cannot be imported ({e}). Install: pip install ortools==9.15.6755."
        ) from None
    return cp_model


def new_cp_model():
    """A fresh ``ortools.sat.python.cp_model.CpModel``.

    Examples
    --------
    >>> from optsched.solvers import SolveOptions, new_cp_model, solve_cpsat
    >>> m = new_cp_model()
    >>> x, y = m.new_int_var(0, 10, "x"), m.new_int_var(0, 10, "y")
    >>> m.add(x + 2 * y <= 14)
    <...>
    >>> m.maximize(3 * x + 4 * y)
    >>> r = solve_cpsat(m, SolveOptions(time_limit=10))
    >>> r.status.value, r.objective, r.raw.value(x), r.raw.value(y)
    ('optimal', 38.0, 10, 2)
    """
    return _cp_model().CpModel()


def solve_cpsat(model: Any, options: SolveOptions | None = None, *, callback: Any = None) -> SolveResult:
    """Solve a CP-SAT model.

    ``raw`` of the result is the ``CpSolver``: read values with ``result.raw.value(var)``.
    A run stopped by its time limit is FEASIBLE (or NO_SOLUTION), with a
    :class:`SolverLimitWarning`; CP-SAT's OPTIMAL honours ``mip_rel_gap``/``mip_abs_gap`` and the
    gap is recomputed from objective and bound.

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import build_interval_cpsat
    >>> from optsched.solvers import SolveOptions, solve_cpsat
    >>> model, variables = build_interval_cpsat(optsched.load_instance("toy:rigid-2x2-five"))
    >>> r = solve_cpsat(model, SolveOptions(time_limit=10, threads=1))
    >>> r.status.value, r.objective
    ('optimal', 19.0)
    """
    cp_model = _cp_model()
    options = options or SolveOptions()
    solver = cp_model.CpSolver()
    p = solver.parameters
    if options.time_limit is not None:
        p.max_time_in_seconds = float(options.time_limit)
    p.num_workers = int(options.threads or DEFAULT_CPSAT_WORKERS)
    p.random_seed = int(options.seed)
    p.relative_gap_limit = float(options.mip_rel_gap)
    if options.mip_abs_gap is not None:
        p.absolute_gap_limit = float(options.mip_abs_gap)
    p.log_search_progress = bool(options.verbose)
    for k, v in options.solver_options.items():
        try:
            setattr(p, k, v)
        except (AttributeError, TypeError, ValueError) as e:
            raise SolverError(f"CP-SAT has no parameter {k!r} accepting {v!r} ({e}).") from None
    if callback is None:  # a portfolio member publishing its incumbents (optsched.solvers.sharing)
        from optsched.solvers import sharing

        callback = sharing.cpsat_callback(model)
    t0 = time.perf_counter()
    code = solver.solve(model, callback) if callback is not None else solver.solve(model)
    runtime = time.perf_counter() - t0
    has_obj = bool(model.has_objective())
    mapping = {
        cp_model.OPTIMAL: Status.OPTIMAL,
        cp_model.FEASIBLE: Status.FEASIBLE,
        cp_model.INFEASIBLE: Status.INFEASIBLE,
        cp_model.MODEL_INVALID: Status.ERROR,
        cp_model.UNKNOWN: Status.NO_SOLUTION,
    }
    status = mapping.get(code, Status.ERROR)
    obj = bound = None
    if status in (Status.OPTIMAL, Status.FEASIBLE) and has_obj:
        obj = float(solver.objective_value)
        bound = float(solver.best_objective_bound)
    elif status == Status.OPTIMAL:  # pure feasibility model
        obj = bound = 0.0
    msg = solver.status_name(code)
    if status == Status.ERROR:
        raise SolverError(f"CP-SAT rejected the model ({msg}): {model.validate()}")
    if status in (Status.FEASIBLE, Status.NO_SOLUTION):
        warnings.warn(
            f"CP-SAT stopped after {runtime:.1f} s ({msg}): objective {obj}, bound {bound}; not proven optimal.",
            SolverLimitWarning,
            stacklevel=2,
        )
    from importlib.metadata import version

    return SolveResult(
        status=status,
        objective=obj,
        bound=bound,
        runtime=runtime,
        solver="cpsat",
        solver_version=version("ortools"),
        message=msg,
        raw=solver,
    )
