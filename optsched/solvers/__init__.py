"""The one place that talks to HiGHS (via Pyomo/highspy) and OR-Tools CP-SAT.

``SolveOptions -> SolveResult(status, objective, bound, gap, runtime, solver, ...)``.
Builders (in each paper package) build models and never solve; solving is
:func:`solve_pyomo` or :func:`solve_cpsat`, and every paper's ``solve_exact`` goes through
:func:`run_exact` (build, write, solve, decode, recompute, certify; :mod:`optsched.solvers.exact`).
"""

from optsched.solvers.cpsat_backend import new_cp_model, solve_cpsat
from optsched.solvers.exact import run_exact
from optsched.solvers.info import available_solvers, solver_versions
from optsched.solvers.model import ExactModel
from optsched.solvers.options import SolveOptions, SolveResult
from optsched.solvers.pyomo_backend import solve_pyomo, write_model
from optsched.solvers.size import DEFAULT_MAX_SIZE, check_model_size, max_model_size


def solve(model, backend: str = "highs", options: SolveOptions | None = None) -> SolveResult:
    """Solve ``model`` with ``backend``: ``"cpsat"`` for a CP-SAT model, else a Pyomo solver name.

    Examples
    --------
    >>> import optsched
    >>> from optsched.rigid import build_time_indexed
    >>> from optsched.solvers import SolveOptions, solve
    >>> m = build_time_indexed(optsched.load_instance("toy:rigid-2x2-five"))
    >>> solve(m, "highs", SolveOptions(time_limit=10)).objective
    19.0
    """
    if backend == "cpsat":
        return solve_cpsat(model, options)
    return solve_pyomo(model, backend, options)


__all__ = [
    "SolveOptions",
    "SolveResult",
    "solve",
    "solve_pyomo",
    "solve_cpsat",
    "new_cp_model",
    "run_exact",
    "ExactModel",
    "write_model",
    "check_model_size",
    "max_model_size",
    "DEFAULT_MAX_SIZE",
    "available_solvers",
    "solver_versions",
]
