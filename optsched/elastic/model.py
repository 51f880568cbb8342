"""System model of paper 001 (elastic ML jobs, PS and Ring-AllReduce): instance and schedule.

Instance kind ``"elastic"``. Servers offer R resources (``capacity``); worker types have a resource
vector e_m and a bandwidth b_m (Gbit/s); PS types a vector z_p and a bandwidth B_p (PS
architecture only). A job j has arrival a_j (slot), weight w_j, epochs E_j, data chunks D_j,
mini-batches per chunk K_j, mini-batch time v_jm per worker type (ms), update time U_j^p per PS
type (ms; one U_j for RAR) and gradient size pi_j (MB). The processing capacity rho of (1) and
(14) is converted to mini-batches per slot of ``slot`` seconds (:meth:`ElasticInstance.rho`);
the least duration with N workers is :meth:`ElasticInstance.duration`. Units, readings and labels:
``formulations/elastic.md``.

A schedule (:class:`ElasticSchedule`) maps job ids to an :class:`Assignment`: start slot, duration
d, worker type m, PS type p, q, and the workers / PSs per server (a PS-only server is allowed).

The parts live in their own modules and are importable from here as well:
:mod:`~optsched.elastic.constants` (kind, limits, unit conversions), :mod:`~optsched.elastic.cluster`
(servers, worker and PS types), :mod:`~optsched.elastic.job` (a job) and
:mod:`~optsched.elastic.schedule` (assignments and schedules). Tested in ``tests/elastic/test_model.py``.

>>> inst = toy_instance_dict()
>>> i = ElasticInstance.from_dict(inst)
>>> [i.duration(0, m, 0, 1, 1) for m in range(2)]
[15, 10]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from optsched.core.io import JsonMixin, load_instance, require_fields
from optsched.core.library import instance_path
from optsched.core.limits import MAX_AMOUNT, MAX_SECONDS, MAX_SERVERS, MAX_SLOTS, MIN_SECONDS, hint
from optsched.core.validation import check_int, check_mapping, check_number
from optsched.elastic.cluster import PsType, Server, WorkerType, resource_mapping, type_from
from optsched.elastic.constants import (
    ARCHITECTURES,
    BANDWIDTH,
    KIND,
    guarded_ceil,
    transfer_ms,
)
from optsched.elastic.job import ElasticJob
from optsched.elastic.schedule import ElasticSchedule
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, UnplaceableJobError


def _servers_of(raw) -> list[Server]:
    """The instance's servers, each a :class:`Server` or a mapping checked field by field."""
    servers = []
    for h, s in enumerate(raw):
        if isinstance(s, Server):
            servers.append(s)
            continue
        if not isinstance(s, Mapping) or "capacity" not in s:
            raise InvalidInstanceError(
                f"Server {h} must be an object with a 'capacity' field (resource name -> amount); got {s!r}."
            )
        unknown = set(s) - {"capacity", "name"}
        if unknown:
            raise InvalidInstanceError(f"Server {h} has unknown field(s) {sorted(unknown)}; allowed: capacity, name.")
        name = s.get("name", "")
        if not isinstance(name, str):
            raise InvalidInstanceError(f"The 'name' field of server {h} must be a string; got {name!r}.")
        servers.append(Server(resource_mapping(s["capacity"], "capacity", f"server {h}"), name))
    if not servers:
        raise InvalidInstanceError("The 'servers' field is empty; give at least one server.")
    if len(servers) > MAX_SERVERS:
        raise InvalidInstanceError(
            f"The 'servers' field lists {len(servers):,} servers, more than {MAX_SERVERS:,}{hint('servers')}."
        )
    return servers


def _check_resources(servers, wts, pts) -> None:
    """Every server and type names the same resources; each type uses some; b_m = e_m^bandwidth."""
    names = set(servers[0].capacity)
    for h, s in enumerate(servers):
        if set(s.capacity) != names:
            raise InvalidInstanceError(
                f"Server {h} has resources {sorted(s.capacity)} but server 0 has "
                f"{sorted(names)}; every server and type must name the same resources "
                f"(give 0 for a resource it lacks)."
            )
    for what, types in (("worker type", wts), ("PS type", pts)):
        for k, t in enumerate(types):
            if set(t.resources) != names:
                raise InvalidInstanceError(
                    f"The {what} {k} has resources {sorted(t.resources)} but the servers "
                    f"have {sorted(names)}; use the same resource names (0 for none)."
                )
            if not any(v > 0 for v in t.resources.values()):
                raise InvalidInstanceError(
                    f"The {what} {k} uses no resources ({dict(t.resources)}); give it a "
                    f"positive amount of at least one resource."
                )
            bw = check_number(
                t.bandwidth,
                "bandwidth",
                f"{what} {k}",
                lo=0.0,
                lo_open=True,
                hi=MAX_AMOUNT,
                hint=hint("Gbit/s; b_m or B_p"),
            )
            object.__setattr__(t, "bandwidth", bw)
            if BANDWIDTH in t.resources and not math.isclose(t.resources[BANDWIDTH], bw, rel_tol=1e-9):
                raise InvalidInstanceError(
                    f"The {what} {k} has 'bandwidth' {bw:g} Gbit/s but its '{BANDWIDTH}' "
                    f"resource is {t.resources[BANDWIDTH]:g}; the paper has b_m = "
                    f"e_m^bandwidth, make them equal."
                )


