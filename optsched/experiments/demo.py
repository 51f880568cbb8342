"""``make demo`` / ``optsched demo``: exact optimum vs algorithms on the benchmark instances.

Each paper package may have a ``demo`` module with ``demo_rows(quick: bool) -> list[dict]``;
this module collects them (it is the one place that knows every package) and prints one
table. Every row's schedule has been verified independently (column ``verified``).
"""

from __future__ import annotations

import importlib
import time
from typing import Any

__all__ = ["COLUMNS", "collect_rows", "demo_dataframe", "exact_vs_algorithm_rows"]

COLUMNS = ["instance", "algorithm", "objective", "optimum", "bound", "gap", "ratio", "runtime", "status",
           "verified"]


def exact_vs_algorithm_rows(instance: Any, exact_results: list, algo_results: list, verify_fn) -> list[dict]:
    """Rows for one instance: exact runs first, then algorithms, with ratio = objective / optimum.

    ``optimum`` is the objective of a proven-optimal exact run (None if no run proved it); a
    row of an exact run stopped by a limit shows its bound and gap.
    """
    opt = next((r.objective for r in exact_results if r.optimal), None)
    rows = []
    for r in list(exact_results) + list(algo_results):
        rep = verify_fn(instance, r)
        rows.append({
            "instance": getattr(instance, "name", "?"),
            "algorithm": r.algorithm,
            "objective": r.objective,
            "optimum": opt,
            "bound": r.bound,
            "gap": r.gap,
            "ratio": (r.objective / opt) if (opt and r.objective is not None) else None,
            "runtime": r.runtime,
            "status": str(r.status),
            "verified": rep.ok,
        })
    return rows


def collect_rows(*, quick: bool = False, only: list[str] | None = None, progress: bool = True) -> list[dict]:
    import optsched

    optsched.load_plugins()
    rows: list[dict] = []
    names = [p for p in optsched.PLUGINS if only is None or p.rsplit(".", 1)[-1] in only]
    for pkg in names:
        try:
            mod = importlib.import_module(f"{pkg}.demo")
        except ModuleNotFoundError as e:
            if e.name in (pkg, f"{pkg}.demo"):
                continue
            raise
        t0 = time.perf_counter()
        part = mod.demo_rows(quick=quick)
        for r in part:
            r.setdefault("paper", pkg.rsplit(".", 1)[-1])
        rows.extend(part)
        if progress:
            import sys

            print(f"[demo] {pkg.rsplit('.', 1)[-1]}: {len(part)} rows in {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)
    return rows


def demo_dataframe(*, quick: bool = False, only: list[str] | None = None):
    import pandas as pd

    rows = collect_rows(quick=quick, only=only)
    cols = ["paper"] + COLUMNS
    return pd.DataFrame(rows, columns=cols + [c for c in (rows[0] if rows else {}) if c not in cols])
