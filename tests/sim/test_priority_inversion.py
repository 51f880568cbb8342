"""Preemptive policies never keep a job waiting behind one it outranks (issue: priority inversion).

The round in ``Preemptive.schedule`` considers waiting jobs in priority order: each starts if it
fits, else strictly worse running jobs are preempted for it if that makes room; only then is the
next job considered (backfilling). These tests pin the repro of the defect and check the invariant
on random workloads: after every decision round in which preemption is allowed, no waiting job would
fit if every running job with a worse key than its own were removed (without backfilling, only the
head of the queue is owed that: the jobs behind it wait for it by design).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.sim import LAS, SRTF, simulate
from optsched.sim.model.state import LOADING, TRAINING, WAITING

from .test_invariants import workloads


def _jct(res):
    df = res.jobs_frame().set_index("job_id")
    return (df["completion"] - df["arrival"]).to_dict()


def test_repro_short_wide_job_is_not_blocked_by_a_backfilled_long_job():
    # one server of 4 GPUs; Z runs on 2 GPUs; X (4 GPUs, 10 s) and Y (2 GPUs, 1000 s) arrive at 1.
    # Before the fix Y was backfilled at t=1 and, started at that very time, could not be preempted
    # for X, which waited for Z: JCT(X) = 109.
    jobs = [
        Job("Z", work=100, gpus=2, arrival=0),
        Job("X", work=10, gpus=4, arrival=1),
        Job("Y", work=1000, gpus=2, arrival=1),
    ]
    jct = _jct(simulate(Cluster.homogeneous(1, 4), jobs, SRTF()))
    assert jct["X"] == pytest.approx(10.0)
    assert jct["Z"] == pytest.approx(110.0)  # preempted at 1 for X, resumes at 11
    assert jct["Y"] == pytest.approx(1010.0)


def test_repro_without_backfill_the_best_job_still_preempts():
    jobs = [
        Job("Z", work=100, gpus=2, arrival=0),
        Job("X", work=10, gpus=4, arrival=1),
        Job("Y", work=1000, gpus=2, arrival=1),
    ]
    jct = _jct(simulate(Cluster.homogeneous(1, 4), jobs, SRTF(backfill=False)))
    assert jct["X"] == pytest.approx(10.0)


class _Checked:
    """Mixin: after each round with preemption allowed, check the no-inversion invariant."""

    def on_start(self, sim):
        super().on_start(sim)
        self.violations = []
        self.rounds = 0

    def _may_preempt(self, sim):
        self._allowed = super()._may_preempt(sim)
        return self._allowed

    def schedule(self, sim):
        self._allowed = False
        super().schedule(sim)
        if not self._allowed:
            return
        self.rounds += 1
        running = [j for j in sim.jobs if j.phase in (LOADING, TRAINING)]
        waiting = sorted((key, w.index, w) for key, w in self.queue.items() if w.phase == WAITING)
        if not self.backfill:  # strict order: jobs behind the head wait for it by design
            waiting = waiting[:1]
        for key, _, w in waiting:
            free = list(sim.free_gpus)
            for r in running:
                if self._run_value(sim, r) > key[0]:  # strictly worse than w
                    for m, g in r.placement.items():
                        free[m] += g
            if sim.free.fits_in(free, w.gpus, w.single_server):
                self.violations.append((sim.now, w.id, key[0]))


class CheckedSRTF(_Checked, SRTF):
    pass


class CheckedLAS(_Checked, LAS):
    pass


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    w=workloads(max_jobs=9),
    las=st.booleans(),
    backfill=st.booleans(),
    placement=st.sampled_from(["consolidate", "first_fit", "least_loaded", "whole_node"]),
)
def test_no_waiting_job_would_fit_without_the_running_jobs_it_outranks(w, las, backfill, placement):
    cluster, jobs = w
    pol = (
        CheckedLAS(quantum=1.0, backfill=backfill, placement=placement)
        if las
        else CheckedSRTF(backfill=backfill, placement=placement)
    )
    res = simulate(cluster, jobs, pol)
    assert (res.jobs_frame()["status"] == "done").all()
    assert pol.violations == [], pol.violations[:5]
