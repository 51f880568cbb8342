"""Periodic SRTF: SRTF deciding only every ``period`` seconds, the fixed scheduling interval of
round-based schedulers. The round is the preemptive one (:mod:`.preemptive`) at ticks; between
ticks only jobs holding a claim start (R8, R9).

Tested in ``tests/sim/test_periodic_and_reserve.py`` and ``tests/sim/test_differential.py``.
"""

from __future__ import annotations

from optsched.exceptions import InvalidOptionError
from optsched.sim.policies.preemptive import SRTF


class PeriodicSRTF(SRTF):
    """SRTF that decides only every ``period`` seconds (ticks at the first arrival + k * period).

    The full round (R8-R12 of ``formulations/lazer.md``) runs only at ticks, the first at the first
    job's arrival (so a trace with Unix-epoch arrivals ticks from its first job, not from 0). Between
    ticks nothing starts, not even on free GPUs, except a job holding a claim from a tick: it starts
    (R8) as soon as it fits in its claimed GPUs and the free GPUs nobody claims, in both ``reserve`` modes
    (claims made at a tick last until the next one; ``"best"`` remakes them at each tick). This is
    the fixed scheduling interval of round-based schedulers (60 s, 360 s, 600 s: the intervals of
    Pollux/Sia, Muri/Gavel and Optimus), as studied by the Lazer paper.

    Parameters
    ----------
    period : float
        Seconds between decisions (> 0), default 60.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import simulate
    >>> jobs = [Job(0, work=5), Job(1, work=5, arrival=1)]
    >>> res = simulate(Cluster.homogeneous(1, 1), jobs, PeriodicSRTF(period=10))
    >>> res.jobs_frame()["first_start"].tolist()   # job 1 waits for the tick at 10 (job 0 ended at 5)
    [0.0, 10.0]
    >>> jobs = [Job(0, work=100, load_time=1, save_time=2), Job(1, work=5, arrival=10, load_time=1, save_time=2)]
    >>> res = simulate(Cluster.homogeneous(1, 1), jobs, PeriodicSRTF(period=10))
    >>> res.jobs_frame()["first_start"].tolist()   # the tick at 10 preempts job 0; job 1 starts when the save ends
    [0.0, 12.0]
    """

    name = "srtf-periodic"
    compiled_kind = "srtf-periodic"

    def __init__(
        self,
        *,
        period: float = 60.0,
        placement: str = "consolidate",
        backfill: bool = True,
        rollback: bool = False,
        reserve: str = "best",
    ):
        super().__init__(placement=placement, backfill=backfill, rollback=rollback, reserve=reserve)
        if isinstance(period, bool) or not (isinstance(period, (int, float)) and 0 < period < float("inf")):
            raise InvalidOptionError(
                f"The 'period' option of srtf-periodic must be a positive number of seconds; got {period!r}."
            )
        self.period = float(period)

    def on_start(self, sim) -> None:
        super().on_start(sim)
        self._tick = False
        self._tick_time = -1.0  # the time of the last tick: a follow-up round at that time is a full round (R3)
        first = min(j.arrival for j in sim.jobs)  # ticks from the first arrival
        self._timer = sim.set_timer(at=first, period=self.period, data="srtf-periodic")
        self._left = len(sim.jobs)

    def on_completion(self, sim, job) -> None:
        self._left -= 1
        if not self._left:
            sim.cancel_timer(self._timer)

    def on_timer(self, sim, timer) -> None:
        if timer is self._timer:
            self._tick = True
            self._tick_time = sim.now

    def schedule(self, sim) -> None:
        """The full round at ticks (R7-R12); between ticks only jobs holding a claim, which wait for
        it (R9), start when they fit (R8)."""
        tick, self._tick = self._tick, False
        if tick or sim.now == self._tick_time:  # a tick, or a round that follows one at the same time
            super().schedule(sim)
            return
        self._start_claimants(sim)  # between ticks: only jobs holding a claim, if they fit now (R8)

    def _may_preempt(self, sim) -> bool:
        return True  # schedule() runs its round only at ticks

    def __repr__(self) -> str:
        return (
            f"PeriodicSRTF(period={self.period:g}, placement={self.placement!r}, backfill={self.backfill}, "
            f"rollback={self.rollback}, reserve={self.reserve!r})"
        )
