"""SJF-BCO (Alg. 1-3) and the baselines: verified schedules, kappa sets, LS = kappa >= n_g, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.exceptions import InfeasibleError, InvalidInstanceError, InvalidOptionError
from optsched.rarddls import first_fit, list_scheduling, random_schedule, sjf_bco, toy_instance
from optsched.rarddls.generate import paper_instance, random_instance
from optsched.rarddls.sjfbco import kappa_values, passes_bound, run_pass
from optsched.verify import verify_result
from tests.rarddls.strategies import small_instances

ALGOS = [
    lambda i: sjf_bco(i),
    lambda i: sjf_bco(i, bisection="feasibility"),
    first_fit,
    list_scheduling,
    lambda i: random_schedule(i, seed=3),
]


@settings(max_examples=25)
@given(small_instances(max_jobs=6))
def test_every_schedule_verifies(instance):
    for algo in ALGOS:
        r = algo(instance)
        rep = verify_result(instance, r)
        assert rep.ok, rep.summary()


@settings(max_examples=25)
@given(st.integers(0, 10_000), st.sampled_from([[2, 2], [4, 2], [4, 4, 8]]), st.integers(2, 8))
def test_kappa_sizes_equals_full_sweep(seed, caps, n):
    inst = random_instance(n, gpus_per_server=caps, seed=seed)
    a, b = sjf_bco(inst, kappas="all"), sjf_bco(inst, kappas="sizes")
    assert a.objective == b.objective
    assert a.schedule == b.schedule
    assert a.info["theta"] == b.info["theta"]


def test_kappa_set_includes_one():
    inst = random_instance(4, gpus_per_server=[4, 4], seed=1).replace(
        jobs=tuple(
            j if j.gpus > 1 else j.__class__(j.id, 2, j.iterations, j.grad_size, j.compute, j.rho_hat)
            for j in random_instance(4, gpus_per_server=[4, 4], seed=1).jobs
        )
    )
    ks = kappa_values(inst, "sizes")
    assert ks[0] == 1 and min(j.gpus for j in inst.jobs) >= 2


def test_kappa_below_smallest_size_can_be_the_best_pass():
    """The lead's correction: kappa = 1 (all jobs through LBSGF) differs from kappa = min G_j when min G_j > 1."""
    found = False
    for seed in range(60):
        inst = random_instance(6, gpus_per_server=[4, 4, 4], seed=seed)
        inst = inst.replace(
            jobs=tuple(
                type(j)(j.id, max(2, j.gpus), j.iterations, j.grad_size, j.compute, j.rho_hat) for j in inst.jobs
            )
        )
        T = inst.T()
        g = min(j.gpus for j in inst.jobs)
        p1 = run_pass(inst, T, 1)
        pg = run_pass(inst, T, g)
        if p1.ok and pg.ok and p1.makespan < pg.makespan:
            found = True
            break
    assert found


@settings(max_examples=25)
@given(small_instances(max_jobs=6))
def test_ls_equals_sjf_bco_with_kappa_ng(instance):
    a = list_scheduling(instance)
    b = sjf_bco(instance, kappas=[instance.n_g])
    assert a.objective == b.objective and a.schedule == b.schedule


@settings(max_examples=25)
@given(small_instances(max_jobs=6))
def test_thm6_pass_count(instance):
    r = sjf_bco(instance)
    assert r.info["passes"] <= passes_bound(instance, r.info["T"])


def test_rand_is_seeded():
    i = random_instance(6, gpus_per_server=[4, 4], seed=2)
    assert random_schedule(i, seed=5).schedule == random_schedule(i, seed=5).schedule


def test_infeasible_horizon():
    with pytest.raises(InfeasibleError, match="T = 2"):
        sjf_bco(toy_instance(), horizon=2)


def test_bad_options():
    with pytest.raises(InvalidOptionError, match="kappa"):
        sjf_bco(toy_instance(), kappas=[0])
    with pytest.raises(InvalidOptionError, match="kappa"):
        sjf_bco(toy_instance(), kappas=[3])
    with pytest.raises(InvalidOptionError, match="bisection"):
        sjf_bco(toy_instance(), bisection="other")
    with pytest.raises(InvalidInstanceError):
        sjf_bco(object())


def test_paper_setting_runs_and_verifies():
    inst = paper_instance(seed=0)
    assert inst.n_jobs == 160 and inst.cluster.n_servers == 20
    r = sjf_bco(inst, kappas=[1, 32])
    assert verify_result(inst, r).ok


@settings(max_examples=40)
@given(small_instances(max_jobs=4))
def test_smallest_job_first_the_fewest_gpus_starts_at_once(instance):
    """Alg. 1 places jobs by G_j ascending (ties by index): the first one placed, on an empty
    cluster where it fits (G_j <= N), starts at slot 0."""
    r = sjf_bco(instance)
    first = min(instance.jobs, key=lambda j: (j.gpus, instance.jobs.index(j)))
    assert r.schedule.start(first.id) == 0, [(j.id, j.gpus, r.schedule.start(j.id)) for j in instance.jobs]
