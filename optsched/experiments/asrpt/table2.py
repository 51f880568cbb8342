"""Table II of the A-SRPT paper: Heavy-Edge vs exact placement (PITT and PCT) over 20 GPU
availability patterns, for the VGG19-like and GPT-like profiles of :mod:`optsched.asrpt.profiles`.

``python -m optsched.experiments.asrpt.table2`` prints the table.

Tested in ``tests/asrpt/test_placement.py``.
"""

from __future__ import annotations

import time

import numpy as np

from optsched.asrpt.heavy_edge import heavy_edge, placement_counts
from optsched.asrpt.placement import availability_patterns, enumerate_placement, solve_placement
from optsched.asrpt.profiles import PROFILES
from optsched.asrpt.timing import alpha
from optsched.solvers import SolveOptions

#: Paper's Table II: (PITT ms, PCT ms) for Heavy-Edge and the Gurobi ILP (MacBook M1 Max).
PAPER_TABLE2 = {
    "VGG19": {"he_pitt": 88.11, "he_pct": 1.94, "ilp_pitt": 82.96, "ilp_pct": 55318.86},
    "GPT-175B": {"he_pitt": 10.14, "he_pct": 1.52, "ilp_pitt": 10.14, "ilp_pct": 2288.12},
}


def table2_rows(
    *,
    n_patterns: int = 20,
    seed: int = 0,
    cross_check: bool = True,
    gpus: int = 8,
    b_inter: float = 10e9 / 8,
    b_intra: float = 300e9,
) -> list[dict]:
    rows = []
    opts = SolveOptions(time_limit=60, threads=1)
    for name, make in PROFILES.items():
        job = make()
        for idx, free in enumerate(availability_patterns(job.gpus, gpus, n_patterns, seed=seed)):
            kw = dict(g=gpus, b_inter=b_inter, b_intra=b_intra)
            t0 = time.perf_counter()
            mp = heavy_edge(job, free, seed=seed)
            t_he = time.perf_counter() - t0
            a_he = alpha(job, placement_counts(job, mp, len(free)), **kw)
            ex = solve_placement(job, free, exact_usage=True, options=opts, **kw)
            row = {
                "model": name,
                "pattern": idx,
                "free": free,
                "he_pitt_ms": 1e3 * a_he,
                "he_pct_ms": 1e3 * t_he,
                "ilp_pitt_ms": 1e3 * ex.alpha,
                "ilp_pct_ms": 1e3 * ex.runtime,
                "ilp_solver_ms": 1e3 * ex.info["solver_runtime"],
                "ilp_status": str(ex.status),
                "ilp_gap": ex.gap,
            }
            if cross_check:
                en = enumerate_placement(job, free, exact_usage=True, **kw)
                row["enum_pitt_ms"] = 1e3 * en.alpha
                row["enum_ms"] = 1e3 * en.runtime
            rows.append(row)
    return rows


def table2(rows: list[dict] | None = None, **kw):
    """Per model: mean PITT and PCT of Heavy-Edge and of the exact MILP, beside the paper's."""
    import pandas as pd

    df = pd.DataFrame(rows if rows is not None else table2_rows(**kw))
    agg = df.groupby("model").agg(
        he_pitt_ms=("he_pitt_ms", "mean"),
        he_pct_ms=("he_pct_ms", "mean"),
        ilp_pitt_ms=("ilp_pitt_ms", "mean"),
        ilp_pct_ms=("ilp_pct_ms", "mean"),
        ilp_pct_max_ms=("ilp_pct_ms", "max"),
        optimal=("ilp_status", lambda s: int((s == "optimal").sum())),
        he_optimal=("he_pitt_ms", "size"),
    )
    agg["he_optimal"] = df.assign(eq=np.isclose(df.he_pitt_ms, df.ilp_pitt_ms, rtol=1e-9)).groupby("model").eq.sum()
    agg["he_over_ilp"] = agg.he_pitt_ms / agg.ilp_pitt_ms
    for k in ("he_pitt", "he_pct", "ilp_pitt", "ilp_pct"):
        agg[f"paper_{k}_ms"] = [PAPER_TABLE2[m][k] for m in agg.index]
    return agg


def run(save, *, quick: bool = False, seeds: int | None = None, progress: bool = False) -> None:
    """``optsched reproduce asrpt-table2``: Table II beside the paper's (``quick``: 5 availability
    patterns instead of 20, no enumeration cross-check). ``seeds``: patterns drawn with seeds 0..n-1."""
    import pandas as pd

    n = seeds if seeds is not None else 1
    rows = []
    for sd in range(n):
        rows += table2_rows(n_patterns=5 if quick else 20, seed=sd, cross_check=not quick)
    save("table2", table2(rows).reset_index())
    save("table2_rows", pd.DataFrame(rows))


def main() -> int:  # pragma: no cover - prints Table II beside the paper's
    import pandas as pd

    pd.set_option("display.width", 200)
    print(table2().round(3).T)
    return 0


if __name__ == "__main__":  # pragma: no cover
    from optsched.solvers.interrupt import run_main

    raise SystemExit(run_main(main, prog="python -m optsched.experiments.asrpt.table2"))
