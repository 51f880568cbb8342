"""How close the lower bound of ``optsched compare`` is to the optimum, on small instances.

Random instances of 3-5 jobs on one cluster of G = 4 GPUs (integer releases 0-6, 1-4 GPUs,
processing 1-5 s; seeds 0..N-1). For each: the three parts of
:func:`optsched.core.bounds.jct_lower_bound` (own length, fluid SRPT, mean busy time) and their
maximum (the bound), against

* the **preemptive optimum with preemptions at whole seconds**, by exhaustive search over which
  jobs run in each second (a schedule of the instance, so at least the true preemptive optimum,
  which may preempt at fractional times), and
* the **non-preemptive optimum** of the exact rigid model
  (:func:`optsched.rigid.trace_bounds.nonpreemptive_lower_bound`, whole-second data, proven).

Both are totals of JCT. Usage: ``python -m benchmarks compare_bound`` (``--n 300``); results:
``benchmarks/results/compare_bound.json`` (every instance, and a summary per part).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "compare_bound.json"
G = 4


def preemptive_optimum(release, gpus, work, total_gpus) -> int:
    """min sum C over schedules that run any set of released jobs of at most G GPUs in each second
    (never none while some job could run)."""
    n = len(release)

    @functools.cache
    def best(t: int, rem: tuple) -> int:
        if all(x == 0 for x in rem):
            return 0
        ready = [i for i in range(n) if rem[i] > 0 and release[i] <= t]
        out = None
        for k in range(len(ready), -1, -1):
            for S in itertools.combinations(ready, k):
                if sum(gpus[i] for i in S) > total_gpus or (k == 0 and ready):
                    continue  # idling while a job could run never helps: it can be preempted next second
                r = list(rem)
                for i in S:
                    r[i] -= 1
                v = sum(t + 1 for i in S if r[i] == 0) + best(t + 1, tuple(r))
                out = v if out is None else min(out, v)
        return out

    return best(0, tuple(work))


def instance(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 6))
    r = rng.integers(0, 7, n).tolist()
    g = rng.integers(1, G + 1, n).tolist()
    p = rng.integers(1, 6, n).tolist()
    return r, g, p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_compare_bound", description=__doc__)
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args(argv)

    from optsched.core import Cluster
    from optsched.core.bounds import jct_lower_bound
    from optsched.rigid.trace_bounds import nonpreemptive_lower_bound

    cluster = Cluster.homogeneous(1, G)
    rows = []
    t0 = time.perf_counter()
    for seed in range(args.n):
        r, g, p = instance(seed)
        b = jct_lower_bound(r, g, p, G)
        opt = preemptive_optimum(r, g, p, G) - sum(r)
        npb = nonpreemptive_lower_bound(r, g, p, cluster, time_limit=20)
        rows.append(
            {
                "seed": seed,
                "jobs": len(r),
                "own_length": b.own_length,
                "fluid": b.fluid,
                "mean_busy": b.mean_busy,
                "own_or_fluid": max(b.own_length, b.fluid),  # the bound without the mean busy time part
                "bound": b.total,
                "which": b.which,
                "preemptive_opt": opt,
                "nonpreemptive_opt": npb.total if npb.optimal else None,
            }
        )
    summary = {}
    for part in ("own_length", "fluid", "mean_busy", "own_or_fluid", "bound"):
        ratio = np.array([x[part] / x["preemptive_opt"] for x in rows])
        summary[part] = {
            "mean_ratio_to_preemptive_opt": round(float(ratio.mean()), 4),
            "min_ratio": round(float(ratio.min()), 4),
            "equal_to_opt": int(np.isclose(ratio, 1.0).sum()),
            "largest_part": int(sum(x["which"] == part for x in rows)),
        }
    summary["mean_busy_above_fluid"] = int(sum(x["mean_busy"] > x["fluid"] + 1e-9 for x in rows))
    summary["mean_busy_above_both"] = int(sum(x["mean_busy"] > max(x["fluid"], x["own_length"]) + 1e-9 for x in rows))
    nps = [x for x in rows if x["nonpreemptive_opt"] is not None]
    summary["nonpreemptive_over_preemptive_opt"] = round(
        float(np.mean([x["nonpreemptive_opt"] / x["preemptive_opt"] for x in nps])), 4
    )
    summary["violations"] = int(sum(x["bound"] > x["preemptive_opt"] + 1e-9 for x in rows))
    doc = {
        "instances": args.n,
        "gpus": G,
        "seconds": round(time.perf_counter() - t0, 1),
        "summary": summary,
        "rows": rows,
    }
    from optsched.core.io import atomic_write_text

    atomic_write_text(RESULTS, json.dumps(doc, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
