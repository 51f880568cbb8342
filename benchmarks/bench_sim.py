"""Simulator speed: Philly-like workloads replayed with SRTF (and FIFO/LAS at 100,000 jobs).

Cases (each in a fresh subprocess, so peak memory = that run's max RSS, interpreter included):

* ``philly-1k``: 1,000 jobs on 27 servers x 4 GPUs, offered load 0.9, durations capped at one
  day, SRTF (target <= 0.1 s);
* ``synthetic-100k``: 100,000 jobs on 750 x 8, load 0.8, SRTF; ``-fifo`` and ``-las`` variants;
* ``overload-100k``: 100,000 jobs on 750 x 8, load 1.1, durations capped at one day, SRTF
  (queues build up and preemptions are frequent);
* ``synthetic-1m``: 1,000,000 jobs on 750 x 8, load 1.0, durations capped at one day, SRTF
  (target <= 120 s, <= 4 GiB);
* ``contention-10k``: 10,000 jobs on 64 x 4 GPUs, load 0.9, SRTF, with
  :class:`~optsched.sim.SplitContentionRate` (alpha 0.2: every split job slows with the split
  jobs on its servers, counts kept incrementally); ``contention-10k-constant`` is the same
  workload at rate 1, for the cost of the co-runner updates.

Why the caps: Philly run times are heavy-tailed (max 4.6e6 s); over a short arrival window most
of the offered GPU-seconds come from a few jobs that run long after the last arrival, so the
cluster barely queues. Capping at one day keeps the load inside the window, and so exercises
queues and preemptions; the uncapped 100k cases show the light-queue regime.

Workloads: :func:`optsched.traces.synthetic_workload` (Philly runtimes, 70/10/15/5% of 1/2/4/8
GPUs, Poisson arrivals), seed 0. ``sim_seconds`` covers building the Simulator from the job table
and running it (event log off); generation time is reported apart.

Usage: ``python -m benchmarks sim`` (all), ``python -m benchmarks.bench_sim --quick`` (no 1M case),
``python -m benchmarks.bench_sim --case philly-1k``; ``--plot`` redraws ``docs/sim-scaling.png`` (time vs
jobs, log-log) from the stored results. The issue's targets are written as ``"targets"`` for the
``python -m benchmarks`` table.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "philly-1k": dict(n=1000, servers=27, gpus=4, load=0.9, policy="srtf", max_duration=86400.0, repeat=7),
    "synthetic-100k": dict(n=100_000, servers=750, gpus=8, load=0.8, policy="srtf", max_duration=None, repeat=1),
    "synthetic-100k-fifo": dict(n=100_000, servers=750, gpus=8, load=0.8, policy="fifo", max_duration=None, repeat=1),
    "synthetic-100k-las": dict(n=100_000, servers=750, gpus=8, load=0.8, policy="las", max_duration=None, repeat=1),
    "overload-100k": dict(n=100_000, servers=750, gpus=8, load=1.1, policy="srtf", max_duration=86400.0, repeat=1),
    "synthetic-1m": dict(n=1_000_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
    # co-runner-dependent rates: every split job slows with the split jobs on its servers
    "contention-10k": dict(
        n=10_000, servers=64, gpus=4, load=0.9, policy="srtf", max_duration=86400.0, repeat=3, rate="split-contention"
    ),
    "contention-10k-constant": dict(
        n=10_000, servers=64, gpus=4, load=0.9, policy="srtf", max_duration=86400.0, repeat=3
    ),
    # issue "Scale": a busy Philly-like trace with LAS, 1M jobs with LAS and FIFO, a Helios-sized replay, and the
    # growth of SRTF's time with the number of jobs (with synthetic-100k-... and synthetic-1m)
    "philly-1k-las": dict(n=1000, servers=27, gpus=4, load=1.1, policy="las", max_duration=86400.0, repeat=5),
    "synthetic-1m-las": dict(n=1_000_000, servers=750, gpus=8, load=1.0, policy="las", max_duration=86400.0, repeat=1),
    "synthetic-1m-fifo": dict(
        n=1_000_000, servers=750, gpus=8, load=1.0, policy="fifo", max_duration=86400.0, repeat=1
    ),
    "scale-10k": dict(n=10_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=3),
    "scale-100k": dict(n=100_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
    "scale-300k": dict(n=300_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
    "helios-3.36m": dict(n=3_360_000, servers=750, gpus=8, load=1.0, policy="srtf", max_duration=86400.0, repeat=1),
}
#: cases of a million jobs or more (skipped by --quick)
BIG = {"synthetic-1m", "synthetic-1m-las", "synthetic-1m-fifo", "helios-3.36m"}
#: the issue's targets: (case, field, target, unit)
TARGETS = [
    ("philly-1k", "sim_seconds", 0.1, "s"),
    ("synthetic-1m", "sim_seconds", 15.0, "s"),
    ("synthetic-1m", "peak_rss_mib", 0.8 * 1024, "MiB"),
    ("synthetic-1m-las", "sim_seconds", 25.0, "s"),
    ("synthetic-1m-fifo", "sim_seconds", 25.0, "s"),
    ("philly-1k-las", "sim_seconds", 0.08, "s"),
    ("helios-3.36m", "sim_seconds", 60.0, "s"),
    ("helios-3.36m", "peak_rss_mib", 2.5 * 1024, "MiB"),
]
SCALING = ["scale-10k", "scale-100k", "scale-300k", "synthetic-1m", "helios-3.36m"]  # SRTF, load 1.0, capped
RESULTS = Path(__file__).parent / "results" / "sim.json"


def run_case(name: str) -> dict:
    """Run one case in this process and return its measurements."""
    from optsched.core import Cluster
    from optsched.sim import Simulator, SplitContentionRate, get_policy
    from optsched.traces import synthetic_workload

    c = CASES[name]
    cluster = Cluster.homogeneous(c["servers"], c["gpus"])
    t0 = time.perf_counter()
    df = synthetic_workload(
        c["n"], cluster_gpus=cluster.total_gpus, load=c["load"], max_duration=c["max_duration"], seed=0
    )
    gen = time.perf_counter() - t0
    times, run_only = [], []
    res = None
    for _ in range(c["repeat"]):
        t1 = time.perf_counter()
        rate = SplitContentionRate(0.2) if c.get("rate") == "split-contention" else None
        sim = Simulator(cluster, df, get_policy(c["policy"]), rate_model=rate, record_log=False)
        t2 = time.perf_counter()
        res = sim.run()
        t3 = time.perf_counter()
        times.append(t3 - t1)
        run_only.append(t3 - t2)
    times.sort()
    run_only.sort()
    sim_s = times[len(times) // 2]
    s = res.summary()
    return {
        "case": name,
        **{k: v for k, v in c.items() if k != "repeat"},
        "repeats": c["repeat"],
        "generate_seconds": round(gen, 4),
        "sim_seconds": round(sim_s, 4),
        "run_seconds": round(run_only[len(run_only) // 2], 4),
        "events": res.n_events,
        "events_per_second": round(res.n_events / sim_s),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "mean_jct": s["mean_jct"],
        "p99_jct": s["p99_jct"],
        "mean_queue_delay": s["mean_queue_delay"],
        "n_preemptions": s["n_preemptions"],
        "mean_utilization": round(s["mean_utilization"], 4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_sim")
    ap.add_argument("--case", action="append", choices=list(CASES), help="run only these cases")
    ap.add_argument("--quick", action="store_true", help="skip the cases of a million jobs or more")
    ap.add_argument("--plot", action="store_true", help="only redraw docs/sim-scaling.png from the stored results")
    ap.add_argument("--timeout", type=float, default=None, help="give up a case after this many seconds")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_case(args.child)))
        return 0
    if args.plot:
        return plot_scaling()
    names = args.case or [n for n in CASES if not (args.quick and n in BIG)]
    for name in names:  # each case is saved as soon as it ends: a late failure loses nothing
        try:
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_sim", "--child", name],
                capture_output=True,
                text=True,
                cwd=Path(__file__).resolve().parents[1],
                timeout=args.timeout,
            )
        except subprocess.TimeoutExpired:
            c = CASES[name]
            save(
                {
                    "case": name,
                    **{k: v for k, v in c.items() if k != "repeat"},
                    "sim_seconds": None,
                    "timed_out_after_seconds": args.timeout,
                }
            )
            print(f"{name:22s} {c['n']:>9,d} jobs  not finished within {args.timeout:g} s", flush=True)
            continue
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            raise SystemExit(f"bench_sim: case {name} failed")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        save(row)
        print(
            f"{name:22s} {row['n']:>9,d} jobs  {row['sim_seconds']:8.3f} s  {row['events']:>9,d} events  "
            f"{row['events_per_second']:>9,d} ev/s  peak {row['peak_rss_mib']:8.1f} MiB  "
            f"preemptions {row['n_preemptions']:,d}",
            flush=True,
        )
    plot_scaling()
    return 0


def save(row: dict) -> None:
    """Merge one case's row into benchmarks/results/sim.json (with the targets it measures)."""
    old = {}
    if RESULTS.exists():
        try:
            old = {r["case"]: r for r in json.loads(RESULTS.read_text()).get("cases", [])}
        except (json.JSONDecodeError, KeyError, TypeError):
            old = {}
    old[row["case"]] = row
    payload = {
        "benchmark": "sim",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": __import__("os").cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "cases": [old[k] for k in CASES if k in old],
    }
    payload["targets"] = [
        {"case": f"sim {case} {field}", "measured": old[case][field], "target": target, "unit": unit}
        for case, field, target, unit in TARGETS
        if case in old and old[case].get(field) is not None
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    from optsched.core.io import atomic_write_text

    atomic_write_text(RESULTS, json.dumps(payload, indent=2) + "\n")


def plot_scaling() -> int:
    """docs/sim-scaling.png: SRTF's simulation time against the number of jobs (log-log, with the
    fitted exponent) and the time per event, from the stored results."""
    import numpy as np

    rows = {r["case"]: r for r in json.loads(RESULTS.read_text())["cases"]} if RESULTS.exists() else {}
    pts = sorted(
        (rows[c]["n"], rows[c]["sim_seconds"], rows[c]["events"]) for c in SCALING if rows.get(c, {}).get("sim_seconds")
    )
    if len(pts) < 2:
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n, t, ev = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
    slope, icpt = np.polyfit(np.log10(n), np.log10(t), 1)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    ax.loglog(n, t, "o-", label="SRTF, 750 x 8 GPUs, load 1.0")
    ax.loglog(n, 10**icpt * n**slope, "--", color="grey", label=f"fit: time ~ jobs^{slope:.2f}")
    ax.loglog(n, t[0] * n / n[0], ":", color="black", label="linear")
    ax.set_xlabel("jobs")
    ax.set_ylabel("simulation time (s)")
    ax.set_title("time vs jobs")
    ax.legend(fontsize=8)
    ax2.semilogx(n, 1e6 * t / ev, "o-", label="µs per event")
    ax2.semilogx(n, ev / n, "s--", color="tab:orange", label="events per job")
    ax2.set_xlabel("jobs")
    ax2.set_title("per event, and events per job")
    ax2.set_ylim(bottom=0)
    ax2.legend(fontsize=8)
    fig.suptitle("optsched.sim on 2 shared cores (benchmarks/results/sim.json)", fontsize=9)
    fig.tight_layout()
    out = Path(__file__).resolve().parents[1] / "docs" / "sim-scaling.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out} (exponent {slope:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
