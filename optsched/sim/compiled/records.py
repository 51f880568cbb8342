"""What a compiled run hands to :class:`~optsched.sim.SimResult`, made on access from its arrays
(no numba here): the jobs (:class:`JobRows`), the GPU-holding segments (:class:`Segments`) and the
event log (:class:`EventLog`), each as the Python engine's objects would be, without a Python
object per job or per event until one is asked for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from optsched.exceptions import SimulationError
from optsched.sim.compiled.layout import (
    L_ARRIVAL,
    L_COMPLETE,
    L_FINISH_LOAD,
    L_PREEMPT,
    L_SAVED,
    L_START,
    L_TIMER,
    L_TRAIN,
    LOG_JOB_BITS,
    LOG_KIND_BITS,
)


class JobRow:
    """A job of a compiled run as the result sees it (``SimResult`` reads ``id``; the Python
    engine's :class:`~optsched.sim.model.state.SimJob` has these fields too)."""

    __slots__ = ("id", "index", "arrival", "work", "gpus", "weight", "single_server")

    def __init__(self, id: Any, index: int, arrival: float, work: float, gpus: int, weight: float, single: bool):
        self.id = id
        self.index = index
        self.arrival = arrival
        self.work = work
        self.gpus = gpus
        self.weight = weight
        self.single_server = single

    @property
    def label(self) -> str:
        return f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"

    def __repr__(self) -> str:
        return f"JobRow(id={self.id!r}, arrival={self.arrival:g}, work={self.work:g}, gpus={self.gpus})"


class JobRows(Sequence):
    """The jobs of a compiled run, in input order, as a read-only sequence of :class:`JobRow`
    (made on access: a million-job run keeps arrays, not objects)."""

    def __init__(self, data: Mapping[str, Any]):
        self._d = data

    def __len__(self) -> int:
        return len(self._d["ids"])

    def __getitem__(self, i: int) -> JobRow:  # type: ignore[override]
        d = self._d
        n = len(d["ids"])
        if not -n <= i < n:
            raise IndexError(i)
        i %= n
        return JobRow(
            d["ids"][i],
            i,
            float(d["arrival"][i]),
            float(d["work"][i]),
            int(d["gpus"][i]),
            float(d["weight"][i]),
            bool(d["single"][i]),
        )

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class Segments(Sequence):
    """The GPU-holding segments of a compiled run, as the Python engine's tuples ``(job index,
    start, end, {server: GPUs}, None, None)`` (made on access), in the order they ended."""

    def __init__(self, segi: np.ndarray, segf: np.ndarray, pool: np.ndarray):
        self._i, self._f, self._pool = segi, segf, pool  # (job, offset, length), (start, end), placements

    def __len__(self) -> int:
        return len(self._i)

    def __getitem__(self, k: int) -> tuple:  # type: ignore[override]
        j, o, ln = (int(x) for x in self._i[k])
        pl = dict(zip(self._pool[o : o + ln, 0].tolist(), self._pool[o : o + ln, 1].tolist(), strict=True))
        return (j, float(self._f[k, 0]), float(self._f[k, 1]), pl, None, None)

    def __iter__(self):
        return (self[k] for k in range(len(self)))

    def job_servers(self) -> tuple[np.ndarray, np.ndarray]:
        """(job index, servers with GPUs held) of each segment, without making its tuple."""
        held = np.r_[0, np.cumsum(self._pool[:, 1] > 0)] if len(self._pool) else np.zeros(1, np.int64)
        o, ln = self._i[:, 1].astype(np.int64), self._i[:, 2].astype(np.int64)
        return self._i[:, 0].astype(np.int64), (held[o + ln] - held[o]).astype(np.int64)


class Holds:
    """The order of starts and releases of a compiled run (job index at each start, ~index at each
    release), as the Python engine's ``array("q")``, made into Python integers when iterated."""

    def __init__(self, holds: np.ndarray):
        self._a = holds

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return iter(self._a.tolist())


class NotRecorded:
    """Stands for the segments (and GPU holds) of a run with ``record_segments=False``."""

    def _fail(self):
        raise SimulationError(
            "This run did not keep its GPU-holding segments (Simulator(record_segments=False)); "
            "res.schedule() and res.segments() need them: run again with record_segments=True."
        )

    def __len__(self) -> int:
        self._fail()
        return 0

    def __iter__(self):
        self._fail()

    def __getitem__(self, k):
        self._fail()


class EventLog(Sequence):
    """The event log of a compiled run: the Python engine's ``(time, kind, job_id, detail)`` tuples
    (see :class:`~optsched.sim.SimResult`), made on access from the kernel's rows."""

    def __init__(self, lgt: np.ndarray, lgi: np.ndarray, pool: np.ndarray, ids: Sequence, rate: float, rollback: bool):
        self._t, self._i, self._pool, self._ids = lgt, lgi, pool, ids
        self._rate, self._rollback = float(rate), bool(rollback)
        self._starts: np.ndarray | None = None  # the pool offsets of the starts, in order

    def __len__(self) -> int:
        return len(self._t)

    def _row(self, k: int) -> tuple:
        t = float(self._t[k])
        v = int(self._i[k])
        kind = v & ((1 << LOG_KIND_BITS) - 1)
        j = (v >> LOG_KIND_BITS) & ((1 << LOG_JOB_BITS) - 1)
        a = v >> (LOG_KIND_BITS + LOG_JOB_BITS)
        if kind == L_TIMER:
            return (t, "timer", None, j)
        jid = self._ids[j]
        if kind == L_ARRIVAL:
            return (t, "arrival", jid, None)
        if kind == L_START:  # its placement runs to the next start's in the pool (or the pool's end)
            if self._starts is None:
                mask = (self._i & ((1 << LOG_KIND_BITS) - 1)) == L_START
                self._starts = self._i[mask] >> (LOG_KIND_BITS + LOG_JOB_BITS)
            q = int(np.searchsorted(self._starts, a))
            end = int(self._starts[q + 1]) if q + 1 < len(self._starts) else len(self._pool)
            pl = dict(zip(self._pool[a:end, 0].tolist(), self._pool[a:end, 1].tolist(), strict=True))
            return (t, "start", jid, pl)
        if kind == L_TRAIN:
            return (t, "train", jid, self._rate)
        if kind == L_PREEMPT:
            return (t, "preempt", jid, self._rollback)
        if kind == L_FINISH_LOAD:
            return (t, "preempt", jid, "finish-load")
        if kind == L_SAVED:
            return (t, "saved", jid, None)
        if kind == L_COMPLETE:
            return (t, "complete", jid, a)
        raise AssertionError(f"unknown log row kind {kind}")  # pragma: no cover

    def __getitem__(self, k):  # type: ignore[override]
        if isinstance(k, slice):
            return [self._row(i) for i in range(*k.indices(len(self)))]
        n = len(self)
        if not -n <= k < n:
            raise IndexError(k)
        return self._row(k % n)

    def __iter__(self):
        return (self._row(k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, EventLog)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventLog({len(self)} events)"
