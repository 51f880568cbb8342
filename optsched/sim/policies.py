"""Baseline online policies: FIFO, SJF, SRTF (preemptive), LAS (preemptive, quantum-based).

Each takes a placement rule (``consolidate``, ``first_fit``, ``least_loaded``, ``random``) and
``backfill`` (default true: when the best waiting job does not fit, later jobs that fit may
start; false: strict order, the head of the queue blocks everyone behind it).

Waiting jobs are kept in one heap per (GPU demand, single-server) class, so picking the best job
that fits costs O(number of classes), not O(queue length), even with backfilling.
"""

from __future__ import annotations

import heapq
from abc import ABCMeta, abstractmethod
from typing import Any

from optsched.exceptions import InvalidOptionError
from optsched.sim.policy import Policy
from optsched.sim.registry import get_policy, register_policy
from optsched.sim.state import LOADING, TRAINING, WAITING, SimJob

__all__ = ["FIFO", "SJF", "SRTF", "LAS", "PeriodicSRTF", "POLICIES", "get_policy", "WaitQueue"]


class WaitQueue:
    """Waiting jobs by priority key, bucketed by (GPUs, single_server).

    Examples
    --------
    >>> from optsched.sim.state import SimJob
    >>> q = WaitQueue()
    >>> a, b = SimJob("a", 0, 0.0, 5.0, 4), SimJob("b", 1, 0.0, 9.0, 1)
    >>> q.push(a, (5.0,)); q.push(b, (9.0,))
    >>> q.best(lambda g, s: g <= 2).id   # only jobs with <= 2 GPUs fit
    'b'
    >>> len(q)
    2
    """

    __slots__ = ("_b", "_seq", "n")

    def __init__(self) -> None:
        self._b: dict[tuple[int, bool], list] = {}
        self.n = 0  #: jobs queued (read it, never set it; ``len(q)`` too, slower in inner loops)
        self._seq = 0

    def __len__(self) -> int:
        return self.n

    def push(self, job: SimJob, key: Any) -> None:
        self._seq += 1
        k = (job.gpus, job.single_server)
        h = self._b.get(k)
        if h is None:
            h = self._b[k] = []
        heapq.heappush(h, (key, self._seq, job))
        self.n += 1

    def _head(self, fits, strict: bool, limit: int | None = None):
        best = None
        best_cls = None
        glob = None
        for cls, h in self._b.items():
            if not h:
                continue
            top = h[0]
            if strict and (glob is None or top < glob):
                glob = top
            if (best is None or top < best) and (limit is None or cls[0] <= limit) and fits(cls[0], cls[1]):
                best, best_cls = top, cls
        if strict and glob is not None and (best is None or glob < best):
            return None, None
        return best, best_cls

    def best(self, fits, strict: bool = False) -> SimJob | None:
        """Best job whose class fits (``fits(gpus, single_server)``); with ``strict`` only the
        overall best, and only if it fits."""
        top, _ = self._head(fits, strict)
        return None if top is None else top[2]

    def pop_best(self, fits, strict: bool = False, limit: int | None = None) -> SimJob | None:
        """Remove and return :meth:`best`; classes needing more than ``limit`` GPUs are skipped
        without calling ``fits``."""
        top, cls = self._head(fits, strict, limit)
        if top is None:
            return None
        heapq.heappop(self._b[cls])
        self.n -= 1
        return top[2]

    def head(self, skip: Any = ()) -> tuple[Any, Any]:
        """``(entry, class)`` of the best job whose class is not in ``skip`` (``(None, None)`` if
        none); ``entry = (key, seq, job)``. Nothing is removed."""
        best = best_cls = None
        for cls, h in self._b.items():
            if h and cls not in skip and (best is None or h[0] < best):
                best, best_cls = h[0], cls
        return best, best_cls

    def pop_class(self, cls: Any) -> SimJob:
        """Remove and return the best job of class ``cls`` (as found by :meth:`head`)."""
        self.n -= 1
        return heapq.heappop(self._b[cls])[2]

    def remove(self, job: SimJob) -> None:
        """Remove a queued job (O(jobs of its class)); KeyError if it is not queued."""
        if not self.discard(job):
            raise KeyError(f"{job.label} is not queued")

    def discard(self, job: SimJob) -> bool:
        """Remove ``job`` if it is queued; return whether it was (O(jobs of its class))."""
        h = self._b.get((job.gpus, job.single_server), [])
        for i, e in enumerate(h):
            if e[2] is job:
                h[i] = h[-1]
                h.pop()
                heapq.heapify(h)
                self.n -= 1
                return True
        return False

    def items(self):
        for h in self._b.values():
            for key, _, job in h:
                yield key, job

    def clear(self) -> None:
        self._b.clear()
        self.n = 0


