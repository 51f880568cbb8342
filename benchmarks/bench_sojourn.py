"""Speed of the exact methods for paper 003 (sojourn): largest N proven optimal within 60 s per
method, time at N = 40, speed-up over exhaustive search at N = 9.

``python -m benchmarks sojourn`` (or ``python benchmarks/bench_sojourn.py [--quick]``) writes
``benchmarks/results/sojourn.json``. Two families: the paper's workload set 1 (2-stage jobs, Table
III) and ``crossing_instance`` (pairwise preferences with many 3-cycles: the hard case for the
linear-ordering models). Every optimum is cross-checked between methods.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import platform
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "sojourn.json"
LIMIT = 60.0


def _instance(family: str, n: int, seed: int):
    from optsched.sojourn.generate import crossing_instance, workload

    if family == "workload1":
        return workload(1, n, seed=seed)
    return crossing_instance(n, seed=seed, spread=0.001)


def _run(method: str, pc, limit: float):
    from optsched.exceptions import SolverLimitWarning
    from optsched.sojourn.dp import exhaustive_search, subset_dp
    from optsched.sojourn.exact import solve_lop_cpsat, solve_lop_highs
    from optsched.solvers import SolveOptions

    opts = SolveOptions(time_limit=limit, threads=1)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverLimitWarning)
        if method == "dp":
            v, _ = subset_dp(pc)
            ok = True
        elif method == "enumerate":
            v, _ = exhaustive_search(pc)
            ok = True
        elif method == "cpsat":
            out = solve_lop_cpsat(pc, opts)
            v = out["objective"]
            ok = out["message"] == "OPTIMAL" and v is not None and v - out["bound"] <= 1e-7 * abs(v) + 1e-9
        else:
            out = solve_lop_highs(pc, opts, cycles="all" if method == "highs-all" else "lazy")
            v, ok = out["objective"], bool(out.get("proven"))
    return v, ok, time.perf_counter() - t0


def largest_n(method: str, family: str, ns: list[int], seeds: int, limit: float) -> dict:
    """Increase N until some seed is not proven within ``limit`` s (mean and max time per N)."""
    from optsched.sojourn.evaluate import pair_costs

    rows, best = [], None
    for n in ns:
        times, oks = [], []
        for s in range(seeds):
            pc = pair_costs(_instance(family, n, 1000 * n + s))
            _, ok, t = _run(method, pc, limit)
            times.append(t)
            oks.append(ok and t <= limit)
        rows.append({"N": n, "mean_s": float(np.mean(times)), "max_s": float(np.max(times)), "all_proven": all(oks)})
        print(
            f"  {method:10s} {family:10s} N={n:4d}: mean {np.mean(times):7.2f} s, max {np.max(times):7.2f} s, "
            f"proven {sum(oks)}/{seeds}",
            flush=True,
        )
        if not all(oks):
            break
        best = n
    return {"largest_n_proven": best, "sweep": rows}


def agreement(n: int, family: str, seeds: int) -> dict:
    from optsched.sojourn.evaluate import pair_costs

    worst = 0.0
    for s in range(seeds):
        pc = pair_costs(_instance(family, n, 77 + s))
        vals = [_run(m, pc, LIMIT)[0] for m in ("highs", "highs-all", "cpsat", "dp")]
        worst = max(worst, (max(vals) - min(vals)) / min(vals))
    return {"N": n, "family": family, "seeds": seeds, "max_relative_difference": worst}


def exhaustive_speedup(n: int = 9, seeds: int = 3) -> dict:
    """Exact methods vs exhaustive search at N = 9. Two baselines: our vectorised enumeration of
    the N! orders with the O(N^2) pair-cost evaluator, and the paper's procedure (every order
    evaluated by iterating over all prod M_i outcome combinations), timed on a sample of orders
    and extrapolated to N!."""
    from optsched.sojourn.evaluate import enumerate_outcomes, pair_costs

    out = {"N": n, "methods": {}}
    t_enum, t_paper = [], []
    for s in range(seeds):
        inst = _instance("workload1", n, 9000 + s)
        pc = pair_costs(inst)
        v_enum, _, t = _run("enumerate", pc, LIMIT)
        t_enum.append(t)
        sample = list(itertools.islice(itertools.permutations(inst.job_ids), 50))
        t0 = time.perf_counter()
        for p in sample:
            enumerate_outcomes(inst, list(p))
        t_paper.append((time.perf_counter() - t0) / len(sample) * math.factorial(n))
        for m in ("highs", "cpsat", "dp"):
            v, ok, t = _run(m, pc, LIMIT)
            assert ok and abs(v - v_enum) <= 1e-7 * v_enum, (m, v, v_enum)
            out["methods"].setdefault(m, []).append(t)
    out["exhaustive_vectorised_s"] = float(np.mean(t_enum))
    out["exhaustive_paper_style_s_estimated"] = float(np.mean(t_paper))
    for m, ts in list(out["methods"].items()):
        mt = float(np.mean(ts))
        out["methods"][m] = {
            "mean_s": mt,
            "speedup_vs_vectorised": float(np.mean(t_enum)) / mt,
            "speedup_vs_paper_style": float(np.mean(t_paper)) / mt,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_sojourn")
    ap.add_argument("--quick", action="store_true", help="few sizes, one seed (a minute)")
    ap.add_argument("--out", default=str(RESULTS))
    a = ap.parse_args(argv)
    seeds = 1 if a.quick else 3
    res: dict = {
        "machine": {"python": platform.python_version(), "cpu": platform.processor() or platform.machine()},
        "time_limit_s": LIMIT,
        "threads": 1,
        "seeds_per_size": seeds,
    }
    t0 = time.perf_counter()
    sweeps = {
        "highs": [10, 20, 40, 60, 80, 100, 150, 200, 300, 400] if not a.quick else [10, 40],
        "highs-all": [10, 20, 30, 40, 50, 60, 80, 100] if not a.quick else [10, 40],
        "cpsat": [10, 20, 30, 40, 50, 60, 80, 100, 120] if not a.quick else [10, 40],
        "dp": [10, 14, 16, 18, 20] if not a.quick else [10, 16],
        "enumerate": [6, 7, 8, 9, 10] if not a.quick else [6, 8],
    }
    res["largest_n"] = {}
    for fam in ("workload1", "crossing"):
        for m, ns in sweeps.items():
            res["largest_n"][f"{m}/{fam}"] = largest_n(m, fam, ns, seeds, LIMIT)
    res["n40"] = {}
    from optsched.sojourn.evaluate import pair_costs

    for fam in ("workload1", "crossing"):
        for m in ("highs", "highs-all", "cpsat"):
            ts = []
            for s in range(seeds):
                _, ok, t = _run(m, pair_costs(_instance(fam, 40, 4000 + s)), LIMIT)
                ts.append(t if ok else math.inf)
            res["n40"][f"{m}/{fam}"] = {"mean_s": float(np.mean(ts)), "max_s": float(np.max(ts))}
            print(f"  N=40 {m}/{fam}: {np.mean(ts):.2f} s", flush=True)
    res["agreement"] = [agreement(16, "crossing", seeds), agreement(16, "workload1", seeds)]
    res["exhaustive_n9"] = exhaustive_speedup(9, seeds)
    res["total_s"] = time.perf_counter() - t0
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps({k: res[k] for k in ("n40", "exhaustive_n9")}, indent=1))
    print(f"wrote {a.out} in {res['total_s']:.0f} s")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
