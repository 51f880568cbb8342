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

The stated tolerance
--------------------
A result is ``optimal`` iff ``|objective - bound| <= max(tolerance * max(|objective|, 1e-10), 2 *
resolution)`` with ``tolerance`` = :data:`DEFAULT_OPTIMALITY_TOLERANCE` (1e-9 relative) unless given
(``SolveOptions.optimality_tolerance`` or ``tolerance=``). ``resolution`` is a property of the
model, not a tolerance one chooses: a model whose objective coefficients are rounded to integers
(CP-SAT) represents every schedule's objective only within ``resolution``, so its bound is lowered
by ``resolution`` to stay valid and it cannot certify a gap below ``2 * resolution``. It is 0 for
exact models and is reported in ``Result.info["optimality_tolerance"]`` next to the tolerance
actually applied.

**Integer-valued objectives.** A model that declares ``step`` (every feasible schedule's
objective is a multiple of ``step``, e.g. the slot length when every weight is an integer) has
its bound rounded up to the next multiple of ``step`` (down when maximising; with a 1e-6 step
slack against float noise); a gap below one step then closes to zero, and the caller may pass
``mip_abs_gap = 0.999 * step`` (in model units) so the solver stops as soon as that is proven.
**Fractional objectives** (no ``step``): when an initial schedule is known and the options set
no ``mip_abs_gap``, the solver gets ``mip_abs_gap = tolerance * |initial objective| / 2`` (model
units), so it stops only once the certification can succeed. A model whose coefficients are
tiny beside its objective also needs scaling: see ``formulations/sojourn.md#solving-tolerances``.
"""

from __future__ import annotations

import math
import numbers
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.result import Result, Status, relative_gap
from optsched.exceptions import (
    InternalError,
    InvalidOptionError,
    InvalidScheduleError,
    SolverLimitWarning,
    TimeLimitReached,
)
from optsched.solvers import interrupt, progress
from optsched.solvers.cpsat_backend import solve_cpsat
from optsched.solvers.options import SolveOptions, SolveResult
from optsched.solvers.pyomo_backend import solve_pyomo
from optsched.solvers.pyomo_backend import write_model as _write_model

__all__ = [
    "ExactModel",
    "run_exact",
    "lp_relaxation_value",
    "lp_time_budget",
    "solve_cpsat_with_lp_bound",
    "solve_cpsat_staged",
    "cpsat_probe",
    "probe_time_budget",
    "resolve_options",
    "check_backend",
    "model_summary",
    "DEFAULT_OPTIMALITY_TOLERANCE",
    "DEFAULT_EXACT_OPTIONS",
    "AGREEMENT_RTOL",
]

#: A result is called optimal when its recomputed relative gap is at most this (see the module doc).
DEFAULT_OPTIMALITY_TOLERANCE = 1e-9
#: Default options of every exact solve: 60 s, gap 0, one thread (reproducible), seed 0.
DEFAULT_EXACT_OPTIONS = SolveOptions(time_limit=60.0, threads=1)
#: Decoder/solver agreement: |recomputed - solver objective| <= resolution + AGREEMENT_RTOL * max(1, |objective|)
#: (the solvers' own feasibility tolerances are 1e-6; a larger difference is a modelling or decoding bug).
AGREEMENT_RTOL = 1e-6


@dataclass(frozen=True)
class ExactModel:
    """A built exact model and how its objective relates to the kind's objective.

    Attributes
    ----------
    model : Pyomo ``ConcreteModel`` or CP-SAT ``CpModel``
        What is written (``write_model=``) and solved.
    handles : object
        Whatever the decoder needs (the variables of a CP-SAT model, precomputed data, ...).
    scale, offset : float
        The kind's objective of a solution is ``offset + scale * (model objective)``.
    resolution : float
        ``|kind objective - (offset + scale * model objective)| <= resolution`` for every
        solution (rounded coefficients); 0 for an exact model.
    step : float or None
        Every feasible schedule's objective is a multiple of ``step`` (integer-valued
        objectives); ``None`` if not known.
    solve : callable or None
        ``solve(exact_model, options) -> SolveResult`` for flows that are not one solver call
        (a lazy-cut loop, a dynamic program); the result's objective and bound are in model
        units. ``None``: CP-SAT for a ``CpModel``, else :func:`solve_pyomo` with the back end.
    info : dict
        Copied into ``Result.info`` (model size, horizon, ...) after the solve.
    warm_start : callable or None
        ``warm_start(schedule)`` installs a feasible schedule as the solver's start: CP-SAT
        hints (``model.add_hint``), or values on a Pyomo model's variables (then passed to HiGHS
        as a MIP start, ``solve_pyomo(..., warm_start=True)``), or whatever the own ``solve``
        reads. ``None``: the model takes no start (the initial schedule still bounds the result).
    probe : callable or None
        ``probe(exact_model, options) -> SolveResult``: a cheap first attempt (e.g.
        :func:`cpsat_probe`, a fraction of a second) that ``solve`` would begin with anyway and
        then skips. The portfolio runs it before building its other members: when it proves
        the optimum, they are never built.
    write : callable or None
        ``write(path) -> list of paths``: how ``write_model=`` writes a model that is not one
        solver model (the portfolio: one file per member). ``None``: the model is written.
    """

    model: Any
    handles: Any = None
    scale: float = 1.0
    offset: float = 0.0
    resolution: float = 0.0
    step: float | None = None
    solve: Callable[[ExactModel, SolveOptions], SolveResult] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    warm_start: Callable[[Any], None] | None = None
    probe: Callable[[ExactModel, SolveOptions], SolveResult] | None = None
    write: Callable[[str], list[str]] | None = None


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
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and int(seed) >= 0:
        return options.replace(seed=int(seed))
    raise InvalidOptionError(
        f"The 'seed' option must be a non-negative int, a numpy.random.Generator or None; got {seed!r}."
    )


def check_backend(backend: Any, own: tuple[str, ...] = ()) -> str:
    """Refuse a back end before any model is built: ``own`` names (``"cpsat"``, ``"dp"``, ...)
    pass; any other must be a Pyomo solver name (``InvalidOptionError`` otherwise) that is
    installed here (``SolverUnavailableError`` with how to install it otherwise)."""
    from optsched.exceptions import SolverUnavailableError
    from optsched.solvers.pyomo_backend import INSTALL_HINTS

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


def model_summary(em: ExactModel | Any) -> dict[str, Any]:
    """Variables, constraints, non-zeros (and the horizon, when the model states one) of a built
    model, Pyomo or CP-SAT (what ``optsched solve -v`` prints). O(model size)."""
    info = dict(getattr(em, "info", {}) or {})
    model: Any = getattr(em, "model", em)
    out: dict[str, Any] = {
        "kind": None,
        "variables": None,
        "constraints": None,
        "nonzeros": None,
        "horizon": info.get("horizon_slots", info.get("horizon")),
    }
    if out["horizon"] is None:  # else the model's own statement of it: a time set T, or handles.horizon
        t_set = getattr(model, "T", None)
        handles = getattr(em, "handles", None)
        if t_set is not None and hasattr(t_set, "__len__") and not callable(t_set):
            out["horizon"] = len(t_set)
        elif isinstance(h := getattr(handles, "horizon", None), int):
            out["horizon"] = h
    if model is None:
        if "model_summaries" in info:  # a portfolio: one summary per member built so far
            out.update(kind="portfolio", members=dict(info["model_summaries"]))
        return out
    if _is_cpsat(model):
        proto = model.proto
        nnz = sum(len(c.linear.vars) for c in proto.constraints if c.has_linear())  # linear rows only
        out.update(kind="cp-sat", variables=len(proto.variables), constraints=len(proto.constraints), nonzeros=nnz)
        return out
    import pyomo.environ as pyo
    from pyomo.core.expr.visitor import identify_variables

    cons = list(model.component_data_objects(pyo.Constraint, active=True))
    out.update(
        kind="pyomo",
        variables=sum(1 for _ in model.component_data_objects(pyo.Var, active=True)),
        constraints=len(cons),
        nonzeros=sum(sum(1 for _ in identify_variables(c.body)) for c in cons),
    )
    return out


def _is_cpsat(model: Any) -> bool:
    return hasattr(model, "ExportToFile") and hasattr(model, "Proto")


def _default_solve(em: ExactModel, backend: str, options: SolveOptions, warm: bool) -> SolveResult:
    if _is_cpsat(em.model):
        return solve_cpsat(em.model, options)
    return solve_pyomo(em.model, backend, options, warm_start=warm)


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

    The time limit bounds the whole call (``options.deadline``, set here from ``time_limit``
    unless given): a build that raises :class:`~optsched.exceptions.TimeLimitReached` ends the
    call with the initial schedule and ``initial_bound`` (status ``feasible``/``no_solution``,
    ``info["stopped_because"]``); ``info["phases"]`` has the seconds of build, solve and
    certification. Ctrl-C (:mod:`optsched.solvers.interrupt`) stops the solver and returns the
    best schedule and bound so far with status ``interrupted`` (inside
    :func:`~optsched.solvers.interrupt.stop_on_interrupt` it raises
    :class:`~optsched.solvers.interrupt.Interrupted` carrying that result instead).

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
    if tolerance is None:
        tolerance = options.optimality_tolerance
    if write_model:  # an unwritable path fails now, not after the model is built
        from optsched.core.output import check_writable_file

        check_writable_file(write_model, option="write_model")
    with interrupt.guard():
        return _run_exact(
            instance,
            build=build,
            decode=decode,
            evaluate=evaluate,
            backend=backend,
            algorithm=algorithm,
            objective_name=objective_name,
            options=options,
            write_model=write_model,
            minimize=sense == "min",
            tolerance=tolerance,
            initial=initial,
            check_initial=check_initial,
            initial_bound=initial_bound,
            t0=t0,
        )


def _run_exact(
    instance: Any,
    *,
    build: Callable[[Any, str, SolveOptions], ExactModel],
    decode: Callable[[ExactModel, SolveResult], Any],
    evaluate: Callable[[Any], float],
    backend: str,
    algorithm: str,
    objective_name: str,
    options: SolveOptions,
    write_model: str | None,
    minimize: bool,
    tolerance: float,
    initial: Any,
    check_initial: Callable[[Any], Any] | None,
    initial_bound: float | None,
    t0: float,
) -> Result:
    """:func:`run_exact` inside its SIGINT guard (options checked, deadline set)."""
    name = getattr(instance, "name", "?")
    phases: dict[str, float] = {}
    progress.start(maximize=not minimize)
    init_obj = None
    if initial is not None:
        _check_initial(instance, initial, check_initial)
        init_obj = float(evaluate(initial))
    if initial_bound is not None and not math.isfinite(initial_bound):
        initial_bound = None
    progress.report_kind(incumbent=init_obj, bound=initial_bound)
    em: ExactModel | None = None
    sr: SolveResult | None = None
    stopped = None  # why no (complete) solve happened: the time limit in a build, or Ctrl-C
    warm = False
    info_written = None
    tb = time.perf_counter()
    progress.phase(f"building the model ({backend})")
    try:
        interrupt.check()  # a signal stops the call between phases, never inside a library's work
        if options.expired():
            raise TimeLimitReached("the time limit was reached before the model was built")
        em = build(instance, backend, options)
        phases["build"] = time.perf_counter() - tb
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
        ts = time.perf_counter()
        progress.phase(f"solving ({backend})")
        with warnings.catch_warnings(), progress.units(em.scale, em.offset):
            warnings.simplefilter("ignore", SolverLimitWarning)  # one warning below, after certification
            sr = em.solve(em, options) if em.solve is not None else _default_solve(em, backend, options, warm)
        phases["solve"] = time.perf_counter() - ts
    except TimeLimitReached as e:
        stopped = f"time limit: {e}"
    except KeyboardInterrupt:  # a signal, taken between phases (interrupt.check) or a third one at once
        if interrupt.propagating():
            raise
        stopped = f"interrupted ({interrupt.described()})"
    progress.phase("certifying")
    tc = time.perf_counter()
    with interrupt.stoppable():  # Ctrl-C from here on only marks the result interrupted
        result = _certify(
            instance,
            em,
            sr,
            stopped,
            decode=decode,
            evaluate=evaluate,
            backend=backend,
            algorithm=algorithm,
            objective_name=objective_name,
            options=options,
            minimize=minimize,
            tolerance=tolerance,
            initial=initial,
            init_obj=init_obj,
            initial_bound=initial_bound,
            warm=warm,
            info_written=info_written,
        )
    phases["certify"] = time.perf_counter() - tc
    result.runtime = time.perf_counter() - t0
    result.info["phases"] = {k: round(v, 3) for k, v in phases.items()}
    if options.deadline is not None:
        result.info["deadline_left"] = round(options.deadline - time.monotonic(), 3)
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
                f"{algorithm} on {name!r}: {why}; status {result.status.value}, "
                f"objective {result.objective}, bound {result.bound}, gap {result.gap}: not proven optimal.",
                SolverLimitWarning,
                stacklevel=4,
            )
    if result.status == Status.INTERRUPTED and interrupt.propagating():
        raise interrupt.Interrupted(result)
    return result


def _certify(
    instance: Any,
    em: ExactModel | None,
    sr: SolveResult | None,
    stopped: str | None,
    *,
    decode: Callable[[ExactModel, SolveResult], Any],
    evaluate: Callable[[Any], float],
    backend: str,
    algorithm: str,
    objective_name: str,
    options: SolveOptions,
    minimize: bool,
    tolerance: float,
    initial: Any,
    init_obj: float | None,
    initial_bound: float | None,
    warm: bool,
    info_written: list[str] | None,
) -> Result:
    """Decode, recompute and certify (the module doc); ``sr`` None: nothing was solved (``stopped`` says why)."""
    name = getattr(instance, "name", "?")
    info: dict[str, Any] = dict(em.info) if em is not None else {}
    if sr is None:
        sr = SolveResult(
            Status.INTERRUPTED if interrupt.requested() else Status.NO_SOLUTION,
            None,
            None,
            0.0,
            backend,
            "",
            message=stopped or "not solved",
        )
    summary = model_summary(em) if options.verbose and em is not None else None  # after the solve: what was solved
    info.update(
        solver_status=str(sr.status),
        solver_message=sr.message,
        solver_runtime=sr.runtime,
        warm_start=warm,
        initial_objective=init_obj,
    )
    if stopped is not None:
        info["stopped_because"] = stopped
    if initial_bound is not None:
        info["initial_bound"] = initial_bound
    if summary is not None:
        info["model_summary"] = summary
    if info_written is not None:
        info["model_files"] = info_written
    sched = decode(em, sr) if sr.has_solution and em is not None else None
    obj = None if sched is None else float(evaluate(sched))
    status = sr.status if sched is None else Status.FEASIBLE
    model_obj = None
    if em is not None and sr.objective is not None and sr.has_solution:
        model_obj = em.offset + em.scale * sr.objective
    info["solver_objective"] = model_obj
    if obj is not None and model_obj is not None:
        tol = em.resolution + AGREEMENT_RTOL * max(1.0, abs(obj))  # type: ignore[union-attr]
        if not math.isclose(obj, model_obj, rel_tol=0.0, abs_tol=tol):
            raise InternalError(
                f"{algorithm} on {name!r}: the decoded schedule's objective {obj!r} differs "
                f"from the solver's {model_obj!r} by more than {tol:.3g}; the model and its decoder disagree."
            )
    info["incumbent"] = "solver" if obj is not None else None
    if init_obj is not None and sr.status == Status.INFEASIBLE:
        raise InternalError(
            f"{algorithm} on {name!r}: the solver reports the model "
            f"infeasible although the initial schedule is feasible (objective {init_obj!r})."
        )
    if init_obj is not None and (obj is None or (init_obj < obj if minimize else init_obj > obj)):
        sched, obj, info["incumbent"] = initial, init_obj, "initial"
        if status not in (Status.OPTIMAL, Status.FEASIBLE):
            status = Status.FEASIBLE
    bound = None
    if em is not None and sr.bound is not None and math.isfinite(sr.bound):
        bound = em.offset + em.scale * sr.bound
        bound = bound - em.resolution if minimize else bound + em.resolution
        if em.step:
            q = bound / em.step
            bound = (math.ceil(q - 1e-6) if minimize else math.floor(q + 1e-6)) * em.step
    if initial_bound is not None and (bound is None or (initial_bound > bound if minimize else initial_bound < bound)):
        bound = initial_bound
        info["bound_from"] = "initial_bound"
    if obj is not None and bound is not None and (bound > obj if minimize else bound < obj):
        info["solver_bound"] = bound  # beyond its own incumbent's recomputed value: a tolerance effect
        bound = obj
    resolution = em.resolution if em is not None else 0.0
    opt_tol = (
        # a rounded model (resolution > 0) may be 2 resolutions off, plus 1e-9 of it and 64 ulps of the
        # objective for the float rounding of the recomputed objective and of the scaled bound (a gap of
        # exactly 2 resolutions once came out 5.7e-16 above it: CI, tests/sojourn/test_exact.py)
        max(
            tolerance * max(abs(obj), 1e-10),
            2.0 * resolution * (1 + 1e-9) + 64 * sys.float_info.epsilon * abs(obj) if resolution > 0 else 0.0,
        )
        if obj is not None
        else None
    )
    info["optimality_tolerance"] = opt_tol
    if obj is not None and bound is not None and opt_tol is not None and abs(obj - bound) <= opt_tol:
        status = Status.OPTIMAL
    elif interrupt.requested() and status not in (Status.INFEASIBLE, Status.UNBOUNDED):
        status = Status.INTERRUPTED
    elif status == Status.INTERRUPTED:  # a stop that was not Ctrl-C: the limit
        status = Status.FEASIBLE if obj is not None else Status.NO_SOLUTION
    return Result(
        algorithm=algorithm,
        instance=getattr(instance, "name", ""),
        objective=obj,
        objective_name=objective_name,
        schedule=sched,
        status=status,
        bound=bound,
        gap=relative_gap(obj, bound),
        runtime=0.0,
        solver=f"{sr.solver} {sr.solver_version}".strip(),
        info=info,
    )


#: Share of the time limit an LP relaxation computed before a CP-SAT solve may take, and its cap.
LP_SHARE, LP_MAX_SECONDS = 0.25, 30.0


def lp_time_budget(options: SolveOptions) -> float:
    """Seconds the LP relaxation may take before a CP-SAT solve under ``options``: a quarter of the
    time limit, at most :data:`LP_MAX_SECONDS`."""
    tl = options.time_limit
    return LP_MAX_SECONDS if tl is None else min(LP_MAX_SECONDS, LP_SHARE * float(tl))


def lp_relaxation_value(
    model: Any,
    time_limit: float | None = LP_MAX_SECONDS,
    *,
    deadline: float | None = None,
    solver_options: Mapping[str, Any] | None = None,
) -> float | None:
    """The optimal value of the LP relaxation of a Pyomo MILP (relaxed in place; HiGHS, 1 thread),
    in the model's units; ``None`` unless HiGHS proves the LP optimal within ``time_limit``
    seconds (and before ``deadline``, a ``time.monotonic()`` value, when given).
    ``solver_options``: HiGHS options (e.g. ``{"presolve": "off"}`` for a model presolve cannot
    reduce: HiGHS's presolve does not check its time limit often)."""
    import pyomo.environ as pyo

    from optsched.exceptions import SolverLimitWarning

    if interrupt.requested():  # a signal arrived: skip the LP (the caller keeps what it has)
        return None
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)  # never cut by a signal (a guard)
    with warnings.catch_warnings(), progress.units(incumbents=False):
        warnings.simplefilter("ignore", SolverLimitWarning)
        o = SolveOptions(time_limit=time_limit, threads=1, deadline=deadline, solver_options=dict(solver_options or {}))
        sr = solve_pyomo(model, "highs", o)
    if sr.status != Status.OPTIMAL or sr.objective is None:
        return None
    return float(sr.objective)


