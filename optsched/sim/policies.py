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

from optsched.exceptions import InvalidOptionError, SimulationError
from optsched.sim.policy import Policy
from optsched.sim.registry import get_policy, register_policy
from optsched.sim.state import LOADING, SAVING, TRAINING, WAITING, SimJob

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
    compiled_kind = "fifo"

    def key(self, job):
        return (job.arrival, job.index)


class SJF(_QueuePolicy):
    """Shortest job first by work (ties: arrival, input order); non-preemptive.

    Parameters
    ----------
    size_attr : str, optional
        Use ``job.attrs[size_attr]`` (e.g. a predicted duration) instead of the true work.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import simulate
    >>> jobs = [Job(0, work=5), Job(1, work=4, arrival=1), Job(2, work=1, arrival=2)]
    >>> simulate(Cluster.homogeneous(1, 1), jobs, SJF()).jobs_frame()["completion"].tolist()  # 2 before 1
    [5.0, 10.0, 6.0]
    """

    name = "sjf"
    compiled_kind = "sjf"

    def __init__(self, *, placement: str = "consolidate", backfill: bool = True, size_attr: str | None = None):
        super().__init__(placement=placement, backfill=backfill)
        self.size_attr = size_attr

    def key(self, job):
        size = job.work if self.size_attr is None else float(job.attrs[self.size_attr])
        return (size, job.arrival, job.index)


class _Claim:
    """GPUs promised to one waiting job (rule R6 of ``formulations/lazer.md``): ``free`` ({server: GPUs}
    free now) and ``pending`` ({index of a job saving: {server: GPUs}}, free when its save ends)."""

    __slots__ = ("job", "free", "pending")

    def __init__(self, job: SimJob):
        self.job = job
        self.free: dict[int, int] = {}
        self.pending: dict[int, dict[int, int]] = {}


