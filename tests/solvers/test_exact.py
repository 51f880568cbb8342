"""The shared exact-solve flow certifies what it returns: the objective is the evaluator's, the
bound is never beyond it, ``optimal`` only within the stated tolerance, a decoder that disagrees
with its solver is a bug (InternalError), limits warn once."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core.result import Status, relative_gap
from optsched.exceptions import InternalError, InvalidOptionError, SolverLimitWarning
from optsched.solvers import SolveOptions, SolveResult
from optsched.solvers.certify import DEFAULT_OPTIMALITY_TOLERANCE
from optsched.solvers.exact import DEFAULT_EXACT_OPTIONS, resolve_options, run_exact
from optsched.solvers.model import ExactModel


class _Inst:
    name = "fake"


def _fake(obj, bound, *, status=Status.OPTIMAL, scale=1.0, offset=0.0, resolution=0.0, step=None):
    """build/decode for a 'solver' that reports (obj, bound) in model units; the schedule is the
    true value, which the evaluator returns."""

    def build(inst, backend, options):
        def solve(em, o):
            return SolveResult(status, obj, bound, 0.0, "fake", "1", message="done", raw=o)

        return ExactModel(None, scale=scale, offset=offset, resolution=resolution, step=step, solve=solve)

    return build


def _run(obj, bound, true=None, **kw):
    sense = kw.pop("sense", "min")
    tol = kw.pop("tolerance", DEFAULT_OPTIMALITY_TOLERANCE)
    build = _fake(obj, bound, **kw)
    em_scale, em_off = kw.get("scale", 1.0), kw.get("offset", 0.0)
    return run_exact(
        _Inst(),
        build=build,
        decode=lambda em, sr: {"value": em_off + em_scale * obj if true is None else true},
        evaluate=lambda s: s["value"],
        backend="fake",
        algorithm="t-exact",
        objective_name="f",
        sense=sense,
        tolerance=tol,
    )


def _quiet(f, *a, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = f(*a, **kw)
    return r, [x for x in w if issubclass(x.category, SolverLimitWarning)]


def test_bound_beyond_objective_is_clamped_and_recorded_min_and_max():
    # the issue-12 pattern: a solver's bound 1e-8 above its own incumbent's true value
    r, w = _quiet(_run, 4.6265425, 4.62654253783102, true=4.6265425)
    assert r.bound <= r.objective and r.info["solver_bound"] == pytest.approx(4.62654253783102, rel=1e-15)
    assert r.status == Status.OPTIMAL and not w
    r, w = _quiet(_run, 10.0, 9.5, sense="max")  # an upper bound below the incumbent
    assert r.bound == r.objective and r.info["solver_bound"] == 9.5 and r.status == Status.OPTIMAL


def test_solver_optimal_but_gap_above_tolerance_is_feasible_with_one_warning():
    r, w = _quiet(_run, 100.0, 100.0 - 1e-6)  # 1e-8 relative > 1e-9
    assert r.status == Status.FEASIBLE and len(w) == 1 and "tolerance" in str(w[0].message)
    assert r.gap == pytest.approx(1e-8, rel=1e-3)
    r, w = _quiet(_run, 100.0, 100.0 - 1e-6, tolerance=1e-7)  # the tolerance is an option
    assert r.status == Status.OPTIMAL and not w


def test_time_limited_but_closed_gap_is_optimal_and_open_gap_warns():
    r, w = _quiet(_run, 7.0, 7.0, status=Status.FEASIBLE)
    assert r.status == Status.OPTIMAL and not w
    r, w = _quiet(_run, 7.0, 6.0, status=Status.FEASIBLE)
    assert r.status == Status.FEASIBLE and len(w) == 1 and "stopped" in str(w[0].message)


def test_decoder_disagreeing_with_solver_is_an_internal_error():
    with pytest.raises(InternalError, match="disagree"):
        _run(10.0, 10.0, true=10.1)
    # within the model's resolution it is not
    r, w = _quiet(_run, 10.0, 10.0, true=10.05, resolution=0.05)
    assert r.objective == pytest.approx(10.05) and r.status == Status.OPTIMAL and not w


def test_integer_step_rounds_the_bound_up_and_closes_the_gap():
    r = _run(19.0, 18.2, step=1.0)
    assert r.bound == pytest.approx(19.0) and r.status == Status.OPTIMAL
    r, w = _quiet(_run, 19.0, 17.9, step=1.0, status=Status.FEASIBLE)
    assert r.bound == pytest.approx(18.0) and r.status == Status.FEASIBLE and w
    r = _run(19.0, 19.3, step=1.0, sense="max")
    assert r.bound == pytest.approx(19.0) and r.status == Status.OPTIMAL


def test_resolution_lowers_the_bound_and_is_the_stated_tolerance():
    r = _run(50.0, 50.0, resolution=1e-4)
    assert r.bound == pytest.approx(50.0 - 1e-4) and r.status == Status.OPTIMAL
    assert r.info["optimality_tolerance"] == pytest.approx(2e-4)


def test_scale_and_offset_convert_model_units():
    r = _run(2.0, 1.5, scale=0.5, offset=10.0, status=Status.FEASIBLE, tolerance=0.1)
    assert r.objective == pytest.approx(11.0) and r.bound == pytest.approx(10.75)
    assert r.info["solver_objective"] == pytest.approx(11.0)


@settings(max_examples=200, deadline=None)
@given(
    obj=st.floats(-1e6, 1e6),
    d=st.floats(-1e-3, 1e3),
    rel=st.sampled_from([0.0, 1e-12, 1e-9, 1e-6]),
    sense=st.sampled_from(["min", "max"]),
    solver_opt=st.booleans(),
)
def test_certification_invariants(obj, d, rel, sense, solver_opt):
    bound = obj - d if sense == "min" else obj + d
    r, w = _quiet(
        _run, obj, bound, sense=sense, tolerance=rel, status=Status.OPTIMAL if solver_opt else Status.FEASIBLE
    )
    assert r.objective == obj
    assert (r.bound <= r.objective) if sense == "min" else (r.bound >= r.objective)
    assert r.gap == relative_gap(r.objective, r.bound)
    within = abs(r.objective - r.bound) <= rel * max(abs(obj), 1e-10)
    assert (r.status == Status.OPTIMAL) == within
    assert bool(w) == (not within)


def test_no_solution_and_infeasible_pass_through():
    r, w = _quiet(_run, None, None, status=Status.INFEASIBLE)
    assert r.status == Status.INFEASIBLE and r.objective is None and not w
    r, w = _quiet(_run, None, 3.0, status=Status.NO_SOLUTION)
    assert r.status == Status.NO_SOLUTION and r.schedule is None and w


def test_options_and_seed():
    assert resolve_options(None) is DEFAULT_EXACT_OPTIONS
    assert resolve_options(None, 7).seed == 7
    a = resolve_options(SolveOptions(seed=3), np.random.default_rng(5))
    b = resolve_options(SolveOptions(seed=3), np.random.default_rng(5))
    assert a.seed == b.seed
    for bad in (-1, 1.5, "x", True):
        with pytest.raises(InvalidOptionError, match="'seed'"):
            resolve_options(None, bad)
    with pytest.raises(InvalidOptionError, match="'options'"):
        resolve_options({"time_limit": 1})
    with pytest.raises(InvalidOptionError, match="'sense'"):
        _run(1.0, 1.0, sense="minimise")
    with pytest.raises(InvalidOptionError, match="'tolerance'"):
        _run(1.0, 1.0, tolerance=2.0)
    seen = {}

    def build(inst, backend, options):
        seen["o"] = options
        return _fake(1.0, 1.0)(inst, backend, options)

    run_exact(
        _Inst(),
        build=build,
        decode=lambda em, sr: 1.0,
        evaluate=float,
        backend="fake",
        algorithm="a",
        objective_name="f",
        seed=11,
        options=SolveOptions(time_limit=5),
    )
    assert seen["o"].seed == 11 and seen["o"].time_limit == 5


def _knapsack(values, weights, cap):
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, len(values) - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(weights[i] * m.x[i] for i in m.I) <= cap)
    m.obj = pyo.Objective(expr=sum(values[i] * m.x[i] for i in m.I), sense=pyo.maximize)
    return m


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_real_solvers_maximisation_against_enumeration(backend, tmp_path):
    import itertools

    rng = np.random.default_rng(4)
    values, weights = rng.integers(1, 30, 12).tolist(), rng.integers(1, 20, 12).tolist()
    cap = sum(weights) // 3
    best = max(
        sum(v for v, b in zip(values, bits, strict=True) if b)
        for bits in itertools.product((0, 1), repeat=12)
        if sum(w for w, b in zip(weights, bits, strict=True) if b) <= cap
    )

    def build(inst, b, o):
        if b == "cpsat":
            from optsched.solvers import new_cp_model

            m = new_cp_model()
            x = [m.new_bool_var(f"x{i}") for i in range(12)]
            m.add(sum(w * v for w, v in zip(weights, x, strict=True)) <= cap)
            m.maximize(sum(v * xi for v, xi in zip(values, x, strict=True)))
            return ExactModel(m, x, step=1.0)
        return ExactModel(_knapsack(values, weights, cap), None, step=1.0)

    def decode(em, sr):
        if em.handles is not None:
            return [int(sr.raw.value(v)) for v in em.handles]
        return [int(round(em.model.x[i].value)) for i in em.model.I]

    path = tmp_path / ("m.pbtxt" if backend == "cpsat" else "m.lp")
    r = run_exact(
        _Inst(),
        build=build,
        decode=decode,
        evaluate=lambda s: float(sum(v for v, b in zip(values, s, strict=True) if b)),
        backend=backend,
        algorithm="knapsack",
        objective_name="value",
        sense="max",
        options=SolveOptions(time_limit=20, threads=1),
        write_model=str(path),
    )
    assert r.status == Status.OPTIMAL and math.isclose(r.objective, best) and r.bound >= r.objective
    assert sum(w for w, b in zip(weights, r.schedule, strict=True) if b) <= cap
    assert path.stat().st_size > 0


def test_unknown_or_missing_back_end_is_refused_before_any_model_is_built():
    from optsched.exceptions import SolverUnavailableError
    from optsched.solvers.exact import check_backend

    built = []

    def build(inst, b, o):
        built.append(b)
        return _fake(1.0, 1.0)(inst, b, o)

    def run(backend):
        return run_exact(
            _Inst(),
            build=build,
            decode=lambda em, sr: 1.0,
            evaluate=float,
            backend=backend,
            algorithm="a",
            objective_name="f",
            own_backends=("cpsat", "dp"),
        )

    with pytest.raises(InvalidOptionError, match="Unknown back end 'higs'"):
        run("higs")
    with pytest.raises(InvalidOptionError, match="'backend'"):
        run(3)
    try:
        check_backend("glpk")
    except SolverUnavailableError as e:  # not installed here: says how to install it
        assert "Install" in str(e)
        with pytest.raises(SolverUnavailableError):
            run("glpk")
    assert built == []
    assert run("dp").optimal and run("highs").optimal and built == ["dp", "highs"]


def test_model_summary_pyomo_and_cpsat():
    from optsched.solvers import new_cp_model
    from optsched.solvers.model import model_summary

    m = _knapsack([3, 4, 5], [2, 3, 4], 5)
    s = model_summary(ExactModel(m, info={"horizon_slots": 7}))
    assert (s["kind"], s["variables"], s["constraints"], s["nonzeros"], s["horizon"]) == ("pyomo", 3, 1, 3, 7)
    cp = new_cp_model()
    x = [cp.new_bool_var(f"x{i}") for i in range(3)]
    cp.add(x[0] + x[1] + x[2] <= 2)
    cp.add(x[0] + x[1] >= 1)
    s = model_summary(cp)
    assert (s["kind"], s["variables"], s["constraints"], s["nonzeros"]) == ("cp-sat", 3, 2, 5)
    seen = run_exact(
        _Inst(),
        build=lambda i, b, o: ExactModel(m, solve=lambda em, o: SolveResult(Status.OPTIMAL, 1.0, 1.0, 0.0, "fake", "")),
        decode=lambda em, sr: 1.0,
        evaluate=float,
        backend="fake",
        algorithm="a",
        objective_name="f",
        options=SolveOptions(verbose=True),
    )
    assert seen.info["model_summary"]["variables"] == 3


def test_optimality_tolerance_is_a_solve_option():
    def run(options):
        return _quiet(
            run_exact,
            _Inst(),
            build=_fake(100.0, 100.0 - 1e-6),
            decode=lambda em, sr: 100.0,
            evaluate=float,
            backend="fake",
            algorithm="a",
            objective_name="f",
            options=options,
        )[0]

    assert run(SolveOptions()).status == Status.FEASIBLE  # 1e-8 relative > the default 1e-9
    r = run(SolveOptions(optimality_tolerance=1e-7))
    assert r.status == Status.OPTIMAL and r.info["optimality_tolerance"] == pytest.approx(1e-5)
    with pytest.raises(InvalidOptionError, match="optimality_tolerance"):
        SolveOptions(optimality_tolerance=-1)