def solve_cpsat_with_lp_bound(em: ExactModel, options: SolveOptions) -> SolveResult:
    """An ``ExactModel.solve`` for CP-SAT models built after an LP relaxation: CP-SAT gets what is
    left of the time limit (``em.info["lp_time"]`` spent), and its bound is at least the LP's
    (``em.info["lp_row"]``, in model units)."""
    import dataclasses

    spent, lp_row = em.info.get("lp_time", 0.0), em.info.get("lp_row")
    if options.time_limit is not None:
        options = options.replace(time_limit=max(0.1, float(options.time_limit) - spent))
    sr = solve_cpsat(em.model, options)
    if lp_row is not None and sr.bound is not None and sr.bound < lp_row:
        sr = dataclasses.replace(sr, bound=float(lp_row))
    return sr


#: Share of the time limit the CP-SAT probe of :func:`solve_cpsat_staged` may take, and its cap (s).
PROBE_SHARE, PROBE_MAX_SECONDS = 0.05, 0.5


def probe_time_budget(options: SolveOptions) -> float:
    """Seconds of the CP-SAT probe under ``options``: 5 % of the time limit, at most
    :data:`PROBE_MAX_SECONDS` (0 disables the probe)."""
    tl = options.time_limit
    return PROBE_MAX_SECONDS if tl is None else max(0.0, min(PROBE_MAX_SECONDS, PROBE_SHARE * float(tl)))


