"""Rigid training job: arrival, GPU demand, work. Paper packages extend it with their own fields."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.limits import MAX_AMOUNT, MAX_ARRIVAL, MAX_COUNT, MAX_SECONDS, MAX_WEIGHT, MIN_SECONDS, hint
from optsched.core.validation import check_bool, check_int, check_mapping, check_number
from optsched.exceptions import InvalidInstanceError

JobId = int | str
"""A job's id: an integer or a string, unique within an instance."""

#: The fields of a job's dict.
_FIELDS = frozenset(
    ("id", "work", "gpus", "arrival", "weight", "single_server", "resources", "attrs", "load_time", "save_time")
)


@dataclass(frozen=True)
class Job:
    """A distributed training job with a fixed GPU demand.

    Parameters
    ----------
    id : int or str
        Unique within its instance (a NumPy integer is taken as the ``int``; ``True`` is refused).
    work : float
        Processing time in seconds when the job runs on its ``gpus`` GPUs at full rate, in
        [1e-6, 1e9] (``optsched.core.limits``).
    gpus : int
        Number of GPUs it needs at once (>= 1).
    arrival : float
        Release time in seconds, in [0, 4e9]; the job cannot start earlier.
    weight : float
        Weight in weighted objectives, in (0, 1e6], default 1.
    single_server : bool
        If true the job must be placed on one server (consolidated); otherwise its GPUs may
        span servers.
    resources : mapping, optional
        Demands of other resources, per job (e.g. ``{"cpu": 8}``).
    attrs : mapping, optional
        Free-form attributes carried through (user, group, model name, trace fields).
    load_time, save_time : float, optional
        Seconds this job loads before each (re)start and pauses-and-saves after each preemption
        in the simulator (``optsched.sim``; ``formulations/lazer.md`` R1-R2). ``None`` (default):
        the simulator's ``load_time=`` / ``save_time=`` options decide. Exact models ignore them.

    Examples
    --------
    >>> from optsched.core import Job
    >>> job = Job(0, work=3600, gpus=4, arrival=60)
    >>> job.gpus, job.work
    (4, 3600.0)
    >>> Job(0, work=100, gpus=2, arrival=5, load_time=30, save_time=8).to_dict()
    {'id': 0, 'arrival': 5.0, 'gpus': 2, 'work': 100.0, 'load_time': 30.0, 'save_time': 8.0}
    """

    id: JobId
    work: float
    gpus: int = 1
    arrival: float = 0.0
    weight: float = 1.0
    single_server: bool = False
    resources: Mapping[str, float] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)
    load_time: float | None = field(default=None, repr=False)
    save_time: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.id, numbers.Integral) and not isinstance(self.id, (bool, int)):
            object.__setattr__(self, "id", int(self.id))  # a NumPy integer (a table's id column) is an int
        if isinstance(self.id, bool) or not isinstance(self.id, (int, str)):
            raise InvalidInstanceError(f"The 'id' field of a job must be an integer or a string; got {self.id!r}.")
        owner = f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"
        object.__setattr__(
            self, "work", check_number(self.work, "work", owner, lo=MIN_SECONDS, hi=MAX_SECONDS, hint=hint("seconds"))
        )
        object.__setattr__(self, "gpus", check_int(self.gpus, "gpus", owner, lo=1, hi=MAX_COUNT, hint=hint("GPUs")))
        object.__setattr__(
            self, "arrival", check_number(self.arrival, "arrival", owner, lo=0.0, hi=MAX_ARRIVAL, hint=hint("seconds"))
        )
        object.__setattr__(
            self, "weight", check_number(self.weight, "weight", owner, lo=0.0, lo_open=True, hi=MAX_WEIGHT)
        )
        object.__setattr__(self, "single_server", check_bool(self.single_server, "single_server", owner))
        res = check_mapping(self.resources, "resources", owner)
        for k, v in res.items():
            res[k] = check_number(v, f"resources.{k}", owner, lo=0.0, hi=MAX_AMOUNT)
        object.__setattr__(self, "resources", res)
        object.__setattr__(self, "attrs", check_mapping(self.attrs, "attrs", owner))
        for name in ("load_time", "save_time"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, check_number(v, name, owner, lo=0.0, hint=" (seconds), or None"))

    @property
    def label(self) -> str:
        return f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "arrival": self.arrival, "gpus": self.gpus, "work": self.work}
        if self.weight != 1.0:
            d["weight"] = self.weight
        if self.single_server:
            d["single_server"] = True
        if self.resources:
            d["resources"] = dict(self.resources)
        if self.attrs:
            d["attrs"] = dict(self.attrs)
        for name in ("load_time", "save_time"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], index: int | None = None) -> Job:
        owner = f"job at index {index}" if index is not None else "job"
        if not isinstance(d, Mapping):
            raise InvalidInstanceError(f"The {owner} must be an object; got {d!r}.")
        missing = [k for k in ("id", "work") if k not in d]
        if missing:
            raise InvalidInstanceError(
                f"The {owner} has no {missing[0]!r} field; every job needs 'id' and 'work' "
                f"(and usually 'gpus' and 'arrival')."
            )
        if not _FIELDS.issuperset(d):
            unknown = set(d) - _FIELDS
            raise InvalidInstanceError(
                f"The {owner} (id {d.get('id')!r}) has unknown field(s) {sorted(map(str, unknown))}; put "
                f"free-form data under 'attrs'."
            )
        return cls(**{k: d[k] for k in d})  # a Mapping that is not a dict too


