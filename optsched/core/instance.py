"""Instance = cluster + jobs (+ horizon, slot length, known optima). Kind ``"rigid"``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.io import JsonMixin, require_fields
from optsched.core.job import Job, JobId, jobs_from_dicts
from optsched.core.limits import MAX_ARRIVAL, MAX_SECONDS, MIN_SECONDS, hint
from optsched.core.validation import check_mapping, check_number
from optsched.exceptions import InvalidInstanceError, UnknownNameError

SCHEMA_VERSION = 1
"""The version of the instance file format that this optsched writes and reads."""


@dataclass(frozen=True)
class Instance(JsonMixin):
    """Rigid jobs on a GPU cluster: the common instance kind (``kind = "rigid"``).

    Parameters
    ----------
    cluster : Cluster
    jobs : sequence of Job
        Job ids must be unique. Each job's GPU demand must fit the cluster (one server if
        ``single_server``).
    name : str
    horizon : float, optional
        Last time (s) a job may arrive (at most 4e9); exact time-indexed models also use it to
        bound the schedule length when set.
    slot : float
        Slot length (s) of time-indexed exact models (default 1), in [1e-6, 1e9]. The exact
        models refuse an instance spanning more than 10^7 slots (``docs/instances.md#limits``).
    known_optima : mapping, optional
        ``{objective name: {"value": float, "how": str}}``, the known optimum and how it was
        obtained (hand, exhaustive enumeration, ...).
    metadata : mapping, optional
        Free-form (source, generator and seed, ...).

    Examples
    --------
    >>> from optsched.core import Cluster, Job, Instance
    >>> inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=3, gpus=2), Job(1, work=1)])
    >>> inst.n_jobs, inst.total_work
    (2, 4.0)
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    name: str = "instance"
    horizon: float | None = None
    slot: float = 1.0
    known_optima: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    kind = "rigid"
    #: the unit of every time of the data, the schedules and the objective (docs/conventions.md#time)
    time_unit = "s"

    def __post_init__(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise InvalidInstanceError(f"The 'cluster' field must be a Cluster; got {type(self.cluster).__name__}.")
        if isinstance(self.jobs, (str, bytes)) or not isinstance(self.jobs, Iterable):
            raise InvalidInstanceError(f"The 'jobs' field must be a list of jobs; got {self.jobs!r}.")
        jobs = tuple(j if isinstance(j, Job) else Job.from_dict(j, i) for i, j in enumerate(self.jobs))
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(
            self,
            "slot",
            check_number(
                self.slot, "slot", "the instance", lo=MIN_SECONDS, hi=MAX_SECONDS, hint=hint("seconds per slot")
            ),
        )
        if self.horizon is not None:
            object.__setattr__(
                self,
                "horizon",
                check_number(self.horizon, "horizon", "the instance", lo=0.0, hi=MAX_ARRIVAL, hint=hint("seconds")),
            )
        object.__setattr__(self, "known_optima", check_mapping(self.known_optima, "known_optima", "the instance"))
        object.__setattr__(self, "metadata", check_mapping(self.metadata, "metadata", "the instance"))
        if not self._jobs_plainly_fit(jobs):
            self._check_jobs(jobs)

    def _jobs_plainly_fit(self, jobs: tuple[Job, ...]) -> bool:
        """True when no job can fail :meth:`_check_jobs` (unique ids, GPUs within the cluster or
        the largest server, arrivals by the horizon, no other resources), checked column by
        column (a large instance has millions of jobs); False sends them one at a time."""
        if not jobs:
            return True
        if len({j.id for j in jobs}) != len(jobs) or any(j.resources for j in jobs):
            return False
        total, largest = self.cluster.total_gpus, self.cluster.max_server_gpus
        gpus = np.fromiter((j.gpus for j in jobs), np.int64, len(jobs))
        single = np.fromiter((j.single_server for j in jobs), bool, len(jobs))
        if (gpus > np.where(single, largest, total)).any():
            return False
        return self.horizon is None or max(j.arrival for j in jobs) <= self.horizon

    def _check_jobs(self, jobs: tuple[Job, ...]) -> None:
        """Each job against the others and the cluster, in order: the first wrong one raises."""
        seen: set[JobId] = set()
        total, largest = self.cluster.total_gpus, self.cluster.max_server_gpus
        declared = {r for srv in self.cluster.servers for r in srv.resources}  # once, not per job
        for j in jobs:
            if j.id in seen:
                raise InvalidInstanceError(f"Job id {j.id!r} appears twice; job ids must be unique.")
            seen.add(j.id)
            cap = largest if j.single_server else total
            if j.gpus > cap:
                what = "the largest server" if j.single_server else "the cluster"
                raise InvalidInstanceError(
                    f"The 'gpus' field of {j.label} must be an integer in [1, {cap}] ({what}); "
                    f"got {j.gpus}. Lower the demand or add GPUs to the cluster."
                )
            if self.horizon is not None and j.arrival > self.horizon:
                raise InvalidInstanceError(
                    f"The 'arrival' field of {j.label} is {j.arrival:g} s, after the instance horizon "
                    f"{self.horizon:g} s; move the arrival or extend 'horizon'."
                )
            for r, v in j.resources.items():
                if r not in declared:
                    raise InvalidInstanceError(
                        f"The 'resources' field of {j.label} uses '{r}', which no server declares (servers "
                        f"declare {sorted(declared) or 'no resources'}); add '{r}' to the servers' resources or "
                        f"fix its name."
                    )
                caps = [s.resources.get(r, 0.0) for s in self.cluster.servers]
                limit = max(caps) if j.single_server else sum(caps)
                if v > limit:
                    raise InvalidInstanceError(
                        f"The 'resources.{r}' field of {j.label} is {v:g}, more than the cluster offers "
                        f"({limit:g}); lower it or add '{r}' capacity to the servers."
                    )

    # -- access ---------------------------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def job_ids(self) -> list[JobId]:
        return [j.id for j in self.jobs]

    def job(self, job_id: JobId) -> Job:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise UnknownNameError(f"No job with id {job_id!r} in instance {self.name!r}.")

    @property
    def arrivals(self) -> np.ndarray:
        return np.array([j.arrival for j in self.jobs], dtype=float)

    @property
    def works(self) -> np.ndarray:
        return np.array([j.work for j in self.jobs], dtype=float)

    @property
    def demands(self) -> np.ndarray:
        return np.array([j.gpus for j in self.jobs], dtype=np.int64)

    @property
    def weights(self) -> np.ndarray:
        return np.array([j.weight for j in self.jobs], dtype=float)

    @property
    def total_work(self) -> float:
        return float(sum(j.work for j in self.jobs))

    def replace(self, **changes: Any) -> Instance:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    # -- io -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "name": self.name,
            "cluster": self.cluster.to_dict(),
            "jobs": [j.to_dict() for j in self.jobs],
        }
        if self.horizon is not None:
            d["horizon"] = self.horizon
        if self.slot != 1.0:
            d["slot"] = self.slot
        if self.known_optima:
            d["known_optima"] = dict(self.known_optima)
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Instance:
        require_fields(d, ("cluster", "jobs"), hint="see optsched/core/schemas/rigid.schema.json")
        return cls(
            cluster=Cluster.from_dict(d["cluster"]),
            jobs=jobs_from_dicts(d["jobs"]),
            name=str(d.get("name", "instance")),
            horizon=d.get("horizon"),
            slot=d.get("slot", 1.0),
            known_optima=d.get("known_optima", {}),
            metadata=d.get("metadata", {}),
        )
