"""The preemptive round shared by SRTF, LAS and periodic SRTF (:class:`Preemptive`), and SRTF.

The rules are R1-R12 of ``formulations/lazer.md#simulator-rules``, each decided once there with
its reason and named once in :mod:`optsched.sim.rules` (which also says which function carries
each). Claims (R6-R10) are :mod:`.claims`; LAS and periodic SRTF are :mod:`.las` and
:mod:`.periodic`.

Tested in ``tests/sim/test_preemption_invariants.py`` and ``tests/sim/test_differential.py``.
"""

from __future__ import annotations

import heapq
from abc import abstractmethod

from optsched.exceptions import InvalidOptionError
from optsched.sim.model.state import LOADING, SAVING, TRAINING, WAITING, SimJob
from optsched.sim.policies.baselines import WaitQueue
from optsched.sim.policies.claims import Claims
from optsched.sim.rules import soon_available


class Preemptive(Claims):
    """Preemptive priority scheduling shared by SRTF, LAS and periodic SRTF.

    A decision round (:meth:`schedule`) takes the waiting jobs in key order (R4: ``_wait_key``,
    value, arrival, input position) and, for each, applies R8-R12 in turn: start (R8), wait for
    its claim (R9), claim GPUs being saved (R10), preempt strictly worse running jobs (R11, R5),
    or pass over (R12); with ``reserve="best"`` every round first drops the claims (R7). The rules
    are stated in :data:`optsched.sim.rules.RULES` and decided, with their reasons, in
    ``formulations/lazer.md#simulator-rules``; the claims are :class:`~.claims.Claims`.

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

    # priorities (R4; lower value = higher priority; _wait_key is declared in Claims) --------------
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
        self._reset_claims(len(sim.free_gpus))

    def on_arrival(self, sim, job) -> None:
        self.queue.push(job, self._wait_key(job))

    def on_preempted(self, sim, job) -> None:
        if job.index in self._requeued:  # queued again in the round that preempted it (and maybe
            self._requeued.discard(job.index)  # restarted since): this notice is about the old run
            return
        self._since.pop(job.index, None)
        left = self._saving.pop(job.index, None)
        if left is not None:  # its save (or lost load) ended: its GPUs are free, claimed ones stay claimed
            self._save_ended(left, job.index)
        if job.phase == WAITING:
            self.queue.push(job, self._wait_key(job))

    def on_loaded(self, sim, job) -> None:
        self._push_running(sim, job)  # now training: into the training heap, with its rate

    def _push_running(self, sim, job) -> None:
        """Track a running ``job`` in its heap, ranked by the key's value and tie-breaks (R4)."""
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
                if worst is None or not (top[0][0] < self._run_value(sim, worst[4])):  # R5 (rules.outranks)
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
            need = g - soon_available(sim.free.total_free, self._nrfree, self._nusav)  # GPUs the victims must bring
            n_extra = 0
        while (not fits()) if layout else n_extra < need:
            e, h = self._worst(sim) if self._loading else (self._top(sim, self._train), self._train)
            if e is None or not (bound < run_value(sim, e[4])):  # R5 (rules.outranks): strictly worse only
                for e2, h2 in popped:
                    heapq.heappush(h2, e2)
                return False
            heapq.heappop(h)
            popped.append((e, h))
            v = e[4]
            if since.get(v.index) == now:  # started at this very time: never a victim (R5, rules.started_now)
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


class SRTF(Preemptive):
    """Shortest remaining time first, preemptive, decided at every event time.

    Priority = key (remaining work, arrival, input position), for waiting and running jobs alike
    (R4 of ``formulations/lazer.md``; a loading job's remaining work is its whole remaining work,
    the rest of its load not counted), so a preempted job can never preempt its preemptor back (no
    cycles when rates depend on the placement). Ties in remaining work never preempt (R5). See
    :class:`Preemptive` for the round (R8-R12) and ``reserve`` (R7, default ``"best"``); with
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

    def _wait_key(self, job):  # R4: (remaining work, arrival, input position)
        return (job.remaining(), job.arrival, job.index)

    def _badness(self, sim, job) -> float:  # predicted end time
        if job.phase == TRAINING:
            return sim.now + job.remaining() / job.rate
        return sim.now + job.remaining()

    def _run_value(self, sim, job) -> float:  # remaining work, the same measure as waiting jobs
        return job.remaining()
