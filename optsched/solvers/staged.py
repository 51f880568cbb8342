"""CP-SAT solves whose strong bound costs time: the LP relaxation of a Pyomo MILP as a bound row,
a short probe without presolve, and the staged solve that pays for the bound only when the probe
did not prove the optimum (``formulations/rigid.md#staged-cpsat``).

Tested in ``tests/solvers/test_portfolio.py`` and ``tests/solvers/test_signal_anywhere.py``.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from optsched.core.result import Status
from optsched.exceptions import SolverLimitWarning
from optsched.solvers import interrupt, progress
from optsched.solvers.cpsat_backend import solve_cpsat
from optsched.solvers.model import ExactModel
from optsched.solvers.options import SolveOptions, SolveResult
from optsched.solvers.pyomo_backend import solve_pyomo

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
