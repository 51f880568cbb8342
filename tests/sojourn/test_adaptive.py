"""Adaptive policies (item 4): Thm III.1 checked on tiny instances, and what adaptivity buys."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings

import optsched
from optsched.sojourn.adaptive import (
    _sequence_policy,
    best_stage_sequence,
    compare_policies,
    optimal_adaptive,
    policy_value,
)
from optsched.sojourn.evaluate import expected_sojourn
from optsched.sojourn.policies import rank, sr

from .strategies import instances


@settings(max_examples=30)
@given(instances(max_jobs=4, max_stages=3, integer=True))
def test_adaptive_ordering_of_policy_classes(inst):
    c = compare_policies(inst)
    tol = 1e-9 * max(1.0, c["best_order"])
    assert c["adaptive_preemptive"] <= c["adaptive_nonpreemptive"] + tol
    assert c["adaptive_nonpreemptive"] <= c["best_order"] + tol
    # Thm III.1 extended to adaptive policies: preemption at checkpoints does not help (observed)
    assert c["adaptive_preemptive"] == pytest.approx(c["adaptive_nonpreemptive"], rel=1e-9, abs=1e-12)


@settings(max_examples=20)
@given(instances(max_jobs=3, max_stages=2, integer=True))
def test_thm_III_1_best_static_stage_sequence_does_not_preempt(inst):
    c = compare_policies(inst, with_sequences=True)
    assert c["best_stage_sequence"] == pytest.approx(c["best_order"], rel=1e-9, abs=1e-12)


@settings(max_examples=25)
@given(instances(max_jobs=4, max_stages=3))
def test_bellman_evaluation_of_static_schedules_matches_evaluator(inst):
    for s in (rank(inst).schedule, sr(inst).schedule):
        v = policy_value(inst, _sequence_policy(inst, s.stage_sequence(inst)))
        assert v == pytest.approx(expected_sojourn(inst, s), rel=1e-9, abs=1e-12)


def test_two_job_example_adaptive_equals_static():
    inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    assert optimal_adaptive(inst).value == pytest.approx(9.1)
    assert best_stage_sequence(inst)[0] == pytest.approx(9.1)


def test_adaptivity_can_beat_the_best_order():
    """Found by search (experiments.sojourn_adaptive): the best static order is not the best policy."""
    from optsched.sojourn.generate import random_instance

    found = False
    for seed in range(60):
        inst = random_instance(4, seed=seed, max_stages=3, integer_sizes=True)
        c = compare_policies(inst)
        if c["best_order"] > c["adaptive_nonpreemptive"] * (1 + 1e-6):
            found = True
            break
    assert found


def _brute_force_adaptive(jobs: dict, static: bool) -> float:
    """Objective (1) of the best non-preemptive policy on one server, all arrivals 0, by recursion
    over every outcome (``jobs``: id -> (sizes, probs)); ``static``: the best fixed order instead.
    A state is (jobs left, time, successful completion times so far); the objective, the mean
    sojourn of the successful jobs (0 if none), is read at the leaves. Written from
    formulations/sojourn.md#objective, not from optsched.sojourn.adaptive."""

    def value(order_or_left, t, succ, first=True):
        if not order_or_left:
            return sum(succ) / len(succ) if succ else 0.0
        choices = [order_or_left[0]] if static else sorted(order_or_left)
        out = []
        for i in choices:
            sizes, probs = jobs[i]
            rest = order_or_left[1:] if static else order_or_left - {i}
            out.append(
                sum(
                    p * value(rest, t + x, (*succ, t + x) if k == len(sizes) - 1 else succ, False)
                    for k, (x, p) in enumerate(zip(sizes, probs, strict=True))
                )
            )
        return min(out)

    if static:
        return min(value(o, 0.0, ()) for o in itertools.permutations(jobs))
    return value(frozenset(jobs), 0.0, ())


def test_adaptive_gap_toy_instance_checked_by_simulation():
    from optsched.sojourn.adaptive import simulate_policy
    from optsched.sojourn.exact import solve_exact

    inst = optsched.load_instance(optsched.toy_path("sojourn-adaptive-gap"))
    best = solve_exact(inst, backend="dp").objective
    assert best == pytest.approx(inst.known_optima["successful_sojourn_time"]["value"])
    a = optimal_adaptive(inst, preemptive=False)
    # 9.808 and 9.8305 recomputed by brute force over every policy and every outcome (2^3)
    jobs = {j.id: (list(j.sizes), list(j.probs)) for j in inst.jobs}
    assert _brute_force_adaptive(jobs, static=True) == pytest.approx(best)
    assert a.value == pytest.approx(_brute_force_adaptive(jobs, static=False))
    assert a.value == pytest.approx(9.808) and a.value < best - 0.02
    assert a.policy((-1, 0, 0), 0) == 1 and a.policy((-1, 0, 0), 1) == 2  # adapts to job 0's outcome
    est = simulate_policy(inst, a.policy, samples=40_000, seed=3, level=0.999)
    assert est.covers(a.value)
