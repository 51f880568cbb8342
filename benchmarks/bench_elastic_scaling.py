"""Paper 001 (elastic): how one A_maxweight call (Alg. 3, the exact pricing oracle) scales in the
number of jobs J, the window tau and the number of servers H, beside Thm 4's complexity bound.

Thm 4 bounds A_online by O(log w(J) * J M P T^2 log T (H log H + H^2)): one A_maxweight call
prices each of the J jobs once, so per call the exponents it implies are 1 in J, about 2 in tau
(T^2 log T) and about 2 in H. This benchmark varies one of J, tau, H around a base point
(J = 20, tau = 32, H = 10; M = 8 worker types, P = 10 PS types, D <= 20) and fits the log-log slope
of the CPU time (``time.process_time``, the median of ``--repeat`` runs). Measured exponents below
Thm 4's mean the implementation does better than the bound (vectorised over starts, pruned blocks);
above it would contradict the theorem.

``python -m benchmarks elastic_scaling`` (or ``python benchmarks/bench_elastic_scaling.py``)
writes ``benchmarks/results/elastic_scaling.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "elastic_scaling.json"

BASE = {"J": 20, "tau": 32, "H": 10}
GRID = {"J": (10, 20, 40, 80), "tau": (16, 32, 64, 128), "H": (5, 10, 20, 40)}
#: Thm 4's exponent per call of A_maxweight (log factors dropped: T^2 log T counts as 2, H^2 as 2).
THM4 = {"J": 1.0, "tau": 2.0, "H": 2.0}


def _instance(J: int, H: int, seed: int):
    from optsched.elastic.generate import random_instance

    return random_instance(
        J, n_servers=H, n_worker_types=8, n_ps_types=10, max_chunks=20, seed=seed, horizon=10**4, max_arrival=0
    )


def time_maxweight(J: int, tau: int, H: int, *, seed: int = 0, repeat: int = 3) -> dict:
    """CPU seconds of one ``a_maxweight`` call over every job (median of ``repeat``)."""
    from optsched.elastic.primal_dual import a_maxweight

    inst = _instance(J, H, seed)
    a_maxweight(inst, tau=tau, lam=1000.0)  # warm the per-instance caches (useful counts) once
    times = []
    run = None
    for _ in range(repeat):
        t0 = time.process_time()
        run = a_maxweight(inst, tau=tau, lam=1000.0)
        times.append(time.process_time() - t0)
    assert run is not None
    return {"J": J, "tau": tau, "H": H, "cpu_s": round(statistics.median(times), 4), "scheduled": len(run.chosen)}


def slope(xs, ys) -> float:
    """Least-squares slope of log y on log x."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-6)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three points per dimension, one repeat")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(RESULTS))
    a = ap.parse_args(argv)
    repeat = 1 if a.quick else a.repeat
    t_start = time.perf_counter()
    res: dict = {
        "benchmark": "elastic A_maxweight scaling vs Thm 4",
        "machine": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "base": BASE,
        "repeat": repeat,
        "clock": "time.process_time (CPU seconds of this process)",
        "dimensions": {},
    }
    for dim, values in GRID.items():
        values = values[:3] if a.quick else values
        rows = []
        for v in values:
            point = {**BASE, dim: v}
            rows.append(time_maxweight(point["J"], point["tau"], point["H"], repeat=repeat))
            print(dim, v, rows[-1]["cpu_s"], flush=True)
        k = slope([r[dim] for r in rows], [r["cpu_s"] for r in rows])
        res["dimensions"][dim] = {"rows": rows, "exponent": round(k, 2), "thm4_exponent": THM4[dim]}
    res["targets"] = [
        {
            "case": f"elastic A_maxweight CPU-time exponent in {dim} (Thm 4: {THM4[dim]:g})",
            "measured": res["dimensions"][dim]["exponent"],
            "target": THM4[dim],
            "unit": "exponent",
        }
        for dim in GRID
    ]
    res["wall_s"] = round(time.perf_counter() - t_start, 1)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps({d: v["exponent"] for d, v in res["dimensions"].items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
