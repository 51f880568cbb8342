"""The portfolio with and without incumbents shared during the run (optsched.solvers.sharing).

Run: ``python -m benchmarks share`` or ``python -m benchmarks.bench_share [--time-limit S]
[--only n30-4x4,...] [--repeats K]`` (writes ``benchmarks/results/share.json``).

Issue 12's three hardest single-server instances (n30-4x4, n40-4x4, n50-4x8; the same
``random_instance`` arguments as ``bench_exact_peer``), ``solve_exact(backend="portfolio")``, one
thread per member, 20 s, with ``SHARE_INCUMBENTS`` on and off, alternating, ``--repeats`` times.
Per run: status, objective, bound, wall seconds of the whole call, the winner and the sharing
counts (CP-SAT's ``incumbents_sent``; HiGHS's ``received``/``given``/``taken``). The 1-minute load
average is recorded before every solve: the machine is shared. No targets: sharing is measured,
not promised.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

from benchmarks.bench_exact_peer import INSTANCES, _load, _name

OUT = Path(__file__).parent / "results" / "share.json"
CASES = ("n30-4x4", "n40-4x4", "n50-4x8")


def _run(inst, share: bool, time_limit: float) -> dict:
    from optsched.rigid import solve_exact
    from optsched.solvers import SolveOptions, portfolio

    old = portfolio.SHARE_INCUMBENTS
    portfolio.SHARE_INCUMBENTS = share
    load = _load()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            r = solve_exact(inst, backend="portfolio", options=SolveOptions(time_limit=time_limit, threads=1))
            wall = time.perf_counter() - t0
    finally:
        portfolio.SHARE_INCUMBENTS = old
    rows = r.info.get("portfolio", {})
    counts = {
        n: {k.removeprefix("incumbents_"): v for k, v in row.items() if k.startswith("incumbents_")}
        for n, row in rows.items()
        if any(k.startswith("incumbents_") for k in row)
    }
    return {
        "share": share,
        "status": r.status.value,
        "objective": r.objective,
        "bound": r.bound,
        "seconds": round(wall, 3),
        "winner": r.info.get("winner"),
        "members": {n: {"status": row["status"], "objective": row["objective"]} for n, row in rows.items()},
        "shared": counts,
        "load": load,
    }


def main(argv: list[str] | None = None) -> dict:
    from optsched.rigid import random_instance

    ap = argparse.ArgumentParser(prog="bench_share", description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--only", default=",".join(CASES), help="comma-separated instance names")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv or [])
    only = set(args.only.split(","))
    t_start = time.time()
    runs = []
    for n, m, g, s in INSTANCES:
        name = _name(n, m, g)
        if name not in only:
            continue
        inst = random_instance(n, n_servers=m, gpus_per_server=g, single_server=1.0, seed=s, name=name)
        for _ in range(args.repeats):
            for share in (True, False):
                row = {"instance": name, **_run(inst, share, args.time_limit)}
                runs.append(row)
                print(
                    f"{name:9s} share={'on ' if share else 'off'} {row['status']:8s} obj={row['objective']} "
                    f"bound={row['bound']} {row['seconds']:.2f}s winner={row['winner']} shared={row['shared']} "
                    f"load={row['load']}",
                    flush=True,
                )
    from importlib.metadata import version

    out = {
        "benchmark": "portfolio with and without incumbents shared during the run",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t_start)),
        "time_limit": args.time_limit,
        "threads_per_member": 1,
        "versions": {"ortools": version("ortools"), "highspy": version("highspy")},
        "runs": runs,
        "targets": [],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
