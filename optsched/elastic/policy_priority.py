"""The preemptive priority baselines of paper 001 (Sec. 7) as policies of the simulator:
:class:`ElasticTiresias` and :class:`Elastic2DLAS` on their base :class:`_PriorityPreemptive` (each
described in :mod:`optsched.elastic.policy`, ``formulations/elastic.md#baselines``).

Each slot they order the active jobs by priority and keep, start or preempt them. With whole-number
capacities and uses (the compare workloads) a slot is decided on arrays gathered once per slot
(:meth:`_PriorityPreemptive._schedule_whole`); otherwise entry by entry
(:meth:`_PriorityPreemptive._schedule_exact`), the rule both are held to in the tests.
Tested in ``tests/elastic/test_policy_priority.py`` and ``tests/elastic/test_policy.py``.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from operator import attrgetter
from typing import Any

import numpy as np

from optsched.elastic.policy_base import ElasticPolicy
from optsched.elastic.shapes import TOL, Shape, find_placement, placement_use
from optsched.sim import DONE, FAILED, LOADING, PHASES, TRAINING, WAITING
from optsched.sim.model.state import progress_of

_INDEX, _ARRIVAL = attrgetter("index"), attrgetter("arrival")
_WAITING_CODE, _LOADING_CODE, _TRAINING_CODE, _DONE_CODE, _FAILED_CODE = (
    PHASES.index(p) for p in (WAITING, LOADING, TRAINING, DONE, FAILED)
)


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
        if not self._whole:  # the entry-by-entry rule's form of the use
            self._sparse[job.id] = _sparse(self._use[job.id])
            return
        i = job.index
        row = int(self._rowi[i])
        if row < 0:  # a row of the pool for it while it runs
            if self._free_rows:
                row = self._free_rows.pop()
            else:
                row = self._n_rows
                self._n_rows += 1
                if row >= len(self._pool):
                    self._pool = np.concatenate([self._pool, np.zeros_like(self._pool)])
            self._rowi[i] = row
        self._pool[row] = self._use[job.id].ravel()

    def _release(self, job) -> None:
        """Give back ``job``'s row of the pool (it no longer runs)."""
        row = int(self._rowi[job.index])
        if row >= 0:
            self._free_rows.append(row)
            self._rowi[job.index] = -1

    def on_completion(self, sim, job):
        self._release(job)
        return super().on_completion(sim, job)

    def schedule(self, sim):
        self.check_progress(sim)
        if self._whole:
            self._schedule_whole(sim)
            return
        act = self.active()
        if act:
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

    def _schedule_whole(self, sim):
        """The rule when every capacity and use is a whole number (``_whole``): sums of whole floats
        below 2**52 are exact in any order and ``v <= c + TOL`` is ``v <= c``, so the running jobs
        between two waiting jobs that get a placement try are decided at once by the running sums of
        their uses against the capacity left (the first job past it is the first that does not fit):
        the decisions of :meth:`_schedule_exact`, to the last bit. The jobs' phases, progress, keys
        and pins are read and computed as arrays, once per slot (:func:`progress_of`)."""
        arrived = self._arrived
        if not arrived:
            return
        codes, attained, rate = progress_of(arrived, sim.now)
        n = len(arrived)
        if self._act_idx is None or len(self._act_idx) != n:  # the jobs' indices, kept between slots
            self._act_idx = np.fromiter(map(_INDEX, arrived), np.intp, n)
        idx = self._act_idx
        ended = (codes == _DONE_CODE) | (codes == _FAILED_CODE)
        if ended.any():  # :meth:`active`'s pruning
            live = np.flatnonzero(~ended)
            self._arrived = act = [arrived[k] for k in live.tolist()]
            codes, attained, rate, idx, n = codes[live], attained[live], rate[live], idx[live], len(live)
            self._act_idx = idx
            if not n:
                return
        else:
            act = arrived
        trains = codes == _TRAINING_CODE
        busy = trains | (codes == _LOADING_CODE)
        keys, pins = self._keys_pins(sim, act, idx, attained, trains, rate, busy)
        if self._in_order:  # ``act`` is in (arrival, index) order: a stable sort by key is the order
            perm = np.argsort(keys, kind="stable")
        else:
            perm = np.lexsort((idx, np.fromiter(map(_ARRIVAL, act), float, n), keys))
        cap = self._cap0.copy()  # flat H x R, capacity not yet promised this slot
        in_rows = busy[perm]  # the running jobs not pinned, in order
        if pins is not None:
            held = pins[perm] & in_rows
            if held.any():  # kept before any priority is looked at (whole numbers: summed in any order)
                cap -= self._pool[self._rowi[idx[perm[held]]]].sum(axis=0)
            in_rows &= ~held
        rows = perm[in_rows].tolist()  # positions in ``act``
        is_wait = (codes == _WAITING_CODE)[perm]
        wk = perm[is_wait]  # the waiting jobs' positions in ``act``, in order
        wb = np.cumsum(in_rows)[is_wait].tolist()  # how many of ``rows`` come before each
        low = bool((cap < 0).any())  # a pinned job overdraws: no other running job fits
        now_free = self.free(sim)
        shape2 = now_free.shape
        out: list[int] = []  # the positions of the running jobs not kept
        if rows and not low:
            # row i fits iff csum[i] <= base (every entry), base = the capacity left plus the sums of
            # the rows before ``done`` (kept or not): exact, as every number is whole (summed by columns)
            csum = np.cumsum(self._pool[self._rowi[idx[rows]]], axis=0)
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

        # a waiting job is skipped if its shape did not fit ``cap`` (which only shrinks in this loop),
        # or it is on one server with at least as many workers as one of its (m, p) that did not fit
        widx = idx[wk]
        sid, mp, n1 = self._sid[widx], self._mp[widx], self._n1[widx]
        one_room = np.full(len(self._mp_ids), np.inf)  # by (m, p) id: the fewest workers that did not fit
        skip = np.zeros(len(wk), dtype=bool)
        wk = wk.tolist()
        start = []
        inst = self.instance
        sks = self._shape_keys
        t = -1
        while True:
            rest = ~skip[t + 1 :]
            if not rest.any():
                break
            t += 1 + int(rest.argmax())
            job = act[wk[t]]
            sk = sks[job.id]
            keep_rows(wb[t])
            if rows and not low:  # the capacity left: base minus the sums of the rows before ``done``
                cap = base - csum[done - 1] if done else base
            cap_arr = cap.reshape(shape2)
            sh = self.shape(job)
            if sk[2] == 1:  # one server: find_placement's test, on ``cap`` first (what fits the less fits it)
                need = self._need(sh)
                fits = np.all(need <= cap_arr + TOL, axis=1)
                if not fits.any():  # nor n' >= n workers of these types (n' e + z >= n e + z)
                    m = mp[t]
                    one_room[m] = min(sk[3], one_room[m])
                    skip[t + 1 :] |= (mp[t + 1 :] == m) & (n1[t + 1 :] >= one_room[m])
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
                    skip[t + 1 :] |= sid[t + 1 :] == sid[t]
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

    def _keys_pins(self, sim, act, idx, attained, trains, rate, busy) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`keys` of ``act`` and :meth:`pinned` of its running jobs (``busy``), as arrays (pins
        ``None`` if no job is ever pinned); ``idx``, ``attained``, ``trains``, ``rate``: the jobs'
        indices and :func:`progress_of`. A subclass may compute them from those arrays."""
        keys = np.asarray(self.keys(act), dtype=float)
        if not self._pins:
            return keys, None
        pins = np.zeros(len(act), dtype=bool)
        for k in np.flatnonzero(busy).tolist():
            pins[k] = self.pinned(sim, act[k])
        return keys, pins

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
        # the running jobs' flat uses, one row each (``_rowi``, by job index), gathered at once each slot
        self._pool = np.zeros((64, self.instance.H * self.instance.R))
        n = len(sim.jobs)
        self._rowi = np.full(n, -1, dtype=np.intp)
        self._n_rows = 0
        self._free_rows: list[int] = []
        self._size_of = np.zeros(n)  # :meth:`size` of each arrived job, by index
        self._work_of = np.zeros(n)  # each job's work, by index
        for j in sim.jobs:
            self._work_of[j.index] = j.work
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
        # by job index: its shape's id in ``_sk_ids``, its (m, p)'s in ``_mp_ids`` and its workers if
        # on one server (q = 1; else -inf)
        self._sk_ids: dict[tuple, int] = {}
        self._mp_ids: dict[tuple, int] = {}
        self._sid = np.zeros(n, dtype=np.intp)
        self._mp = np.zeros(n, dtype=np.intp)
        self._n1 = np.full(n, -np.inf)
        self._act_idx: np.ndarray | None = None
        self._needs: dict[tuple, np.ndarray] = {}
        self._in_order = True  # whether the jobs arrive in (arrival, index) order

    def on_arrival(self, sim, job):
        self._size_of[job.index] = self.size(job)  # kept for :meth:`keys`
        sh = self.shape(job)
        sk = self._shape_keys[job.id] = (sh.m, sh.p, sh.q, sh.n)
        self._act_idx = None  # rebuilt at the next slot
        i = job.index
        self._sid[i] = self._sk_ids.setdefault(sk, len(self._sk_ids))
        self._mp[i] = self._mp_ids.setdefault(sk[:2], len(self._mp_ids))
        if sh.q == 1:
            self._n1[i] = sh.n
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

    def _keys_pins(self, sim, act, idx, attained, trains, rate, busy) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`keys` from the arrays, the same arithmetic elementwise (remaining = work - done)."""
        if type(self).keys is not ElasticTiresias.keys or self._pins:  # a subclass's own rule
            return super()._keys_pins(sim, act, idx, attained, trains, rate, busy)
        return (self._work_of[idx] - attained) * self._size_of[idx], None


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
        self._t0 = np.full(len(sim.jobs), np.nan)  # the same, by job index (NaN: never started)
        self._a0 = np.full(len(sim.jobs), np.nan)
        self._static_deadline = self._deadline

    def start(self, sim, job, shape: Shape, workers: dict[int, int], ps: dict[int, int], use=None) -> None:
        super().start(sim, job, shape, workers, ps, use=use)
        since = self._since[job.id] = (float(sim.now), float(job.attained))
        self._t0[job.index], self._a0[job.index] = since

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

    def _keys_pins(self, sim, act, idx, attained, trains, rate, busy) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`keys` and :meth:`pinned` from the arrays, the same arithmetic elementwise."""
        cls = type(self)
        if cls.pinned is not Elastic2DLAS.pinned or cls.keys is not Elastic2DLAS.keys:  # a subclass's own rule
            return super()._keys_pins(sim, act, idx, attained, trains, rate, busy)
        keys = attained * self._size_of[idx]
        run = np.flatnonzero(busy)
        pins = np.zeros(len(act), dtype=bool)
        if not len(run):
            return keys, pins
        now = sim.now
        d = attained[run]
        at = idx[run]
        t0 = self._t0[at]  # NaN: never started by this policy: 2 * 0 < (now - now) - TOL, never pinned
        a0 = self._a0[at]
        t0 = np.where(np.isnan(t0), now, t0)
        a0 = np.where(np.isnan(a0), d, a0)
        r = rate[run]
        ok = (r > 0) & trains[run]
        trained = np.zeros(len(run))
        np.divide(d - a0, r, out=trained, where=ok)
        pins[run] = 2.0 * trained < (now - t0) - TOL
        return keys, pins
