"""Random workloads of Sec. IV-A2 (Tables I-III) and a few toy generators.

Workload set (Table III): 1 uniform sizes / uniform success; 2 uniform / distribution I
(Table I); 3 uniform / distribution II (Table II); 4 exponential / uniform; 5 Weibull(0.5) / uniform.

Tested in ``tests/sojourn/test_evaluate.py``.
"""

from __future__ import annotations

import numpy as np

from optsched.core.seeds import SeedLike, as_generator
from optsched.exceptions import InvalidOptionError
from optsched.sojourn.evaluate import pair_costs
from optsched.sojourn.model import SojournInstance, StagedJob

_VALUES = np.round(np.arange(1, 10) / 10, 1)
#: Table I (final success probability, workload set 2).
DIST_I = np.array([0.2, 0.15, 0.1, 0.05, 0.0, 0.05, 0.1, 0.15, 0.2])
#: Table II (final success probability, workload set 3).
DIST_II = np.array([0.025, 0.05, 0.1, 0.15, 0.35, 0.15, 0.1, 0.05, 0.025])
#: Table III: workload set -> (stage-size distribution, success-probability distribution).
WORKLOADS = {
    1: ("uniform", "uniform"),
    2: ("uniform", "I"),
    3: ("uniform", "II"),
    4: ("exponential", "uniform"),
    5: ("weibull", "uniform"),
    # not in the paper: success probability uniform over {0.1, ..., 0.9}, ignoring the weights
    # of Tables I-II. It reproduces the paper's Tables V-VI and X-XI (see formulations/sojourn.md#workloads)
    23: ("uniform", "U9"),
}


