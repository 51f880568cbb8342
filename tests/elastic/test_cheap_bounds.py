"""The cheap bounds of (2) and (8) (formulations/elastic.md#cheap-bounds): on the right side of the
proven optima of the exact models, and every exact result's bound at least as good as them (an
elastic solve stopped before its solver proved anything reported 0, a gap of 100 %)."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from optsched.elastic import toy_instance
from optsched.elastic.cheap_bounds import max_weight_bound, min_sum_bound, resource_use
from optsched.elastic.exact import solve_exact, solve_maxweight
from optsched.elastic.generate import random_instance
from optsched.solvers import SolveOptions

OPT = SolveOptions(threads=1, time_limit=30)


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


def test_the_toy_bounds_are_on_the_right_side_of_its_optima():
    # the toy's optima (known_optima of instances/toy): sum w c = 25, (8) at tau = 12: 1
    assert 0 < min_sum_bound(toy_instance())[0] <= 25.0
    assert max_weight_bound(toy_instance(), 12)[0] >= 1.0


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 4),
    arch=st.sampled_from(["ps", "rar"]),
    max_arrival=st.sampled_from([0, 3]),
    servers=st.integers(1, 2),
)
@example(seed=0, n=5, arch="ps", max_arrival=0, servers=1)  # all at once on one server: the GPU area binds
@example(seed=5, n=5, arch="rar", max_arrival=0, servers=1)  # the CPU area binds
def test_min_sum_bound_is_below_the_optimum_and_the_result_reports_at_least_it(seed, n, arch, max_arrival, servers):
    inst = random_instance(n, seed=seed, architecture=arch, max_arrival=max_arrival, n_servers=servers)
    b, which = min_sum_bound(inst)
    r = _quiet(solve_exact, inst, options=OPT)
    if r.status.value == "infeasible":
        return
    assert r.status.value == "optimal"
    assert 0 < b <= r.objective + 1e-9
    assert r.bound >= b - 1e-9 and r.info["cheap_bound"] == which


def test_the_area_part_binds_when_jobs_queue():
    # five jobs at once on one server: 69 (the GPU area) against the proven optimum 90
    inst = random_instance(5, seed=0, max_arrival=0, n_servers=1)
    assert min_sum_bound(inst) == (69.0, "mean_busy[gpu]")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4), tau=st.integers(1, 8), arrivals=st.booleans())
def test_max_weight_bound_is_above_the_optimum_of_8(seed, n, tau, arrivals):
    inst = random_instance(n, seed=seed, n_servers=2)
    b, _ = max_weight_bound(inst, tau, arrivals=arrivals)
    r = _quiet(solve_maxweight, inst, tau=tau, arrivals=arrivals, options=OPT)
    assert r.status.value == "optimal"
    assert r.objective <= b + 1e-9 and r.bound <= b + 1e-9


def test_the_least_work_is_below_every_configuration_of_gamma():
    from optsched.elastic.gamma import configs_by_index

    inst = random_instance(5, seed=2)
    names = inst.resources
    for j in range(inst.n_jobs):
        W, rho = resource_use(inst, j)
        for cfg in configs_by_index(inst, j):
            per_slot = [sum(v[r] for _, v in cfg.use) for r in range(len(names))]
            for r in range(len(names)):
                assert W[r] <= cfg.d * per_slot[r] + 1e-9 and per_slot[r] <= rho[r] + 1e-9


def test_a_stopped_elastic_solve_reports_the_cheap_bound_not_zero():
    """12 jobs with no time to prove anything: the bound is the cheap one (CP-SAT's or HiGHS's bound
    of 0 gave a gap of 100 %)."""
    inst = random_instance(12, seed=1)
    r = _quiet(solve_exact, inst, options=SolveOptions(threads=1, time_limit=0.01))
    b, which = min_sum_bound(inst)
    assert r.bound is not None and r.bound >= b > 0 and r.info["cheap_bound"] == which
    assert r.gap < 0.5


@pytest.mark.slow
def test_12_jobs_in_30_s_report_a_positive_bound():
    inst = random_instance(12, seed=1)
    r = _quiet(solve_exact, inst, options=SolveOptions(threads=1, time_limit=30))
    assert 0 < r.bound <= r.objective and r.gap < 0.25


# -- the time limit bounds the whole call ------------------------------------------------------------
def test_building_the_columns_stops_at_the_deadline_naming_the_phase():
    import time

    from optsched.elastic.formulation import build_set_partitioning, column_set
    from optsched.exceptions import TimeLimitReached

    inst = random_instance(6, seed=1)
    with pytest.raises(TimeLimitReached, match="enumerating the columns of Gamma_j"):
        column_set(inst, deadline=time.monotonic() - 1.0)
    cs = column_set(inst)
    with pytest.raises(TimeLimitReached, match="building the set-partitioning model"):
        build_set_partitioning(inst, cs=cs, deadline=time.monotonic() - 1.0)


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_a_time_limit_shorter_than_the_build_ends_the_call_with_the_warm_start(backend):
    """12 jobs (26,616 columns, seconds to enumerate and build) under a limit of 10 ms: the call ends
    in the phase that ran out, named, with greedy's schedule and the cheap bound (a 16-job solve once
    took 75 s under a 30 s limit: the columns and the model were built whatever the limit)."""
    inst = random_instance(12, seed=1)
    r = _quiet(solve_exact, inst, backend=backend, options=SolveOptions(threads=1, time_limit=0.01))
    assert r.status.value == "feasible" and r.info["incumbent"] == "initial"
    assert "time limit" in r.info["stopped_because"]
    assert r.info["limit_reached_in"] in r.info["phases"]
    assert r.bound == min_sum_bound(inst)[0]
