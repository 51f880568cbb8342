"""What an exact solve works on: :class:`ExactModel` (a built model and how its objective relates
to the kind's), its size (:func:`model_summary`), and the solve of a model without its own.

Tested in ``tests/solvers/test_portfolio.py`` and ``tests/solvers/test_exact.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from optsched.solvers.cpsat_backend import solve_cpsat
from optsched.solvers.options import SolveOptions, SolveResult
from optsched.solvers.pyomo_backend import solve_pyomo


@dataclass(frozen=True)
class ExactModel:
    """A built exact model and how its objective relates to the kind's objective.

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel or ortools.sat.python.cp_model.CpModel
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
    if is_cpsat_model(model):
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


def is_cpsat_model(model: Any) -> bool:
    """Whether ``model`` is a CP-SAT ``CpModel`` (else a Pyomo model, or ``None``)."""
    return hasattr(model, "ExportToFile") and hasattr(model, "Proto")


def default_solve(em: ExactModel, backend: str, options: SolveOptions, warm: bool) -> SolveResult:
    """The solve of a model without its own ``solve``: CP-SAT for a ``CpModel``, else
    :func:`~optsched.solvers.solve_pyomo` with ``backend`` (``warm``: pass the MIP start)."""
    if is_cpsat_model(em.model):
        return solve_cpsat(em.model, options)
    return solve_pyomo(em.model, backend, options, warm_start=warm)
