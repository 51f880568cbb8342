"""Start-up: whole-process wall time of the command line (issue 9, item 9).

* ``help``: ``optsched --help`` (target <= 0.15 s): the parser must not import NumPy, pandas,
  Pyomo or OR-Tools;
* ``simulate-1k``: ``optsched simulate --trace synthetic --jobs 1000 --servers 27
  --gpus-per-server 4 --policy srtf --quiet`` (target <= 0.3 s), the whole process;
* ``import``: ``python -c "import optsched"``.

Each is the median of 7 runs in fresh processes (run from an empty temporary folder).
Usage: ``python -m benchmarks startup``. Results: ``benchmarks/results/startup.json``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "startup.json"
OPT = [sys.executable, "-m", "optsched.cli"]
CASES = {
    "import": ([sys.executable, "-c", "import optsched"], None),
    "help": ([*OPT, "--help"], 0.15),
    "simulate-1k": (
        [
            *OPT,
            "simulate",
            "--trace",
            "synthetic",
            "--jobs",
            "1000",
            "--servers",
            "27",
            "--gpus-per-server",
            "4",
            "--policy",
            "srtf",
            "--json",
        ],
        0.3,
    ),
}


def _time(cmd, cwd, repeat=7) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        ts.append(time.perf_counter() - t0)
        if r.returncode != 0:
            raise SystemExit(f"bench_startup: {' '.join(cmd)} failed:\n{r.stderr}")
    ts.sort()
    return ts[len(ts) // 2]


def main(argv: list[str] | None = None) -> int:
    from optsched.core.io import atomic_write_text

    cwd = tempfile.mkdtemp(prefix="optsched-startup-")
    rows = []
    try:
        for name, (cmd, target) in CASES.items():
            t = _time(cmd, cwd)
            rows.append(
                {
                    "case": name,
                    "seconds": round(t, 4),
                    "target": target,
                    "pass": None if target is None else t <= target,
                }
            )
            print(f"{name:12s} {t:7.3f} s   target {target if target is not None else '-'}", flush=True)
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    payload = {
        "benchmark": "startup",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "cases": rows,
    }
    atomic_write_text(RESULTS, json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
