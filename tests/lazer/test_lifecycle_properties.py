"""(1) and (2) on random workloads under every policy of the study (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.lazer import Lazer, check_lifecycle, is_futile, lifecycle_from_log
from optsched.lazer.baselines import baseline
from optsched.lazer.lifecycle import srpt_total_flow
from optsched.sim import Simulator, replay_log

from .conftest import POLICIES, run, verify_run, workloads


@settings(max_examples=60, deadline=None)
@given(w=workloads(), name=st.sampled_from(POLICIES), base=st.sampled_from([5.0, 60.0]))
def test_lifecycle_and_verify(w, name, base):
    cluster, jobs = w
    res, _ = run(cluster, jobs, name, base=base)
    df = res.jobs_frame().set_index("job_id")
    assert (df["status"] == "done").all()
    # (1) from the engine's counters and from the log alone, and the two agree
    assert check_lifecycle(res) == []
    # T_k = duration under every policy (rate 1)
    np.testing.assert_allclose(df["training_time"], df["work"], rtol=1e-9, atol=1e-9)
    # futile <= L; the shared replay agrees
    assert (df["futile_time"] <= df["loading_time"] + 1e-9).all()
    rp = replay_log(res.log).set_index("job_id").loc[df.index]
    np.testing.assert_allclose(rp["futile_time"], df["futile_time"], atol=1e-9)
    if name == "sjf":
        assert (df["futile_time"] == 0).all() and (df["n_preemptions"] == 0).all()
    rep = verify_run(cluster, jobs, res, full=False)
    assert rep.ok, rep.summary()


@settings(max_examples=30, deadline=None)
@given(w=workloads(), name=st.sampled_from(POLICIES))
def test_without_overheads_the_full_verifier_accepts(w, name):
    cluster, jobs = w
    res, _ = run(cluster, jobs, name, zero=True)
    rep = verify_run(cluster, jobs, res, full=True)
    assert rep.ok, rep.summary()
    assert res.jobs_frame()["futile_time"].sum() == 0


@settings(max_examples=30, deadline=None)
@given(w=workloads(), period=st.sampled_from([360.0, 600.0]))
def test_periodic_no_futile_and_waits_for_a_tick(w, period):
    """Zero futile for periodic SRTF when max p + max l < P (loads <= 181 s here); W_k >= time to
    the next tick (ticks at A0, A0 + P, ..., A0 the first arrival)."""
    cluster, jobs = w
    res, _ = run(cluster, jobs, f"srtf-{int(period)}")
    df = res.jobs_frame().set_index("job_id")
    assert (df["futile_time"] == 0).all()
    a0 = df["arrival"].min()
    tick = a0 + np.ceil((df["arrival"] - a0) / period - 1e-12) * period
    assert (df["first_start"] >= tick - 1e-9).all()
    assert (df["waiting"] >= tick - df["arrival"] - 1e-9).all()


@settings(max_examples=80, deadline=None)
@given(
    T_c=st.sampled_from([30.0, 80.0, 150.0]),
    load=st.integers(1, 20),
    save=st.integers(0, 10),
    delta=st.integers(1, 5),
    gap=st.integers(0, 35),
    name=st.sampled_from(["srtf", "lazer-zero", "lazer-oracle"]),
)
def test_one_gpu_chain_matches_eq2(T_c, load, save, delta, gap, name):
    """A trains, B arrives delta s after A's load ended, C arrives gap s after B: the engine's
    futile count is (2)'s, boundary gap = p + l included; the oracle deferral has none. B preempts A
    (T'_B < T'_A: the premise of (2)); C is shorter than B, between, or longer than A."""
    T_a, T_b = 100.0, 60.0
    jobs = [
        Job("A", work=T_a),
        Job("B", work=T_b, arrival=load + delta),
        Job("C", work=T_c, arrival=load + delta + gap),
    ]
    pol = Lazer(deferral="oracle") if name == "lazer-oracle" else Lazer() if name == "lazer-zero" else baseline("srtf")
    res = Simulator(Cluster.homogeneous(1, 1), jobs, pol, load_time=float(load), save_time=float(save)).run()
    df = res.jobs_frame().set_index("job_id")
    expected = is_futile(T_a - delta, T_b, T_c, save, load, gap)
    if name == "lazer-oracle":
        assert df["n_futile"].sum() == 0
    else:
        assert df["n_futile"].sum() == int(expected), df
        assert df.loc["B", "n_futile"] == int(expected)
        if expected:
            assert df.loc["B", "futile_time"] == pytest.approx(gap - save)
    assert check_lifecycle(res) == []
    assert lifecycle_from_log(res.log)["B"]["n_futile"] == df.loc["B", "n_futile"]


@settings(max_examples=60, deadline=None)
@given(spec=st.lists(st.tuples(st.integers(1, 20), st.integers(0, 30)), min_size=1, max_size=8))
def test_zero_overheads_one_gpu_lazer_equals_srtf_equals_srpt(spec):
    jobs = [Job(i, work=float(w), arrival=float(a)) for i, (w, a) in enumerate(spec)]
    cl = Cluster.homogeneous(1, 1)
    opt = srpt_total_flow(jobs)
    for pol in (Lazer(), baseline("srtf")):
        res = Simulator(cl, jobs, pol).run()
        assert res.summary()["total_flow_time"] == pytest.approx(opt, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name", ["srtf", "lazer-zero"])
@pytest.mark.parametrize("gap, futile", [(2.0, False), (2.5, True), (7.0, True), (7.5, False)])
def test_one_gpu_chain_boundaries(name, gap, futile):
    """p = 2, l = 5: (2) holds for 2 < gap <= 7; at gap = 7 B's load has just ended (boundary)."""
    jobs = [Job("A", work=100), Job("B", work=60, arrival=10), Job("C", work=30, arrival=10 + gap)]
    pol = Lazer() if name == "lazer-zero" else baseline("srtf")
    res = Simulator(Cluster.homogeneous(1, 1), jobs, pol, load_time=5.0, save_time=2.0).run()
    df = res.jobs_frame().set_index("job_id")
    assert is_futile(95, 60, 30, 2.0, 5.0, gap) == futile
    assert df["n_futile"].sum() == int(futile)
    assert df.loc["B", "futile_time"] == pytest.approx(gap - 2.0 if futile else 0.0)
