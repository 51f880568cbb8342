"""Exact optimal job order for objective (1) (static setting): four independent back ends.

* ``highs`` - Pyomo linear-ordering MILP (:func:`~optsched.sojourn.formulation.build_lop`) solved
  by HiGHS, with the 3-cycle rows (L2) added lazily (default) or all at once.
* ``cpsat`` - the same model in CP-SAT (one worker, ``linearization_level=2``), scaled integer costs.
* ``dp`` - dynamic program over subsets (N <= 20).
* ``enumerate`` - all N! orders (N <= 10), the paper's OPTIMAL.

Every back end goes through :func:`optsched.solvers.exact.run_exact`: the objective is
recomputed from the order by the kind's evaluator, the bound never exceeds it, and the order is
called optimal only within 1e-9 relative (CP-SAT: within twice its rounding, ``eps``).

HiGHS and fractional pair costs: the pair weights ``w[i,j] = c[i,j] - c[j,i]`` of
near-identical jobs are tiny (1e-4 and below) beside the constant of (1), and HiGHS's absolute
tolerances (``mip_feasibility_tolerance`` 1e-6, also used when pruning by objective) then
accept an order up to 1e-8 worse as "optimal", with a bound above the true optimum
(``crossing_instance(14, seed=2, spread=0.001)``). The model solved by HiGHS therefore has its
objective scaled so that the largest ``|w|`` is 1 and its constant moved out
(:data:`HIGHS_TOLERANCES` are set too); the result is converted back exactly.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from optsched.core.result import Result, Status
from optsched.exceptions import InternalError, InvalidOptionError, InvalidScheduleError, SolverLimitWarning
from optsched.sojourn.dp import exhaustive_search, subset_dp
from optsched.sojourn.evaluate import PairCosts, as_indices, expected_sojourn, pair_costs
from optsched.sojourn.formulation import (
    LopVariables,
    add_transitivity,
    before_matrix,
    build_lop,
    build_lop_cpsat,
    order_from_y,
    pair_weights,
    three_cycles,
)
from optsched.sojourn.model import OBJECTIVE, SojournInstance, SojournSchedule, check_instance
from optsched.solvers import SolveOptions, SolveResult, solve_cpsat, solve_pyomo
from optsched.solvers import write_model as _write
from optsched.solvers.certify import DEFAULT_OPTIMALITY_TOLERANCE
from optsched.solvers.exact import run_exact
from optsched.solvers.model import ExactModel
from optsched.verify import verify

BACKENDS = ("highs", "cpsat", "dp", "enumerate")
#: An order is called optimal when |objective - bound| <= OPT_RTOL * objective (CP-SAT: or twice its rounding).
OPT_RTOL = DEFAULT_OPTIMALITY_TOLERANCE
#: HiGHS options for the (scaled) linear-ordering model; a user's ``solver_options`` override them.
#: ``mip_abs_gap`` is in scaled units (largest |pair weight| = 1), i.e. 1e-9 max|w| in objective (1).
HIGHS_TOLERANCES = {"mip_feasibility_tolerance": 1e-9}
HIGHS_ABS_GAP = 1e-9


def local_search(pc: PairCosts, order: list[int]) -> list[int]:
    """Adjacent-swap descent (each swap changes (1) by ``c[j,i] - c[i,j]``, Eq. 13)."""
    order = list(order)
    improved = True
    while improved:
        improved = False
        for p in range(len(order) - 1):
            i, j = order[p], order[p + 1]
            if pc.c[j, i] < pc.c[i, j] - 1e-15:
                order[p], order[p + 1] = j, i
                improved = True
    return order


def _rank_start(pc: PairCosts) -> list[int]:
    return local_search(pc, list(np.argsort((pc.a + pc.b) / pc.s, kind="stable")))


def _trivial(pc: PairCosts) -> ExactModel:
    def solve(em: ExactModel, options: SolveOptions) -> SolveResult:
        v = float(pc.d.sum())
        return SolveResult(Status.OPTIMAL, v, v, 0.0, "none", "", message="one job", raw={"order": [0]})

    return ExactModel(None, None, solve=solve)


def _highs_model(pc: PairCosts, cycles: str, solver: str, max_rounds: int) -> ExactModel:
    """The linear-ordering MILP as HiGHS solves it: objective (1) = const + max|w| * (scaled objective)."""
    if pc.n == 1:
        return _trivial(pc)
    model = build_lop(pc, cycles="all" if cycles == "all" else "none")
    const, w = pair_weights(pc)
    wmax = float(np.abs(w).max())
    k = 1.0 / wmax if wmax > 0 else 1.0
    # scaled, constant moved out (HiGHS's absolute tolerances are then relative to the pair weights)
    model.successful_sojourn_time.set_value(sum(float(w[i, j] * k) * model.y[i, j] for (i, j) in model.PAIRS))
    handles = LopVariables.of(model)

    def warm_start(order: list[int]) -> None:  # a complete MIP start of y; the lazy loop reads it back
        pos = {k: p for p, k in enumerate(order)}
        for (i, j), y in handles.y.items():
            y.value = 1.0 if pos[i] < pos[j] else 0.0

    return ExactModel(
        model,
        handles,
        scale=1.0 / k,
        offset=const,
        solve=lambda em, o: _lazy_loop(em, o, cycles=cycles, solver=solver, max_rounds=max_rounds),
        info={"objective_scale": 1.0 / k, "rounds": 0, "cycle_rows": 0},
        warm_start=warm_start,
    )


def _installed_start(v: Any) -> list[int] | None:
    """The order installed by the warm start (every y has a value), else None."""
    vals = {key: y.value for key, y in v.y.items()}
    if not vals or any(x is None for x in vals.values()):
        return None
    return order_from_y(before_matrix(v.pc.n, vals))


def _lazy_loop(em: ExactModel, options: SolveOptions, *, cycles: str, solver: str, max_rounds: int) -> SolveResult:
    """Solve, add every 3-cycle of the incumbent's tournament, repeat until it is acyclic (then it
    is optimal for the full model: feasible, and optimal for a relaxation). Objective and bound
    of the returned result are in the model's (scaled) units; ``objective`` is None when the
    returned order is the repaired/heuristic incumbent rather than the solver's."""
    hv, model = em.handles, em.model
    pc = hv.pc
    n = pc.n
    t0 = time.perf_counter()
    deadline = None if options.time_limit is None else t0 + options.time_limit
    so = dict(HIGHS_TOLERANCES) if solver == "highs" else {}
    so.update(options.solver_options)
    # objective (1) is not integral: an absolute gap such as the CLI's 0.999 (meant for integer
    # objectives) would stop early; prove to HIGHS_ABS_GAP (use mip_rel_gap to stop early)
    options = options.replace(mip_abs_gap=HIGHS_ABS_GAP, solver_options=so)
    incumbent = _rank_start(pc)
    inc_val, inc_model = pc.order_value(incumbent), None
    start = _installed_start(hv)  # also the MIP start of the first MILP (the y values)
    if start is not None and pc.order_value(start) < inc_val:
        incumbent, inc_val = list(start), pc.order_value(start)
    bound, rounds, msg, version = None, 0, "", ""
    proven = False
    while rounds < max_rounds:
        rounds += 1
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0.01:
            msg = "time limit in the lazy loop"
            break
        sr = solve_pyomo(model, solver, options.replace(time_limit=left), warm_start=start is not None and rounds == 1)
        version, msg = sr.solver_version, sr.message
        if sr.bound is not None:
            bound = sr.bound if bound is None else max(bound, sr.bound)
        if not sr.has_solution:
            break
        B = before_matrix(n, {key: y.value for key, y in hv.y.items()})
        cyc = three_cycles(B)
        if not cyc:
            order = order_from_y(B)
            val = pc.order_value(order)
            if val <= inc_val:
                incumbent, inc_val, inc_model = order, val, sr.objective
            proven = sr.status == Status.OPTIMAL
            if proven and sr.bound is None:
                bound = sr.objective if bound is None else max(bound, sr.objective)
            break
        if cycles == "all":  # cannot happen with every row present
            raise InternalError("HiGHS returned a cyclic order with every 3-cycle row present.")
        # repair the cyclic tournament into an order (never returned as is) and keep the best
        cand = local_search(pc, order_from_y(B))
        v = pc.order_value(cand)
        if v < inc_val:
            incumbent, inc_val, inc_model = cand, v, None
        add_transitivity(model, cyc)
    status = Status.OPTIMAL if proven else Status.FEASIBLE
    em.info.update(rounds=rounds, cycle_rows=len(model.CYCLES))
    return SolveResult(
        status,
        inc_model,
        bound,
        time.perf_counter() - t0,
        solver,
        version,
        message=msg,
        raw={"order": incumbent, "rounds": rounds, "rows": len(model.CYCLES), "proven": proven},
    )


