"""Solver layer: statuses, bounds and gaps, duals, model export, missing solvers, size guard."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pyomo.environ as pyo
import pytest

from optsched.core import Status
from optsched.exceptions import (
    InvalidOptionError,
    ModelTooLargeError,
    SolverLimitWarning,
    SolverUnavailableError,
)
from optsched.solvers import (
    SolveOptions,
    check_model_size,
    new_cp_model,
    solve_cpsat,
    solve_pyomo,
    write_model,
)

ONE = SolveOptions(time_limit=30, threads=1)


def _knapsack(n=4):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    w = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14][:n]
    m.cap = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in range(n)) <= sum(w) // 2)
    m.obj = pyo.Objective(expr=sum((w[i] + (i % 3)) * m.x[i] for i in range(n)), sense=pyo.maximize)
    return m


def test_mip_optimal_with_bound_and_zero_gap():
    m = _knapsack()
    r = solve_pyomo(m, "highs", ONE)
    assert r.status == Status.OPTIMAL and r.gap == pytest.approx(0, abs=1e-9)
    assert r.objective == pytest.approx(r.bound)
    # the incumbent is loaded into the model
    assert pyo.value(m.obj) == pytest.approx(r.objective)
    assert r.solver == "highs" and r.solver_version.startswith("1.")


def test_lp_duals():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.c1 = pyo.Constraint(expr=m.x + 2 * m.y >= 4)
    m.obj = pyo.Objective(expr=3 * m.x + 2 * m.y)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    r = solve_pyomo(m, "highs", ONE.replace(duals=True))
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(4.0)
    assert r.duals["c1"] == pytest.approx(1.0)
    assert m.dual[m.c1] == pytest.approx(1.0)


def test_infeasible_and_unbounded():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x >= 5)
    m.o = pyo.Objective(expr=m.x)
    assert solve_pyomo(m, "highs", ONE).status == Status.INFEASIBLE
    u = pyo.ConcreteModel()
    u.x = pyo.Var()
    u.o = pyo.Objective(expr=u.x)
    assert solve_pyomo(u, "highs", ONE).status in (Status.UNBOUNDED, Status.INFEASIBLE)


def test_time_limit_is_never_reported_optimal():
    # A hard knapsack-like MIP stopped after a tiny time limit: FEASIBLE or NO_SOLUTION, with a warning.
    from optsched.rigid import build_time_indexed, random_instance

    inst = random_instance(40, n_servers=4, gpus_per_server=8, single_server=0.5, max_work=12, arrival_span=30, seed=5)
    m = build_time_indexed(inst)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = solve_pyomo(m, "highs", SolveOptions(time_limit=0.05, threads=1))
    if r.status != Status.OPTIMAL:  # (a machine fast enough to prove it in 50 ms would be fine)
        assert r.status in (Status.FEASIBLE, Status.NO_SOLUTION)
        assert any(issubclass(x.category, SolverLimitWarning) for x in w)
        if r.objective is not None and r.bound is not None:
            assert r.gap >= 0


def test_cpsat_status_and_values():
    m = new_cp_model()
    x = m.NewIntVar(0, 10, "x")
    y = m.NewIntVar(0, 10, "y")
    m.Add(x + y <= 7)
    m.Add(x - y >= 1)
    m.Maximize(3 * x + y)
    r = solve_cpsat(m, SolveOptions(time_limit=5, threads=1))
    assert r.status == Status.OPTIMAL and r.objective == 21 and r.bound == 21
    assert r.raw.Value(x) == 7
    m2 = new_cp_model()
    z = m2.NewIntVar(0, 1, "z")
    m2.Add(z >= 2)
    assert solve_cpsat(m2, SolveOptions(time_limit=5, threads=1)).status == Status.INFEASIBLE


def test_write_lp_mps_and_cpsat(tmp_path):
    m = _knapsack()
    lp = write_model(m, tmp_path / "k.lp").read_text()
    assert "cap" in lp and ("x(0)" in lp or "x[0]" in lp)
    assert (write_model(m, tmp_path / "k.mps")).stat().st_size > 0
    cm = new_cp_model()
    cm.NewBoolVar("b")
    assert write_model(cm, tmp_path / "c.pbtxt").exists()
    with pytest.raises(InvalidOptionError, match=r"\.lp or \.mps"):
        write_model(m, tmp_path / "k.txt")


def test_missing_solver_says_how_to_install():
    with pytest.raises(SolverUnavailableError, match=r"(?i)install"):
        solve_pyomo(_knapsack(), "cplex", ONE)
    with pytest.raises(SolverUnavailableError):
        solve_pyomo(_knapsack(), "no_such_solver_xyz", ONE)


@pytest.mark.parametrize(
    "bad", [{"time_limit": -1}, {"mip_rel_gap": 2}, {"threads": 0}, {"seed": -3}, {"time_limit": "10"}]
)
def test_bad_options(bad):
    with pytest.raises(InvalidOptionError):
        SolveOptions(**bad)


def test_model_size_guard():
    assert check_model_size("m", 10, 10, limit=100) == 20
    with pytest.raises(ModelTooLargeError, match=r"above the limit of 100"):
        check_model_size("m", 90, 20, limit=100)


def test_builder_refuses_before_building():
    from optsched.rigid import build_time_indexed, random_instance

    inst = random_instance(30, n_servers=2, gpus_per_server=4, max_work=20, seed=1)
    with pytest.raises(ModelTooLargeError, match="rigid time-indexed"):
        build_time_indexed(inst, max_size=1000)


@pytest.mark.parametrize("first", ["ortools", "pyomo"])
def test_highspy_and_ortools_load_in_either_order(first):
    """highspy and ortools each ship libhighs.so.1; the pinned versions must coexist (CONVENTIONS)."""
    code = textwrap.dedent(f"""
        if "{first}" == "ortools":
            from ortools.sat.python import cp_model
        import pyomo.environ as pyo
        from pyomo.contrib.solver.common.factory import SolverFactory
        assert SolverFactory("highs").available(), "highs not available"
        m = pyo.ConcreteModel(); m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 9))
        m.c = pyo.Constraint(expr=2 * m.x <= 7); m.o = pyo.Objective(expr=-m.x)
        r = SolverFactory("highs").solve(m)
        assert abs(pyo.value(m.x) - 3) < 1e-9
        from ortools.sat.python import cp_model
        cm = cp_model.CpModel(); y = cm.NewIntVar(0, 9, "y"); cm.Add(2 * y <= 7); cm.Maximize(y)
        s = cp_model.CpSolver(); assert s.Solve(cm) == cp_model.OPTIMAL and s.Value(y) == 3
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


class _StuckSolver:
    """A CP-SAT stand-in whose solve stays in one step past its limit until it is told to stop."""

    def __init__(self):
        import threading

        self.stopped = threading.Event()

    def solve(self, model, callback=None):
        assert self.stopped.wait(30), "never stopped"
        return "stopped"

    def stop_search(self):
        self.stopped.set()


@pytest.mark.parametrize("in_main_thread", [True, False])
def test_a_cpsat_solve_past_its_limit_is_stopped_from_outside(in_main_thread):
    # CP-SAT checks max_time_in_seconds between its steps; a long step (presolve of a large A-SRPT
    # model) ran a minute past it. The call stops the search itself LIMIT_GRACE s after the limit.
    import threading

    from optsched.solvers import cpsat_backend

    solver, out = _StuckSolver(), {}
    if in_main_thread:
        out["code"] = cpsat_backend._run(solver, object(), None, 0.0)
    else:
        t = threading.Thread(target=lambda: out.update(code=cpsat_backend._run(solver, object(), None, 0.0)))
        t.start()
        t.join(30)
    assert out.get("code") == "stopped" and solver.stopped.is_set()
