"""What the cluster of the elastic model offers: servers with a capacity C_h^r per resource name,
worker types (e_m, b_m) and PS types (z_p, B_p), each read from its dict with the field, the value
and the fix named in every error. Tested through ``tests/elastic/test_model.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from optsched.core.limits import MAX_AMOUNT, hint
from optsched.core.validation import check_mapping, check_number
from optsched.elastic.constants import BANDWIDTH
from optsched.exceptions import InvalidInstanceError


def resource_mapping(value: Any, field_: str, owner: str) -> dict[str, float]:
    d = check_mapping(value, field_, owner)
    out = {}
    for r, v in d.items():
        if not isinstance(r, str) or not r:
            raise InvalidInstanceError(
                f"The '{field_}' field of {owner} must map resource names to amounts; got the key {r!r}."
            )
        out[r] = check_number(v, f"{field_}.{r}", owner, lo=0.0, hi=MAX_AMOUNT, hint=hint("resource units"))
    return out


@dataclass(frozen=True)
class Server:
    """A physical server with capacity C_h^r per resource name."""

    capacity: Mapping[str, float]
    name: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"capacity": dict(self.capacity)}
        if self.name:
            d["name"] = self.name
        return d


@dataclass(frozen=True)
class WorkerType:
    """A worker type: resources e_m (per resource name) and bandwidth b_m (Gbit/s)."""

    resources: Mapping[str, float]
    bandwidth: float
    name: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"resources": dict(self.resources), "bandwidth": self.bandwidth}
        if self.name:
            d["name"] = self.name
        return d


@dataclass(frozen=True)
class PsType(WorkerType):
    """A parameter-server type: resources z_p and bandwidth B_p (Gbit/s)."""


def type_from(cls: type, d: Any, i: int, what: str) -> Any:
    owner = f"{what} {i}"
    subject = owner[:1].upper() + owner[1:]  # "Worker type 0 has ...", not "The worker type 0 has ..."
    if isinstance(d, cls):
        return d
    if not isinstance(d, Mapping):
        raise InvalidInstanceError(f"{subject} must be an object with 'resources' and 'bandwidth'; got {d!r}.")
    unknown = set(d) - {"resources", "bandwidth", "name"}
    if unknown:
        raise InvalidInstanceError(
            f"{subject} has unknown field(s) {sorted(unknown)}; allowed: resources, bandwidth, name."
        )
    if "resources" not in d:
        raise InvalidInstanceError(
            f'{subject} has no \'resources\' field; give its resource vector, e.g. {{"gpu": 1, "cpu": 4}}.'
        )
    res = resource_mapping(d["resources"], "resources", owner)
    bw = d.get("bandwidth", res.get(BANDWIDTH))
    if bw is None:
        raise InvalidInstanceError(
            f"{subject} has no 'bandwidth' field (Gbit/s, b_m or B_p) and no '{BANDWIDTH}' resource; add one."
        )
    name = d.get("name", "")
    if not isinstance(name, str):
        raise InvalidInstanceError(f"The 'name' field of {owner} must be a string; got {name!r}.")
    return cls(resources=res, bandwidth=bw, name=name)
