"""The pricing oracle and the paper's subroutines checked against enumeration on random pricings.

* :func:`brute_force` - every feasible schedule (``gamma.all_configs`` x starts): the reference;
  tiny sizes only;
* :func:`pricing_case` - the k-th random pricing of a seed (a one-job instance, tau and prices), so a
  counterexample is two integers;
* :func:`compare_with_brute_force` - n random pricings: the exact oracle vs brute force (they must
  agree) and each printed subroutine vs the exact optimum of its case (Thm 1 / Thm 6 claim they are
  optimal); the counts and the counterexamples of ``formulations/elastic.md#pricing`` come from it.

Tested in ``tests/elastic/test_pricing.py``.

>>> stats = compare_with_brute_force(4, seed=0)
>>> stats["pricings"], stats["oracle_mismatch"]
(4, 0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optsched.elastic.checks import violations
from optsched.elastic.gamma import all_configs_by_index
from optsched.elastic.generate import random_instance
from optsched.elastic.model import ElasticInstance
from optsched.elastic.prices import Priced, Prices, fits, window_cost
from optsched.elastic.pricing_oracle import min_cost_by_index
from optsched.elastic.pricing_subroutines import (
    a_mincost1_by_index,
    a_mincost2_by_index,
    a_ramincost1_by_index,
    a_ramincost2_by_index,
)
from optsched.elastic.schedule import ElasticSchedule


def _brute_force(
    instance: ElasticInstance, j: int, prices: Prices, *, q: int | None = None, residual: bool = True
) -> Priced | None:
    """Every feasible schedule (full enumeration x starts) that fits omega: the reference. Tiny sizes only."""
    tau = prices.tau
    omega = (
        prices.residual(instance)
        if residual
        else np.broadcast_to(np.asarray(instance.C, dtype=float)[None], prices.beta.shape)
    )
    best = None
    for cfg in all_configs_by_index(instance, j, d_max=tau):
        if q is not None and cfg.q != q:
            continue
        for t in range(0, tau - cfg.d + 1):
            wmin = omega[t : t + cfg.d].min(axis=0)
            if all(fits(wmin[h], np.asarray(vec)) for h, vec in cfg.use):
                cost = window_cost(prices, cfg, t)
                if best is None or cost < best.cost - 1e-12:
                    best = Priced(cost, cfg, t)
    return best


def brute_force(
    instance: ElasticInstance, job: Any, prices: Prices, *, q: int | None = None, residual: bool = True
) -> Priced | None:
    """Every feasible schedule of the job with id ``job`` that fits omega (the reference; tiny sizes only)."""
    return _brute_force(instance, instance.job_index(job, "brute_force"), prices, q=q, residual=residual)


# -- random pricings and the comparison ------------------------------------------------------------
def random_prices(instance: ElasticInstance, tau: int, *, lam: float, fill: float, rng: np.random.Generator) -> Prices:
    """beta: each (t, h, r) allocated a uniform fraction in [0, fill] of C (rounded down to what whole
    workers could hold is not needed: prices only need beta <= C); delta from (11)."""
    C = np.asarray(instance.C, dtype=float)
    # drawn with the resources in sorted-name order (the R axis before it followed the input order), so the
    # pricing of a given (seed, k) of pricing_case is the one the findings were measured on
    names = sorted(instance.resources)
    perm = [names.index(r) for r in instance.resources]
    frac = rng.uniform(0.0, fill, size=(tau, instance.H, instance.R))[:, :, perm]
    beta = frac * C[None, :, :]
    delta = lam**frac - 1.0
    return Prices(beta, delta)


def compare_with_brute_force(n: int, *, seed: int = 0, max_jobs_tau: int = 10, max_servers: int = 3) -> dict[str, Any]:
    """``n`` random pricings on tiny instances (H <= ``max_servers``, D <= 3, M, P <= 2, PS and RAR): the exact oracle
    vs brute force (must agree) and the printed subroutines vs the exact optimum of their case
    (Thm 1 / Thm 6 claim they are optimal). Returns counts and the counterexamples."""

    stats = {"pricings": 0, "oracle_mismatch": 0, "by_case": {}, "counterexamples": []}
    for k in range(n):
        inst, tau, pr = pricing_case(seed, k, max_tau=max_jobs_tau, max_servers=max_servers)
        arch = inst.architecture
        stats["pricings"] += 1
        ref = _brute_force(inst, 0, pr)
        ex = min_cost_by_index(inst, 0, pr)
        if (ref is None) != (ex is None) or (
            ref is not None and not math.isclose(ref.cost, ex.cost, rel_tol=1e-9, abs_tol=1e-9)
        ):
            stats["oracle_mismatch"] += 1
        subs = (
            (
                ("A_mincost2", a_mincost2_by_index, 1),
                ("A_mincost1", a_mincost1_by_index, 0),
                ("A_mincost1[N^ not reset]", lambda i, j, p: a_mincost1_by_index(i, j, p, reset_n_hat=False), 0),
            )
            if arch == "ps"
            else (("A_RAmincost1", a_ramincost1_by_index, 1), ("A_RAmincost2", a_ramincost2_by_index, 0))
        )
        for name, f, q in subs:
            opt_q = _brute_force(inst, 0, pr, q=q)
            got = f(inst, 0, pr)
            row = stats["by_case"].setdefault(
                name, {"runs": 0, "suboptimal": 0, "missed_feasible": 0, "worst_ratio": 1.0, "infeasible_output": 0}
            )
            row["runs"] += 1
            if got is not None:
                bad = [
                    v
                    for v in violations(
                        inst,
                        ElasticSchedule({inst.jobs[0].id: got.config.assignment(got.start)}),
                        require_all=False,
                        tau=tau,
                        arrivals=False,
                    )
                ]
                if bad:
                    row["infeasible_output"] += 1
            if opt_q is not None and got is None:
                row["missed_feasible"] += 1
                stats["counterexamples"].append(
                    {"seed": seed, "k": k, "sub": name, "kind": "missed", "opt": opt_q.cost}
                )
            elif opt_q is not None and got is not None and got.cost > opt_q.cost * (1 + 1e-9) + 1e-9:
                row["suboptimal"] += 1
                ratio = got.cost / opt_q.cost if opt_q.cost > 0 else math.inf
                row["worst_ratio"] = max(row["worst_ratio"], ratio)
                stats["counterexamples"].append(
                    {"seed": seed, "k": k, "sub": name, "kind": "suboptimal", "opt": opt_q.cost, "got": got.cost}
                )
    stats["counterexamples"] = stats["counterexamples"][:50]
    return stats


def pricing_case(seed: int, k: int, *, max_tau: int = 10, max_servers: int = 3) -> tuple[ElasticInstance, int, Prices]:
    """The k-th random pricing of ``compare_with_brute_force(seed=seed)``: a one-job instance (PS for
    even k, RAR for odd k), tau and prices from (11) with lambda in {2, 10, 100} and up to 90 % of
    each capacity allocated. Deterministic in (seed, k), so a counterexample is two integers."""
    rng = np.random.default_rng([int(seed), int(k)])
    arch = "ps" if k % 2 == 0 else "rar"
    inst = random_instance(
        1,
        n_servers=int(rng.integers(1, max_servers + 1)),
        n_worker_types=int(rng.integers(1, 3)),
        n_ps_types=int(rng.integers(1, 3)),
        n_resources=int(rng.integers(1, 4)),
        max_chunks=3,
        architecture=arch,
        seed=int(rng.integers(0, 2**31 - 1)),
    )
    d0 = inst.min_duration(0)
    tau = int(rng.integers(max(2, d0), max(max_tau, d0) + 1))
    lam = float(rng.choice([2.0, 10.0, 100.0]))
    pr = random_prices(inst, tau, lam=lam, fill=float(rng.uniform(0.0, 0.9)), rng=rng)
    return inst, tau, pr
