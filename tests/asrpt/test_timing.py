"""Invariants of alpha_i(x), eq. (4)-(7), under the reading of formulations/asrpt.md#reading."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.asrpt.model import AsrptJob, Stage
from optsched.asrpt.timing import (
    alpha,
    alpha_max,
    consolidated_placement,
    spread_placement,
    stage_times,
)
from optsched.exceptions import InvalidInstanceError

from .strategies import bandwidths, jobs, placements

SET = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SET
@given(data=st.data(), job=jobs(), bw=bandwidths())
def test_alpha_between_consolidated_and_spread(data, job, bw):
    g, bi, ba = bw
    x = data.draw(placements(job, data.draw(st.integers(1, 5))))
    a = alpha(job, x, g=g, b_inter=bi, b_intra=ba)
    lo = alpha(job, consolidated_placement(job), g=g, b_inter=bi, b_intra=ba)
    hi = alpha_max(job, g=g, b_inter=bi, b_intra=ba)
    assert lo <= a * (1 + 1e-12) + 1e-15
    assert a <= hi * (1 + 1e-12) + 1e-15
    assert a >= max(s.p_f + s.p_b for s in job.stages) - 1e-15 >= 0


@SET
@given(data=st.data(), job=jobs(), bw=bandwidths(assume_nvlink=False), f=st.floats(1.0, 100.0))
def test_alpha_non_increasing_in_each_bandwidth(data, job, bw, f):
    g, bi, ba = bw
    x = data.draw(placements(job, data.draw(st.integers(1, 4))))
    a = alpha(job, x, g=g, b_inter=bi, b_intra=ba)
    assert alpha(job, x, g=g, b_inter=bi * f, b_intra=ba) <= a * (1 + 1e-12)
    assert alpha(job, x, g=g, b_inter=bi, b_intra=ba * f) <= a * (1 + 1e-12)
    assert np.all(stage_times(job, x, g=g, b_inter=bi, b_intra=ba) >= 0)


@SET
@given(job=jobs(), bw=bandwidths(), perm_seed=st.integers(0, 10))
def test_alpha_invariant_under_server_permutation(job, bw, perm_seed):
    g, bi, ba = bw
    x = spread_placement(job)
    rng = np.random.default_rng(perm_seed)
    xp = x[:, rng.permutation(x.shape[1])]
    assert alpha(job, x, g=g, b_inter=bi, b_intra=ba) == pytest.approx(alpha(job, xp, g=g, b_inter=bi, b_intra=ba))


def test_alpha_max_is_the_one_replica_per_server_spread_with_1_over_g_of_the_nic():
    # one stage, k = 2, h = 100 bytes: each replica sends 2(k-1)h/k = 100 bytes over B_inter / g
    j = AsrptJob(0, [Stage(k=2, p_f=1.0, p_b=2.0, h=100.0)], iterations=1)
    assert alpha_max(j, g=4, b_inter=10.0, b_intra=1e9) == pytest.approx(3.0 + 100.0 / (10.0 / 4))
    assert alpha(j, [[2]], g=4, b_inter=10.0, b_intra=50.0) == pytest.approx(3.0 + 100.0 / 50.0)


def test_pipeline_hand_computed():
    # two stages k=1: stage 0 sends 2*d_out = 2e8 B per iteration to stage 1
    j = AsrptJob(0, [Stage(k=1, p_f=0.2, p_b=0.3, d_out=1e8), Stage(k=1, p_f=0.1, p_b=0.1, d_in=1e8)], iterations=1)
    local = alpha(j, [[1], [1]], g=2, b_inter=1e9, b_intra=1e10)
    remote = alpha(j, [[1, 0], [0, 1]], g=2, b_inter=1e9, b_intra=1e10)
    assert local == pytest.approx(0.5 + 2e8 / 1e10)
    assert remote == pytest.approx(0.5 + 2 * 2e8 / 1e9)


@pytest.mark.parametrize(
    "x, words", [([[1]], "has 1 replicas"), ([[1, -1]], "non-negative"), ([[1, 1], [0, 0]], "one row per stage")]
)
def test_bad_placements(x, words):
    j = AsrptJob(0, [Stage(k=2)], iterations=1)
    with pytest.raises(InvalidInstanceError, match=words):
        alpha(j, x, g=2, b_inter=1.0, b_intra=1.0)
