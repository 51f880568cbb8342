"""System model of paper 000 (A-SRPT): mixed-parallelism jobs on M servers x g GPUs.

Instance kind ``"asrpt"``. A job has stages ``s = 1..S_i`` (``Stage``), each with ``k`` data-parallel
replicas, forward/backward times per mini-batch (s), activation sizes in/out per replica per
iteration (bytes) and parameter size (bytes); ``iterations`` n_i (actual, known to the exact
models and the verifier, not to online policies) and ``predicted_iterations`` (optional);
``arrival`` r_i (s); ``group``/``user`` ids; AllReduce flavour ``"rar"`` (ring) or ``"tar"`` (tree).

See ``formulations/asrpt.md`` (notation table).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from optsched.core.cluster import Cluster
from optsched.core.io import JsonMixin, load_instance, require_fields
from optsched.core.library import instance_path
from optsched.core.limits import MAX_AMOUNT, MAX_ARRIVAL, MAX_COUNT, MAX_SECONDS, MIN_SECONDS, hint
from optsched.core.validation import check_int, check_mapping, check_number
from optsched.exceptions import InvalidInstanceError, UnknownNameError

KIND = "asrpt"
"""The instance kind of this package (``load_instance`` reads it from a file's ``kind``)."""
#: Default first start slot: the paper's t_i in [T] = {1, ..., T} (formulations/asrpt.md#slots).
FIRST_SLOT = 1
ALLREDUCE = ("rar", "tar")
_STAGE_FIELDS = ("k", "p_f", "p_b", "d_in", "d_out", "h")


@dataclass(frozen=True)
class Stage:
    """One pipeline stage of a job.

    Parameters
    ----------
    k : int
        Data-parallel replicas k_{i,s} (= GPUs of the stage), >= 1.
    p_f, p_b : float
        Forward / backward time of one mini-batch on one replica (s), >= 0.
    d_in, d_out : float
        Activations (FP) / gradients (BP) entering / leaving one replica per iteration (bytes), >= 0.
        The first stage's ``d_in`` and the last stage's ``d_out`` are ignored (no neighbour).
    h : float
        Trainable parameters of the stage (bytes), >= 0 (AllReduce volume).
    """

    k: int = 1
    p_f: float = 0.0
    p_b: float = 0.0
    d_in: float = 0.0
    d_out: float = 0.0
    h: float = 0.0

    def validated(self, owner: str) -> Stage:
        return Stage(
            k=check_int(self.k, "k", owner, lo=1, hi=MAX_COUNT, hint=" (replicas of the stage)"),
            p_f=check_number(self.p_f, "p_f", owner, lo=0.0, hi=MAX_SECONDS, hint=hint("seconds")),
            p_b=check_number(self.p_b, "p_b", owner, lo=0.0, hi=MAX_SECONDS, hint=hint("seconds")),
            d_in=check_number(self.d_in, "d_in", owner, lo=0.0, hi=MAX_AMOUNT, hint=hint("bytes")),
            d_out=check_number(self.d_out, "d_out", owner, lo=0.0, hi=MAX_AMOUNT, hint=hint("bytes")),
            h=check_number(self.h, "h", owner, lo=0.0, hi=MAX_AMOUNT, hint=hint("bytes")),
        )

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in _STAGE_FIELDS}


