"""Back ends 'auto' and 'portfolio' (optsched.solvers.portfolio): the portfolio returns the best
incumbent and the best bound of its members, names the winner, still goes through run_exact's
certification; an unknown back end is refused before any model is built."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core.instance import Instance
from optsched.core.result import Status
from optsched.exceptions import InvalidOptionError, ModelTooLargeError, SolverError, SolverLimitWarning
from optsched.rigid import random_instance, solve_exact
from optsched.rigid.exact import _auto_backend
from optsched.solvers import SolveOptions, SolveResult
from optsched.solvers.exact import run_exact
from optsched.solvers.model import ExactModel
from optsched.solvers.portfolio import (
    AUTO_SMALL_JOBS,
    AUTO_TI_MAX_MEAN_WORK,
    AUTO_TI_MAX_STARTS,
    auto_time_indexed,
    plan_backend,
)
from optsched.verify import verify_result
from tests.strategies import rigid_instances

METHODS = ("sequential", "fork")


class _Inst:
    name = "fake"


def _fake_members(spec):
    """spec: backend -> (status, objective, bound) or an exception (raised by solve) or
    ("build", exception) (raised by build) or ("sleep", seconds, status, objective, bound)."""

    def build(inst, b, o):
        s = spec[b]
        if isinstance(s, tuple) and s[0] == "build":
            raise s[1]

        def solve(em, opts):
            if isinstance(s, Exception):
                raise s
            if s[0] == "sleep":
                time.sleep(s[1])
                st, obj, bnd = s[2:]
            else:
                st, obj, bnd = s
            return SolveResult(st, obj, bnd, 0.0, b, "1", message=str(st))

        return ExactModel(None, handles=b, solve=solve)

    def decode(em, sr):
        return {"value": sr.objective, "by": em.handles}

    return build, decode


def _solve(spec, method, **kw):
    build, decode = _fake_members(spec)
    plan = plan_backend(
        "portfolio",
        build=build,
        decode=decode,
        own=tuple(spec),
        members=tuple(spec),
        evaluate=lambda s: s["value"],
        method=method,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        return run_exact(
            _Inst(),
            build=plan.build,
            decode=plan.decode,
            evaluate=lambda s: s["value"],
            backend=plan.backend,
            algorithm="t-exact[portfolio]",
            objective_name="f",
            own_backends=plan.own_backends,
            options=SolveOptions(time_limit=60),
            **kw,
        )


@pytest.mark.parametrize("method", METHODS)
def test_best_incumbent_of_one_best_bound_of_other(method):
    r = _solve({"a": (Status.FEASIBLE, 10.0, 7.0), "b": (Status.FEASIBLE, 12.0, 9.0)}, method)
    assert r.objective == pytest.approx(10.0) and r.bound == pytest.approx(9.0)
    assert r.status == Status.FEASIBLE
    assert (r.info["winner"], r.info["bound_from"]) == ("a", "b")
    assert r.schedule["by"] == "a"
    assert set(r.info["portfolio"]) == {"a", "b"}
    assert r.info["portfolio"]["b"]["bound"] == pytest.approx(9.0)


@pytest.mark.parametrize("method", METHODS)
def test_members_that_meet_prove_optimal_together(method):
    # neither member proves it; a's incumbent and b's bound meet: certified optimal by run_exact
    r = _solve({"a": (Status.FEASIBLE, 10.0, 8.0), "b": (Status.FEASIBLE, 11.0, 10.0)}, method)
    assert r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(10.0) and r.bound == pytest.approx(10.0)
    assert r.info["proved_by"] is None


@pytest.mark.parametrize("method", METHODS)
def test_a_bound_beyond_the_best_incumbent_is_clamped(method):
    # b's bound 10.5 is above a's incumbent 10 (a tolerance effect): never reported beyond it
    r = _solve({"a": (Status.FEASIBLE, 10.0, 8.0), "b": (Status.FEASIBLE, 11.0, 10.5)}, method)
    assert r.bound <= r.objective
    assert r.info["solver_bound"] == pytest.approx(10.5)


@pytest.mark.parametrize("method", METHODS)
def test_failing_member_is_reported_and_the_other_used(method):
    # b answers after a has failed (forked: else b's proof may stop a before its error arrives)
    r = _solve({"a": SolverError("boom"), "b": ("sleep", 0.3, Status.OPTIMAL, 5.0, 5.0)}, method)
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(5.0)
    assert r.info["portfolio"]["a"]["status"] == "error" and "boom" in r.info["portfolio"]["a"]["message"]
    assert r.info["winner"] == "b"


@pytest.mark.parametrize("method", METHODS)
def test_every_member_failing_raises(method):
    with pytest.raises(SolverError, match="Every portfolio member failed"):
        _solve({"a": SolverError("boom"), "b": SolverError("bang")}, method)


def test_member_that_cannot_be_built_is_skipped():
    r = _solve({"a": ("build", ModelTooLargeError("too big")), "b": (Status.OPTIMAL, 5.0, 5.0)}, "sequential")
    assert r.info["portfolio_members"] == ["b"] and "too big" in r.info["portfolio_failed"]["a"]
    with pytest.raises(ModelTooLargeError):
        _solve(
            {"a": ("build", ModelTooLargeError("too big")), "b": ("build", ModelTooLargeError("also"))}, "sequential"
        )


def test_fork_stops_the_others_once_one_proves_optimal():
    r = _solve({"a": ("sleep", 300.0, Status.FEASIBLE, 9.0, 1.0), "b": (Status.OPTIMAL, 5.0, 5.0)}, "fork")
    assert r.status == Status.OPTIMAL and r.info["winner"] == "b" and r.info["proved_by"] == "b"
    assert r.info["portfolio"]["a"]["status"] == "stopped"


@pytest.mark.parametrize("backend", ["nope", "", None, 3, "CPSAT"])
def test_unknown_backend_refused_before_any_model_is_built(backend):
    def build(*a):
        raise AssertionError("built")

    with pytest.raises(InvalidOptionError) as e:
        plan_backend(backend, build=build, decode=build)
    for name in ("cpsat", "highs", "auto", "portfolio"):
        assert name in str(e.value)


def test_rigid_unknown_backend_lists_the_known_ones():
    inst = random_instance(4, n_servers=2, gpus_per_server=2, seed=1)
    with pytest.raises(InvalidOptionError, match="portfolio"):
        solve_exact(inst, backend="portfolios")


def test_cli_unknown_backend_exits_2(capsys):
    from optsched.cli import main

    assert main(["solve", "toy:rigid-2x2-five", "--backend", "nope"]) == 2
    assert "portfolio" in capsys.readouterr().err


def test_cli_portfolio_solves(capsys):
    from optsched.cli import main

    assert main(["solve", "toy:rigid-2x2-five", "--backend", "portfolio", "--time-limit", "20", "--json"]) == 0
    assert '"optimal"' in capsys.readouterr().out


# ---- the real rigid back ends

OPT = SolveOptions(time_limit=20, threads=1)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rigid_instances(max_jobs=6, max_work=3), st.sampled_from([None, 1e-6]))
def test_rigid_portfolio_matches_highs(inst, probe):
    """Default probe (it proves these: HiGHS is never built) or a probe too short to prove (both
    members are built and forked): the certified optimum of HiGHS alone either way."""
    import optsched.solvers.staged as exact_mod  # the probe budget lives there

    ref = solve_exact(inst, backend="highs", options=OPT)
    old = exact_mod.PROBE_MAX_SECONDS
    exact_mod.PROBE_MAX_SECONDS = old if probe is None else probe
    try:
        r = solve_exact(inst, backend="portfolio", options=OPT)
    finally:
        exact_mod.PROBE_MAX_SECONDS = old
    assert ref.status == r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(ref.objective, rel=1e-9)
    assert r.bound <= r.objective + 1e-9
    assert r.info["winner"] in ("cpsat", "highs")
    assert verify_result(inst, r).ok
    pr = r.info["portfolio_probe"]
    assert pr["member"] == "cpsat"
    if pr["status"] == "optimal":
        assert r.info["portfolio"]["highs"]["status"] == "skipped" and r.info["winner"] == "cpsat"
    else:
        assert r.info["portfolio"]["highs"]["status"] != "skipped"


def test_rigid_portfolio_writes_one_model_per_member_and_summarises_them(tmp_path):
    inst = random_instance(6, n_servers=2, gpus_per_server=4, single_server=1.0, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        r = solve_exact(
            inst,
            backend="portfolio",
            options=SolveOptions(time_limit=20, threads=1, verbose=True),
            write_model=str(tmp_path / "m.lp"),
        )
    assert r.status == Status.OPTIMAL
    files = sorted(r.info["model_files"])
    assert [p.rsplit("/", 1)[-1] for p in files] == ["m.cpsat.pbtxt", "m.highs.lp"]
    assert all((tmp_path / p.rsplit("/", 1)[-1]).stat().st_size > 0 for p in files)
    summary = r.info["model_summary"]
    assert summary["kind"] == "portfolio" and set(summary["members"]) == {"cpsat", "highs"}
    assert summary["members"]["highs"]["variables"] > summary["members"]["cpsat"]["variables"] > 0


def _probing_members(probe_status, built, starts=None):
    """Two fake members: 'a' with a probe answering ``probe_status`` (objective 5, bound 5 when
    optimal), 'b' whose builds are counted in ``built``; warm starts go to ``starts``."""

    def build(inst, b, o):
        built.append(b)

        def solve(em, opts):
            return SolveResult(Status.OPTIMAL, 5.0, 5.0, 0.0, b, "1", message="OPTIMAL")

        def probe(em, opts):
            bound = 5.0 if probe_status == Status.OPTIMAL else 1.0
            return SolveResult(probe_status, 5.0, bound, 0.0, b, "1", message="probe")

        def warm_start(schedule):
            if starts is not None:
                starts.append((b, schedule["value"]))

        return ExactModel(None, handles=b, solve=solve, probe=probe if b == "a" else None, warm_start=warm_start)

    return build, lambda em, sr: {"value": sr.objective, "by": em.handles}


@pytest.mark.parametrize("probe_status", [Status.OPTIMAL, Status.FEASIBLE])
def test_portfolio_builds_the_others_only_when_the_probe_does_not_prove(probe_status):
    built: list[str] = []
    build, decode = _probing_members(probe_status, built)
    plan = plan_backend(
        "portfolio", build=build, decode=decode, own=("a", "b"), members=("a", "b"), method="sequential"
    )
    r = run_exact(
        _Inst(),
        build=plan.build,
        decode=plan.decode,
        evaluate=lambda s: s["value"],
        backend=plan.backend,
        algorithm="t-exact[portfolio]",
        objective_name="f",
        own_backends=plan.own_backends,
        options=SolveOptions(time_limit=60),
    )
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(5.0)
    assert r.info["portfolio_probe"]["status"] == probe_status.value
    if probe_status == Status.OPTIMAL:
        assert built == ["a"] and r.info["portfolio"]["b"]["status"] == "skipped"
    else:
        assert built == ["a", "b"] and r.info["portfolio"]["b"]["status"] == "optimal"


def test_rigid_portfolio_sequential_and_initial_never_worse():
    inst = random_instance(10, n_servers=2, gpus_per_server=4, single_server=0.5, seed=3)
    ref = solve_exact(inst, backend="cpsat", options=OPT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        r = solve_exact(inst, backend="portfolio", options=SolveOptions(time_limit=0.05, threads=1))
    assert r.objective <= r.info["initial_objective"] + 1e-9  # never worse than the warm start
    assert r.bound is None or r.bound <= ref.objective + 1e-9  # the bound is valid
    assert verify_result(inst, r).ok


def test_auto_rule():
    assert auto_time_indexed(AUTO_TI_MAX_STARTS, AUTO_TI_MAX_MEAN_WORK)[0] == "highs"
    assert auto_time_indexed(AUTO_TI_MAX_STARTS + 1, 1.0)[0] == "cpsat"
    assert auto_time_indexed(100, AUTO_TI_MAX_MEAN_WORK + 0.5)[0] == "cpsat"
    assert auto_time_indexed(10 * AUTO_TI_MAX_STARTS, 50.0, cpsat_ok=False)[0] == "highs"
    # small instances: CP-SAT whatever the horizon, unless it cannot take them
    assert auto_time_indexed(100, 1.0, n_jobs=AUTO_SMALL_JOBS)[0] == "cpsat"
    assert auto_time_indexed(100, 1.0, n_jobs=AUTO_SMALL_JOBS + 1)[0] == "highs"
    assert auto_time_indexed(100, 1.0, n_jobs=3, cpsat_ok=False)[0] == "highs"
    # fractional weights: CP-SAT cannot take them, auto picks HiGHS
    inst = random_instance(4, n_servers=2, gpus_per_server=2, max_work=100, seed=1)
    assert _auto_backend(inst, None)[0] == "cpsat"
    frac = Instance(inst.cluster, [replace(inst.jobs[0], weight=1.5), *inst.jobs[1:]], name="frac")
    assert _auto_backend(frac, None)[0] == "highs"


@pytest.mark.parametrize(
    ("n", "max_work", "expected"), [(AUTO_SMALL_JOBS + 4, 2, "highs"), (6, 2, "cpsat"), (6, 40, "cpsat")]
)
def test_rigid_auto_uses_the_rule(n, max_work, expected):
    inst = random_instance(n, n_servers=2, gpus_per_server=4, max_work=max_work, seed=2)
    chosen, reason = _auto_backend(inst, None)
    assert chosen == expected
    if n <= AUTO_SMALL_JOBS:
        assert "small instance" in reason
    r = solve_exact(inst, backend="auto", options=OPT)
    assert r.info["backend"] == chosen and r.info["auto_rule"] == reason
    assert r.solver.startswith(chosen)
    assert r.status == Status.OPTIMAL and verify_result(inst, r).ok


def test_the_probe_incumbent_is_the_warm_start_of_the_members_built_after_it():
    """Warm start of value 9, probe incumbent of value 5 (not proven): member 'b', built after the
    probe, starts from the probe's incumbent; 'a' got the original start."""
    built: list[str] = []
    starts: list[tuple[str, float]] = []
    build, decode = _probing_members(Status.FEASIBLE, built, starts)
    plan = plan_backend(
        "portfolio",
        build=build,
        decode=decode,
        own=("a", "b"),
        members=("a", "b"),
        method="sequential",
        evaluate=lambda s: s["value"],
    )
    r = run_exact(
        _Inst(),
        build=plan.build,
        decode=plan.decode,
        evaluate=lambda s: s["value"],
        backend=plan.backend,
        algorithm="t-exact[portfolio]",
        objective_name="f",
        own_backends=plan.own_backends,
        options=SolveOptions(time_limit=60),
        initial={"value": 9.0, "by": "heuristic"},
    )
    assert starts == [("a", 9.0), ("b", 5.0)]
    assert r.info["portfolio_probe"]["shared_start"] == pytest.approx(5.0)
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(5.0)
