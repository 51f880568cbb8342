"""Rigid training job: arrival, GPU demand, work. Paper packages extend it with their own fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from optsched.core.validation import check_bool, check_int, check_mapping, check_number
from optsched.exceptions import InvalidInstanceError

__all__ = ["Job", "JobId"]

JobId = int | str


@dataclass(frozen=True)
class Job:
    """A distributed training job with a fixed GPU demand.

    Parameters
    ----------
    id : int or str
        Unique within its instance.
    work : float
        Processing time in seconds when the job runs on its ``gpus`` GPUs at full rate (> 0).
    gpus : int
        Number of GPUs it needs at once (>= 1).
    arrival : float
        Release time in seconds (>= 0); the job cannot start earlier.
    weight : float
        Weight in weighted objectives (> 0), default 1.
    single_server : bool
        If true the job must be placed on one server (consolidated); otherwise its GPUs may
        span servers.
    resources : mapping, optional
        Demands of other resources, per job (e.g. ``{"cpu": 8}``).
    attrs : mapping, optional
        Free-form attributes carried through (user, group, model name, trace fields).
    """

    id: JobId
    work: float
    gpus: int = 1
    arrival: float = 0.0
    weight: float = 1.0
    single_server: bool = False
    resources: Mapping[str, float] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.id, bool) or not isinstance(self.id, (int, str)):
            raise InvalidInstanceError(f"The 'id' field of a job must be an integer or a string; got {self.id!r}.")
        owner = f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"
        object.__setattr__(
            self, "work", check_number(self.work, "work", owner, lo=0.0, lo_open=True, hint=" (seconds)")
        )
        object.__setattr__(self, "gpus", check_int(self.gpus, "gpus", owner, lo=1))
        object.__setattr__(self, "arrival", check_number(self.arrival, "arrival", owner, lo=0.0, hint=" (seconds)"))
        object.__setattr__(self, "weight", check_number(self.weight, "weight", owner, lo=0.0, lo_open=True))
        object.__setattr__(self, "single_server", check_bool(self.single_server, "single_server", owner))
        res = check_mapping(self.resources, "resources", owner)
        for k, v in res.items():
            res[k] = check_number(v, f"resources.{k}", owner, lo=0.0)
        object.__setattr__(self, "resources", res)
        object.__setattr__(self, "attrs", check_mapping(self.attrs, "attrs", owner))

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
        unknown = set(d) - {"id", "work", "gpus", "arrival", "weight", "single_server", "resources", "attrs"}
        if unknown:
            raise InvalidInstanceError(
                f"The {owner} (id {d.get('id')!r}) has unknown field(s) {sorted(unknown)}; put free-form "
                f"data under 'attrs'."
            )
        return cls(**{k: d[k] for k in d})
