"""Lemmas 2-4 and Theorems 5-6 checked against exact optima on small instances; the saved
counterexamples still violate the printed claims."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from optsched.core.io import load_instance
from optsched.core.library import instance_path
from optsched.rarddls.bounds import check_bounds
from optsched.rarddls.exact import solve_exact
from optsched.rarddls.sjfbco import sjf_bco, theta_lower_bound
from optsched.solvers import SolveOptions
from tests.rarddls.strategies import small_instances

OPTS = SolveOptions(time_limit=20, threads=1)


@settings(max_examples=15)
@given(small_instances(max_jobs=3, caps=[2, 2]))
def test_provable_claims_hold(instance):
    rep = check_bounds(instance, options=OPTS)
    assert rep.values["T_star"] is not None
    for claim in ("lemma2_le", "lemma3_provable", "lemma4", "thm5", "thm5_step_a", "thm6"):
        assert rep.holds[claim], (claim, rep.values)
    assert 1.0 <= rep.values["ratio"] <= rep.values["thm5_bound"]


@settings(max_examples=40)
@given(small_instances(max_jobs=4))
def test_theta_lower_bound_is_below_every_schedules_load(instance):
    """max(max_j rho^_j, sum_j G_j rho^_j / N) / u <= theta*_u <= the largest per-GPU load W_max of any
    schedule, SJF-BCO's among them (u >= 1 divides: rho^ <= u rho for every placement)."""
    jobs = instance.jobs
    by_hand = max(max(j.rho_hat for j in jobs), sum(j.gpus * j.rho_hat for j in jobs) / instance.N) / instance.u
    assert instance.u >= 1
    assert theta_lower_bound(instance) == pytest.approx(by_hand)
    assert theta_lower_bound(instance) <= sjf_bco(instance).info["W_max"] + 1e-9


def test_lemma3_printed_counterexample():
    inst = load_instance(instance_path("papers/rarddls:lemma3-printed-counterexample"))
    rep = check_bounds(inst, options=OPTS)
    assert "lemma3_printed" in rep.violated
    assert rep.values["T_alg"] > rep.values["n_g"] * rep.values["W_max"]
    assert rep.values["T_star"] == inst.known_optima["makespan"]["value"]
    assert solve_exact(inst, backend="enumerate").objective == rep.values["T_star"]


def test_lemma2_equality_counterexample():
    inst = load_instance(instance_path("papers/rarddls:lemma2-equality-counterexample"))
    rep = check_bounds(inst, options=OPTS)
    assert rep.holds["lemma2_le"] and not rep.holds["lemma2_eq"]
    assert rep.values["lemma2_gap"] > 0


def test_demo_rows_quick():
    from optsched.rarddls.demo import demo_rows

    rows = demo_rows(quick=True)
    assert rows and all(r["verified"] for r in rows)
    for r in rows:
        assert r["optimum"] is not None and r["objective"] >= r["optimum"]
        assert r["ratio"] <= r["thm5_bound"]


def test_registered_bound_checks_fire_on_too_short_schedules():
    from optsched.rarddls import build_schedule, toy_instance
    from optsched.verify import verify

    inst = toy_instance()
    ok = build_schedule(inst, [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}])
    assert verify(inst, ok).ok
    short = build_schedule(inst, [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}], completion=[1, 1, 6])
    labels = verify(inst, short).by_label()
    assert {"rho_range", "gpu_load", "contention_progress"} <= set(labels)
