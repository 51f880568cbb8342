"""Which solvers are installed and loadable here (for `optsched info`).

Tested in ``tests/solvers/test_solvers.py``.
"""

from __future__ import annotations

import importlib.metadata as md


def solver_versions() -> dict[str, str]:
    """Installed versions of the solver back ends and the main libraries (``"not installed"`` for a
    missing one), as ``optsched info`` prints them.

    Examples
    --------
    >>> from optsched.solvers import solver_versions
    >>> solver_versions()["highspy"]
    '1.14.0'
    """
    out = {}
    for pkg in (
        "pyomo",
        "highspy",
        "ortools",
        "numpy",
        "scipy",
        "pandas",
        "networkx",
        "scikit-learn",
        "matplotlib",
        "dask",
        "distributed",
    ):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def available_solvers() -> dict[str, bool]:
    """Try each back end for real: importable *and* loadable (catches the libhighs clash).

    Examples
    --------
    >>> from optsched.solvers import available_solvers
    >>> found = available_solvers()
    >>> found["highs"], found["cpsat"]
    (True, True)
    """
    out: dict[str, bool] = {}
    try:
        import pyomo.environ as pyo
        from pyomo.contrib.solver.common.factory import SolverFactory

        out["highs"] = bool(SolverFactory("highs").available())
    except Exception:
        out["highs"] = False
    try:
        from ortools.sat.python import cp_model

        m = cp_model.CpModel()
        x = m.new_bool_var("x")
        m.add(x == 1)
        out["cpsat"] = cp_model.CpSolver().solve(m) == cp_model.OPTIMAL
    except Exception:
        out["cpsat"] = False
    try:
        import pyomo.environ as pyo

        for name in ("gurobi", "cplex", "glpk", "cbc"):
            try:
                s = pyo.SolverFactory(name)
                out[name] = bool(s is not None and s.available(exception_flag=False))
            except Exception:
                out[name] = False
    except Exception:
        pass
    return out
