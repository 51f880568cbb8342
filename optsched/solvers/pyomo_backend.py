"""Solve Pyomo models with HiGHS (default, via highspy) or any Pyomo solver name.

Tested in ``tests/solvers/test_solvers.py`` and ``tests/solvers/test_sharing.py``.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from contextlib import suppress
from pathlib import Path
from typing import Any

from optsched.core.result import Status
from optsched.exceptions import (
    InvalidOptionError,
    SolverError,
    SolverLimitWarning,
    SolverUnavailableError,
)
from optsched.solvers import interrupt, progress, sharing
from optsched.solvers.options import SolveOptions, SolveResult

INSTALL_HINTS = {
    "highs": "pip install highspy==1.14.0 (the version optsched pins; see pyproject.toml)",
    "gurobi": "pip install gurobipy (needs a Gurobi licence)",
    "gurobi_direct": "pip install gurobipy (needs a Gurobi licence)",
    "cplex": "pip install cplex (needs a CPLEX licence)",
    "cplex_direct": "pip install cplex (needs a CPLEX licence)",
    "glpk": "apt-get install glpk-utils",
    "cbc": "apt-get install coinor-cbc",
}

#: Seconds HiGHS gets to stop from its callbacks after a signal; then the solve returns without it
#: (in presolve and the root LP HiGHS calls no callback for 10 s and more on large models).
HIGHS_STOP_GRACE = 1.0

# names that Pyomo's newer solver interface (pyomo.contrib.solver) knows
_CONTRIB = {"highs", "gurobi_direct", "gurobi_persistent", "gurobi", "ipopt"}


def _import_pyomo():
    import pyomo.environ as pyo

    return pyo


def _is_mip(model: Any) -> bool:
    pyo = _import_pyomo()
    return any(not v.is_continuous() for v in model.component_data_objects(pyo.Var, active=True, descend_into=True))


def _sense_min(model: Any) -> bool:
    pyo = _import_pyomo()
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise InvalidOptionError(f"The model must have exactly one active objective; it has {len(objs)}.")
    return objs[0].sense == pyo.minimize


def solve_pyomo(
    model: Any, solver: str = "highs", options: SolveOptions | None = None, *, warm_start: bool = False
) -> SolveResult:
    """Solve a Pyomo model and load the incumbent (if any) into it.

    Parameters
    ----------
    model : pyomo ConcreteModel
    solver : str
        ``"highs"`` (default, embedded via highspy) or any Pyomo solver name (``"gurobi"``,
        ``"cplex"``, ``"glpk"``, ``"cbc"``, ...).
    options : SolveOptions
    warm_start : bool
        Use the values currently set on the model's variables (those not ``None``) as a MIP
        start: HiGHS through ``highspy.Highs.setSolution`` (sparse; HiGHS completes and checks
        it), other solvers through Pyomo's ``warmstart=True`` where they support it.

    Returns
    -------
    SolveResult
        ``status`` is OPTIMAL only if the solver reports optimality *and* the gap recomputed
        from objective and bound is within the requested tolerance; a time-limited run is
        FEASIBLE (with a :class:`SolverLimitWarning`) or NO_SOLUTION.

    Raises
    ------
    SolverUnavailableError
        The solver is not installed; the message says how to install it.

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import build_time_indexed
    >>> from optsched.solvers import solve_pyomo
    >>> m = build_time_indexed(optsched.load_instance("toy:rigid-2x2-five"))
    >>> res = solve_pyomo(m, "highs")
    >>> res.status.value, sum(round(m.x[j, t].value) for j, t in m.x)
    ('optimal', 5)
    """
    options = options or SolveOptions()
    if not isinstance(solver, str) or not solver:
        raise InvalidOptionError(f"The 'solver' option must be a solver name such as 'highs'; got {solver!r}.")
    _import_pyomo()
    if solver in _CONTRIB:
        return _solve_contrib(model, solver, options, warm_start)
    return _solve_legacy(model, solver, options, warm_start)


def _status_from(tc_name: str, has_sol: bool) -> Status:
    if tc_name == "convergenceCriteriaSatisfied":
        return Status.OPTIMAL if has_sol else Status.ERROR
    if tc_name in ("provenInfeasible", "locallyInfeasible", "infeasibleOrUnbounded"):
        return Status.INFEASIBLE
    if tc_name == "unbounded":
        return Status.UNBOUNDED
    if tc_name in ("maxTimeLimit", "iterationLimit", "objectiveLimit", "interrupted", "minStepLength"):
        return Status.FEASIBLE if has_sol else Status.NO_SOLUTION
    return Status.FEASIBLE if has_sol else Status.ERROR


def _finish(
    status: Status, obj: float | None, bound: float | None, options: SolveOptions, minimize: bool, is_mip: bool
) -> tuple[Status, float | None, float | None]:
    if obj is not None and not math.isfinite(obj):
        obj = None
    if bound is not None and not math.isfinite(bound):
        bound = None
    if not is_mip and status == Status.OPTIMAL and bound is None:
        bound = obj  # an LP solved to optimality: the objective is its own bound
    if status == Status.OPTIMAL and obj is not None:
        if bound is None:
            status = Status.FEASIBLE
        else:
            diff = (obj - bound) if minimize else (bound - obj)
            tol_rel = options.mip_rel_gap * max(abs(obj), 1e-10)
            tol_abs = options.mip_abs_gap if options.mip_abs_gap is not None else 1e-6
            if diff > max(tol_rel, tol_abs) + 1e-9 * max(1.0, abs(obj)):
                status = Status.FEASIBLE
    return status, obj, bound


def _set_highs_start(opt: Any, model: Any) -> int:
    """Pass the model's variable values to HiGHS as a (sparse) MIP start; return how many."""
    import numpy as np

    pyo = _import_pyomo()
    if getattr(opt, "_model", None) is not model:  # already set by _share_into_highs
        opt.set_instance(model)
    cols = opt._pyomo_var_to_solver_var_map  # noqa: SLF001 - Pyomo has no public column map
    idx, val = [], []
    for v in model.component_data_objects(pyo.Var, active=True, descend_into=True):
        if v.value is not None and id(v) in cols:
            idx.append(cols[id(v)])
            val.append(float(v.value))
    if idx:
        opt._solver_model.setSolution(  # noqa: SLF001 - highspy's model, no public handle
            len(idx),
            np.asarray(idx, dtype=np.int32),
            np.asarray(val, dtype=np.float64),
        )
    return len(idx)


