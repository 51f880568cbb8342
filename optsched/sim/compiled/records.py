"""What a compiled run hands to :class:`~optsched.sim.SimResult`, made on access from its arrays
(no numba here): the jobs (:class:`JobRows`), the GPU-holding segments (:class:`Segments`) and the
event log (:class:`EventLog`), each as the Python engine's objects would be, without a Python
object per job or per event until one is asked for: keeping them costs a run no more than the
kernel's writing its rows.

Tested in ``tests/sim/test_records.py`` (and against the Python engine in ``tests/sim/test_kernel.py``)."""

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


def parts(a: Any) -> list[np.ndarray]:
    """``a`` as a list of arrays: one array, or the buffers the kernel filled one after another."""
    return [a] if isinstance(a, np.ndarray) else list(a)


def joined(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
    """The ``parts`` as one array, joined once: the list then holds it alone (``empty`` if none)."""
    if len(parts) != 1:
        parts[:] = [np.concatenate(parts) if parts else empty]
    return parts[0]


class Segments(Sequence):
    """The GPU-holding segments of a compiled run, as the Python engine's tuples ``(job index,
    start, end, {server: GPUs}, None, None)`` (made on access), in the order they ended. ``segi`` /
    ``segf`` are one array each or lists of arrays (the buffers the kernel filled, joined when first
    read)."""

    def __init__(self, segi: Any, segf: Any, pool: np.ndarray):
        self._iparts, self._fparts, self._pool = parts(segi), parts(segf), pool  # (job, offset, length), (start, end)
        self._n = sum(len(a) for a in self._iparts)

    @property
    def _i(self) -> np.ndarray:
        return joined(self._iparts, np.empty((0, 3), dtype=np.int32))

    @property
    def _f(self) -> np.ndarray:
        return joined(self._fparts, np.empty((0, 2)))

    def __len__(self) -> int:
        return self._n

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
    release), as the Python engine's ``array("q")``, made into Python integers when iterated
    (``holds``: one array or the buffers the kernel filled, in order)."""

    def __init__(self, holds: Any):
        self._parts = parts(holds)

    def __len__(self) -> int:
        return sum(len(a) for a in self._parts)

    def __iter__(self):
        return iter(joined(self._parts, np.empty(0, dtype=np.int32)).tolist())


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
    (see :class:`~optsched.sim.SimResult`), made on access from the kernel's rows.

    ``lgt`` / ``lgi`` are the rows' times and packed integers (kind, job index or timer id, detail:
    :mod:`optsched.sim.compiled.layout`), each one array or a list of arrays (the buffers the kernel
    filled one after another, joined when the rows are first read: a run that keeps its log copies
    none of it). It pickles as it is and compares equal to the list of its tuples.
    """

    #: rows decoded at once when iterating
    BLOCK = 65_536

    def __init__(self, lgt: Any, lgi: Any, pool: np.ndarray, ids: Sequence, rate: float, rollback: bool):
        self._tparts, self._iparts = parts(lgt), parts(lgi)
        self._n = sum(len(a) for a in self._tparts)
        self._pool, self._ids = pool, ids
        self._rate, self._rollback = float(rate), bool(rollback)
        self._starts: np.ndarray | None = None  # the pool offsets of the starts, in order

    @property
    def times(self) -> np.ndarray:
        """The rows' times (float64), in log order."""
        return joined(self._tparts, np.empty(0))

    @property
    def codes(self) -> np.ndarray:
        """The rows' packed integers (int64): ``kind | job index or timer id << 4 | detail << 32``."""
        return joined(self._iparts, np.empty(0, dtype=np.int64))

    def __len__(self) -> int:
        return self._n

    def _ends(self, a: np.ndarray) -> np.ndarray:
        """The end in the pool of the placement starting at each offset in ``a`` (a start's runs to
        the next start's, or the pool's end)."""
        if self._starts is None:
            c = self.codes
            self._starts = c[(c & ((1 << LOG_KIND_BITS) - 1)) == L_START] >> (LOG_KIND_BITS + LOG_JOB_BITS)
        q = np.searchsorted(self._starts, a) + 1
        return np.where(q < len(self._starts), self._starts[np.minimum(q, len(self._starts) - 1)], len(self._pool))

    def _rows(self, lo: int, hi: int) -> list[tuple]:
        """The tuples of rows ``lo`` to ``hi`` (decoded with NumPy, built in one pass)."""
        v = self.codes[lo:hi]
        times = self.times[lo:hi].tolist()
        kinds = (v & ((1 << LOG_KIND_BITS) - 1)).tolist()
        js = ((v >> LOG_KIND_BITS) & ((1 << LOG_JOB_BITS) - 1)).tolist()
        a = v >> (LOG_KIND_BITS + LOG_JOB_BITS)
        details = a.tolist()
        starts = np.nonzero((v & ((1 << LOG_KIND_BITS) - 1)) == L_START)[0]
        ends = dict(zip(starts.tolist(), self._ends(a[starts]).tolist(), strict=True)) if len(starts) else {}
        srv, gp = self._pool[:, 0], self._pool[:, 1]
        ids, rate, rollback = self._ids, self._rate, self._rollback
        out = []
        for r, (t, kind, j, d) in enumerate(zip(times, kinds, js, details, strict=True)):
            if kind == L_TIMER:
                out.append((t, "timer", None, j))
            elif kind == L_ARRIVAL:
                out.append((t, "arrival", ids[j], None))
            elif kind == L_START:
                e = ends[r]
                out.append((t, "start", ids[j], dict(zip(srv[d:e].tolist(), gp[d:e].tolist(), strict=True))))
            elif kind == L_TRAIN:
                out.append((t, "train", ids[j], rate))
            elif kind == L_PREEMPT:
                out.append((t, "preempt", ids[j], rollback))
            elif kind == L_FINISH_LOAD:
                out.append((t, "preempt", ids[j], "finish-load"))
            elif kind == L_SAVED:
                out.append((t, "saved", ids[j], None))
            elif kind == L_COMPLETE:
                out.append((t, "complete", ids[j], d))
            else:  # pragma: no cover
                raise AssertionError(f"unknown log row kind {kind}")
        return out

    def __getitem__(self, k):  # type: ignore[override]
        if isinstance(k, slice):
            lo, hi, step = k.indices(len(self))
            if step == 1:
                return self._rows(lo, max(lo, hi))
            return [self._rows(i, i + 1)[0] for i in range(lo, hi, step)]
        n = len(self)
        if not -n <= k < n:
            raise IndexError(k)
        k %= n
        return self._rows(k, k + 1)[0]

    def __iter__(self):
        for lo in range(0, len(self), self.BLOCK):
            yield from self._rows(lo, min(lo + self.BLOCK, len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, EventLog)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventLog({len(self)} events)"
