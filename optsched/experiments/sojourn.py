"""Reproduction of Sec. IV of paper 003 (Tables IV-XIV) and its extension to N = 40 with the
exact optimum; the adaptive-policy study (item 4).

Every function returns a pandas DataFrame with the paper's numbers beside ours and 95 %
confidence intervals: t-intervals for means, distribution-free order-statistic intervals for
the p75/p95 percentiles of the competitive ratio (the maximum has none, and grows with the
number of trials: the paper used >= 50,000, the default here is 5,000).

>>> df = mean_table(run_trials(sets=(1,), n_values=(3,), trials=20, seed=0), 1)
>>> list(df.columns)[:4]
['N', 'algorithm', 'mean', 'ci_lo']

Tested in ``tests/sojourn/test_experiments.py``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterable, Sequence

import numpy as np

from optsched.core.output import out_folder_arg, prepare_out_dir, write_table
from optsched.core.seeds import SeedLike
from optsched.exceptions import SolverError
from optsched.sojourn.adaptive import compare_policies
from optsched.sojourn.dp import subset_dp
from optsched.sojourn.evaluate import pair_costs, stage_value
from optsched.sojourn.exact import solve_lop_highs
from optsched.sojourn.formulation import order_from_y, three_cycles
from optsched.sojourn.generate import random_instance, workload
from optsched.sojourn.online import online_table
from optsched.sojourn.policies import sr_stage_sequence
from optsched.solvers import SolveOptions

DEFAULT_TRIALS = 5000
N_PAPER = (3, 4, 5, 6, 7, 8)
ALGOS = ("OPTIMAL", "RANK", "RANDOM", "SERPT", "SR")

#: Tables IV-VIII: workload set -> {"OPTIMAL": [...], "RANK": [...]} for N = 3..8.
PAPER_MEANS = {
    1: {"OPTIMAL": [1.219, 1.515, 1.784, 2.043, 2.299, 2.540], "RANK": [1.221, 1.518, 1.786, 2.045, 2.301, 2.542]},
    2: {"OPTIMAL": [1.237, 1.537, 1.816, 2.083, 2.347, 2.601], "RANK": [1.238, 1.540, 1.818, 2.085, 2.349, 2.603]},
    3: {"OPTIMAL": [1.236, 1.538, 1.818, 2.087, 2.343, 2.607], "RANK": [1.238, 1.540, 1.821, 2.088, 2.345, 2.609]},
    4: {"OPTIMAL": [2.339, 2.847, 3.310, 3.754, 4.186, 4.591], "RANK": [2.344, 2.853, 3.315, 3.759, 4.190, 4.595]},
    5: {"OPTIMAL": [4.182, 4.920, 5.545, 6.087, 6.590, 7.113], "RANK": [4.188, 4.928, 5.553, 6.093, 6.596, 7.119]},
}
TABLE_OF_SET = {1: ("IV", "IX"), 2: ("V", "X"), 3: ("VI", "XI"), 4: ("VII", "XII"), 5: ("VIII", "XIII")}


def _rows(text: str) -> dict[tuple[str, str], list[float]]:
    out = {}
    for line in text.strip().splitlines():
        parts = line.split()
        out[(parts[0], parts[1])] = [float(v) for v in parts[2:]]
    return out


#: Tables IX-XIII: workload set -> {(algorithm, "Max"|"P95"|"P75"): [N = 3..8]}.
PAPER_RATIOS = {
    1: _rows("""RANDOM Max 8.358 6.448 5.421 5.568 5.863 3.287
SERPT Max 2.579 2.901 2.976 3.267 3.264 2.243
SR Max 6.458 4.225 3.915 3.594 5.636 2.485
RANK Max 1.093 1.095 1.088 1.071 1.041 1.025
RANDOM P95 1.801 1.844 1.867 1.874 1.868 1.875
SERPT P95 1.497 1.536 1.547 1.547 1.541 1.531
SR P95 1.778 1.742 1.731 1.722 1.706 1.701
RANK P95 1.010 1.011 1.009 1.007 1.006 1.004
RANDOM P75 1.345 1.411 1.455 1.483 1.502 1.518
SERPT P75 1.226 1.272 1.294 1.311 1.321 1.327
SR P75 1.369 1.389 1.407 1.421 1.429 1.439
RANK P75 1.000 1.000 1.000 1.000 1.001 1.001"""),
    2: _rows("""RANDOM Max 6.202 4.781 4.231 4.34 3.224 3.513
