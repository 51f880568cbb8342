"""Paper 001's baselines (Sec. 7) as policies of the simulator: :class:`ElasticFIFO`,
:class:`ElasticDRF`, :class:`ElasticAntMan`, :class:`ElasticTiresias` and :class:`Elastic2DLAS`
(each described in :mod:`optsched.elastic.policy`, ``formulations/elastic.md#baselines``).
Tested in ``tests/elastic/test_policy.py`` and ``tests/elastic/test_baselines.py``.
"""

from __future__ import annotations

import heapq
from abc import ABCMeta, abstractmethod
from typing import Any

import numpy as np

from optsched.elastic.model import ElasticInstance
from optsched.elastic.policy_base import ElasticPolicy
from optsched.elastic.shapes import TOL, Shape, find_placement, placement_use
from optsched.exceptions import InvalidOptionError
from optsched.sim import LOADING, TRAINING, WAITING

__all__ = [
    "ElasticFIFO",
    "ElasticDRF",
    "ElasticAntMan",
    "ElasticTiresias",
    "Elastic2DLAS",
]


class ElasticFIFO(ElasticPolicy):
    """FIFO (Sec. 7 (i)): strict arrival order, fixed shapes (``fifo_shape``), non-preemptive."""

    name = "elastic-fifo"

    def schedule(self, sim):
        free = None
        for job in self.active():
            if job.phase != WAITING:
                continue
            free = self.free(sim) if free is None else free
            sh = self.shape(job)
            got = find_placement(self.instance, sh, free)
            if got is None:
                return  # head of line blocks
            self.start(sim, job, sh, *got)
            free = self.free(sim)


class ElasticDRF(ElasticPolicy):
    """DRF (Sec. 7 (ii)): progressive filling of worker bundles among the waiting jobs at each slot
    boundary, least dominant share first, each up to its ideal N; non-preemptive."""

    name = "elastic-drf"

    def _try(self, free: np.ndarray, job, n: int) -> tuple[Shape, dict, dict] | None:
        base = self.shape(job)
        j = job.attrs["elastic_index"]
        cands = []
        for q in (1, 0):
            if q == 0 and base.p is None and n < 2:
                continue
            cands.append((self.instance.duration(j, base.m, base.p, q, n), q))
        for d, q in sorted(cands):
            sh = Shape(base.m, base.p, q, n, d)
            got = find_placement(self.instance, sh, free)
            if got is not None:
                return sh, got[0], got[1]
        return None

    def schedule(self, sim):
        waiting = [j for j in self.active() if j.phase == WAITING]
        if not waiting:
            return
        free = self.free(sim)
        total = np.where(self._total > 0, self._total, 1.0)
        alloc: dict[int, tuple[Shape, dict, dict, np.ndarray]] = {}
        # the open job of least (share, arrival, index) next: a heap (only the job just served changes key)
        heap = [(0.0, j.arrival, j.index, k) for k, j in enumerate(waiting)]
        heapq.heapify(heap)
        # a (worker type, PS type) whose first worker did not fit will not fit for a later job of
        # this round either while no server's free resources grow (forgotten when one does)
        no_room: set = set()
        while heap:
            _, _, _, k = heapq.heappop(heap)
            job = waiting[k]
            cur = alloc.get(k)
            n = (cur[0].n if cur else 0) + 1
            base = self.shape(job)
            if n > base.n or (cur is None and (base.m, base.p) in no_room):
                continue
            before = free.copy() if cur is not None else None
            if cur is not None:
                free += cur[3]
            got = self._try(free, job, n)
            if got is None:
                if cur is not None:
                    free -= cur[3]
                else:
                    no_room.add((base.m, base.p))
                continue
            use = placement_use(self.instance, got[0], got[1], got[2])
            free -= use
            if before is not None and no_room and np.any(free > before + TOL):
                no_room.clear()  # a wider placement moved off a server: it may fit more now
            alloc[k] = (got[0], got[1], got[2], use)
            heapq.heappush(heap, (float((use.sum(axis=0) / total).max()), job.arrival, job.index, k))
        for k in sorted(alloc, key=lambda i: (waiting[i].arrival, waiting[i].index)):
            sh, w, p, _ = alloc[k]
            self.start(sim, waiting[k], sh, w, p)


