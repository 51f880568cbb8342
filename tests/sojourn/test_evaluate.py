"""Objective (1): the paper's two-job example exactly; the polynomial evaluator against brute
force over all outcomes and against Monte-Carlo confidence intervals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.sojourn.evaluate import (
    enumerate_outcomes,
    expected_sojourn,
    inverse_moments,
    monte_carlo,
    pair_costs,
    poisson_binomial,
)
from optsched.sojourn.model import SojournSchedule
from optsched.sojourn.policies import index_stage_sequence, rank, serpt, sr, sr_rank

from .strategies import instances

TWO = optsched.toy_path("sojourn-two-jobs")


def test_two_job_example_of_section_III_A():
    inst = optsched.load_instance(TWO)
    j1, j2 = inst.jobs
    # SR ranks quoted in the paper: r(1) = min(4, 7.75), r(2) = min(5, 4.2), after stage 1: r(1) = 9
    assert sr_rank(j1) == (4.0, 1) and sr_rank(j2) == pytest.approx((4.2, 2))
    assert sr_rank(j1, 1) == (9.0, 2)
    assert j1.expected_size == 7.75 and j2.expected_size == pytest.approx(4.2)
    r_sr, r_serpt, r_rank = sr(inst), serpt(inst), rank(inst)
    assert r_sr.schedule.stages == ((1, 1), (2, 1), (2, 2), (1, 2))
    assert r_sr.objective == pytest.approx(10.0, abs=1e-12)
    assert r_serpt.objective == pytest.approx(9.75, abs=1e-12)
    assert r_rank.objective == pytest.approx(9.1, abs=1e-12)
    # the paper's closed forms
    assert pytest.approx(r_sr.objective) == 0.75 * 0.4 * (7 + 16) / 2 + 0.25 * 0.4 * 7 + 0.75 * 0.6 * 13
    assert pytest.approx(r_rank.objective) == 0.75 * 0.4 * (10 + 16) / 2 + 0.25 * 0.4 * 7 + 0.75 * 0.6 * 10
    for sched in (r_sr.schedule, r_serpt.schedule, r_rank.schedule):
        assert enumerate_outcomes(inst, sched) == pytest.approx(expected_sojourn(inst, sched), abs=1e-12)
    assert inst.known_optima["successful_sojourn_time"]["value"] == 9.1


def test_poisson_binomial_moments():
    p = [0.1, 0.5, 0.9, 0.3]
    pmf = poisson_binomial(p)
    assert pmf.sum() == pytest.approx(1.0) and pmf @ np.arange(5) == pytest.approx(sum(p))
    brute = sum(
        np.prod([q if b else 1 - q for q, b in zip(p, bits, strict=False)]) / (2 + sum(bits))
        for bits in itertools.product([0, 1], repeat=4)
    )
    assert inverse_moments(p, 2) == pytest.approx(brute)


@settings(max_examples=40)
@given(instances(max_jobs=6))
def test_quadrature_equals_poisson_binomial_dp(inst):
    a, b = pair_costs(inst), pair_costs(inst, method="dp")
    np.testing.assert_allclose(a.c, b.c, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.d, b.d, rtol=1e-9, atol=1e-12)


@settings(max_examples=40)
@given(instances(max_jobs=4, max_stages=3), st.randoms(use_true_random=False))
def test_evaluator_equals_outcome_enumeration(inst, rnd):
    pc = pair_costs(inst)
    ids = inst.job_ids
    rnd.shuffle(ids)
    assert expected_sojourn(inst, ids, pc) == pytest.approx(enumerate_outcomes(inst, ids), rel=1e-9, abs=1e-12)
    # a random interleaving of stages (preemption at checkpoints)
    tokens = [k for k, j in enumerate(inst.jobs) for _ in range(j.n_stages)]
    rnd.shuffle(tokens)
    done = [0] * inst.n_jobs
    seq = []
    for k in tokens:
        done[k] += 1
        seq.append((inst.jobs[k].id, done[k]))
    s = SojournSchedule(stages=seq)
    assert expected_sojourn(inst, s, pc) == pytest.approx(enumerate_outcomes(inst, s), rel=1e-9, abs=1e-12)


@settings(max_examples=25)
@given(instances(max_jobs=4, max_stages=3))
def test_index_policies_as_stage_sequences_match_enumeration(inst):
    for seq in (index_stage_sequence(inst, lambda j, d: sr_rank(j, d)[0]), sr(inst).schedule.stages):
        s = SojournSchedule(stages=seq)
        assert expected_sojourn(inst, s) == pytest.approx(enumerate_outcomes(inst, s), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", ["sojourn-two-jobs", "sojourn-four-jobs"])
def test_monte_carlo_confidence_interval_covers_exact_value(name):
    inst = optsched.load_instance(optsched.toy_path(name))
    for sched in (rank(inst).schedule, sr(inst).schedule):
        est = monte_carlo(inst, sched, samples=200_000, seed=12345, level=0.999)
        exact = expected_sojourn(inst, sched)
        assert est.covers(exact), (est, exact)
        assert est.stderr < 0.05


def test_monte_carlo_on_a_paper_workload():
    from optsched.sojourn.generate import workload

    inst = workload(5, 10, seed=1)
    order = rank(inst).schedule
    est = monte_carlo(inst, order, samples=200_000, seed=7, level=0.999)
    assert est.covers(expected_sojourn(inst, order))


def test_single_job_and_certain_jobs():
    from optsched.sojourn.model import SojournInstance, StagedJob

    one = SojournInstance((StagedJob(0, [2.0, 5.0], [0.5, 0.5]),))
    assert expected_sojourn(one, [0]) == pytest.approx(0.5 * 5.0)  # E[t 1{success}/|C|]
    certain = SojournInstance(tuple(StagedJob(k, [float(k + 1)], [1.0]) for k in range(3)))
    # every job succeeds: mean completion time of SPT order 1, 3, 6
    assert expected_sojourn(certain, [0, 1, 2]) == pytest.approx(10 / 3)