def _share_into_highs(opt: Any, model: Any, minimize: bool, options: SolveOptions) -> tuple[Any, float]:
    """In a portfolio member that takes incumbents (:mod:`optsched.solvers.sharing`): subscribe
    HiGHS's user-solution callback and return ``(done, shift)``; ``(None, 0.0)`` elsewhere.

    ``shift`` works around HiGHS 1.14 dropping improving user solutions once its presolved model
    has an objective offset (:func:`optsched.solvers.sharing.objective_shift`): the objective is
    lowered by ``shift`` for the solve (a minimisation with ``mip_rel_gap`` 0 only: the absolute
    gap does not change, a relative one would); ``done()`` restores it and the caller adds
    ``shift`` back to the objective and the bound HiGHS reports."""

    if not sharing.takes(model):
        return None, 0.0
    pyo = _import_pyomo()
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    expr = objective.expr
    shift = 0.0
    if minimize and options.mip_rel_gap == 0 and "mip_rel_gap" not in options.solver_options:
        shift = sharing.objective_shift_of(model)
    if shift:
        objective.expr = expr - shift  # before set_instance: the objective is built once
    try:
        if getattr(opt, "_model", None) is not model:
            opt.set_instance(model)
        feed_done = sharing.highs_feed(opt, model, minimize, shift=shift)
    except Exception:
        objective.expr = expr
        raise

    def done() -> None:
        if feed_done is not None:
            feed_done()
        if shift:
            objective.expr = expr

    return done, shift