@dataclass(frozen=True)
class ElasticInstance(JsonMixin):
    """Servers, worker and PS types, jobs, slot length and horizon (paper 001, Sec. 3 and 6).

    Parameters
    ----------
    servers : sequence of Server (or {"capacity": {...}} dicts)
        C_h^r; every server names the same resources.
    worker_types, ps_types : sequence of WorkerType / PsType (or dicts)
        e_m, b_m and z_p, B_p; the resource names must be those of the servers; ``ps_types`` is
        empty for ``architecture="rar"``.
    jobs : sequence of ElasticJob (or dicts)
    architecture : {"ps", "rar"}
    slot : float
        Seconds per slot (Sec. 7: 3600).
    horizon : int
        T, slots; every job must complete by T in (2) / (15) (not in (8), the pricing or A_online).
    F : float, optional
        Upper bound on w_j / (resource use of any schedule) (>= 1), used by the price (11).

    Raises
    ------
    InvalidInstanceError
        Bad data (field, value and fix in the message).
    UnplaceableJobError
        A job that fits in no configuration on the empty cluster (invalid data, an InvalidInstanceError; also
        an InfeasibleError as before). A job that cannot finish by T is *not* refused here: the runs of (2)
        report it (:meth:`late_jobs`).
    """

    servers: tuple[Server, ...]
    worker_types: tuple[WorkerType, ...]
    jobs: tuple[ElasticJob, ...]
    ps_types: tuple[PsType, ...] = ()
    architecture: str = "ps"
    slot: float = 1.0
    horizon: int = 100
    F: float | None = None
    name: str = "instance"
    known_optima: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    kind = KIND
    #: the unit of every time of the data, the schedules and the objective (docs/conventions.md#time)
    time_unit = "slot"

    def __post_init__(self) -> None:
        o = "the instance"
        if self.architecture not in ARCHITECTURES:
            raise InvalidInstanceError(
                f"The 'architecture' field must be one of {ARCHITECTURES} ('ps' = parameter "
                f"servers, 'rar' = Ring-AllReduce); got {self.architecture!r}."
            )
        for f_ in ("servers", "worker_types", "ps_types", "jobs"):
            v = getattr(self, f_)
            if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Iterable):
                raise InvalidInstanceError(f"The '{f_}' field must be a list; got {v!r}.")
        servers = _servers_of(self.servers)
        object.__setattr__(self, "servers", tuple(servers))
        wts = tuple(type_from(WorkerType, w, m, "worker type") for m, w in enumerate(self.worker_types))
        pts = tuple(type_from(PsType, p, k, "PS type") for k, p in enumerate(self.ps_types))
        if not wts:
            raise InvalidInstanceError("The 'worker_types' field is empty; give at least one worker type.")
        if self.architecture == "ps" and not pts:
            raise InvalidInstanceError(
                "The 'ps_types' field is empty but the architecture is 'ps'; give at least "
                "one PS type, or set 'architecture' to 'rar'."
            )
        if self.architecture == "rar" and pts:
            raise InvalidInstanceError(
                f"The architecture is 'rar' (Ring-AllReduce, workers only) but {len(pts)} PS "
                f"type(s) are given; remove 'ps_types' or set 'architecture' to 'ps'."
            )
        object.__setattr__(self, "worker_types", wts)
        object.__setattr__(self, "ps_types", pts)
        _check_resources(servers, wts, pts)
        object.__setattr__(
            self, "slot", check_number(self.slot, "slot", o, lo=MIN_SECONDS, hi=MAX_SECONDS, hint=hint("seconds"))
        )
        object.__setattr__(
            self, "horizon", check_int(self.horizon, "horizon", o, lo=1, hi=MAX_SLOTS[KIND], hint=hint("T, slots"))
        )
        if self.F is not None:
            object.__setattr__(
                self,
                "F",
                check_number(self.F, "F", o, lo=1.0, hi=MAX_AMOUNT, hint=" (the weight-to-resource bound F of (11))"),
            )
        object.__setattr__(self, "known_optima", check_mapping(self.known_optima, "known_optima", o))
        object.__setattr__(self, "metadata", check_mapping(self.metadata, "metadata", o))
        if not isinstance(self.name, str):
            raise InvalidInstanceError(f"The 'name' field must be a string; got {self.name!r}.")
        jobs = tuple(j if isinstance(j, ElasticJob) else ElasticJob.from_dict(j, i) for i, j in enumerate(self.jobs))
        if not jobs:
            raise InvalidInstanceError("The 'jobs' field is empty; give at least one job.")
        object.__setattr__(self, "jobs", jobs)
        self._check_jobs(jobs)

    def _check_jobs(self, jobs: tuple) -> None:
        """Unique ids, one v per worker type, U_j as the architecture asks, a configuration that fits
        and lasts at least one slot."""
        seen: set = set()
        M, P = len(self.worker_types), len(self.ps_types)
        for j in jobs:
            if j.id in seen:
                raise InvalidInstanceError(f"Job id {j.id!r} appears twice; job ids must be unique.")
            seen.add(j.id)
            if len(j.v) != M:
                raise InvalidInstanceError(
                    f"The 'v' field of {j.label} has {len(j.v)} entries; give one per worker type ({M})."
                )
            if self.architecture == "ps":
                if not isinstance(j.update, tuple) or len(j.update) != P:
                    raise InvalidInstanceError(
                        f"The 'update' field of {j.label} must list U_j^p (ms) for each of the "
                        f"{P} PS type(s); got {j.update!r}."
                    )
            elif isinstance(j.update, tuple):
                raise InvalidInstanceError(
                    f"The 'update' field of {j.label} must be one number U_j (ms) for "
                    f"Ring-AllReduce; got the list {list(j.update)!r}."
                )
        for i, j in enumerate(jobs):
            d = self.min_duration(i)
            if d is None:
                raise UnplaceableJobError(
                    f"{j.label} fits in no configuration: no worker type (with a PS type) fits "
                    f"the servers' capacity. Give it a smaller worker/PS type or larger servers."
                )
            if d < 1:
                raise InvalidInstanceError(
                    f"{j.label} needs less than one slot of {self.slot:g} s (d = ceil(E D K v / (N slot)) = 0); every "
                    f"job must last at least one slot: use a shorter 'slot' or give the job more work."
                )

    # -- sizes ------------------------------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def H(self) -> int:
        return len(self.servers)

    @property
    def M(self) -> int:
        return len(self.worker_types)

    @property
    def P(self) -> int:
        return len(self.ps_types)

    @property
    def is_ps(self) -> bool:
        return self.architecture == "ps"

    @cached_property
    def resources(self) -> tuple[str, ...]:
        """Resource names in input order (the keys of server 0's ``capacity``): the order of the R axis
        everywhere (``C``, ``e``, ``z``, ``Prices.beta`` / ``delta``, ``Column.use``).

        >>> ElasticInstance.from_dict(toy_instance_dict()).resources
        ('gpu', 'cpu')
        """
        return tuple(self.servers[0].capacity)

    @property
    def R(self) -> int:
        return len(self.resources)

    @cached_property
    def C(self) -> tuple[tuple[float, ...], ...]:
        """``C[h][r]`` in the order of :attr:`resources`."""
        return tuple(tuple(s.capacity[r] for r in self.resources) for s in self.servers)

    @cached_property
    def e(self) -> tuple[tuple[float, ...], ...]:
        """``e[m][r]`` in the order of :attr:`resources`."""
        return tuple(tuple(t.resources[r] for r in self.resources) for t in self.worker_types)

    @cached_property
    def z(self) -> tuple[tuple[float, ...], ...]:
        """``z[p][r]`` in the order of :attr:`resources` (empty for RAR)."""
        return tuple(tuple(t.resources[r] for r in self.resources) for t in self.ps_types)

    @property
    def job_ids(self) -> list:
        return [j.id for j in self.jobs]

    def index(self, job_id: Any) -> int:
        for i, j in enumerate(self.jobs):
            if j.id == job_id:
                return i
        raise KeyError(f"No job with id {job_id!r} in instance {self.name!r}.")

    def job_index(self, job: Any, who: str = "This function") -> int:
        """The position in ``jobs`` of the job with id ``job`` (public functions take job ids; an
        integer that is no job id is refused, not read as a position).

        >>> i = ElasticInstance.from_dict({**toy_instance_dict(), "jobs": [
        ...     {**j, "id": f"j{k}"} for k, j in enumerate(toy_instance_dict()["jobs"])]})
        >>> i.job_index("j1")
        1
        """
        ids = self.__dict__.get("_id_index")
        if ids is None:
            ids = {j.id: k for k, j in enumerate(self.jobs)}
            self.__dict__["_id_index"] = ids
        try:
            return ids[job]
        except (KeyError, TypeError):
            pass
        shown = list(ids)[:10]
        raise InvalidOptionError(
            f"{who}: no job with id {job!r} in instance {self.name!r}; its job ids are {shown}"
            f"{' ...' if len(ids) > 10 else ''}."
        )

    def late_jobs(self) -> dict[Any, int]:
        """Job id -> earliest completion slot a_j + (least duration) of every job that cannot complete
        by T even alone on the cluster: (2) / (15) is then infeasible, which the runs of (2) report
        (``status = infeasible`` for the exact models, InfeasibleError for the heuristics); (8), the
        pricing and the online algorithms ignore T (docs/conventions.md#infeasibility).

        >>> ElasticInstance.from_dict({**toy_instance_dict(), "horizon": 9}).late_jobs()
        {0: 10, 1: 10}
        """
        out = {}
        for i, j in enumerate(self.jobs):
            d = self.min_duration(i)
            if d is not None and j.arrival + d > self.horizon:
                out[j.id] = j.arrival + d
        return out

    # -- (1), (14) --------------------------------------------------------------------------
    def iteration_ms(self, j: int, m: int, p: int | None, q: int, n: int) -> float:
        """Milliseconds of one iteration of one worker: (1) for PS (n unused), (14) for RAR.

        >>> i = ElasticInstance.from_dict(toy_instance_dict())
        >>> i.iteration_ms(0, 0, 0, 1, 1), i.iteration_ms(0, 0, 0, 0, 1)
        (15.0, 31.0)
        """
        job = self.jobs[j]
        b = self.worker_types[m].bandwidth
        if self.is_ps:
            t = job.v[m] + job.update[p]  # type: ignore[index]
            if q == 0:
                t += 2.0 * transfer_ms(job.grad_mb, b)
            return t
        share = (n - 1) / n
        t = job.v[m] + job.update * share  # type: ignore[operator]
        if q == 0:
            t += 2.0 * transfer_ms(job.grad_mb, b) * share
        return t

    def rho(self, j: int, m: int, p: int | None, q: int, n: int = 1) -> float:
        """rho: mini-batches one worker trains per slot, 1000 slot / iteration_ms."""
        return 1000.0 * self.slot / self.iteration_ms(j, m, p, q, n)

    def duration(self, j: int, m: int, p: int | None, q: int, n: int) -> int:
        """d_q(N) = ceil(E D K / (N rho)) slots (guarded ceil, see the formulation)."""
        job = self.jobs[j]
        return guarded_ceil(job.work * self.iteration_ms(j, m, p, q, n) / (1000.0 * self.slot * n))

    # -- capacity helpers -------------------------------------------------------------------------
    def fit_count(self, h: int, vec: tuple[float, ...], used: tuple[float, ...] | None = None) -> int:
        """How many copies of ``vec`` fit on server h (after ``used``); large if vec is 0 where C is."""
        best = 10**9
        for r, a in enumerate(vec):
            if a > 0:
                free = self.C[h][r] - (used[r] if used else 0.0)
                best = min(best, int(math.floor(free / a + 1e-9)) if free > -1e-12 else -1)
        return max(best, 0) if best != -1 else 0

    def fits(self, h: int, m: int, y: int, p: int | None, s: int) -> bool:
        """y type-m workers and s type-p PSs fit together on server h."""
        for r in range(self.R):
            use = self.e[m][r] * y + (self.z[p][r] * s if p is not None and s else 0.0)
            if use > self.C[h][r] + 1e-9:
                return False
        return True

    def ps_needed(self, m: int, p: int, outside: int) -> int:
        """s = max(1, ceil(outside b_m / B_p)): PSs on one server for ``outside`` workers elsewhere ((2i), (2e))."""
        b, B = self.worker_types[m].bandwidth, self.ps_types[p].bandwidth
        return max(1, guarded_ceil(outside * b / B))

    def _capacity_classes(self) -> list[tuple[int, int]]:
        """(a representative server, how many) per distinct capacity vector, kept on the instance:
        servers alike in capacity answer every placement question alike."""
        cached = self.__dict__.get("_classes")
        if cached is None:
            first: dict[tuple[float, ...], list[int]] = {}
            for h, cap in enumerate(self.C):
                first.setdefault(tuple(cap), [h, 0])[1] += 1
            cached = [(h, k) for h, k in first.values()]
            self.__dict__["_classes"] = cached
        return cached

    def placeable(self, m: int, p: int | None, q: int, n: int) -> bool:
        """Can N type-m workers (with their PSs) be placed on the empty cluster with this q?"""
        classes = self._capacity_classes()
        if q == 1:
            return any(self.fits(h, m, n, p, 1 if p is not None else 0) for h, _ in classes)
        caps = [(h, k, min(self.fit_count(h, self.e[m]), n)) for h, k in classes]
        total = sum(k * c for _, k, c in caps)
        if p is None:  # RAR, at least two servers
            return n >= 2 and sum(k for _, k, c in caps if c > 0) >= 2 and total >= n
        for nn, _, c in caps:
            others = total - c
            # g < n workers on the PS server (g = n would be q = 1), at least n - others of them; once
            # g workers alone do not fit there, no larger g does
            for g in range(max(0, n - others), n):
                if not self.fits(nn, m, g, None, 0):
                    break
                if self.fits(nn, m, g, p, self.ps_needed(m, p, n - g)):
                    return True
        return False

    def min_duration(self, j: int) -> int | None:
        """The least d over every configuration that fits the empty cluster (None: none fits)."""
        best = None
        ps = range(self.P) if self.is_ps else [None]
        for m in range(self.M):
            for p in ps:
                for q in (1, 0):
                    for n in range(1, self.jobs[j].chunks + 1):
                        d = self.duration(j, m, p, q, n)
                        if (best is None or d < best) and self.placeable(m, p, q, n):
                            best = d
        return best

    def seconds(self, slots: float) -> float:
        """A time in slots (arrival, start, completion, sum w c / sum w, ...) in seconds: ``slots * slot``.

        >>> ElasticInstance.from_dict(toy_instance_dict()).seconds(25)
        2500.0
        """
        return float(slots) * self.slot

    def replace(self, **changes: Any) -> ElasticInstance:
        return replace(self, **changes)

    # -- io ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema_version": 1,
            "kind": KIND,
            "name": self.name,
            "architecture": self.architecture,
            "slot": self.slot,
            "horizon": self.horizon,
            "servers": [s.to_dict() for s in self.servers],
            "worker_types": [t.to_dict() for t in self.worker_types],
        }
        if self.is_ps:
            d["ps_types"] = [t.to_dict() for t in self.ps_types]
        if self.F is not None:
            d["F"] = self.F
        d["jobs"] = [j.to_dict() for j in self.jobs]
        if self.known_optima:
            d["known_optima"] = dict(self.known_optima)
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ElasticInstance:
        require_fields(
            d,
            ("servers", "worker_types", "jobs", "horizon"),
            hint="see optsched/core/schemas/elastic.schema.json",
            lists=("jobs", "servers", "worker_types", "ps_types"),
        )
        kw = {k: d[k] for k in ("architecture", "slot", "horizon", "F", "name", "known_optima", "metadata") if k in d}
        return cls(
            servers=tuple(d["servers"]),
            worker_types=tuple(d["worker_types"]),
            ps_types=tuple(d.get("ps_types", ())),
            jobs=tuple(d["jobs"]),
            **kw,
        )


