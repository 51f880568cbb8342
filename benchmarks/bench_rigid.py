"""Rigid exact models: time to prove optimality vs number of jobs, HiGHS vs CP-SAT.

Run: ``python -m benchmarks rigid`` (writes ``benchmarks/results/rigid.json``).
Random instances from ``optsched.rigid.random_instance`` (Philly-like GPU demands, half of the
jobs single-server, 2 servers x 4 GPUs, works 1..10 s, arrivals 0..n/4 s), 3 seeds per size, 60 s limit, 1 thread
for HiGHS and 2 CP-SAT workers.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
import warnings
from pathlib import Path

OUT = Path(__file__).parent / "results" / "rigid.json"


def main(argv=None, sizes=(8, 12, 16, 20), seeds=(0, 1, 2), time_limit=60.0) -> dict:
    from optsched.rigid import list_schedule, random_instance, solve_exact
    from optsched.solvers import SolveOptions

    rows = []
    for n in sizes:
        for seed in seeds:
            inst = random_instance(
                n,
                n_servers=2,
                gpus_per_server=4,
                single_server=0.5,
                max_work=10,
                arrival_span=max(1, n // 4),
                seed=seed,
            )
            h = list_schedule(inst)
            for backend, threads in (("highs", 1), ("cpsat", 2)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    r = solve_exact(inst, backend=backend, options=SolveOptions(time_limit=time_limit, threads=threads))
                    wall = time.perf_counter() - t0
                rows.append(
                    {
                        "n": n,
                        "seed": seed,
                        "backend": backend,
                        "status": str(r.status),
                        "objective": r.objective,
                        "bound": r.bound,
                        "gap": r.gap,
                        "seconds": round(wall, 3),
                        "wspt": h.objective,
                    }
                )
                print(
                    f"n={n:3d} seed={seed} {backend:5s} {r.status!s:9s} obj={r.objective} bound={r.bound} "
                    f"{wall:6.2f}s (WSPT {h.objective})",
                    flush=True,
                )
    summary = {}
    for n in sizes:
        for b in ("highs", "cpsat"):
            sel = [r for r in rows if r["n"] == n and r["backend"] == b]
            summary[f"{b}_n{n}"] = {
                "proven": sum(r["status"] == "optimal" for r in sel),
                "runs": len(sel),
                "median_s": statistics.median(r["seconds"] for r in sel),
            }
    out = {
        "benchmark": "rigid exact",
        "machine": platform.machine(),
        "python": platform.python_version(),
        "time_limit": time_limit,
        "rows": rows,
        "summary": summary,
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
