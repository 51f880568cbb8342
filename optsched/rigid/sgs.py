"""Serial schedule generation (list scheduling) for rigid jobs, and placement decoding.

Jobs are taken in a given order; each starts at the earliest time >= its release at which it
fits for its whole run, given the jobs already placed (RCPSP's *serial SGS*; Kolisch 1996).
Over all orders it generates every active schedule, so it also serves as the exhaustive
method of :mod:`optsched.rigid.brute`.

The GPUs in use are kept as a step function over time (:class:`_Profile`: breakpoints and one
usage level per segment, per server and for the whole cluster), so finding a job's start scans
the segments after its release in vectorised chunks instead of re-adding every placed job at
every candidate time.
"""

from __future__ import annotations

import heapq
import time
from bisect import bisect_left, bisect_right, insort
from collections.abc import Mapping, Sequence

import numpy as np

from optsched.core.instance import Instance
from optsched.core.placement import place
from optsched.core.schedule import Schedule, Segment
from optsched.exceptions import InfeasibleError, InvalidOptionError, TimeLimitReached

#: ``serial_sgs`` reads the clock every this many jobs when it has a deadline.
DEADLINE_EVERY = 32


def decode_placements(instance: Instance, starts: Mapping, rule: str = "consolidate") -> Schedule:
    """Per-server placements for start times that respect the *total* GPU capacity.

    Sweeps jobs by start time, freeing GPUs at completions, and gives each starting job GPUs by
    ``rule``. Always succeeds when the total capacity holds at every time, because a job keeps
    whatever free GPUs it gets (GPUs are interchangeable and jobs may span servers).

    Examples
    --------
    >>> from optsched.core import Cluster, Instance, Job
    >>> from optsched.rigid import decode_placements
    >>> inst = Instance(Cluster.homogeneous(2, 2), [Job(0, work=2, gpus=3), Job(1, work=2, gpus=1)])
    >>> decode_placements(inst, {0: 0, 1: 0}).segments(0)[0].placement
    {0: 2, 1: 1}
    """
    jobs = {j.id: j for j in instance.jobs}
    fast = rule == "consolidate"  # the same placement in plain Python (place() costs 0.1 ms a job)
    free = [int(x) for x in instance.cluster.gpus] if fast else instance.cluster.gpus.copy()
    running: list[tuple[float, int, dict[int, int]]] = []  # a heap of (end, sequence, placement)
    sched = Schedule()
    for seq, jid in enumerate(sorted(starts, key=lambda k: (starts[k], str(k)))):
        t = float(starts[jid])
        while running and running[0][0] <= t + 1e-9:
            _, _, pl = heapq.heappop(running)
            for m, g in pl.items():
                free[m] += g
        job = jobs[jid]
        if fast:
            pl = consolidate(free, job.gpus, job.single_server)  # type: ignore[arg-type]
        else:
            pl = place(free, job.gpus, rule=rule, single_server=job.single_server)
        if pl is None:
            raise InfeasibleError(
                f"Start times overload the cluster at t={t:g} ({job.label} does not fit); "
                f"they violate the capacity constraint."
            )
        for m, g in pl.items():
            free[m] -= g
        heapq.heappush(running, (t + job.work, seq, pl))
        if fast:  # consolidate's placement: ints >= 1 by server, end >= start
            sched.add_segment(jid, Segment.checked(t, t + job.work, pl))
        else:
            sched.add(jid, t, t + job.work, pl)
    return sched


