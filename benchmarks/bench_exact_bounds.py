"""How far every exact answer is from the optimum beyond the sizes it proves: the gap
(incumbent - bound) / incumbent an exact solve reports within its time limit, with the cheap bound
it starts from (docs/exact.md#cheap-bound).

Cases (one run each, one thread, the time limit of ``--time-limit``, default 60 s):

* A-SRPT Problem (8), ``asrpt.generate.random_instance(n, n_servers=8, gpus_per_server=8, seed=1)``,
  back end ``cpsat``, n = 64 (target gap <= 10 %) and 128 (<= 25 %); at the generator's default
  arrival rate (0.5 per slot) no job needs to wait there, so the ``-dense`` cases (5 per slot)
  measure the same sizes with queueing;
* elastic (2), ``elastic.generate.random_instance(16, seed=1)``, back ends ``cpsat-direct`` and
  ``highs`` (the default), target gap <= 25 %.

Each row: status, objective, bound, gap, the cheap bound and its part, whether the reported bound
is the cheap one (``bound_from``), the wall-clock seconds of the call and the phase that ran out.
Wall-clock times depend on the machine's load (a shared 2-core machine: noisy). Usage:
``python -m benchmarks exact_bounds`` (``--only asrpt-64``, ``--time-limit 30``); results:
``benchmarks/results/exact_bounds.json``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "exact_bounds.json"

#: case -> (kind, jobs, back end, target gap); "-dense": arrivals 10x as often (arrival_rate 5 per
#: slot), so that jobs queue (at the default rate no job of these instances needs to wait)
CASES = {
    "asrpt-64": ("asrpt", 64, "cpsat", 0.10),
    "asrpt-128": ("asrpt", 128, "cpsat", 0.25),
    "asrpt-64-dense": ("asrpt", 64, "cpsat", 0.10),
    "asrpt-128-dense": ("asrpt", 128, "cpsat", 0.25),
    "elastic-16-cpsat-direct": ("elastic", 16, "cpsat-direct", 0.25),
    "elastic-16-highs": ("elastic", 16, "highs", 0.25),
}


def run_case(kind: str, n: int, backend: str, time_limit: float, dense: bool = False) -> dict:
    from optsched.solvers import SolveOptions

    if kind == "asrpt":
        from optsched.asrpt.exact import cheap_bound, solve_exact
        from optsched.asrpt.generate import random_instance

        inst = random_instance(n, n_servers=8, gpus_per_server=8, seed=1, arrival_rate=5.0 if dense else 0.5)
    else:
        from optsched.elastic.cheap_bounds import min_sum_bound as cheap_bound
        from optsched.elastic.exact import solve_exact
        from optsched.elastic.generate import random_instance

        inst = random_instance(n, seed=1)
    t0 = time.perf_counter()
    cheap, which = cheap_bound(inst)
    cheap_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_exact(inst, backend=backend, options=SolveOptions(threads=1, time_limit=time_limit))
    return {
        "status": r.status.value,
        "objective": r.objective,
        "bound": r.bound,
        "gap": None if r.gap is None else round(float(r.gap), 5),
        "cheap_bound": cheap,
        "cheap_part": which,
        "cheap_seconds": round(cheap_seconds, 4),
        "bound_from": r.info.get("bound_from"),
        "seconds": round(time.perf_counter() - t0, 1),
        "limit_reached_in": r.info.get("limit_reached_in"),
        "phases": r.info.get("phases"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_exact_bounds", description=__doc__)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--only", nargs="*", choices=sorted(CASES), default=None)
    args = ap.parse_args(argv)
    rows, targets = [], []
    if args.only and RESULTS.is_file():  # keep the cases not measured in this run
        old = json.loads(RESULTS.read_text())
        rows = [r for r in old.get("rows", []) if r["case"] not in args.only]
        targets = [t for t in old.get("targets", []) if not any(t["case"].startswith(c + " ") for c in args.only)]
    for case, (kind, n, backend, target) in CASES.items():
        if args.only and case not in args.only:
            continue
        row = {
            "case": case,
            "kind": kind,
            "jobs": n,
            "backend": backend,
            **run_case(kind, n, backend, args.time_limit, case.endswith("-dense")),
        }
        print(json.dumps({k: v for k, v in row.items() if k != "phases"}), flush=True)
        rows.append(row)
        targets.append(
            {"case": f"{case} gap in {args.time_limit:g} s", "measured": row["gap"], "target": target, "unit": "ratio"}
        )
    doc = {
        "time_limit": args.time_limit,
        "threads": 1,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "note": "one run per case on a shared, loaded 2-core machine: wall-clock figures are noisy",
        "rows": rows,
        "targets": targets,
    }
    from optsched.core.io import atomic_write_text

    atomic_write_text(RESULTS, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
