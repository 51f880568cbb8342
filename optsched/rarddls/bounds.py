"""Lemmas 2-4 and Theorems 5-6 of paper 002 as separate checks on one instance.

Each check compares SJF-BCO's returned schedule (theta~_u, W^_max = max_g U_g, makespan T_alg,
pass count) with the exact quantities: theta*_u of (14)-(16) and the exact makespan T* (same slotted
semantics, :func:`optsched.rarddls.exact.solve_exact`). A failed claim is a finding
(``formulations/rarddls.md#findings``).

* Lemma 2 (printed: W^_max = theta~_u): checked as W^_max <= theta~_u, the gap reported.
* Lemma 3 printed: T_alg <= n_g W^_max; provable form: T_alg <= n_g (u/l) W^_max.
* Lemma 4: theta~_u <= varphi (u/l) theta*_u, with the paper's theta~_u (the smallest feasible theta_u,
  ``sjf_bco(bisection="smallest-feasible")``) by default, or the theta of the returned schedule.
* Thm 5: T_alg <= n_g varphi (u/l) T*; also step (a) theta*_u <= T*.
* Thm 6: passes <= (ceil(log2 T) + 1) n_g.

Two consequences that hold for every valid schedule are registered as verifier checks: ``rho_range``
(each execution time within [rho_j^min, rho_j^max]) and ``gpu_load`` (makespan >= the largest per-GPU sum of
rho^_j / u, the inequality behind Thm 5 step (a)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from optsched.exceptions import InvalidOptionError
from optsched.rarddls.exact import solve_exact, theta_star
from optsched.rarddls.model import RarInstance
from optsched.rarddls.sjfbco import passes_bound, sjf_bco
from optsched.verify import Violation


@dataclass
class BoundReport:
    """Values and per-claim verdicts (True = holds) for one instance."""

    values: dict[str, Any] = field(default_factory=dict)
    holds: dict[str, bool] = field(default_factory=dict)

    @property
    def violated(self) -> list[str]:
        return [k for k, v in self.holds.items() if not v]


def check_bounds(
    instance: RarInstance,
    *,
    exact_result=None,
    algo_result=None,
    theta_star_value=None,
    options=None,
    kappas="all",
    lemma4_theta: str = "smallest-feasible",
) -> BoundReport:
    """Evaluate every claim on ``instance`` (solves what is not given; T* must be proven optimal).

    ``algo_result`` (default ``sjf_bco(instance, kappas=kappas)``, the printed bisection) gives T_alg, W^_max
    and the theta of Lemmas 2 and 3. ``lemma4_theta`` chooses the theta~_u of Lemma 4:
    ``"smallest-feasible"`` (default) the paper's "minimum theta_u feasible to Problem (14)", from
    ``sjf_bco(bisection="smallest-feasible")`` (reused if ``algo_result`` already is that run);
    ``"returned"`` the theta reported by ``algo_result``. ``values`` holds both (``theta_tilde`` is the one
    Lemma 4 used, ``theta_returned`` the other)."""
    if lemma4_theta not in ("smallest-feasible", "returned"):
        raise InvalidOptionError(f"lemma4_theta must be 'smallest-feasible' or 'returned'; got {lemma4_theta!r}.")
    r = algo_result or sjf_bco(instance, kappas=kappas)
    ex = exact_result or solve_exact(instance, options=options)
    if theta_star_value is None:
        theta_star_value, _, _ = theta_star(instance, options=options)
    u, lo, vphi, ng = instance.u, instance.l, instance.varphi, instance.n_g
    T_alg = float(r.objective)
    W = float(r.info["W_max"])
    th = float(r.info["theta"])
    if lemma4_theta == "returned" or r.info.get("bisection") == "smallest-feasible":
        th4 = th
    else:
        th4 = float(sjf_bco(instance, kappas=kappas, bisection="smallest-feasible").info["theta"])
    T_star = float(ex.objective) if ex.optimal else None
    # realized u, l (from the algorithm's schedule)
    rho_real = [r.schedule.segments(j.id)[0].end - r.schedule.segments(j.id)[0].start for j in instance.jobs]
    u_real = max(1.0, max(j.rho_hat / p for j, p in zip(instance.jobs, rho_real, strict=True)))
    l_real = min(1.0, min(j.rho_hat / p for j, p in zip(instance.jobs, rho_real, strict=True)))
    rep = BoundReport()
    rep.values = {
        "T_alg": T_alg,
        "T_star": T_star,
        "W_max": W,
        "theta_tilde": th4,
        "theta_returned": th,
        "lemma4_theta": lemma4_theta,
        "theta_star": theta_star_value,
        "u": u,
        "l": lo,
        "varphi": vphi,
        "n_g": ng,
        "u_real": u_real,
        "l_real": l_real,
        "passes": r.info["passes"],
        "passes_bound": passes_bound(instance, r.info["T"]),
        "lemma2_gap": th - W,
        "ratio": (T_alg / T_star) if T_star else None,
        "thm5_bound": ng * vphi * u / lo,
    }
    eps = 1e-9
    rep.holds["lemma2_le"] = th + eps >= W
    rep.holds["lemma2_eq"] = abs(W - th) <= 1e-6
    rep.holds["lemma3_printed"] = T_alg <= ng * W + eps
    rep.holds["lemma3_provable"] = T_alg <= ng * (u / lo) * W + eps
    rep.holds["lemma4"] = th4 <= vphi * (u / lo) * theta_star_value + 1e-6
    if T_star is not None:
        rep.holds["thm5"] = T_alg <= ng * vphi * (u / lo) * T_star + eps
        rep.holds["thm5_step_a"] = theta_star_value <= T_star + 1e-6
    rep.holds["thm6"] = r.info["passes"] <= rep.values["passes_bound"]
    return rep


def check_rho_range(instance: RarInstance, schedule) -> list:
    """Every job's execution time lies in [rho_j^min, rho_j^max] (the a priori range behind u, l, varphi)."""
    out = []
    for i, j in enumerate(instance.jobs):
        segs = schedule.segments(j.id) if j.id in schedule else []
        if not segs:
            continue
        rho = segs[0].end - segs[0].start
        lo, hi = instance.rho_range(i)
        if not lo - 1e-9 <= rho <= hi + 1e-9:
            out.append(
                Violation(
                    "rho_range",
                    f"{j.label} runs {rho:g} slots, outside its a priori range "
                    f"[{lo}, {hi}] (F_j / phi_j at the fastest and slowest states).",
                    job=j.id,
                )
            )
    return out


def check_gpu_load(instance: RarInstance, schedule) -> list:
    """Thm 5 step (a) for any schedule: the makespan >= max_g sum_{j on g} rho^_j / u (>= theta*_u), since
    rho^_j / u <= rho_j and a GPU runs its jobs one after another."""
    load: dict[tuple[int, int], float] = {}
    ms = 0.0
    for j in instance.jobs:
        segs = schedule.segments(j.id) if j.id in schedule else []
        if not segs or segs[0].gpu_ids is None:
            continue
        ms = max(ms, segs[0].end)
        for s, ids in segs[0].gpu_ids.items():
            for g in ids:
                load[s, g] = load.get((s, g), 0.0) + j.rho_hat / instance.u
    worst = max(load.values(), default=0.0)
    if ms < worst - 1e-9:
        return [
            Violation(
                "gpu_load",
                f"The makespan {ms:g} is below the largest per-GPU estimated load {worst:g} "
                f"(sum of rho^_j / u): some rho^_j exceeds u rho_j.",
            )
        ]
    return []