class ElasticAntMan(ElasticPolicy):
    """AntMan-like (Sec. 7 (iii)): guarantee and opportunistic jobs (see the module doc).

    Parameters
    ----------
    demote_after : int or None
        Slots a guarantee job may wait (since its arrival, never started) before it becomes
        opportunistic; ``None`` (default): its own ideal duration d_j.
    """

    name = "elastic-antman"
    preemptive = True

    def __init__(self, instance: ElasticInstance, *, demote_after: int | None = None, overhead: str = "none"):
        super().__init__(instance, overhead=overhead)
        if demote_after is not None and (
            isinstance(demote_after, bool) or not isinstance(demote_after, (int, np.integer)) or demote_after < 0
        ):
            raise InvalidOptionError(
                f"The 'demote_after' option must be an integer number of slots >= 0 or None (the job's own "
                f"ideal duration); got {demote_after!r}."
            )
        self.demote_after = demote_after

    def on_start(self, sim):
        super().on_start(sim)
        self.opportunistic: set = set()
        self.demotions = 0
        self._run_as: dict[Any, str] = {}

    def _limit(self, job) -> float:
        return float(self.shape(job).d if self.demote_after is None else self.demote_after)

    def schedule(self, sim):
        self.check_progress(sim)
        now = sim.now
        act = self.active()
        for job in act:
            if (
                job.phase == WAITING
                and job.id not in self.opportunistic
                and job.n_starts == 0
                and now - job.arrival >= self._limit(job) - TOL
            ):
                self.opportunistic.add(job.id)
                self.demotions += 1
        free = self.free(sim)
        # guarantee jobs: strict arrival order, may preempt running opportunistic jobs
        for job in act:
            if job.phase != WAITING or job.id in self.opportunistic:
                continue
            sh = self.shape(job)
            got = find_placement(self.instance, sh, free)
            victims = []
            if got is None:
                running_oj = sorted(
                    (j for j in act if j.phase in (LOADING, TRAINING) and self._run_as.get(j.id) == "opportunistic"),
                    key=lambda j: (-self._last_start.get(j.id, 0.0), -j.index),
                )
                trial = free.copy()
                for v in running_oj:
                    trial += self._held(v)
                    victims.append(v)
                    got = find_placement(self.instance, sh, trial)
                    if got is not None:
                        break
                if got is None:
                    break  # head of line blocks the later guarantee jobs
                for v in victims:
                    sim.preempt(v)
                free = self.free(sim)
                got = find_placement(self.instance, sh, free)
            self._run_as[job.id] = "guarantee"
            self.start(sim, job, sh, *got)
            free = self.free(sim)
        # opportunistic jobs backfill what is free, in arrival order (free only shrinks here, so a
        # shape that did not fit will not fit a later job either)
        no_room: set = set()
        for job in act:
            if job.phase != WAITING or job.id not in self.opportunistic:
                continue
            sh = self.shape(job)
            if (sh.m, sh.p, sh.q, sh.n) in no_room:
                continue
            got = find_placement(self.instance, sh, free)
            if got is None:
                no_room.add((sh.m, sh.p, sh.q, sh.n))
                continue
            self._run_as[job.id] = "opportunistic"
            self.start(sim, job, sh, *got)
            free = self.free(sim)

    def _held(self, job) -> np.ndarray:
        cfg = job.config
        return placement_use(self.instance, cfg["shape"], cfg["workers"], cfg["ps"])


