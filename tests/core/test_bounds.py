"""The cheap bounds of optsched.core.bounds hold for every input: summed per job, they stay at or
below the optimum whatever the span of the arrivals and the size of the durations (the extreme
cases a difference of two large sums got wrong), and the weighted mean-busy part stays below a
brute-force weighted optimum. The unweighted parts against SRPT's exhaustive search and the
simulator's schedules are in tests/rigid/test_jct_bound.py."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from optsched.core.bounds import (
    MAX_BOUND_JOBS,
    flow_time_bound,
    jct_lower_bound,
    mean_busy_total_flow,
    srpt_total_flow,
)
from optsched.exceptions import InvalidInstanceError


def _pairs(n: int, span: float, seed: int = 0) -> np.ndarray:
    """Arrivals of n jobs in pairs at uniform random instants over ``span`` seconds."""
    rng = np.random.default_rng(seed)
    return np.repeat(np.sort(rng.uniform(0.0, span, n // 2)), 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_microsecond_jobs_in_pairs_over_1e8_seconds_stay_below_the_optimum(seed):
    # 1,000 jobs of 1e-6 s, each 8 GPUs wide on 8 GPUs, arriving in pairs at instants far apart:
    # the optimum runs each pair one after the other, 1e-6 + 2e-6 per pair (exact: the pairs never
    # meet), and the fluid and mean-busy parts are tight there. A difference of two sums of 1e8-s
    # values gave 1.2 % above it.
    n, p = 1000, 1e-6
    r = _pairs(n, 1e8, seed)
    assert np.diff(r[::2]).min() > 1.0  # the pairs never meet
    opt = math.fsum([p + 2 * p] * (n // 2))
    b = jct_lower_bound(r, np.full(n, 8), np.full(n, p), 8)
    assert b.total <= opt * (1 + 1e-12)
    assert b.fluid == pytest.approx(opt, rel=1e-12) and b.mean_busy == pytest.approx(opt, rel=1e-12)


def test_microsecond_one_gpu_pairs_are_bounded_by_their_own_lengths():
    # the same arrivals with 1-GPU jobs: both jobs of a pair run side by side, the optimum is sum p
    n, p = 1000, 1e-6
    r = _pairs(n, 1e8)
    b = jct_lower_bound(r, np.ones(n), np.full(n, p), 8)
    opt = math.fsum([p] * n)
    assert b.total <= opt * (1 + 1e-12) and b.which == "own_length"
    assert b.fluid == pytest.approx(n // 2 * (p / 8 + 2 * p / 8), rel=1e-12)


def test_millisecond_jobs_over_1e6_seconds_stay_below_the_optimum():
    # 1,000 jobs of 1 ms, 8 GPUs wide, at distinct instants over 1e6 s: no job waits, optimum = 1 s
    # (the difference of two sums was 5e-7 above it)
    rng = np.random.default_rng(3)
    r = np.sort(rng.uniform(0.0, 1e6, 1000))
    assert np.diff(r).min() > 1e-3
    b = jct_lower_bound(r, np.full(1000, 8), np.full(1000, 1e-3), 8)
    opt = math.fsum([1e-3] * 1000)
    assert b.total <= opt * (1 + 1e-12)
    assert b.fluid == pytest.approx(opt, rel=1e-12)


@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(1, 4), st.integers(1, 64)), min_size=1, max_size=30),
    st.sampled_from([(0.0, 1.0), (1.6e9, 1.0), (1.6e9, 2.0**-20), (2.0**40, 2.0**-10), (0.0, 2.0**-30)]),
)
@example([(0, 4, 1), (0, 4, 1)], (2.0**40, 2.0**-10))
@example([(0, 1, 1), (1, 1, 1)], (1.6e9, 2.0**-20))
def test_the_bound_scales_and_shifts_with_the_data(jobs, shift):
    """Arrivals at any origin and data in any unit give the same bound in that unit (dyadic data
    finer than the origin's last digit: the shifted and scaled inputs are exact, so any difference is
    the bound's own rounding)."""
    origin, unit = shift
    r = np.array([a for a, _, _ in jobs], dtype=float)
    g = np.array([b for _, b, _ in jobs], dtype=float)
    p = np.array([c for _, _, c in jobs], dtype=float)
    a = jct_lower_bound(r, g, p, 4)
    b = jct_lower_bound(origin + r * unit, g, p * unit, 4)
    for k in ("own_length", "fluid", "mean_busy"):
        assert getattr(b, k) == pytest.approx(getattr(a, k) * unit, rel=1e-13)


def brute_weighted_preemptive(release, gpus, work, weights, G) -> float:
    """min sum w (C - r) over schedules that run any set of released jobs of at most G GPUs in each
    unit slot (preemption at integer times): a feasible value, so at least the true optimum."""
    n = len(release)

    @functools.cache
    def best(t: int, rem: tuple) -> float:
        if all(x == 0 for x in rem):
            return 0.0
        ready = [i for i in range(n) if rem[i] > 0 and release[i] <= t]
        out = math.inf
        for k in range(len(ready), -1, -1):
            for S in itertools.combinations(ready, k):
                if sum(gpus[i] for i in S) > G or (k == 0 and ready):
                    continue
                r = list(rem)
                for i in S:
                    r[i] -= 1
                v = sum(weights[i] * (t + 1 - release[i]) for i in S if r[i] == 0) + best(t + 1, tuple(r))
                out = min(out, v)
        return out

    return best(0, tuple(work))


@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 5)), min_size=1, max_size=4
    )
)
@example([(0, 3, 2, 1), (0, 1, 1, 5), (1, 2, 1, 2)])
def test_the_weighted_bound_is_below_a_weighted_preemptive_schedule(jobs):
    r = [a for a, _, _, _ in jobs]
    g = [b for _, b, _, _ in jobs]
    p = [c for _, _, c, _ in jobs]
    w = [d for _, _, _, d in jobs]
    feasible = brute_weighted_preemptive(r, g, p, w, 3)
    b = flow_time_bound(r, g, p, 3, weights=w)
    assert b.fluid == 0.0  # SRPT is no bound with weights
    assert b.own_length <= feasible + 1e-9 and b.mean_busy <= feasible + 1e-9