@dataclass(frozen=True)
class AsrptJob:
    """A DDLwMP job (Sec. III-A of the paper).

    ``gpus`` is g_i = sum_s k_{i,s}. ``weight``, ``single_server`` and ``resources`` exist so that the
    shared cluster checks of :mod:`optsched.verify` apply unchanged (weight 1, may span servers).

    Examples
    --------
    >>> j = AsrptJob(0, stages=[Stage(k=2, p_f=0.01, p_b=0.02, h=1e6)], iterations=100)
    >>> j.gpus, j.n_stages
    (2, 1)
    """

    id: int | str
    stages: tuple[Stage, ...]
    iterations: int
    arrival: float = 0.0
    predicted_iterations: int | None = None
    group: int | str | None = None
    user: int | str | None = None
    allreduce: str = "rar"
    attrs: Mapping[str, Any] = field(default_factory=dict)

    weight = 1.0
    single_server = False

    def __post_init__(self) -> None:
        if isinstance(self.id, bool) or not isinstance(self.id, (int, str)):
            raise InvalidInstanceError(f"The 'id' field of a job must be an integer or a string; got {self.id!r}.")
        owner = self.label
        st = self.stages
        if isinstance(st, (str, bytes, Mapping)) or not isinstance(st, Iterable):
            raise InvalidInstanceError(f"The 'stages' field of {owner} must be a list of stages; got {st!r}.")
        stages = []
        for s, x in enumerate(st):
            so = f"stage {s} of {owner}"
            if isinstance(x, Mapping):
                unknown = set(x) - set(_STAGE_FIELDS)
                if unknown:
                    raise InvalidInstanceError(
                        f"{so[:1].upper()}{so[1:]} has unknown field(s) {sorted(unknown)}; "
                        f"allowed: {', '.join(_STAGE_FIELDS)}."
                    )
                x = Stage(**x)
            if not isinstance(x, Stage):
                raise InvalidInstanceError(f"{so[:1].upper()}{so[1:]} must be a Stage or an object; got {x!r}.")
            stages.append(x.validated(so))
        if not stages:
            raise InvalidInstanceError(
                f"The 'stages' field of {owner} is empty; give at least one stage, "
                f'e.g. [{{"k": 1, "p_f": 0.01, "p_b": 0.02}}].'
            )
        for s in range(1, len(stages)):
            a = stages[s - 1].d_out * stages[s - 1].k
            b = stages[s].d_in * stages[s].k
            if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9):
                raise InvalidInstanceError(
                    f"The 'd_in' field of stage {s} of {owner} is {stages[s].d_in:g} bytes, inconsistent with "
                    f"stage {s - 1}: the paper requires 2 d_out[s-1]/k[s] = 2 d_in[s]/k[s-1], i.e. "
                    f"d_in[s] = d_out[s-1] * k[s-1] / k[s] = {a / stages[s].k:g}; fix d_in or d_out."
                )
        object.__setattr__(self, "stages", tuple(stages))
        object.__setattr__(
            self, "iterations", check_int(self.iterations, "iterations", owner, lo=1, hi=MAX_COUNT, hint=hint("count"))
        )
        object.__setattr__(
            self, "arrival", check_number(self.arrival, "arrival", owner, lo=0.0, hi=MAX_ARRIVAL, hint=hint("seconds"))
        )
        if self.predicted_iterations is not None:
            object.__setattr__(
                self,
                "predicted_iterations",
                check_int(
                    self.predicted_iterations,
                    "predicted_iterations",
                    owner,
                    lo=0,
                    hi=MAX_COUNT,
                    hint=" (0 = unseen job), or null",
                ),
            )
        if self.allreduce not in ALLREDUCE:
            raise InvalidInstanceError(
                f"The 'allreduce' field of {owner} must be 'rar' (ring) or 'tar' "
                f"(double binary tree); got {self.allreduce!r}."
            )
        object.__setattr__(self, "attrs", check_mapping(self.attrs, "attrs", owner))

    @property
    def label(self) -> str:
        return f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"

    @property
    def gpus(self) -> int:
        """g_i = sum_s k_{i,s}."""
        return int(sum(s.k for s in self.stages))

    @property
    def n_stages(self) -> int:
        return len(self.stages)

    @property
    def resources(self) -> dict[str, float]:
        return {}

    def predicted(self) -> int:
        """ñ_i: the prediction if set, else the actual n_i (perfect prediction)."""
        return self.iterations if self.predicted_iterations is None else self.predicted_iterations

    def replace(self, **changes: Any) -> AsrptJob:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "arrival": self.arrival,
            "iterations": self.iterations,
            "stages": [s.to_dict() for s in self.stages],
        }
        if self.predicted_iterations is not None:
            d["predicted_iterations"] = self.predicted_iterations
        for f in ("group", "user"):
            if getattr(self, f) is not None:
                d[f] = getattr(self, f)
        if self.allreduce != "rar":
            d["allreduce"] = self.allreduce
        if self.attrs:
            d["attrs"] = dict(self.attrs)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], index: int | None = None) -> AsrptJob:
        owner = f"job at index {index}" if index is not None else "job"
        if not isinstance(d, Mapping):
            raise InvalidInstanceError(f"The {owner} must be an object; got {d!r}.")
        for key in ("id", "stages", "iterations"):
            if key not in d:
                raise InvalidInstanceError(
                    f"The {owner} has no '{key}' field; every asrpt job needs 'id', 'stages' and 'iterations'."
                )
        allowed = {
            "id",
            "stages",
            "iterations",
            "arrival",
            "predicted_iterations",
            "group",
            "user",
            "allreduce",
            "attrs",
        }
        unknown = set(d) - allowed
        if unknown:
            raise InvalidInstanceError(
                f"The {owner} (id {d.get('id')!r}) has unknown field(s) {sorted(unknown)}; "
                f"put free-form data under 'attrs'."
            )
        return cls(**dict(d))


