"""GPU cluster: servers with GPUs, optional other resources, and network bandwidths."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.limits import MAX_AMOUNT, MAX_SERVER_GPUS, MAX_SERVERS, hint
from optsched.core.validation import check_int, check_mapping, check_number
from optsched.exceptions import InvalidInstanceError


@dataclass(frozen=True)
class Server:
    """One server (machine).

    Parameters
    ----------
    gpus : int
        Number of GPUs, in [0, 10000] (a CPU-only server has 0).
    name : str, optional
        Free label (e.g. a trace's machine id).
    resources : mapping str -> float, optional
        Capacities of other resources (e.g. ``{"cpu": 96, "mem_gb": 512}``), all >= 0.

    Examples
    --------
    >>> from optsched.core import Cluster
    >>> from optsched.core.cluster import Server
    >>> Cluster([Server(8), Server(4, name="small")]).total_gpus
    12
    """

    gpus: int
    name: str | None = None
    resources: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        owner = f"server {self.name!r}" if self.name is not None else "a server"
        object.__setattr__(
            self, "gpus", check_int(self.gpus, "gpus", owner, lo=0, hi=MAX_SERVER_GPUS, hint=hint("GPUs"))
        )
        res = check_mapping(self.resources, "resources", owner)
        for k, v in res.items():
            res[k] = check_number(v, f"resources.{k}", owner, lo=0.0, hi=MAX_AMOUNT)
        object.__setattr__(self, "resources", res)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"gpus": self.gpus}
        if self.name is not None:
            d["name"] = self.name
        if self.resources:
            d["resources"] = dict(self.resources)
        return d


@dataclass(frozen=True)
class Cluster:
    """A set of servers and the network between them.

    Parameters
    ----------
    servers : sequence of Server
        At least one server (at most 100,000) with at least one GPU in total.
    bandwidth_intra : float, optional
        GPU-to-GPU bandwidth inside a server, bytes/s (NVLink/PCIe).
    bandwidth_inter : float, optional
        Per-server NIC bandwidth between servers, bytes/s.

    Examples
    --------
    >>> c = Cluster.homogeneous(2, 4)
    >>> c.n_servers, c.total_gpus, c.max_server_gpus
    (2, 8, 4)
    """

    servers: tuple[Server, ...]
    bandwidth_intra: float | None = None
    bandwidth_inter: float | None = None

    def __post_init__(self) -> None:
        servers = self.servers
        if not isinstance(servers, Sequence) or isinstance(servers, (str, bytes)):
            raise InvalidInstanceError(
                f"The 'servers' field of the cluster must be a list of servers; got {servers!r}."
            )
        _check_count(len(servers))
        servers = tuple(s if isinstance(s, Server) else Server(**_server_kwargs(s, i)) for i, s in enumerate(servers))
        if not servers:
            raise InvalidInstanceError(
                "The 'servers' field of the cluster is empty; give at least one server, "
                "e.g. Cluster.homogeneous(n_servers=1, gpus_per_server=8)."
            )
        if sum(s.gpus for s in servers) == 0:
            raise InvalidInstanceError(
                "The cluster has no GPU (every server has 'gpus': 0); give at least one server a GPU."
            )
        object.__setattr__(self, "servers", servers)
        for name in ("bandwidth_intra", "bandwidth_inter"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(
                    self,
                    name,
                    check_number(v, name, "the cluster", lo=0.0, lo_open=True, hi=MAX_AMOUNT, hint=hint("bytes/s")),
                )

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def homogeneous(
        cls,
        n_servers: int,
        gpus_per_server: int,
        *,
        bandwidth_intra: float | None = None,
        bandwidth_inter: float | None = None,
        resources: Mapping[str, float] | None = None,
    ) -> Cluster:
        """``n_servers`` identical servers with ``gpus_per_server`` GPUs each."""
        n = check_int(n_servers, "n_servers", "the cluster", lo=1, hi=MAX_SERVERS, hint=hint("servers"))
        g = check_int(gpus_per_server, "gpus_per_server", "the cluster", lo=1, hi=MAX_SERVER_GPUS, hint=hint("GPUs"))
        return cls(
            tuple(Server(g, name=f"s{i}", resources=dict(resources or {})) for i in range(n)),
            bandwidth_intra=bandwidth_intra,
            bandwidth_inter=bandwidth_inter,
        )

    # -- properties ---------------------------------------------------------------------
    @property
    def n_servers(self) -> int:
        return len(self.servers)

    @property
    def gpus(self) -> np.ndarray:
        """GPUs per server as an int array of length ``n_servers``."""
        return np.array([s.gpus for s in self.servers], dtype=np.int64)

    @property
    def total_gpus(self) -> int:
        return int(sum(s.gpus for s in self.servers))

    @property
    def max_server_gpus(self) -> int:
        return int(max(s.gpus for s in self.servers))

    @property
    def is_homogeneous(self) -> bool:
        return len({s.gpus for s in self.servers}) == 1

    # -- io -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"servers": [s.to_dict() for s in self.servers]}
        if self.bandwidth_intra is not None:
            d["bandwidth_intra"] = self.bandwidth_intra
        if self.bandwidth_inter is not None:
            d["bandwidth_inter"] = self.bandwidth_inter
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Cluster:
        if not isinstance(d, Mapping):
            raise InvalidInstanceError(f"The 'cluster' field must be an object; got {d!r}.")
        if "servers" not in d:
            raise InvalidInstanceError(
                "The 'cluster' object has no 'servers' field; add e.g. \"servers\": [{\"gpus\": 8}]."
            )
        servers = d["servers"]
        if isinstance(servers, Mapping) and {"count", "gpus"} <= set(servers):
            # compact form {"count": 4, "gpus": 8}
            n = check_int(servers["count"], "servers.count", "the cluster", lo=1, hi=MAX_SERVERS, hint=hint("servers"))
            servers = [
                {"gpus": servers["gpus"], "name": f"s{i}", "resources": servers.get("resources", {})} for i in range(n)
            ]
        if not isinstance(servers, Sequence) or isinstance(servers, (str, bytes)):
            raise InvalidInstanceError(f"The 'servers' field of the cluster must be a list; got {servers!r}.")
        _check_count(len(servers))
        return cls(
            tuple(Server(**_server_kwargs(s, i)) for i, s in enumerate(servers)),
            bandwidth_intra=d.get("bandwidth_intra"),
            bandwidth_inter=d.get("bandwidth_inter"),
        )


def _check_count(n: int) -> None:
    if n > MAX_SERVERS:
        raise InvalidInstanceError(
            f"The 'servers' field of the cluster lists {n:,} servers, more than the {MAX_SERVERS:,} a cluster may "
            f"have{hint('servers')}; model fewer, larger servers."
        )


def _server_kwargs(s: Any, i: int) -> dict[str, Any]:
    if not isinstance(s, Mapping):
        raise InvalidInstanceError(f'Server {i} of the cluster must be an object like {{"gpus": 8}}; got {s!r}.')
    if "gpus" not in s:
        raise InvalidInstanceError(f"Server {i} of the cluster has no 'gpus' field; add e.g. \"gpus\": 8.")
    unknown = set(s) - {"gpus", "name", "resources"}
    if unknown:
        raise InvalidInstanceError(
            f"Server {i} of the cluster has unknown field(s) {sorted(unknown)}; allowed: gpus, name, resources."
        )
    return {"gpus": s["gpus"], "name": s.get("name", f"s{i}"), "resources": s.get("resources", {})}
