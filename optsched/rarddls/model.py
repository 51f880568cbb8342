"""System model of paper 002 (RAR-DDLS): ring-all-reduce jobs under communication contention.

Instance kind ``"rarddls"``. Time is in slots. A job j asks for G_j GPUs (``gpus``) and F_j
iterations (``iterations``); its gradient has m_j data units (``grad_size``); one iteration
computes for Delta_j = Delta^f_j M_j + Delta^b_j slots (``compute``); ``rho_hat`` is the
estimated execution time rho^_j (slots) known before placement; ``lam`` is lambda_j >= 1 of
LBSGF. The cluster has servers with O_s GPUs; ``b_e`` / ``b_i`` are the inter / intra-server
bandwidths and ``C`` the reduction speed (data units per slot); ``xi1``, ``xi2``, ``alpha``
are the contention, overhead and degradation constants of (7), (8) and f.

The per-iteration time (8) of job j spanning ``r`` servers at contention count ``p`` (6) is
:meth:`RarInstance.tau`; its iterations per slot phi_j = floor(1/tau) are :meth:`RarInstance.phi`.
The readings of the garbled parts ((5), (6), (7), (8), (9)) are in ``formulations/rarddls.md``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from optsched.core.cluster import Cluster
from optsched.core.io import JsonMixin, load_instance, require_fields
from optsched.core.library import instance_path
from optsched.core.limits import MAX_AMOUNT, MAX_COUNT, MAX_SLOTS, check_slots, hint
from optsched.core.validation import check_int, check_mapping, check_number
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, OptschedWarning

KIND = "rarddls"
"""The instance kind of this package (``load_instance`` reads it from a file's ``kind``)."""
OBJECTIVE = "makespan"
"""The objective of problem RAR-DDLS: the makespan (in slots)."""
#: (7) readings: ``max1`` k = max(1, xi1 p) (default); ``affine`` k = 1 + xi1 (p - 1);
#: ``printed`` k = xi1 p (only if f stays positive).
K_READINGS = ("max1", "affine", "printed")
#: (8) overhead readings: ``servers`` gamma = xi2 * servers used (printed); ``servers_minus_1``.
GAMMA_READINGS = ("servers", "servers_minus_1")
EPS = 1e-9


def linear_f(alpha: float) -> Callable[[float], float]:
    """The paper's example degradation factor f(alpha, k) = k + alpha (k - 1)."""

    def f(k: float) -> float:
        return k + alpha * (k - 1.0)

    f.linear_alpha = alpha  # type: ignore[attr-defined]
    return f


@dataclass(frozen=True)
class RarJob:
    """One RAR training job (Sec. 4.1).

    ``arrival``, ``weight``, ``single_server`` and ``resources`` exist so the shared cluster checks
    of :mod:`optsched.verify` apply unchanged (all jobs wait at time 0, may span servers).

    Examples
    --------
    >>> j = RarJob(0, gpus=2, iterations=100, grad_size=1.0, compute=0.02, rho_hat=3.0)
    >>> j.gpus, j.lam
    (2, 1.0)
    """

    id: int | str
    gpus: int
    iterations: int
    grad_size: float
    compute: float
    rho_hat: float
    lam: float = 1.0

    arrival = 0.0
    weight = 1.0
    single_server = False

    def __post_init__(self) -> None:
        if isinstance(self.id, bool) or not isinstance(self.id, (int, str)):
            raise InvalidInstanceError(f"The 'id' field of a job must be an integer or a string; got {self.id!r}.")
        o = self.label
        object.__setattr__(self, "gpus", check_int(self.gpus, "gpus", o, lo=1, hi=MAX_COUNT, hint=hint("G_j")))
        object.__setattr__(
            self, "iterations", check_int(self.iterations, "iterations", o, lo=1, hi=MAX_COUNT, hint=hint("F_j"))
        )
        object.__setattr__(
            self,
            "grad_size",
            check_number(
                self.grad_size, "grad_size", o, lo=0.0, lo_open=True, hi=MAX_AMOUNT, hint=hint("m_j, data units")
            ),
        )
        object.__setattr__(
            self,
            "compute",
            check_number(self.compute, "compute", o, lo=0.0, hint=" (Delta_j = Delta^f M + Delta^b, slots)"),
        )
        object.__setattr__(
            self,
            "rho_hat",
            check_number(
                self.rho_hat,
                "rho_hat",
                o,
                lo=0.0,
                lo_open=True,
                hi=MAX_SLOTS[KIND],
                hint=hint("estimated execution time, slots"),
            ),
        )
        object.__setattr__(
            self, "lam", check_number(self.lam, "lam", o, lo=1.0, hi=MAX_COUNT, hint=" (lambda_j of LBSGF)")
        )

    @property
    def label(self) -> str:
        return f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"

    @property
    def resources(self) -> dict[str, float]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "gpus": self.gpus,
            "iterations": self.iterations,
            "grad_size": self.grad_size,
            "compute": self.compute,
            "rho_hat": self.rho_hat,
        }
        if self.lam != 1.0:
            d["lam"] = self.lam
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], index: int | None = None) -> RarJob:
        owner = f"job at index {index}" if index is not None else "job"
        if not isinstance(d, Mapping):
            raise InvalidInstanceError(f"The {owner} must be an object; got {d!r}.")
        need = ("id", "gpus", "iterations", "grad_size", "compute", "rho_hat")
        for key in need:
            if key not in d:
                raise InvalidInstanceError(
                    f"The {owner} has no '{key}' field; every rarddls job needs {', '.join(need)}."
                )
        unknown = set(d) - set(need) - {"lam"}
        if unknown:
            raise InvalidInstanceError(
                f"The {owner} has unknown field(s) {sorted(unknown)}; allowed: {', '.join(need)}, lam."
            )
        return cls(**dict(d))