class _PriorityPreemptive(ElasticPolicy, metaclass=ABCMeta):
    """Preemptive priority scheduling at slot boundaries: jobs by :meth:`key`, smallest first; each
    keeps its servers if they are still free for it, else waits; a waiting job is placed first where
    nothing of a job kept running is taken, else anywhere free once the lower-priority jobs that
    hold it are preempted."""

    preemptive = True

    @abstractmethod
    def key(self, job) -> float:
        """The priority of an active job (smallest first)."""

    def pinned(self, sim, job) -> bool:
        """A running job kept whatever its priority (none here; see :class:`Elastic2DLAS`)."""
        return False

    def _held_use(self, job) -> np.ndarray:
        use = self._use.get(job.id)
        if use is None:  # pragma: no cover - every running job was started by this policy
            cfg = job.config
            use = self._use[job.id] = placement_use(self.instance, cfg["shape"], cfg["workers"], cfg["ps"])
        return use

    def keys(self, jobs: list) -> list[float]:
        """:meth:`key` of each job (a subclass may compute them in one pass)."""
        key = self.key
        return [key(j) for j in jobs]

    def _held_sparse(self, job) -> list[tuple[int, float]]:
        """The nonzero entries of :meth:`_held_use` as (flat index into H x R, amount), set at each start."""
        sp = self._sparse.get(job.id)
        if sp is None:  # pragma: no cover - every running job was started by this policy
            sp = self._sparse[job.id] = _sparse(self._held_use(job))
        return sp

    def start(self, sim, job, shape: Shape, workers: dict[int, int], ps: dict[int, int], use=None) -> None:
        super().start(sim, job, shape, workers, ps, use=use)
        self._sparse[job.id] = _sparse(self._use[job.id])

    def schedule(self, sim):
        self.check_progress(sim)
        act = self.active()
        if not act:
            return
        # by (key, arrival, index); the index is unique, so sorting the decorated tuples is that order
        dec = sorted(
            zip(self.keys(act), [j.arrival for j in act], [j.index for j in act], range(len(act)), strict=True)
        )
        order = [act[t[3]] for t in dec]
        # ``cap``: resources not yet promised this slot, flat (H x R) as Python floats, so that a
        # running job's check and subtraction touch only the entries it uses (the others compare
        # 0 <= cap + TOL, which fails only at the entries in ``low``; and x - 0.0 == x): the same
        # decisions as the H x R comparisons, to the last bit
        cap = np.asarray(self.instance.C, dtype=float).ravel().tolist()
        low: set[int] = set()  # entries with cap + TOL < 0 (none unless a pinned job overdraws)
        cap_arr = None  # cap as an H x R array, rebuilt when a waiting job needs it after a change
        now_free = self.free(sim)  # free right now (running jobs hold the rest)
        shape2 = now_free.shape
        keep, start = [], []
        kept: set = set()
        busy = (LOADING, TRAINING)
        for job in order:  # pinned jobs keep their resources before any priority is looked at
            if job.phase in busy and self.pinned(sim, job):
                for i, v in self._held_sparse(job):
                    cap[i] -= v
                    if cap[i] + TOL < 0:
                        low.add(i)
                keep.append(job)
                kept.add(id(job))
        no_room: set = set()  # shapes that did not fit ``cap``, which only shrinks in this loop
        for job in order:
            ph = job.phase
            if ph in busy:
                if id(job) in kept:
                    continue
                sp = self._held_sparse(job)
                if all(v <= cap[i] + TOL for i, v in sp) and (not low or low <= {i for i, _ in sp}):
                    for i, v in sp:
                        cap[i] -= v
                        if cap[i] + TOL < 0:
                            low.add(i)
                    cap_arr = None
                    keep.append(job)
                    kept.add(id(job))
                continue
            if ph != WAITING:
                continue
            sh = self.shape(job)
            sk = (sh.m, sh.p, sh.q, sh.n)
            if sk in no_room:
                continue
            if cap_arr is None:
                cap_arr = np.array(cap).reshape(shape2)
            got = find_placement(self.instance, sh, np.minimum(cap_arr, now_free))
            if got is None:
                got = find_placement(self.instance, sh, cap_arr)
            if got is None:
                no_room.add(sk)
                continue
            use = placement_use(self.instance, sh, *got)
            for i, v in _sparse(use):
                cap[i] -= v
                if cap[i] + TOL < 0:
                    low.add(i)
            cap_arr = None
            now_free -= use
            start.append((job, sh, got, use))
        for job in act:
            if job.phase in busy and id(job) not in kept:
                sim.preempt(job)
        for job, sh, got, use in start:
            self.start(sim, job, sh, *got, use=use)

    def on_start(self, sim):
        super().on_start(sim)
        self._sparse: dict[Any, list[tuple[int, float]]] = {}