SERPT Max 2.172 2.359 2.348 2.305 2.104 2.050
SR Max 6.009 4.165 2.830 2.808 2.646 2.762
RANK Max 1.109 1.105 1.075 1.066 1.062 1.031
RANDOM P95 1.708 1.756 1.772 1.776 1.776 1.768
SERPT P95 1.406 1.425 1.429 1.427 1.422 1.419
SR P95 1.682 1.639 1.626 1.614 1.599 1.588
RANK P95 1.011 1.010 1.009 1.007 1.005 1.004
RANDOM P75 1.313 1.379 1.418 1.446 1.462 1.475
SERPT P75 1.183 1.217 1.235 1.248 1.256 1.261
SR P75 1.336 1.347 1.360 1.369 1.374 1.376
RANK P75 1.000 1.000 1.000 1.001 1.001 1.001"""),
    3: _rows("""RANDOM Max 6.473 6.341 4.188 4.252 4.391 3.260
SERPT Max 2.264 2.225 2.325 2.186 2.019 2.014
SR Max 5.453 4.27 3.962 2.943 3.231 3.078
RANK Max 1.089 1.076 1.076 1.06 1.041 1.035
RANDOM P95 1.708 1.753 1.772 1.777 1.774 1.765
SERPT P95 1.405 1.425 1.430 1.429 1.423 1.414
SR P95 1.683 1.643 1.622 1.613 1.601 1.589
RANK P95 1.011 1.010 1.009 1.007 1.005 1.004
RANDOM P75 1.311 1.377 1.416 1.442 1.463 1.472
SERPT P75 1.182 1.216 1.236 1.249 1.256 1.260
SR P75 1.334 1.346 1.360 1.369 1.375 1.374
RANK P75 1.000 1.000 1.000 1.001 1.001 1.001"""),
    4: _rows("""RANDOM Max 17.030 15.710 9.671 12.497 6.624 5.240
SERPT Max 2.697 2.599 2.884 3.147 2.330 2.203
SR Max 16.583 13.855 8.216 5.598 4.810 4.128
RANK Max 1.111 1.092 1.094 1.075 1.047 1.033
RANDOM P95 2.110 2.215 2.252 2.269 2.284 2.276
SERPT P95 1.384 1.401 1.404 1.400 1.399 1.391
SR P95 1.987 1.912 1.864 1.826 1.795 1.785
RANK P95 1.012 1.012 1.010 1.008 1.006 1.005
RANDOM P75 1.418 1.534 1.610 1.657 1.699 1.734
SERPT P75 1.142 1.180 1.200 1.211 1.220 1.226
SR P75 1.383 1.389 1.400 1.408 1.413 1.419
RANK P75 1.000 1.000 1.000 1.000 1.001 1.001"""),
    5: _rows("""RANDOM Max 165.583 415.039 58.027 51.204 44.901 22.749
