"""Hypothesis strategies for small elastic instances (seeded generator parameters)."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.elastic.generate import random_instance


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
    """A random instance with J <= max_jobs, H <= max_servers, M, P <= 2, R in 1..3."""
    J = draw(st.integers(1, max_jobs))
    H = draw(st.integers(1, max_servers))
    arch = draw(st.sampled_from(architectures))
    seed = draw(st.integers(0, 10**6))
    inst = random_instance(
        J,
        n_servers=H,
        n_worker_types=draw(st.integers(1, 2)),
        n_ps_types=draw(st.integers(1, 2)),
        n_resources=draw(st.integers(1, 3)),
        max_chunks=max_chunks,
        architecture=arch,
        seed=seed,
    )
    if max_horizon is not None and inst.horizon > max_horizon:
        # a shorter horizon keeps the models tiny; the serial bound stays feasible only if it fits
        lo = max(j.arrival + inst.min_duration(i) for i, j in enumerate(inst.jobs))
        inst = inst.replace(horizon=max(lo, max_horizon))
    return inst