def consolidate(free: list[int], gpus: int, single_server: bool) -> dict[int, int] | None:
    """``place(free, gpus, rule="consolidate", single_server=...)`` on a list of ints, in plain
    Python: the fullest server that still fits (lowest index among equals); else, unless
    ``single_server``, the servers with the most free GPUs first (lowest index among equals).

    >>> consolidate([3, 4, 1], 4, False), consolidate([3, 2, 1], 4, False), consolidate([3, 2, 1], 4, True)
    ({1: 4}, {0: 3, 1: 1}, None)
    """
    best = None
    for m, f in enumerate(free):
        if f >= gpus and (best is None or f < free[best]):
            best = m
    if best is not None:
        return {best: gpus}
    if single_server or sum(free) < gpus:
        return None
    out: dict[int, int] = {}
    need = gpus
    for m in sorted(range(len(free)), key=lambda k: -free[k]):  # stable: lower index first among equals
        take = min(free[m], need)
        if take > 0:
            out[m] = take
            need -= take
            if need == 0:
                break
    return dict(sorted(out.items()))


class _Profile:
    """GPUs in use over time, per column (a server, or the whole cluster), as a step function.

    Segment ``i`` is ``[t[i], t[i+1])`` with usage ``u[i, c]`` in column ``c``; ``t[0] = -inf``
    and ``t[n] = +inf``, so the last segment (after every placed job) is empty."""

    def __init__(self, caps: np.ndarray) -> None:
        self.caps = np.asarray(caps, dtype=np.int64)
        size = 64
        self.t = np.full(size + 1, np.inf)
        self.t[0] = -np.inf
        self.u = np.zeros((size, len(self.caps)), dtype=np.int64)
        self.n = 1

    def _split(self, x: float) -> int:
        """The index of the segment that starts at ``x`` (a breakpoint is inserted if needed)."""
        n = self.n
        i = int(np.searchsorted(self.t[:n], x, side="right")) - 1
        if self.t[i] == x:
            return i
        if n + 1 >= len(self.u):
            self.t = np.concatenate([self.t, np.full(len(self.u), np.inf)])
            self.u = np.concatenate([self.u, np.zeros_like(self.u)])
        self.t[i + 2 : n + 2] = self.t[i + 1 : n + 1]
        self.u[i + 2 : n + 1] = self.u[i + 1 : n]
        self.t[i + 1] = x
        self.u[i + 1] = self.u[i]
        self.n = n + 1
        return i + 1

    def add(self, start: float, end: float, amounts: Mapping[int, int]) -> None:
        """``amounts[c]`` GPUs of column ``c`` in use during ``[start, end)``."""
        i = self._split(start)
        k = self._split(end)
        for c, g in amounts.items():
            self.u[i:k, c] += g

    def free(self, t: float, p: float) -> np.ndarray:
        """Free GPUs per column during the whole of ``[t, t + p)``: capacity minus the peak usage."""
        n = self.n
        i = int(np.searchsorted(self.t[:n], t, side="right")) - 1
        j = int(np.searchsorted(self.t[:n], t + p, side="left"))
        return self.caps - self.u[i:j].max(axis=0)

    def spread(self, t: float, p: float, g: int) -> tuple[float | None, np.ndarray | None]:
        """From ``t`` on, the first candidate at which the servers (every column but the last,
        the whole cluster) have ``g`` GPUs free in all during ``[t, t + p)``, each counting its
        fewest free GPUs in that window (a job spanning servers keeps its split), and those free
        GPUs per server; ``(None, None)`` if none. Candidates in chunks (each window's peak per
        server from a table of maxima over the chunk), past stretches where the whole cluster is
        too full with the vectorised scan of :meth:`earliest`."""
        M = len(self.caps) - 1
        caps, total = self.caps[:M], self.caps[M]
        n = self.n
        times = self.t[:n]
        i = int(np.searchsorted(times, t, side="right")) - 1
        size = 16
        while True:
            k = min(size, n - i)
            cand = self.t[i : i + k].copy()
            cand[0] = t
            ends = np.searchsorted(times, cand + p, side="left")  # candidate q's window: rows [i + q, ends[q])
            peak = _window_max(self.u[i : int(ends.max())], np.arange(k), ends - i)
            free = caps - peak[:, :M]
            ok = (peak[:, M] + g <= total) & (free.sum(axis=1) >= g)
            pos = np.flatnonzero(ok)
            if len(pos):
                q = int(pos[0])
                return float(cand[q]), free[q]
            if i + k >= n:
                return None, None
            nxt = self.earliest(float(self.t[i + k]), p, g, [M])  # skips where the cluster is too full
            if nxt is None:
                return None, None
            t = nxt
            i = int(np.searchsorted(times, t, side="right")) - 1
            size = min(2 * size, 1024)

    def earliest(self, r: float, p: float, g: int, cols: Sequence[int]) -> float | None:
        """The earliest ``t >= r`` at which some column of ``cols`` has ``g`` GPUs free during the
        whole of ``[t, t + p)`` (``None`` if no column has ``g`` GPUs at all).

        Candidates are ``r`` and the breakpoints after it, scanned in chunks: a candidate is
        feasible in a column when the column's next segment with too little room starts at or
        after ``t + p``; undetermined when the chunk ends before ``t + p`` (the chunk grows)."""
        cols = [c for c in cols if self.caps[c] >= g]
        if not cols:
            return None
        cap = self.caps[cols]
        n = self.n
        lo = int(np.searchsorted(self.t[:n], r, side="right")) - 1
        first = r  # the first candidate: r itself, then the segments' starts
        size = 32
        while True:
            hi = min(n, lo + size)
            ts = self.t[lo : hi + 1]  # starts of the chunk's segments, and where the chunk ends
            bad = self.u[lo:hi][:, cols] + g > cap  # (segments, columns)
            k = hi - lo
            idx = np.where(bad, np.arange(k)[:, None], k)
            nxt = np.minimum.accumulate(idx[::-1], axis=0)[::-1]  # next too-full segment, per column
            nbt = ts[nxt]  # its start (ts[k]: the chunk's end when none is left in the chunk)
            cand = ts[:k].copy()
            cand[0] = first
            end = (cand + p)[:, None]
            status = np.where(nbt >= end, 2, np.where(nxt < k, 0, 1))  # 2 fits, 0 does not, 1 unknown
            best = status.max(axis=1)
            pos = np.flatnonzero(best)
            if len(pos) == 0:  # no candidate of the chunk fits: go on after it
                lo, first, size = hi, float(self.t[hi]), 2 * size
                continue
            q = int(pos[0])
            if best[q] == 2:
                return float(cand[q])
            # the first open candidate needs more segments than the chunk has: grow from it
            lo, first, size = lo + q, float(cand[q]), 2 * size


