"""Solve OR-Tools CP-SAT models and report them as a :class:`SolveResult`.

Tested in ``tests/solvers/test_solvers.py`` and ``tests/solvers/test_sharing.py``.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from contextlib import suppress
from importlib.metadata import version
from typing import Any

from optsched.core.result import Status
from optsched.exceptions import SolverError, SolverLimitWarning, SolverUnavailableError
from optsched.solvers import interrupt, progress, sharing
from optsched.solvers.options import SolveOptions, SolveResult

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
    gap is recomputed from objective and bound. The limit is :meth:`SolveOptions.limit` (the
    phase's ``time_limit``, never beyond ``deadline``); a call with no time left returns
    NO_SOLUTION without solving.

    Ctrl-C (:mod:`optsched.solvers.interrupt`): CP-SAT's own SIGINT handling is off
    (``catch_sigint_signal=False``: it leaves SIGINT at the system default after the solve); in
    the main thread the solve runs in a worker thread, SIGINT calls ``stop_search`` and the
    result is INTERRUPTED with the incumbent and bound found so far.

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
    limit = options.limit()
    if interrupt.requested() or (limit is not None and limit <= 0):
        return _not_run(model, "interrupted before the solve" if interrupt.requested() else "no time left")
    solver = cp_model.CpSolver()
    p = solver.parameters
    if limit is not None:
        p.max_time_in_seconds = float(limit)
    p.num_workers = int(options.threads or DEFAULT_CPSAT_WORKERS)
    p.random_seed = int(options.seed)
    p.relative_gap_limit = float(options.mip_rel_gap)
    if options.mip_abs_gap is not None:
        p.absolute_gap_limit = float(options.mip_abs_gap)
    p.log_search_progress = bool(options.verbose)
    p.catch_sigint_signal = False
    for k, v in options.solver_options.items():
        try:
            setattr(p, k, v)
        except (AttributeError, TypeError, ValueError) as e:
            raise SolverError(f"CP-SAT has no parameter {k!r} accepting {v!r} ({e}).") from None
    has_obj = bool(model.has_objective())
    if callback is None:  # a portfolio member publishing its incumbents (optsched.solvers.sharing)
        callback = sharing.cpsat_callback(model)
    callback = _with_progress(cp_model, callback, has_obj)
    t0 = time.perf_counter()
    with interrupt.guard():
        code = _run(solver, model, callback, limit)
    runtime = time.perf_counter() - t0
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
    elif status == Status.OPTIMAL or (status == Status.FEASIBLE and not has_obj):  # pure feasibility model
        obj = bound = 0.0
    elif status == Status.NO_SOLUTION and has_obj and math.isfinite(solver.best_objective_bound):
        bound = float(solver.best_objective_bound)
    msg = solver.status_name(code)
    if status == Status.ERROR:  # the reason: the model's own check, else the parameters' (solution_info)
        why = model.validate() or solver.solution_info() or "no reason given"
        raise SolverError(f"CP-SAT rejected the model ({msg}): {why}")
    if status in (Status.FEASIBLE, Status.NO_SOLUTION) and interrupt.requested():
        status, msg = Status.INTERRUPTED, f"interrupted ({msg})"
    if status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.INTERRUPTED):
        warnings.warn(
            f"CP-SAT stopped after {runtime:.1f} s ({msg}): objective {obj}, bound {bound}; not proven optimal.",
            SolverLimitWarning,
            stacklevel=2,
        )
    progress.report(incumbent=obj if has_obj else None, bound=bound if has_obj else None)
    return SolveResult(
        status=status,
        objective=obj,
        bound=bound,
        runtime=runtime,
        solver="cpsat",
        solver_version=_version(),
        message=msg,
        raw=solver,
    )


def _version() -> str:
    return version("ortools")


def _not_run(model: Any, why: str) -> SolveResult:
    """The result of a solve that did not start (interrupted, or no time left)."""

    status = Status.INTERRUPTED if interrupt.requested() else Status.NO_SOLUTION
    return SolveResult(status, None, None, 0.0, "cpsat", _version(), message=why, raw=None)


# Seconds past its own limit after which a solve is stopped from outside: CP-SAT's
# max_time_in_seconds is checked between its steps, and on large models one step (presolve, an LP
# at a node) has been seen to run a minute past it.
LIMIT_GRACE = 1.0


def _run(solver: Any, model: Any, callback: Any, limit: float | None = None) -> Any:
    """``solver.solve``; in the main thread in a worker thread (CP-SAT releases the GIL), so the
    main thread takes SIGINT and stops the search (:mod:`optsched.solvers.interrupt`). A solve
    still running ``LIMIT_GRACE`` s after its ``limit`` is stopped (``stop_search``), so the limit
    bounds the call."""

    def call() -> Any:
        return solver.solve(model, callback) if callback is not None else solver.solve(model)

    deadline = None if limit is None else time.perf_counter() + float(limit) + LIMIT_GRACE
    if threading.current_thread() is not threading.main_thread():
        if deadline is None:
            return call()
        timer = threading.Timer(deadline - time.perf_counter(), solver.stop_search)
        timer.daemon = True
        timer.start()
        try:
            return call()
        finally:
            timer.cancel()
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["code"] = call()
        except BaseException as e:  # re-raised in the caller's thread
            out["error"] = e

    worker = threading.Thread(target=work, name="optsched-cpsat", daemon=True)
    with interrupt.stoppable(solver.stop_search):
        worker.start()
        while worker.is_alive():
            worker.join(0.5)  # a timed join: the signal handler runs between the waits
            if interrupt.requested():  # again: a stop that came before the search began is lost
                solver.stop_search()
            elif deadline is not None and time.perf_counter() > deadline:
                solver.stop_search()  # past its own limit: the limit bounds the call
    if "error" in out:
        raise out["error"]
    return out["code"]


def _with_progress(cp_model: Any, callback: Any, has_obj: bool) -> Any:
    """``callback`` when given (a portfolio member's publisher, which shows nothing), else a
    solution callback reporting each solution to :mod:`optsched.solvers.progress` when a
    display is open (else none: no callback cost)."""

    if callback is not None or not has_obj or not progress.active():
        return callback

    class _Progress(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            with suppress(Exception):  # the display never stops a solve
                progress.report(incumbent=float(self.objective_value), bound=float(self.best_objective_bound))

    return _Progress()
