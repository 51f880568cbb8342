"""Stronger bounds of Problem (8) (issue 12 item 3): the energy rows hold for every grid schedule,
the LP relaxation of the time-indexed model is a valid bound, CP-SAT reports at least it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.asrpt import toy_instance
from optsched.asrpt.exact import grid_list_schedule, lp_relaxation_bound, solve_exact
from optsched.asrpt.formulation import energy_rows, job_patterns
from optsched.asrpt.generate import random_instance
from optsched.solvers import SolveOptions
from optsched.verify import verify_result

OPT = SolveOptions(threads=1, time_limit=30)


def _small(n, seed):
    return random_instance(
        n, n_servers=2, gpus_per_server=2, seed=seed, single_gpu=0.3, mean_slots=2.0, arrival_rate=1.0
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 6), perm=st.randoms(use_true_random=False))
def test_energy_rows_hold_for_every_grid_schedule(seed, n, perm):
    inst = _small(n, seed)
    pats = {j.id: job_patterns(j, inst) for j in inst.jobs}
    order = [j.id for j in inst.jobs]
    perm.shuffle(order)
    sched = grid_list_schedule(inst, order, pats)
    t = [round(sched.segments(j.id)[0].start / inst.slot) for j in inst.jobs]
    for idx, coef, rhs in energy_rows(inst, pats):
        assert sum(c * t[i] for c, i in zip(coef, idx, strict=True)) >= rhs


def test_energy_rows_bind_on_a_full_cluster():
    """Many jobs on few GPUs: some row is beyond what the releases imply (else the rows add nothing)."""
    inst = random_instance(12, n_servers=2, gpus_per_server=2, seed=3, mean_slots=3.0, arrival_rate=5.0)
    pats = {j.id: job_patterns(j, inst) for j in inst.jobs}
    assert energy_rows(inst, pats)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4))
def test_lp_bound_below_the_optimum_and_cpsat_bound_at_least_it(seed, n):
    inst = _small(n, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve_exact(inst, backend="highs", options=OPT)
        r = solve_exact(inst, backend="cpsat", options=OPT, stop_at_bound=False)
    lp = lp_relaxation_bound(inst)
    assert ref.status.value == "optimal" and lp is not None
    assert lp <= ref.objective + 1e-6
    assert r.info["lp_bound"] == pytest.approx(lp, rel=1e-9)
    assert r.bound >= lp - r.info["objective_rounding"] - 2 * inst.slot / 1e4 - 1e-6
    assert r.objective == pytest.approx(ref.objective, abs=r.info["optimality_tolerance"] + 1e-9)
    assert verify_result(inst, r).ok


def test_lp_is_skipped_above_the_size_cap():
    assert lp_relaxation_bound(toy_instance(), max_nonzeros=1) is None
    assert np.isfinite(lp_relaxation_bound(toy_instance()))


# -- the cheap bound: every exact result reports at least it ----------------------------------------
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 5), load=st.sampled_from([0.5, 1.0, 5.0]))
def test_cheap_bound_below_the_optimum_and_the_reported_bound_at_least_it(seed, n, load):
    """On a full cluster (arrival rate 5 per slot) the area part is the larger; on an empty one the
    own lengths are. Proven optima of the time-indexed model (HiGHS)."""
    from optsched.asrpt.exact import cheap_bound

    inst = random_instance(
        n, n_servers=2, gpus_per_server=2, seed=seed, single_gpu=0.3, mean_slots=2.0, arrival_rate=load
    )
    b, which = cheap_bound(inst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve_exact(inst, backend="highs", options=OPT)
    assert ref.status.value == "optimal"
    assert 0 < b <= ref.objective + 1e-6
    assert ref.bound >= b - 1e-9 and ref.info["cheap_bound"] == which in ("own_length", "area")


def test_the_area_part_waits_on_a_full_cluster():
    # twelve jobs arriving together on 4 GPUs: they cannot all start at once, the area part counts it
    from optsched.asrpt.exact import cheap_bound

    inst = random_instance(12, n_servers=2, gpus_per_server=2, seed=3, mean_slots=3.0, arrival_rate=50.0)
    assert cheap_bound(inst)[1] == "area"


def test_a_solve_stopped_at_once_reports_the_cheap_bound_not_zero():
    """A time limit too short for any solver proof: the bound is the cheap one (>= 0, named), not
    CP-SAT's 0 less its rounding allowance (a negative number where a time belongs)."""
    from optsched.asrpt.exact import cheap_bound

    inst = random_instance(10, n_servers=2, gpus_per_server=4, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_exact(inst, backend="cpsat", options=SolveOptions(threads=1, time_limit=0.01))
    b, which = cheap_bound(inst)
    assert b > 0 and r.bound >= b - 1e-9 and r.info["cheap_bound"] == which


@pytest.mark.slow
def test_64_jobs_on_8x8_report_a_positive_bound():
    """The paper's size: 64 jobs on 8 x 8 GPUs (CP-SAT's own bound was 0 less its rounding
    allowance, -0.032, gap 100 %)."""
    inst = random_instance(64, n_servers=8, gpus_per_server=8, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_exact(inst, backend="cpsat", options=SolveOptions(threads=1, time_limit=20))
    assert r.bound > 0 and r.bound <= r.objective and r.gap < 0.10


def test_a_warm_start_that_meets_the_cheap_bound_is_optimal_without_a_solve():
    """16 jobs on 8 x 8 GPUs never need to wait: the list schedule meets each job's own least
    completion, so nothing is built or solved (CP-SAT once spent its whole limit on such a case)."""
    from optsched.asrpt.exact import cheap_bound

    inst = random_instance(16, n_servers=8, gpus_per_server=8, seed=1)
    r = solve_exact(inst, options=SolveOptions(threads=1, time_limit=20))
    assert r.status.value == "optimal" and r.info["incumbent"] == "initial"
    assert r.objective == pytest.approx(cheap_bound(inst)[0], rel=1e-12)
    assert r.info["solver_message"] == "the initial schedule meets the initial bound"
    assert verify_result(inst, r).ok


def test_a_relaxation_out_of_memory_keeps_the_cheap_bound_and_says_so(monkeypatch):
    import optsched.asrpt.exact as ex

    def no_memory(*a, **k):
        raise MemoryError

    monkeypatch.setattr(ex, "lp_relaxation_bound", no_memory)
    inst = _small(4, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = ex.solve_exact(inst, backend="cpsat", options=OPT, stop_at_bound=False)
    assert r.info["lp_skipped"].startswith("out of memory") and r.info["lp_bound"] is None
    assert r.bound >= ex.cheap_bound(inst)[0] - 1e-9