class _QueuePolicy(Policy, metaclass=ABCMeta):
    """Non-preemptive: start waiting jobs in key order while they fit (subclasses give ``key``)."""

    def __init__(self, *, placement: str = "consolidate", backfill: bool = True):
        super().__init__(placement=placement)
        if not isinstance(backfill, bool):
            raise InvalidOptionError(f"The 'backfill' option of {self.name} must be true or false; got {backfill!r}.")
        self.backfill = backfill

    @abstractmethod
    def key(self, job: SimJob) -> Any:
        """The job's priority key (lower first)."""

    def on_start(self, sim) -> None:
        self.queue = WaitQueue()

    def on_arrival(self, sim, job) -> None:
        self.queue.push(job, self.key(job))

    def on_preempted(self, sim, job) -> None:
        if job.phase == WAITING:
            self.queue.push(job, self.key(job))

    def schedule(self, sim) -> None:
        q = self.queue
        if not q.n:
            return
        fits = sim.free.fits
        strict = not self.backfill
        free = sim.free
        check_res = sim.res is not None  # jobs may declare other resources: check them too
        deferred = None
        while len(q) and free.total_free > 0:
            job = q.pop_best(fits, strict, free.total_free)
            if job is None:
                break
            if check_res and job.resources and not sim.fits(job):
                if deferred is None:
                    deferred = []
                deferred.append(job)  # its GPUs are free but not its other resources
                if strict:
                    break
                continue
            sim.start(job)
        if deferred:
            for job in deferred:
                q.push(job, self.key(job))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(placement={self.placement!r}, backfill={self.backfill})"


class FIFO(_QueuePolicy):
    """First in, first out by arrival (ties: input order); non-preemptive.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import simulate
    >>> jobs = [Job(0, work=3, gpus=2), Job(1, work=1, gpus=1, arrival=1), Job(2, work=1, gpus=1, arrival=2)]
    >>> simulate(Cluster.homogeneous(1, 2), jobs, FIFO()).jobs_frame()["completion"].tolist()
    [3.0, 4.0, 4.0]
    """

    name = "fifo"

    def key(self, job):
        return (job.arrival, job.index)


class SJF(_QueuePolicy):
    """Shortest job first by work (ties: arrival, input order); non-preemptive.

    Parameters
    ----------
    size_attr : str, optional
        Use ``job.attrs[size_attr]`` (e.g. a predicted duration) instead of the true work.
    """

    name = "sjf"

    def __init__(self, *, placement: str = "consolidate", backfill: bool = True, size_attr: str | None = None):
        super().__init__(placement=placement, backfill=backfill)
        self.size_attr = size_attr

    def key(self, job):
        size = job.work if self.size_attr is None else float(job.attrs[self.size_attr])
        return (size, job.arrival, job.index)