SERPT Max 2.605 2.546 2.473 2.301 2.199 1.846
SR Max 165.94 415.218 36.311 47.201 44.665 22.177
RANK Max 1.105 1.118 1.091 1.076 1.069 1.043
RANDOM P95 3.011 3.305 3.471 3.539 3.682 3.797
SERPT P95 1.275 1.290 1.295 1.292 1.295 1.282
SR P95 2.742 2.538 2.439 2.371 2.323 2.275
RANK P95 1.006 1.009 1.008 1.007 1.006 1.005
RANDOM P75 1.617 1.842 2.007 2.142 2.262 2.349
SERPT P75 1.050 1.087 1.109 1.122 1.132 1.139
SR P75 1.447 1.406 1.405 1.406 1.416 1.411
RANK P75 1.000 1.000 1.000 1.000 1.000 1.000"""),
}
#: Table XIV (workload set 1, N = 5, stages 2..8).
PAPER_STAGES = {
    "stages": [2, 3, 4, 5, 6, 7, 8],
    "OPTIMAL": [1.786, 2.742, 3.701, 4.668, 5.625, 6.593, 7.547],
    "RANK": [1.788, 2.745, 3.705, 4.674, 5.632, 6.600, 7.555],
    "MAX CR": [1.082, 1.076, 1.063, 1.060, 1.061, 1.059, 1.064],
}


# --------------------------------------------------------------------------- one trial
def optimum(pc) -> tuple[float, list[int], str]:
    """Exact optimum of one instance, the cheapest proven way: if the pairwise preferences
    (c[i,j] < c[j,i]) form a transitive tournament its order attains the lower bound
    sum_{i<j} min(c[i,j], c[j,i]); else the subset DP (N <= 20) or the lazy HiGHS LOP."""
    B = pc.c < pc.c.T
    np.fill_diagonal(B, False)
    ties = np.triu(np.isclose(pc.c, pc.c.T, rtol=0, atol=0), 1).any()
    if not ties and not three_cycles(B, limit=1):
        order = order_from_y(B)
        return pc.order_value(order), order, "tournament"
    if pc.n <= 16:
        v, order = subset_dp(pc)
        return v, order, "dp"
    out = solve_lop_highs(pc, SolveOptions(time_limit=300, threads=1))
    if not out.get("proven"):
        raise SolverError(
            f"HiGHS did not prove the optimum of this {pc.n}-job instance within 300 s "
            f"({out['message']}); use fewer jobs."
        )
    return out["objective"], out["order"], "highs"


def _trial(set_id: int, n: int, rng: np.random.Generator, stages: int, algos: Sequence[str]) -> dict[str, float]:
    inst = workload(set_id, n, rng, stages=stages)
    pc = pair_costs(inst)
    out: dict[str, float] = {}
    if "OPTIMAL" in algos:
        out["OPTIMAL"], _, out["opt_method"] = optimum(pc)
    if "RANK" in algos:
        out["RANK"] = pc.order_value(list(np.argsort((pc.a + pc.b) / pc.s, kind="stable")))
    if "SERPT" in algos:
        out["SERPT"] = pc.order_value(list(np.argsort(pc.a + pc.b, kind="stable")))
    if "RANDOM" in algos:
        out["RANDOM"] = pc.order_value(list(rng.permutation(n)))
    if "SR" in algos:
        out["SR"] = stage_value(inst, sr_stage_sequence(inst), pc)
    return out


def run_trials(
    *,
    sets: Iterable[int] = (1, 2, 3, 4, 5),
    n_values: Iterable[int] = N_PAPER,
    trials: int = DEFAULT_TRIALS,
    seed: SeedLike = 0,
    stages: int = 2,
    algos: Sequence[str] = ALGOS,
    progress: bool = False,
):
    """Per-trial values of every algorithm: DataFrame (set, N, stages, trial, OPTIMAL, RANK, ...).

    Each (set, N) cell has its own reproducible stream (``SeedSequence(seed).spawn``)."""
    import pandas as pd

    rows = []
    cells = [(s, n) for s in sets for n in n_values]
    base = np.random.SeedSequence(seed if isinstance(seed, int) else None)
    for (s, n), child in zip(cells, base.spawn(len(cells)), strict=True):
        rng = np.random.default_rng(child)
        t0 = time.perf_counter()
        for z in range(trials):
            r = _trial(s, n, rng, stages, algos)
            r.update(set=s, N=n, stages=stages, trial=z)
            rows.append(r)
        if progress:
            print(
                f"[sojourn] set {s} N={n} stages={stages}: {trials} trials in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- statistics
def _mean_ci(x: np.ndarray) -> tuple[float, float, float]:
    from scipy.stats import t

    m = float(np.mean(x))
    if len(x) < 2:
        return m, math.nan, math.nan
    h = float(t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / math.sqrt(len(x)))
    return m, m - h, m + h


def _quantile_ci(x: np.ndarray, q: float) -> tuple[float, float, float]:
    """Sample quantile and a distribution-free 95 % interval from binomial order statistics."""
    from scipy.stats import binom

    xs = np.sort(x)
    n = len(xs)
    est = float(np.quantile(xs, q))
    lo_k = int(binom.ppf(0.025, n, q))
    hi_k = int(binom.ppf(0.975, n, q))
    lo = float(xs[max(lo_k - 1, 0)])
    hi = float(xs[min(hi_k, n - 1)])
    return est, lo, hi


def mean_table(raw, set_id: int, paper_set: int | None = None):
    """Tables IV-VIII: average expected sojourn time of OPTIMAL and RANK per N, with 95 % CI and
    the paper's value (of ``paper_set``, default ``set_id``); ``z`` = (ours - paper) / our standard error."""
    import pandas as pd

    rows = []
    paper_set = set_id if paper_set is None else paper_set
    d = raw[(raw["set"] == set_id) & (raw["stages"] == 2)]
    for n, g in d.groupby("N"):
        for a in ("OPTIMAL", "RANK"):
            m, lo, hi = _mean_ci(g[a].to_numpy())
            paper = PAPER_MEANS.get(paper_set, {}).get(a)
            pv = paper[N_PAPER.index(n)] if paper is not None and n in N_PAPER else math.nan
            se = (hi - lo) / (2 * 1.96) if not math.isnan(hi) else math.nan
            rows.append(
                {
                    "N": n,
                    "algorithm": a,
                    "mean": m,
                    "ci_lo": lo,
                    "ci_hi": hi,
                    "paper": pv,
                    "z": (m - pv) / se if se and not math.isnan(pv) else math.nan,
                    "trials": len(g),
                }
            )
        r = (g["RANK"] / g["OPTIMAL"]).to_numpy()
        m, lo, hi = _mean_ci(r)
        rows.append(
            {
                "N": n,
                "algorithm": "RANK/OPTIMAL (mean ratio)",
                "mean": m,
                "ci_lo": lo,
                "ci_hi": hi,
                "paper": math.nan,
                "z": math.nan,
                "trials": len(g),
            }
        )
    return pd.DataFrame(rows)


