"""Invariants of simulated runs on random workloads (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job
from optsched.sim import PlacementRate, Simulator, get_policy, replay_log
from optsched.verify import verify

POLICY_NAMES = ["fifo", "sjf", "srtf", "las"]
RULES = ["consolidate", "first_fit", "least_loaded", "random", "whole_node"]


@st.composite
def workloads(draw, max_jobs=10):
    n_srv = draw(st.integers(1, 3))
    g = draw(st.integers(1, 4))
    cluster = Cluster.homogeneous(n_srv, g)
    n = draw(st.integers(1, max_jobs))
    jobs = []
    for i in range(n):
        gpus = draw(st.integers(1, n_srv * g))
        single = gpus <= g and draw(st.booleans())
        jobs.append(
            Job(
                i,
                work=draw(st.integers(1, 20)) / 2,
                gpus=gpus,
                single_server=single,
                arrival=draw(st.integers(0, 15)) / 2,
            )
        )
    return cluster, jobs


def run(cluster, jobs, policy, rule, *, load=0.0, save=0.0, rate=None, seed=0, log=True):
    opts = {"quantum": 2.0} if policy == "las" else {}
    pol = get_policy(policy, placement=rule, **opts)
    return Simulator(
        cluster, jobs, pol, load_time=load, save_time=save, rate_model=rate, seed=seed, record_log=log
    ).run()


@settings(max_examples=40)
@given(
    w=workloads(),
    policy=st.sampled_from(POLICY_NAMES),
    rule=st.sampled_from(RULES),
    load=st.sampled_from([0.0, 0.5]),
    save=st.sampled_from([0.0, 1.0]),
    penalty=st.sampled_from([0.0, 0.5]),
)
def test_invariants(w, policy, rule, load, save, penalty):
    cluster, jobs = w
    res = run(cluster, jobs, policy, rule, load=load, save=save, rate=PlacementRate(penalty))
    df = res.jobs_frame().set_index("job_id")
    # every job finishes, never before arrival
    assert (df["status"] == "done").all()
    assert (df["first_start"] >= df["arrival"] - 1e-9).all()
    # GPUs in use never exceed capacity (engine's own count and the independent verifier on segments)
    assert res.utilization()["gpus_in_use"].max() <= cluster.total_gpus
    assert res.utilization()["gpus_in_use"].iloc[-1] == 0
    inst = Instance(cluster, jobs)
    rep = verify(inst, res.schedule())
    assert not [v for v in rep.violations if v.label in ("capacity", "release", "demand", "no_self_overlap")], (
        rep.summary()
    )
    # the event log alone replays to the same per-job metrics
    rp = replay_log(res.log).set_index("job_id").loc[df.index]
    for col in (
        "arrival",
        "first_start",
        "completion",
        "loading_time",
        "training_time",
        "saving_time",
        "n_preemptions",
        "futile_time",
        "n_futile",
    ):
        np.testing.assert_allclose(rp[col].to_numpy(float), df[col].to_numpy(float), atol=1e-9, err_msg=col)
    # training time equals work at rate: integral of logged rates over training = work
    np.testing.assert_allclose(rp["work_done"].to_numpy(float), df["work"].to_numpy(float), rtol=1e-9)
    # jct = waiting + loading + training + saving, all non-negative
    assert (df["waiting"] >= -1e-9).all()
    if penalty == 0.0:
        np.testing.assert_allclose(df["training_time"], df["work"], rtol=1e-9)


@settings(max_examples=25)
@given(w=workloads(), policy=st.sampled_from(POLICY_NAMES))
def test_zero_overheads_pass_the_full_verifier(w, policy):
    """Rate 1, no load/save: segments are exactly training; the verifier (incl. work) must accept."""
    cluster, jobs = w
    res = run(cluster, jobs, policy, "consolidate")
    rep = verify(Instance(cluster, jobs), res.schedule())
    assert rep.ok, rep.summary()


@settings(max_examples=15)
@given(w=workloads(), policy=st.sampled_from(POLICY_NAMES), seed=st.integers(0, 2**16))
def test_same_seed_same_result(w, policy, seed):
    cluster, jobs = w
    a = run(cluster, jobs, policy, "random", seed=seed, save=1.0)
    b = run(cluster, jobs, policy, "random", seed=seed, save=1.0)
    assert a.jobs_frame().equals(b.jobs_frame())
    assert a.log == b.log


def test_dataframe_input_equals_job_input():
    import pandas as pd

    jobs = [Job(i, work=1 + i % 3, gpus=1 + i % 2, arrival=i * 0.5) for i in range(12)]
    df = pd.DataFrame(
        {
            "job_id": [j.id for j in jobs],
            "arrival": [j.arrival for j in jobs],
            "duration": [j.work for j in jobs],
            "gpus": [j.gpus for j in jobs],
        }
    )
    c = Cluster.homogeneous(1, 2)
    a = Simulator(c, jobs, get_policy("srtf")).run().jobs_frame()
    b = Simulator(c, df, get_policy("srtf")).run().jobs_frame()
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
@settings(max_examples=200)
@given(w=workloads(max_jobs=25), policy=st.sampled_from(POLICY_NAMES), rule=st.sampled_from(RULES))
def test_invariants_many(w, policy, rule):
    cluster, jobs = w
    res = run(cluster, jobs, policy, rule, load=0.5, save=1.0)
    assert res.utilization()["gpus_in_use"].max() <= cluster.total_gpus
    rp = replay_log(res.log)
    np.testing.assert_allclose(rp.sort_values("job_id")["work_done"], [j.work for j in jobs], rtol=1e-9)
