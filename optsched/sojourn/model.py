"""The system model of paper 003 (Yao, Paolieri, Golubchik): multi-stage jobs that may be
terminated at checkpoints (kind ``"sojourn"``).

A job ``i`` is a discrete size distribution: checkpoint sizes ``0 < x_{i,1} < ... < x_{i,M_i}``
with probabilities ``p_{i,1..M_i}`` (summing to 1); reaching ``x_{i,M_i}`` is success, stopping
at ``x_{i,j}``, ``j < M_i``, is early termination after checkpoint ``j``. See
``formulations/sojourn.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.io import JsonMixin, read_json, require_fields
from optsched.core.limits import MAX_ARRIVAL, MAX_SECONDS, MAX_SERVERS, hint
from optsched.core.registry import check_kind
from optsched.core.validation import check_int, check_mapping, check_number
from optsched.exceptions import InvalidInstanceError, InvalidScheduleError

KIND = "sojourn"
"""The instance kind of this package (``load_instance`` reads it from a file's ``kind``)."""
OBJECTIVE = "successful_sojourn_time"
"""The name of objective (1): the expected mean sojourn time of the successful jobs."""
#: Probabilities of a job must sum to 1 within this tolerance.
PROB_TOL = 1e-9


def _number_list(value: Any, field_: str, owner: str) -> list[float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidInstanceError(f"The '{field_}' field of {owner} must be a list of numbers; got {value!r}.")
    out = list(value)
    if not out:
        raise InvalidInstanceError(f"The '{field_}' field of {owner} must have at least one entry; got [].")
    return out


@dataclass(frozen=True)
class StagedJob:
    """A job with checkpoints: sizes ``x_{i,1} < ... < x_{i,M}`` and probabilities ``p_{i,j}``.

    Parameters
    ----------
    id : str or int
    sizes : sequence of float
        Cumulative service (s) at each checkpoint, strictly increasing and positive; the last one
        is the full (successful) size ``x_{i,M_i}``.
    probs : sequence of float
        ``p_{i,j}``: probability that the job stops at checkpoint ``j``; each in (0, 1], summing to
        1 within 1e-9. ``probs[-1]`` is the success probability.
    arrival : float
        ``a_i`` (s), >= 0.

    Examples
    --------
    >>> j = StagedJob("a", sizes=[1, 10], probs=[0.25, 0.75])
    >>> j.success_prob, j.expected_size, round(j.rank, 4)
    (0.75, 7.75, 10.3333)
    """

    id: Any
    sizes: tuple[float, ...]
    probs: tuple[float, ...]
    arrival: float = 0.0

    def __post_init__(self) -> None:
        owner = f"job {self.id!r}"
        if isinstance(self.id, bool) or not isinstance(self.id, (str, int)):
            raise InvalidInstanceError(f"The 'id' field of a job must be a string or an integer; got {self.id!r}.")
        sizes = _number_list(self.sizes, "sizes", owner)
        probs = _number_list(self.probs, "probs", owner)
        sizes = [
            check_number(v, f"sizes[{k}]", owner, lo=0.0, lo_open=True, hi=MAX_SECONDS, hint=hint("seconds of service"))
            for k, v in enumerate(sizes)
        ]
        probs = [
            check_number(
                v,
                f"probs[{k}]",
                owner,
                lo=0.0,
                lo_open=True,
                hi=1.0,
                hint=" (probability of stopping at this checkpoint)",
            )
            for k, v in enumerate(probs)
        ]
        if len(sizes) != len(probs):
            raise InvalidInstanceError(
                f"The 'sizes' and 'probs' fields of {owner} must have the same length (one probability per "
                f"checkpoint); got {len(sizes)} sizes and {len(probs)} probabilities."
            )
        for k in range(1, len(sizes)):
            if not sizes[k] > sizes[k - 1]:
                raise InvalidInstanceError(
                    f"The 'sizes' field of {owner} must be strictly increasing (cumulative service at each "
                    f"checkpoint); got sizes[{k - 1}]={sizes[k - 1]:g} >= sizes[{k}]={sizes[k]:g}. "
                    f"Give cumulative sizes, not stage lengths."
                )
        total = math.fsum(probs)
        if abs(total - 1.0) > PROB_TOL:
            raise InvalidInstanceError(
                f"The 'probs' field of {owner} must sum to 1 within {PROB_TOL:g}; got {total!r} "
                f"(from {probs}). Normalise the probabilities."
            )
        object.__setattr__(self, "sizes", tuple(sizes))
        object.__setattr__(self, "probs", tuple(probs))
        object.__setattr__(
            self, "arrival", check_number(self.arrival, "arrival", owner, lo=0.0, hi=MAX_ARRIVAL, hint=hint("seconds"))
        )

    @property
    def n_stages(self) -> int:
        """``M_i``."""
        return len(self.sizes)

    @property
    def size(self) -> float:
        """``x_{i,M_i}``: the size of a successful run."""
        return self.sizes[-1]

    @property
    def success_prob(self) -> float:
        """``s_i = p_{i,M_i}``."""
        return self.probs[-1]

    @property
    def expected_size(self) -> float:
        """``ERPT(i) = sum_j x_{i,j} p_{i,j}`` (the SERPT key)."""
        return math.fsum(x * p for x, p in zip(self.sizes, self.probs, strict=True))

    @property
    def failure_work(self) -> float:
        """``b_i = sum_{j<M_i} x_{i,j} p_{i,j}``: expected size on the early-termination event."""
        return math.fsum(x * p for x, p in zip(self.sizes[:-1], self.probs[:-1], strict=True))

    @property
    def rank(self) -> float:
        """``R(i) = ERPT(i) / p_{i,M_i}``, Eq. (23)."""
        return self.expected_size / self.success_prob

    @property
    def stage_lengths(self) -> tuple[float, ...]:
        """``x_{i,j} - x_{i,j-1}`` (``x_{i,0} = 0``)."""
        return tuple(b - a for a, b in zip((0.0, *self.sizes[:-1]), self.sizes, strict=True))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "sizes": list(self.sizes), "probs": list(self.probs)}
        if self.arrival:
            d["arrival"] = self.arrival
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], index: int = 0) -> StagedJob:
        if not isinstance(d, Mapping):
            raise InvalidInstanceError(f"Job {index} must be an object with 'sizes' and 'probs'; got {d!r}.")
        for k in ("sizes", "probs"):
            if k not in d:
                raise InvalidInstanceError(f"Job {d.get('id', index)!r} (jobs[{index}]) has no '{k}' field; add it.")
        return cls(id=d.get("id", index), sizes=d["sizes"], probs=d["probs"], arrival=d.get("arrival", 0.0))