def _cpsat_model(pc: PairCosts) -> ExactModel:
    """CP-SAT linear-ordering model (integer costs; ``resolution`` = its rounding ``eps``), RANK as a hint."""
    if pc.n == 1:
        return _trivial(pc)
    model, h = build_lop_cpsat(pc, hint=_rank_start(pc))

    def solve(em: ExactModel, options: SolveOptions) -> SolveResult:
        so = dict(options.solver_options)
        so.setdefault("linearization_level", 2)
        sr = solve_cpsat(em.model, options.replace(threads=options.threads or 1, solver_options=so))
        if sr.has_solution:
            B = np.zeros((pc.n, pc.n), dtype=bool)
            for (i, j), y in h.y.items():
                if sr.raw.value(y):
                    B[i, j] = True
                else:
                    B[j, i] = True
            sr.raw = {"order": order_from_y(B)}
        return sr

    def warm_start(order: list[int]) -> None:
        model.clear_hints()
        pos = {k: p for p, k in enumerate(order)}
        for (i, j), y in h.y.items():
            model.add_hint(y, pos[i] < pos[j])

    return ExactModel(
        model, h, scale=1.0 / h.scale, offset=h.constant, resolution=h.eps, solve=solve, warm_start=warm_start
    )


def _search_model(pc: PairCosts, backend: str) -> ExactModel:
    def solve(em: ExactModel, options: SolveOptions) -> SolveResult:
        t0 = time.perf_counter()
        v, order = (subset_dp if backend == "dp" else exhaustive_search)(pc)
        return SolveResult(
            Status.OPTIMAL, v, v, time.perf_counter() - t0, backend, "", message="exhaustive", raw={"order": order}
        )

    return ExactModel(None, None, solve=solve)