def _not_run(solver: str, why: str) -> SolveResult:
    """The result of a solve that did not run (interrupted, or no time left)."""
    status = Status.INTERRUPTED if interrupt.requested() else Status.NO_SOLUTION
    return SolveResult(status, None, None, 0.0, solver, "", message=why, raw=None)


class _Watch:
    """HiGHS's interrupt callbacks while it runs (:func:`_highs_watch`): ``fired`` is
    ``"interrupted"`` (Ctrl-C) or ``"maxTimeLimit"`` (the deadline) once they stopped it."""

    def __init__(self, opt: Any, options: SolveOptions) -> None:
        self.fired: str | None = None
        self.stop = False  # set on a signal: stays set after the guard ends (a run left to finish)
        self.highs = opt._solver_model  # noqa: SLF001 - highspy's model, no public handle
        self.deadline = options.deadline
        last: list[Any] = [None]

        def check(e: Any) -> None:
            if self.fired is None:
                if self.stop or interrupt.requested():
                    self.fired = "interrupted"
                elif self.deadline is not None and time.monotonic() >= self.deadline:
                    self.fired = "maxTimeLimit"
            if self.fired is not None:
                e.interrupt()

        def check_mip(e: Any) -> None:
            check(e)
            try:
                key = (e.data_out.mip_primal_bound, e.data_out.mip_dual_bound)
                if key != last[0]:
                    last[0] = key
                    progress.report(incumbent=key[0], bound=key[1])
            except Exception:  # the display never stops a solve
                pass

        self.subs = [
            (self.highs.cbSimplexInterrupt, check),
            (self.highs.cbIpmInterrupt, check),
            (self.highs.cbMipInterrupt, check_mip),
        ]
        for cb, fn in self.subs:
            cb.subscribe(fn)
        # Pyomo 6.10 does not map HiGHS's kInterrupt and warns about it: our own stop, not news
        self.logger = logging.getLogger("pyomo.contrib.solver.solvers.highs")
        self.logger.addFilter(self._quiet)

    def request_stop(self) -> None:
        """Stop HiGHS at its next callback, even after the guard that asked has ended."""
        self.stop = True

    def silence(self) -> None:
        """No more log lines from a HiGHS run left to stop on its own (they would reach the
        process's output once Pyomo's capture of it is given back)."""
        self.highs.setOptionValue("output_flag", False)

    def _quiet(self, record: Any) -> bool:
        return not (self.fired is not None and "kInterrupt" in record.getMessage())

    def done(self) -> None:
        for cb, fn in self.subs:
            with suppress(Exception):
                cb.unsubscribe(fn)
        self.logger.removeFilter(self._quiet)


def _contrib_solver(solver: str) -> Any:
    """Pyomo's (contrib) solver object for ``solver``, or a :class:`SolverUnavailableError` saying how
    to install it."""
    from pyomo.contrib.solver.common.factory import SolverFactory

    try:
        opt = SolverFactory(solver)
    except Exception as e:  # pragma: no cover - unknown to the factory
        raise SolverUnavailableError(
            f"Pyomo does not know the solver {solver!r} ({e}). "
            f"Install: {INSTALL_HINTS.get(solver, 'see the Pyomo docs')}."
        ) from None
    try:
        avail = bool(opt.available())
    except Exception:
        avail = False
    if not avail:
        raise SolverUnavailableError(
            f"The solver {solver!r} is not available. Install: {INSTALL_HINTS.get(solver, 'see the Pyomo docs')}. "
            f"(If highspy is installed, an ortools/highspy version clash may hide it: "
            f"`optsched info` shows the versions.)"
        )
    return opt