def serial_sgs(
    instance: Instance,
    order: Sequence,
    *,
    server_of: Mapping | None = None,
    rule: str = "consolidate",
    rng: np.random.Generator | None = None,
    deadline: float | None = None,
    on_deadline: str = "raise",
    info: dict | None = None,
) -> Schedule:
    """Serial SGS over ``order`` (job ids).

    If every job may span servers, feasibility is checked on the total GPUs and placements are
    decoded afterwards (:func:`decode_placements`). Otherwise each server keeps its own usage
    timeline; a single-server job takes ``server_of[j]`` if given, else the server chosen by
    ``rule`` among those where it fits earliest. ``deadline`` (a ``time.monotonic()`` value),
    checked every :data:`DEADLINE_EVERY` jobs: once it is past, ``on_deadline="raise"`` raises
    :class:`~optsched.exceptions.TimeLimitReached`; ``"append"`` places the jobs not placed yet
    one after another after every placed job (each alone on the cluster: a feasible, if poor,
    end of the schedule, in O(1) per job) and sets ``info["appended"]`` to their number.

    Notes
    -----
    Each job scans the usage profile from its release to its start, in vectorised chunks:
    O(n S) for S segments (S <= 2n) in the worst case, far less when jobs start soon after
    their release.

    Examples
    --------
    >>> from optsched.core import Cluster, Instance, Job
    >>> from optsched.rigid import serial_sgs
    >>> inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=2, gpus=2), Job(1, work=1, gpus=1)])
    >>> sched = serial_sgs(inst, [1, 0])
    >>> sched.start(1), sched.start(0)
    (0.0, 1.0)
    """
    jobs = {j.id: j for j in instance.jobs}
    G = instance.cluster.gpus
    if len(order) != len(jobs) or set(order) != jobs.keys():
        raise InfeasibleError("The order must list every job of the instance exactly once.")

    if on_deadline not in ("raise", "append"):
        raise InvalidOptionError(f"on_deadline must be 'raise' or 'append'; got {on_deadline!r}.")

    def past(k: int) -> bool:
        """True when the deadline passed before job ``k`` (with "append"), else raises past it."""
        if deadline is None or k % DEADLINE_EVERY or time.monotonic() < deadline:
            return False
        if on_deadline == "raise":
            raise TimeLimitReached(f"the time limit was reached after list-scheduling {k} of {len(jobs)} jobs")
        if info is not None:
            info["appended"] = len(order) - k
        return True

    all_span = not any(j.single_server for j in instance.jobs)
    if all_span and server_of is None:
        pooled = _Profile(np.array([int(G.sum())]))
        starts = {}
        tail: list[tuple] = []  # (job id, start) of the jobs appended at the deadline, in order
        for k, jid in enumerate(order):
            if past(k):
                end = max((starts[j] + jobs[j].work for j in starts), default=0.0)
                for rest in order[k:]:  # one after another, after every placed job
                    tail.append((rest, max(jobs[rest].arrival, end)))
                    end = tail[-1][1] + jobs[rest].work
                break
            job = jobs[jid]
            t = pooled.earliest(job.arrival, job.work, job.gpus, [0])
            if t is not None:
                starts[jid] = t
                pooled.add(t, t + job.work, {0: job.gpus})
        return _decode_with_tail(instance, jobs, starts, tail, rule)
    M = len(G)
    prof = _Profile(np.append(G, G.sum()))  # columns 0..M-1: the servers; M: the whole cluster
    ends: list[float] = []  # the distinct end times so far (the original candidates, for rng below)
    sched = Schedule()
    for k, jid in enumerate(order):
        if past(k):
            _append(
                sched,
                [jobs[j] for j in order[k:]],
                G,
                float(prof.t[prof.n - 1]) if prof.n > 1 else 0.0,
                server_of,
                rule,
                rng,
            )
            break
        job = jobs[jid]
        fixed = server_of is not None and job.single_server
        r, p, g = job.arrival, job.work, job.gpus
        pl = None
        t: float | None = r
        while t is not None:
            t = prof.earliest(t, p, g, [M])  # necessary: the whole cluster has g GPUs free (one column: fast)
            free = None
            if t is not None and fixed:
                t = prof.earliest(t, p, g, [int(server_of[jid])])  # type: ignore[index]
            elif t is not None and job.single_server:
                t = prof.earliest(t, p, g, range(M))
            elif t is not None:
                t, free = prof.spread(t, p, g)
            if t is None:
                break
            if free is None:
                free = prof.free(t, p)[:M]
            if fixed:
                m = int(server_of[jid])  # type: ignore[index]
                pl = {m: g} if free[m] >= g else None
            else:
                if rule == "random" and rng is not None:
                    # the rule draws one permutation per candidate time tried before this one
                    for _ in range(int(r < t) + bisect_left(ends, t) - bisect_right(ends, r)):
                        rng.permutation(M)
                pl = place(free, g, rule=rule, single_server=job.single_server, rng=rng)
            if pl is not None:
                break
            t = _next_breakpoint(prof, t)
        if pl is None or t is None:
            continue
        prof.add(t, t + p, {**pl, M: g})
        e = t + p
        i = bisect_left(ends, e)
        if i == len(ends) or ends[i] != e:
            insort(ends, e)
        sched.add(jid, t, t + p, pl)
    return sched


