"""``optsched solve --time-limit 10`` on rigid instances of 500, 1,000, 2,000 and 5,000 jobs, per back end.

Run: ``python -m benchmarks solve_limit`` (writes ``benchmarks/results/solve_limit.json`` and prints
the table of ``docs/exact.md#time-limit``); ``python -m benchmarks.bench_solve_limit --repeat 3``
keeps the fastest of three runs per case (wall times on a shared machine are noisy).

Each case is the whole command in a fresh process (``python -m optsched solve FILE --backend B
--time-limit 10 --json -q --out DIR``): wall time from process start to exit, exit code, status,
objective, bound, the phase that ran out of time (``limit_reached_in``), the seconds of each phase,
and whether ``schedule.json`` was written. Instances (``optsched.rigid.random_instance`` on 8 servers
x 8 GPUs):

* ``spanning``: every job may span servers, works 1-6 s, arrivals 0-4 s (seed 0);
* ``mixed``: half the jobs single-server, works 1-20 s, arrivals 0-n/4 s (seed 1): a long horizon.

Targets: at 2,000 jobs every back end ends within 15 s wall with a schedule written.

``python -m benchmarks.bench_solve_limit --case 50mb`` measures a large file instead: the
``spanning`` instance with 500,000 jobs (a 52 MB JSON file) under ``--time-limit 20`` with the
default back end, the process's wall and CPU seconds and every phase (writes
``benchmarks/results/solve_limit_50mb.json`` and prints the table of
``docs/exact.md#large-instances``). Target: it ends within 25 s wall with a schedule written.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "solve_limit.json"
SIZES = (500, 1000, 2000, 5000)
BACKENDS = ("highs", "cpsat", "auto", "portfolio")
FAMILIES = ("spanning", "mixed")
TARGET_JOBS, TARGET_WALL = 2000, 15.0


def instance(family: str, n: int):
    """The benchmark's instance ``family`` with ``n`` jobs."""
    from optsched.rigid import random_instance

    if family == "spanning":
        return random_instance(n, n_servers=8, gpus_per_server=8, seed=0, name=f"spanning-n{n}")
    if family == "mixed":
        return random_instance(
            n,
            n_servers=8,
            gpus_per_server=8,
            single_server=0.5,
            max_work=20,
            arrival_span=max(1, n // 4),
            seed=1,
            name=f"mixed-n{n}",
        )
    raise ValueError(f"unknown family {family!r}; choose one of {FAMILIES}")


def run_case(path: Path, backend: str, time_limit: float, out: Path) -> dict:
    """One ``optsched solve`` process: what it reports and how long it took."""
    cmd = [sys.executable, "-m", "optsched", "solve", str(path), "--backend", backend]
    cmd += ["--time-limit", f"{time_limit:g}", "--json", "-q", "--out", str(out), "--force"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=10 * time_limit + 120)
    wall = time.perf_counter() - t0
    try:
        res = json.loads(p.stdout)
    except json.JSONDecodeError:
        res = {"error": p.stderr.strip()[-500:]}
    return {
        "wall": round(wall, 2),
        "exit": p.returncode,
        "status": res.get("status"),
        "objective": res.get("objective"),
        "bound": res.get("bound"),
        "gap": res.get("gap"),
        "limit_reached_in": res.get("limit_reached_in"),
        "verified": res.get("verified"),
        "schedule_written": (out / "schedule.json").is_file(),
        "phases": res.get("phases"),
        "error": res.get("error"),
    }


OUT_50MB = Path(__file__).parent / "results" / "solve_limit_50mb.json"
LARGE_JOBS, LARGE_LIMIT, LARGE_WALL = 500_000, 20.0, 25.0


def case_50mb(repeat: int = 1) -> dict:
    """``solve --time-limit 20`` on the 500,000-job ``spanning`` instance (52 MB): wall, CPU seconds
    (the process's user + system time: what a loaded machine stretches less) and phases."""
    rows = []
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="optsched-bench-50mb-") as tmp:
        path = Path(tmp) / f"spanning-n{LARGE_JOBS}.json"
        instance("spanning", LARGE_JOBS).to_json(path)
        size_mb = path.stat().st_size / 1e6
        for k in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            row = run_case(path, "highs", LARGE_LIMIT, Path(tmp) / f"out-{k}")
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            row["cpu"] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)
            row["load_1min"] = round(os.getloadavg()[0], 1)
            rows.append(row)
            load.append(row["load_1min"])
            print(
                f"n={LARGE_JOBS:,} ({size_mb:.0f} MB) {row['wall']:6.1f} s wall, {row['cpu']:.1f} s CPU, exit "
                f"{row['exit']} {row['status']} schedule written: {row['schedule_written']}; {row['phases']}",
                flush=True,
            )
    best = min(rows, key=lambda r: r["wall"])
    case = f"solve --time-limit 20 spanning n{LARGE_JOBS} ({size_mb:.0f} MB)"
    out = {
        "benchmark": "solve --time-limit 20 on a 50 MB instance",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "jobs": LARGE_JOBS,
        "file_mb": round(size_mb, 1),
        "time_limit": LARGE_LIMIT,
        "repeat": repeat,
        "load_1min": {"min": round(min(load), 1), "max": round(max(load), 1)},
        "rows": rows,
        "targets": [
            {"case": f"{case}: wall", "measured": best["wall"], "target": LARGE_WALL, "unit": "s"},
            {"case": f"{case}: schedule", "measured": int(best["schedule_written"]), "target": 1, "sense": "min"},
        ],
    }
    OUT_50MB.parent.mkdir(exist_ok=True)
    OUT_50MB.write_text(json.dumps(out, indent=2) + "\n")
    print()
    print(phase_table(rows))
    return out