@dataclass(frozen=True)
class SojournInstance(JsonMixin):
    """Jobs with checkpoints on ``servers`` identical servers (kind ``"sojourn"``).

    Parameters
    ----------
    jobs : sequence of StagedJob or dict
        A dict has ``sizes`` and ``probs``, optionally ``id`` and ``arrival``.
    name : str
    servers : int
        ``W``; the exact models of Sec. III need ``W = 1`` and all arrivals 0.
    known_optima : mapping
        ``{"successful_sojourn_time": {"value": ..., "how": ...}}``.
    metadata : mapping

    Examples
    --------
    >>> inst = SojournInstance([StagedJob(1, [1, 10], [0.25, 0.75]), StagedJob(2, [3, 6], [0.6, 0.4])])
    >>> inst.n_jobs, inst.static
    (2, True)
    """

    jobs: tuple[StagedJob, ...]
    name: str = "sojourn"
    servers: int = 1
    known_optima: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    kind = KIND
    #: the unit of every time of the data, the schedules and the objective (docs/conventions.md#time)
    time_unit = "s"

    def __post_init__(self) -> None:
        if isinstance(self.jobs, (str, bytes, Mapping)) or not isinstance(self.jobs, Iterable):
            raise InvalidInstanceError(f"The 'jobs' field of the instance must be a list of jobs; got {self.jobs!r}.")
        jobs = tuple(j if isinstance(j, StagedJob) else StagedJob.from_dict(j, i) for i, j in enumerate(self.jobs))
        if not jobs:
            raise InvalidInstanceError("The 'jobs' field of the instance must have at least one job; got [].")
        seen = set()
        for j in jobs:
            if j.id in seen:
                raise InvalidInstanceError(f"Job id {j.id!r} appears twice; job ids must be unique.")
            seen.add(j.id)
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(
            self,
            "servers",
            check_int(
                self.servers,
                "servers",
                "the instance",
                lo=1,
                hi=MAX_SERVERS,
                hint=hint("number of identical servers W"),
            ),
        )
        object.__setattr__(self, "known_optima", check_mapping(self.known_optima, "known_optima", "the instance"))
        object.__setattr__(self, "metadata", check_mapping(self.metadata, "metadata", "the instance"))

    # ----------------------------------------------------------------- views
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def job_ids(self) -> list[Any]:
        return [j.id for j in self.jobs]

    @property
    def static(self) -> bool:
        """True for the setting of Sec. III: one server and every arrival at time 0."""
        return self.servers == 1 and all(j.arrival == 0 for j in self.jobs)

    @property
    def success_probs(self) -> np.ndarray:
        return np.array([j.success_prob for j in self.jobs])

    def index_of(self, job_id: Any) -> int:
        for k, j in enumerate(self.jobs):
            if j.id == job_id:
                return k
        raise InvalidScheduleError(f"Job {job_id!r} is not in instance {self.name!r}; its jobs are {self.job_ids}.")

    def require_static(self, what: str) -> None:
        if not self.static:
            raise InvalidInstanceError(
                f"{what} needs the setting of Sec. III (one server, every arrival 0); instance {self.name!r} has "
                f"servers={self.servers} and arrivals {sorted({j.arrival for j in self.jobs})}. Use the online "
                f"policies of optsched.sojourn.online for arrivals or several servers."
            )

    # ----------------------------------------------------------------- (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"schema_version": 1, "kind": KIND, "name": self.name}
        if self.servers != 1:
            d["servers"] = self.servers
        d["jobs"] = [j.to_dict() for j in self.jobs]
        if self.known_optima:
            d["known_optima"] = dict(self.known_optima)
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SojournInstance:
        require_fields(
            d, ("jobs",), hint="a list of jobs with 'sizes' and 'probs'; see optsched/core/schemas/sojourn.schema.json"
        )
        return cls(
            jobs=d["jobs"],
            name=d.get("name", "sojourn"),
            servers=d.get("servers", 1),
            known_optima=d.get("known_optima", {}),
            metadata=d.get("metadata", {}),
        )

    @classmethod
    def from_arrays(
        cls,
        sizes: Sequence[Sequence[float]],
        probs: Sequence[Sequence[float]],
        *,
        name: str = "sojourn",
        ids: Sequence[Any] | None = None,
        **kw: Any,
    ) -> SojournInstance:
        """Build from per-job size and probability lists (ids default to 0..N-1)."""
        ids = list(range(len(sizes))) if ids is None else list(ids)
        return cls(tuple(StagedJob(i, s, p) for i, s, p in zip(ids, sizes, probs, strict=True)), name=name, **kw)


