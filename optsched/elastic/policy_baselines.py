"""Paper 001's baselines (Sec. 7) as policies of the simulator: :class:`ElasticFIFO`,
:class:`ElasticDRF`, :class:`ElasticAntMan`, :class:`ElasticTiresias` and :class:`Elastic2DLAS`
(each described in :mod:`optsched.elastic.policy`, ``formulations/elastic.md#baselines``).
Tested in ``tests/elastic/test_policy.py`` and ``tests/elastic/test_baselines.py``.
"""

from __future__ import annotations

import heapq
import math
from abc import ABCMeta, abstractmethod
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
        flat = self._dense[job.id] = self._use[job.id].ravel()
        row = self._row.get(job.id)
        if row is None:  # a row of the pool for it while it runs
            if self._free_rows:
                row = self._free_rows.pop()
            else:
                row = len(self._row)
                if row >= len(self._pool):
                    self._pool = np.concatenate([self._pool, np.zeros_like(self._pool)])
            self._row[job.id] = row
        self._pool[row] = flat

    def _release(self, job) -> None:
        """Give back ``job``'s row of the pool (it no longer runs)."""
        row = self._row.pop(job.id, None)
        if row is not None:
            self._free_rows.append(row)

    def on_completion(self, sim, job):
        self._release(job)
        return super().on_completion(sim, job)

    def schedule(self, sim):
        self.check_progress(sim)
        act = self.active()
        if not act:
            return
        if self._whole:
            self._schedule_whole(sim, act)
        else:
            self._schedule_exact(sim, act)

    def _schedule_exact(self, sim, act):
        """The rule with floating capacities: each check and subtraction in order, entry by entry."""
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
        start = []
        kept: set = set()
        busy = (LOADING, TRAINING)
        for job in order:  # pinned jobs keep their resources before any priority is looked at
            if job.phase in busy and self.pinned(sim, job):
                for i, v in self._held_sparse(job):
                    cap[i] -= v
                    if cap[i] + TOL < 0:
                        low.add(i)
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
        self._apply(sim, act, kept, start)

    def _schedule_whole(self, sim, act):
        """The rule when every capacity and use is a whole number (``_whole``): sums of whole floats
        below 2**52 are exact in any order and ``v <= c + TOL`` is ``v <= c``, so the running jobs
        between two waiting jobs that get a placement try are decided at once by the running sums of
        their uses against the capacity left (the first job past it is the first that does not fit):
        the decisions of :meth:`_schedule_exact`, to the last bit."""
        phases = [j.phase for j in act]
        busy = (LOADING, TRAINING)
        keys, pins = self.keys_and_pins(sim, act, phases)
        if self._in_order:  # ``act`` is in (arrival, index) order: a stable sort by key is the order
            perm = np.argsort(np.asarray(keys), kind="stable").tolist()
        else:
            perm = np.lexsort(([j.index for j in act], [j.arrival for j in act], keys)).tolist()
        dense = self._dense
        cap = self._cap0.copy()  # flat H x R, capacity not yet promised this slot
        rows: list[int] = []  # positions in ``act`` of the running jobs not pinned, in order
        waits: list = []  # (position of a waiting job, how many of ``rows`` come before it)
        for k in perm:
            ph = phases[k]
            if ph in busy:
                if pins is not None and pins[k]:  # kept before any priority is looked at
                    cap -= dense[act[k].id]
                else:
                    rows.append(k)
            elif ph == WAITING:
                waits.append((k, len(rows)))
        low = bool((cap < 0).any())  # a pinned job overdraws: no other running job fits
        now_free = self.free(sim)
        shape2 = now_free.shape
        out: list[int] = []  # the positions of the running jobs not kept
        if rows and not low:
            # row i fits iff csum[i] <= base (every entry), base = the capacity left plus the sums of
            # the rows before ``done`` (kept or not): exact, as every number is whole (summed by columns)
            rix = self._row
            csum = np.cumsum(np.asfortranarray(self._pool[[rix[act[k].id] for k in rows]]), axis=0)
            base = cap.copy()
        done = 0  # rows[:done] are decided

        def keep_rows(upto: int) -> None:
            nonlocal base, done
            if low:
                out.extend(rows[done:upto])
                done = max(done, upto)
                return
            while done < upto:
                over = (base < csum[done:upto]).any(axis=1)
                k = int(over.argmax()) if over.any() else upto - done
                done += k
                if done < upto:  # the job at ``done`` does not fit: not kept, its use stays free
                    out.append(rows[done])
                    base = base + (csum[done] - csum[done - 1] if done else csum[0])
                    done += 1

        no_room: set = set()  # shapes that did not fit ``cap``, which only shrinks in this loop
        one_room: dict = {}  # (m, p) -> the fewest workers on one server that did not fit ``cap``
        start = []
        inst = self.instance
        sks = self._shape_keys
        for k, before in waits:
            job = act[k]
            sk = sks[job.id]
            if sk in no_room or (sk[2] == 1 and sk[3] >= one_room.get(sk[:2], math.inf)):
                continue
            keep_rows(before)
            if rows and not low:  # the capacity left: base minus the sums of the rows before ``done``
                cap = base - csum[done - 1] if done else base
            cap_arr = cap.reshape(shape2)
            sh = self.shape(job)
            if sk[2] == 1:  # one server: find_placement's test, on ``cap`` first (what fits the less fits it)
                need = self._need(sh)
                fits = np.all(need <= cap_arr + TOL, axis=1)
                if not fits.any():  # nor n' >= n workers of these types (n' e + z >= n e + z)
                    one_room[sk[:2]] = min(sk[3], one_room.get(sk[:2], math.inf))
                    continue
                now = fits & np.all(need <= now_free + TOL, axis=1)  # min(cap, free) + TOL, entry by entry
                h = int(np.flatnonzero(now if now.any() else fits)[0])
                got = ({h: sh.n}, {h: 1} if sh.p is not None else {})
                use = np.zeros(shape2)
                use[h] = need  # placement_use's 0 + n e + 1 z; within cap (whole numbers): no entry goes below 0
            else:
                got = find_placement(inst, sh, np.minimum(cap_arr, now_free))
                if got is None:
                    got = find_placement(inst, sh, cap_arr)
                if got is None:
                    no_room.add(sk)
                    continue
                use = placement_use(inst, sh, *got)
                low = low or bool((cap < use.ravel()).any())
            flat = use.ravel()
            cap = cap - flat
            if rows and not low:
                base = base - flat
            now_free -= use
            start.append((job, sh, got, use))
        keep_rows(len(rows))
        for k in sorted(out):  # in arrival order, as :meth:`_apply`
            sim.preempt(act[k])
            self._release(act[k])
        for job, sh, got, use in start:
            self.start(sim, job, sh, *got, use=use)

    def _need(self, sh: Shape) -> np.ndarray:
        """n e + z of a one-server shape, as :func:`find_placement` computes it."""
        key = (sh.m, sh.p, sh.n)
        need = self._needs.get(key)
        if need is None:
            e = np.asarray(self.instance.e[sh.m], dtype=float)
            z = np.asarray(self.instance.z[sh.p], dtype=float) if sh.p is not None else None
            need = self._needs[key] = sh.n * e + (z if z is not None else 0.0)
        return need

    def keys_and_pins(self, sim, act: list, phases: list) -> tuple[list[float], list[bool] | None]:
        """:meth:`keys` of ``act`` and :meth:`pinned` of its running jobs (``None`` if no job is ever
        pinned; ``phases``: theirs)."""
        keys = self.keys(act)
        if not self._pins:
            return keys, None
        busy = (LOADING, TRAINING)
        return keys, [ph in busy and self.pinned(sim, j) for j, ph in zip(act, phases, strict=True)]

    def _apply(self, sim, act, kept: set, start: list) -> None:
        """Preempt the running jobs not kept (in arrival order), then start ``start`` in order."""
        for job in act:
            if job.phase in (LOADING, TRAINING) and id(job) not in kept:
                sim.preempt(job)
                self._release(job)
        for job, sh, got, use in start:
            self.start(sim, job, sh, *got, use=use)

    def on_start(self, sim):
        super().on_start(sim)
        self._sparse: dict[Any, list[tuple[int, float]]] = {}
        self._dense: dict[Any, np.ndarray] = {}  # flat use of each started job (whole-number runs)
        # the running jobs' flat uses, one row each (``_row``), gathered at once each slot
        self._pool = np.zeros((64, self.instance.H * self.instance.R))
        self._row: dict[Any, int] = {}
        self._free_rows: list[int] = []
        inst = self.instance
        C = np.asarray(inst.C, dtype=float)
        self._cap0 = C.ravel().copy()
        vals = np.concatenate(
            [C.ravel(), np.asarray(inst.e, dtype=float).ravel(), np.asarray(inst.z, dtype=float).ravel()]
        )
        # whole numbers, and every sum of uses (each at most a server's capacity) exact
        self._whole = bool(
            np.all(vals == np.floor(vals)) and np.abs(vals).max(initial=0.0) * (len(sim.jobs) + 2) < 2.0**52
        )
        self._pins = type(self).pinned is not _PriorityPreemptive.pinned
        self._shape_keys: dict[Any, tuple] = {}
        self._needs: dict[tuple, np.ndarray] = {}
        self._in_order = True  # whether the jobs arrive in (arrival, index) order

    def on_arrival(self, sim, job):
        self.size(job)  # kept for :meth:`keys`
        sh = self.shape(job)
        self._shape_keys[job.id] = (sh.m, sh.p, sh.q, sh.n)
        last = self._arrived[-1] if self._arrived else None
        if last is not None and (last.arrival, last.index) >= (job.arrival, job.index):
            self._in_order = False
        return super().on_arrival(sim, job)


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

    def keys(self, jobs: list) -> list[float]:
        size = self._size  # every arrived job's, from :meth:`on_arrival`
        return [j.remaining() * size[j.id] for j in jobs]


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
        size = self._size  # every arrived job's, from :meth:`on_arrival`
        return [j.done_work() * size[j.id] for j in jobs]  # attained, without the property's call

    def keys_and_pins(self, sim, act: list, phases: list) -> tuple[np.ndarray, list[bool] | None]:
        """:meth:`keys` and :meth:`pinned` in one pass over the jobs, the same arithmetic elementwise."""
        cls = type(self)
        if cls.pinned is not Elastic2DLAS.pinned or cls.keys is not Elastic2DLAS.keys:  # a subclass's own rule
            return super().keys_and_pins(sim, act, phases)
        size, since = self._size, self._since
        dw = np.array([j.done_work() for j in act])
        keys = dw * np.array([size[j.id] for j in act])
        now = sim.now
        busy = (LOADING, TRAINING)
        run = [k for k, ph in enumerate(phases) if ph in busy]
        if not run:
            return keys, [False] * len(act)
        nofrom = (now, math.nan)  # never started by this policy: 2 * 0 < (now - now) - TOL, never pinned
        d = dw[run]
        t0a0 = np.array([since.get(act[k].id, nofrom) for k in run], dtype=float)  # (len(run), 2)
        t0, a0 = t0a0[:, 0], t0a0[:, 1]
        a0 = np.where(np.isnan(a0), d, a0)
        r = np.array([act[k].rate for k in run], dtype=float)
        trains = (r > 0) & np.array([phases[k] == TRAINING for k in run], dtype=bool)
        trained = np.zeros(len(run))
        np.divide(d - a0, r, out=trained, where=trains)
        flags = np.zeros(len(act), dtype=bool)
        flags[run] = 2.0 * trained < (now - t0) - TOL
        pins = flags.tolist()
        return keys, pins
