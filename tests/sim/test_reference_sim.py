"""Sanity checks of the reference simulator itself (``tests/sim/reference_sim.py``).

The reference is only useful if it is right: hand-computed schedules (the issue-24 repros are in
``test_preemption_repros.py``, checked on it too), the lifecycle identity (1), and equalities
that R1-R12 imply between policies, on random workloads.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .reference_sim import JobSpec as J
from .reference_sim import ReferenceSim, simulate
from .test_differential import workloads

_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None)
OPTIONS = st.sampled_from(
    [
        ("fifo", {}),
        ("sjf", {"backfill": False}),
        ("srtf", {"reserve": "best"}),
        ("srtf", {"reserve": "preemptor", "preempt_loading": "finish"}),
        ("srtf-periodic", {"reserve": "best", "period": 3}),
        ("srtf-periodic", {"reserve": "preemptor", "period": 2, "preempt_loading": "finish"}),
        ("lazer", {"deferral": 0}),
        ("lazer", {"deferral": 10, "preempt_loading": "finish"}),
    ]
)


def _completions(res):
    return {n: r.completion for n, r in res.items()}


def test_fifo_one_gpu_is_the_textbook_queue():
    jobs = [J("a", 0, 3), J("b", 1, 2), J("c", 1, 1), J("d", 9, 1)]
    # C_i = max(A_i, C_{i-1}) + w_i in arrival order
    assert _completions(simulate(jobs, 1, "fifo")) == {"a": 3, "b": 5, "c": 6, "d": 10}
    # SJF: at 3, c (1) before b (2)
    assert _completions(simulate(jobs, 1, "sjf")) == {"a": 3, "c": 4, "b": 6, "d": 10}


def test_backfill_and_strict_order():
    jobs = [J("a", 0, 4, gpus=1), J("b", 1, 2, gpus=2), J("c", 1, 1, gpus=1)]
    assert _completions(simulate(jobs, 2, "fifo", backfill=True)) == {"a": 4, "b": 6, "c": 2}
    assert _completions(simulate(jobs, 2, "fifo", backfill=False)) == {"a": 4, "b": 6, "c": 7}


def test_srtf_load_save_accounting_by_hand():
    """1 GPU, ℓ = 1, p = 2: A(0, 10), B(3, 2). B preempts A at 3 (A trained 2 s): A saves 3-5;
    B loads 5-6, trains 6-8; A reloads 8-9, trains 8 s: ends at 17."""
    res = simulate([J("A", 0, 10, 1, 2), J("B", 3, 2, 1, 2)], 1, "srtf")
    a, b = res["A"], res["B"]
    assert (a.W, a.L, a.T, a.P, a.completion, a.n_preemptions) == (3, 2, 10, 2, 17, 1)
    assert (b.W, b.L, b.T, b.P, b.completion, b.first_start) == (2, 1, 2, 0, 8, 5)


def test_futile_preemption_of_a_loading_job_both_modes():
    """1 GPU, ℓ = 3: A(0, 10), B(1, 1). A is loading at 1 (1 s done). Abort: A's GPU is free at
    once, 1 s futile, B runs 1-5. Finish: the load runs to 3 (3 s futile), B runs 3-7."""
    jobs = [J("A", 0, 10, 3, 0), J("B", 1, 1, 3, 0)]
    ab = simulate(jobs, 1, "srtf", preempt_loading="abort")
    fi = simulate(jobs, 1, "srtf", preempt_loading="finish")
    assert (ab["A"].futile, ab["A"].n_futile, ab["B"].completion) == (1, 1, 5)
    assert (fi["A"].futile, fi["A"].n_futile, fi["B"].first_start, fi["B"].completion) == (3, 1, 3, 7)
    assert fi["A"].L == 3 + 3  # the lost load, then the reload


def test_boundary_case_preempted_as_its_load_ends():
    """1 GPU, ℓ = 2, p = 1: A(0, 10), B(2, 1): A's load ends at 2 as B arrives: the whole load is
    futile, nothing is saved (eq. (2) at ΔA = p + ℓ)."""
    res = simulate([J("A", 0, 10, 2, 1), J("B", 2, 1, 0, 0)], 1, "srtf")
    assert (res["A"].futile, res["A"].n_futile, res["A"].P) == (2, 1, 0)
    assert res["B"].first_start == 2


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        # X = 0: B preempts A at 5 (save 5-6), loads 6-8; C arrives at 8 as B's load ends: B's
        # whole load is futile (eq. (2)); C runs 8-11; the handler starts B (11-18), then A.
        (0, {"A": 37, "B": 18, "C": 11}),
        # X = 10: B's preemption is deferred to 15; C (8) finds A in DRQ: WQ. At 15 A (7 left)
        # is preempted, B starts at 16, ends 23; the handler starts C (23-26), then A (26-35).
        (10, {"A": 35, "B": 23, "C": 26}),
    ],
)
def test_lazer_by_hand(x, expected):
    jobs = [J("A", 0, 20, 2, 1), J("B", 5, 5, 2, 1), J("C", 8, 1, 2, 1)]
    res = simulate(jobs, 1, "lazer", deferral=x)
    assert _completions(res) == expected
    assert res["B"].n_futile == (1 if x == 0 else 0)


@settings(max_examples=300, **_SETTINGS)
@given(w=workloads(), option=OPTIONS)
def test_lifecycle_identity(w, option):
    """(1): JCT = W + L + T + P; T = work (rate 1); futile <= L; every job ends."""
    servers, jobs = w
    family, opts = option
    res = simulate(jobs, sum(servers), family, **opts)
    for j in jobs:
        r = res[j.name]
        assert r.completion - j.arrival == r.W + r.L + r.T + r.P
        assert j.work == r.T and r.first_start >= j.arrival
        assert 0 <= r.futile <= r.L and r.n_futile <= r.n_preemptions
        if family in ("fifo", "sjf"):
            assert r.n_preemptions == 0 and j.load == r.L


@settings(max_examples=300, **_SETTINGS)
@given(w=workloads())
def test_reserve_modes_agree_without_saves(w):
    """With p = 0 and aborted loads every GPU a preemption frees is free at once, nothing is ever
    being saved, so no claim outlives its round: "best" and "preemptor" must agree."""
    servers, jobs = w
    jobs = [J(j.name, j.arrival, j.work, j.load, 0, j.gpus) for j in jobs]
    best = simulate(jobs, sum(servers), "srtf", reserve="best")
    pre = simulate(jobs, sum(servers), "srtf", reserve="preemptor")
    assert best == pre


@settings(max_examples=300, **_SETTINGS)
@given(w=workloads(), reserve=st.sampled_from(["best", "preemptor"]))
def test_periodic_with_period_one_is_srtf_without_saves(w, reserve):
    """Integer data, P = 1: a tick at every integer time, so every event time has a full round.
    Without saves (p = 0, aborted loads) no claim outlives its round and a round at a time
    without events changes nothing, so periodic SRTF is SRTF.

    With saves it is not, by R1-R12 themselves (hypothesis found both): (i) "preemptor": a job
    passed over at t because the only GPU was claimed, while the claimant starts at t, may preempt
    that claimant at the next tick, which SRTF only does at its next event; (ii) "best": R11 claims
    its victims' GPUs, then free ones, while the round after (R10: GPUs being saved first) may
    leave a free GPU to a worse job that, at t, had preempted a job for want of one.
    """
    servers, jobs = w
    jobs = [J(j.name, j.arrival, j.work, j.load, 0, j.gpus) for j in jobs]
    a = simulate(jobs, sum(servers), "srtf", reserve=reserve)
    b = simulate(jobs, sum(servers), "srtf-periodic", reserve=reserve, period=1)
    assert a == b


@settings(max_examples=300, **_SETTINGS)
@given(
    jobs=st.lists(st.tuples(st.integers(0, 8), st.integers(1, 8)), min_size=1, max_size=6),
)
def test_one_gpu_without_overheads_srtf_lazer_and_srpt_agree(jobs):
    """1 GPU, ℓ = p = 0: SRTF and Lazer (X = 0) are both SRPT; SRPT's total flow time is the
    optimum, so it is at most FIFO's and SJF's."""
    specs = [J(i, a, w) for i, (a, w) in enumerate(jobs)]
    srtf = simulate(specs, 1, "srtf")
    lazer = simulate(specs, 1, "lazer")
    assert _completions(srtf) == _completions(lazer)
    flow = {
        p: sum(r.completion - s.arrival for s, r in zip(specs, simulate(specs, 1, p).values(), strict=True))
        for p in ("srtf", "fifo", "sjf")
    }
    assert flow["srtf"] <= min(flow["fifo"], flow["sjf"])


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="work"):
        ReferenceSim([J("a", 0, 0)], 1, "srtf")
    with pytest.raises(ValueError, match="period"):
        ReferenceSim([J("a", 0, 1)], 1, "srtf-periodic")
    with pytest.raises(ValueError, match="GPUs"):
        ReferenceSim([J("a", 0, 1, gpus=3)], 2, "fifo")