ElasticInstance.schedule_class = ElasticSchedule  # type: ignore[attr-defined]


def toy_instance_dict() -> dict[str, Any]:
    """The Sec. 1 example as a dict (the shipped ``toy:elastic-intro`` is the same data)."""
    return {
        "kind": KIND,
        "name": "elastic-intro",
        "architecture": "ps",
        "slot": 100.0,
        "horizon": 400,
        "servers": [{"name": "gpu-box", "capacity": {"gpu": 3, "cpu": 8}}],
        "worker_types": [
            {"name": "1gpu", "resources": {"gpu": 1, "cpu": 1}, "bandwidth": 1.0},
            {"name": "2gpu", "resources": {"gpu": 2, "cpu": 1}, "bandwidth": 1.0},
        ],
        "ps_types": [{"name": "ps", "resources": {"gpu": 0, "cpu": 1}, "bandwidth": 1.0}],
        "jobs": [
            {
                "id": k,
                "arrival": 0,
                "weight": 1,
                "epochs": 1,
                "chunks": 1,
                "minibatches": 100_000,
                "v": [15.0, 10.0],
                "update": [0.0],
                "grad_mb": 1.0,
            }
            for k in range(2)
        ],
    }


def toy_instance(name: str = "elastic-intro") -> ElasticInstance:
    """Load ``toy:<name>`` from the instance library.

    >>> toy_instance().horizon
    400
    """
    return load_instance(instance_path(f"toy:{name}"))
