"""Run every benchmark module ``benchmarks/bench_*.py`` (or those named on the command line), then
print one table of every measured target: case, target, measured, ratio, pass/fail.

A benchmark states its targets in its results JSON as a list ``"targets"`` of
``{"case", "measured", "target", "unit", "sense"}`` rows (``sense`` "max": measured must be <= target,
the default; "min": >=). The table is also written to ``benchmarks/results/summary.json`` with the
machine description. A failing target is reported, it does not fail the run (nor ``make test``).

Usage: ``python -m benchmarks`` (all), ``python -m benchmarks sim startup`` (some),
``python -m benchmarks --summary`` (only the table, from the stored results).
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
RESULTS = HERE / "results"

#: Targets of benchmarks whose JSON predates the "targets" convention: (file, case, path, target, unit).
LEGACY_TARGETS = [
    ("startup.json", "optsched --help (s)", ("cases", "help", "seconds"), 0.15, "s"),
    ("startup.json", "simulate 1k jobs, whole process (s)", ("cases", "simulate-1k", "seconds"), 0.3, "s"),
]


def _lookup(doc, path):
    cur = doc
    for key in path:
        if isinstance(cur, list):
            cur = next((r for r in cur if isinstance(r, dict) and r.get("case") == key), None)
        elif isinstance(cur, dict):
            cur = cur.get(key)
        if cur is None:
            return None
    return cur


def collect_targets() -> list[dict]:
    rows = []
    for f in sorted(RESULTS.glob("*.json")):
        if f.name == "summary.json":
            continue
        try:
            doc = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        for t in doc.get("targets", []) if isinstance(doc, dict) else []:
            rows.append({"benchmark": f.stem, **t})
    for fname, case, path, target, unit in LEGACY_TARGETS:
        f = RESULTS / fname
        if f.is_file():
            v = _lookup(json.loads(f.read_text()), path)
            if v is not None and not any(r["case"] == case for r in rows):
                rows.append(
                    {"benchmark": Path(fname).stem, "case": case, "measured": v, "target": target, "unit": unit}
                )
    for r in rows:
        m, t = r.get("measured"), r.get("target")
        ok = None
        if isinstance(m, (int, float)) and isinstance(t, (int, float)):
            ok = m >= t if r.get("sense") == "min" else m <= t
            r["ratio"] = round(m / t, 3) if t else None
        r["pass"] = ok
    return rows


def print_summary(rows: list[dict]) -> None:
    print(f"\n{'benchmark':10s} {'case':52s} {'target':>10s} {'measured':>10s} {'ratio':>7s}  result")
    for r in rows:
        res = {True: "pass", False: "FAIL", None: "-"}[r["pass"]]
        sense = ">=" if r.get("sense") == "min" else "<="
        print(
            f"{r['benchmark']:10s} {str(r['case'])[:52]:52s} {sense}{r['target']!s:>8s} "
            f"{r['measured']!s:>10.10s} {r.get('ratio') if r.get('ratio') is not None else '-'!s:>7s}  {res}"
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    summary_only = "--summary" in argv
    argv = [a for a in argv if a != "--summary"]
    names = sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if n in argv or n.removeprefix("bench_") in argv]
    for name in [] if summary_only else names:
        t0 = time.perf_counter()
        print(f"== {name}", flush=True)
        importlib.import_module(f"benchmarks.{name}").main([])
        print(f"== {name} done in {time.perf_counter() - t0:.1f} s", flush=True)
    rows = collect_targets()
    print_summary(rows)
    from optsched.core.io import atomic_write_text

    atomic_write_text(
        RESULTS / "summary.json",
        json.dumps(
            {
                "machine": {
                    "python": platform.python_version(),
                    "system": platform.system(),
                    "machine": platform.machine(),
                    "cpus": os.cpu_count(),
                },
                "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                "targets": rows,
            },
            indent=2,
        )
        + "\n",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