def _decode_with_tail(instance: Instance, jobs: Mapping, starts: Mapping, tail: list[tuple], rule: str) -> Schedule:
    """``decode_placements(instance, {**starts, **dict(tail)}, rule)``, the ``tail`` (jobs one after
    another after every job of ``starts``) without the sweep: each of its jobs finds the whole
    cluster free, so consolidating gives it the placement it gets on an empty cluster (one
    :func:`consolidate` per GPU count). Only when that is so to the last bit: the rule is
    ``consolidate``, every tail job starts after the previous one ends (no work lost in the
    rounding of a large start) and after every job of ``starts`` started; else the sweep."""
    if not tail:
        return decode_placements(instance, starts, rule)
    every = {**starts, **dict(tail)}
    if rule != "consolidate" or (starts and max(starts.values()) >= tail[0][1]):
        return decode_placements(instance, every, rule)
    prev_end = -np.inf
    for jid, t in tail:
        end = t + jobs[jid].work
        if not (t >= prev_end and end > t):
            return decode_placements(instance, every, rule)
        prev_end = end
    sched = decode_placements(instance, starts, rule)
    empty = [int(x) for x in instance.cluster.gpus]
    alone: dict[tuple[int, bool], dict[int, int] | None] = {}
    add, checked = sched.add_segment, Segment.checked  # hundreds of thousands of jobs: no lookups per job
    for jid, t in tail:
        job = jobs[jid]
        key = (job.gpus, job.single_server)
        pl = alone.get(key, empty)  # ``empty``: not looked up yet (a placement is a dict)
        if pl is empty:
            pl = alone[key] = consolidate(list(empty), *key)
        if pl is None:  # a job larger than the cluster: the sweep says which
            return decode_placements(instance, every, rule)
        t = float(t)
        add(jid, checked(t, t + job.work, dict(pl)))
    return sched


