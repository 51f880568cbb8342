"""Futile preemptions (Lazer's eq. (2)): a load lost to a preemption, boundary included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.exceptions import InvalidOptionError
from optsched.sim import Simulator, get_policy, replay_log

from .test_invariants import workloads


def _run(jobs, **kw):
    res = Simulator(Cluster.homogeneous(1, 1), jobs, get_policy("srtf"), load_time=5.0, save_time=2.0, **kw).run()
    return res, res.jobs_frame().set_index("job_id")


@pytest.mark.parametrize(
    "arrival, futile, b_start",
    [
        (3.0, 3.0, 3.0),  # B arrives while A loads: A's 3 s of loading are lost, nothing to save
        (5.0, 5.0, 5.0),  # B arrives as A's load ends: A has not trained, its whole load is lost, no save
        (7.0, 0.0, 9.0),  # A trained 2 s: not futile; A saves 2 s, B starts at 9
    ],
)
def test_one_gpu_chain(arrival, futile, b_start):
    res, df = _run([Job("A", work=100), Job("B", work=10, arrival=arrival)])
    assert df.loc["A", "futile_time"] == pytest.approx(futile)
    assert df.loc["A", "n_futile"] == (1 if futile else 0)
    assert df.loc["A", "saving_time"] == pytest.approx(0.0 if futile else 2.0)
    assert df.loc["B", "first_start"] == pytest.approx(b_start)
    rp = replay_log(res.log).set_index("job_id")
    assert rp.loc["A", "futile_time"] == pytest.approx(futile) and rp.loc["A", "n_futile"] == df.loc["A", "n_futile"]


def test_finish_mode_loses_the_whole_load():
    res, df = _run([Job("A", work=100), Job("B", work=10, arrival=3.0)], preempt_loading="finish")
    assert df.loc["A", "futile_time"] == pytest.approx(5.0) and df.loc["A", "loading_time"] >= 5.0
    assert df.loc["B", "first_start"] == pytest.approx(5.0)  # A's GPU is freed when its load ends
    rp = replay_log(res.log).set_index("job_id")
    for col in ("futile_time", "loading_time", "saving_time", "n_futile"):
        assert rp.loc["A", col] == pytest.approx(df.loc["A", col]), col
    with pytest.raises(InvalidOptionError, match="preempt_loading"):
        Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], get_policy("fifo"), preempt_loading="wait")


@settings(max_examples=40, deadline=None)
@given(
    w=workloads(),
    policy=st.sampled_from(["fifo", "sjf", "srtf", "las"]),
    mode=st.sampled_from(["abort", "finish"]),
    load=st.sampled_from([0.0, 0.5, 2.0]),
    save=st.sampled_from([0.0, 1.0]),
)
def test_futile_time_is_part_of_loading_and_replays(w, policy, mode, load, save):
    cluster, jobs = w
    opts = {"quantum": 2.0} if policy == "las" else {}
    res = Simulator(
        cluster, jobs, get_policy(policy, **opts), load_time=load, save_time=save, preempt_loading=mode
    ).run()
    df = res.jobs_frame().set_index("job_id")
    assert (df["futile_time"] <= df["loading_time"] + 1e-9).all()
    if policy in ("fifo", "sjf") or load == 0:
        assert (df["futile_time"] == 0).all()
    rp = replay_log(res.log).set_index("job_id").loc[df.index]
    for col in ("futile_time", "n_futile", "loading_time", "saving_time", "training_time"):
        assert rp[col].to_numpy(float) == pytest.approx(df[col].to_numpy(float), abs=1e-9), col


def test_lazer_views_metrics_and_timing():
    import numpy as np

    from optsched.traces import synthetic_workload

    jobs = [Job("A", work=100), Job("B", work=10, arrival=5.0), Job("C", work=5, arrival=50)]
    sim = Simulator(
        Cluster.homogeneous(1, 1), jobs, get_policy("srtf"), load_time=5.0, save_time=2.0, time_decisions=True
    )
    assert sim.load_time("A", {0: 1}) == 5.0 and sim.save_time("A") == 0.0
    res = sim.run()
    s = res.summary()
    df = res.jobs_frame()
    held = (df["gpus"] * (df["loading_time"] + df["training_time"] + df["saving_time"])).sum()
    assert s["futile_gpu_share"] == pytest.approx((df["gpus"] * df["futile_time"]).sum() / held)
    assert s["futile_gpu_share"] > 0
    assert s["mean_training_utilization"] == pytest.approx(115 / res.end_time)
    assert s["p95_waiting"] >= s["p50_waiting"] >= 0
    assert len(res.decision_seconds) > 0 and s["decision_ms_mean"] >= 0
    w = res.utilization_windows(10.0)
    assert len(w) == int(np.ceil(res.end_time / 10.0)) and ((w >= 0) & (w <= 1 + 1e-12)).all()
    assert float(
        np.average(w, weights=np.diff(np.append(np.arange(0, res.end_time, 10.0), res.end_time)))
    ) == pytest.approx(res.mean_utilization())
    # job-table columns reach job.attrs (model, and attrs_columns)
    table = synthetic_workload(20, cluster_gpus=4, models=["bert"], seed=0)
    table["predicted"] = table["duration"] * 2
    sim = Simulator(Cluster.homogeneous(1, 4), table, get_policy("fifo"), attrs_columns=["predicted"])
    assert sim.jobs[0].attrs["model"] == "bert" and sim.jobs[0].attrs["predicted"] == pytest.approx(
        table["duration"].iloc[0] * 2
    )