class _Preemptive(Policy, metaclass=ABCMeta):
    """Preemptive priority scheduling shared by SRTF, LAS and periodic SRTF.

    The rules are R1-R12 of ``formulations/lazer.md#simulator-rules``, each decided once there
    with its reason; in short, a decision round takes the waiting jobs in key order
    (``_wait_key``: value, arrival, input position) and, for each job c:

    - R8: c starts if it fits in the free GPUs that no other job claims (its own claimed free GPUs
      included; on those first), and its claim ends;
    - R9: else a job holding a claim waits for it (``reserve="preemptor"``, or periodic SRTF between
      ticks: ``"best"`` drops every claim at the start of a round and makes them again in key
      order, R7);
    - R10: else, if it fits once the GPUs being saved (that nobody claims) are free too, it claims
      them (GPUs being saved first, then free ones) and waits;
    - R11: else, where preemption is allowed, running jobs strictly worse than c (value only: ties
      never preempt; none started at this very time), worst first by the same key, are taken until
      c would fit, the ones not needed dropped again (best first); they are preempted and c claims
      their GPUs (or starts at once if they are free at once);
    - R12: else c is passed over (and with ``backfill=False`` the round ends).

    A claimed GPU is never given to another job. Several jobs may preempt in one round. Jobs that
    declare other resources (``Job.resources``) start only where those are free too, never claim
    GPUs and never preempt (victims are chosen by GPUs).

    Running jobs sit in two max-heaps: training jobs by ``_badness`` (constant while a job trains at
    a constant rate: the predicted end for SRTF), loading jobs by ``_run_value`` (constant while it
    loads: its remaining work or attained service), both with the key's tie-breaks, so the worst
    running job is found in O(log n) and is the one the waiting order would rank last (R4).
    Claims and GPUs being saved are kept per server; a round with none of them takes the fast path
    of the baselines (free-GPU buckets, no vectors).
    """

    preemptive = True

    def __init__(
        self,
        *,
        placement: str = "consolidate",
        backfill: bool = True,
        rollback: bool = False,
        reserve: str = "best",
    ):
        super().__init__(placement=placement)
        if not isinstance(backfill, bool):
            raise InvalidOptionError(f"The 'backfill' option of {self.name} must be true or false; got {backfill!r}.")
        if reserve not in ("preemptor", "best"):
            raise InvalidOptionError(
                f"The 'reserve' option of {self.name} must be 'best' (GPUs being saved go to the best "
                f"waiting job when the save ends; the default) or 'preemptor' (to the job they were "
                f"preempted for); got {reserve!r}."
            )
        if not isinstance(rollback, bool):
            raise InvalidOptionError(f"The 'rollback' option of {self.name} must be true or false; got {rollback!r}.")
        self.backfill = backfill
        self.rollback = rollback
        self.reserve = reserve

    # priorities (lower value = higher priority) -------------------------------------------------
    @abstractmethod
    def _wait_key(self, job):
        """A waiting job's key ``(value, arrival, index)`` (its value compares with ``_run_value``)."""

    @abstractmethod
    def _badness(self, sim, job) -> float:
        """What orders the training jobs (worst first); constant while a job trains at a constant rate."""

    @abstractmethod
    def _run_value(self, sim, job) -> float:
        """A running job's priority value, in the units of ``_wait_key(job)[0]``."""

    def _may_preempt(self, sim) -> bool:
        return True

    # bookkeeping ------------------------------------------------------------------------------------
    def on_start(self, sim) -> None:
        self.queue = WaitQueue()
        self._train: list = []  # max-heap of training jobs: (-badness, -arrival, -index, seq, job, rate)
        self._loading: list = []  # max-heap of loading jobs: (-value, -arrival, -index, seq, job)
        self._seq = 0
        self._entry: dict[int, int] = {}  # job index -> seq of its live heap entry
        self._since: dict[int, float] = {}  # job index -> time of its current start
        self._requeued: set[int] = set()  # victims queued again at once (nothing to save)
        n = len(sim.free_gpus)
        self._claims: dict[int, _Claim] = {}  # waiting job index -> its claim (R6)
        self._rfree = [0] * n  # free GPUs claimed, per server
        self._nrfree = 0
        self._saving: dict[int, dict[int, int]] = {}  # job saving -> its GPUs nobody claims, per server
        self._usav = [0] * n  # GPUs being saved that nobody claims, per server
        self._nusav = 0

    def on_arrival(self, sim, job) -> None:
        self.queue.push(job, self._wait_key(job))

    def on_preempted(self, sim, job) -> None:
        if job.index in self._requeued:  # queued again in the round that preempted it (and maybe
            self._requeued.discard(job.index)  # restarted since): this notice is about the old run
            return
        self._since.pop(job.index, None)
        left = self._saving.pop(job.index, None)
        if left is not None:  # its save (or lost load) ended: its GPUs are free, claimed ones stay claimed
            usav = self._usav
            for m, g in left.items():
                usav[m] -= g
                self._nusav -= g
            rfree = self._rfree
            for cl in self._claims.values():
                part = cl.pending.pop(job.index, None)
                if part:
                    for m, g in part.items():
                        cl.free[m] = cl.free.get(m, 0) + g
                        rfree[m] += g
                        self._nrfree += g
        if job.phase == WAITING:
            self.queue.push(job, self._wait_key(job))

    def on_loaded(self, sim, job) -> None:
        self._push_running(sim, job)  # now training: into the training heap, with its rate

    def _push_running(self, sim, job) -> None:
        self._seq += 1
        self._entry[job.index] = self._seq
        if job.index not in self._since:
            self._since[job.index] = sim.now
        if job.phase == LOADING:
            h = self._loading
            heapq.heappush(h, (-self._run_value(sim, job), -job.arrival, -job.index, self._seq, job))
        else:
            h = self._train
            heapq.heappush(h, (-self._badness(sim, job), -job.arrival, -job.index, self._seq, job, job.rate))
        if len(h) > 2 * sim.capacity + 256:  # mostly stale entries (deleted lazily): drop them, in place
            self._compact(h)

    def _compact(self, h: list) -> None:
        """Drop the heap entries of jobs no longer running or restarted since (``_worst`` would skip
        them; the order of the others is unchanged). Live entries are at most one per running job,
        so a heap over twice the GPU count is mostly stale: this keeps it O(GPUs), not O(starts)."""
        entry = self._entry
        phase = LOADING if h is self._loading else TRAINING
        h[:] = [e for e in h if e[4].phase == phase and entry.get(e[4].index) == e[3]]
        heapq.heapify(h)
        # the per-job maps keep only running jobs (finished ones were left in them, for speed)
        live = {e[4].index for e in self._train} | {e[4].index for e in self._loading}
        if len(entry) > 2 * len(live) + 256:
            self._entry = {i: s for i, s in entry.items() if i in live}
            self._since = {i: t for i, t in self._since.items() if i in live}

    def _start(self, sim, job, placement=None) -> None:
        sim.start(job, placement)
        self._push_running(sim, job)

    def _top(self, sim, h: list):
        """Clean the top of one running-job heap and return its entry (or None)."""
        entry = self._entry
        if h is self._loading:
            while h:
                e = h[0]
                if e[4].phase != LOADING or entry.get(e[4].index) != e[3]:
                    heapq.heappop(h)
                    continue
                return e
            return None
        while h:
            e = h[0]
            job = e[4]
            if job.phase != TRAINING or entry.get(job.index) != e[3]:
                heapq.heappop(h)
                continue
            if job.rate != e[5]:  # stale after a rate change
                heapq.heappop(h)
                self._push_running(sim, job)
                continue
            return e
        return None

    def _worst(self, sim):
        """``(entry, heap)`` of the worst running job by the key (R4), or ``(None, None)``."""
        t = self._top(sim, self._train)
        lo = self._top(sim, self._loading) if self._loading else None
        if lo is None:
            return (t, self._train) if t is not None else (None, None)
        if t is None:
            return lo, self._loading
        a, b = t[4], lo[4]
        if (self._run_value(sim, a), a.arrival, a.index) >= (self._run_value(sim, b), b.arrival, b.index):
            return t, self._train
        return lo, self._loading

    # the GPUs a job may use ------------------------------------------------------------------------
    def _vector(self, sim, soon: bool, extra: dict[int, int] | None = None) -> list[int]:
        """Free GPUs nobody claims per server (``soon``: plus GPUs being saved nobody claims; ``extra``:
        plus the GPUs of chosen victims)."""
        rf = self._rfree
        vec = [f - r for f, r in zip(sim.free_gpus, rf, strict=True)] if self._nrfree else list(sim.free_gpus)
        if soon and self._nusav:
            for m, g in enumerate(self._usav):
                vec[m] += g
        if extra:
            for m, g in extra.items():
                vec[m] += g
        return vec

    def _fits(self, sim, job, soon: bool = False, extra: dict[int, int] | None = None, n_extra: int = 0) -> bool:
        """Whether ``job`` fits in the GPUs nobody claims (R8; ``soon``/``extra`` as :meth:`_vector`)."""
        free = sim.free
        g = job.gpus
        if not free.needs_layout(g, job.single_server):
            return free.total_free - self._nrfree + (self._nusav if soon else 0) + n_extra >= g
        if not self._nrfree and not extra and not (soon and self._nusav):
            return free.fits(g, job.single_server)
        return free.fits_in(self._vector(sim, soon, extra), g, job.single_server)

    def _placement(self, sim, job, vec: list[int]) -> dict[int, int] | None:
        """A placement of ``job`` within ``vec`` by the policy's rule."""
        import numpy as np

        from optsched.core.placement import place

        cap = np.asarray(sim.free.capacity) if self.placement == "whole_node" else None
        return place(
            np.asarray(vec), job.gpus, rule=self.placement, single_server=job.single_server, rng=sim.rng, capacity=cap
        )

    def _try_start(self, sim, job) -> bool:
        """R8: start ``job`` in the free GPUs nobody claims if it fits there (its other resources too)."""
        if not self._fits(sim, job):
            return False
        pl = None if not self._nrfree else self._placement(sim, job, self._vector(sim, False))
        if sim.res is not None and job.resources:
            if pl is None:
                pl = sim.place(job)
            if pl is None or not sim.res.fits(sim.res.share(job.resources, pl, job.gpus)):
                return False
        self._start(sim, job, pl)
        return True

    # claims ------------------------------------------------------------------------------------------
    def _claim(self, sim, job, victims=()) -> None:
        """Claim GPUs for waiting ``job`` (R10/R11): its victims' GPUs being saved first, then other GPUs
        being saved that nobody claims, then free ones nobody claims; on the servers the placement
        rule picks when the layout matters (single-server jobs, whole-node)."""
        g = job.gpus
        soon = self._vector(sim, True)
        if sim.free.needs_layout(g, job.single_server):
            room = self._placement(sim, job, soon)
        else:
            room = dict(enumerate(soon))
        if room is None:  # pragma: no cover - the callers checked that it fits
            raise SimulationError(f"Internal error: no room to claim for {job.label} at t={sim.now:g}.")
        cl = _Claim(job)
        need = g
        order = [v.index for v in victims if v.index in self._saving]
        order += sorted(i for i in self._saving if i not in set(order))
        for i in order:  # GPUs being saved
            left = self._saving[i]
            for m in list(left):
                take = min(left[m], room.get(m, 0), need)
                if take <= 0:
                    continue
                left[m] -= take
                if not left[m]:
                    del left[m]
                room[m] -= take
                need -= take
                self._usav[m] -= take
                self._nusav -= take
                cl.pending.setdefault(i, {})[m] = take
                if not need:
                    break
            if not need:
                break
        if need:  # then free GPUs nobody claims
            fl, rf = sim.free_gpus, self._rfree
            for m in sorted(room):
                take = min(fl[m] - rf[m], room[m], need)
                if take <= 0:
                    continue
                cl.free[m] = take
                rf[m] += take
                self._nrfree += take
                need -= take
                if not need:
                    break
        if need:  # pragma: no cover
            raise SimulationError(f"Internal error: {job.label} claimed {g - need} of {g} GPUs at t={sim.now:g}.")
        self._claims[job.index] = cl

    def _drop_claims(self) -> None:
        """R7 (``reserve="best"``): every claim ends; its jobs wait in the queue again."""
        for cl in list(self._claims.values()):
            self._release_claim(cl)
            self.queue.push(cl.job, self._wait_key(cl.job))

    def _release_claim(self, cl: _Claim) -> None:
        """End a claim: its free GPUs are nobody's, its GPUs still being saved become unclaimed."""
        del self._claims[cl.job.index]
        rf, usav = self._rfree, self._usav
        for m, g in cl.free.items():
            rf[m] -= g
            self._nrfree -= g
        for i, part in cl.pending.items():
            left = self._saving[i]
            for m, g in part.items():
                left[m] = left.get(m, 0) + g
                usav[m] += g
                self._nusav += g

    def _try_start_claimant(self, sim, cl: _Claim) -> bool:
        """R8 for a job holding a claim: it starts if it fits in its claimed free GPUs plus the free GPUs
        nobody claims, on its claimed GPUs first; its claim ends."""
        job = cl.job
        g = job.gpus
        own = sum(cl.free.values())
        free = sim.free
        if not free.needs_layout(g, job.single_server):
            if free.total_free - self._nrfree + own < g:
                return False
            self._release_claim(cl)
            pl = {m: k for m, k in cl.free.items() if k}
            if own < g:
                import numpy as np

                from optsched.core.placement import place

                vec = self._vector(sim, False)
                for m, k in pl.items():
                    vec[m] -= k
                rest = place(np.asarray(vec), g - own, rule=self.placement, rng=sim.rng)
                for m, k in rest.items():
                    pl[m] = pl.get(m, 0) + k
        else:
            vec = self._vector(sim, False)
            for m, k in cl.free.items():
                vec[m] += k
            if not free.fits_in(vec, g, job.single_server):
                return False
            self._release_claim(cl)
            m0 = max(cl.free, key=cl.free.get) if own else None  # its claim's server, if it fits there
            pl = {m0: g} if m0 is not None and vec[m0] >= g else self._placement(sim, job, vec)
        self._start(sim, job, pl)
        return True

    def _start_claimants(self, sim) -> None:
        """R8 for the jobs holding a claim only, in key order (periodic SRTF between ticks)."""
        for cl in sorted(self._claims.values(), key=lambda cl: self._wait_key(cl.job)):
            self._try_start_claimant(sim, cl)

    # decisions ----------------------------------------------------------------------------------------
    def schedule(self, sim) -> None:
        """One decision round (R7-R12 of ``formulations/lazer.md``; see the class docstring)."""
        if self._claims and self.reserve == "best":
            self._drop_claims()
        if not self.queue.n and not self._claims:
            return
        may = self._may_preempt(sim)
        if not may and not self._claims and not self._nusav and sim.res is None:
            self._fill_fast(sim, ())  # nothing can preempt, nothing is claimed or being saved: R8/R12 only
            return
        self._round(sim, may)

    def _round(self, sim, may_preempt: bool) -> None:
        q = self.queue
        strict = not self.backfill
        check_res = sim.res is not None
        free = sim.free
        blocked: set[tuple[int, bool]] = set()
        deferred = None  # jobs whose GPUs are free but not their other resources
        fill = not may_preempt
        # the smallest demand for which R10/R11 failed in this round (failure is monotone: a later, worse
        # job has fewer running jobs below it and finds no more GPUs): larger ones need not try
        fail_any = fail_single = 1 << 62
        # jobs holding a claim from an earlier round (reserve="preemptor"), in key order: R8/R9 for them
        claimants = sorted(self._claims.values(), key=lambda cl: self._wait_key(cl.job)) if self._claims else ()
        ci = 0
        nc = len(claimants)
        plain = not self._nrfree and not check_res  # nothing claimed: the engine's own fit and placement
        while q.n or ci < nc:
            if fill and plain and ci == nc and not self._nusav:
                self._fill_fast(sim, blocked)
                break
            top, cls = q.head(blocked) if q.n else (None, None)
            if ci < nc and (top is None or self._wait_key(claimants[ci].job) < top[0]):
                cl = claimants[ci]
                ci += 1
                if cl.job.index in self._claims:  # R8 if it fits its claim and the free GPUs, else R9: it waits
                    self._try_start_claimant(sim, cl)
                    plain = not self._nrfree and not check_res
                continue
            if top is None:
                break
            job = top[2]
            if plain:
                if free.fits(job.gpus, job.single_server):  # R8
                    q.pop_class(cls)
                    self._start(sim, job)
                    continue
            elif self._fits(sim, job):  # R8
                q.pop_class(cls)
                if self._try_start(sim, job):
                    continue
                if deferred is None:
                    deferred = []
                deferred.append(job)
                if strict:
                    break
                continue
            if check_res and job.resources:  # never claims, never preempts (R12)
                blocked.add(cls)
                if strict:
                    break
                continue
            g = job.gpus
            single = free.needs_layout(g, job.single_server)
            tried = g < fail_any and not (single and g >= fail_single)
            if tried and self._nusav and self._fits(sim, job, soon=True):  # R10
                q.pop_class(cls)
                self._claim(sim, job)
                plain = False
                continue
            if not fill:
                worst = self._worst(sim)[0] if self._loading else self._top(sim, self._train)
                if worst is None or not (top[0][0] < self._run_value(sim, worst[4])):
                    fill = True  # no running job is worse than this job, nor than any job after it
                elif tried:
                    q.pop_class(cls)
                    if self._make_room(sim, job):
                        plain = not self._nrfree and not check_res
                        if blocked and free.total_free > self._nrfree:  # GPUs left free: the jobs
                            blocked.clear()  # passed over may fit now, so the scan starts again (R12)
                            fail_any = fail_single = 1 << 62
                        continue
                    q.push(job, top[0])
            if tried:
                if single:
                    fail_single = min(fail_single, g)
                else:
                    fail_any = min(fail_any, g)
            blocked.add(cls)  # R12: a worse job of its class cannot get in where it could not
            if strict:
                break
        if deferred:
            for job in deferred:
                q.push(job, self._wait_key(job))

    def _fill_fast(self, sim, blocked) -> None:
        """R8/R12 when nothing is claimed or being saved and no job can preempt: waiting jobs start in
        key order while they fit (classes needing more than the free GPUs skipped without a look)."""
        q = self.queue
        free = sim.free
        fits = free.fits
        strict = not self.backfill

        def fits_unblocked(g, single):
            return (g, single) not in blocked and fits(g, single)

        test = fits_unblocked if blocked else fits
        while q.n:
            job = q.pop_best(test, strict, free.total_free)
            if job is None:
                break
            self._start(sim, job)

    def _make_room(self, sim, cand: SimJob) -> bool:
        """R11: preempt strictly worse running jobs (worst first, none started at this very time) until
        ``cand`` (popped from the queue) would fit, then start it or let it claim their GPUs. False
        (nothing done) if it cannot fit even with every such job."""
        bound = self._wait_key(cand)[0]
        now = sim.now
        g = cand.gpus
        layout = sim.free.needs_layout(g, cand.single_server)
        since = self._since
        run_value = self._run_value
        victims: list[SimJob] = []
        popped: list = []  # (entry, heap) taken off the heaps; every one not preempted goes back
        if layout:  # where the GPUs are matters: a vector per server
            extra: dict[int, int] = {}

            def fits() -> bool:
                return self._fits(sim, cand, soon=True, extra=extra)

        else:  # only how many: a count (the fast path of every GPU-only spanning job)
            need = g - (sim.free.total_free - self._nrfree + self._nusav)  # GPUs the victims must bring
            n_extra = 0
        while (not fits()) if layout else n_extra < need:
            e, h = self._worst(sim) if self._loading else (self._top(sim, self._train), self._train)
            if e is None or not (bound < run_value(sim, e[4])):
                for e2, h2 in popped:
                    heapq.heappush(h2, e2)
                return False
            heapq.heappop(h)
            popped.append((e, h))
            v = e[4]
            if since.get(v.index) == now:  # started at this very time: never a victim (R5)
                continue
            victims.append(v)
            if layout:
                for m, k in v.placement.items():
                    extra[m] = extra.get(m, 0) + k
            else:
                n_extra += v.gpus
        if len(victims) > 1:
            for v in reversed(victims[:]):  # drop the victims not needed, best first
                if not layout:
                    if n_extra - v.gpus >= need:
                        n_extra -= v.gpus
                        victims.remove(v)
                    continue
                for m, k in v.placement.items():
                    extra[m] -= k
                if fits():
                    victims.remove(v)
                else:
                    for m, k in v.placement.items():
                        extra[m] += k
        chosen = {v.index for v in victims}
        for e, h in popped:
            if e[4].index not in chosen:
                heapq.heappush(h, e)
        usav = self._usav
        for v in victims:  # worst first
            pl = dict(v.placement)
            sim.preempt(v, rollback=self.rollback)
            since.pop(v.index, None)
            if v.phase == SAVING:  # its GPUs are free when its save (or lost load) ends
                self._saving[v.index] = pl
                for m, k in pl.items():
                    usav[m] += k
                    self._nusav += k
            elif v.phase == WAITING:  # nothing to save: it competes again in this very round, so
                self.queue.push(v, self._wait_key(v))  # a worse job cannot take its GPUs first
                self._requeued.add(v.index)
        if not self._try_start(sim, cand):
            self._claim(sim, cand, victims)
        return True

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(placement={self.placement!r}, backfill={self.backfill}, "
            f"rollback={self.rollback}, reserve={self.reserve!r})"
        )