def _contrib_keywords(solver: str, options: SolveOptions) -> dict[str, Any]:
    """The keywords of ``opt.solve`` for ``options`` (the time limit is added at the start)."""
    sopts: dict[str, Any] = {}
    if solver == "highs":
        sopts["random_seed"] = options.seed
        if options.mip_abs_gap is not None:
            sopts["mip_abs_gap"] = options.mip_abs_gap
    sopts.update(options.solver_options)
    kw: dict[str, Any] = {
        "load_solutions": False,
        "raise_exception_on_nonoptimal_result": False,
        "tee": options.verbose,
        "solver_options": sopts,
        "rel_gap": options.mip_rel_gap,
    }
    if options.threads is not None:
        kw["threads"] = options.threads
    return kw


def _solve_contrib(model: Any, solver: str, options: SolveOptions, warm_start: bool = False) -> SolveResult:
    opt = _contrib_solver(solver)
    if interrupt.requested():
        return _not_run(solver, "interrupted before the solve")
    if options.expired():
        return _not_run(solver, "no time left before the solve")
    kw = _contrib_keywords(solver, options)
    t0 = time.perf_counter()
    done = watch = None
    shift = 0.0
    with interrupt.guard():
        try:
            # sharing first: its objective shift is then part of the instance set once, not re-set by
            # Pyomo's update() before the run (0.1-0.5 s on the sojourn models)
            if solver == "highs":
                done, shift = _share_into_highs(opt, model, _sense_min(model), options)
            if solver == "highs" and getattr(opt, "_model", None) is not model:
                # here, not in opt.solve: timed against the deadline; in a thread: a signal acts at once
                interrupt.run_stoppable(lambda: opt.set_instance(model), grace=HIGHS_STOP_GRACE, captures_output=True)
            if warm_start and solver == "highs":
                _set_highs_start(opt, model)
        except interrupt.Abandoned:  # Pyomo still handing a large model over: left to end in its thread
            return _not_run(solver, "interrupted while handing the model to the solver")
        except KeyboardInterrupt:  # Ctrl-C while Pyomo hands the model over (Python code)
            if done is not None:
                done()
            return _not_run(solver, "interrupted while handing the model to the solver")
        if interrupt.requested():  # while the model was handed over: HiGHS need not start
            if done is not None:
                done()
            return _not_run(solver, "interrupted while handing the model to the solver")
        limit = options.limit()
        if limit is not None and limit <= 0:
            if done is not None:
                done()
            return _not_run(solver, "the time limit was reached while handing the model to the solver")
        if limit is not None:
            kw["time_limit"] = limit
        if solver == "highs":
            _highs_threads(options.threads)
            # the instance was set just now: Pyomo's update() would only re-read it (1-2 s on big models)
            kw["auto_updates"] = dict.fromkeys(_AUTO_UPDATES, False)
            # stops HiGHS on Ctrl-C (the flag its interrupt callbacks read) and at the deadline
            watch = _Watch(opt, options)
        left = False
        try:
            with interrupt.stoppable():  # SIGINT sets the flag that the interrupt callbacks read
                if watch is None:
                    res = opt.solve(model, **kw)
                else:  # in a thread: a signal acts within HIGHS_STOP_GRACE s in every phase of HiGHS
                    res = interrupt.run_stoppable(
                        lambda: opt.solve(model, **kw),
                        grace=HIGHS_STOP_GRACE,
                        on_request=watch.request_stop,
                        on_abandon=watch.silence,
                        captures_output=True,
                    )
        except interrupt.Abandoned:  # HiGHS in presolve or its root LP, where it calls no callback
            left = True
            return _not_run(solver, "interrupted in HiGHS's presolve or root LP (its run is left to stop there)")
        except Exception as e:
            raise SolverError(f"The solver {solver!r} failed on the model: {e}") from e
        finally:
            if watch is not None and not left:  # a run left going keeps its callbacks: they stop it
                watch.done()
            if done is not None and not left:
                done()
    fired = watch.fired if watch is not None else None
    return _contrib_result(res, model, solver, options, time.perf_counter() - t0, shift, fired)


