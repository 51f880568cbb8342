"""The cost of an engine change in instructions, not seconds: two versions of the Python engine on
the same :mod:`benchmarks.bench_sim` cases, counted by valgrind (callgrind).

Wall times on a shared 2-core machine move by 10-25 % between runs; instruction counts are
deterministic, so a few percent of change is visible. Each (version, case) runs twice under
valgrind in a child process: once building the simulator only, once building and running it; the
run's cost is the difference. Versions are git revisions of this repository (``git archive REV
optsched`` into a temporary folder); the cases and the workload generator are this checkout's.

Usage (valgrind required; a 100k-job case takes 5-30 min per version)::

    python -m benchmarks.icount_sim --base 207daae --head HEAD philly-1k philly-1k-las synthetic-100k

writes ``benchmarks/results/icount_sim.json`` (instructions per run, the ratio head / base).
Not part of ``make bench`` (too slow).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).parent
REPO = HERE.parent
RESULTS = HERE / "results" / "icount_sim.json"


def _child(tree: str, case: str, mode: str) -> None:
    """Build (and with mode "run", run) one case with the engine of ``tree``."""
    import inspect

    sys.path.insert(0, tree)
    sys.path.insert(1, str(REPO))
    from benchmarks.bench_sim import CASES
    from optsched.core import Cluster
    from optsched.sim import Simulator, get_policy
    from optsched.traces import synthetic_workload

    c = CASES[case]
    cl = Cluster.homogeneous(c["servers"], c["gpus"])
    df = synthetic_workload(c["n"], cluster_gpus=cl.total_gpus, load=c["load"], max_duration=c["max_duration"], seed=0)
    params = inspect.signature(Simulator).parameters  # revisions without engine= have only the Python engine
    kw = {"engine": "python"} if "engine" in params or "option_keywords" in params else {}
    sim = Simulator(cl, df, get_policy(c["policy"]), record_log=False, **kw)
    if mode == "run":
        sim.run()


def _export(rev: str, dest: Path) -> str:
    """``optsched`` at git revision ``rev`` into ``dest``; returns the full commit hash."""
    full = subprocess.run(["git", "rev-parse", rev], cwd=REPO, check=True, capture_output=True, text=True)
    data = subprocess.run(["git", "archive", rev, "optsched"], cwd=REPO, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return full.stdout.strip()


def _count(tree: Path, case: str, mode: str) -> int:
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--child",
            str(tree),
            case,
            mode,
        ],
        env={**os.environ, "PYTHONHASHSEED": "0"},
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    )
    for line in out.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1])
    raise RuntimeError(f"valgrind printed no instruction count for {case} ({mode}):\n{out.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cases", nargs="*", help="cases of benchmarks.bench_sim (default: philly-1k philly-1k-las)")
    p.add_argument("--base", default="HEAD~1", help="git revision of the engine before the change")
    p.add_argument("--head", default="HEAD", help="git revision of the engine after the change")
    p.add_argument("--child", nargs=3, metavar=("TREE", "CASE", "MODE"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        _child(*a.child)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind); nothing measured.", file=sys.stderr)
        return 2
    if str(REPO) not in sys.path:  # run as a script
        sys.path.insert(0, str(REPO))
    from benchmarks.bench_sim import CASES

    cases = a.cases or ["philly-1k", "philly-1k-las"]
    bad = [c for c in cases if c not in CASES or "special" in CASES[c] or CASES[c].get("engine")]
    if bad:
        p.error(f"unknown or non-Python-engine case(s) {bad}; choose from the Python cases of benchmarks.bench_sim")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for label, rev in (("base", a.base), ("head", a.head)):
            trees[label] = Path(tmp) / label
            trees[label].mkdir()
            trees[label + "_commit"] = _export(rev, trees[label])
        for case in cases:
            row = {"case": case, "base": trees["base_commit"][:12], "head": trees["head_commit"][:12]}
            for label in ("base", "head"):
                t0 = time.perf_counter()
                build = _count(trees[label], case, "construct")
                total = _count(trees[label], case, "run")
                row[f"{label}_instructions"] = total - build
                print(f"{case:20s} {label}: {total - build:,d} instructions ({time.perf_counter() - t0:.0f} s)")
            row["ratio"] = round(row["head_instructions"] / row["base_instructions"], 4)
            print(f"{case:20s} head / base = {row['ratio']:.3f}")
            rows.append(row)
    RESULTS.parent.mkdir(exist_ok=True)
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"benchmark": "icount_sim", "cases": []}
    keep = [
        r
        for r in doc["cases"]
        if (r["case"], r["base"], r["head"]) not in {(x["case"], x["base"], x["head"]) for x in rows}
    ]
    doc["cases"] = keep + rows
    doc["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    RESULTS.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