def ratio_table(raw, set_id: int, paper_set: int | None = None):
    """Tables IX-XIII: max, p95 and p75 of the competitive ratio E_ALG / E_OPTIMAL per algorithm and
    N (95 % order-statistic CI for the percentiles), with the paper's values (of ``paper_set``)."""
    import pandas as pd

    rows = []
    d = raw[(raw["set"] == set_id) & (raw["stages"] == 2)]
    paper = PAPER_RATIOS.get(set_id if paper_set is None else paper_set, {})
    for n, g in d.groupby("N"):
        for a in ("RANDOM", "SERPT", "SR", "RANK"):
            cr = (g[a] / g["OPTIMAL"]).to_numpy()
            for stat in ("Max", "P95", "P75"):
                if stat == "Max":
                    v, lo, hi = float(cr.max()), math.nan, math.nan
                else:
                    v, lo, hi = _quantile_ci(cr, 0.95 if stat == "P95" else 0.75)
                pv = paper.get((a, stat))
                rows.append(
                    {
                        "N": n,
                        "algorithm": a,
                        "stat": stat,
                        "ours": v,
                        "ci_lo": lo,
                        "ci_hi": hi,
                        "paper": pv[N_PAPER.index(n)] if pv and n in N_PAPER else math.nan,
                        "trials": len(g),
                    }
                )
    return pd.DataFrame(rows)


def stages_table(
    *, trials: int = DEFAULT_TRIALS, seed: SeedLike = 1, stage_values: Iterable[int] = range(2, 9), n: int = 5
):
    """Table XIV: set 1, N = 5, 2..8 stages: OPTIMAL, RANK (95 % CI) and max RANK/OPTIMAL."""
    import pandas as pd

    rows = []
    for m in stage_values:
        raw = run_trials(
            sets=(1,),
            n_values=(n,),
            trials=trials,
            seed=(seed * 1000 + m) if isinstance(seed, int) else seed,
            stages=m,
            algos=("OPTIMAL", "RANK"),
        )
        k = PAPER_STAGES["stages"].index(m) if m in PAPER_STAGES["stages"] else None
        o, olo, ohi = _mean_ci(raw["OPTIMAL"].to_numpy())
        r, rlo, rhi = _mean_ci(raw["RANK"].to_numpy())
        rows.append(
            {
                "stages": m,
                "OPTIMAL": o,
                "OPTIMAL_ci": (olo, ohi),
                "OPTIMAL_paper": PAPER_STAGES["OPTIMAL"][k] if k is not None else math.nan,
                "RANK": r,
                "RANK_ci": (rlo, rhi),
                "RANK_paper": PAPER_STAGES["RANK"][k] if k is not None else math.nan,
                "MAX_CR": float((raw["RANK"] / raw["OPTIMAL"]).max()),
                "MAX_CR_paper": PAPER_STAGES["MAX CR"][k] if k is not None else math.nan,
                "trials": trials,
            }
        )
    return pd.DataFrame(rows)