def best_heuristic(instance: SojournInstance, pc: PairCosts | None = None) -> SojournSchedule:
    """The default warm start: the better of RANK and SERPT orders after adjacent-swap descent."""
    pc = pc or pair_costs(instance)
    cands = [_rank_start(pc), local_search(pc, list(np.argsort(pc.a + pc.b, kind="stable")))]
    best = min(cands, key=pc.order_value)
    return SojournSchedule(order=[instance.jobs[k].id for k in best])


def build_exact(pc: PairCosts, backend: str, *, cycles: str = "lazy", max_rounds: int = 200) -> ExactModel:
    """The model :func:`solve_exact` solves for ``backend`` (see the module doc)."""
    if backend in ("dp", "enumerate"):
        return _search_model(pc, backend)
    if backend == "cpsat":
        return _cpsat_model(pc)
    return _highs_model(pc, cycles, backend, max_rounds)


def _legacy(
    em: ExactModel, pc: PairCosts, options: SolveOptions, write_model: str | None
) -> tuple[SolveResult, dict[str, Any]]:
    if write_model and em.model is not None:
        _write(em.model, write_model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        sr = em.solve(em, options)
    order = sr.raw["order"] if sr.has_solution else None
    out = {
        "order": order,
        "objective": None if order is None else pc.order_value(order),
        "bound": None if sr.bound is None else em.offset + em.scale * sr.bound - em.resolution,
        "message": sr.message,
        "solver": sr.solver,
        "solver_version": sr.solver_version,
    }
    return sr, out


def solve_lop_highs(
    pc: PairCosts,
    options: SolveOptions,
    *,
    cycles: str = "lazy",
    solver: str = "highs",
    write_model: str | None = None,
    max_rounds: int = 200,
) -> dict[str, Any]:
    """Solve the linear-ordering MILP with HiGHS (or another Pyomo MILP solver), lazily adding
    3-cycle rows (``cycles="lazy"``) or with all C(N,3) rows (``"all"``); a dict with ``order``,
    ``objective`` (recomputed), ``bound``, ``rounds``, ``rows``, ``proven``, ``message``.
    Uncertified: :func:`solve_exact` is the certified entry point."""
    sr, out = _legacy(_highs_model(pc, cycles, solver, max_rounds), pc, options, write_model)
    raw = sr.raw if isinstance(sr.raw, dict) else {}
    out.update(
        rounds=raw.get("rounds", 0), rows=raw.get("rows", 0), proven=raw.get("proven", sr.status == Status.OPTIMAL)
    )
    return out


def solve_lop_cpsat(pc: PairCosts, options: SolveOptions, *, write_model: str | None = None) -> dict[str, Any]:
    """Solve the linear-ordering model with CP-SAT (all 3-cycle rows; RANK order as a hint); a
    dict like :func:`solve_lop_highs` (``bound`` already lowered by the rounding ``eps``)."""
    return _legacy(_cpsat_model(pc), pc, options, write_model)[1]


def solve_exact(
    instance: SojournInstance,
    *,
    backend: str = "highs",
    options: SolveOptions | None = None,
    seed=None,
    initial="heuristic",
    write_model: str | None = None,
    cycles: str = "lazy",
    pc: PairCosts | None = None,
) -> Result:
    """Optimal non-preemptive job order for objective (1) (one server, all arrivals 0).

    By Thm III.1 an optimal *static* schedule never preempts, so the best order is the optimum
    over static schedules (the paper's OPTIMAL); see :mod:`optsched.sojourn.adaptive` for
    adaptive policies.

    Parameters
    ----------
    instance : SojournInstance
    backend : {"highs", "cpsat", "dp", "enumerate"} or a Pyomo MILP solver name
    options : SolveOptions
        Time limit (default 60 s), threads (default 1), seed; ``dp``/``enumerate`` ignore them.
        For HiGHS, :data:`HIGHS_TOLERANCES` unless ``solver_options`` set them.
    seed : int or numpy.random.Generator, optional
        Overrides ``options.seed``.
    initial : "heuristic", SojournSchedule (an order) or None
        Warm start: by default the better of RANK and SERPT after adjacent-swap descent
        (:func:`best_heuristic`); checked by the verifier; CP-SAT hints, a HiGHS MIP start and
        the lazy loop's first incumbent. The result is never worse than it.
    write_model : str, optional
        Write the model that is solved (.lp/.mps for Pyomo, .pb/.pbtxt for CP-SAT); the Pyomo
        model's objective is scaled (module doc). Nothing is written for ``dp``/``enumerate``
        or a single job (no model).
    cycles : {"lazy", "all"}
        3-cycle rows for the MILP: added lazily (default) or all up front.
    pc : PairCosts, optional
        Precomputed pair costs.

    Returns
    -------
    Result
        Certified by :func:`optsched.solvers.exact.run_exact`: ``schedule`` (an order),
        ``objective`` recomputed exactly from it, ``bound`` (a valid lower bound on objective (1),
        never above the objective), ``gap``, ``status`` OPTIMAL only when ``objective - bound``
        is within ``info["optimality_tolerance"]`` (1e-9 objective; CP-SAT: at least twice its
        rounding); otherwise FEASIBLE with a :class:`SolverLimitWarning`.

    Raises
    ------
    InvalidInstanceError
        Arrivals or several servers (not the static setting).
    InvalidScheduleError
        ``initial`` is not a feasible order of this instance (names the job and the verifier's label).
    ModelTooLargeError
        ``dp`` above N = 20, or a model above the size limit.

    Guarantee
    ---------
    ``status == OPTIMAL``  =>  ``objective <= min over orders of E[S] + info["optimality_tolerance"]``.

    Notes
    -----
    Pair costs O(N^3). ``dp`` O(2^N N^2); ``enumerate`` O(N! N^2); the MILP has N(N-1)/2 binaries
    and up to C(N,3) rows.

    References
    ----------
    Yao, Paolieri, Golubchik, Eq. (1), Thm III.1-III.2; ``formulations/sojourn.md#exact-order``.

    Examples
    --------
    >>> import optsched
    >>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    >>> r = solve_exact(inst, options=SolveOptions(time_limit=10, threads=1))
    >>> r.status.value, r.schedule.order, round(r.objective, 10)
    ('optimal', (1, 2), 9.1)
    """
    check_instance(instance)
    if not isinstance(backend, str):
        raise InvalidOptionError(f"The 'backend' option must be one of {BACKENDS}; got {backend!r}.")
    if cycles not in ("lazy", "all"):
        raise InvalidOptionError(f"The 'cycles' option must be 'lazy' or 'all'; got {cycles!r}.")
    pc = pc or pair_costs(instance)
    if isinstance(initial, str):
        if initial != "heuristic":
            raise InvalidOptionError(
                f"The 'initial' option must be 'heuristic', a SojournSchedule or None; got {initial!r}."
            )
        initial = best_heuristic(instance, pc)

    def decode(em: ExactModel, sr: SolveResult) -> SojournSchedule:
        return SojournSchedule(order=[instance.jobs[k].id for k in sr.raw["order"]])

    def build(inst, b, o) -> ExactModel:
        em = build_exact(pc, b, cycles=cycles)
        if em.warm_start is None:
            return em
        install = em.warm_start
        return replace(em, warm_start=lambda s: install(as_indices(instance, list(s.order))))

    def check(s):
        if not isinstance(s, SojournSchedule) or not s.is_order:
            raise InvalidScheduleError(
                f"The initial schedule of sojourn-exact must be a SojournSchedule with an "
                f"'order' (the exact models are over orders); got {s!r}."
            )
        return verify(instance, s).violations

    r = run_exact(
        instance,
        build=build,
        decode=decode,
        evaluate=lambda s: expected_sojourn(instance, s, pc),
        backend=backend,
        algorithm=f"sojourn-exact[{backend}]",
        objective_name=OBJECTIVE,
        options=options,
        seed=seed,
        write_model=write_model,
        initial=initial,
        check_initial=check,
        own_backends=("cpsat", "dp", "enumerate"),
        initial_bound=0.0,
        bound_name="none: no combinatorial bound on the expected sojourn time; 0, the objective's sign",
    )
    r.info["backend"] = backend
    return r
