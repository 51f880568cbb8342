"""Random small instances of kind ``elastic`` (for tests, benchmarks and the exact models).

Not the Sec. 7 generator (issue 13, item 8): sizes here are chosen so that the exact models of
(2) and (8) stay small (durations of a few slots).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from optsched.core.seeds import as_generator
from optsched.elastic.model import ElasticInstance

__all__ = ["random_instance", "RESOURCE_NAMES"]

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
        from optsched.exceptions import InvalidOptionError

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
        from optsched.elastic.pricing import Prices, min_cost

        T = inst.horizon
        unit = Prices(np.zeros((T, inst.H, inst.R)), np.ones((T, inst.H, inst.R)))
        new = []
        for i, job in enumerate(inst.jobs):
            least = min_cost(inst, i, unit, residual=False).cost
            new.append(replace(job, weight=float(round(least * float(rng.uniform(1.0, F)), 6))))
        inst = inst.replace(jobs=tuple(new), F=float(F) * (1 + 1e-6))
    elif weights != "small":
        from optsched.exceptions import InvalidOptionError

        raise InvalidOptionError(f"The 'weights' option must be 'small' or 'resource'; got {weights!r}.")
    return inst