def rank_vs_n(
    *,
    n_values: Iterable[int] = (3, 5, 8, 12, 16, 20, 25, 30, 35, 40),
    sets: Iterable[int] = (1, 5),
    trials: int = 200,
    seed: SeedLike = 2,
):
    """Extension beyond the paper's N <= 8: exact optimum up to N = 40. Per (set, N): mean of
    E_RANK / E_OPTIMAL with 95 % CI, its max, and the fraction of trials where RANK is optimal;
    also SERPT and SR ratios and how each optimum was proven."""
    import pandas as pd

    raw = run_trials(sets=sets, n_values=n_values, trials=trials, seed=seed)
    rows = []
    for (s, n), g in raw.groupby(["set", "N"]):
        ratio = (g["RANK"] / g["OPTIMAL"]).to_numpy()
        m, lo, hi = _mean_ci(ratio)
        rows.append(
            {
                "set": s,
                "N": n,
                "rank_ratio_mean": m,
                "ci_lo": lo,
                "ci_hi": hi,
                "rank_ratio_max": ratio.max(),
                "rank_optimal_frac": float(np.mean(ratio <= 1 + 1e-12)),
                "serpt_ratio_mean": float((g["SERPT"] / g["OPTIMAL"]).mean()),
                "sr_ratio_mean": float((g["SR"] / g["OPTIMAL"]).mean()),
                "proved_by": ",".join(f"{k}:{v}" for k, v in g["opt_method"].value_counts().items()),
                "trials": len(g),
            }
        )
    return pd.DataFrame(rows)