def cpsat_probe(em: ExactModel, options: SolveOptions, state: dict[str, Any] | None = None) -> SolveResult:
    """The probe of :func:`solve_cpsat_staged`: CP-SAT with its presolve off and the model's hints,
    for :func:`probe_time_budget` seconds (never beyond ``options.time_limit``). Records
    ``em.info["probe"]`` and keeps the result in ``state["probe"]`` (so a later staged solve of
    the same model, e.g. in a forked portfolio member, does not probe again)."""
    probe, tl = probe_time_budget(options), options.time_limit
    o1 = options.replace(
        time_limit=probe if tl is None else min(probe, float(tl)),
        solver_options={"cp_model_presolve": False, **options.solver_options},
    )
    sr = solve_cpsat(em.model, o1)
    info: Any = em.info  # a dict: run_exact copies it after the solve
    info["probe"] = {"status": sr.status.value, "seconds": round(sr.runtime, 4), "objective": sr.objective}
    if state is not None:
        state["probe"] = sr
    return sr


def solve_cpsat_staged(
    em: ExactModel,
    options: SolveOptions,
    lp_row: Callable[[float], tuple[float | None, dict[str, Any]]] | None = None,
    state: dict[str, Any] | None = None,
) -> SolveResult:
    """An ``ExactModel.solve`` for CP-SAT models whose strong bound costs time: probe first,
    pay for the bound only when the probe did not prove the optimum.

    1. **Probe** (:func:`cpsat_probe`, skipped when ``state`` already holds one): CP-SAT with its
       presolve off (a fixed cost of 5-30 ms that dominates small instances) and the model's
       hints, for :func:`probe_time_budget` seconds. Proven: done.
    2. Otherwise ``lp_row(seconds)`` (e.g. the LP relaxation of a time-indexed model, within
       :func:`lp_time_budget`) adds its bound row to ``em.model`` and returns ``(row value in
       model units or None, info)``; ``info`` goes to ``em.info``.
    3. **Main solve**: CP-SAT (presolve on) for what is left of the time limit, hinted with the
       probe's incumbent.

    The result is the better incumbent of the two solves, with the largest of their bounds and
    the row (all valid for the same model: the row is implied by every feasible schedule)."""
    import dataclasses

    t0 = time.perf_counter()
    info: Any = em.info  # a dict: run_exact copies it after the solve
    tl = options.time_limit
    sr1 = None if state is None else state.get("probe")
    if sr1 is None and probe_time_budget(options) > 0:
        progress.phase("probe (cpsat, no presolve)")
        sr1 = cpsat_probe(em, options, state)
    done = tl is not None and time.perf_counter() - t0 >= float(tl)
    if sr1 is not None and (
        sr1.status in (Status.OPTIMAL, Status.INFEASIBLE) or done or options.expired() or interrupt.requested()
    ):
        info["lp_bound"] = None
        return sr1
    row = None
    if lp_row is not None:
        left = options.limit()
        if left is not None and tl is not None:
            left = max(0.0, min(left, float(tl) - (time.perf_counter() - t0)))
        budget = lp_time_budget(options) if left is None else min(lp_time_budget(options), 0.5 * left)
        progress.phase("LP bound (highs)")
        try:
            row, lp_info = lp_row(budget)
        except KeyboardInterrupt:  # a signal while its model was built: keep the probe's incumbent
            if not interrupt.requested():
                raise
            row, lp_info = None, {"lp_bound": None, "lp_skipped": "interrupted"}
        info.update(lp_info)
        if row is not None:
            progress.report(bound=row)
    if sr1 is not None and sr1.has_solution:  # the probe's incumbent is the main solve's hint
        model, sol = em.model, sr1.raw.response_proto.solution
        model.clear_hints()
        for i, val in enumerate(sol):
            model.add_hint(model.get_int_var_from_proto_index(i), val)
    o2 = options
    if tl is not None:
        o2 = options.replace(time_limit=max(0.1, float(tl) - (time.perf_counter() - t0)))
    progress.phase("solving (cpsat)")
    sr2 = solve_cpsat(em.model, o2)
    sign = -1.0 if em.model.proto.objective.scaling_factor < 0 else 1.0  # CP-SAT stores a maximisation so
    better1 = sr1 is not None and sr1.has_solution and sr1.objective is not None
    if better1 and sr2.has_solution and sr2.objective is not None:
        better1 = sign * sr1.objective < sign * sr2.objective  # type: ignore[union-attr,operator]
    best = sr1 if better1 and sr1 is not None else sr2
    bounds = [b for b in (sr2.bound, None if sr1 is None else sr1.bound, row) if b is not None and math.isfinite(b)]
    bound = (max(bounds) if sign > 0 else min(bounds)) if bounds else None
    return dataclasses.replace(best, bound=bound, runtime=time.perf_counter() - t0)
