"""Hypothesis strategies for asrpt jobs, placements and small instances."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
from optsched.core.cluster import Cluster

pos = st.floats(min_value=1e-3, max_value=1.0, allow_nan=False)


@st.composite
def jobs(draw, max_stages=3, max_k=3, allreduce=None, job_id=0, iterations=None, max_bytes=1e9):
    size = st.floats(min_value=0.0, max_value=max_bytes, allow_nan=False)
    S = draw(st.integers(1, max_stages))
    ks = [draw(st.integers(1, max_k)) for _ in range(S)]
    acts = [draw(size) for _ in range(S - 1)]  # whole-batch boundary bytes
    stages = []
    for s, k in enumerate(ks):
        stages.append(
            Stage(
                k=k,
                p_f=draw(pos),
                p_b=draw(pos),
                d_in=acts[s - 1] / k if s > 0 else 0.0,
                d_out=acts[s] / k if s + 1 < S else 0.0,
                h=draw(size),
            )
        )
    ar = allreduce or draw(st.sampled_from(["rar", "tar"]))
    n = iterations if iterations is not None else draw(st.integers(1, 50))
    return AsrptJob(job_id, stages, iterations=n, allreduce=ar)


@st.composite
def bandwidths(draw, assume_nvlink=True):
    """(g, b_inter, b_intra); with ``assume_nvlink`` B_inter <= g B_intra (assumption A)."""
    g = draw(st.integers(1, 8))
    b_inter = draw(st.floats(1e8, 1e11))
    lo = b_inter / g if assume_nvlink else 1e8
    b_intra = draw(st.floats(lo, max(lo * 1.0001, 1e12)))
    return g, b_inter, b_intra


@st.composite
def placements(draw, job, n_servers):
    """A random count matrix for ``job`` on ``n_servers`` servers (no capacity limit)."""
    import numpy as np

    x = np.zeros((job.n_stages, n_servers), dtype=int)
    for s, stg in enumerate(job.stages):
        for _ in range(stg.k):
            x[s, draw(st.integers(0, n_servers - 1))] += 1
    return x


@st.composite
def small_instances(draw, max_jobs=4, M=2, g=2, max_it=20, slot=1.0, max_bytes=1e9, max_arrival=5):
    """Up to ``max_jobs`` jobs of 1-2 stages of 1-2 replicas on ``M`` x ``g`` GPUs, arrivals on the
    integers up to ``max_arrival``, predictions from 0 (unseen) to twice the true iterations.
    An iteration takes at most 2 s of compute plus its transfers (``max_bytes`` over B_inter)."""
    n = draw(st.integers(1, max_jobs))
    js = []
    for i in range(n):
        j = draw(
            jobs(max_stages=2, max_k=2, job_id=i, iterations=draw(st.integers(1, max_it)), max_bytes=max_bytes).filter(
                lambda j: j.gpus <= M * g  # fits the cluster
            )
        )
        pred = draw(st.integers(0, 2 * j.iterations))
        js.append(j.replace(arrival=float(draw(st.integers(0, max_arrival))), predicted_iterations=pred))
    b_inter = draw(st.floats(1e8, 1e10))
    cl = Cluster.homogeneous(M, g, bandwidth_inter=b_inter, bandwidth_intra=draw(st.floats(b_inter, 1e12)))
    return AsrptInstance(cl, js, name="hyp", slot=slot)
