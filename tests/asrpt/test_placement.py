"""Heavy-Edge and the exact placement (MILP vs enumeration)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.asrpt.heavy_edge import (
    alpha_min_estimate,
    double_binary_tree_edges,
    heavy_edge,
    job_graph,
    placement_counts,
)
from optsched.asrpt.model import AsrptJob, Stage
from optsched.asrpt.placement import (
    alpha_min_exact,
    build_placement,
    enumerate_placement,
    solve_placement,
)
from optsched.asrpt.profiles import gpt_like, vgg19_like
from optsched.asrpt.timing import alpha, alpha_max
from optsched.exceptions import InfeasibleError
from optsched.solvers import SolveOptions

from .strategies import bandwidths, jobs

OPT = SolveOptions(threads=1, time_limit=30)


@st.composite
def job_and_free(draw):
    job = draw(jobs(max_stages=3, max_k=2))
    n = draw(st.integers(1, 3))
    free = [draw(st.integers(0, 4)) for _ in range(n)]
    free[0] += max(0, job.gpus - sum(free))
    return job, free


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jf=job_and_free(), bw=bandwidths(assume_nvlink=False))
def test_milp_equals_enumeration_and_heavy_edge_is_no_better(jf, bw):
    job, free = jf
    g, bi, ba = bw
    kw = dict(g=g, b_inter=bi, b_intra=ba)
    en = enumerate_placement(job, free, **kw)
    ex = solve_placement(job, free, options=OPT, **kw)
    assert ex.status.value == "optimal"
    assert ex.alpha == pytest.approx(en.alpha, rel=1e-6, abs=1e-6)  # HiGHS feasibility tolerance 1e-6
    assert np.all(ex.x.sum(axis=0) <= np.array(free)) and np.all(ex.x.sum(axis=1) == [s.k for s in job.stages])
    # Heavy-Edge on any exact split of the GPUs is a feasible placement: never below the optimum
    used = ex.x.sum(axis=0)
    mp = heavy_edge(job, list(used), seed=0)
    assert alpha(job, placement_counts(job, mp, len(free)), **kw) >= en.alpha * (1 - 1e-9)


def test_job_graph_weights_rar_and_tar():
    j = AsrptJob(0, [Stage(k=4, h=8.0)], iterations=1)
    G = job_graph(j)
    assert G.number_of_edges() == 4 and all(d["weight"] == pytest.approx(2 * 3 * 8 / 4) for *_, d in G.edges(data=True))
    t = job_graph(j.replace(allreduce="tar"))
    tot = sum(d["weight"] for *_, d in t.edges(data=True))
    assert tot == pytest.approx(len(double_binary_tree_edges(4)) * 3 * 8 / 4)  # (k-1)h/k per tree edge


def test_heavy_edge_reproduces_fig2():
    # Fig. 2: three stages x two replicas on servers with 4, 1, 1 free GPUs; the 20 MB AllReduce edge of
    # stage 1 and its 1 MB neighbours go to the 4-GPU server.
    MB = 1e6
    j = AsrptJob(
        0,
        [
            Stage(k=2, d_out=1 * MB, h=20 * MB),
            Stage(k=2, d_in=1 * MB, d_out=0.5 * MB, h=2 * MB),
            Stage(k=2, d_in=0.5 * MB, h=2 * MB),
        ],
        iterations=1,
    )
    mp = heavy_edge(j, [4, 1, 1])
    assert sorted(v for v, m in mp.items() if m == 0) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    with pytest.raises(Exception, match="exactly g_i"):
        heavy_edge(j, [4, 1])


def test_estimates_are_ordered_on_profiles():
    from optsched.asrpt.model import AsrptInstance
    from optsched.asrpt.profiles import paper_cluster

    for job in (vgg19_like(), gpt_like()):
        inst = AsrptInstance(paper_cluster(2), [job])
        a_min = alpha_min_exact(job, inst, options=OPT)
        assert a_min <= alpha_min_estimate(job, inst) * (1 + 1e-9) <= alpha_max(job, instance=inst) * (1 + 1e-9)


def test_model_components_and_infeasible():
    j = vgg19_like()
    m = build_placement(j, [4, 4], g=8, b_inter=1.25e9, b_intra=3e11)
    for name in ("replicas_placed", "server_capacity", "comp", "comm", "allreduce", "bottleneck", "per_iteration_time"):
        assert hasattr(m, name)
    with pytest.raises(InfeasibleError, match="g_i = 8"):
        solve_placement(j, [3, 3], g=8, b_inter=1.25e9, b_intra=3e11)


@pytest.mark.slow
def test_table2_all_exact_and_cross_checked():
    from optsched.experiments.asrpt.table2 import table2_rows

    rows = table2_rows(n_patterns=20)
    for r in rows:
        assert r["ilp_status"] == "optimal"
        assert r["ilp_pitt_ms"] == pytest.approx(r["enum_pitt_ms"], rel=1e-6)
        assert r["he_pitt_ms"] >= r["ilp_pitt_ms"] * (1 - 1e-9)
