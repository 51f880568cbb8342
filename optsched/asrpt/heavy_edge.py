"""Heavy-Edge GPU mapping (Sec. IV-B) on the job graph, and the alpha~min estimate.

The job graph Omega = (V, E): one vertex per stage replica ``(s, r)``; between every replica pair
of stages s-1 and s an edge of weight 2 d^out_{s-1} / k_s (= 2 d^in_s / k_{s-1}); inside stage s
the AllReduce edges: a ring with weight 2(k-1)h/k (RAR) or the edges of NCCL-style double binary
trees with weight (k-1)h/k per tree (TAR; an edge in both trees carries both halves).

Tested in ``tests/asrpt/test_placement.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from optsched.asrpt.model import AsrptInstance, AsrptJob
from optsched.asrpt.timing import alpha
from optsched.core.seeds import as_generator
from optsched.exceptions import InvalidInstanceError


def double_binary_tree_edges(k: int) -> list[tuple[int, int]]:
    """Edges of two binary trees over ranks 0..k-1 (heap order, the second shifted by one rank),
    so that, as in NCCL, most leaves of one tree are inner nodes of the other. Repeated edges appear twice.

    >>> double_binary_tree_edges(3)
    [(1, 0), (2, 0), (2, 1), (0, 1)]
    """
    edges = []
    for shift in (0, 1):
        rank = [(i + shift) % k for i in range(k)]
        for i in range(1, k):
            edges.append((rank[i], rank[(i - 1) // 2]))
    return edges


def job_graph(job: AsrptJob):
    """The job graph Omega of Sec. IV-B as a ``networkx.Graph`` (vertices ``(s, r)``, edge attr ``weight`` in bytes).

    Examples
    --------
    >>> from optsched.asrpt.model import AsrptJob, Stage
    >>> j = AsrptJob(0, [Stage(k=2, d_out=5.0, h=20.0), Stage(k=2, d_in=5.0)], iterations=1)
    >>> G = job_graph(j)
    >>> G.number_of_nodes(), G[(0, 0)][(0, 1)]["weight"], G[(0, 0)][(1, 1)]["weight"]
    (4, 20.0, 5.0)
    """
    import networkx as nx

    G = nx.Graph()
    st = job.stages
    for s, x in enumerate(st):
        for r in range(x.k):
            G.add_node((s, r), stage=s)
    for s in range(1, len(st)):
        w = 2.0 * st[s - 1].d_out / st[s].k
        for a in range(st[s - 1].k):
            for b in range(st[s].k):
                G.add_edge((s - 1, a), (s, b), weight=w, kind="activation")
    for s, x in enumerate(st):
        k = x.k
        if k < 2:
            continue
        if job.allreduce == "rar":
            w = 2.0 * (k - 1) * x.h / k
            pairs = [(r, (r + 1) % k) for r in range(k)] if k > 2 else [(0, 1)]
        else:
            w = (k - 1) * x.h / k
            pairs = double_binary_tree_edges(k)
        for a, b in pairs:
            u, v = (s, a), (s, b)
            if G.has_edge(u, v) and G[u][v].get("kind") == "allreduce":
                G[u][v]["weight"] += w
            else:
                G.add_edge(u, v, weight=w, kind="allreduce")
    return G


def heavy_edge(job: AsrptJob, available: Sequence[int] | dict, *, seed=None, graph=None) -> dict:
    """Map the replicas of ``job`` to servers with the Heavy-Edge rule of Sec. IV-B.

    Parameters
    ----------
    job : AsrptJob
    available : sequence of int, or {server: GPUs}
        GPUs this job gets on each server (M_i and g_m); they must add up to g_i.
    seed : int or Generator, optional
        For the random pick when no edge connects the current server's set to an unassigned vertex.

    Returns
    -------
    dict
        ``{(stage, replica): server}``.

    Notes
    -----
    Servers in decreasing order of g_m (ties by index). Per server: all remaining vertices if they
    fit exactly; for a one-GPU server the vertex of least total edge weight; otherwise grow
    ``node_set`` from the heaviest edge among unassigned vertices, then repeatedly add the endpoint
    of the heaviest edge between ``node_set`` and the unassigned vertices. O(|V| |E|) time.

    References
    ----------
    Luo et al., Sec. IV-B and Fig. 2; formulations/asrpt.md#heavy-edge.

    Examples
    --------
    >>> from optsched.asrpt.model import AsrptJob, Stage
    >>> j = AsrptJob(0, [Stage(k=2, d_out=1.0, h=10.0)] + [Stage(k=2, d_in=1.0, d_out=1.0, h=1.0)]
    ...              + [Stage(k=2, d_in=1.0, h=1.0)], iterations=1)
    >>> m = heavy_edge(j, [4, 1, 1])
    >>> sorted(v for v, srv in m.items() if srv == 0)
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    if isinstance(available, dict):
        items = [(int(m), int(c)) for m, c in available.items() if c > 0]
    else:
        items = [(m, int(c)) for m, c in enumerate(available) if c > 0]
    if sum(c for _, c in items) != job.gpus:
        raise InvalidInstanceError(
            f"Heavy-Edge needs exactly g_i = {job.gpus} GPUs for {job.label}; the "
            f"'available' servers offer {sum(c for _, c in items)}. Select servers first."
        )
    rng = as_generator(seed)
    G = job_graph(job) if graph is None else graph
    order = sorted(items, key=lambda mc: (-mc[1], mc[0]))
    unassigned = list(G.nodes)  # deterministic order: (s, r) ascending
    unassigned.sort()
    total_w = {v: sum(d["weight"] for _, _, d in G.edges(v, data=True)) for v in G.nodes}
    out: dict = {}
    for m, cap in order:
        if len(unassigned) == cap:
            chosen = list(unassigned)
        elif cap == 1:
            chosen = [min(unassigned, key=lambda v: (total_w[v], v))]
        else:
            chosen = []
            free = set(unassigned)
            while len(chosen) < cap:
                best = None
                if chosen:
                    for u in chosen:
                        for v, d in G[u].items():
                            if v in free and (best is None or d["weight"] > best[0]):
                                best = (d["weight"], v)
                    if best is not None:
                        chosen.append(best[1])
                        free.discard(best[1])
                        continue
                elif cap - len(chosen) >= 2:
                    for u, v, d in G.edges(data=True):
                        if u in free and v in free and (best is None or d["weight"] > best[0]):
                            best = (d["weight"], u, v)
                    if best is not None:
                        chosen += [best[1], best[2]]
                        free -= {best[1], best[2]}
                        continue
                pool = sorted(free)
                v = pool[int(rng.integers(len(pool)))]
                chosen.append(v)
                free.discard(v)
        for v in chosen:
            out[v] = m
        chosen_set = set(chosen)
        unassigned = [v for v in unassigned if v not in chosen_set]
    return out