def _contrib_result(
    res: Any, model: Any, solver: str, options: SolveOptions, runtime: float, shift: float, fired: str | None
) -> SolveResult:
    """The :class:`SolveResult` of Pyomo's result ``res``: status from the termination condition
    (``fired``: HiGHS stopped by the watch), objective and bound with the objective ``shift`` undone,
    values (and duals) loaded, a warning when not proven optimal."""
    minimize, is_mip = _sense_min(model), _is_mip(model)
    sol_name = getattr(res.solution_status, "name", str(res.solution_status))
    has_sol = sol_name in ("optimal", "feasible")
    tc = getattr(res.termination_condition, "name", str(res.termination_condition))
    if fired is not None:  # HiGHS's kInterrupt: Pyomo calls it "unknown"
        tc = fired
    status = _status_from(tc, has_sol)
    obj = res.incumbent_objective if has_sol else None
    bound = res.objective_bound
    if shift:  # the objective was lowered by `shift` for the run (_share_into_highs)
        obj = None if obj is None else obj + shift
        bound = None if bound is None else bound + shift
    status, obj, bound = _finish(status, obj, bound, options, minimize, is_mip)
    if tc == "interrupted" and interrupt.requested() and status in (Status.FEASIBLE, Status.NO_SOLUTION):
        status = Status.INTERRUPTED
    duals = None
    if has_sol:
        res.solution_loader.load_vars()
        if options.duals and not is_mip and status == Status.OPTIMAL:
            raw = res.solution_loader.get_duals()
            duals = {c.name: float(v) for c, v in raw.items()}
            dual_suffix = getattr(model, "dual", None)
            if dual_suffix is not None:
                for c, v in raw.items():
                    dual_suffix[c] = v
    version = (
        ".".join(map(str, res.solver_version)) if isinstance(res.solver_version, tuple) else str(res.solver_version)
    )
    if status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.INTERRUPTED) and tc != "convergenceCriteriaSatisfied":
        warnings.warn(
            f"{solver} stopped ({tc}) after {runtime:.1f} s: status {status.value}, "
            f"objective {obj}, bound {bound}; not proven optimal.",
            SolverLimitWarning,
            stacklevel=4,
        )
    return SolveResult(
        status=status,
        objective=obj,
        bound=bound,
        runtime=runtime,
        solver=solver,
        solver_version=version,
        message=tc,
        duals=duals,
        raw=model,
    )


#: Pyomo's checks of a persistent model before a re-solve (``auto_updates``), all off for a fresh instance.
_AUTO_UPDATES = (
    "check_for_new_or_removed_constraints",
    "check_for_new_or_removed_vars",
    "check_for_new_or_removed_params",
    "check_for_new_objective",
    "update_constraints",
    "update_vars",
    "update_parameters",
    "update_named_expressions",
    "update_objective",
)


