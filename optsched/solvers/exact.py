"""One exact-solve flow for every paper: build, write, solve, decode, recompute, certify.

Each paper keeps only its builders and decoders; :func:`run_exact` owns everything else:

1. options and seed (``seed`` overrides ``options.seed``; a ``Generator`` draws one int);
2. building (``build(instance, backend, options) -> ExactModel``) and writing the model;
3. the solve call (:func:`~optsched.solvers.solve_cpsat` for a CP-SAT model,
   :func:`~optsched.solvers.solve_pyomo` otherwise, or the model's own ``solve`` for a loop
   such as lazily added cuts);
4. decoding (``decode(exact_model, solve_result) -> schedule``);
5. **certification**: the objective is recomputed from the decoded schedule by the kind's
   evaluator (never the solver's value); a disagreement with the solver's objective beyond the
   solver's tolerance is an :class:`~optsched.exceptions.InternalError`; the reported bound is
   never beyond that objective (never above it when minimising, below when maximising); the gap
   is :func:`optsched.core.result.relative_gap`; the status is ``optimal`` only when the
   recomputed gap is within the stated tolerance, else ``feasible`` with its gap and one
   :class:`~optsched.exceptions.SolverLimitWarning`.

The certification (:mod:`optsched.solvers.certify`, with "the stated tolerance"), the model
type (:mod:`optsched.solvers.model`) and the staged CP-SAT solves (:mod:`optsched.solvers.staged`)
have modules of their own; their public names are importable from here too.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from optsched.core.output import check_writable_file
from optsched.core.result import Result, Status
from optsched.exceptions import (
    InvalidOptionError,
    InvalidScheduleError,
    SolverLimitWarning,
    SolverUnavailableError,
    TimeLimitReached,
)
from optsched.solvers import interrupt, progress
from optsched.solvers.certify import (
    ExactCall,
    certify,
    limit_phase,
    phase_at,
)
from optsched.solvers.model import ExactModel, default_solve
from optsched.solvers.options import MAX_SEED, SolveOptions, SolveResult
from optsched.solvers.params import check_solver_options
from optsched.solvers.pyomo_backend import INSTALL_HINTS
from optsched.solvers.pyomo_backend import write_model as _write_model

#: Default options of every exact solve: 60 s, gap 0, one thread (reproducible), seed 0.
DEFAULT_EXACT_OPTIONS = SolveOptions(time_limit=60.0, threads=1)


def resolve_options(
    options: SolveOptions | None, seed: Any = None, default: SolveOptions = DEFAULT_EXACT_OPTIONS
) -> SolveOptions:
    """``options`` (default ``default``) with ``seed`` applied: an int replaces ``options.seed``;
    a ``numpy.random.Generator`` draws one; ``None`` keeps it."""
    if options is None:
        options = default
    elif not isinstance(options, SolveOptions):
        raise InvalidOptionError(f"The 'options' argument must be an optsched.solvers.SolveOptions; got {options!r}.")
    if seed is None:
        return options
    if isinstance(seed, np.random.Generator):
        return options.replace(seed=int(seed.integers(0, 2**31 - 1)))
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and 0 <= int(seed) <= MAX_SEED:
        return options.replace(seed=int(seed))
    raise InvalidOptionError(
        f"The 'seed' option must be an int in [0, {MAX_SEED}] (the solvers' 32-bit seeds), a numpy.random.Generator "
        f"or None; got {seed!r}."
    )


def check_backend(backend: Any, own: tuple[str, ...] = ()) -> str:
    """Refuse a back end before any model is built: ``own`` names (``"cpsat"``, ``"dp"``, ...)
    pass; any other must be a Pyomo solver name (``InvalidOptionError`` otherwise) that is
    installed here (``SolverUnavailableError`` with how to install it otherwise)."""

    if not isinstance(backend, str) or not backend:
        raise InvalidOptionError(
            f"The 'backend' option must be one of {list(own)} or a Pyomo solver name such as 'highs'; got {backend!r}."
        )
    if backend in own:
        return backend
    import pyomo.environ as pyo  # noqa: F401  (registers the solver plugins)
    from pyomo.contrib.solver.common.factory import SolverFactory as ContribFactory
    from pyomo.opt import SolverFactory as LegacyFactory

    contrib, legacy = set(ContribFactory), {n for n in LegacyFactory if not n.startswith("_")}
    if backend not in contrib | legacy:
        raise InvalidOptionError(
            f"Unknown back end {backend!r}: choose one of {list(own)} or a Pyomo MILP solver "
            f"name (e.g. 'gurobi', 'cplex', 'cbc', 'glpk')."
        )
    try:
        if backend in contrib:
            ok = bool(ContribFactory(backend).available())
        else:
            opt = LegacyFactory(backend)
            ok = opt is not None and bool(opt.available(exception_flag=False))
    except Exception:
        ok = False
    if not ok:
        raise SolverUnavailableError(
            f"The back end {backend!r} is not available here. Install: "
            f"{INSTALL_HINTS.get(backend, 'see the Pyomo docs')}."
        )
    return backend


def _check_initial(instance: Any, initial: Any, check: Callable[[Any], Any] | None) -> None:
    bad = list(check(initial)) if check is not None else []
    if bad:
        v = bad[0]
        job = getattr(v, "job", None)
        who = f"job {job!r}" if job is not None else "it"
        raise InvalidScheduleError(
            f"The initial schedule is not feasible for instance {getattr(instance, 'name', '?')!r}: {who} violates "
            f"({getattr(v, 'label', '?')}): {getattr(v, 'message', v)}"
            + (f" (and {len(bad) - 1} more violation(s))" if len(bad) > 1 else "")
            + ". Pass a schedule of this instance that optsched.verify accepts, or initial=None."
        )


def _at_time_limit(sr: SolveResult | None) -> bool:
    """Whether the solver stopped at its time limit without a proof: CP-SAT stops only at a proof,
    a limit or Ctrl-C, so "FEASIBLE"/"UNKNOWN" are its time limit; HiGHS says "maxTimeLimit"
    (also when its callback stopped it at the deadline); a portfolio, when a member stopped so."""
    if sr is None or sr.status not in (Status.FEASIBLE, Status.NO_SOLUTION):
        return False
    msg = (sr.message or "").lower()
    if sr.solver == "portfolio":  # "cpsat: feasible; highs: stopped": a member stopped without a proof
        return any(f": {st}" in msg for st in ("feasible", "no_solution", "stopped"))
    return sr.solver == "cpsat" or any(w in msg for w in ("timelimit", "time limit", "time left", "deadline"))


def _meets(init_obj: float | None, bound: float | None, tolerance: float) -> bool:
    """Whether the initial schedule's objective is within the optimality tolerance of a valid
    bound (then it is optimal and no solver needs to run)."""
    if init_obj is None or bound is None:
        return False
    return abs(init_obj - bound) <= tolerance * max(abs(init_obj), 1e-10)


def run_exact(
    instance: Any,
    *,
    build: Callable[[Any, str, SolveOptions], ExactModel],
    decode: Callable[[ExactModel, SolveResult], Any],
    evaluate: Callable[[Any], float],
    backend: str,
    algorithm: str,
    objective_name: str,
    options: SolveOptions | None = None,
    seed: Any = None,
    write_model: str | None = None,
    sense: str = "min",
    tolerance: float | None = None,
    default_options: SolveOptions = DEFAULT_EXACT_OPTIONS,
    initial: Any = None,
    check_initial: Callable[[Any], Any] | None = None,
    own_backends: tuple[str, ...] | None = None,
    initial_bound: float | None = None,
    bound_name: str | None = None,
    stop_at_bound: bool = False,
) -> Result:
    """Build, write, solve, decode and certify one exact model (see the module doc).

    Parameters
    ----------
    instance : object
        The instance (its ``name`` labels the result).
    build : callable
        ``build(instance, backend, options) -> ExactModel``; may refuse with
        ``ModelTooLargeError`` or ``InvalidOptionError`` before anything is solved.
    decode : callable
        ``decode(exact_model, solve_result) -> schedule``; called only when the solver has a
        solution.
    evaluate : callable
        ``evaluate(schedule) -> float``: the kind's evaluator (the verifier's objective).
    backend : str
        Passed to ``build`` and, for Pyomo models, to :func:`solve_pyomo` as the solver name.
    algorithm, objective_name : str
        Labels of the :class:`Result`.
    options : SolveOptions, optional
        Default ``default_options`` (60 s, gap 0, one thread).
    seed : int, numpy.random.Generator or None
        Overrides ``options.seed``.
    write_model : str, optional
        Write the model that is solved (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT).
    sense : {"min", "max"}
    tolerance : float, optional
        Relative optimality tolerance; default ``options.optimality_tolerance`` (1e-9). See the
        module doc.
    initial : schedule, optional
        A feasible schedule of ``instance`` (e.g. the best fast heuristic's): checked with
        ``check_initial``, installed as the solver's start (``ExactModel.warm_start``), and
        returned instead of the solver's schedule when the solver's is worse or missing (then
        ``info["incumbent"] == "initial"``): an exact solve never returns a worse schedule than
        its warm start.
    check_initial : callable, optional
        ``check_initial(schedule) -> list of violations`` (objects with ``label``, ``message``,
        ``job``, such as the verifier's); the first is reported.
    own_backends : tuple of str, optional
        Back ends the paper handles itself (``"cpsat"``, ``"dp"``, ...); when given, any other
        must be an installed Pyomo solver (:func:`check_backend`), checked before building.
    initial_bound : float, optional
        A valid bound in the kind's units known before the solve (e.g. a combinatorial one); the
        result's bound is never weaker (``info["bound_from"] == "initial_bound"`` when it is the
        one returned), so a run stopped before its solver proved anything still has a bound.
    bound_name : str, optional
        What ``initial_bound`` is (e.g. ``"mean_busy"``, the largest part of a cheap bound), or,
        with no ``initial_bound``, why the kind has none: ``info["cheap_bound"]``.
    stop_at_bound : bool
        When the initial schedule meets ``initial_bound`` (within the tolerance), return it as
        optimal without building or solving anything (``info["solver_message"]`` says so), unless
        ``write_model`` asks for the model. Off by default: a caller testing its model wants it solved.

    Returns
    -------
    Result
        ``objective`` recomputed by ``evaluate``; ``bound`` valid and never beyond it; ``gap``
        from :func:`relative_gap`; ``status`` OPTIMAL only when the gap is within
        ``info["optimality_tolerance"]`` (absolute). ``info`` holds ``solver_objective``
        (converted to the kind's units), ``solver_bound`` when it was beyond the objective,
        ``solver_status``, ``solver_message`` and ``solver_runtime``, ``warm_start``,
        ``initial_objective``, ``incumbent`` ("solver" or "initial"), and with
        ``options.verbose`` the :func:`model_summary`.

    Raises
    ------
    InvalidScheduleError
        ``initial`` is infeasible (or of another instance): names the job and the violated
        constraint (the verifier's label).
    InternalError
        The decoded schedule's objective and the solver's differ by more than the model's
        resolution plus the solver's tolerance (a bug in a model or a decoder).

    Guarantee
    ---------
    ``status == OPTIMAL`` => ``|objective - OPT| <= info["optimality_tolerance"]``, provided
    the solver's bound is valid (HiGHS's can be wrong by its tolerances on badly scaled models:
    builders scale those, see ``formulations/sojourn.md``).

    Notes
    -----
    The time limit bounds the whole call (``options.deadline``, set here from ``time_limit``
    unless given): a build that raises :class:`~optsched.exceptions.TimeLimitReached` ends the
    call with the initial schedule and ``initial_bound`` (status ``feasible``/``no_solution``,
    ``info["stopped_because"]``); ``info["phases"]`` has the seconds of each phase
    (:func:`optsched.solvers.progress.timeline`: the caller's phases too, e.g. the warm start),
    ``info["limit_reached_in"]`` the phase that ran out of time (``None`` if none did). Ctrl-C
    (:mod:`optsched.solvers.interrupt`) stops the solver and returns the best schedule and bound
    so far with status ``interrupted`` (inside :func:`~optsched.solvers.interrupt.stop_on_interrupt`
    it raises :class:`~optsched.solvers.interrupt.Interrupted` carrying that result instead).
    """
    if sense not in ("min", "max"):
        raise InvalidOptionError(f"The 'sense' of an exact model must be 'min' or 'max'; got {sense!r}.")
    if tolerance is not None and (not isinstance(tolerance, numbers.Real) or not 0 <= tolerance < 1):
        raise InvalidOptionError(f"The optimality 'tolerance' must be a number in [0, 1); got {tolerance!r}.")
    if own_backends is not None:
        check_backend(backend, own_backends)
    elif not isinstance(backend, str) or not backend:
        raise InvalidOptionError(f"The 'backend' option must be a solver name such as 'highs'; got {backend!r}.")
    t0 = time.perf_counter()
    options = resolve_options(options, seed, default_options).started()
    check_solver_options(options.solver_options, backend)  # a bad raw parameter: refused before any work
    if tolerance is None:
        tolerance = options.optimality_tolerance
    if write_model:  # an unwritable path fails now, not after the model is built
        check_writable_file(write_model, option="write_model")
    call = ExactCall(
        instance,
        build,
        decode,
        evaluate,
        backend,
        algorithm,
        objective_name,
        minimize=sense == "min",
        tolerance=tolerance,
        initial=initial,
        check_initial=check_initial,
        initial_bound=initial_bound,
        write_model=write_model,
        bound_name=bound_name,
        stop_at_bound=stop_at_bound,
    )
    with interrupt.guard(), progress.timeline():
        return _run_exact(call, options, t0)


def _run_exact(call: ExactCall, options: SolveOptions, t0: float) -> Result:
    """:func:`run_exact` inside its SIGINT guard (options checked, deadline set)."""
    instance, backend, initial, initial_bound = call.instance, call.backend, call.initial, call.initial_bound
    write_model, tolerance = call.write_model, call.tolerance
    name = getattr(instance, "name", "?")
    tl = progress.outer_timeline()  # the caller's when it keeps one (the CLI's: reading the instance too)
    cut: str | None = None  # the phase cut short for lack of time
    progress.start(maximize=not call.minimize)
    init_obj = None
    if initial is not None:
        _check_initial(instance, initial, call.check_initial)
        init_obj = float(call.evaluate(initial))
    if initial_bound is not None and not math.isfinite(initial_bound):
        call = replace(call, initial_bound=None)
    progress.report_kind(incumbent=init_obj, bound=call.initial_bound)
    em: ExactModel | None = None
    sr: SolveResult | None = None
    stopped = None  # why no (complete) solve happened: the time limit in a build, or Ctrl-C
    warm = False
    info_written = None
    if call.stop_at_bound and _meets(init_obj, call.initial_bound, tolerance) and not write_model:
        # the warm start meets the cheap bound: proven optimal, nothing to build or solve
        sr = SolveResult(
            Status.NO_SOLUTION, None, None, 0.0, backend, "", message="the initial schedule meets the initial bound"
        )
        progress.phase("certifying")
        result = certify(call, None, sr, None, options=options, init_obj=init_obj, warm=False, info_written=None)
        result.runtime = time.perf_counter() - t0
        if tl is not None:
            result.info["phases"] = tl.seconds(time.monotonic())
        result.info["limit_reached_in"] = None
        return result
    progress.phase(f"building the model ({backend})")
    try:
        interrupt.check()  # a signal stops the call between phases, never inside a library's work
        if options.expired():
            cut = phase_at(tl, options.deadline)
            raise TimeLimitReached(f"the time limit was reached before the model was built (while {cut})")
        em = call.build(instance, backend, options)
        interrupt.check()
        if init_obj is not None and options.mip_abs_gap is None and not em.step and em.scale > 0:
            # fractional objective: let the solver stop only within the certification tolerance
            # (HiGHS's default absolute gap, 1e-6, is above 1e-9 relative for objectives below 1000)
            options = options.replace(mip_abs_gap=0.5 * tolerance * max(abs(init_obj), 1e-10) / em.scale)
        if initial is not None and em.warm_start is not None:
            em.warm_start(initial)
            warm = True
        if write_model and em.write is not None:
            info_written = em.write(write_model)
        elif write_model and em.model is not None:  # None: no model (a dynamic program, a trivial instance)
            info_written = [str(_write_model(em.model, write_model))]
        interrupt.check()
        progress.phase(f"solving ({backend})")
        with warnings.catch_warnings(), progress.units(em.scale, em.offset):
            warnings.simplefilter("ignore", SolverLimitWarning)  # one warning below, after certification
            sr = em.solve(em, options) if em.solve is not None else default_solve(em, backend, options, warm)
    except TimeLimitReached as e:
        stopped = f"time limit: {e}"
        cut = cut or phase_at(tl, time.monotonic())
    except KeyboardInterrupt:  # a signal, taken between phases (interrupt.check) or a third one at once
        if interrupt.propagating():
            raise
        stopped = f"interrupted ({interrupt.described()})"
    tc = time.monotonic()  # before the phase's mark: the phase running just before it is the solve's
    progress.phase("certifying")
    with interrupt.stoppable():  # Ctrl-C from here on only marks the result interrupted
        result = certify(
            call, em, sr, stopped, options=options, init_obj=init_obj, warm=warm, info_written=info_written
        )
    result.runtime = time.perf_counter() - t0
    if tl is not None:
        result.info["phases"] = tl.seconds(time.monotonic())
    if options.deadline is not None:
        result.info["deadline_left"] = round(options.deadline - time.monotonic(), 3)
    result.info["limit_reached_in"] = limit_phase(tl, options, cut, result.status, tc, _at_time_limit(sr))
    if result.status != Status.OPTIMAL:
        why = result.info.get("stopped_because") or (
            f"interrupted ({interrupt.described()})"
            if result.status == Status.INTERRUPTED
            else "the recomputed gap is above the optimality tolerance"
            if sr is not None and sr.status == Status.OPTIMAL
            else f"the solver stopped ({sr.message if sr is not None else 'not run'})"
        )
        if result.status not in (Status.INFEASIBLE, Status.UNBOUNDED):
            warnings.warn(
                f"{call.algorithm} on {name!r}: {why}; status {result.status.value}, "
                f"objective {result.objective}, bound {result.bound}, gap {result.gap}: not proven optimal.",
                SolverLimitWarning,
                stacklevel=4,
            )
    if result.status == Status.INTERRUPTED and interrupt.propagating():
        raise interrupt.Interrupted(result)
    return result