def draw_success(dist: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """Final success probabilities: ``uniform`` U[1e-5, 1 - 1e-5], ``I`` (Table I), ``II`` (Table II),
    ``U9`` (uniform over the nine values 0.1..0.9)."""
    if dist == "uniform":
        return rng.uniform(1e-5, 1 - 1e-5, size)
    if dist == "U9":
        return rng.choice(_VALUES, size=size)
    if dist in ("I", "II"):
        return rng.choice(_VALUES, size=size, p=DIST_I if dist == "I" else DIST_II)
    raise InvalidOptionError(f"Unknown success-probability distribution {dist!r}; use 'uniform', 'I', 'II' or 'U9'.")


def draw_stage_lengths(dist: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Stage lengths: ``uniform`` U(0, 1], ``exponential`` (mean 1), ``weibull`` (shape 0.5, scale 1)."""
    if dist == "uniform":
        x = 1.0 - rng.random(shape)  # (0, 1]: never a zero-length stage
    elif dist == "exponential":
        x = rng.exponential(1.0, shape)
    elif dist == "weibull":
        x = rng.weibull(0.5, shape)
    else:
        raise InvalidOptionError(
            f"Unknown stage-size distribution {dist!r}; use 'uniform', 'exponential' or 'weibull'."
        )
    return np.maximum(x, 1e-12)


def workload(
    set_id: int, n: int, seed: SeedLike = None, *, stages: int = 2, name: str | None = None
) -> SojournInstance:
    """One trial of workload set ``set_id`` (Table III) with ``n`` jobs of ``stages`` stages.

    Sizes are cumulative sums of i.i.d. stage lengths; the final success probability ``s`` is
    drawn from the set's distribution; the early-termination mass ``1 - s`` is split over the
    ``stages - 1`` checkpoints by a flat Dirichlet (the paper does not say how; for 2 stages
    there is no choice). See ``formulations/sojourn.md#workloads``.

    Examples
    --------
    >>> inst = workload(1, 4, seed=0)
    >>> inst.n_jobs, inst.jobs[0].n_stages
    (4, 2)
    """
    if set_id not in WORKLOADS:
        raise InvalidOptionError(f"The workload set must be one of {sorted(WORKLOADS)} (Table III); got {set_id!r}.")
    if stages < 1:
        raise InvalidOptionError(f"The 'stages' option must be >= 1; got {stages!r}.")
    rng = as_generator(seed)
    size_dist, succ_dist = WORKLOADS[set_id]
    s = draw_success(succ_dist, n, rng)
    lengths = draw_stage_lengths(size_dist, (n, stages), rng)
    sizes = np.cumsum(lengths, axis=1)
    if stages > 1:
        split = rng.dirichlet(np.ones(stages - 1), size=n)
        probs = np.column_stack([split * (1 - s)[:, None], s])
    else:
        probs = np.ones((n, 1))
    jobs = []
    for k in range(n):
        p = probs[k].copy()
        p = np.maximum(p, 1e-300)  # a Dirichlet component can underflow to 0; probabilities must be > 0
        p /= p.sum()
        x = sizes[k]
        # enforce strictly increasing cumulative sizes even after float rounding
        x = np.maximum.accumulate(x)
        for m in range(1, len(x)):
            if x[m] <= x[m - 1]:
                x[m] = np.nextafter(x[m - 1], np.inf)
        jobs.append(StagedJob(k, x.tolist(), p.tolist()))
    return SojournInstance(
        tuple(jobs), name=name or f"ws{set_id}-n{n}-m{stages}", metadata={"workload_set": set_id, "stages": stages}
    )


def random_instance(
    n_jobs: int, *, seed: SeedLike = None, max_stages: int = 3, integer_sizes: bool = False, max_size: int = 6
) -> SojournInstance:
    """A small random instance (tests, adaptive DP): 1..max_stages stages per job."""
    rng = as_generator(seed)
    jobs = []
    for k in range(n_jobs):
        m = int(rng.integers(1, max_stages + 1))
        if integer_sizes:
            x = np.sort(rng.choice(np.arange(1, max_size + 1), size=m, replace=False)).astype(float)
        else:
            x = np.cumsum(rng.uniform(0.1, 1.0, m))
        p = rng.dirichlet(np.ones(m)) * 0.98 + 0.02 / m
        p /= p.sum()
        jobs.append(StagedJob(k, x.tolist(), p.tolist()))
    return SojournInstance(tuple(jobs), name=f"random-n{n_jobs}")


def crossing_instance(
    n: int, seed: SeedLike = None, *, spread: float = 0.02, name: str | None = None
) -> SojournInstance:
    """A hard instance for the exact models: every job's pair criterion ``R_d(alpha) = b_d/s_d +
    alpha x_{d,M}`` (Eq. 3) passes near one common point at ``alpha ~ alpha(N)``, so the order of
    a pair depends on the third jobs through ``alpha_{i,j}`` and the pairwise preferences have
    3-cycles (the paper's workloads almost never do).

    Two-stage jobs, success probability U[0.1, 0.3], full size U[1, 3].
    """
    rng = as_generator(seed)
    s = rng.uniform(0.1, 0.3, n)
    xM = rng.uniform(1.0, 3.0, n)
    # alpha for this success profile (alpha depends only on the success probabilities)
    probe = SojournInstance(tuple(StagedJob(k, [0.5 * xM[k], xM[k]], [1 - s[k], s[k]]) for k in range(n)))
    pc = pair_costs(probe)
    off = ~np.eye(n, dtype=bool)
    a0 = float(np.median(pc.alpha[off])) if n > 1 else 1.0
    beta = a0 * (3.2 - xM) * (1 + rng.normal(0, spread, n))  # b_d / s_d: lines through one point
    x1 = np.clip(beta * s / (1 - s), 1e-3, xM * 0.999)
    jobs = tuple(StagedJob(k, [float(x1[k]), float(xM[k])], [float(1 - s[k]), float(s[k])]) for k in range(n))
    return SojournInstance(
        jobs, name=name or f"crossing-n{n}", metadata={"generator": "crossing_instance", "spread": spread}
    )
