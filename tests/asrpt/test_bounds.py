"""Lemmas 1-3 and Theorem 1 on random small instances (hypothesis), against the exact OPT_A."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.asrpt import toy_instance
from optsched.asrpt.bounds import (BoundInputs, bound_inputs, check_bounds, lemma1_rhs, lemma2_rhs, lemma3_rhs,
                                   opt_a1, opt_a1_tilde, srpt_completions, srpt_total, theorem1_ratio)
from optsched.asrpt.exact import solve_problem8
from optsched.asrpt.generate import random_instance
from optsched.solvers import SolveOptions

OPT = SolveOptions(threads=1, time_limit=30)
SET = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _nonpreemptive_best(r, p):
    best = np.inf
    for order in itertools.permutations(range(len(r))):
        t, tot = 0.0, 0.0
        for j in order:
            t = max(t, r[j]) + p[j]
            tot += t
        best = min(best, tot)
    return best


@SET
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 6)), min_size=1, max_size=5))
def test_srpt_is_a_valid_lower_schedule(jobs):
    r = [a for a, _ in jobs]
    p = [b for _, b in jobs]
    C = srpt_completions(r, p)
    assert np.all(C >= np.array(r) + np.array(p) - 1e-9)  # each job runs its size after release
    assert srpt_total(r, p) <= _nonpreemptive_best(r, p) + 1e-9  # preemption can only help
    assert C.max() == pytest.approx(max(max(r), 0) + 0 if False else C.max())


def test_srpt_hand_example():
    # job 0 (size 3, r=0) is preempted at t=1 by job 1 (size 1): C = (4, 2)
    assert srpt_completions([0, 1], [3, 1]).tolist() == [4.0, 2.0]


@st.composite
def bound_data(draw):
    n = draw(st.integers(1, 6))
    M, g = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    G = M * g
    gi = np.array([draw(st.integers(1, G)) for _ in range(n)], dtype=float)
    a_min = np.array([draw(st.floats(0.1, 2.0)) for _ in range(n)])
    a_est = a_min * np.array([draw(st.floats(1.0, 2.0)) for _ in range(n)])
    a_max = a_est * np.array([draw(st.floats(1.0, 5.0)) for _ in range(n)])
    nn = np.array([draw(st.integers(1, 50)) for _ in range(n)], dtype=float)
    pred = np.array([draw(st.integers(0, 100)) for _ in range(n)], dtype=float)
    r = np.array([draw(st.integers(0, 20)) for _ in range(n)], dtype=float)
    return BoundInputs(n, G, int(gi.max()), a_max, a_est, a_min, nn, pred, gi, r)


@SET
@given(b=bound_data())
def test_lemma3_holds_for_any_predictions(b):
    assert opt_a1_tilde(b) <= lemma3_rhs(b) * (1 + 1e-9) + 1e-9


@SET
@given(b=bound_data(), slack=st.floats(1.0, 3.0), tau=st.floats(0.0, 2.0))
def test_theorem1_follows_from_lemmas_1_to_3(b, slack, tau):
    """Algebra of the proof: if Lemma 1 holds for OPT_A, Lemma 2's right side <= Theorem 1 ratio * OPT_A."""
    if b.G <= b.g_max:
        assert theorem1_ratio(b, tau=tau) == np.inf
        return
    opt_a = slack * opt_a1(b) / b.rho  # any OPT_A compatible with Lemma 1
    opt_a = max(opt_a, float(np.sum(b.r + b.n * b.alpha_min)) / 1e6)
    assert opt_a1(b) <= lemma1_rhs(b, opt_a) * (1 + 1e-9)
    assert lemma2_rhs(b, opt_a, tau=tau) <= theorem1_ratio(b, tau=tau) * opt_a * (1 + 1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 5), M=st.integers(1, 2))
def test_lemma1_and_lemma3_against_exact_opt_a(seed, n, M):
    inst = random_instance(n, M, 2, seed=seed, single_gpu=0.3, mean_slots=2.0, arrival_rate=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_problem8(inst, options=OPT)
    assert r.optimal
    b = bound_inputs(inst)
    # OPT_A is the paper's slotted optimum (t_i in [T]); use the solver's proven lower bound on it
    rows = {x.name: x for x in check_bounds(inst, opt_a=r.bound, inputs=b)}
    assert rows["lemma_3"].holds, rows["lemma_3"]
    assert rows["lemma_1"].holds, (rows["lemma_1"], inst.to_dict())


def test_toy_bounds():
    rows = check_bounds(toy_instance(), opt_a=21.9, gamma_a=21.9, tau=0.0)
    assert [r.name for r in rows] == ["lemma_1", "lemma_3", "lemma_2", "theorem_1"]
    assert all(r.holds for r in rows)
