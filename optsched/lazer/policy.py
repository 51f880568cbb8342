"""Lazer (Alg. 1 and 2 of paper 004) as an online policy of the shared simulator.

Queues: WQ (waiting, SRTF order), RQ (loading and training jobs not deferred), DWQ (new jobs whose
preemption is deferred), DRQ (their victims: still running, hidden from other arrivals). Jobs that
are saving are in no queue; the GPUs they free are kept for the job they were preempted for.

* Arrival (Alg. 1 lines 1-10): a job that fits the free GPUs starts at once; otherwise the
  orchestrator (Alg. 2) picks J_r, longest remaining first, among RQ jobs with a longer
  remaining duration, until j_new fits; none: j_new joins WQ. With J_r, the chooser gives X:
  X = 0 preempts J_r and j_new starts when their saves end; X > 0 moves j_new to DWQ and J_r to
  DRQ and re-runs the orchestrator for j_new at a timer at t0 + X (lines 8-10).
* Completion (lines 11-17): on completions only, WQ in SRTF order with backfill, over all free
  GPUs not kept for a pending preemptor (``secured="released"``: only the GPUs the completed jobs
  released). Jobs arriving at a completion's time, and jobs whose deferral ends then, compete in
  it as WQ jobs do; the orchestrator handles those it does not start.

Every reading is in formulations/lazer.md (reading 4).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from optsched.exceptions import InvalidOptionError
from optsched.lazer.deferral import (
    Decision,
    DeferralChooser,
    FixedDeferral,
    OracleDeferral,
    ZeroDeferral,
    counterfactual_f,
)
from optsched.lazer.predictor import GPDeferral
from optsched.sim.model.state import LOADING, SAVING, TRAINING, WAITING
from optsched.sim.policies import WaitQueue
from optsched.sim.policy import Policy
from optsched.sim.registry import forwards_options

HOUR = 3600.0


def make_chooser(deferral: Any) -> DeferralChooser:
    """The deferral chooser of Lazer's ``deferral`` option: ``None`` or ``"zero"`` (X = 0), a number
    of seconds (a fixed X), ``"oracle"`` (X = F), ``"gp"`` (the BO predictor) or a chooser as it is.

    >>> make_chooser(None), make_chooser(30), make_chooser("oracle")
    (ZeroDeferral(), FixedDeferral(30), OracleDeferral())
    """
    if deferral is None or deferral == "zero":
        return ZeroDeferral()
    if deferral == "oracle":
        return OracleDeferral()
    if isinstance(deferral, DeferralChooser):
        return deferral
    if isinstance(deferral, (int, float)) and not isinstance(deferral, bool):
        return FixedDeferral(deferral)
    if deferral == "gp":
        return GPDeferral()
    raise InvalidOptionError(
        f"The 'deferral' option of Lazer must be None/'zero', a number of seconds, 'oracle', "
        f"'gp' or a DeferralChooser; got {deferral!r}."
    )


class Lazer(Policy):
    """Lazer's scheduling orchestrator, deferral and completion handler (Alg. 1/2).

    Parameters
    ----------
    deferral : None, number, "zero", "oracle", "gp" or DeferralChooser
        How X is chosen (default ``None``: X = 0; a number: that fixed X).
    secured : {"all", "released"}
        GPUs the completion handler may use: all free GPUs not kept for a preemptor (default), or
        only those the completed jobs released (Alg. 1 line 12 read literally).
    placement : str
        Placement rule of the simulator.

    Attributes (after a run)
    ------------------------
    decisions : list of :class:`~optsched.lazer.deferral.Decision`
        One per call of the deferral chooser (X, context, observed F).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import simulate
    >>> jobs = [Job(0, work=100), Job(1, work=10, arrival=5)]
    >>> res = simulate(Cluster.homogeneous(1, 1), jobs, Lazer())
    >>> res.jobs_frame()["completion"].tolist()    # job 1 preempts job 0 (no load/save times)
    [110.0, 15.0]
    """

    name = "lazer"
    preemptive = True
    #: the compiled kernel replays this class with a fixed X (:meth:`compiled_deferral`)
    compiled_kind = "lazer"

    def __init__(self, *, deferral: Any = None, secured: str = "all", placement: str = "consolidate"):
        super().__init__(placement=placement)
        if secured not in ("all", "released"):
            raise InvalidOptionError(
                f"The 'secured' option of Lazer must be 'all' (every free GPU not kept for a "
                f"preemptor) or 'released' (only the GPUs completed jobs released); got "
                f"{secured!r}."
            )
        self.deferral = make_chooser(deferral)
        self.secured = secured

    def compiled_deferral(self) -> float | None:
        """The fixed X (seconds; 0 for X = 0) the compiled kernel runs this policy with, or None
        when X comes from a chooser the kernel does not have (the oracle, the BO predictor: Python
        code). On the kernel, :attr:`decisions` is not kept.

        >>> Lazer(deferral=30).compiled_deferral(), Lazer(deferral="oracle").compiled_deferral()
        (30.0, None)
        """
        d = self.deferral
        if type(d) is ZeroDeferral:
            return 0.0
        if type(d) is FixedDeferral:
            return d.x
        return None

    # -- bookkeeping ------------------------------------------------------------------------------
    def on_start(self, sim) -> None:
        self.wq = WaitQueue()
        self.rq: dict[int, Any] = {}
        self.drq: dict[int, Any] = {}
        self.dwq: dict[int, Any] = {}
        self._since: dict[int, float] = {}
        self._new: list = []
        self._ended: list = []  # deferral timers fired in this batch
        self._released = 0
        self._completions = 0
        self._pending: dict[int, list] = {}  # preemptor index -> [job, set of saving victim indices]
        self._victim_of: dict[int, int] = {}
        self._gpus_of: dict[int, int] = {}  # saving victims: index -> GPUs they still hold
        self._reserved = 0  # free GPUs kept for pending preemptors
        self._hour: deque = deque()  # arrival times of the last hour
        self._arr_t: list[float] = []  # every arrival seen (for F, observed after the fact)
        self._arr_w: list[float] = []
        self.decisions: list[Decision] = []
        self.deferral.reset(sim, self)

    def on_arrival(self, sim, job) -> None:
        self._new.append(job)
        t = sim.now
        self._hour.append(t)
        while self._hour and self._hour[0] < t - HOUR:
            self._hour.popleft()
        self._arr_t.append(t)
        self._arr_w.append(job.work)

    def on_completion(self, sim, job) -> None:
        self.rq.pop(job.index, None)
        self.drq.pop(job.index, None)
        self._since.pop(job.index, None)
        self._released += job.gpus
        self._completions += 1

    def on_preempted(self, sim, job) -> None:
        if job.phase == WAITING:
            self.wq.push(job, self._key(job))
        owner = self._victim_of.pop(job.index, None)
        self._gpus_of.pop(job.index, None)
        if owner is None or owner not in self._pending:
            return
        j, saving = self._pending[owner]
        saving.discard(job.index)
        self._update_reserved()
        if not saving:
            del self._pending[owner]
            self._update_reserved()
            self._launch_or_queue(sim, j)

    def on_timer(self, sim, timer) -> None:
        kind = timer.data[0]
        if kind == "defer":
            self._ended.append(timer.data)
        elif kind == "observe":
            d: Decision = timer.data[1]
            d.f = counterfactual_f(self._arr_t, self._arr_w, d.t0, d.p_star, d.l_new, d.t_new)
            self.deferral.observe(d)

    # -- helpers ----------------------------------------------------------------------------------------
    @staticmethod
    def _key(job):
        return (job.remaining(), job.arrival, job.index)

    def _update_reserved(self) -> None:
        r = 0
        for j, saving in self._pending.values():
            held = sum(self._gpus_of.get(i, 0) for i in saving)
            r += max(0, j.gpus - held)
        self._reserved = r

    def _start(self, sim, job) -> None:
        sim.start(job)
        self.rq[job.index] = job
        self._since[job.index] = sim.now

    def _launch_or_queue(self, sim, job) -> None:
        if job.phase != WAITING:
            return
        if sim.fits(job) and sim.total_free - self._reserved >= job.gpus:
            self._start(sim, job)
        else:
            self.wq.push(job, self._key(job))

    def _fits_after(self, sim, job, victims) -> bool:
        freed = sum(v.gpus for v in victims)
        if sim.total_free - self._reserved + freed < job.gpus:
            return False
        if not sim.free.needs_layout(job.gpus, job.single_server):
            return True
        free = list(sim.free_gpus)
        for v in victims:
            for m, g in v.placement.items():
                free[m] += g
        return sim.free.fits_in(free, job.gpus, job.single_server)

    def orchestrate(self, sim, job):
        """Alg. 2 with reading 4: ``[]`` if ``job`` fits the free GPUs now, J_r (longest remaining
        first, each strictly longer than ``job``'s remaining duration, none started at this very
        time) if preempting them makes it fit, else ``None``."""
        if self._fits_after(sim, job, ()):
            return []
        t_new = job.remaining()
        now = sim.now
        since = self._since
        cands = []
        for r in self.rq.values():
            rem = r.remaining()  # once per job (its remaining duration is fixed at this instant)
            if rem > t_new and since.get(r.index) != now:
                cands.append((-rem, -r.arrival, -r.index, r))
        cands.sort()  # ties: R4's key, the worse first (indices differ: the jobs are never compared)
        victims = []
        for *_, r in cands:
            victims.append(r)
            if self._fits_after(sim, job, victims):
                return victims
        return None

    def _context(self, sim, job, victims) -> tuple[float, float, float, float]:
        h = self._hour
        gap = (h[-1] - h[0]) / (len(h) - 1) if len(h) >= 2 else HOUR
        p_star = max((sim.save_time(v) for v in victims), default=0.0)
        return (gap, job.remaining(), sim.load_time(job, {0: job.gpus}), p_star)

    def _preempt_for(self, sim, job, victims) -> None:
        """Alg. 1 line 5/10: pause-and-save every victim; ``job`` starts when their GPUs are free."""
        saving = set()
        for v in victims:
            self.rq.pop(v.index, None)
            self._since.pop(v.index, None)
            sim.preempt(v)
            if v.phase == SAVING:
                saving.add(v.index)
                self._victim_of[v.index] = job.index
                self._gpus_of[v.index] = v.gpus
        if saving:
            self._pending[job.index] = [job, saving]
            self._update_reserved()
        elif sim.fits(job):
            self._start(sim, job)
        else:
            self.wq.push(job, self._key(job))

    def _handle_arrival(self, sim, job) -> None:
        victims = self.orchestrate(sim, job)
        if victims is None:
            self.wq.push(job, self._key(job))
            return
        if not victims:
            self._start(sim, job)
            return
        d = Decision(sim.now, job.id, tuple(v.id for v in victims), self._context(sim, job, victims))
        x = float(self.deferral.choose(sim, self, d))
        d.x = x
        self.decisions.append(d)
        if self.deferral.needs_feedback:
            sim.set_timer(d.p_star + d.l_new, data=("observe", d))
        if x <= 0:
            self._preempt_for(sim, job, victims)
            return
        self.dwq[job.index] = job
        for v in victims:
            self.rq.pop(v.index, None)
            self.drq[v.index] = v
        sim.set_timer(x, data=("defer", job, victims))

    def _restore(self, job, victims) -> None:
        """Alg. 1 line 7 at t0 + X: J_r back to RQ (those still running), j_new out of DWQ."""
        self.dwq.pop(job.index, None)
        for v in victims:
            if self.drq.pop(v.index, None) is not None and v.phase in (LOADING, TRAINING):
                self.rq[v.index] = v

    def _end_deferral(self, sim, job, victims) -> None:
        """Alg. 1 lines 7-10 at t0 + X: victims back to RQ, j_new out of DWQ, orchestrate again."""
        self._restore(job, victims)
        v2 = self.orchestrate(sim, job)
        if v2 is None:
            self.wq.push(job, self._key(job))
        elif not v2:
            self._start(sim, job)
        else:
            self._preempt_for(sim, job, v2)

    def _complete(self, sim, secured: int) -> None:
        """Alg. 1 lines 12-17: WQ in ascending remaining duration, each job that fits the secured
        GPUs starts (backfill)."""
        free = sim.free
        wq = self.wq
        while len(wq) and secured > 0:
            job = wq.pop_best(free.fits, False, secured)
            if job is None:
                return
            self._start(sim, job)
            secured -= job.gpus

    # -- the decision round -------------------------------------------------------------------------------
    def _unqueue(self, job) -> bool:
        return self.wq.discard(job)

    def schedule(self, sim) -> None:
        ended, self._ended = self._ended, []
        if self._completions:
            # jobs arriving at a completion's time, and jobs whose deferral ends then (out of DWQ,
            # their J_r back in RQ), compete in the handler too (SRTF order over WQ and them);
            # those it does not start then go through the orchestrator
            for job in self._new:
                self.wq.push(job, self._key(job))
            for _, job, victims in ended:
                self._restore(job, victims)
                self.wq.push(job, self._key(job))
            avail = sim.total_free - self._reserved
            secured = avail if self.secured == "all" else min(avail, self._released)
            self._completions = self._released = 0
            self._complete(sim, secured)
            self._new = [j for j in self._new if j.phase == WAITING and self._unqueue(j)]
            ended = [e for e in ended if e[1].phase == WAITING and self._unqueue(e[1])]
        for _, job, victims in ended:
            self._end_deferral(sim, job, victims)
        if self._new:
            new, self._new = self._new, []
            new.sort(key=self._key)
            for job in new:
                self._handle_arrival(sim, job)
        # safety net: nothing holds GPUs, nothing is deferred or pending, jobs wait (only possible
        # with secured="released" or placements that did not fit): give them every GPU
        if len(self.wq) and not self.dwq and not self._pending and sim.total_free == sim.capacity:
            self._complete(sim, sim.total_free)

    def on_end(self, sim) -> None:
        self._gpus_of.clear()

    def __repr__(self) -> str:
        return f"Lazer(deferral={self.deferral!r}, secured={self.secured!r}, placement={self.placement!r})"


# -- the named variants of the registry (lazer-zero, lazer-fixed, lazer-oracle, lazer-gp) ----------
# each passes its options on to Lazer less the deferral it sets (forwards_options: get_policy checks them)
@forwards_options(Lazer, set_here=("deferral",))
def lazer_zero(**options: Any) -> Lazer:
    """Lazer with X = 0 (orchestrator and completion handler only)."""
    return Lazer(deferral=None, **options)


@forwards_options(Lazer, set_here=("deferral",))
def lazer_fixed(x: float = 30.0, **options: Any) -> Lazer:
    """Lazer with a fixed deferral X = x seconds (default 30)."""
    return Lazer(deferral=FixedDeferral(x), **options)


@forwards_options(Lazer, set_here=("deferral",))
def lazer_oracle(**options: Any) -> Lazer:
    """Lazer with X = F, the counterfactual futile load, read from future arrivals (reference)."""
    return Lazer(deferral=OracleDeferral(), **options)


@forwards_options(Lazer, set_here=("deferral",))
def lazer_gp(seed: Any = 0, **options: Any) -> Lazer:
    """Lazer with the BO deferral predictor (GP, log-EI; Sec. 4.2)."""
    return Lazer(deferral=GPDeferral(seed=seed), **options)