@dataclass(frozen=True)
class AsrptInstance(JsonMixin):
    """M homogeneous servers x g GPUs with bandwidths B_intra, B_inter, and DDLwMP jobs.

    Parameters
    ----------
    cluster : Cluster
        Homogeneous, with ``bandwidth_intra`` and ``bandwidth_inter`` set (bytes/s).
    jobs : sequence of AsrptJob (or dicts)
    slot : float
        Slot length (s) of the time-slotted Problem (8) (default 1).
    known_optima, metadata : mapping
        ``metadata["first_slot"]`` (0 or 1, default 1) sets the slot convention, see :attr:`first_slot`.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> inst.kind, inst.n_jobs, inst.G, inst.g
    ('asrpt', 3, 4, 2)
    """

    cluster: Cluster
    jobs: tuple[AsrptJob, ...]
    name: str = "instance"
    slot: float = 1.0
    known_optima: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    kind = KIND
    #: the unit of every time of the data, the schedules and the objective (docs/conventions.md#time)
    time_unit = "s"

    def __post_init__(self) -> None:
        c = self.cluster
        if not isinstance(c, Cluster):
            raise InvalidInstanceError(f"The 'cluster' field must be a Cluster; got {type(c).__name__}.")
        if not c.is_homogeneous:
            raise InvalidInstanceError(
                f"The 'servers' of an asrpt cluster must all have the same number of GPUs (the paper's M x g "
                f"model); got {[s.gpus for s in c.servers]}. Use Cluster.homogeneous(M, g)."
            )
        for b in ("bandwidth_intra", "bandwidth_inter"):
            if getattr(c, b) is None:
                raise InvalidInstanceError(
                    f"The '{b}' field of the cluster is missing; asrpt needs both "
                    f"bandwidths in bytes/s (e.g. optsched.core.units.gbit_per_s(10))."
                )
            check_number(getattr(c, b), b, "the cluster", lo=1.0, hi=MAX_AMOUNT, hint=hint("bytes/s, at least 1"))
        if isinstance(self.jobs, (str, bytes)) or not isinstance(self.jobs, Iterable):
            raise InvalidInstanceError(f"The 'jobs' field must be a list of jobs; got {self.jobs!r}.")
        jobs = tuple(j if isinstance(j, AsrptJob) else AsrptJob.from_dict(j, i) for i, j in enumerate(self.jobs))
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(
            self,
            "slot",
            check_number(
                self.slot, "slot", "the instance", lo=MIN_SECONDS, hi=MAX_SECONDS, hint=hint("seconds per slot")
            ),
        )
        object.__setattr__(self, "known_optima", check_mapping(self.known_optima, "known_optima", "the instance"))
        object.__setattr__(self, "metadata", check_mapping(self.metadata, "metadata", "the instance"))
        # the paper's M, g, G, read on every event by the policies: computed once (the instance is frozen)
        object.__setattr__(self, "_dims", (c.n_servers, c.max_server_gpus, c.total_gpus))
        fs = self.metadata.get("first_slot", FIRST_SLOT)
        if isinstance(fs, bool) or fs not in (0, 1):
            raise InvalidInstanceError(
                f"The 'first_slot' field of the instance metadata must be 1 (the paper's start slots [T] = "
                f"{{1, ..., T}}) or 0 (start slots {{0, ..., T}}); got {fs!r}."
            )
        seen: set = set()
        for j in jobs:
            if j.id in seen:
                raise InvalidInstanceError(f"Job id {j.id!r} appears twice; job ids must be unique.")
            seen.add(j.id)
            if j.gpus > c.total_gpus:
                raise InvalidInstanceError(
                    f"{j.label} needs {j.gpus} GPUs (sum of its stage replicas 'k'), more than the cluster's "
                    f"{c.total_gpus}; lower 'k' of some stage or add servers."
                )

    # -- the paper's symbols ------------------------------------------------------------------
    @property
    def M(self) -> int:
        return self._dims[0]

    @property
    def g(self) -> int:
        return self._dims[1]

    @property
    def G(self) -> int:
        return self._dims[2]

    @property
    def b_inter(self) -> float:
        return float(self.cluster.bandwidth_inter)

    @property
    def b_intra(self) -> float:
        return float(self.cluster.bandwidth_intra)

    @property
    def first_slot(self) -> int:
        """The first start slot: 1 = the paper's [T] = {1, ..., T} (default), 0 = {0, ..., T} (old).

        A job may start at slot t (time t * slot) only if t >= first_slot and t * slot >= r_i, so the
        earliest start is max(first_slot, ceil(r_i / slot)) slots: with 1, no job starts at time 0
        (equivalently: arrivals at 0 moved one slot). Set with ``metadata={"first_slot": 0}`` or
        :meth:`with_first_slot`. See formulations/asrpt.md#slots.
        """
        return int(self.metadata.get("first_slot", FIRST_SLOT))

    def with_first_slot(self, first_slot: int) -> AsrptInstance:
        """The same instance under the other slot convention (``first_slot`` 0 or 1)."""
        return replace(self, metadata={**dict(self.metadata), "first_slot": first_slot})

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def job_ids(self) -> list:
        return [j.id for j in self.jobs]

    def job(self, job_id) -> AsrptJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise UnknownNameError(f"No job with id {job_id!r} in instance {self.name!r}.")

    def replace(self, **changes: Any) -> AsrptInstance:
        return replace(self, **changes)

    # -- io ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema_version": 1,
            "kind": KIND,
            "name": self.name,
            "cluster": self.cluster.to_dict(),
            "jobs": [j.to_dict() for j in self.jobs],
        }
        if self.slot != 1.0:
            d["slot"] = self.slot
        if self.known_optima:
            d["known_optima"] = dict(self.known_optima)
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AsrptInstance:
        require_fields(d, ("cluster", "jobs"), hint="see optsched/core/schemas/asrpt.schema.json")
        return cls(
            cluster=Cluster.from_dict(d["cluster"]),
            jobs=tuple(AsrptJob.from_dict(j, i) for i, j in enumerate(d["jobs"])),
            name=str(d.get("name", "instance")),
            slot=d.get("slot", 1.0),
            known_optima=d.get("known_optima", {}),
            metadata=d.get("metadata", {}),
        )


def toy_instance(name: str = "asrpt-2x2-three") -> AsrptInstance:
    """Load ``instances/toy/<name>.json`` (validated against the asrpt schema).

    The toy files' known optima were derived with start slots {0, ..., T} (jobs start at t = 0), so a
    toy file that does not set ``metadata.first_slot`` is loaded with ``first_slot = 0``; every other
    instance defaults to the paper's {1, ..., T} (formulations/asrpt.md#slots).

    >>> toy_instance().n_jobs, toy_instance().first_slot
    (3, 0)
    """
    inst = load_instance(instance_path(f"toy:{name}"))
    if "first_slot" not in inst.metadata:
        inst = inst.with_first_slot(0)
    return inst