class _Preemptive(Policy, metaclass=ABCMeta):
    """Preemptive priority scheduling shared by SRTF and LAS.

    Waiting jobs sit in a :class:`WaitQueue` by ``_wait_key``; running jobs in a max-heap by
    ``_badness`` (a value that does not change while the job runs at a constant rate). At each
    decision point (every event time for SRTF, every quantum for LAS): jobs that fit in the free
    GPUs start in priority order (backfilling unless ``backfill=False``); if the best waiting job
    does not fit and is strictly better than the worst running job, the worst running jobs
    (fewest needed, worst first) are preempted to make room. GPUs that preempted jobs are still
    saving are reserved for the job they were preempted for (``reserve="preemptor"``, default) or go
    to the best waiting job when the saves end (``reserve="best"``). A job started at time t is never
    preempted at the same t (no zero-time livelock). Jobs that declare other resources
    (``Job.resources``) start only where those are free too, and never preempt for them (victims
    are chosen by GPUs).
    """

    preemptive = True

    def __init__(
        self,
        *,
        placement: str = "consolidate",
        backfill: bool = True,
        rollback: bool = False,
        reserve: str = "preemptor",
    ):
        super().__init__(placement=placement)
        if not isinstance(backfill, bool):
            raise InvalidOptionError(f"The 'backfill' option of {self.name} must be true or false; got {backfill!r}.")
        if reserve not in ("preemptor", "best"):
            raise InvalidOptionError(
                f"The 'reserve' option of {self.name} must be 'preemptor' (GPUs being saved go "
                f"to the job they were preempted for) or 'best' (to the best waiting job when "
                f"the save ends); got {reserve!r}."
            )
        self.backfill = backfill
        self.rollback = rollback
        self.reserve = reserve

    # priorities (lower value = higher priority) -------------------------------------------------
    @abstractmethod
    def _wait_key(self, job):
        """A waiting job's key (its first element compares with ``_run_value``)."""

    @abstractmethod
    def _badness(self, sim, job) -> float:
        """What orders the running jobs (worst first); constant while a job runs at a constant rate."""

    @abstractmethod
    def _run_value(self, sim, job) -> float:
        """A running job's priority value, in the units of ``_wait_key(job)[0]``."""

    def _may_preempt(self, sim) -> bool:
        return True

    # bookkeeping ------------------------------------------------------------------------------------
    def on_start(self, sim) -> None:
        self.queue = WaitQueue()
        self.running: list = []  # max-heap of (-badness, seq, job, rate)
        self._seq = 0
        self._entry: dict[int, int] = {}  # job index -> seq of its live heap entry
        self._since: dict[int, float] = {}  # job index -> time of its current start
        self._for: SimJob | None = None  # the job for which victims are saving
        self._saving: dict[int, int] = {}  # victims still saving: index -> GPUs (count as freed)
        self._requeued: set[int] = set()  # victims queued again at once (zero save time)

    def on_arrival(self, sim, job) -> None:
        self.queue.push(job, self._wait_key(job))

    def on_preempted(self, sim, job) -> None:
        if job.index in self._requeued:  # queued again in the round that preempted it (and maybe
            self._requeued.discard(job.index)  # restarted since): this notice is about the old run
            return
        self._saving.pop(job.index, None)
        self._since.pop(job.index, None)
        if job.phase == WAITING:
            self.queue.push(job, self._wait_key(job))

    def on_loaded(self, sim, job) -> None:
        self._push_running(sim, job)  # refresh with the real rate

    def _push_running(self, sim, job) -> None:
        self._seq += 1
        self._entry[job.index] = self._seq
        if job.index not in self._since:
            self._since[job.index] = sim.now
        h = self.running
        heapq.heappush(h, (-self._badness(sim, job), self._seq, job, job.rate))
        if len(h) > 2 * sim.capacity + 256:  # mostly stale entries (deleted lazily): drop them, in place
            self._compact()

    def _compact(self) -> None:
        """Drop the heap entries of jobs no longer running or restarted since (``_worst`` would skip
        them; the order of the others is unchanged). Live entries are at most one per running job,
        so a heap over twice the GPU count is mostly stale: this keeps it O(GPUs), not O(starts)."""
        h = self.running
        entry = self._entry
        h[:] = [e for e in h if e[2].phase in (LOADING, TRAINING) and entry.get(e[2].index) == e[1]]
        heapq.heapify(h)

    def _start(self, sim, job) -> None:
        sim.start(job)
        self._push_running(sim, job)

    def _worst(self, sim):
        """Clean the heap top and return its entry (or None)."""
        h = self.running
        while h:
            _, seq, job, rate = h[0]
            if job.phase not in (LOADING, TRAINING) or self._entry.get(job.index) != seq:
                heapq.heappop(h)
                continue
            if job.phase == TRAINING and job.rate != rate:  # stale after a rate change
                heapq.heappop(h)
                self._push_running(sim, job)
                continue
            return h[0]
        return None

    # decisions ----------------------------------------------------------------------------------------
    def schedule(self, sim) -> None:
        """One decision round, in priority order: the best waiting job starts if it fits, else
        strictly worse running jobs are preempted for it if that makes room; only a job that can
        get in neither way is passed over, and then (with backfill) the next one is considered.
        So a job never waits behind one it outranks (no priority inversion): after the round, no
        waiting job would fit if the running jobs worse than it (and not started at this very
        time) were removed. Every job of a passed-over class (GPUs, single-server) is passed over
        too: a worse job of the same class cannot get in where a better one could not."""
        q = self.queue
        if not q.n:
            return
        if not self._may_preempt(sim):
            self._fill(sim)
            return
        free = sim.free
        check_res = sim.res is not None  # jobs may declare other resources: check them too
        blocked: set[tuple[int, bool]] = set()
        # the smallest demand for which preempting failed in this round (failure is monotone: a later,
        # worse job has fewer running jobs below it and finds fewer free GPUs): larger ones need not try
        fail_any = fail_single = 1 << 62
        while q.n:
            if self._for is None:
                reserve = 0
                cand = None
            else:
                reserve = self._serve_reserved(sim)
                if reserve is None:  # the job its victims' saves were for has started
                    continue
                cand = self._for
            top, cls = q.head(blocked)
            if top is None:
                return
            job = top[2]
            if (
                job is not cand
                and free.fits(job.gpus, job.single_server)
                and free.total_free - reserve >= job.gpus
                and (not check_res or not job.resources or sim.fits(job))
            ):
                q.pop_class(cls)
                self._start(sim, job)
                continue
            worst = self._worst(sim)
            if worst is None or not (top[0][0] < self._run_value(sim, worst[2])):
                self._fill(sim)  # no running job is worse than this job, nor than any job after it
                return
            g = job.gpus
            single = free.needs_layout(g, job.single_server)
            if job is not cand and g < fail_any and not (single and g >= fail_single):
                q.pop_class(cls)
                if self._make_room(sim, job):
                    continue
                q.push(job, self._wait_key(job))  # it waits: nothing it outranks can make room now
                if not self._saving:  # (with saves pending, "no" may mean "wait for them": not monotone)
                    if single:
                        fail_single = min(fail_single, g)
                    else:
                        fail_any = min(fail_any, g)
            blocked.add(cls)
            if not self.backfill:
                return

    def _serve_reserved(self, sim) -> int | None:
        """The job GPUs are being saved for: start it if they are free now (returns None), else
        return how many GPUs of the free pool to keep from other jobs for it (0 if none)."""
        cand = self._for
        if cand is None:
            return 0
        if cand.phase != WAITING:
            self._for = None
            return 0
        if sim.fits(cand):
            self._for = None
            self._remove(cand)
            self._start(sim, cand)
            return None
        return max(0, cand.gpus - sum(self._saving.values()))

    def _fill(self, sim) -> None:
        """The round when no waiting job can preempt: start waiting jobs in priority order while
        they fit (classes needing more than the free GPUs are skipped without a look)."""
        q = self.queue
        free = sim.free
        fits = free.fits
        strict = not self.backfill
        check_res = sim.res is not None
        deferred = None
        while q.n:
            if self._for is None:
                reserve = 0
            else:
                reserve = self._serve_reserved(sim)
                if reserve is None:  # the job its victims' saves were for has started
                    continue
            job = q.pop_best(fits, strict, free.total_free - reserve)
            if job is None:
                break
            if check_res and job.resources and not sim.fits(job):
                if deferred is None:
                    deferred = []
                deferred.append(job)
                if strict:
                    break
                continue
            self._start(sim, job)
        if deferred:
            for job in deferred:
                q.push(job, self._wait_key(job))

    def _make_room(self, sim, cand: SimJob) -> bool:
        """Preempt strictly worse running jobs (worst first, none started at this very time) until
        ``cand`` (popped from the queue) fits, and start it; if the victims are still saving, queue
        ``cand`` with their GPUs reserved for it. False (nothing done) if it cannot get room."""
        if sim.res is not None and cand.resources:
            return False  # victims are chosen by GPUs only: a job with other demands waits for them
        h = self.running
        bound = self._wait_key(cand)[0]
        victims = []
        popped = []
        freed = sim.free.total_free + sum(self._saving.values())
        layout = sim.free.needs_layout(cand.gpus, cand.single_server)
        if self._saving and freed >= cand.gpus and not layout:
            return False  # enough GPUs are being saved already: wait for them
        while freed < cand.gpus or (layout and not self._fits_after(sim, cand, victims)):
            top = self._worst(sim)
            if top is None or not (bound < self._run_value(sim, top[2])) or self._since.get(top[2].index) == sim.now:
                for e in popped:
                    heapq.heappush(h, e)
                return False
            e = heapq.heappop(h)
            popped.append(e)
            victims.append(e[2])
            freed += e[2].gpus
        # keep victims that turn out unnecessary (best first among the chosen)
        keep = []
        for v in reversed(victims):
            if freed - v.gpus >= cand.gpus and (
                not layout or self._fits_after(sim, cand, [x for x in victims if x is not v and x not in keep])
            ):
                freed -= v.gpus
                keep.append(v)
        for e in popped:
            if e[2] in keep:
                heapq.heappush(h, e)
        for v in victims:
            if v not in keep:
                sim.preempt(v, rollback=self.rollback)
                self._since.pop(v.index, None)
                if v.phase == "saving":
                    self._saving[v.index] = v.gpus
                    if self.reserve == "preemptor":
                        self._for = cand
                elif v.phase == WAITING:  # zero save time: it competes again in this very round, so
                    self.queue.push(v, self._wait_key(v))  # a worse job cannot take its GPUs first
                    self._requeued.add(v.index)
        if sim.fits(cand):  # zero save time: the GPUs are free now
            if self._for is cand:
                self._for = None
            self._start(sim, cand)
        else:  # it waits for the saves (with their GPUs reserved for it, unless reserve="best")
            if self.reserve == "preemptor":
                self._for = cand
            self.queue.push(cand, self._wait_key(cand))
        return True

    def _remove(self, job) -> None:
        self.queue.remove(job)

    @staticmethod
    def _fits_after(sim, cand, victims) -> bool:
        free = list(sim.free_gpus)
        for v in victims:
            for m, g in v.placement.items():
                free[m] += g
        return sim.free.fits_in(free, cand.gpus, cand.single_server)

    def __repr__(self) -> str:
        extra = "" if self.reserve == "preemptor" else f", reserve={self.reserve!r}"
        return (
            f"{type(self).__name__}(placement={self.placement!r}, backfill={self.backfill}, "
            f"rollback={self.rollback}{extra})"
        )


