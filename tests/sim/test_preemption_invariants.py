"""Invariants of SRTF's decision rounds, checked on the engine after every round (issue 24).

An observer subclasses the engine's policy and, after each ``schedule`` call, inspects the
simulator through public views only (``sim.jobs``, ``job.phase``, ``job.placement``,
``job.remaining()``, ``job.n_starts``, ``job.n_preemptions``, ``sim.free_gpus``, ``sim.now``).
Claims (R6) are internal to the policy, so the checks below bound them instead of reading them.

Notation after a round at time t (preemption allowed: every SRTF round, periodic SRTF at ticks):
``pool`` = free GPUs + GPUs held by jobs saving or losing a load (the GPUs a claim can hold);
``elig(b)`` = GPUs of loading/training jobs strictly worse than b (R > R_b, R5) not started at t;
``started_after(b)`` = GPUs of jobs started in this round with a key worse than b's (R4);
``freed_after(b)`` = GPUs of jobs preempted in this round with a key worse than b's whose GPUs
were freed at once; ``claims_by_others(b)`` = the GPUs other waiting jobs may claim: those of
the waiting jobs better than b with ``reserve="best"`` (claims are remade in key order each
round, R7), of all other waiting jobs with ``"preemptor"``.

Within a round the jobs are considered in key order and, after b was, the sum pool + elig(b)
only falls (starts) or stays (preemptions of jobs worse than b), and the free GPUs change only by
starts and by GPUs freed at once. Hence, for every job b waiting after the round:

(a) R8, no idle fit: free - freed_after(b) [+ started_after(b) with "best"] - claims_by_others(b)
    < g_b, else b had GPUs available when considered and should have started.
(b) R10/R11, no missed preemption, and claimed GPUs never go to a third job: let b *need a
    claim* when pool + elig(b) [+ started_after(b) with "best"] - min(pool, claims_by_others(b))
    >= g_b (then b could claim soon-free GPUs or preempt strictly worse jobs, so it must hold a
    claim). Every such b needs g_b <= pool, and their claims are disjoint subsets of the pool:
    sum of g_b over them <= pool. A third job started on a preemptor's GPUs, or a preemption
    that should have happened and did not, breaks this.
(c) Every run ends within its bound (``test_differential.run_bounded``).
These are consequences of R4-R12 only; a state that breaks one is wrong under any reading of
the rules' open points (listed in ``reference_sim.py``).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.sim import SRTF, PeriodicSRTF, Simulator

from .test_differential import _bound, _cluster, run_bounded, workloads

_RUNNING = ("loading", "training")


class RoundObserver:
    """Checks (a) and (b) after every round in which preemption is allowed."""

    def __init__(self, reserve: str, period: float | None = None):
        self.reserve = reserve
        self.period = period
        self.violations: list[str] = []
        self.rounds = 0
        self._time = None
        self._at_t = {}  # n_starts at the end of the last round before the current time
        self._last = {}  # (n_starts, n_preemptions) at the end of the previous round
        self._pre_at_start = {}  # n_preemptions when the job last started (lost loads)
        self._seen_starts = {}
        self._begin = {}

    def _track_starts(self, sim):
        for j in sim.jobs:
            if j.n_starts != self._seen_starts.get(j.index, 0):
                self._seen_starts[j.index] = j.n_starts
                self._pre_at_start[j.index] = j.n_preemptions  # never preempted at its start time

    def before(self, sim):
        self._track_starts(sim)
        if sim.now != self._time:
            self._time = sim.now
            self._at_t = {j.index: j.n_starts for j in sim.jobs}
            self._first_at_t = True
        else:
            self._first_at_t = False
        self._begin = {j.index: (j.n_starts, j.n_preemptions) for j in sim.jobs}

    def after(self, sim):
        self._track_starts(sim)
        if self.period is not None:  # ticks every period from the first arrival
            k = (sim.now - min(j.arrival for j in sim.jobs)) / self.period
        off_tick = self.period is not None and (not self._first_at_t or abs(k - round(k)) > 1e-9)
        if off_tick:  # periodic SRTF: full rounds at ticks only (the first one at a tick is checked)
            return
        self.rounds += 1
        self._check(sim)

    # -------------------------------------------------------------------------------------
    def _releasing(self, j):
        """Saving, or (preempt_loading="finish") still loading a load already lost."""
        if j.phase == "saving":
            return True
        return j.phase == "loading" and j.n_preemptions > self._pre_at_start.get(j.index, 0)

    def _check(self, sim):
        t = sim.now
        key = {j.index: (j.remaining(), j.arrival, j.index) for j in sim.jobs}
        free = sum(sim.free_gpus)
        held_releasing = sum(j.gpus for j in sim.jobs if j.placement and self._releasing(j))
        pool = free + held_releasing
        running = [j for j in sim.jobs if j.phase in _RUNNING and not self._releasing(j)]
        started_now = {j.index for j in sim.jobs if j.n_starts > self._at_t.get(j.index, 0)}
        started_round = [j for j in sim.jobs if j.n_starts > self._begin[j.index][0]]
        freed_round = [  # preempted in this round, GPUs free at once (waiting, or restarted)
            j for j in sim.jobs if j.n_preemptions > self._begin[j.index][1] and not self._releasing(j)
        ]
        waiting = sorted((j for j in sim.jobs if j.phase == "waiting"), key=lambda j: key[j.index])
        need_claim = []
        for b in waiting:
            kb = key[b.index]
            others = [w for w in waiting if w is not b and (self.reserve == "preemptor" or key[w.index] < kb)]
            claims_others = sum(w.gpus for w in others)
            elig = sum(r.gpus for r in running if r.remaining() > b.remaining() + 1e-9 and r.index not in started_now)
            after_started = sum(j.gpus for j in started_round if key[j.index] > kb)
            after_freed = sum(j.gpus for j in freed_round if key[j.index] > kb)
            bonus = after_started if self.reserve == "best" else 0
            avail_lb = free - after_freed + bonus - claims_others
            state = (
                f"t={t:g} {sim.policy!r}: job {b.id} (g={b.gpus}, R={b.remaining():g}) waits; free={free}, "
                f"pool={pool}, elig={elig}, started_after={after_started}, freed_after={after_freed}, "
                f"claims_by_others<={claims_others}; jobs: "
                + ", ".join(f"{j.id}:{j.phase}:R={j.remaining():g}:g={j.gpus}" for j in sim.jobs)
            )
            if avail_lb >= b.gpus:
                self.violations.append("(a) R8: fits its available GPUs but waits: " + state)
            if pool + elig + bonus - min(pool, claims_others) >= b.gpus:
                need_claim.append(b)
                if pool < b.gpus:
                    self.violations.append("(b) R10/R11: should have claimed or preempted: " + state)
        total = sum(b.gpus for b in need_claim)
        if total > pool:
            self.violations.append(
                f"(b) R6: t={t:g} {sim.policy!r}: jobs {[b.id for b in need_claim]} must hold claims of "
                f"{total} GPUs in all, but only {pool} GPUs are free or being saved (a third job took "
                "claimed GPUs, or a preemption is missing)"
            )


def observed(policy_cls, observer: RoundObserver, **options):
    """The engine's policy with `observer` called around every ``schedule`` call."""

    class Observed(policy_cls):
        def schedule(self, sim):
            observer.before(sim)
            out = super().schedule(sim)
            assert not out, "the observer needs schedule() to act through sim, not return decisions"
            observer.after(sim)
            return out

    Observed.__name__ = f"Observed{policy_cls.__name__}"
    return Observed(**options)