def _append(
    sched: Schedule,
    rest: list,
    G: np.ndarray,
    end: float,
    server_of: Mapping | None,
    rule: str,
    rng: np.random.Generator | None,
) -> None:
    """Add ``rest`` to ``sched`` one after another from ``end`` (after every placed job), each alone
    on the cluster; a single-server job given a server too small for it is left out, as the
    serial SGS leaves it out."""
    for job in rest:
        t = max(job.arrival, end)
        if server_of is not None and job.single_server:
            m = int(server_of[job.id])
            pl = {m: job.gpus} if G[m] >= job.gpus else None
        else:
            pl = place(G.copy(), job.gpus, rule=rule, single_server=job.single_server, rng=rng)
        if pl is None:
            continue
        sched.add(job.id, t, t + job.work, pl)
        end = t + job.work


def _window_max(block: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per column, the maximum of ``block`` over rows ``[starts[q], ends[q])`` for every ``q``
    (each range non-empty): a sparse table of maxima over spans of 1, 2, 4, ... rows, each range
    covered by two spans of the largest power of two inside it."""
    width = ends - starts
    levels = [block]
    span = 1
    while 2 * span <= int(width.max()):
        prev = levels[-1]
        levels.append(np.maximum(prev[:-span], prev[span:]))
        span *= 2
    lev = np.floor(np.log2(width)).astype(np.int64)  # exact at powers of two, far from the next one elsewhere
    out = np.empty((len(starts), block.shape[1]), dtype=block.dtype)
    for level in np.unique(lev).tolist():
        sel = lev == level
        table = levels[level]
        out[sel] = np.maximum(table[starts[sel]], table[ends[sel] - (1 << level)])
    return out


def _next_breakpoint(prof: _Profile, t: float) -> float | None:
    """The first breakpoint of ``prof`` after ``t`` (``None`` after the last one)."""
    i = int(np.searchsorted(prof.t[: prof.n], t, side="right"))
    return None if i >= prof.n else float(prof.t[i])
