"""Random small asrpt instances (for property tests, Problem (8) scaling and the demo).

Jobs: a fraction ``single_gpu`` of one-stage one-replica jobs (the PAI trace has ~70 %), the rest
1-3 stages with 1-2 replicas each; per-replica times 0.05-0.3 s, activations and parameters sized so
that the NIC matters (alpha^max / alpha~min between 1 and ~10); iterations so that a job lasts a
few slots; Poisson-like arrivals; predictions = actual +- noise (some unseen = 0).

Tested in ``tests/asrpt/test_vocabulary.py`` and ``tests/asrpt/test_policy_contract.py``.
"""

from __future__ import annotations

from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
from optsched.core.cluster import Cluster
from optsched.core.seeds import SeedLike, as_generator


def random_instance(
    n_jobs: int = 8,
    *,
    n_servers: int = 3,
    gpus_per_server: int = 4,
    single_gpu: float = 0.4,
    max_stages: int = 3,
    max_replicas: int = 2,
    mean_slots: float = 6.0,
    arrival_rate: float = 0.5,
    slot: float = 10.0,
    b_inter: float = 1.25e9,
    b_intra: float = 3e11,
    prediction_noise: float = 0.3,
    unseen: float = 0.1,
    seed: SeedLike = None,
    name: str | None = None,
) -> AsrptInstance:
    """A random instance on ``n_servers`` x ``gpus_per_server`` GPUs (default 3 x 4), deterministic
    for a given seed.

    >>> inst = random_instance(4, n_servers=2, gpus_per_server=2, seed=1)
    >>> inst.n_jobs, inst.G
    (4, 4)
    """
    gpus = gpus_per_server
    rng = as_generator(seed)
    jobs = []
    t = 0.0
    cap = n_servers * gpus
    for i in range(n_jobs):
        if rng.random() < single_gpu:
            ks = [1]
        else:
            S = int(rng.integers(1, max_stages + 1))
            ks = [int(rng.integers(1, max_replicas + 1)) for _ in range(S)]
            if S == 1 and ks[0] == 1:
                ks[0] = 2
            while sum(ks) > cap:
                if max(ks) > 1:
                    ks[ks.index(max(ks))] -= 1
                else:
                    ks.pop()
        stages = []
        act = [float(rng.uniform(5e6, 6e7)) for _ in range(len(ks) - 1)]  # whole-batch bytes
        for s, k in enumerate(ks):
            p = float(rng.uniform(0.05, 0.3))
            stages.append(
                Stage(
                    k=k,
                    p_f=p / 3 / k * k,
                    p_b=2 * p / 3,
                    d_in=act[s - 1] / k if s > 0 else 0.0,
                    d_out=act[s] / k if s + 1 < len(ks) else 0.0,
                    h=float(rng.uniform(1e7, 3e8)) if k > 1 else 0.0,
                )
            )
        job = AsrptJob(i, stages, iterations=1)
        base = max(st.p_f + st.p_b for st in stages)
        n_it = max(1, int(round(rng.uniform(0.3, 1.7) * mean_slots * slot / base)))
        if rng.random() < unseen:
            pred = 0
        else:
            pred = max(0, int(round(n_it * (1 + rng.uniform(-prediction_noise, prediction_noise)))))
        jobs.append(
            job.replace(
                iterations=n_it,
                predicted_iterations=pred,
                arrival=float(round(t / slot) * slot),
                group=f"g{int(rng.integers(0, max(1, n_jobs // 2)))}",
                user=f"u{int(rng.integers(0, 3))}",
            )
        )
        t += float(rng.exponential(slot / arrival_rate))
    cl = Cluster.homogeneous(n_servers, gpus, bandwidth_inter=b_inter, bandwidth_intra=b_intra)
    return AsrptInstance(
        cl,
        jobs,
        name=name or f"asrpt-rand-{n_jobs}x{n_servers}x{gpus}-s{seed}",
        slot=slot,
        metadata={"generator": "optsched.asrpt.generate.random_instance", "seed": str(seed)},
    )