def test_unit_weights_give_the_unweighted_bound():
    rng = np.random.default_rng(5)
    r, g, p = rng.uniform(0, 100, 50), rng.integers(1, 9, 50), rng.exponential(20, 50)
    assert mean_busy_total_flow(r, p, g, 8, weights=np.ones(50)) == pytest.approx(mean_busy_total_flow(r, p, g, 8))


def test_a_least_duration_apart_from_the_work_sets_the_own_length_part():
    # a job of 16 GPU-seconds that may run on 8 GPUs in 2 s at best, or on 4 GPUs in 4 s: own length
    # counts its least duration (2 s), the area parts its least work at its widest (8 GPUs x 2 s)
    b = flow_time_bound([0.0], [8], [2.0], 8, least_duration=[2.0])
    assert b.own_length == 2.0 and b.mean_busy == 2.0
    b = flow_time_bound([0.0], [8], [2.0], 8, least_duration=[1.5])
    assert b.own_length == 1.5


def test_srpt_flow_with_preemption_at_unix_time():
    # the short job preempts the long one at 1: flows 1 (short) and 4 (long, done at 4)
    assert srpt_total_flow([1.6e9, 1.6e9 + 1], [3.0, 1.0]) == 5.0


def test_bad_input_is_refused_naming_the_field():
    with pytest.raises(InvalidInstanceError, match="'weight' of job 1"):
        flow_time_bound([0, 0], [1, 1], [1, 1], 2, weights=[1, -1])
    with pytest.raises(InvalidInstanceError, match="capacity"):
        flow_time_bound([0], [1], [1], 0)
    with pytest.raises(InvalidInstanceError, match="one value per job"):
        flow_time_bound([0, 1], [1], [1, 1], 2)
    assert MAX_BOUND_JOBS >= 10**7


def test_a_workload_beyond_the_limit_is_refused_with_its_size_and_the_limit(monkeypatch):
    import optsched.core.bounds as b

    monkeypatch.setattr(b, "MAX_BOUND_JOBS", 3)
    with pytest.raises(InvalidInstanceError, match=r"4 jobs is more than the cheap bound handles \(3\)"):
        b.flow_time_bound([0, 0, 0, 0], [1] * 4, [1] * 4, 2)