@dataclass(frozen=True)
class SojournSchedule(JsonMixin):
    """A static schedule: a job order (non-preemptive) or a stage sequence (preemption at
    checkpoints, what an index policy such as SR produces).

    Parameters
    ----------
    order : sequence of job ids, optional
        Jobs run to success or early termination, in this order.
    stages : sequence of (job id, stage) pairs, optional
        Stage ``j`` (1-based) of a job runs at its entry if the job is still alive (reached
        checkpoint ``j-1`` without terminating); entries of terminated jobs are skipped.

    Notes
    -----
    Exactly one of ``order`` and ``stages`` is given.

    Examples
    --------
    >>> SojournSchedule(order=[1, 2]).is_order
    True
    >>> SojournSchedule(stages=[(1, 1), (2, 1), (2, 2), (1, 2)]).to_dict()["stages"][0]
    [1, 1]
    """

    order: tuple[Any, ...] | None = None
    stages: tuple[tuple[Any, int], ...] | None = None

    def __post_init__(self) -> None:
        if (self.order is None) == (self.stages is None):
            raise InvalidScheduleError(
                "A sojourn schedule has exactly one of 'order' (job ids) and 'stages' "
                "([job id, stage] pairs); got "
                f"{'both' if self.order is not None else 'neither'}."
            )
        if self.order is not None:
            if isinstance(self.order, (str, bytes)) or not isinstance(self.order, Iterable):
                raise InvalidScheduleError(f"The 'order' field must be a list of job ids; got {self.order!r}.")
            object.__setattr__(self, "order", tuple(self.order))
        else:
            st = []
            for k, e in enumerate(self.stages):
                if isinstance(e, (str, bytes)) or not isinstance(e, Iterable) or len(tuple(e)) != 2:
                    raise InvalidScheduleError(
                        f"Entry {k} of the 'stages' field must be a [job id, stage] pair; got {e!r}."
                    )
                jid, s = tuple(e)
                st.append((jid, check_int(s, f"stages[{k}][1]", "the schedule", lo=1, exc=InvalidScheduleError)))
            object.__setattr__(self, "stages", tuple(st))

    @property
    def is_order(self) -> bool:
        return self.order is not None

    def stage_sequence(self, instance: SojournInstance) -> tuple[tuple[Any, int], ...]:
        """The schedule as a stage sequence (an order runs all stages of each job in turn)."""
        if self.stages is not None:
            return self.stages
        return tuple(
            (jid, s) for jid in self.order for s in range(1, instance.jobs[instance.index_of(jid)].n_stages + 1)
        )

    def to_dict(self) -> dict[str, Any]:
        if self.order is not None:
            return {"kind": KIND, "order": list(self.order)}
        return {"kind": KIND, "stages": [list(e) for e in self.stages]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SojournSchedule:
        if not isinstance(d, Mapping) or ("order" not in d and "stages" not in d):
            raise InvalidScheduleError(
                "A sojourn schedule file must be an object with an 'order' list of job ids "
                "or a 'stages' list of [job id, stage] pairs."
            )
        return cls(order=d.get("order"), stages=d.get("stages"))

    @classmethod
    def load(cls, path: str | Path) -> SojournSchedule:
        return cls.from_dict(read_json(path, what="schedule"))


SojournInstance.schedule_class = SojournSchedule


def check_instance(instance: Any) -> SojournInstance:
    """Raise :class:`InvalidInstanceError` unless ``instance`` is a :class:`SojournInstance`."""
    return check_kind(instance, "sojourn")