#: The fields a job of :func:`jobs_from_dicts`' vectorised path may have (others: one job at a time).
_PLAIN_FIELDS = frozenset(("id", "work", "gpus", "arrival", "weight", "single_server"))


def _plain_numbers(col: list[Any], lo: float, hi: float, *, lo_open: bool = False) -> tuple[np.ndarray, list[float]]:
    """Per item of ``col``: True when it is an ``int`` or ``float`` (not a bool) in the range, as
    :func:`~optsched.core.validation.check_number` accepts it on its first line; and the items
    as floats (0.0 where False)."""
    ok = np.fromiter((type(x) is float or type(x) is int for x in col), bool, len(col))
    vals = np.zeros(len(col))
    try:
        vals[ok] = [x for x, k in zip(col, ok.tolist(), strict=True) if k]
    except OverflowError:  # an integer beyond float: one job at a time says what is wrong
        return np.zeros(len(col), dtype=bool), vals.tolist()
    with np.errstate(invalid="ignore"):
        inside = (vals > lo if lo_open else vals >= lo) & (vals <= hi)
    return ok & inside, vals.tolist()


def jobs_from_dicts(rows: list[Any]) -> tuple[Job, ...]:
    """``tuple(Job.from_dict(d, i) for i, d in enumerate(rows))``, with the checks of the common
    jobs (plain dicts of ``id``, ``work``, ``gpus``, ``arrival``, ``weight``, ``single_server``
    with in-range values) done column by column with NumPy: 2 us a job instead of 25.

    The jobs that the columns do not clear (another field, another type, a value out of range)
    go through :meth:`Job.from_dict` one at a time, in file order, so a bad job raises the same
    :class:`~optsched.exceptions.InvalidInstanceError`, naming the same job and field, as the
    one-at-a-time reading.

    >>> [j.gpus for j in jobs_from_dicts([{"id": 0, "work": 2, "gpus": 2}, {"id": "b", "work": 1.5}])]
    [2, 1]
    """
    n = len(rows)
    plain = np.fromiter(
        (type(d) is dict and "id" in d and "work" in d and d.keys() <= _PLAIN_FIELDS for d in rows), bool, n
    )
    pl = plain.tolist()

    def col(name: str, default: Any) -> list[Any]:
        return [d.get(name, default) if k else default for d, k in zip(rows, pl, strict=True)]

    ids, works, gpus = col("id", 0), col("work", 1.0), col("gpus", 1)
    arrivals, weights, single = col("arrival", 0.0), col("weight", 1.0), col("single_server", False)
    floats: dict[str, list[float]] = {}
    plain &= np.fromiter((type(x) is int or type(x) is str for x in ids), bool, n)
    for name, (ok, vals) in (
        ("work", _plain_numbers(works, MIN_SECONDS, MAX_SECONDS)),
        ("arrival", _plain_numbers(arrivals, 0.0, MAX_ARRIVAL)),
        ("weight", _plain_numbers(weights, 0.0, MAX_WEIGHT, lo_open=True)),
    ):
        plain &= ok
        floats[name] = vals
    plain &= np.fromiter((type(x) is int and 1 <= x <= MAX_COUNT for x in gpus), bool, n)
    plain &= np.fromiter((x is True or x is False for x in single), bool, n)
    new, setattr_ = Job.__new__, object.__setattr__
    out = []
    for i, ok, jid, w, g, a, wt, s in zip(
        range(n), plain.tolist(), ids, floats["work"], gpus, floats["arrival"], floats["weight"], single, strict=True
    ):
        if not ok:
            out.append(Job.from_dict(rows[i], i))
            continue
        job = new(Job)
        d = {"id": jid, "work": w, "gpus": g, "arrival": a, "weight": wt, "single_server": s}
        d.update(resources={}, attrs={}, load_time=None, save_time=None)
        setattr_(job, "__dict__", d)
        out.append(job)
    return tuple(out)
