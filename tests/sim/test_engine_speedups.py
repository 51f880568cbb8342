"""The speed-ups of the engine and of LAS change no decision.

* LAS switches its quantum timer off while no job waits and back on, on the same grid, when one
  does: its decisions must equal those of a timer that fires at every quantum (the reference
  below keeps the old timer).
* GPUs in use over time are derived from the segments after the run: the integral of that step
  function must equal the GPU-seconds of the segments.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.sim import LAS, SRTF, PlacementRate, Simulator

from .test_invariants import RULES, workloads


class _EveryQuantumLAS(LAS):
    """LAS whose timer fires at every quantum while jobs are active (the behaviour before the
    timer was switched off when no job waits)."""

    def on_arrival(self, sim, job):
        self.queue.push(job, self._wait_key(job))
        self._active += 1
        if self._timer is None:
            self._timer = sim.set_timer(self.quantum, period=self.quantum)

    def on_preempted(self, sim, job):
        super(LAS, self).on_preempted(sim, job)

    def on_timer(self, sim, timer):
        self._tick = True


def _columns(res):
    cols = res.job_columns()
    return {k: np.asarray(v) for k, v in cols.items()}


@settings(max_examples=60, deadline=None)
@given(
    w=workloads(max_jobs=12),
    rule=st.sampled_from(RULES),
    quantum=st.sampled_from([0.5, 1.0, 2.5]),
    save=st.sampled_from([0.0, 0.5]),
    load=st.sampled_from([0.0, 1.0]),
    gpu_weighted=st.booleans(),
)
def test_las_timer_off_while_nothing_waits_changes_no_decision(w, rule, quantum, save, load, gpu_weighted):
    cluster, jobs = w
    runs = []
    for cls in (LAS, _EveryQuantumLAS):
        pol = cls(placement=rule, quantum=quantum, gpu_weighted=gpu_weighted)
        runs.append(Simulator(cluster, jobs, pol, save_time=save, load_time=load, seed=3).run())
    fast, ref = (_columns(r) for r in runs)
    for k in ref:
        if ref[k].dtype.kind == "f":
            np.testing.assert_array_equal(fast[k], ref[k], err_msg=k)
        else:
            assert list(fast[k]) == list(ref[k]), k
    # the timer events it saved are all it changed
    assert runs[0].n_events <= runs[1].n_events


def test_las_resumes_on_the_same_grid():
    # quantum 10 from the first arrival (t=0): quanta at 10, 20, 30, ... Job 0 runs alone; at 10
    # nothing waits, so the timer goes off (the quantum stays owed: the next job to wait gets a
    # preemptive round at once, as with a timer firing at 20 and 30 on an empty queue). Job 1
    # arrives at 35, preempts job 0 (attained 35 > 0) and ends at 40; the timer is back on the
    # grid (40, not 45 = 35 + 10): at 40 job 0 waits (on), at 50 nothing waits (off).
    jobs = [Job(0, work=100, gpus=1), Job(1, work=5, gpus=1, arrival=35)]
    res = Simulator(Cluster.homogeneous(1, 1), jobs, LAS(quantum=10.0)).run()
    df = res.jobs_frame().set_index("job_id")
    assert df.loc[1, "first_start"] == pytest.approx(35.0)
    assert df.loc[1, "completion"] == pytest.approx(40.0)
    assert df.loc[0, "completion"] == pytest.approx(105.0)
    ticks = [e[0] for e in res.log if e[1] == "timer"]
    assert ticks == pytest.approx([10.0, 40.0, 50.0])
    ref = Simulator(Cluster.homogeneous(1, 1), jobs, _EveryQuantumLAS(quantum=10.0)).run()
    assert [e[0] for e in ref.log if e[1] == "timer"] == pytest.approx([10.0 * k for k in range(1, 11)])


def test_las_quantum_after_resume_is_on_the_grid():
    # as above, and job 2 (10 s) arrives at 36 while job 1 runs (attained 1 < ...: no quantum at
    # 36, it waits). At the quantum of 40 it has attained 0 < 5 (job 1): it preempts job 1 then.
    # A timer restarted at 35 would give the quantum at 45.
    jobs = [Job(0, work=100, gpus=1), Job(1, work=20, gpus=1, arrival=35), Job(2, work=10, gpus=1, arrival=36)]
    for pol in (LAS(quantum=10.0), _EveryQuantumLAS(quantum=10.0)):
        df = Simulator(Cluster.homogeneous(1, 1), jobs, pol).run().jobs_frame().set_index("job_id")
        assert df.loc[1, "first_start"] == pytest.approx(35.0)
        assert df.loc[2, "first_start"] == pytest.approx(40.0)


@settings(max_examples=40, deadline=None)
@given(
    w=workloads(max_jobs=10),
    policy=st.sampled_from([LAS, "srtf", "fifo"]),
    rule=st.sampled_from(RULES),
    save=st.sampled_from([0.0, 1.0]),
    penalty=st.sampled_from([0.0, 0.5]),
)
def test_utilization_integrates_to_the_segments_gpu_seconds(w, policy, rule, save, penalty):
    from optsched.sim import get_policy

    cluster, jobs = w
    pol = LAS(placement=rule, quantum=1.0) if policy is LAS else get_policy(policy, placement=rule)
    res = Simulator(cluster, jobs, pol, save_time=save, rate_model=PlacementRate(penalty)).run()
    gpu_s = sum(sum(s.placement.values()) * (s.end - s.start) for _, segs in res.schedule().items() for s in segs)
    u = res.utilization()
    t = np.append(u["time"].to_numpy(), res.end_time)
    assert float(np.sum(np.diff(t) * u["gpus_in_use"].to_numpy())) == pytest.approx(gpu_s, rel=1e-9, abs=1e-9)
    assert np.all(np.diff(u["time"].to_numpy()) > 0)  # one step per time


class _NoCompactSRTF(SRTF):
    def _compact(self, h):  # keep every stale entry (the behaviour before compaction)
        pass


def test_running_heap_stays_small_and_compaction_changes_no_decision():
    from optsched.traces import synthetic_workload

    cl = Cluster.homogeneous(2, 2)
    df = synthetic_workload(1500, cluster_gpus=cl.total_gpus, load=1.3, max_duration=3600.0, seed=4)
    fast, ref = SRTF(), _NoCompactSRTF()
    a = Simulator(cl, df, fast, record_log=False).run()
    b = Simulator(cl, df, ref, record_log=False).run()
    assert len(ref._train) > 2 * cl.total_gpus + 256  # enough starts for compaction to happen
    assert len(fast._train) <= 2 * cl.total_gpus + 256
    for k, v in _columns(b).items():
        if v.dtype.kind == "f":
            np.testing.assert_array_equal(_columns(a)[k], v, err_msg=k)


def test_garbage_collector_is_restored_after_a_run_even_a_failed_one():
    import gc

    from optsched.exceptions import SimulationError
    from optsched.sim import Policy

    assert gc.isenabled()
    Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], SRTF()).run()
    assert gc.isenabled()

    class Bad(Policy):
        name = "bad"

        def on_arrival(self, sim, job):
            sim.start(job, {0: 5})  # over capacity: SimulationError inside the loop

    with pytest.raises(SimulationError):
        Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], Bad()).run()
    assert gc.isenabled()