def phase_table(rows: list[dict]) -> str:
    """The table of ``docs/exact.md#large-instances``: one line per run, the seconds of each phase."""
    phases = list(dict.fromkeys(p for r in rows for p in (r.get("phases") or {})))
    lines = [
        "| run | wall | CPU | " + " | ".join(phases) + " | status |",
        "|---|---|---|" + "---|" * len(phases) + "---|",
    ]
    for k, r in enumerate(rows, 1):
        cells = [f"{(r.get('phases') or {}).get(p, 0):.1f}" for p in phases]
        lines.append(f"| {k} | {r['wall']:.1f} s | {r['cpu']:.1f} s | " + " | ".join(cells) + f" | {r['status']} |")
    return "\n".join(lines)


def main(argv=None, sizes=SIZES, backends=BACKENDS, families=FAMILIES, time_limit: float = 10.0) -> dict:
    argv = list(sys.argv[1:] if argv is None else argv)
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 1
    if "--case" in argv:
        if argv[argv.index("--case") + 1] != "50mb":
            raise SystemExit("--case: the only named case is 50mb")
        return case_50mb(repeat)
    rows = []
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="optsched-bench-limit-") as tmp:
        for family in families:
            for n in sizes:
                path = Path(tmp) / f"{family}-n{n}.json"
                instance(family, n).to_json(path)
                for backend in backends:
                    runs = [run_case(path, backend, time_limit, Path(tmp) / f"out-{k}") for k in range(repeat)]
                    best = min(runs, key=lambda r: r["wall"])  # the fastest run; every run's outcome below
                    row = {"family": family, "n": n, "backend": backend, "runs": repeat, **best}
                    row["all_runs"] = [{k: r[k] for k in ("wall", "status", "objective")} for r in runs]
                    rows.append(row)
                    print(
                        f"{family:8s} n={n:5d} {backend:9s} {row['wall']:6.1f} s exit {row['exit']} {row['status']} "
                        f"obj {row['objective']} bound {row['bound']} ran out in: {row['limit_reached_in']}",
                        flush=True,
                    )
                load.append(os.getloadavg()[0])
    targets = []
    for r in rows:
        if r["n"] == TARGET_JOBS:
            case = f"solve --time-limit 10 {r['family']} n{r['n']} {r['backend']}"
            targets.append({"case": f"{case}: wall", "measured": r["wall"], "target": TARGET_WALL, "unit": "s"})
            targets.append(
                {"case": f"{case}: schedule", "measured": int(r["schedule_written"]), "target": 1, "sense": "min"}
            )
    out = {
        "benchmark": "solve --time-limit on large rigid instances",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "time_limit": time_limit,
        "repeat": repeat,
        "load_1min": {"min": round(min(load), 1), "max": round(max(load), 1)},
        "rows": rows,
        "targets": targets,
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=2) + "\n")
    print()
    print(markdown_table(rows))
    return out


def markdown_table(rows: list[dict]) -> str:
    """The table of ``docs/exact.md#time-limit``: one line per instance, one column per back end."""
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    head = "| instance | " + " | ".join(f"`{b}`" for b in backends) + " |"
    lines = [head, "|---|" + "---|" * len(backends)]
    for key in dict.fromkeys((r["family"], r["n"]) for r in rows):
        cells = []
        for b in backends:
            r = next(x for x in rows if (x["family"], x["n"]) == key and x["backend"] == b)
            if r["objective"] is None:
                what = f"{r['status']}, no schedule"
            else:
                what = f"{r['status']} {r['objective']:,.0f} / {r['bound']:,.0f}" if r["bound"] is not None else ""
            ran_out = f"; out in *{r['limit_reached_in']}*" if r["limit_reached_in"] else ""
            others = {(x["status"], x["objective"]) for x in r.get("all_runs", [])} - {(r["status"], r["objective"])}
            other = "".join(
                f" (another run: {st}{'' if o is None else f' {o:,.0f}'})" for st, o in sorted(others, key=str)
            )
            cells.append(f"{r['wall']:.1f} s, {what}{ran_out}{other}")
        lines.append(f"| {key[0]} n{key[1]:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