def _run_observed(w, reserve, preempt_loading, period=None):
    servers, jobs = w
    cluster = Cluster.homogeneous(1, servers[0]) if len(servers) == 1 else _cluster(servers)
    core = [Job(j.name, work=float(j.work), gpus=j.gpus, arrival=float(j.arrival)) for j in jobs]
    load = {j.name: float(j.load) for j in jobs}
    save = {j.name: float(j.save) for j in jobs}
    obs = RoundObserver(reserve, period)
    if period is None:
        policy = observed(SRTF, obs, reserve=reserve)
    else:
        policy = observed(PeriodicSRTF, obs, reserve=reserve, period=float(period))
    sim = Simulator(
        cluster,
        core,
        policy,
        load_time=lambda job, placement: load[job.id],
        save_time=lambda job, placement: save[job.id],
        preempt_loading=preempt_loading,
    )
    opts = {"period": period or 0}
    bound = _bound(jobs, opts)
    try:  # (c): the run ends within its bound
        run_bounded(sim, max_time=float(bound), max_events=200 * len(jobs) + 2 * int(bound) + 1000)
    except Exception as exc:  # report the first broken invariant, which usually explains the churn
        raise AssertionError("\n".join([f"{type(exc).__name__}: {exc}", *obs.violations[:5]])) from exc
    assert obs.rounds > 0
    assert not obs.violations, "\n".join(obs.violations[:5])


_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None)
MODES = dict(reserve=st.sampled_from(["best", "preemptor"]), preempt_loading=st.sampled_from(["abort", "finish"]))


@settings(max_examples=250, **_SETTINGS)
@given(w=workloads(), **MODES)
def test_srtf_rounds_keep_the_invariants(w, reserve, preempt_loading):
    _run_observed(w, reserve, preempt_loading)


@settings(max_examples=150, **_SETTINGS)
@given(w=workloads(), period=st.integers(1, 4), **MODES)
def test_periodic_srtf_ticks_keep_the_invariants(w, reserve, preempt_loading, period):
    _run_observed(w, reserve, preempt_loading, period)


def test_observer_sees_a_third_job_on_claimed_gpus():
    """The check itself: a hand-made state where a worse job took a preemptor's free GPU."""

    class FakeJob:
        def __init__(self, i, phase, rem, gpus, placement=None, starts=0, pre=0):
            self.id = self.index = i
            self.phase, self._rem, self.gpus, self.placement = phase, rem, gpus, placement
            self.arrival, self.n_starts, self.n_preemptions = 1.0, starts, pre

        def remaining(self):
            return self._rem

    class FakeSim:
        def __init__(self):
            self.policy, self.now, self.free_gpus = "fake", 1.0, [0]

    # repro 1 (2 GPUs, finish): B preempted while loading (load lost until 2), A (g=2) needs
    # B's GPU and the free one; C, worse, started on the free one in the same round.
    sim = FakeSim()
    a = FakeJob("A", "waiting", 1, 2)
    b = FakeJob("B", "saving", 10, 1, {0: 1}, starts=1, pre=0)
    c = FakeJob("C", "loading", 10, 1, {0: 1}, starts=0)
    sim.jobs = [b, a, c]
    obs = RoundObserver("best")
    obs.before(sim)
    b.n_preemptions, c.n_starts = 1, 1
    obs.after(sim)
    assert any("R6" in v for v in obs.violations), obs.violations
    # the state R1-R12 prescribe (C waits, the free GPU is A's) passes
    sim.free_gpus = [1]
    c.phase, c.placement, c.n_starts = "waiting", None, 0
    obs = RoundObserver("best")
    b.n_preemptions = 0
    obs.before(sim)
    b.n_preemptions = 1
    obs.after(sim)
    assert not obs.violations, obs.violations
