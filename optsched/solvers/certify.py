"""Certification of an exact solve, for every paper and back end (:func:`certify`).

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

What the solve was (:class:`ExactCall`) and which phase ran out of time (:func:`limit_phase`)
are here too: :func:`optsched.solvers.exact.run_exact` builds the one and reports the other.

Tested in ``tests/solvers/test_limit_phase.py`` and ``tests/solvers/test_exact.py``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from optsched.core.result import Result, Status, relative_gap
from optsched.exceptions import InternalError
from optsched.solvers import interrupt, progress
from optsched.solvers.model import ExactModel, model_summary
from optsched.solvers.options import SolveOptions, SolveResult

#: A result is called optimal when its recomputed relative gap is at most this (see the module doc).
DEFAULT_OPTIMALITY_TOLERANCE = 1e-9
#: Decoder/solver agreement: |recomputed - solver objective| <= resolution + AGREEMENT_RTOL * max(1, |objective|)
#: (the solvers' own feasibility tolerances are 1e-6; a larger difference is a modelling or decoding bug).
AGREEMENT_RTOL = 1e-6


@dataclass(frozen=True)
class ExactCall:
    """One exact solve as :func:`~optsched.solvers.exact.run_exact` was asked for it (its
    arguments, checked): what is built, decoded and evaluated, how the result is labelled and
    certified. The options are not here: the solve may narrow them (a fractional objective's
    absolute gap)."""

    instance: Any
    build: Callable[[Any, str, SolveOptions], ExactModel]
    decode: Callable[[ExactModel, SolveResult], Any]
    evaluate: Callable[[Any], float]
    backend: str
    algorithm: str
    objective_name: str
    minimize: bool
    tolerance: float
    initial: Any = None
    check_initial: Callable[[Any], Any] | None = None
    initial_bound: float | None = None
    write_model: str | None = None
    bound_name: str | None = None
    stop_at_bound: bool = False


#: A solve that ends less than this share of its time limit (and at least LIMIT_MARGIN_SECONDS)
#: before the deadline, without proving, ran out of time: ``info["limit_reached_in"]`` names the
#: phase that was running.
LIMIT_MARGIN_SHARE, LIMIT_MARGIN_SECONDS = 0.02, 0.25


def phase_at(tl: progress.Timeline | None, instant: float | None) -> str | None:
    """The phase of ``tl`` running at ``instant`` ("before the call" when it began later)."""
    if tl is None or instant is None:
        return None
    return tl.at(instant) or "before the call"


def limit_phase(
    tl: progress.Timeline | None,
    options: SolveOptions,
    cut: str | None,
    status: Status,
    certifying: float,
    solver_stopped: bool = False,
) -> str | None:
    """The phase that ran out of time (``info["limit_reached_in"]``): ``None`` for a proven (or
    interrupted, infeasible) result or one that stopped with time to spare; the phase cut short
    for lack of time (``cut``); else the phase running at the deadline; else, when the solver
    stopped without a proof (``solver_stopped``: a solver stops only at a proof, its time limit
    or Ctrl-C) or the deadline is within the margin, the last phase before the certification
    (``certifying``, when it began)."""
    if status in (Status.OPTIMAL, Status.INTERRUPTED, Status.INFEASIBLE, Status.UNBOUNDED):
        return None
    if cut is not None:
        return cut
    left = options.time_left()
    if left is None:
        return phase_at(tl, certifying - 1e-6) if solver_stopped else None
    near = left <= max(LIMIT_MARGIN_SECONDS, LIMIT_MARGIN_SHARE * float(options.time_limit or 0.0))
    if not (near or solver_stopped):
        return None
    assert options.deadline is not None  # the phase at the deadline, the solve's when it passed while certifying
    return phase_at(tl, min(options.deadline, certifying - 1e-6))


def certify(
    call: ExactCall,
    em: ExactModel | None,
    sr: SolveResult | None,
    stopped: str | None,
    *,
    options: SolveOptions,
    init_obj: float | None,
    warm: bool,
    info_written: list[str] | None,
) -> Result:
    """Decode, recompute and certify (the module doc) what ``call`` solved: ``em`` and ``sr``, the
    model built and its solver's result (``None``: not built, not solved; ``stopped`` says why);
    ``options`` as solved, ``init_obj`` the initial schedule's objective, ``warm`` whether it was
    installed, ``info_written`` the model files written."""
    instance, decode, evaluate, backend = call.instance, call.decode, call.evaluate, call.backend
    minimize, tolerance, initial, initial_bound = call.minimize, call.tolerance, call.initial, call.initial_bound
    algorithm, objective_name = call.algorithm, call.objective_name
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
    if call.bound_name is not None:
        info["cheap_bound"] = call.bound_name
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