class SRTF(_Preemptive):
    """Shortest remaining time first, preemptive, decided at every event time.

    Priority = remaining work (processing time at rate 1), for waiting and running jobs alike, so a
    preempted job can never preempt its preemptor back (no cycles when rates depend on the
    placement). Ties never preempt. See :class:`_Preemptive` for the mechanics; with ``rollback``
    preempted jobs lose the work since their last checkpoint.

    Notes
    -----
    O(log n) per decision: running jobs are in a max-heap by predicted end time, which does not
    change while a job's rate is constant and orders them by remaining work when all rates are
    equal. With unequal rates the heap only proposes victims; a victim is preempted only if its
    remaining work really exceeds the waiting job's (conservative).
    """

    name = "srtf"

    def _wait_key(self, job):
        return (job.remaining(), job.arrival, job.index)

    def _badness(self, sim, job) -> float:  # predicted end time
        if job.phase == TRAINING:
            return sim.now + job.remaining() / job.rate
        return sim.now + job.remaining()

    def _run_value(self, sim, job) -> float:  # remaining work, the same measure as waiting jobs
        return job.remaining()


class LAS(_Preemptive):
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

    Notes
    -----
    The running-job heap is ordered by attained service minus elapsed time, which is exact while
    all training jobs progress at the same rate (rate 1 by default); with unequal rates the order
    of running jobs is approximate (the comparison with the waiting job uses the true values).
    """

    name = "las"

    def __init__(
        self,
        *,
        placement: str = "consolidate",
        backfill: bool = True,
        quantum: float = 60.0,
        gpu_weighted: bool = False,
        rollback: bool = False,
        reserve: str = "preemptor",
    ):
        super().__init__(placement=placement, backfill=backfill, rollback=rollback, reserve=reserve)
        if isinstance(quantum, bool) or not (isinstance(quantum, (int, float)) and quantum > 0):
            raise InvalidOptionError(
                f"The 'quantum' option of LAS must be a positive number of seconds; got {quantum!r}."
            )
        self.quantum = float(quantum)
        self.gpu_weighted = gpu_weighted

    def _att(self, job) -> float:
        a = job.done_work()
        return a * job.gpus if self.gpu_weighted else a

    def _wait_key(self, job):
        return (self._att(job), job.arrival, job.index)

    def _badness(self, sim, job) -> float:
        return self._att(job) - sim.now * (job.gpus if self.gpu_weighted else 1.0)

    def _run_value(self, sim, job) -> float:
        return self._att(job)

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
        if self._timer is None and self.next is not None and self.queue.n:
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
        if not self.queue.n:  # nothing waits: off until a job waits (timer.time = the next quantum)
            sim.cancel_timer(timer)
            self._timer = None
            self.next = timer.time

    def _may_preempt(self, sim) -> bool:
        tick, self._tick = self._tick, False
        return tick

    def __repr__(self) -> str:
        return (
            f"LAS(placement={self.placement!r}, backfill={self.backfill}, quantum={self.quantum:g}, "
            f"gpu_weighted={self.gpu_weighted})"
        )


class PeriodicSRTF(SRTF):
    """SRTF that decides only every ``period`` seconds (ticks k * period).

    Between ticks nothing starts, not even on free GPUs, except the job for which a tick's
    preemptions are freeing GPUs (it starts when their saves end). This is the fixed scheduling
    interval of round-based schedulers (60 s, 360 s, 600 s: the intervals of Pollux/Sia,
    Muri/Gavel and Optimus), as studied by the Lazer paper.

    Parameters
    ----------
    period : float
        Seconds between decisions (> 0), default 60.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import simulate
    >>> res = simulate(Cluster.homogeneous(1, 1), [Job(0, work=5, arrival=1)], PeriodicSRTF(period=10))
    >>> res.jobs_frame()["first_start"].tolist()   # arrives at 1, waits for the tick at 10
    [10.0]
    """

    name = "srtf-periodic"

    def __init__(
        self,
        *,
        period: float = 60.0,
        placement: str = "consolidate",
        backfill: bool = True,
        rollback: bool = False,
        reserve: str = "preemptor",
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
        self._timer = sim.set_timer(at=0.0, period=self.period, data="srtf-periodic")
        self._left = len(sim.jobs)

    def on_completion(self, sim, job) -> None:
        self._left -= 1
        if not self._left:
            sim.cancel_timer(self._timer)

    def on_timer(self, sim, timer) -> None:
        if timer is self._timer:
            self._tick = True

    def schedule(self, sim) -> None:
        tick, self._tick = self._tick, False
        if tick:
            super().schedule(sim)
            return
        cand = self._for  # between ticks: only the job a tick's preemptions are freeing GPUs for
        if cand is not None and cand.phase == WAITING and sim.fits(cand):
            self._for = None
            self._remove(cand)
            self._start(sim, cand)

    def _may_preempt(self, sim) -> bool:
        return True  # schedule() runs its round only at ticks

    def __repr__(self) -> str:
        return f"PeriodicSRTF(period={self.period:g}, placement={self.placement!r}, backfill={self.backfill})"


POLICIES: dict[str, type[Policy]] = {"fifo": FIFO, "sjf": SJF, "srtf": SRTF, "las": LAS, "srtf-periodic": PeriodicSRTF}
"""The baseline policies (every registered policy: :func:`optsched.sim.policy_registry`)."""

for _name, _cls in POLICIES.items():
    register_policy(_name, _cls)