def _sparse(use: np.ndarray) -> list[tuple[int, float]]:
    """(flat index, amount) of the nonzero entries of an H x R use, in flat order."""
    flat = use.ravel()
    nz = np.flatnonzero(flat)
    return list(zip(nz.tolist(), flat[nz].tolist(), strict=True))


class ElasticTiresias(_PriorityPreemptive):
    """Tiresias-like (Sec. 7 (iv), as the paper describes it): smallest remaining slots x size first."""

    name = "elastic-tiresias"

    def key(self, job) -> float:
        return job.remaining() * self.size(job)


class Elastic2DLAS(_PriorityPreemptive):
    """2D-LAS (Tiresias' discretised-free form): least attained slots x size first.

    A (re)started job keeps its resources until it has trained at least as long as it spent
    loading since that start (:meth:`pinned`). Its attained service grows every slot it trains, so
    without that rule two jobs of equal priority swap every slot; when each resume costs a load
    (``overhead="checkpoint"``, or the load and save times of the simulator, as ``optsched
    compare`` gives them) of half a slot or more, the swaps would eat all the time (a livelock).
    With it, every start buys at least as much training as it paid in loading, so the run ends.
    Without resume costs the rule never binds: the schedules are those of plain 2D-LAS
    (formulations/elastic.md#baselines).
    """

    name = "elastic-2d-las"

    def on_start(self, sim):
        super().on_start(sim)
        self._since: dict[Any, tuple[float, float]] = {}  # job id -> (its last start, attained then)
        self._static_deadline = self._deadline

    def start(self, sim, job, shape: Shape, workers: dict[int, int], ps: dict[int, int], use=None) -> None:
        super().start(sim, job, shape, workers, ps, use=use)
        self._since[job.id] = (float(sim.now), float(job.attained))

    def pinned(self, sim, job) -> bool:
        """Whether ``job`` (running) has trained for less time than it loaded since its last start."""
        since = self._since.get(job.id)
        t0, a0 = (float(sim.now), float(job.attained)) if since is None else since
        trained = (job.attained - a0) / job.rate if job.phase == TRAINING and job.rate > 0 else 0.0
        return 2.0 * trained < (sim.now - t0) - TOL

    def check_progress(self, sim) -> None:
        """The livelock guard, stretched by the resume loads paid so far: under :meth:`pinned` each
        load is followed by at least as much training, so a run that progresses stays within
        max a_j + sum_j (2 d_j + 2) + 2 (the slots spent loading) + 2 (the starts)."""
        if self.preemptive and sim.now > self._deadline:  # the loads only add: recount them when it matters
            paid = sum(j.loading_time + j.saving_time for j in sim.jobs)
            starts = sum(j.n_starts for j in sim.jobs)
            self._deadline = self._static_deadline + 2.0 * paid + 2.0 * starts
        super().check_progress(sim)

    def key(self, job) -> float:
        return job.attained * self.size(job)

    def keys(self, jobs: list) -> list[float]:
        size = self.size
        return [j.done_work() * size(j) for j in jobs]  # attained, without the property's call
