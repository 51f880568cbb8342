"""Schedules: per job, a list of run segments, each with a placement (GPUs per server).

A non-preemptive job has one segment; a preempted or migrated job has several. The schedule
holds no rates: whether the segments deliver a job's work is the verifier's business, using
the rate model of the instance kind (rate 1 for ``rigid`` instances).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from pathlib import Path
from types import MappingProxyType
from typing import Any

from optsched.core.io import JsonMixin, json_one_item_per_line, read_json
from optsched.core.job import JobId
from optsched.core.validation import check_int, check_number
from optsched.exceptions import InvalidScheduleError


@dataclass(frozen=True)
class Segment:
    """Job runs in ``[start, end)`` seconds on ``placement`` = {server index: GPU count}.

    A server's entry may also be a resource vector, ``{"gpus": 0, "cpu": 4, "net": 1.25e9}``:
    the GPUs go to ``placement`` (0 is allowed there, e.g. a CPU-only parameter server) and the
    other amounts to ``usage`` = {server: {resource: amount}}, the job's explicit use of that
    server. Servers without an explicit vector use the job's declared ``resources`` shared in
    proportion to GPUs (the verifier's rule for plain placements).

    >>> Segment(0, 5, {0: 2, 1: {"gpus": 0, "cpu": 4}}).to_dict()["placement"]
    {'0': 2, '1': {'gpus': 0, 'cpu': 4.0}}
    """

    start: float
    end: float
    placement: Mapping[int, Any] = field(default_factory=dict)
    gpu_ids: Mapping[int, tuple[int, ...]] | None = None  # optional: which GPUs of each server
    usage: Mapping[int, Mapping[str, float]] | None = None  # optional: other resources per server

    def __post_init__(self) -> None:
        e = InvalidScheduleError
        s = check_number(self.start, "start", "a segment", exc=e)
        t = check_number(self.end, "end", "a segment", exc=e)
        if t < s:
            raise InvalidScheduleError(f"A segment ends before it starts (start={s:g}, end={t:g}); swap them.")
        object.__setattr__(self, "start", s)
        object.__setattr__(self, "end", t)
        if not isinstance(self.placement, Mapping):
            raise InvalidScheduleError(f"The 'placement' of a segment must map server -> GPUs; got {self.placement!r}.")
        pl: dict[int, int] = {}
        usage: dict[int, dict[str, float]] = {int(k): dict(v) for k, v in (self.usage or {}).items()}
        for k, v in self.placement.items():
            k2 = int(k) if isinstance(k, str) and k.lstrip("-").isdigit() else k
            k2 = check_int(k2, "placement server index", "a segment", lo=0, exc=e)
            if isinstance(v, Mapping):
                vec = dict(v)
                g = check_int(vec.pop("gpus", 0), f"placement[{k2}].gpus", "a segment", lo=0, exc=e)
                usage.setdefault(k2, {}).update(vec)
                if g == 0 and not vec:
                    raise InvalidScheduleError(
                        f"placement[{k2}] of a segment uses nothing (no GPU, no resource); "
                        f"drop the server or give its use."
                    )
                pl[k2] = g
            else:
                pl[k2] = check_int(v, f"placement[{k2}]", "a segment", lo=1, exc=e)
        for k2, vec in usage.items():
            if k2 not in pl:
                pl[k2] = 0
            for r, a in vec.items():
                if not isinstance(r, str) or r == "gpus":
                    raise InvalidScheduleError(
                        f"placement[{k2}] of a segment: resource names are strings other than 'gpus'; got {r!r}."
                    )
                vec[r] = check_number(a, f"placement[{k2}].{r}", "a segment", lo=0.0, exc=e)
        object.__setattr__(self, "placement", dict(sorted(pl.items())))
        object.__setattr__(self, "usage", {k: usage[k] for k in sorted(usage)} if usage else None)
        if self.gpu_ids is not None:
            ids = {}
            for k, v in self.gpu_ids.items():
                k2 = int(k)
                ids[k2] = tuple(int(x) for x in v)
                if len(ids[k2]) != pl.get(k2, -1) or len(set(ids[k2])) != len(ids[k2]):
                    raise InvalidScheduleError(
                        f"The 'gpu_ids' of server {k2} in a segment must list {pl.get(k2, 0)} distinct GPUs "
                        f"(its placement count); got {list(v)}."
                    )
                if any(x < 0 for x in ids[k2]):
                    raise InvalidScheduleError(
                        f"The 'gpu_ids' of server {k2} in a segment must be >= 0; got {list(v)}."
                    )
            object.__setattr__(self, "gpu_ids", ids)

    @classmethod
    def checked(cls, start: float, end: float, placement: dict[int, int]) -> Segment:
        """A segment from values its maker already knows to be right (``start <= end`` floats,
        ``placement`` a dict of server index -> GPUs >= 1, ints, in server order), without the
        checks of the constructor (10 us a segment): for schedulers that place many jobs. The
        verifier checks the schedule all the same.

        >>> Segment.checked(0.0, 2.0, {1: 2}) == Segment(0, 2, {1: 2})
        True
        """
        seg = object.__new__(cls)
        d = {"start": start, "end": end, "placement": placement, "gpu_ids": None, "usage": None}
        object.__setattr__(seg, "__dict__", d)
        return seg

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def gpus(self) -> int:
        return int(sum(self.placement.values()))

    def uses(self, server: int, resource: str) -> float | None:
        """Explicit use of ``resource`` on ``server`` (None when the segment gives no vector there)."""
        if self.usage is None or server not in self.usage:
            return None
        return float(self.usage[server].get(resource, 0.0))

    def to_dict(self) -> dict[str, Any]:
        if self.usage is None and self.gpu_ids is None:  # the common segment, in one expression
            return {"start": self.start, "end": self.end, "placement": {str(k): g for k, g in self.placement.items()}}
        pl: dict[str, Any] = {}
        for k, g in self.placement.items():
            if self.usage is not None and k in self.usage:
                pl[str(k)] = {"gpus": g, **self.usage[k]}
            else:
                pl[str(k)] = g
        d: dict[str, Any] = {"start": self.start, "end": self.end, "placement": pl}
        if self.gpu_ids is not None:
            d["gpu_ids"] = {str(k): list(v) for k, v in self.gpu_ids.items()}
        return d


class Schedule(JsonMixin):
    """Run segments per job.

    Examples
    --------
    >>> s = Schedule()
    >>> s.add(0, 0.0, 3.0, {0: 2})
    >>> s.add(1, 3.0, 4.0, {0: 1})
    >>> s.completion(1), s.start(0)
    (4.0, 0.0)
    """

    def __init__(self, segments: Mapping[JobId, Iterable[Segment | Mapping[str, Any]]] | None = None):
        self._seg: dict[JobId, list[Segment]] = {}
        for jid, segs in (segments or {}).items():
            for s in segs:
                self._append(jid, s if isinstance(s, Segment) else Segment(**s))

    def add_segment(self, job_id: JobId, seg: Segment) -> None:
        """Add one :class:`Segment` of ``job_id`` (kept in time order)."""
        segs = self._seg.get(job_id)
        if segs is None:
            self._seg[job_id] = [seg]
            return
        segs.append(seg)
        segs.sort(key=lambda x: (x.start, x.end))

    _append = add_segment

    def add(
        self,
        job_id: JobId,
        start: float,
        end: float,
        placement: Mapping[int, int],
        gpu_ids: Mapping[int, Sequence[int]] | None = None,
    ) -> None:
        """Add one run segment of ``job_id``."""
        ids = None if gpu_ids is None else {k: tuple(v) for k, v in gpu_ids.items()}
        self._append(job_id, Segment(start, end, placement, ids))

    @classmethod
    def from_starts(
        cls,
        durations: Mapping[JobId, float],
        starts: Mapping[JobId, float],
        placements: Mapping[JobId, Mapping[int, int]],
    ) -> Schedule:
        """Non-preemptive schedule: job j runs ``[starts[j], starts[j] + durations[j])``."""
        s = cls()
        for j, t in starts.items():
            s.add(j, float(t), float(t) + float(durations[j]), placements[j])
        return s

    # -- queries ----------------------------------------------------------------------------
    @property
    def job_ids(self) -> list[JobId]:
        return list(self._seg)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._seg

    def __len__(self) -> int:
        return len(self._seg)

    def segments(self, job_id: JobId) -> list[Segment]:
        return list(self._seg.get(job_id, []))

    def items(self):
        return ((j, list(s)) for j, s in self._seg.items())

    def segment_lists(self) -> Mapping[JobId, Sequence[Segment]]:
        """A read-only view {job id: its segments in time order}, without a copy per job (what a
        check of millions of jobs reads); do not change the lists.

        >>> s = Schedule()
        >>> s.add(3, 0.0, 1.0, {0: 1})
        >>> [seg.end for seg in s.segment_lists()[3]]
        [1.0]
        """
        return MappingProxyType(self._seg)

    def start(self, job_id: JobId) -> float:
        return self._seg[job_id][0].start

    def completion(self, job_id: JobId) -> float:
        segs = self._seg[job_id]
        return segs[0].end if len(segs) == 1 else max(s.end for s in segs)

    def completions(self) -> dict[JobId, float]:
        return {j: self.completion(j) for j in self._seg}

    def n_preemptions(self, job_id: JobId) -> int:
        return max(0, len(self._seg.get(job_id, [])) - 1)

    @property
    def makespan(self) -> float:
        return max((self.completion(j) for j in self._seg), default=0.0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        n = sum(len(v) for v in self._seg.values())
        return f"Schedule({len(self._seg)} jobs, {n} segments, makespan={self.makespan:g})"

    # -- io -----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"jobs": [{"id": j, "segments": [s.to_dict() for s in segs]} for j, segs in self._seg.items()]}

    def json_text(self) -> str:
        """``json_one_item_per_line(self.to_dict(), "jobs")``, the same text to the byte: each job
        with one plain segment (an ``int`` or ``str`` id, finite ``float`` times, a placement of
        ``int`` server -> ``int`` GPUs, no GPU ids, no resource vector) is written by one format
        string instead of three dicts and an encoder call (a quarter of the time for 500,000
        jobs); any other job by :mod:`json` as before.

        >>> s = Schedule()
        >>> s.add("a", 0.0, 2.5, {1: 2})
        >>> print(s.json_text(), end="")
        {
          "jobs": [
            {"id": "a", "segments": [{"start": 0.0, "end": 2.5, "placement": {"1": 2}}]}
          ]
        }
        """
        if not self._seg:
            return json_one_item_per_line({"jobs": []}, "jobs")
        encode = json.JSONEncoder(default=str).encode  # the jobs the format string does not write
        rfloat, isfinite = float.__repr__, math.isfinite
        lines = []
        for jid, segs in self._seg.items():
            seg = segs[0]
            if len(segs) == 1 and seg.usage is None and seg.gpu_ids is None:
                t0, t1, pl = seg.start, seg.end, seg.placement
                kid = type(jid)
                if (
                    (kid is int or kid is str)
                    and type(t0) is float
                    and type(t1) is float
                    and isfinite(t0)
                    and isfinite(t1)
                    and all(type(k) is int and type(g) is int for k, g in pl.items())
                ):
                    who = encode_basestring_ascii(jid) if isinstance(jid, str) else int.__repr__(jid)
                    where = ", ".join([f'"{k}": {g}' for k, g in pl.items()])
                    lines.append(
                        f'    {{"id": {who}, "segments": [{{"start": {rfloat(t0)}, "end": {rfloat(t1)}, '
                        f'"placement": {{{where}}}}}]}}'
                    )
                    continue
            lines.append("    " + encode({"id": jid, "segments": [s.to_dict() for s in segs]}))
        return '{\n  "jobs": [\n' + ",\n".join(lines) + "\n  ]\n}\n"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Schedule:
        if not isinstance(d, Mapping) or not isinstance(d.get("jobs"), list):
            raise InvalidScheduleError(
                "A schedule must be an object with a 'jobs' list: "
                '{"jobs": [{"id": 0, "segments": [{"start": 0, "end": 3, "placement": {"0": 2}}]}]}.'
            )
        s = cls()
        for i, item in enumerate(d["jobs"]):
            if not isinstance(item, Mapping) or "id" not in item or not isinstance(item.get("segments"), list):
                raise InvalidScheduleError(
                    f"Schedule entry jobs[{i}] must have an 'id' and a 'segments' list; got {item!r}."
                )
            for seg in item["segments"]:
                if not isinstance(seg, Mapping) or not {"start", "end"} <= set(seg):
                    raise InvalidScheduleError(
                        f"A segment of job {item['id']!r} must have 'start', 'end' and 'placement'; got {seg!r}."
                    )
                s.add(item["id"], seg["start"], seg["end"], seg.get("placement", {}), seg.get("gpu_ids"))
        return s

    @classmethod
    def load(cls, path: str | Path) -> Schedule:
        try:
            return cls.from_dict(read_json(path, what="schedule"))
        except InvalidScheduleError:
            raise
        except Exception as e:  # read_json raises InvalidInstanceError; re-word for schedules
            raise InvalidScheduleError(str(e)) from None

    def to_dataframe(self):
        """One row per segment: job, start, end, duration, servers, gpus."""
        import pandas as pd

        rows = [
            {
                "job": j,
                "segment": k,
                "start": s.start,
                "end": s.end,
                "duration": s.duration,
                "servers": ",".join(map(str, s.placement)),
                "gpus": s.gpus,
            }
            for j, segs in self._seg.items()
            for k, s in enumerate(segs)
        ]
        return pd.DataFrame(rows, columns=["job", "segment", "start", "end", "duration", "servers", "gpus"])
