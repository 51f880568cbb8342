"""Random rarddls instances: small ones for exact checks, and the Sec. 7 setting of the paper.

Sec. 7 setting (:func:`paper_instance`): 160 jobs (80 x 1, 14 x 2, 26 x 4, 30 x 8, 8 x 16, 2 x 32 GPUs),
F_j in [1000, 6000], tau_j in [0.01, 0.05] slots, rho^_j in [50, 300] slots, xi_1 = xi_2, lambda_j = 1,
20 servers with O_s uniform in {4, 8, 16, 32}. The paper gives no m_j, b^e, b^i, C, Delta; we pick them
so that the contention + overhead share of tau_j stays within ``extra`` (15 %) of tau_j in the worst
reachable state (p = p_max, min(G_j, S) servers) - see ``formulations/rarddls.md#generator``.

Tested in ``tests/rarddls/test_model.py``.
"""

from __future__ import annotations

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.seeds import as_generator
from optsched.rarddls.model import RarInstance, RarJob

PAPER_SIZES = {1: 80, 2: 14, 4: 26, 8: 30, 16: 8, 32: 2}


def random_instance(
    n_jobs: int,
    *,
    n_servers: int = 2,
    gpus_per_server: int | list[int] = 2,
    seed=None,
    max_iterations: int = 20,
    alpha: float = 0.5,
    xi: float = 1.0,
) -> RarInstance:
    """A small instance: G_j in 1..min(4, N), F_j in [4, max_iterations], a few slots per job.

    >>> random_instance(3, seed=1).n_jobs
    3
    """
    rng = as_generator(seed)
    caps = list(gpus_per_server) if isinstance(gpus_per_server, list) else [int(gpus_per_server)] * n_servers
    N = sum(caps)
    jobs = []
    for i in range(n_jobs):
        G = int(rng.integers(1, min(4, N) + 1))
        F = int(rng.integers(4, max_iterations + 1))
        compute = float(rng.choice([0.1, 0.15, 0.2]))
        grad = float(rng.choice([0.5, 1.0, 2.0]))
        rho_hat = float(rng.integers(2, 9))
        jobs.append(RarJob(i, G, F, grad, compute, rho_hat))
    return RarInstance(
        Cluster(tuple({"gpus": c} for c in caps)),
        tuple(jobs),
        b_e=10.0 * (1 + alpha) * max(caps),
        b_i=1000.0,
        C=100.0,
        xi1=xi,
        xi2=0.05,
        alpha=alpha,
        name=f"random-{n_jobs}j-{len(caps)}s-{seed}",
    )


def slowdown_preset() -> RarInstance:
    """Sec. 1 example from [19]: 4-GPU servers; one 4-GPU job alone on one server takes 295 slots (1 slot =
    1 s); four such jobs each spread over the 4 servers (1 GPU per server, p = 4) take 675 slots each (x2.29).
    Calibrated: phi alone = 135, phi at p = 4 = 59, F = 295 x 135 (b_i, C large, xi_2 = alpha = 0, xi_1 = 1).
    """
    F = 295 * 135
    compute = 1.0 / 135.5
    share_factor = (1.0 / 59.5 - compute) / 8.0  # 2 share f(4) / b_e with b_e = 1, f(4) = 4
    m = share_factor / 0.75
    jobs = tuple(RarJob(i, 4, F, m, compute, 295.0) for i in range(4))
    return RarInstance(
        Cluster(tuple({"gpus": 4} for _ in range(4))),
        jobs,
        b_e=1.0,
        b_i=1e9,
        C=1e9,
        xi1=1.0,
        xi2=0.0,
        alpha=0.0,
        name="sec1-slowdown-preset",
    )


def paper_instance(
    *,
    seed=None,
    n_servers: int = 20,
    extra: float = 0.15,
    lam: float = 1.0,
    horizon: int | None = 1200,
    sizes: dict[int, int] | None = None,
) -> RarInstance:
    """The Sec. 7 workload (160 jobs on ``n_servers`` servers with O_s in {4, 8, 16, 32}).

    Calibration: tau_j^min = Delta_j + xi_2 + (one-server comm) is drawn in [0.01, 0.05]; b^e, C, m_j are set
    so that the worst-case extra time (contention + overhead, p = p_max, min(G_j, S) servers) is at most
    ``extra`` of tau_j^max; xi_1 = xi_2 (as the paper) enter through k_j = max(1, xi_1 p_j) with xi_1 = 1 here,
    and xi_2 in overhead slots. rho^_j = tau_j^min F_j clipped to [50, 300].
    """
    if isinstance(seed, np.random.Generator):
        rng_c, rng = seed, seed
    else:
        ss = np.random.SeedSequence(0 if seed is None else int(seed))
        rng_c, rng = (np.random.default_rng(x) for x in ss.spawn(2))
    sizes = dict(sizes or PAPER_SIZES)
    # servers: the first n_servers of a fixed draw of 40, so clusters of one seed are nested (Fig. 6); jobs
    # come from their own stream and do not depend on n_servers
    caps = [int(x) for x in rng_c.choice([4, 8, 16, 32], size=max(40, n_servers))][:n_servers]
    while sum(caps) < max(sizes):
        caps[caps.index(min(caps))] = 32
    Omax = max(caps)
    alpha = 0.5
    xi = 1.0
    b_e, b_i, C = 1000.0, 20000.0, 20000.0
    fmax = Omax + alpha * (Omax - 1)  # worst f at k = p_max <= max_s O_s
    jobs = []
    i = 0
    for G, count in sizes.items():
        for _ in range(count):
            F = int(rng.integers(1000, 6001))
            base = float(rng.uniform(0.01, 0.05))
            # worst-case extra per iteration: 2 m (G-1)/G * fmax / b_e + xi2 * min(G, S)
            servers = min(G, 20)
            xi2 = 0.0005
            room = max(extra / (1 - extra) * base - xi2 * servers, 0.0)
            m = room * b_e / (2.0 * fmax) * G / max(G - 1, 1) if G > 1 else 1.0
            m = max(m, 1e-6)
            comm_one = 2 * m * (G - 1) / G / b_i + m * (G - 1) / G / C
            compute = max(base - comm_one - xi2, 1e-4)
            rho_hat = float(np.clip(base * F, 50.0, 300.0))
            jobs.append(RarJob(i, G, F, m, compute, rho_hat, lam=lam))
            i += 1
    return RarInstance(
        Cluster(tuple({"gpus": c} for c in caps)),
        tuple(jobs),
        b_e=b_e,
        b_i=b_i,
        C=C,
        xi1=xi,
        xi2=0.0005,
        alpha=alpha,
        horizon=horizon,
        name=f"paper-sec7-{n_servers}s-seed{seed}",
    )
