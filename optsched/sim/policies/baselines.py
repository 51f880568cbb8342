"""The baseline non-preemptive policies, FIFO and SJF, and :class:`WaitQueue`, the waiting jobs by
key that every baseline (and the preemptive round) picks from.

Each takes a placement rule (``consolidate``, ``first_fit``, ``least_loaded``, ``random``,
``whole_node``) and ``backfill`` (default true: when the best waiting job does not fit, later jobs
that fit may start; false: strict order, the head of the queue blocks everyone behind it).

Waiting jobs are kept in one heap per (GPU demand, single-server) class, so picking the best job
that fits costs O(number of classes), not O(queue length), even with backfilling.

Tested in ``tests/sim/test_policies.py`` and ``tests/sim/test_differential.py``.
"""

from __future__ import annotations

import heapq
from abc import ABCMeta, abstractmethod
from typing import Any

from optsched.exceptions import InvalidOptionError
from optsched.sim.model.state import WAITING, SimJob
from optsched.sim.policy import Policy


class WaitQueue:
    """Waiting jobs by priority key, bucketed by (GPUs, single_server).

    Examples
    --------
    >>> from optsched.sim import SimJob
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
    """Non-preemptive: start waiting jobs in key order while they fit (subclasses give ``key``):
    R8 and R12 of ``formulations/lazer.md`` (:mod:`optsched.sim.rules`) without claims."""

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
        """Start waiting jobs in key order while they fit (R8); one that does not is passed over,
        and with ``backfill=False`` the round ends (R12)."""
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
