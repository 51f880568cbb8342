"""Policies and the adjacent-pair criterion of Thm III.2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import optsched
from optsched.sojourn.evaluate import pair_costs
from optsched.sojourn.policies import (
    adjacent_pair_violations,
    pair_criterion,
    random_policy,
    rank,
    rank_order,
    serpt,
    sr,
)

from .strategies import instances


@settings(max_examples=40)
@given(instances(min_jobs=2, max_jobs=7))
def test_swap_of_adjacent_jobs_is_eq_13(inst):
    """E[S*] - E[S'] = h1 s_i s_j (R_ij(i) - R_ij(j)) for adjacent i, j (Eq. 13)."""
    pc = pair_costs(inst)
    order = list(range(inst.n_jobs))
    for p in range(inst.n_jobs - 1):
        i, j = order[p], order[p + 1]
        swapped = [*order[:p], j, i, *order[p + 2 :]]
        diff = pc.order_value(order) - pc.order_value(swapped)
        ri, rj = pair_criterion(pc, i, j)
        assert diff == pytest.approx(pc.h1[i, j] * pc.s[i] * pc.s[j] * (ri - rj), rel=1e-8, abs=1e-12)


def test_alpha_tends_to_one_with_N():
    """Lemma III.3 numerically: alpha_ij(N) -> 1 (Table I success probabilities, beta = E[s/(1-s)] ~ 2.8)."""
    from optsched.sojourn.generate import workload

    med = []
    for n in (5, 20, 80):
        pc = pair_costs(workload(2, n, seed=n))
        off = ~np.eye(n, dtype=bool)
        med.append(float(np.median(pc.alpha[off])))
    assert med[0] < med[1] < med[2] < 1.0 and med[2] > 0.9


@settings(max_examples=30)
@given(instances(max_jobs=6))
def test_policies_return_verified_results(inst):
    for r in (
        rank(inst),
        serpt(inst),
        sr(inst),
        sr(inst, preemptive=False),
        serpt(inst, preemptive=True),
        random_policy(inst, seed=1),
    ):
        rep = optsched.verify_result(inst, r)
        assert rep.ok, rep.summary()


def test_rank_is_eq_23():
    inst = optsched.load_instance(optsched.toy_path("sojourn-four-jobs"))
    R = {j.id: sum(x * p for x, p in zip(j.sizes, j.probs, strict=False)) / j.probs[-1] for j in inst.jobs}
    assert rank_order(inst) == sorted(R, key=R.get)


def test_adjacent_violations_detected():
    inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
    assert adjacent_pair_violations(inst, [1, 2]) == []
    (v,) = adjacent_pair_violations(inst, [2, 1])
    assert v[0] == 2 and v[1] == 1 and v[2] > v[3]
