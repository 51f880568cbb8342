"""Seeded random rigid instances (for tests, the suite, the demo and benchmarks)."""

from __future__ import annotations

from optsched.core.cluster import Cluster
from optsched.core.instance import Instance
from optsched.core.job import Job
from optsched.core.seeds import SeedLike, as_generator
from optsched.core.validation import check_int, check_number
from optsched.exceptions import InvalidOptionError


def random_instance(
    n_jobs: int,
    *,
    n_servers: int = 2,
    gpus_per_server: int = 4,
    max_work: int = 6,
    arrival_span: int = 4,
    single_server: float = 0.0,
    weights: bool = True,
    seed: SeedLike = None,
    name: str | None = None,
) -> Instance:
    """A random rigid instance with integer data (whole slots of 1 s) on ``n_servers`` x
    ``gpus_per_server`` GPUs (default 2 x 4).

    GPU demands are drawn Philly-like from {1, 2, 4, 8} (70/10/15/5 %) capped at the largest
    admissible size; works uniform in 1..max_work; arrivals uniform in 0..arrival_span;
    weights uniform in 1..3 (or all 1); a fraction ``single_server`` of jobs is single-server.

    Examples
    --------
    >>> inst = random_instance(4, seed=1)
    >>> inst.n_jobs, inst.cluster.total_gpus
    (4, 8)
    """
    n = check_int(n_jobs, "n_jobs", "random_instance", lo=0, exc=InvalidOptionError)
    check_int(max_work, "max_work", "random_instance", lo=1, exc=InvalidOptionError)
    check_number(single_server, "single_server", "random_instance", lo=0.0, hi=1.0, exc=InvalidOptionError)
    rng = as_generator(seed)
    cluster = Cluster.homogeneous(n_servers, gpus_per_server)
    sizes, probs = [1, 2, 4, 8], [0.7, 0.1, 0.15, 0.05]
    jobs = []
    for i in range(n):
        single = bool(rng.random() < single_server)
        cap = cluster.max_server_gpus if single else cluster.total_gpus
        g = int(rng.choice(sizes, p=probs))
        g = min(g, cap)
        jobs.append(
            Job(
                i,
                work=int(rng.integers(1, max_work + 1)),
                gpus=g,
                arrival=int(rng.integers(0, arrival_span + 1)),
                weight=int(rng.integers(1, 4)) if weights else 1,
                single_server=single,
            )
        )
    return Instance(
        cluster,
        jobs,
        name=name or f"rigid-random-n{n}-{n_servers}x{gpus_per_server}",
        metadata={"generator": "optsched.rigid.random_instance", "n_jobs": n},
    )
