"""The restricted Gamma_j (formulations/elastic.md#gamma) against the full enumeration on tiny cases:
every feasible schedule is dominated by a restricted column, and the optima of (2) and (8) agree."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from optsched.elastic.checks import violations
from optsched.elastic.formulation import build_set_partitioning, column_set
from optsched.elastic.gamma import (
    all_configs,
    configs,
    count_compositions,
    dominates,
    estimate_columns,
    useful_counts,
)
from optsched.elastic.generate import random_instance
from optsched.elastic.schedule import ElasticSchedule
from optsched.solvers import SolveOptions, solve_pyomo

from .strategies import small_instances

TINY = dict(max_jobs=2, max_servers=2, max_chunks=3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(**TINY))
def test_every_feasible_schedule_is_dominated_by_a_restricted_one(inst):
    for j in range(inst.n_jobs):
        restricted = configs(inst, j)
        full = all_configs(inst, j, d_max=inst.horizon)
        assert full, "the full enumeration is empty although the instance is feasible"
        for c in full:
            assert any(dominates(r, c) for r in restricted), (j, c)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_jobs=3, max_servers=3, max_chunks=4))
def test_restricted_columns_are_feasible_schedules(inst):
    for j in range(inst.n_jobs):
        for c in configs(inst, j):
            a = c.assignment(inst.jobs[j].arrival)
            bad = [
                v
                for v in violations(inst, ElasticSchedule({inst.jobs[j].id: a}), require_all=False)
                if v.label != "horizon"
            ]
            assert not bad, bad
            n, d = c.n_workers, c.d
            assert (n, d) in useful_counts(inst, j, c.m, c.p, c.q)


def _opt(inst, sense, cfgs=None, tau=None):
    cs = column_set(inst, sense=sense, tau=tau, configs_by_job=cfgs)
    if not cs.cols:
        return 0.0
    m = build_set_partitioning(inst, cs=cs)
    sr = solve_pyomo(m, "highs", SolveOptions(time_limit=30, threads=1, mip_abs_gap=0.5))
    assert sr.status.value == "optimal", sr
    return sr.objective


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(**TINY), st.integers(3, 8))
def test_restricted_and_full_gamma_give_the_same_optima(inst, tau):
    full = [all_configs(inst, j, d_max=inst.horizon) for j in range(inst.n_jobs)]
    # tiny cases only: with thousands of full configurations (2,900 + 638 gave 8,470 columns) HiGHS
    # finds no solution of the full model in 30 s, and the test would measure the machine, not Gamma_j
    assume(sum(len(f) for f in full) <= 1_000)
    assert _opt(inst, "min") == pytest.approx(_opt(inst, "min", full))
    assert _opt(inst, "max", tau=tau) == pytest.approx(_opt(inst, "max", full, tau=tau))


def test_count_compositions_matches_enumeration():
    from optsched.elastic.gamma import _compositions

    for caps in ((2, 3, 1), (4, 4), (1, 1, 1, 1)):
        for n in range(0, 6):
            assert count_compositions(n, caps) == len(_compositions(n, caps))


def test_estimate_is_an_upper_bound():
    for seed in range(3):
        inst = random_instance(4, seed=seed)
        n = sum(len(column_set(inst).by_job[j]) for j in range(inst.n_jobs))
        assert n <= estimate_columns(inst)