@dataclass(frozen=True)
class RarInstance(JsonMixin):
    """Servers with O_s GPUs, the network constants of (7)-(8) and RAR jobs.

    Parameters
    ----------
    cluster : Cluster
        Servers (``gpus`` = O_s, may differ).
    jobs : sequence of RarJob (or dicts)
    b_e, b_i : float
        Inter- and intra-server bandwidth (data units per slot), > 0. b_i < b_e warns.
    C : float
        Reduction speed of a GPU (data units per slot), > 0.
    xi1 : float
        Contention constant of (7), in (0, 1].
    xi2 : float
        Overhead per server of (8), slots, >= 0.
    alpha : float
        Degradation parameter of f(alpha, k) = k + alpha (k - 1), >= 0.
    f : callable, optional
        Any degradation factor k -> f(k) with f(1) = 1, increasing (replaces the linear f; such an
        instance cannot be written to JSON).
    k_reading, gamma_reading : str
        Readings of (7) and (8) (see ``formulations/rarddls.md#readings``).
    horizon : int, optional
        T (slots) for SJF-BCO's bisection; default: the serial bound :meth:`serial_horizon`.
    slot : float
        Seconds per slot (default 1). The model is stated in slots (phi_j = floor(1 / tau_j) iterations per
        slot), so every time of the data, the schedules and the makespan is a slot count; ``slot`` converts
        them to seconds (:meth:`seconds`), as ``time_unit = "slot"`` says (docs/conventions.md#time).

    Examples
    --------
    >>> inst = RarInstance(Cluster.homogeneous(2, 2), [RarJob(0, 2, 10, 1.0, 0.1, 2.0)],
    ...                    b_e=10.0, b_i=100.0, C=100.0, xi1=1.0, xi2=0.05, alpha=0.0)
    >>> round(inst.tau(0, 1, 0), 6), inst.phi(0, 1, 0), round(inst.tau(0, 2, 1), 6), inst.phi(0, 2, 1)
    (0.165, 6, 0.305, 3)
    """

    cluster: Cluster
    jobs: tuple[RarJob, ...]
    b_e: float = 1.0
    b_i: float = 10.0
    C: float = 10.0
    xi1: float = 1.0
    xi2: float = 0.0
    alpha: float = 0.0
    f: Callable[[float], float] | None = None
    k_reading: str = "max1"
    gamma_reading: str = "servers"
    horizon: int | None = None
    slot: float = 1.0
    name: str = "instance"
    known_optima: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    kind = KIND
    #: the unit of every time of the data, the schedules and the objective (docs/conventions.md#time)
    time_unit = "slot"

    def __post_init__(self) -> None:
        c = self.cluster
        if not isinstance(c, Cluster):
            raise InvalidInstanceError(f"The 'cluster' field must be a Cluster; got {type(c).__name__}.")
        if any(s.gpus < 1 for s in c.servers):
            raise InvalidInstanceError(f"Every server needs 'gpus' (O_s) >= 1; got {[s.gpus for s in c.servers]}.")
        if isinstance(self.jobs, (str, bytes)) or not isinstance(self.jobs, Iterable):
            raise InvalidInstanceError(f"The 'jobs' field must be a list of jobs; got {self.jobs!r}.")
        jobs = tuple(j if isinstance(j, RarJob) else RarJob.from_dict(j, i) for i, j in enumerate(self.jobs))
        if not jobs:
            raise InvalidInstanceError("The 'jobs' field is empty; give at least one job.")
        object.__setattr__(self, "jobs", jobs)
        o = "the instance"
        pos = dict(lo=0.0, lo_open=True, hi=MAX_AMOUNT, hint=hint("data units per slot"))
        object.__setattr__(self, "b_e", check_number(self.b_e, "b_e", o, **pos))
        object.__setattr__(self, "b_i", check_number(self.b_i, "b_i", o, **pos))
        object.__setattr__(self, "C", check_number(self.C, "C", o, **pos))
        object.__setattr__(
            self,
            "xi1",
            check_number(self.xi1, "xi1", o, lo=0.0, lo_open=True, hi=1.0, hint=" (the paper's xi_1 in (0, 1])"),
        )
        object.__setattr__(
            self, "xi2", check_number(self.xi2, "xi2", o, lo=0.0, hi=MAX_AMOUNT, hint=hint("slots per server"))
        )
        object.__setattr__(self, "alpha", check_number(self.alpha, "alpha", o, lo=0.0, hi=MAX_AMOUNT))
        if self.k_reading not in K_READINGS:
            raise InvalidInstanceError(f"The 'k_reading' field must be one of {K_READINGS}; got {self.k_reading!r}.")
        if self.gamma_reading not in GAMMA_READINGS:
            raise InvalidInstanceError(
                f"The 'gamma_reading' field must be one of {GAMMA_READINGS}; got {self.gamma_reading!r}."
            )
        if self.f is not None and not callable(self.f):
            raise InvalidInstanceError(f"The 'f' field must be a callable k -> f(k) or None; got {self.f!r}.")
        if self.horizon is not None:
            object.__setattr__(
                self, "horizon", check_int(self.horizon, "horizon", o, lo=1, hi=MAX_SLOTS[KIND], hint=hint("T, slots"))
            )
        object.__setattr__(
            self, "slot", check_number(self.slot, "slot", o, lo=0.0, lo_open=True, hint=" (seconds per slot)")
        )
        object.__setattr__(self, "known_optima", check_mapping(self.known_optima, "known_optima", o))
        object.__setattr__(self, "metadata", check_mapping(self.metadata, "metadata", o))
        seen: set = set()
        N = c.total_gpus
        for j in jobs:
            if j.id in seen:
                raise InvalidInstanceError(f"Job id {j.id!r} appears twice; job ids must be unique.")
            seen.add(j.id)
            if j.gpus > N:
                raise InvalidInstanceError(
                    f"The 'gpus' field of {j.label} must be an integer in [1, {N}] (the "
                    f"cluster's GPUs); got {j.gpus}. Lower it or add servers."
                )
        self._check_f()
        for i, j in enumerate(jobs):
            tmax = self.tau_range(i)[1]
            if self.phi_of_tau(tmax) < 1:
                raise InvalidInstanceError(
                    f"{j.label} can reach a state with tau_j = {tmax:.4g} slots >= 1, so phi_j = floor(1/tau_j) = 0 "
                    f"iterations per slot and it never finishes; use a finer slot (scale 'compute', 'xi2' and "
                    f"'rho_hat' up and 'b_e', 'b_i', 'C' down) or lower 'grad_size'/'compute'."
                )
        longest = [self.rho_range(i)[1] for i in range(len(jobs))]
        big = max(range(len(jobs)), key=longest.__getitem__)
        check_slots(
            KIND,
            sum(longest),
            "the serial horizon: the sum of the jobs' longest execution times ceil(F_j / phi_j^min)",
            f"{jobs[big].label} alone may take {longest[big]:,} slots ('iterations' {jobs[big].iterations:,}); "
            f"lower the jobs' 'iterations' or use longer slots",
            exc=InvalidInstanceError,
        )
        if self.b_i < self.b_e:
            warnings.warn(
                f"b_i = {self.b_i:g} < b_e = {self.b_e:g}: intra-server links slower than the network "
                f"(the paper assumes b_i >> b_e).",
                OptschedWarning,
                stacklevel=3,
            )

    # -- (7) and f --------------------------------------------------------------------------
    def fk(self, k: float) -> float:
        """The degradation factor f(alpha, k)."""
        return float(self.f(k)) if self.f is not None else k + self.alpha * (k - 1.0)

    def k_of_p(self, p: int) -> float:
        """(7) k_j = reading(xi1, p_j) for a split job with contention count p >= 1."""
        if self.k_reading == "max1":
            return max(1.0, self.xi1 * p)
        if self.k_reading == "affine":
            return 1.0 + self.xi1 * (p - 1)
        return self.xi1 * p

    @cached_property
    def p_max(self) -> int:
        """Largest reachable contention count (6): min(max_s O_s, number of jobs that can split)."""
        n_split = sum(1 for j in self.jobs if j.gpus >= 2) if self.cluster.n_servers >= 2 else 0
        return max(1, min(self.cluster.max_server_gpus, n_split))

    def _check_f(self) -> None:
        if abs(self.fk(1.0) - 1.0) > 1e-9:
            raise InvalidInstanceError(
                f"The degradation factor must satisfy f(1) = 1; got f(1) = {self.fk(1.0)!r}. "
                f"Use e.g. f(k) = k + alpha (k - 1)."
            )
        ks = sorted({self.k_of_p(p) for p in range(1, max(self.cluster.max_server_gpus, 1) + 1)})
        vals = [self.fk(k) for k in ks]
        if any(v <= 0 for v in vals):
            raise InvalidInstanceError(
                f"f(alpha, k) <= 0 at k = {ks[[v <= 0 for v in vals].index(True)]:g} (k_reading "
                f"{self.k_reading!r}, xi1 = {self.xi1:g}, alpha = {self.alpha:g}): with k = xi1 p the linear f is <= 0 "
                f"once alpha >= xi1 / (1 - xi1); use k_reading 'max1' or 'affine', or a smaller alpha."
            )
        for (k1, v1), (k2, v2) in zip(zip(ks, vals, strict=True), zip(ks[1:], vals[1:], strict=True), strict=False):
            if v2 <= v1:
                raise InvalidInstanceError(
                    f"The degradation factor f must be increasing in k; got f({k1:g}) = {v1:g} >= f({k2:g}) = {v2:g}."
                )

    # -- (8), (9) -----------------------------------------------------------------------------
    def tau(self, j: int, servers: int, p: int) -> float:
        """(8) per-iteration time (slots) of job index ``j`` on ``servers`` servers at contention count ``p``
        ((6); ignored on one server, where B_j = b_i)."""
        job = self.jobs[j]
        w = job.gpus
        if servers <= 1:
            B = self.b_i
        else:
            B = self.b_e / self.fk(self.k_of_p(max(1, p)))
        share = job.grad_size * (w - 1) / w
        r = max(1, servers)
        gamma = self.xi2 * (r if self.gamma_reading == "servers" else r - 1)
        return 2.0 * share / B + share / self.C + gamma + job.compute

    @staticmethod
    def phi_of_tau(tau: float) -> int:
        """(9) phi = floor(1/tau) iterations per slot (1e-9 guard against 1/(1/n) rounding below n)."""
        return int(math.floor(1.0 / tau + EPS))

    def phi(self, j: int, servers: int, p: int) -> int:
        """(9) iterations per slot of job index ``j`` on ``servers`` servers at contention count ``p``."""
        return self.phi_of_tau(self.tau(j, servers, p))

    @cached_property
    def phi_table(self) -> list[list[list[int]]]:
        """``phi_table[j][r][p]`` = :meth:`phi` ``(j, r, p)`` for r = 0..min(G_j, S) servers, p = 0..p_max (cached)."""
        out = []
        for j in range(self.n_jobs):
            rmax = min(self.jobs[j].gpus, self.cluster.n_servers)
            out.append([[self.phi(j, r, p) for p in range(self.p_max + 1)] for r in range(rmax + 1)])
        return out

    def states(self, j: int) -> list[tuple[int, int]]:
        """Every reachable (servers, p) of job index ``j`` (p = 0 on one server)."""
        rmax = min(self.jobs[j].gpus, self.cluster.n_servers)
        return [(1, 0)] + [(r, p) for r in range(2, rmax + 1) for p in range(1, self.p_max + 1)]

    def tau_range(self, j: int) -> tuple[float, float]:
        """tau_j^min and tau_j^max over every reachable state (one server; 2..min(G_j, |S|) servers at
        p = 1..p_max)."""
        ts = [self.tau(j, r, p) for r, p in self.states(j)]
        return min(ts), max(ts)

    def rho_range(self, j: int) -> tuple[int, int]:
        """Execution time bounds in slots: ceil(F_j / phi_max), ceil(F_j / phi_min)."""
        tmin, tmax = self.tau_range(j)
        F = self.jobs[j].iterations
        return -(-F // self.phi_of_tau(tmin)), -(-F // self.phi_of_tau(tmax))

    @cached_property
    def u(self) -> float:
        """u = max(1, max_j rho^_j / rho_j^min): rho^ <= u rho for every placement (a priori)."""
        return max(1.0, max(j.rho_hat / self.rho_range(i)[0] for i, j in enumerate(self.jobs)))

    @cached_property
    def l(self) -> float:  # noqa: E743 - the paper's symbol
        """l = min(1, min_j rho^_j / rho_j^max): rho^ >= l rho for every placement (a priori)."""
        return min(1.0, min(j.rho_hat / self.rho_range(i)[1] for i, j in enumerate(self.jobs)))

    @cached_property
    def varphi(self) -> float:
        """phi of Lemma 4: max_j rho_j^max / rho_j^min (a priori)."""
        return max(hi / lo for lo, hi in (self.rho_range(i) for i in range(self.n_jobs)))

    def serial_horizon(self) -> int:
        """Sum of rho_j^max: running the jobs one after another never takes longer."""
        return int(sum(self.rho_range(i)[1] for i in range(self.n_jobs)))

    # -- the paper's symbols ------------------------------------------------------------------
    @property
    def O(self) -> list[int]:  # noqa: E743
        return [int(s.gpus) for s in self.cluster.servers]

    @property
    def N(self) -> int:
        return self.cluster.total_gpus

    @property
    def n_g(self) -> int:
        return max(j.gpus for j in self.jobs)

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def job_ids(self) -> list:
        return [j.id for j in self.jobs]

    def index(self, job_id) -> int:
        for i, j in enumerate(self.jobs):
            if j.id == job_id:
                return i
        raise KeyError(f"No job with id {job_id!r} in instance {self.name!r}.")

    def job(self, job_id) -> RarJob:
        return self.jobs[self.index(job_id)]

    def T(self) -> int:
        """The horizon T used by SJF-BCO: ``horizon`` if set, else :meth:`serial_horizon`."""
        return int(self.horizon) if self.horizon is not None else self.serial_horizon()

    def seconds(self, slots: float) -> float:
        """A time in slots (start, completion, makespan, rho^_j, ...) in seconds: ``slots * slot``.

        >>> from optsched.rarddls import toy_instance
        >>> toy_instance().replace(slot=60.0).seconds(9)
        540.0
        """
        return float(slots) * self.slot

    def replace(self, **changes: Any) -> RarInstance:
        return replace(self, **changes)

    def without(self, job_id) -> RarInstance:
        """The instance minus one job."""
        return self.replace(jobs=tuple(j for j in self.jobs if j.id != job_id))

    # -- io ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        if self.f is not None and getattr(self.f, "linear_alpha", None) is None:
            raise InvalidOptionError(
                "This instance has a custom degradation factor 'f' (a Python callable), which "
                "JSON cannot hold; use the linear f (alpha) to save it."
            )
        d: dict[str, Any] = {
            "schema_version": 1,
            "kind": KIND,
            "name": self.name,
            "cluster": self.cluster.to_dict(),
            "b_e": self.b_e,
            "b_i": self.b_i,
            "C": self.C,
            "xi1": self.xi1,
            "xi2": self.xi2,
            "alpha": self.alpha,
            "jobs": [j.to_dict() for j in self.jobs],
        }
        if self.k_reading != "max1":
            d["k_reading"] = self.k_reading
        if self.gamma_reading != "servers":
            d["gamma_reading"] = self.gamma_reading
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
    def from_dict(cls, d: Mapping[str, Any]) -> RarInstance:
        require_fields(d, ("cluster", "jobs"), hint="see optsched/core/schemas/rarddls.schema.json")
        kw = {
            k: d[k]
            for k in ("b_e", "b_i", "C", "xi1", "xi2", "alpha", "k_reading", "gamma_reading", "horizon", "slot")
            if k in d
        }
        return cls(
            cluster=Cluster.from_dict(d["cluster"]),
            jobs=tuple(RarJob.from_dict(j, i) for i, j in enumerate(d["jobs"])),
            name=str(d.get("name", "instance")),
            known_optima=d.get("known_optima", {}),
            metadata=d.get("metadata", {}),
            **kw,
        )


def toy_instance(name: str = "rarddls-2x2-three") -> RarInstance:
    """Load ``toy:<name>`` from the instance library.

    >>> toy_instance().n_jobs
    3
    """
    return load_instance(instance_path(f"toy:{name}"))
