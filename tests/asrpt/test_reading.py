"""Item 4 of issue 16: the second reading of eq. (6) ("ring-boundary") as an option of alpha(x)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.asrpt.model import AsrptJob, Stage
from optsched.asrpt.online import ASRPT, OrderedPolicy
from optsched.asrpt.placement import enumerate_placement, solve_placement
from optsched.asrpt.rate import HeavyEdgeRate
from optsched.asrpt.timing import (
    READINGS,
    alpha,
    alpha_max,
    consolidated_placement,
    spread_placement,
)
from optsched.exceptions import InvalidOptionError
from optsched.solvers import SolveOptions

from .strategies import bandwidths, jobs, placements

SET = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_hand_example_and_bad_option():
    # k = 4 replicas, h = 100 bytes: V = 2 * 3 * 100 / 4 = 150 bytes per replica
    j = AsrptJob(0, [Stage(k=4, p_f=1.0, p_b=2.0, h=100.0)], iterations=1)
    kw = dict(g=2, b_inter=10.0, b_intra=100.0)
    assert alpha(j, [[2, 2]], **kw) == pytest.approx(3 + 2 * 150 / 10)  # nic-share: g V / B_inter
    assert alpha(j, [[2, 2]], reading="ring-boundary", **kw) == pytest.approx(3 + 2 * 150 / (2 * 10))  # / x
    assert alpha(j, [[1, 1, 1, 1]], reading="ring-boundary", **kw) == pytest.approx(alpha(j, [[1, 1, 1, 1]], **kw))
    for bad in ("ring", "", None):
        with pytest.raises(InvalidOptionError, match=r"'reading'.*nic-share, ring-boundary"):
            alpha(j, [[4]], reading=bad, **kw)
    inst_free = [2, 2]
    with pytest.raises(InvalidOptionError, match="reading"):
        enumerate_placement(j, inst_free, reading="x", **kw)

    for cls in (ASRPT, OrderedPolicy, HeavyEdgeRate):
        with pytest.raises(InvalidOptionError, match="reading"):
            cls(reading="bogus")


@SET
@given(data=st.data(), bw=bandwidths())
def test_ring_boundary_never_slower_and_same_extremes(data, bw):
    """Under assumption (A) B_inter <= g B_intra: the second reading is never slower than the first, equal on
    one server and on the one-replica-per-server spread (so alpha^max is the same in both readings)."""
    g, b_inter, b_intra = bw
    job = data.draw(jobs(max_stages=3, max_k=3))
    kw = dict(g=g, b_inter=b_inter, b_intra=b_intra)
    x = data.draw(placements(job, 3))
    assert alpha(job, x, reading="ring-boundary", **kw) <= alpha(job, x, **kw) * (1 + 1e-12)
    for y in (consolidated_placement(job), spread_placement(job)):
        assert alpha(job, y, reading="ring-boundary", **kw) == pytest.approx(alpha(job, y, **kw), rel=1e-12)
    assert alpha_max(job, reading="ring-boundary", **kw) == pytest.approx(alpha_max(job, **kw), rel=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), bw=bandwidths())
def test_ring_boundary_milp_matches_enumeration(data, bw):
    g, b_inter, b_intra = bw
    g = min(g, 3)
    job = data.draw(jobs(max_stages=2, max_k=3))
    n_srv = data.draw(st.integers(1, 3))
    free = [g] * n_srv
    if sum(free) < job.gpus:
        return
    kw = dict(g=g, b_inter=b_inter, b_intra=b_intra, reading="ring-boundary")
    en = enumerate_placement(job, free, **kw)
    ex = solve_placement(job, free, options=SolveOptions(threads=1, time_limit=20), **kw)
    assert ex.status.value == "optimal"
    assert ex.alpha == pytest.approx(en.alpha, rel=1e-6, abs=1e-9)
    assert alpha(job, ex.x, **kw) == pytest.approx(ex.alpha, rel=1e-12)


def test_reading_changes_the_exact_minimum_of_some_jobs():
    """Measured in formulations/asrpt.md: 54 of 200 random multi-GPU jobs on 2-GPU servers."""
    from optsched.asrpt.audit import reading_changes

    out = reading_changes(40, n_servers=4, gpus=2)
    assert 0 < out["changed"] < 40
    assert out["min_ratio"] < 1.0 and out["mean_ratio"] <= 1.0 + 1e-12


def test_policies_run_under_the_second_reading():
    from optsched.asrpt.generate import random_instance
    from optsched.asrpt.online import BASELINES
    from optsched.asrpt.policy import simulate_asrpt

    inst = random_instance(6, n_servers=2, gpus_per_server=2, seed=3)
    tot = {}
    for r in READINGS:
        res = simulate_asrpt(inst, tau=1.0, reading=r)
        tot[r] = res.summary()["total_completion_time"]
        for pol in BASELINES(reading=r).values():
            assert np.isfinite(simulate_asrpt(inst, pol).summary()["total_completion_time"])
    assert tot["ring-boundary"] > 0 and tot["nic-share"] > 0
