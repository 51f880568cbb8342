"""LAS: least attained service, preemptive at most every ``quantum`` seconds (Tiresias' discretised
LAS; with ``gpu_weighted``, its 2D-LAS). The round is the preemptive one (:mod:`.preemptive`),
with R11 only at quantum ticks.

Tested in ``tests/sim/test_policies.py`` and ``tests/sim/test_kernel_differential.py``.
"""

from __future__ import annotations

from optsched.exceptions import InvalidOptionError
from optsched.sim.policies.preemptive import Preemptive
from optsched.sim.rules import las_value


class LAS(Preemptive):
    """Least attained service, preemptive at most every ``quantum`` seconds.

    Priority = attained service (work done; times GPUs if ``gpu_weighted``, as Tiresias' 2D-LAS),
    ties by arrival. Between quanta, waiting jobs only fill free GPUs (by least attained service);
    at each quantum, running jobs with more attained service than a blocked waiting job are
    preempted for it. This bounds the preemption rate (plain LAS in continuous time would
    time-share equal jobs infinitely often).

    Parameters
    ----------
    quantum : float
        Seconds between preemptive re-evaluations (> 0), default 60.
    gpu_weighted : bool
        Rank by GPUs x attained service.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import simulate
    >>> jobs = [Job(0, work=100), Job(1, work=10, arrival=5)]
    >>> df = simulate(Cluster.homogeneous(1, 1), jobs, LAS(quantum=30)).jobs_frame()
    >>> df["n_preemptions"].tolist(), df["completion"].tolist()  # job 0 (30 s attained) yields at 30
    ([1, 0], [110.0, 40.0])

    Notes
    -----
    The running-job heap is ordered by attained service minus elapsed time, which is exact while
    all training jobs progress at the same rate (rate 1 by default); with unequal rates the order
    of running jobs is approximate (the comparison with the waiting job uses the true values).
    """

    name = "las"
    compiled_kind = "las"

    def __init__(
        self,
        *,
        placement: str = "consolidate",
        backfill: bool = True,
        quantum: float = 60.0,
        gpu_weighted: bool = False,
        rollback: bool = False,
        reserve: str = "best",
    ):
        super().__init__(placement=placement, backfill=backfill, rollback=rollback, reserve=reserve)
        if isinstance(quantum, bool) or not (isinstance(quantum, (int, float)) and quantum > 0):
            raise InvalidOptionError(
                f"The 'quantum' option of LAS must be a positive number of seconds; got {quantum!r}."
            )
        self.quantum = float(quantum)
        self.gpu_weighted = gpu_weighted

    def _wait_key(self, job):  # R4: (attained service, arrival, input position)
        return (las_value(job.done_work(), job.gpus, self.gpu_weighted), job.arrival, job.index)

    def _badness(self, sim, job) -> float:
        return las_value(job.done_work(), job.gpus, self.gpu_weighted) - sim.now * (
            job.gpus if self.gpu_weighted else 1.0
        )

    def _run_value(self, sim, job) -> float:
        return las_value(job.done_work(), job.gpus, self.gpu_weighted)

    def on_start(self, sim) -> None:
        super().on_start(sim)
        self._tick = False
        self._timer = None
        self._active = 0
        self.next = None  # next quantum while the timer is off because no job waits

    # Quanta run every `quantum` seconds from the first arrival while jobs are active. A quantum
    # at which no job waits only sets `_tick` (which then stays set until a job waits), so the
    # timer is switched off then and back on, on the same grid, when a job next waits: the
    # decisions are those of a timer firing at every quantum, without the idle events.
    def on_arrival(self, sim, job) -> None:
        super().on_arrival(sim, job)
        self._active += 1
        if self._timer is None:
            if self.next is None:  # the first active job: a new grid
                self._timer = sim.set_timer(self.quantum, period=self.quantum, data="las-quantum")
            else:
                self._resume(sim)

    def on_preempted(self, sim, job) -> None:
        super().on_preempted(sim, job)
        if self._timer is None and self.next is not None and (self.queue.n or self._claims):
            self._resume(sim)

    def _resume(self, sim) -> None:
        t = self.next
        now = sim.now
        while t < now:  # the quanta skipped, by the same additions the timer makes
            t += self.quantum
        self.next = None
        self._timer = sim.set_timer(at=t, period=self.quantum, data="las-quantum")

    def on_completion(self, sim, job) -> None:
        self._active -= 1
        if not self._active:
            if self._timer is not None:
                sim.cancel_timer(self._timer)
            self._timer = self.next = None

    def on_timer(self, sim, timer) -> None:
        self._tick = True
        if not self.queue.n and not self._claims:  # nothing waits: off until a job waits (at the next quantum)
            sim.cancel_timer(timer)
            self._timer = None
            self.next = timer.time

    def _may_preempt(self, sim) -> bool:
        tick, self._tick = self._tick, False
        return tick

    def __repr__(self) -> str:
        return (
            f"LAS(placement={self.placement!r}, backfill={self.backfill}, quantum={self.quantum:g}, "
            f"gpu_weighted={self.gpu_weighted}, rollback={self.rollback}, reserve={self.reserve!r})"
        )