def placement_counts(job: AsrptJob, mapping: dict, n_servers: int | None = None) -> np.ndarray:
    """Count matrix x[s, m] of a replica -> server mapping."""
    n = (max(mapping.values()) + 1) if n_servers is None else n_servers
    x = np.zeros((job.n_stages, n), dtype=np.int64)
    for (s, _), m in mapping.items():
        x[s, m] += 1
    return x


def min_server_availability(job: AsrptJob, g: int) -> list[int]:
    """Fewest servers: floor(g_i/g) full servers and one with the remainder g' (Sec. IV-B)."""
    q, rem = divmod(job.gpus, g)
    return [g] * q + ([rem] if rem else [])


def alpha_min_estimate(job: AsrptJob, instance: AsrptInstance, *, seed=0, reading: str = "nic-share") -> float:
    """alpha~min_i: eq. (7) on the Heavy-Edge mapping over the fewest servers (Sec. IV-B).

    Guarantee
    ---------
    alpha^min_i (exact, :func:`optsched.asrpt.placement.alpha_min_exact`) <= alpha~min_i <= alpha^max_i
    when B_inter <= g B_intra.

    Examples
    --------
    >>> from optsched.asrpt import toy_instance
    >>> inst = toy_instance()
    >>> round(alpha_min_estimate(inst.jobs[0], inst), 6)
    0.3
    """
    avail = min_server_availability(job, instance.g)
    mp = heavy_edge(job, avail, seed=seed)
    return alpha(job, placement_counts(job, mp, len(avail)), instance=instance, reading=reading)