def plot_rank_vs_n(df, ax=None):
    """RANK / OPTIMAL (mean, 95 % CI) against N, one line per workload set."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(6, 3.5))[1]
    for s, g in df.groupby("set"):
        ax.errorbar(
            g["N"],
            g["rank_ratio_mean"] - 1,
            yerr=[g["rank_ratio_mean"] - g["ci_lo"], g["ci_hi"] - g["rank_ratio_mean"]],
            marker="o",
            capsize=3,
            label=f"workload set {s}",
        )
    ax.set_xlabel("number of jobs N")
    ax.set_ylabel("E[RANK] / E[OPTIMAL] - 1")
    ax.set_yscale("log")
    ax.set_title("RANK vs the exact optimum (Thm III.4: -> 0)")
    ax.legend()
    return ax


def adaptive_study(*, n_instances: int = 300, seed: SeedLike = 0, max_jobs: int = 5, max_stages: int = 3):
    """Item 4: best static order vs optimal adaptive policies (with/without preemption) on random
    tiny instances with small integer sizes. One row per instance."""
    import pandas as pd

    rng = np.random.default_rng(seed if isinstance(seed, int) else None)
    rows = []
    for k in range(n_instances):
        n = int(rng.integers(2, max_jobs + 1))
        inst = random_instance(n, seed=rng, max_stages=max_stages, integer_sizes=True)
        c = compare_policies(inst, with_sequences=(n <= 3 and sum(j.n_stages for j in inst.jobs) <= 7))
        c.update(instance=k, N=n, stages=sum(j.n_stages for j in inst.jobs))
        c["static_over_adaptive"] = c["best_order"] / c["adaptive_nonpreemptive"] - 1
        c["nonpreemptive_over_preemptive"] = c["adaptive_nonpreemptive"] / c["adaptive_preemptive"] - 1
        rows.append(c)
    return pd.DataFrame(rows)


def all_tables(*, trials: int = DEFAULT_TRIALS, seed: SeedLike = 0, progress: bool = True) -> dict:
    """Every reproduced table: {"IV": df, ..., "XIV": df, "V-VI (U9)", "X-XI (U9)", "raw": per-trial df}."""
    raw = run_trials(sets=(1, 2, 3, 4, 5, 23), trials=trials, seed=seed, progress=progress)
    out = {"raw": raw}
    for s, (tm, tr) in TABLE_OF_SET.items():
        out[tm] = mean_table(raw, s)
        out[tr] = ratio_table(raw, s)
    # sets 2-3 as the paper seems to have run them (success probability uniform over 0.1..0.9)
    out["V-VI (U9)"] = mean_table(raw, 23, paper_set=2)
    out["X-XI (U9)"] = ratio_table(raw, 23, paper_set=2)
    out["XIV"] = stages_table(trials=trials, seed=seed + 1 if isinstance(seed, int) else seed)
    return out


def reproduce(
    save,
    *,
    quick: bool = False,
    seeds: int | None = None,
    progress: bool = False,
    trials: int | None = None,
    ext_trials: int | None = None,
    seed: int = 0,
) -> None:
    """Every table of Sec. IV-V, each handed to ``save(name, df)`` as soon as it is computed.

    Full run: 5,000 trials per cell, the N <= 40 extension with 200 trials, the adaptive study
    and the online Tables XVI-XVIII (about 8 minutes on one core). ``quick``: 200 trials, the
    extension to N = 20 with 20 trials, 60 adaptive instances, 600 online jobs (under a minute).
    ``seeds`` is not used (trials play that role).
    """
    trials = trials or (200 if quick else DEFAULT_TRIALS)
    ext_trials = ext_trials or (20 if quick else 200)
    tabs = all_tables(trials=trials, seed=seed, progress=progress)
    for k, df in tabs.items():
        if k != "raw":
            save(f"sojourn_{k.replace(' ', '_').replace('(', '').replace(')', '')}", df)
    save("sojourn_raw", tabs["raw"])
    n_values = (3, 5, 8, 12, 16, 20) if quick else (3, 5, 8, 12, 16, 20, 25, 30, 35, 40)
    save("sojourn_rank_vs_n", rank_vs_n(n_values=n_values, trials=ext_trials, seed=seed + 2))
    save("sojourn_adaptive", adaptive_study(n_instances=60 if quick else 300, seed=seed))
    # Tables XVI-XVIII: one calibrated workload (load 0.9 on 50 servers) run on W servers
    save(
        "sojourn_online",
        online_table(n_jobs=600 if quick else 3000, servers=(5, 10, 20, 50, 100), reference_servers=50, seed=seed),
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m optsched.experiments.sojourn [--trials Z] [--seed S] [--out DIR] [--force]``: the
    same as ``optsched reproduce sojourn-tables``; every table as CSV, written as soon as it is done."""

    p = argparse.ArgumentParser(prog="python -m optsched.experiments.sojourn")
    p.add_argument("--trials", type=int, default=DEFAULT_TRIALS)
    p.add_argument("--ext-trials", type=int, default=200, help="trials per N of the N <= 40 extension")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=None, type=out_folder_arg, help="folder for CSV files (checked before any work)")
    p.add_argument("--force", action="store_true", help="replace files in an existing --out folder")
    a = p.parse_args(argv)
    out = prepare_out_dir(a.out, force=a.force) if a.out else None
    t0 = time.perf_counter()

    def save(name, df):
        print(f"\n### {name}\n")
        if name != "sojourn_raw":
            print(df.round(4).to_string(index=False))
        if out is not None:
            write_table(df, out, name)

    reproduce(
        save,
        quick=a.quick,
        trials=None if a.quick else a.trials,
        ext_trials=None if a.quick else a.ext_trials,
        seed=a.seed,
    )
    print(f"\n[{time.perf_counter() - t0:.0f} s]")
    return 0


if __name__ == "__main__":  # pragma: no cover
    from optsched.solvers.interrupt import run_main

    raise SystemExit(run_main(main, prog="python -m optsched.experiments.sojourn"))
