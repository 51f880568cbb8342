"""srtf-periodic (decisions at ticks) and SRTF's reservation of GPUs being saved."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.exceptions import InvalidOptionError
from optsched.sim import PeriodicSRTF, Simulator, get_policy

from .test_invariants import workloads


def _frame(jobs, policy, **kw):
    return Simulator(Cluster.homogeneous(1, 1), jobs, policy, **kw).run().jobs_frame().set_index("job_id")


def test_reserve_best_gives_saved_gpus_to_the_best_waiting_job():
    # A trains from 1 (1 s load); B (shorter) preempts it at 2 and waits for A's 5 s save (to 7);
    # C, shorter still, arrives at 4 during that save.
    jobs = [Job("A", work=100), Job("B", work=10, arrival=2), Job("C", work=2, arrival=4)]
    pre = _frame(jobs, get_policy("srtf", reserve="preemptor"), save_time=5, load_time=1)
    best = _frame(jobs, get_policy("srtf", reserve="best"), save_time=5, load_time=1)
    assert get_policy("srtf").reserve == "best"  # the one documented default (R7), shown in repr
    for name in ("srtf", "las", "srtf-periodic"):
        assert "reserve='best'" in repr(get_policy(name))
    # preemptor: the GPU goes to B at 7; C preempts B as its load ends (8): B's load is futile
    assert pre.loc["B", "first_start"] == pytest.approx(7) and pre.loc["C", "first_start"] == pytest.approx(8)
    assert pre.loc["B", "futile_time"] == pytest.approx(1)
    # best: at 7 the GPU goes to C, the best waiting job; nothing is futile
    assert best.loc["C", "first_start"] == pytest.approx(7)
    assert best["futile_time"].sum() == pytest.approx(0)
    with pytest.raises(InvalidOptionError, match="reserve"):
        get_policy("srtf", reserve="first")


def test_periodic_srtf_ticks_from_the_first_arrival():
    """A trace with Unix-epoch arrivals (1.6e9 s) ticks from its first job, not from 0: the run
    takes a few events, on both engines, and every start is at first arrival + k * period."""
    t0 = 1.6e9
    jobs = [Job("A", work=25, arrival=t0 + 3), Job("B", work=3, arrival=t0 + 12), Job("C", work=1, arrival=t0 + 31)]
    for engine in ("python", "compiled"):
        res = Simulator(Cluster.homogeneous(1, 1), jobs, PeriodicSRTF(period=10), engine=engine).run(max_events=100)
        df = res.jobs_frame().set_index("job_id")
        # ticks at t0 + 3, 13, 23, ...: B (3 s left) preempts A (15 s left) at 13 and ends at 16; A
        # resumes at 23; C (1 s) preempts A (5 s left) at 33; A resumes at 43 and ends at 48
        assert (df["first_start"] - t0).tolist() == pytest.approx([3, 13, 33])
        assert (df["completion"] - t0).tolist() == pytest.approx([48, 16, 34])
        assert res.n_events < 20


def test_periodic_srtf_decides_at_ticks_only():
    jobs = [Job("A", work=25), Job("B", work=3, arrival=12), Job("C", work=1, arrival=31)]
    df = _frame(jobs, PeriodicSRTF(period=10))
    # B arrives at 12, preempts A at the tick at 20; A resumes at the tick after B ends (23 -> 30)
    # and ends at 35; C arrives at 31 and waits for the tick at 40
    assert df["first_start"].tolist() == pytest.approx([0, 20, 40])
    assert df.loc["B", "completion"] == pytest.approx(23) and df.loc["A", "completion"] == pytest.approx(35)
    with pytest.raises(InvalidOptionError, match="period"):
        PeriodicSRTF(period=0)


@settings(max_examples=40, deadline=None)
@given(
    w=workloads(),
    period=st.sampled_from([0.5, 2.0, 5.0]),
    load=st.sampled_from([0.0, 0.5]),
    save=st.sampled_from([0.0, 0.25]),
)
def test_periodic_starts_only_at_ticks_and_is_futile_free_when_loads_are_short(w, period, load, save):
    cluster, jobs = w
    res = Simulator(cluster, jobs, get_policy("srtf-periodic", period=period), load_time=load, save_time=save).run()
    df = res.jobs_frame()
    if save == 0:  # every start is at a tick (with saves, a tick's preemptor starts when they end)
        ticks = ((df["first_start"] - df["arrival"].min()) / period).round(9)  # ticks from the first arrival
        assert (ticks == ticks.round()).all()
    if load + save < period:  # a job started at a tick trains before the next: never preempted while loading
        assert (df["futile_time"] == 0).all()
    assert (df["status"] == "done").all()
