"""``optsched compare`` at trace scale: every policy, one seed, on synthetic jobs at load 0.9.

Cases (each in a fresh subprocess; wall times, on a machine that may be shared):

* ``all-10k``: 10,000 jobs on 64 x 8 GPUs, ``--policies all --seeds 1``, ``--workers 2``
  (processes), default overheads (load and save times from the model size). Target: 2 minutes.
* ``all-100k``: 100,000 jobs on 64 x 8 GPUs, the same. Target: 10 minutes.
* ``scaling-2k``: 2,000 jobs on 16 x 8 GPUs, every policy, on a Dask ``LocalCluster`` of 1 and 2
  workers (how the time scales with workers).

Workloads: :func:`optsched.traces.synthetic_workload` (Philly-like durations capped at one day,
70/10/15/5 % of 1/2/4/8 GPUs), seed 0, arrivals scaled to offered load 0.9
(:func:`~optsched.experiments.compare.calibrate_load`), as ``optsched compare --trace synthetic``
does. Each case records its total wall time, the time of building the workloads and the bound, and
each policy's ``seconds`` (the wall time of its run inside a worker), so the per-policy cost is in
the results too; while a case runs, its finished rows are appended to
``<temp dir>/optsched-bench-compare-<case>.jsonl``.

Usage: ``python -m benchmarks compare`` (every case), ``python -m benchmarks.bench_compare --case
all-10k`` (one), ``--quick`` (``all-10k`` and ``scaling-2k`` only). Results:
``benchmarks/results/compare.json``; the targets go to the ``python -m benchmarks`` table.
``--policy NAME --case all-100k`` runs one row alone on the case's workload (one process; its
``seconds`` and ``cpu_seconds`` printed, the results file left as it is).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "compare.json"
CASES = {
    "all-10k": {"n": 10_000, "servers": 64, "gpus": 8, "executor": "processes", "workers": 2, "target": 120.0},
    "all-100k": {"n": 100_000, "servers": 64, "gpus": 8, "executor": "processes", "workers": 2, "target": 600.0},
    "scaling-2k-dask-1": {"n": 2_000, "servers": 16, "gpus": 8, "executor": "dask", "workers": 1},
    "scaling-2k-dask-2": {"n": 2_000, "servers": 16, "gpus": 8, "executor": "dask", "workers": 2},
}
QUICK = ("all-10k", "scaling-2k-dask-1", "scaling-2k-dask-2")


def _child(case: str, policy: str | None = None) -> dict:
    """Run one case (or its ``policy`` row alone) in this process (called in a subprocess) and return
    its measurements."""
    import warnings

    from optsched.core import Cluster
    from optsched.experiments.compare import Comparison, calibrate_load
    from optsched.traces import synthetic_workload

    c = CASES[case]
    G = c["servers"] * c["gpus"]
    cluster = Cluster.homogeneous(c["servers"], c["gpus"])
    t0 = time.perf_counter()
    df = synthetic_workload(c["n"], cluster_gpus=G, load=0.9, max_gpus=G, max_duration=86_400.0, seed=0)
    df = calibrate_load(df, 0.9, G)
    t_gen = time.perf_counter() - t0
    ended: list[tuple[str, float]] = []
    log = Path(tempfile.gettempdir()) / f"optsched-bench-compare-{case}.jsonl"  # rows as they end
    log.write_text("")

    def on_row(row, rows):
        ended.append((row["policy"], time.perf_counter() - t1))
        with log.open("a") as f:
            rec = {"policy": row["policy"], "seconds": row.get("seconds"), "cpu_seconds": row.get("cpu_seconds")}
            f.write(json.dumps({**rec, "at": ended[-1][1]}) + "\n")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t1 = time.perf_counter()
        run = Comparison(
            df,
            cluster,
            policies=[policy] if policy else "all",
            seeds=1,
            progress=False,
            workers=1 if policy else c["workers"],
            executor=c["executor"],
            scheduler_address="local" if c["executor"] == "dask" else None,
            on_row=on_row,
        )
        t_prep = time.perf_counter() - t1
        run.run()
        total = time.perf_counter() - t1
    table = run.table()
    rows = {
        r["policy"]: {
            "seconds": round(float(r.get("seconds") or 0.0), 2),
            "cpu_seconds": round(float(r.get("cpu_seconds") or 0.0), 2),
            "ratio_to_bound": None if r.get("ratio_to_bound") is None else round(float(r["ratio_to_bound"]), 4),
            "failed": r.get("failed"),
        }
        for r in table.to_dict("records")
    }
    return {
        "case": case,
        **{k: v for k, v in c.items() if k != "target"},
        "generate_seconds": round(t_gen, 2),
        "prepare_seconds": round(t_prep, 2),
        "total_seconds": round(total, 2),
        "policy_seconds_sum": round(sum(v["seconds"] for v in rows.values()), 2),
        "policy_cpu_seconds_sum": round(sum(v["cpu_seconds"] for v in rows.values()), 2),
        "load_average": os.getloadavg(),
        "ended_at": [(p, round(t, 1)) for p, t in ended],
        "rows": rows,
        "bound_mean_jct": table.attrs["bound"]["mean_jct"],
    }


def _run_case(case: str, policy: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.bench_compare", "--child", case, *(["--policy", policy] if policy else [])]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    if out.returncode != 0:
        return {"case": case, "error": out.stderr[-2000:], "wall_seconds": round(time.perf_counter() - t0, 1)}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_compare", description=__doc__)
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--policy", default=None, help="run this row alone (one process; results file untouched)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.policy)))
        return 0
    cases = args.case or (list(QUICK) if args.quick else list(CASES))
    if args.policy:
        for case in cases:
            r = _run_case(case, args.policy)
            print(json.dumps({"case": case, **r.get("rows", {}), **({"error": r["error"]} if "error" in r else {})}))
        return 0
    old = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results = {r["case"]: r for r in old.get("cases", [])}
    for case in cases:
        print(f"-- {case}", flush=True)
        r = _run_case(case)
        results[case] = r
        print(json.dumps({k: v for k, v in r.items() if k not in ("rows", "ended_at")}), flush=True)
        _write(results)  # after every case: a long run stopped later keeps what it measured
    return 0


def _write(results: dict) -> None:
    targets = [
        {
            "case": f"compare --policies all, {CASES[k]['n']:,} jobs, 2 workers (s)",
            "measured": results[k].get("total_seconds"),
            "target": CASES[k]["target"],
            "unit": "s",
        }
        for k in ("all-10k", "all-100k")
        if k in results and "total_seconds" in results[k]
    ]
    doc = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "cases": [results[k] for k in CASES if k in results],
        "targets": targets,
    }
    from optsched.core.io import atomic_write_text

    atomic_write_text(RESULTS, json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
