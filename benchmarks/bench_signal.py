"""Seconds from a signal to the end of the run, per command, phase and signal (SIGINT = Ctrl-C,
SIGTERM = ``kill``, batch schedulers, container stops).

Run: ``python -m benchmarks.bench_signal`` (writes ``benchmarks/results/signal.json`` and prints
the table of ``docs/exact.md``); ``--case NAME`` runs one case (``--list`` names them).

Each case is the whole command in a fresh process, stderr read line by line; the signal is sent
when the case's marker line appears (the phase has begun), and the time is measured from
``send_signal`` to the process's exit. "kept" says whether the result was kept: the schedule and
result files of ``solve --out`` (status ``interrupted``), the finished rows of ``compare``, the
files of ``simulate --out`` whole. Batch schedulers send SIGKILL 10-30 s after SIGTERM; the target
is 2 s. Instance: ``random_instance(100, n_servers=4, gpus_per_server=8, seed=3)`` (not proven
within minutes by either back end; HiGHS spends its first 10-15 s in presolve and the root LP).
"""

from __future__ import annotations

import json
import os
import platform
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "signal.json"
TARGET = 2.0
BOUND = re.compile(r"bound ([0-9,.]+)")


def _bound(line: str) -> float | None:
    m = BOUND.search(line)
    return None if m is None else float(m.group(1).replace(",", ""))


def _solve(backend: str) -> list[str]:
    return ["solve", "{inst}", "--backend", backend, "--time-limit", "3600", "--json", "--out", "{out}"]


COMPARE = ["compare", "--trace", "synthetic", "--servers", "8", "--jobs", "1500", "--max-duration", "36000"]
COMPARE += ["--policies", "fifo,sjf,srtf,las,srtf-periodic,lazer,lazer-zero,lazer-fixed", "--json"]
SIMULATE = ["simulate", "--trace", "synthetic", "--jobs", "200000", "--servers", "100", "--policy", "las"]
SIMULATE += ["--load-time", "5", "--verbose", "--out", "{out}"]


def _after_start_bound():
    """A marker: HiGHS's branch and bound runs (a bound above the one it started with)."""
    seen: list[float] = []

    def ok(line: str) -> bool:
        b = _bound(line)
        if "solving (highs)" in line and b is not None:
            seen.append(b)
            return b > seen[0]
        return False

    return ok


def _second(text: str):
    """A marker: the second line with ``text`` (the display repeats its line every few seconds while
    the solver works without news: HiGHS's presolve and root LP)."""
    seen: list[str] = []

    def ok(line: str) -> bool:
        if text in line:
            seen.append(line)
        return len(seen) >= 2

    return ok


#: name -> (command, phase, marker(line) -> bool, or a function making one)
CASES = {
    "solve-highs-build": (_solve("highs"), "model build", lambda s: "building the model (highs)" in s),
    "solve-highs-handover": (_solve("highs"), "model handed to HiGHS", lambda s: "solving (highs)" in s),
    "solve-highs-root": (_solve("highs"), "presolve / root LP", lambda: _second("solving (highs)")),
    "solve-highs-bnb": (_solve("highs"), "branch and bound", _after_start_bound),
    "solve-cpsat": (_solve("cpsat"), "search", lambda s: "solving (cpsat)" in s),
    "solve-portfolio": (_solve("portfolio"), "members", lambda s: "solving (portfolio" in s),
    "compare": (COMPARE, "policies", lambda s: "rows done" in s),
    "simulate": (SIMULATE, "simulation", lambda s: "engine" in s),
}


def _takes_line(f) -> bool:
    import inspect

    return len(inspect.signature(f).parameters) == 1


def run_case(name: str, signum: int, inst: Path, tmp: Path, wait: float = 900) -> dict:
    args, phase, marker = CASES[name]
    if not _takes_line(marker):  # a marker with state: made anew for each run
        marker = marker()
    out = tmp / f"out-{name}-{signum}"
    cmd = [sys.executable, "-m", "optsched", *[a.format(inst=inst, out=out) for a in args]]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    q: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [q.put(x) for x in p.stderr] + [q.put(None)], daemon=True).start()  # type: ignore[union-attr]
    t_start, lines = time.monotonic(), []
    while True:
        line = q.get(timeout=wait)
        if line is None:
            return {"case": name, "phase": phase, "signal": signal.Signals(signum).name, "error": "ended first"}
        lines.append(line)
        if marker(line):
            break
    at = time.monotonic() - t_start
    t0 = time.monotonic()
    p.send_signal(signum)
    stdout = p.stdout.read()  # type: ignore[union-attr]
    code = p.wait(timeout=wait)
    acted = time.monotonic() - t0
    while (x := q.get(timeout=wait)) is not None:
        lines.append(x)
    kept = _kept(name, out, stdout)
    return {
        "case": name,
        "phase": phase,
        "signal": signal.Signals(signum).name,
        "sent_at": round(at, 1),
        "seconds_to_act": round(acted, 2),
        "exit": code,
        "kept": kept,
        "last_line": lines[-1].strip()[:160] if lines else "",
    }


def _kept(name: str, out: Path, stdout: str) -> str:
    try:
        doc = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        doc = None
    if name.startswith("solve"):
        ok = (out / "schedule.json").is_file() and doc is not None and doc.get("status") == "interrupted"
        return f"schedule {doc.get('objective')} / bound {doc.get('bound')}" if ok else "no"
    if name == "compare":
        return f"{len(doc['rows'])} rows" if doc else "no"
    return "files whole" if not list(out.glob(".*.tmp")) else "no"


def main(argv=None) -> dict:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--list" in argv:
        print("\n".join(f"{k}: {v[1]}" for k, v in CASES.items()))
        return {}
    names = [argv[argv.index("--case") + 1]] if "--case" in argv else list(CASES)
    signums = [signal.SIGINT, signal.SIGTERM]
    load = [os.getloadavg()[0]]
    rows = []
    with tempfile.TemporaryDirectory(prefix="optsched-bench-signal-") as tmp:
        inst = Path(tmp) / "n100.json"
        from optsched.rigid import random_instance

        random_instance(100, n_servers=4, gpus_per_server=8, seed=3).to_json(inst)
        for name in names:
            for s in signums:
                row = run_case(name, s, inst, Path(tmp))
                rows.append(row)
                print(json.dumps(row), flush=True)
                load.append(os.getloadavg()[0])
    out = {
        "benchmark": "seconds from a signal to the end of the run",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_1min": {"min": round(min(load), 1), "max": round(max(load), 1)},
        "rows": rows,
        "targets": [
            {
                "case": f"{r['case']} {r['signal']}: seconds to act",
                "measured": r["seconds_to_act"],
                "target": TARGET,
                "unit": "s",
            }
            for r in rows
            if "seconds_to_act" in r
        ],
    }
    if "--case" not in argv:
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_text(json.dumps(out, indent=2) + "\n")
    print()
    print(markdown_table(rows))
    return out


def markdown_table(rows: list[dict]) -> str:
    """command x phase x signal: seconds to act, exit code, what was kept."""
    lines = ["| command | phase | signal | seconds to act | exit | result kept |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "seconds_to_act" not in r:
            lines.append(f"| {r['case']} | {r['phase']} | {r['signal']} | - | - | {r.get('error')} |")
            continue
        lines.append(
            f"| {r['case']} | {r['phase']} | {r['signal']} | {r['seconds_to_act']:.2f} s | {r['exit']} | {r['kept']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