def _solve_legacy(model: Any, solver: str, options: SolveOptions, warm_start: bool = False) -> SolveResult:
    pyo = _import_pyomo()
    from pyomo.opt import SolverStatus, TerminationCondition

    try:
        opt = pyo.SolverFactory(solver)
        avail = opt is not None and bool(opt.available(exception_flag=False))
    except Exception:
        avail = False
    if not avail:
        raise SolverUnavailableError(
            f"The solver {solver!r} is not available. Install: {INSTALL_HINTS.get(solver, 'see the Pyomo docs')}."
        )
    minimize, is_mip = _sense_min(model), _is_mip(model)
    name_map = {
        "gurobi": ("TimeLimit", "MIPGap", "Threads", "Seed"),
        "cplex": ("timelimit", "mipgap", "threads", "randomseed"),
        "glpk": ("tmlim", "mipgap", None, None),
        "cbc": ("seconds", "ratio", "threads", "randomSeed"),
    }
    names = name_map.get(solver.split("_")[0], ("time_limit", "mip_rel_gap", "threads", "random_seed"))
    o: dict[str, Any] = {}
    limit = options.limit()
    if limit is not None and limit <= 0:
        return _not_run(solver, "no time left before the solve")
    if limit is not None and names[0]:
        o[names[0]] = limit
    if names[1]:
        o[names[1]] = options.mip_rel_gap
    if options.threads is not None and names[2]:
        o[names[2]] = options.threads
    if names[3]:
        o[names[3]] = options.seed
    o.update(options.solver_options)
    t0 = time.perf_counter()
    try:
        extra = {"warmstart": True} if warm_start and getattr(opt, "warm_start_capable", lambda: False)() else {}
        res = opt.solve(model, load_solutions=False, tee=options.verbose, options=o, **extra)
    except Exception as e:
        raise SolverError(f"The solver {solver!r} failed on the model: {e}") from e
    runtime = time.perf_counter() - t0
    tc = res.solver.termination_condition
    has_sol = len(res.solution) > 0
    if has_sol:
        model.solutions.load_from(res)
    if tc == TerminationCondition.optimal:
        status = Status.OPTIMAL
    elif tc in (TerminationCondition.infeasible, TerminationCondition.infeasibleOrUnbounded):
        status = Status.INFEASIBLE
    elif tc == TerminationCondition.unbounded:
        status = Status.UNBOUNDED
    elif res.solver.status == SolverStatus.error:
        status = Status.ERROR
    else:
        status = Status.FEASIBLE if has_sol else Status.NO_SOLUTION
    obj = None
    if has_sol:
        objs = list(model.component_data_objects(pyo.Objective, active=True))
        obj = float(pyo.value(objs[0]))
    bound = None
    try:
        b = res.problem[0].lower_bound if minimize else res.problem[0].upper_bound
        bound = float(b) if b is not None else None
    except Exception:
        bound = None
    status, obj, bound = _finish(status, obj, bound, options, minimize, is_mip)
    if status in (Status.FEASIBLE, Status.NO_SOLUTION):
        warnings.warn(
            f"{solver} stopped ({tc}): status {status.value}; not proven optimal.", SolverLimitWarning, stacklevel=3
        )
    version = ".".join(map(str, opt.version() or ())) if hasattr(opt, "version") else ""
    return SolveResult(
        status=status,
        objective=obj,
        bound=bound,
        runtime=runtime,
        solver=solver,
        solver_version=version,
        message=str(tc),
        raw=model,
    )


def write_model(model: Any, path: str | Path) -> Path:
    """Write a Pyomo model (``.lp`` or ``.mps``, with readable names) or a CP-SAT model
    (``.pb`` binary or ``.pbtxt`` text) to ``path``.

    Examples
    --------
    >>> import os, tempfile
    >>> import optsched
    >>> from optsched.rigid import build_time_indexed
    >>> from optsched.solvers import write_model
    >>> m = build_time_indexed(optsched.load_instance("toy:rigid-2x2-five"))
    >>> path = write_model(m, os.path.join(tempfile.mkdtemp(), "rigid.lp"))
    >>> "one_start_per_job" in path.read_text()
    True
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if hasattr(model, "ExportToFile"):  # ortools CpModel
        if path.suffix not in (".pb", ".pbtxt", ".txt"):
            raise InvalidOptionError(f"A CP-SAT model is written as .pb or .pbtxt; got {path.name!r}.")
        if not model.ExportToFile(str(path)):
            raise SolverError(f"CP-SAT could not write {path}.")
        return path
    if path.suffix not in (".lp", ".mps"):
        raise InvalidOptionError(f"A Pyomo model is written as .lp or .mps; got {path.name!r}.")
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    return path


_scheduler_threads: list[int | None] = [None]  # what HiGHS's global scheduler was last started with here


def _highs_threads(threads: int | None) -> None:
    """Before a HiGHS run with ``threads`` set: restart HiGHS's global scheduler when it was
    started with another count. HiGHS starts one scheduler per process with the first run's
    ``threads`` and refuses a later run with another count (an error status that Pyomo reports as
    "unknown": a solve with ``threads=2`` after one with ``threads=1`` returned no solution)."""
    if threads is None or _scheduler_threads[0] == threads:
        return
    import highspy

    highspy.Highs.resetGlobalScheduler(True)
    _scheduler_threads[0] = threads
