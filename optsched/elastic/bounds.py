"""The paper's guarantees as per-run checks: Thm 3's certificate for A_maxweight and Thm 5's ratio.

* :func:`certificate` - after a run of :func:`~optsched.elastic.primal_dual.a_maxweight`, a feasible
  dual (9): the final prices delta and u_j = max(0, w_j - (least cost of any schedule of j at those
  prices, residual capacity ignored)), from the exact oracle. D = sum_j u_j + sum_{t,h,r} delta C is
  an upper bound on the LP of (8), hence on OPT(8); P is the run's weight. Thm 3 claims
  P >= OPT(8) / (2 log lambda); the certificate proves P >= D / (D / P) for this run, and it is
  reported beside 2 log2 lambda (the paper's base) and 2 ln lambda, with both assumptions checked:
  1 <= w_j / sum f(l) <= F for the chosen schedules, and f_jh^r(l) / C_h^r <= 1 / log2 lambda.
* :func:`thm5_check` - an A_online result against an optimum of (2): ratio vs 4 alpha.
* :func:`lemma2_check` - per round of A_online: A_dual's weight >= OPT of (7) for J_i (exact (8) on the
  round's jobs with deadline tau_i) and its length <= alpha_i tau_i.
* :func:`lemma1_chain` - sum_{k <= i} w(J^s_k) >= sum_{k <= i} w(J*_k), J*_k the jobs an optimum of (2)
  completes in (tau_(k-1), tau_k].

Tested in ``tests/elastic/test_primal_dual.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optsched.elastic.exact import solve_maxweight
from optsched.elastic.model import ElasticInstance
from optsched.elastic.pricing_oracle import min_cost_by_index
from optsched.elastic.primal_dual import weight_bound_F
from optsched.solvers import SolveOptions


def certificate(
    instance: ElasticInstance, run: Any, jobs: list[int] | None = None, *, F: float | None = None
) -> dict[str, Any]:
    """Thm 3 certificate of one A_maxweight run (see the module doc).

    Examples
    --------
    >>> from optsched.elastic import toy_instance
    >>> from optsched.elastic.primal_dual import a_maxweight
    >>> inst = toy_instance()
    >>> c = certificate(inst, a_maxweight(inst, tau=16))
    >>> c["P"], c["D"] >= c["P"], c["assumptions_hold"], c["holds_log2"]  # weights 1 << resource use 40
    (1.0, True, False, False)
    """
    jobs = list(range(instance.n_jobs)) if jobs is None else list(jobs)
    pr = run.prices
    C = np.asarray(instance.C, dtype=float)
    u = {}
    for j in jobs:
        c = min_cost_by_index(instance, j, pr, residual=False)
        u[j] = max(0.0, instance.jobs[j].weight - c.cost) if c is not None else 0.0
    D = float(sum(u.values()) + (pr.delta * C[None, :, :]).sum())
    P = float(sum(instance.jobs[j].weight for j in run.chosen))
    lam = run.lam
    F = weight_bound_F(instance) if F is None else F
    ratios = []
    shares = []
    for j, c in run.chosen.items():
        total = c.config.total_use * c.config.d
        ratios.append(instance.jobs[j].weight / total if total > 0 else math.inf)
        for h, vec in c.config.use:
            for r, f in enumerate(vec):
                if C[h, r] > 0:
                    shares.append(f / C[h, r])
    inv_log = 1.0 / math.log2(lam)
    shares = [float(x) for x in shares]
    out = {
        "P": P,
        "D": D,
        "D_over_P": D / P if P > 0 else math.inf,
        "lambda": lam,
        "two_log2_lambda": 2 * math.log2(lam),
        "two_ln_lambda": 2 * math.log(lam),
        "u": u,
        "assumption_weight_ratio": {
            "min": min(ratios, default=None),
            "max": max(ratios, default=None),
            "F": F,
            "holds": bool(ratios) and min(ratios) >= 1 - 1e-12 and max(ratios) <= F + 1e-12,
        },
        "assumption_small_demand": {
            "max_share": max(shares, default=0.0),
            "limit": inv_log,
            "holds": bool(max(shares, default=0.0) <= inv_log + 1e-12),
        },
    }
    out["holds_log2"] = bool(out["D_over_P"] <= out["two_log2_lambda"] + 1e-9)
    out["holds_ln"] = bool(out["D_over_P"] <= out["two_ln_lambda"] + 1e-9)
    out["assumptions_hold"] = bool(out["assumption_weight_ratio"]["holds"] and out["assumption_small_demand"]["holds"])
    return out


def thm5_check(result: Any, optimum: float) -> dict[str, Any]:
    """An A_online result vs OPT(2): ratio and 4 alpha (alpha as used: the largest alpha_i of its rounds)."""
    alphas = [r["alpha"] for r in result.info["rounds"]]
    a = max(alphas) if alphas else 1
    ratio = result.objective / optimum
    return {
        "ratio": ratio,
        "alpha": a,
        "four_alpha": 4 * a,
        "holds": ratio <= 4 * a + 1e-9,
        "alpha_offline": result.info.get("alpha_offline"),
        "late_jobs": result.info.get("late_jobs"),
    }


def lemma2_check(instance: ElasticInstance, result: Any, *, options: Any = None) -> list[dict[str, Any]]:
    """Lemma 2 per round of an A_online result (see the module doc). OPT(7) comes from the exact (8)
    on the sub-instance of the round's jobs (arrivals ignored inside the round, as in (7))."""
    options = options or SolveOptions(time_limit=30, threads=1)
    out = []
    for r in result.info["rounds"]:
        ids = set(r["J_i"])
        sub = instance.replace(jobs=tuple(j for j in instance.jobs if j.id in ids), name=f"{instance.name}-round")
        opt = solve_maxweight(sub, tau=r["tau"], options=options)
        out.append(
            {
                "round": r["round"],
                "tau": r["tau"],
                "alpha": r["alpha"],
                "weight": r["weight"],
                "opt7": opt.objective,
                "opt7_proven": opt.optimal,
                "length": r["length"],
                "weight_ok": r["weight"] >= opt.objective - 1e-9 if opt.optimal else None,
                "length_ok": r["length"] <= r["alpha"] * r["tau"],
            }
        )
    return out


def lemma1_chain(instance: ElasticInstance, result: Any, optimum_schedule: Any) -> list[dict[str, Any]]:
    """Lemma 1's chain for every round index i up to the last one needed by either schedule."""
    comp = {jid: a.completion for jid, a in optimum_schedule.items()}
    w = {j.id: j.weight for j in instance.jobs}
    by_round = {r["round"]: r["weight"] for r in result.info["rounds"]}
    last = max(max(by_round, default=1), 1)
    while 2 ** (last - 1) < max(comp.values()):
        last += 1
    out, acc_s, acc_opt = [], 0.0, 0.0
    for i in range(1, last + 1):
        lo = 1 if i == 1 else 2 ** (i - 2)  # tau_(i-1) with tau_0 = 1
        hi = 2 ** (i - 1)
        acc_s += by_round.get(i, 0.0)
        acc_opt += sum(w[jid] for jid, c in comp.items() if (c <= hi if i == 1 else lo < c <= hi))
        out.append({"round": i, "tau": hi, "online_cum": acc_s, "opt_cum": acc_opt, "holds": acc_s >= acc_opt - 1e-9})
    return out
