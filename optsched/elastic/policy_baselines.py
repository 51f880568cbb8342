"""Paper 001's non-preemptive baselines and AntMan (Sec. 7) as policies of the simulator:
:class:`ElasticFIFO`, :class:`ElasticDRF` and :class:`ElasticAntMan` (each described in
:mod:`optsched.elastic.policy`, ``formulations/elastic.md#baselines``; Tiresias and 2D-LAS are in
:mod:`optsched.elastic.policy_priority`).
Tested in ``tests/elastic/test_policy.py`` and ``tests/elastic/test_baselines.py``.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from optsched.elastic.model import ElasticInstance
from optsched.elastic.policy_base import ElasticPolicy
from optsched.elastic.shapes import TOL, Shape, find_placement, placement_use
from optsched.exceptions import InvalidOptionError
from optsched.sim import LOADING, TRAINING, WAITING


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
