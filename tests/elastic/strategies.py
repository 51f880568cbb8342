"""Hypothesis strategies for small elastic instances, every field drawn (so a failure shrinks)."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.elastic.generate import RESOURCE_NAMES
from optsched.elastic.model import ElasticInstance


@st.composite
def small_instances(
    draw,
    *,
    max_jobs: int = 4,
    max_servers: int = 3,
    architectures=("ps", "rar"),
    max_chunks: int = 3,
    max_horizon: int | None = None,
):
    """A drawn instance (:func:`drawn_instances`) with J <= max_jobs, H <= max_servers, M, P <= 2,
    R in 1..3, arrivals up to J // 2 (the generator's default); ``max_horizon`` shortens the
    horizon to keep the models tiny, never below the serial bound's need of any one job."""
    inst = draw(
        drawn_instances(
            max_jobs=max_jobs,
            max_servers=max_servers,
            architectures=architectures,
            max_chunks=max_chunks,
            max_arrival=max_jobs // 2,
        )
    )
    if max_horizon is not None and inst.horizon > max_horizon:
        # a shorter horizon keeps the models tiny; the serial bound stays feasible only if it fits
        lo = max(j.arrival + inst.min_duration(i) for i, j in enumerate(inst.jobs))
        inst = inst.replace(horizon=max(lo, max_horizon))
    return inst


@st.composite
def drawn_instances(
    draw,
    *,
    max_jobs: int = 5,
    max_servers: int = 3,
    architectures=("ps", "rar"),
    max_chunks: int = 3,
    max_arrival: int = 6,
    n_worker_types: int | None = None,
    n_ps_types: int | None = None,
):
    """An instance drawn field by field (so hypothesis can shrink it), in the ranges of
    :func:`optsched.elastic.generate.random_instance`: capacities, worker and PS types, epochs,
    chunks, speeds, arrivals (ties likely) and weights; one worker and one PS of any type fit on
    every server; the horizon is the serial bound."""
    ints = lambda lo, hi: draw(st.integers(lo, hi))  # noqa: E731
    names = RESOURCE_NAMES[: ints(1, 3)]
    arch = draw(st.sampled_from(architectures))
    M = n_worker_types or ints(1, 2)
    P = (n_ps_types or ints(1, 2)) if arch == "ps" else 0
    cap = {"gpu": (2, 4), "cpu": (8, 16), "mem": (16, 64), "disk": (100, 400)}
    wk = {"gpu": (1, 2), "cpu": (1, 4), "mem": (2, 8), "disk": (10, 50)}
    ps = {"gpu": (0, 0), "cpu": (1, 4), "mem": (2, 8), "disk": (10, 50)}
    servers = [{"capacity": {r: ints(*cap[r]) for r in names}} for _ in range(ints(1, max_servers))]
    wts = [{"resources": {r: ints(*wk[r]) for r in names}, "bandwidth": float(ints(1, 5))} for _ in range(M)]
    pts = [{"resources": {r: ints(*ps[r]) for r in names}, "bandwidth": float(ints(5, 20))} for _ in range(P)]
    for t in pts:
        if not any(t["resources"].values()):
            t["resources"][names[-1]] = 1
    for r in names:
        need = max(w["resources"][r] for w in wts) + max([p["resources"][r] for p in pts] or [0])
        for s in servers:
            s["capacity"][r] = max(s["capacity"][r], need)
    jobs = []
    for k in range(ints(1, max_jobs)):
        E, D = ints(1, 3), ints(1, max_chunks)
        v = [float(ints(10, 50)) for _ in range(M)]
        U = [float(ints(0, 20)) for _ in range(P)] if arch == "ps" else float(ints(0, 20))
        t0 = v[0] + (U[0] if arch == "ps" else 0.0)
        K = max(1, round(ints(D, 4 * D) * 1000.0 / (E * D * t0)))  # one type-0 worker: D..4D slots
        jobs.append(
            {
                "id": k,
                "arrival": ints(0, max_arrival),
                "weight": ints(1, 5),
                "epochs": E,
                "chunks": D,
                "minibatches": K,
                "v": v,
                "update": U,
                "grad_mb": float(ints(1, 10)),
            }
        )
    doc = {
        "kind": "elastic",
        "name": "drawn",
        "architecture": arch,
        "slot": 1.0,
        "horizon": 10**6,
        "servers": servers,
        "worker_types": wts,
        "jobs": jobs,
    }
    if pts:
        doc["ps_types"] = pts
    inst = ElasticInstance.from_dict(doc)
    serial = max(j.arrival for j in inst.jobs) + sum(inst.min_duration(i) for i in range(inst.n_jobs))
    return inst.replace(horizon=serial)
