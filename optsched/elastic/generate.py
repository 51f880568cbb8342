"""Random small instances of kind ``elastic`` (for tests, benchmarks and the exact models).

Not the Sec. 7 generator: sizes here are chosen so that the exact models of
(2) and (8) stay small (durations of a few slots).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from optsched.core.seeds import as_generator
from optsched.elastic.constants import guarded_ceil, transfer_ms
from optsched.elastic.model import ElasticInstance
from optsched.elastic.pricing_oracle import least_use_by_index
from optsched.exceptions import InfeasibleError, InvalidOptionError

RESOURCE_NAMES = ("gpu", "cpu", "mem", "disk")


def random_instance(
    n_jobs: int,
    *,
    n_servers: int = 3,
    n_worker_types: int = 2,
    n_ps_types: int = 2,
    n_resources: int = 3,
    max_chunks: int = 4,
    architecture: str = "ps",
    horizon: int | None = None,
    max_arrival: int | None = None,
    slot: float = 60.0,
    seed: Any = None,
    name: str | None = None,
    capacity_scale: float = 1.0,
    weights: str = "small",
    F: float = 2.0,
) -> ElasticInstance:
    """A random instance with integer weights in 1..5 and durations of a few slots.

    Servers have 2-4 GPUs, 8-16 CPUs, 16-64 GB (as many of these resources as ``n_resources``,
    1-4; raised so that one worker and one PS of any types fit); worker types 1-2 GPUs, 1-4 CPUs,
    2-8 GB, 1-5 Gbit/s; PS types 0 GPU, 1-4 CPUs, 2-8 GB, 5-20 Gbit/s. A job has E in 1..3, D in
    1..``max_chunks``, v 10-50 ms, U 0-20 ms, pi 1-10 MB and K set so that one type-0 worker alone
    would need about D..4D slots. ``horizon`` defaults to the serial bound max_j a_j + sum_j (least
    duration of j), which always admits a schedule.
    ``capacity_scale`` multiplies every server capacity (Thm 3's second assumption needs small
    demands). ``weights="resource"`` draws w_j uniformly in [1, F] times the least total resource use
    of any schedule of j (sum over slots, servers and resources), so that 1 <= w_j / sum f(l) <= F
    holds at least for j's leanest schedule (Thm 3's first assumption); the instance then carries F.

    Examples
    --------
    >>> inst = random_instance(4, seed=1)
    >>> inst.n_jobs, inst.H, inst.R
    (4, 3, 3)
    """
    rng = as_generator(seed)
    if not 1 <= n_resources <= len(RESOURCE_NAMES):
        raise InvalidOptionError(f"The 'n_resources' option must be in 1..{len(RESOURCE_NAMES)}; got {n_resources!r}.")
    names = RESOURCE_NAMES[:n_resources]
    cap_rng = {"gpu": (2, 4), "cpu": (8, 16), "mem": (16, 64), "disk": (100, 400)}
    wk_rng = {"gpu": (1, 2), "cpu": (1, 4), "mem": (2, 8), "disk": (10, 50)}
    ps_rng = {"gpu": (0, 0), "cpu": (1, 4), "mem": (2, 8), "disk": (10, 50)}

    def vec(rr: dict) -> dict:
        return {r: int(rng.integers(rr[r][0], rr[r][1] + 1)) for r in names}

    servers = [{"capacity": vec(cap_rng)} for _ in range(n_servers)]
    wts = [{"resources": vec(wk_rng), "bandwidth": float(rng.integers(1, 6))} for _ in range(n_worker_types)]
    for w in wts:
        if not any(v > 0 for v in w["resources"].values()):
            w["resources"][names[0]] = 1
    pts = []
    if architecture == "ps":
        for _ in range(n_ps_types):
            p = {"resources": vec(ps_rng), "bandwidth": float(rng.integers(5, 21))}
            if not any(v > 0 for v in p["resources"].values()):
                p["resources"][names[-1]] = 1
            pts.append(p)
    for r in names:  # one worker of any type and one PS of any type fit on every server
        need = max(w["resources"][r] for w in wts) + max([p["resources"][r] for p in pts] or [0])
        for srv in servers:
            srv["capacity"][r] = max(srv["capacity"][r], need) * capacity_scale
    amax = n_jobs // 2 if max_arrival is None else int(max_arrival)
    jobs = []
    for k in range(n_jobs):
        E, D = int(rng.integers(1, 4)), int(rng.integers(1, max_chunks + 1))
        v = [float(rng.integers(10, 51)) for _ in range(n_worker_types)]
        U: Any = (
            [float(rng.integers(0, 21)) for _ in range(n_ps_types)]
            if architecture == "ps"
            else float(rng.integers(0, 21))
        )
        L = float(rng.uniform(D, 4 * D))  # slots for one type-0 worker on one server
        t0 = v[0] + (U[0] if architecture == "ps" else 0.0)
        K = max(1, int(round(L * 1000.0 * slot / (E * D * t0))))
        jobs.append(
            {
                "id": k,
                "arrival": int(rng.integers(0, amax + 1)),
                "weight": int(rng.integers(1, 6)),
                "epochs": E,
                "chunks": D,
                "minibatches": K,
                "v": v,
                "update": U,
                "grad_mb": float(rng.integers(1, 11)),
            }
        )
    doc = {
        "kind": "elastic",
        "name": name or f"elastic-random-{n_jobs}j-{n_servers}h",
        "architecture": architecture,
        "slot": slot,
        "horizon": 10**6,
        "servers": servers,
        "worker_types": wts,
        "jobs": jobs,
    }
    if pts:
        doc["ps_types"] = pts
    inst = ElasticInstance.from_dict(doc)
    if horizon is None:
        horizon = max(j.arrival for j in inst.jobs) + sum(inst.min_duration(i) for i in range(inst.n_jobs))
    inst = inst.replace(horizon=int(horizon))
    if weights == "resource":
        new = []
        for i, job in enumerate(inst.jobs):
            least = least_use_by_index(inst, i)
            if least is None:
                raise InvalidOptionError(
                    f"weights='resource' needs a schedule of every job within the horizon; job {job.id} has "
                    f"none within horizon={inst.horizon}: raise 'horizon' or leave it None (the serial bound)."
                )
            new.append(replace(job, weight=float(round(least * float(rng.uniform(1.0, F)), 6))))
        inst = inst.replace(jobs=tuple(new), F=float(F) * (1 + 1e-6))
    elif weights != "small":
        raise InvalidOptionError(f"The 'weights' option must be 'small' or 'resource'; got {weights!r}.")
    return inst


# -- Sec. 7 generator ----------------------------------------------------------------------------
#: Resource names of Sec. 7 (R = 3): GPUs, vCPUs and network bandwidth (Gbit/s; b_m = e_m^bandwidth).
SEC7_RESOURCES = ("gpu", "vcpu", "bandwidth")
SEC7_SLOT = 3600.0  # 1-h slots
#: Server shapes: real EC2 P3, P2 and G3 instance types (GPUs, vCPUs, network Gbit/s). "Up to 10
#: Gigabit" is read as 10; p2.xlarge's "High" as 1.25 (pro rata of p2.8xlarge: 10 Gbit/s / 8 GPUs).
EC2_SERVERS = (
    ("p3.2xlarge", 1, 8, 10.0),
    ("p3.8xlarge", 4, 32, 10.0),
    ("p3.16xlarge", 8, 64, 25.0),
    ("p2.xlarge", 1, 4, 1.25),
    ("p2.8xlarge", 8, 32, 10.0),
    ("p2.16xlarge", 16, 64, 25.0),
    ("g3s.xlarge", 1, 4, 10.0),
    ("g3.4xlarge", 1, 16, 10.0),
    ("g3.8xlarge", 2, 32, 10.0),
    ("g3.16xlarge", 4, 64, 25.0),
)
#: The 8 worker types (GPUs, vCPUs, Gbit/s), spanning Sec. 7's ranges 1-4 GPU, 1-16 vCPU,
#: 0.1-5 Gbit/s. Names with "*" are not EC2 types: the pro-rata share of the family's 8xlarge size
#: (AWS sizes: xlarge = 4 vCPU, 2xlarge = 8, 4xlarge = 16), e.g. "p3.4xlarge*" = half a p3.8xlarge
#: (2 V100, 16 vCPU, 5 Gbit/s): our substitute for Fig. 9's "p3.4xlarge", which EC2 does not sell
#: (P3 comes in 2x, 8x, 16x and 24xlarge); Fig. 9's "p2.2xlarge" does not exist either (P2: xlarge,
#: 8x, 16x) and gets the same rule. Real types keep their GPUs and vCPUs; their bandwidth is the
#: pro-rata share too (p3.2xlarge "up to 10" -> 2.5), so every worker stays within 5 Gbit/s.
SEC7_WORKER_TYPES = (
    ("min-1g", 1, 1, 0.1),  # the low end of every range
    ("p2.xlarge", 1, 4, 1.25),
    ("p3.2xlarge", 1, 8, 2.5),
    ("g3.4xlarge", 1, 16, 5.0),
    ("p2.2xlarge*", 2, 8, 2.5),
    ("p3.4xlarge*", 2, 16, 5.0),
    ("p2.3xlarge*", 3, 12, 3.75),
    ("p2.4xlarge*", 4, 16, 5.0),
)
#: The four worker types of Fig. 9 (indices into SEC7_WORKER_TYPES).
FIG9_WORKER_TYPES = ("p3.4xlarge*", "p2.2xlarge*", "p3.2xlarge", "p2.xlarge")
#: The 10 PS types (vCPUs, Gbit/s), 0 GPU, spanning 1-16 vCPU and 5-20 Gbit/s.
SEC7_PS_TYPES = (
    (1, 5.0),
    (2, 5.0),
    (2, 10.0),
    (4, 10.0),
    (4, 15.0),
    (8, 10.0),
    (8, 20.0),
    (12, 15.0),
    (16, 10.0),
    (16, 20.0),
)
#: Sec. 7's ranges: (low, high) of every drawn job field, in the paper's units.
SEC7_RANGES = {
    "weight": (200, 5000),
    "epochs": (50, 100),
    "chunks": (5, 50),
    "minibatches": (10, 50),
    "update_ms": (10.0, 100.0),
    "v_slot": (0.001, 0.05),
    "grad_mb": (30.0, 575.0),
}


def _sec7_iteration_ms(v_ms: float, u_ms: float, grad_mb: float, b: float, architecture: str, n: int) -> float:
    """(1) / (14) with q = 0 (workers spread), as in :meth:`ElasticInstance.iteration_ms`."""
    if architecture == "ps":
        return v_ms + u_ms + 2.0 * transfer_ms(grad_mb, b)
    share = (n - 1) / n
    return v_ms + u_ms * share + 2.0 * transfer_ms(grad_mb, b) * share


def sec7_ideal(job: dict[str, Any], architecture: str) -> tuple[int, int | None, int, dict[str, float]]:
    """The generator's "ideal" configuration of a job: D_j workers (the most (2g) allows) spread over
    servers (q = 0), of the worker type and PS type with the least duration (ties: fewest GPUs, then
    vCPUs), with s = max(1, ceil(D_j b_m / B_p)) PSs. Returns (m, p, s, demand by resource name)."""
    D = job["chunks"]
    work = job["epochs"] * D * job["minibatches"]
    best = None
    ps = range(len(SEC7_PS_TYPES)) if architecture == "ps" else [None]
    for m, (_, g, c, b) in enumerate(SEC7_WORKER_TYPES):
        if not np.isfinite(job["v"][m]):  # a worker type left out of the instance
            continue
        for p in ps:
            u = job["update"][p] if p is not None else job["update"]
            it = _sec7_iteration_ms(job["v"][m], u, job["grad_mb"], b, architecture, D)
            d = guarded_ceil(work * it / (1000.0 * SEC7_SLOT * D))
            s = max(1, guarded_ceil(D * b / SEC7_PS_TYPES[p][1])) if p is not None else 0
            pc = SEC7_PS_TYPES[p][0] * s if p is not None else 0
            key = (d, g * D, c * D + pc)
            if best is None or key < best[0]:
                bw = b * D + (SEC7_PS_TYPES[p][1] * s if p is not None else 0.0)
                best = (key, m, p, s, {"gpu": float(g * D), "vcpu": float(c * D + pc), "bandwidth": bw})
    assert best is not None
    return best[1], best[2], best[3], best[4]


def sec7_instance(
    n_jobs: int,
    *,
    n_servers: int = 150,
    horizon: int = 150,
    architecture: str = "ps",
    F: float | None = None,
    capacity_ratio: float | None = None,
    arrival_window: float = 0.5,
    worker_types: Any = None,
    seed: Any = None,
    name: str | None = None,
) -> ElasticInstance:
    """An instance with the settings of Sec. 7 of the paper.

    Parameters
    ----------
    n_jobs : int
        Number of jobs (>= 1). Sec. 7 does not give it: the reproduction states its own.
    n_servers : int
        H (default 150, Sec. 7).
    horizon : int
        T in slots of 1 h, in [100, 300] (default 150, Sec. 7).
    architecture : {"ps", "rar"}
    F : float, optional
        The weight-to-resource bound F of (11) (>= 1), stored in the instance and used by lambda.
        Default: max_j w_j / L_j with L_j = min over worker type m, PS type p and N <= D_j of
        d_1(N) (N sum_r e_m^r + sum_r z_p^r), a placement-free lower bound on the least total
        resource use of any schedule of j, so F >= the smallest valid F (at least 1).
    capacity_ratio : float, optional
        Sum of the servers' capacity of each resource / sum of the jobs' ideal demand of it, in
        [0.2, 0.5] (Sec. 7: "approximately [0.2, 0.5]"). Default: drawn uniformly in [0.2, 0.5].
    arrival_window : float
        a_j is drawn uniformly among the integers 0..floor(arrival_window T) (Sec. 7 is silent;
        default 0.5), in [0, 1]. 0 is the congested variant: every job arrives at slot 0, where
        jobs must queue (with the default window the best baseline is within a few % of the
        no-queueing lower bound sum_j w_j (a_j + least duration), formulations/elastic.md).
    worker_types : sequence of str, optional
        Names from :data:`SEC7_WORKER_TYPES` to keep (default all 8); e.g. one name of
        :data:`FIG9_WORKER_TYPES` for Fig. 9 ("all jobs employ the same type of workers").
    seed : int, numpy Generator or None

    Returns
    -------
    ElasticInstance
        Slot 3600 s; R = 3 resources ``gpu``, ``vcpu``, ``bandwidth`` (Gbit/s); servers named after
        their EC2 type (:data:`EC2_SERVERS`, round robin: server h has type h mod 10), every
        resource scaled by one factor per resource so that sum_h C_h^r = capacity_ratio x the jobs'
        total ideal demand of r (:func:`sec7_ideal`), GPUs and vCPUs rounded to integers, bandwidth
        to 0.05 Gbit/s, each server at least one smallest worker plus one smallest PS (1 GPU,
        2 vCPU, 5.1 Gbit/s); ``metadata`` records the ratio asked for, the ratio reached per resource
        and every choice below.

    Notes
    -----
    Jobs (Sec. 7 ranges, uniform, independent): w_j integer in [200, 5000]; E_j in [50, 100], D_j in
    [5, 50], K_j in [10, 50] (integers; K_j is mini-batches per data chunk, as in (2f)); U_j^p
    (one per PS type; one U_j for RAR) in [10, 100] ms; v_jm (one per worker type, independent of the
    type's GPUs: the text gives no speed model) in [0.001, 0.05] slot, stored in ms (x 3.6e6);
    pi_j in [30, 575] MB. A job whose least duration on the empty cluster does not fit in
    [a_j, T) is redrawn (all its fields, up to 1000 times), so every job has a configuration that fits
    and finishes within T; the instance is then validated by :class:`ElasticInstance` (which raises
    :class:`~optsched.exceptions.InfeasibleError` otherwise). Deterministic for an int seed.

    Raises
    ------
    InvalidOptionError
        An option out of range (the message names it, its value and the allowed range).

    References
    ----------
    Paper 001, Sec. 7; ``formulations/elastic.md#sec7``.

    Examples
    --------
    >>> inst = sec7_instance(5, n_servers=10, seed=0)
    >>> inst.n_jobs, inst.H, inst.M, inst.P, inst.R, inst.slot, inst.horizon
    (5, 10, 8, 10, 3, 3600.0, 150)
    >>> inst.servers[0].name
    'p3.2xlarge'
    """

    keep = _sec7_checked(n_jobs, n_servers, horizon, architecture, F, capacity_ratio, arrival_window, worker_types)
    rng = as_generator(seed)
    ratio = float(rng.uniform(0.2, 0.5)) if capacity_ratio is None else float(capacity_ratio)
    wts = [SEC7_WORKER_TYPES[m] for m in keep]
    pts = SEC7_PS_TYPES if architecture == "ps" else ()
    drawer = _Sec7Jobs(rng, keep, int(np.floor(arrival_window * horizon)), architecture)
    jobs, ideal = drawer.first_pass(n_jobs, horizon)
    demand = {r: sum(d[r] for d in ideal) for r in SEC7_RESOURCES}
    servers = _sec7_servers(n_servers, ratio, demand, wts, pts)
    redrawn = drawer.second_pass(jobs, servers, wts, pts, horizon)
    reached = {r: sum(s["capacity"][r] for s in servers) / demand[r] for r in SEC7_RESOURCES}
    doc: dict[str, Any] = {
        "kind": "elastic",
        "name": name or f"elastic-sec7-{architecture}-{n_jobs}j-{n_servers}h-T{horizon}",
        "architecture": architecture,
        "slot": SEC7_SLOT,
        "horizon": int(horizon),
        "servers": servers,
        "worker_types": [
            {"name": nm, "resources": {"gpu": g, "vcpu": c, "bandwidth": b}, "bandwidth": b} for nm, g, c, b in wts
        ],
        "jobs": jobs,
        "metadata": {
            "generator": "optsched.elastic.generate.sec7_instance",
            "capacity_ratio": ratio,
            "capacity_ratio_reached": reached,
            "ideal_demand": demand,
            "arrival_window": float(arrival_window),
            "redrawn_on_servers": redrawn,
            "seed": seed if _is_int(seed) else None,
        },
    }
    if architecture == "ps":
        doc["ps_types"] = [
            {"name": f"ps-{c}c-{b:g}g", "resources": {"gpu": 0, "vcpu": c, "bandwidth": b}, "bandwidth": b}
            for c, b in pts
        ]
    doc["F"] = float(_sec7_F(doc) if F is None else F)
    return ElasticInstance.from_dict(doc)


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and np.isfinite(x)


def _sec7_checked(
    n_jobs, n_servers, horizon, architecture, F, capacity_ratio, arrival_window, worker_types
) -> list[int]:
    """:func:`sec7_instance`'s options checked; returns the indices of the worker types kept."""

    def bad(field_: str, value: Any, allowed: str) -> InvalidOptionError:
        return InvalidOptionError(f"The '{field_}' option of sec7_instance must be {allowed}; got {value!r}.")

    if not _is_int(n_jobs) or n_jobs < 1:
        raise bad("n_jobs", n_jobs, "an int >= 1 (Sec. 7 gives no job count; the reproduction uses 10-60)")
    if not _is_int(n_servers) or n_servers < 1:
        raise bad("n_servers", n_servers, "an int >= 1 (H; Sec. 7 default 150)")
    if not _is_int(horizon) or not 100 <= horizon <= 300:
        raise bad("horizon", horizon, "an int in [100, 300] (T in 1-h slots, Sec. 7; default 150)")
    if architecture not in ("ps", "rar"):
        raise bad("architecture", architecture, "'ps' (parameter servers) or 'rar' (Ring-AllReduce)")
    if F is not None and (not _is_num(F) or F < 1):
        raise bad("F", F, "None or a number >= 1 (the weight-to-resource bound of (11))")
    if capacity_ratio is not None and (not _is_num(capacity_ratio) or not 0.2 <= capacity_ratio <= 0.5):
        raise bad("capacity_ratio", capacity_ratio, "None or a number in [0.2, 0.5] (Sec. 7)")
    if not _is_num(arrival_window) or not 0 <= arrival_window <= 1:
        raise bad("arrival_window", arrival_window, "a number in [0, 1] (arrivals in 0..floor(window T); 0: all at 0)")
    names = [w[0] for w in SEC7_WORKER_TYPES]
    if worker_types is None:
        return list(range(len(names)))
    if isinstance(worker_types, str):
        worker_types = [worker_types]
    unknown = [w for w in worker_types if w not in names]
    if unknown or not worker_types:
        raise bad("worker_types", worker_types, f"None or a non-empty list of names from {names}")
    return [names.index(w) for w in worker_types]


class _Sec7Jobs:
    """Draws :func:`sec7_instance`'s jobs (Sec. 7 ranges, uniform, independent) from one generator,
    in the order the two redraw passes ask for them."""

    def __init__(self, rng: np.random.Generator, keep: list[int], a_max: int, architecture: str):
        self.rng, self.keep, self.a_max, self.architecture = rng, keep, a_max, architecture

    def draw(self, k: int) -> dict[str, Any]:
        rng, lo, architecture = self.rng, SEC7_RANGES, self.architecture
        job = {
            "id": k,
            "arrival": int(rng.integers(0, self.a_max + 1)),
            "weight": int(rng.integers(lo["weight"][0], lo["weight"][1] + 1)),
            "epochs": int(rng.integers(lo["epochs"][0], lo["epochs"][1] + 1)),
            "chunks": int(rng.integers(lo["chunks"][0], lo["chunks"][1] + 1)),
            "minibatches": int(rng.integers(lo["minibatches"][0], lo["minibatches"][1] + 1)),
            "v": [
                round(float(rng.uniform(*lo["v_slot"])) * SEC7_SLOT * 1000.0, 3) for _ in range(len(SEC7_WORKER_TYPES))
            ],
            "update": (
                [round(float(rng.uniform(*lo["update_ms"])), 3) for _ in range(len(SEC7_PS_TYPES))]
                if architecture == "ps"
                else round(float(rng.uniform(*lo["update_ms"])), 3)
            ),
            "grad_mb": round(float(rng.uniform(*lo["grad_mb"])), 3),
        }
        job["v"] = [job["v"][m] for m in self.keep]
        return job

    def ideal_of(self, job: dict[str, Any]) -> tuple[int, dict[str, float]]:
        full = dict(job, v=[float("inf")] * len(SEC7_WORKER_TYPES))
        for i, m in enumerate(self.keep):
            full["v"][m] = job["v"][i]
        m_i, p_i, _s, dem = sec7_ideal(full, self.architecture)
        return _sec7_duration(full, m_i, p_i, self.architecture), dem

    def first_pass(self, n_jobs: int, horizon: int) -> tuple[list[dict[str, Any]], list[dict[str, float]]]:
        """Each job drawn until its least duration on an empty, unbounded cluster fits [a_j, T): D_j
        workers spread over servers (q = 0) or all on one server (q = 1, no transfer term); both are
        bounded by the ideal's placement once the servers exist, so the second pass uses the exact
        model. Returns the jobs and each one's ideal demand."""
        jobs: list[dict[str, Any]] = []
        ideal: list[dict[str, float]] = []
        for k in range(n_jobs):
            for _attempt in range(1000):
                job = self.draw(k)
                d_ideal, dem = self.ideal_of(job)
                if job["arrival"] + d_ideal <= horizon:
                    break
            else:
                raise InfeasibleError(
                    f"sec7_instance: job {k} could not be drawn to finish within T = {horizon} in 1000 "
                    f"attempts; raise 'horizon'."
                )
            jobs.append(job)
            ideal.append(dem)
        return jobs, ideal

    def second_pass(self, jobs: list[dict[str, Any]], servers: list, wts: list, pts: tuple, horizon: int) -> int:
        """On the servers just built: a job whose least duration over the placements of
        _least_duration_cheap (a subset of the model's: q = 1, or q = 0 with no worker on the PS
        server) does not fit [a_j, T) is redrawn against these servers, in place (the capacity is
        not rescaled; metadata records the ratio reached and the number of redraws). Returns the
        number of redraws."""
        redrawn = 0
        for k, job in enumerate(jobs):
            d = _least_duration_cheap(servers, wts, pts, job, self.architecture)
            tries = 0
            while d is None or job["arrival"] + d > horizon:
                tries += 1
                redrawn += 1
                if tries > 1000:
                    raise InfeasibleError(
                        f"sec7_instance: job {k} could not be drawn to finish within T = {horizon} on these "
                        f"servers in 1000 attempts; raise 'horizon' or 'capacity_ratio'."
                    )
                job = self.draw(k)
                d = _least_duration_cheap(servers, wts, pts, job, self.architecture)
            jobs[k] = job
        return redrawn


def _sec7_servers(n_servers: int, ratio: float, demand: dict, wts: list, pts: tuple) -> list[dict[str, Any]]:
    """The servers: EC2 types round robin, every resource scaled by one factor so that the cluster
    holds ``ratio`` x the jobs' ideal demand, each at least one smallest worker plus one smallest PS."""
    shapes = [EC2_SERVERS[h % len(EC2_SERVERS)] for h in range(n_servers)]
    totals = {
        "gpu": sum(s[1] for s in shapes),
        "vcpu": sum(s[2] for s in shapes),
        "bandwidth": sum(s[3] for s in shapes),
    }
    scale = {r: ratio * demand[r] / totals[r] for r in SEC7_RESOURCES}
    w_min = {"gpu": min(w[1] for w in wts), "vcpu": min(w[2] for w in wts), "bandwidth": min(w[3] for w in wts)}
    p_min = {"gpu": 0, "vcpu": min((p[0] for p in pts), default=0), "bandwidth": min((p[1] for p in pts), default=0)}
    floor_ = {r: w_min[r] + p_min[r] for r in SEC7_RESOURCES}
    servers = []
    for nm, g, c, b in shapes:
        cap = {
            "gpu": max(floor_["gpu"], int(round(g * scale["gpu"]))),
            "vcpu": max(floor_["vcpu"], int(round(c * scale["vcpu"]))),
            "bandwidth": max(floor_["bandwidth"], round(round(b * scale["bandwidth"] / 0.05) * 0.05, 2)),
        }
        servers.append({"name": nm, "capacity": cap})
    return servers


def _sec7_duration(job: dict[str, Any], m: int, p: int | None, architecture: str) -> int:
    """Duration of the ideal configuration (D_j workers, q = 0), for the redraw test."""
    D = job["chunks"]
    u = job["update"][p] if p is not None else job["update"]
    it = _sec7_iteration_ms(job["v"][m], u, job["grad_mb"], SEC7_WORKER_TYPES[m][3], architecture, D)
    return guarded_ceil(job["epochs"] * D * job["minibatches"] * it / (1000.0 * SEC7_SLOT * D))


def _sec7_duration_q(job: dict[str, Any], wt: tuple, p: int | None, m: int, q: int, n: int, architecture: str) -> int:
    """d_q(N) of (1) / (14) from the raw fields (same formula as :meth:`ElasticInstance.duration`)."""
    u = job["update"][p] if p is not None else job["update"]
    share = 1.0 if architecture == "ps" else (n - 1) / n
    it = job["v"][m] + u * share + (0.0 if q == 1 else 2.0 * transfer_ms(job["grad_mb"], wt[3]) * share)
    return guarded_ceil(job["epochs"] * job["chunks"] * job["minibatches"] * it / (1000.0 * SEC7_SLOT * n))


def _least_duration_cheap(servers: list, wts: list, pts: tuple, job: dict[str, Any], architecture: str) -> int | None:
    """Least d_q(N) over placements that the model's ``placeable`` also accepts: q = 1 (N workers and,
    for PS, one PS on one server), q = 0 with the PSs alone on one server (PS) or over >= 2 servers
    (RAR). A subset of the model's placements, so a job that passes here passes its validation."""
    C = np.array([[s["capacity"][r] for r in SEC7_RESOURCES] for s in servers], dtype=float)

    def count(free: np.ndarray, vec: tuple) -> np.ndarray:
        out = np.full(free.shape[0], 10**9)
        for r, a in enumerate(vec):
            if a > 0:
                out = np.minimum(out, np.floor(free[:, r] / a + 1e-9).astype(np.int64))
        return np.maximum(out, 0)

    best = None
    D = job["chunks"]
    for m, wt in enumerate(wts):
        e = (wt[1], wt[2], wt[3])
        cap = count(C, e)
        total = int(cap.sum())
        for p in range(len(pts)) if architecture == "ps" else [None]:
            if p is not None:
                z = (0, pts[p][0], pts[p][1])
                fit_ps = np.all(np.array(z) - 1e-9 <= C, axis=1)
                cap1 = np.where(fit_ps, count(C - np.array(z), e), 0)
                n_ps = count(C, z)
            for n in range(1, D + 1):
                for q in (1, 0):
                    d = _sec7_duration_q(job, wt, p, m, q, n, architecture)
                    if best is not None and d >= best:
                        continue
                    if p is None:
                        ok = n <= cap.max() if q == 1 else n >= 2 and (cap > 0).sum() >= 2 and total >= n
                    elif q == 1:
                        ok = n <= cap1.max()
                    else:
                        s = max(1, int(np.ceil(n * wt[3] / pts[p][1] - 1e-9)))
                        ok = bool(np.any((n_ps >= s) & (total - cap >= n)))
                    if ok:
                        best = d
    return best


def _sec7_F(doc: dict[str, Any]) -> float:
    """max(1, max_j w_j / L_j), L_j the placement-free lower bound on the least total use (see sec7_instance)."""
    arch = doc["architecture"]
    wts = [(w["name"], w["resources"]["gpu"], w["resources"]["vcpu"], w["bandwidth"]) for w in doc["worker_types"]]
    zs = [sum(p["resources"].values()) for p in doc.get("ps_types", [])]
    best = 1.0
    for job in doc["jobs"]:
        least = float("inf")
        for m, wt in enumerate(wts):
            em = wt[1] + wt[2] + wt[3]
            for p in range(len(zs)) if arch == "ps" else [None]:
                zp = zs[p] if p is not None else 0.0
                for n in range(1, job["chunks"] + 1):
                    least = min(least, _sec7_duration_q(job, wt, p, m, 1, n, arch) * (n * em + zp))
        best = max(best, job["weight"] / least)
    return float(best)
