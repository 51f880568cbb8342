"""The frontier of every exact model: the largest size of the kind's ``random_instance`` (default
cluster) proven within the time limit for every seed, and the gap reached at twice and four times
that size (docs/exact.md#frontier).

For each kind (and back end): sizes n = start, 2 start, 4 start, ... ; at each, seeds 0..S-1 are
solved in turn (one thread, ``--time-limit`` s, default 60) and the scan stops at the first seed not
proven; the frontier is the last size every seed proved. Then seed 0 is solved at 2x and 4x the
frontier, and its status, gap, bound and cheap bound are recorded. Doubling sizes only: the
frontier is a power-of-two multiple of the start (the true largest size lies below the next one).

CPU-expensive (a failed size costs a whole time limit): ``--kinds`` and ``--seeds`` narrow it.
Wall-clock times depend on the machine's load. Usage: ``python -m benchmarks exact_frontier``
(``--kinds elastic rarddls --seeds 5``); results: ``benchmarks/results/exact_frontier.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
import warnings
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "exact_frontier.json"

#: kind -> (generator module, solver module, back end, first size)
KINDS = {
    "rigid": ("optsched.rigid.generate", "optsched.rigid.exact", "highs", 8),
    "asrpt": ("optsched.asrpt.generate", "optsched.asrpt.exact", "cpsat", 8),
    "elastic": ("optsched.elastic.generate", "optsched.elastic.exact", "highs", 4),
    "rarddls": ("optsched.rarddls.generate", "optsched.rarddls.exact", "highs", 4),
    "sojourn": ("optsched.sojourn.generate", "optsched.sojourn.exact", "highs", 8),
}


def solve(kind: str, n: int, seed: int, time_limit: float) -> dict:
    from optsched.solvers import SolveOptions

    gen, mod, backend, _ = KINDS[kind]
    inst = importlib.import_module(gen).random_instance(n, seed=seed)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = importlib.import_module(mod).solve_exact(
                inst, backend=backend, options=SolveOptions(threads=1, time_limit=time_limit)
            )
    except Exception as e:  # a failure is a result of the scan too: recorded, the scan goes on
        return {"n": n, "seed": seed, "status": "error", "error": f"{type(e).__name__}: {e}"[:300]}
    return {
        "n": n,
        "seed": seed,
        "status": r.status.value,
        "objective": r.objective,
        "bound": r.bound,
        "gap": None if r.gap is None else round(float(r.gap), 5),
        "cheap_bound": r.info.get("initial_bound", r.info.get("lower_bound")),
        "cheap_part": r.info.get("cheap_bound"),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def frontier(kind: str, seeds: int, time_limit: float, max_doublings: int = 6) -> dict:
    start = KINDS[kind][3]
    runs, proven, n = [], None, start
    for _ in range(max_doublings):
        ok = True
        for s in range(seeds):
            row = solve(kind, n, s, time_limit)
            runs.append(row)
            print(json.dumps({"kind": kind, **row}), flush=True)
            if row["status"] != "optimal":
                ok = False
                break
        if not ok:
            break
        proven, n = n, 2 * n
    beyond = []
    if proven is not None:
        for k in (2, 4):
            row = next((r for r in runs if r["n"] == k * proven and r["seed"] == 0), None)
            row = row or solve(kind, k * proven, 0, time_limit)
            print(json.dumps({"kind": kind, "at": f"{k}x", **row}), flush=True)
            beyond.append({"at": f"{k}x", **row})
    return {"backend": KINDS[kind][2], "proven": proven, "seeds": seeds, "beyond": beyond, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_exact_frontier", description=__doc__)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--kinds", nargs="*", choices=sorted(KINDS), default=sorted(KINDS))
    args = ap.parse_args(argv)
    out = {}
    if RESULTS.is_file():  # keep the kinds not measured in this run
        out = json.loads(RESULTS.read_text()).get("kinds", {})
    from optsched.core.io import atomic_write_text

    for kind in args.kinds:  # written after every kind: an interrupted scan keeps what it measured
        out[kind] = {
            **frontier(kind, args.seeds, args.time_limit),
            "time_limit": args.time_limit,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        doc = {
            "note": "one thread per solve on a shared, loaded 2-core machine: wall-clock figures are noisy",
            "kinds": out,
        }
        atomic_write_text(RESULTS, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