class SRTF(_Preemptive):
    """Shortest remaining time first, preemptive, decided at every event time.

    Priority = key (remaining work, arrival, input position), for waiting and running jobs alike
    (R4 of ``formulations/lazer.md``; a loading job's remaining work is its whole remaining work,
    the rest of its load not counted), so a preempted job can never preempt its preemptor back (no
    cycles when rates depend on the placement). Ties in remaining work never preempt (R5). See
    :class:`_Preemptive` for the round (R8-R12) and ``reserve`` (R7, default ``"best"``); with
    ``rollback`` preempted jobs lose the work since their last checkpoint.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import simulate
    >>> jobs = [Job(0, work=9, save_time=1), Job(1, work=6, arrival=1, load_time=4, save_time=1),
    ...         Job(2, work=1, arrival=4)]
    >>> res = simulate(Cluster.homogeneous(1, 2), jobs, SRTF())
    >>> df = res.jobs_frame().set_index("job_id")
    >>> df["n_preemptions"].tolist(), df["completion"].tolist()  # job 1 (6 s left, loading) is the victim
    ([0, 1, 0], [9.0, 15.0, 5.0])

    Notes
    -----
    O(log n) per decision: training jobs are in a max-heap by predicted end time, which does not
    change while a job's rate is constant and orders them by remaining work when all rates are
    equal; loading jobs in a max-heap by remaining work (constant while they load). With unequal
    rates the heap only proposes victims; a victim is preempted only if its remaining work really
    exceeds the waiting job's (conservative).
    """

    name = "srtf"
    compiled_kind = "srtf"

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


class PeriodicSRTF(SRTF):
    """SRTF that decides only every ``period`` seconds (ticks at the first arrival + k * period).

    The full round (R8-R12 of ``formulations/lazer.md``) runs only at ticks, the first at the first
    job's arrival (so a trace with Unix-epoch arrivals ticks from its first job, not from 0). Between ticks nothing
    starts, not even on free GPUs, except a job holding a claim from a tick: it starts (R8) as soon as
    it fits in its claimed GPUs and the free GPUs nobody claims, in both ``reserve`` modes
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


POLICIES: dict[str, type[Policy]] = {"fifo": FIFO, "sjf": SJF, "srtf": SRTF, "las": LAS, "srtf-periodic": PeriodicSRTF}
"""The baseline policies (every registered policy: :func:`optsched.sim.policy_registry`)."""

for _name, _cls in POLICIES.items():
    register_policy(_name, _cls)
