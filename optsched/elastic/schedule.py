"""Schedules of the elastic model: an :class:`Assignment` per job (start slot, duration, worker and
PS types, q, workers and PSs per server), an :class:`ElasticSchedule` mapping job ids to them (JSON
in and out), and its view as run segments for a Gantt chart. Values are checked by the verifier
(:mod:`optsched.elastic.checks`), not here, so a bad schedule can be loaded and reported. Tested
through ``tests/elastic/test_model.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optsched.core.io import JsonMixin, read_json
from optsched.core.schedule import Schedule
from optsched.elastic.constants import KIND
from optsched.exceptions import InvalidScheduleError


# -- schedule --------------------------------------------------------------------------------------
def _count_map(value: Any, field_: str, owner: str) -> dict[int, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidScheduleError(f"The '{field_}' field of {owner} must map server index -> count; got {value!r}.")
    out: dict[int, Any] = {}
    for k, v in value.items():
        try:
            h = int(k)
        except (TypeError, ValueError):
            raise InvalidScheduleError(
                f"The '{field_}' field of {owner} has the key {k!r}, not a server index."
            ) from None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InvalidScheduleError(f"The '{field_}' field of {owner} maps server {h} to {v!r}, not a count.")
        out[h] = v
    return out


@dataclass(frozen=True)
class Assignment:
    """The decisions of one job: start slot (x_jt), duration d_j, worker type m, PS type p (None
    for RAR), q_j, and the workers y_jhm / PSs s_jhp per server index. Values are checked by the
    verifier ((2k)-(2o)), not here, so a bad schedule can be loaded and reported.

    >>> a = Assignment(start=0, d=10, m=1, p=0, q=1, workers={0: 1}, ps={0: 1})
    >>> a.completion, a.n_workers
    (10, 1)
    """

    start: float
    d: float
    m: int
    p: int | None
    q: int
    workers: Mapping[int, float]
    ps: Mapping[int, float] = field(default_factory=dict)

    @property
    def completion(self) -> float:
        return self.start + self.d

    @property
    def n_workers(self) -> float:
        return sum(self.workers.values())

    @property
    def n_ps(self) -> float:
        return sum(self.ps.values())

    @property
    def servers(self) -> set[int]:
        """Servers holding a worker or a PS."""
        return {h for h, y in self.workers.items() if y > 0} | {h for h, s in self.ps.items() if s > 0}

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "start": self.start,
            "d": self.d,
            "worker_type": self.m,
            "q": self.q,
            "workers": {str(h): y for h, y in sorted(self.workers.items())},
        }
        if self.p is not None:
            d["ps_type"] = self.p
            d["ps"] = {str(h): s for h, s in sorted(self.ps.items())}
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], owner: str = "an assignment") -> Assignment:
        if not isinstance(d, Mapping):
            raise InvalidScheduleError(f"{owner} must be an object; got {d!r}.")
        for key in ("start", "d", "worker_type", "q", "workers"):
            if key not in d:
                raise InvalidScheduleError(f"{owner} has no '{key}' field.")
        for key in ("start", "d", "worker_type", "q"):
            v = d[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InvalidScheduleError(f"The '{key}' field of {owner} must be a number; got {v!r}.")
        p = d.get("ps_type")
        if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float))):
            raise InvalidScheduleError(f"The 'ps_type' field of {owner} must be a number; got {p!r}.")
        return cls(
            start=d["start"],
            d=d["d"],
            m=d["worker_type"],
            p=p,
            q=d["q"],
            workers=_count_map(d["workers"], "workers", owner),
            ps=_count_map(d.get("ps"), "ps", owner),
        )


class ElasticSchedule(JsonMixin):
    """Job id -> :class:`Assignment` (jobs absent from a max-weight schedule are not scheduled).

    >>> s = ElasticSchedule({0: Assignment(0, 10, 1, 0, 1, {0: 1}, {0: 1})})
    >>> 0 in s, s[0].completion, s.job_ids
    (True, 10, [0])
    """

    def __init__(self, assignments: Mapping[Any, Assignment] | None = None) -> None:
        self._a: dict[Any, Assignment] = {}
        for jid, a in (assignments or {}).items():
            if not isinstance(a, Assignment):
                raise InvalidScheduleError(f"The assignment of job {jid!r} must be an Assignment; got {a!r}.")
            self._a[jid] = a

    def __contains__(self, jid: Any) -> bool:
        return jid in self._a

    def __getitem__(self, jid: Any) -> Assignment:
        return self._a[jid]

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._a)

    def items(self):
        return self._a.items()

    @property
    def job_ids(self) -> list:
        return list(self._a)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ElasticSchedule) and self.to_dict() == other.to_dict()

    def gantt_schedule(self, instance: Any = None) -> Any:
        """The schedule as run segments (an :class:`optsched.core.Schedule`) for a Gantt chart
        (:func:`optsched.plot.plot_schedule`): each job holds its workers and PSs on their servers
        from its start to start + d, in seconds when ``instance`` is given (slots otherwise).

        >>> s = ElasticSchedule({0: Assignment(2, 3, 0, None, 1, {0: 2, 1: 1})})
        >>> [(x.start, x.end, dict(x.placement)) for x in s.gantt_schedule().segments(0)]
        [(2.0, 5.0, {0: 2, 1: 1})]
        """
        slot = float(getattr(instance, "slot", 1.0)) if instance is not None else 1.0
        out = Schedule()
        for jid, a in self._a.items():
            held = {h: int(round(a.workers.get(h, 0) + a.ps.get(h, 0))) for h in sorted(a.servers)}
            held = {h: n for h, n in held.items() if n > 0}
            if held and a.d > 0:
                out.add(jid, a.start * slot, (a.start + a.d) * slot, held)
        return out

    def __repr__(self) -> str:
        return f"ElasticSchedule({len(self._a)} jobs)"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "jobs": [{"id": jid, **a.to_dict()} for jid, a in self._a.items()]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ElasticSchedule:
        if not isinstance(d, Mapping) or not isinstance(d.get("jobs"), list):
            raise InvalidScheduleError(
                "An elastic schedule must be an object with a 'jobs' list of "
                "{id, start, d, worker_type, ps_type, q, workers, ps} objects."
            )
        out = {}
        for k, e in enumerate(d["jobs"]):
            if not isinstance(e, Mapping) or "id" not in e:
                raise InvalidScheduleError(f"Entry {k} of the schedule's 'jobs' must be an object with an 'id'.")
            if e["id"] in out:
                raise InvalidScheduleError(f"Job {e['id']!r} appears twice in the schedule ((2a): one start per job).")
            out[e["id"]] = Assignment.from_dict(e, f"the schedule entry of job {e['id']!r}")
        return cls(out)

    @classmethod
    def load(cls, path: str | Path) -> ElasticSchedule:
        return cls.from_dict(read_json(path, what="schedule"))
