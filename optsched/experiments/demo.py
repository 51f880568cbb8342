"""``make demo`` / ``optsched demo``: exact optimum vs algorithms on the benchmark instances.

Each paper package may have a ``demo`` module with ``demo_rows(quick: bool) -> list[dict]``;
this module collects them (it is the one place that knows every package) and prints one
table. Every row's schedule has been verified independently (column ``verified``); a row that
failed says which check and why in ``violation`` ("[label] message", the label of the violated
equation or check).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

import optsched
from optsched.exceptions import UnknownNameError
from optsched.verify.rows import exact_vs_algorithm_rows, on_rows

__all__ = ["COLUMNS", "collect_rows", "demo_dataframe", "rows_dataframe", "exact_vs_algorithm_rows"]

COLUMNS = [
    "instance",
    "algorithm",
    "objective",
    "optimum",
    "bound",
    "gap",
    "ratio",
    "runtime",
    "status",
    "verified",
    "violation",
]


def collect_rows(
    *,
    quick: bool = False,
    only: list[str] | None = None,
    progress: bool = True,
    on_update: Callable[[list[dict]], None] | None = None,
) -> list[dict]:
    """The demo rows of every package (or of ``only``), in package order.

    ``on_update(rows)``, when given, gets every row finished so far each time an instance's
    rows are built (through :func:`optsched.verify.rows.on_rows`) and when a package is done
    (its final rows replace the provisional ones), so a caller can write them as they come."""
    optsched.load_plugins()
    rows: list[dict] = []
    known = ["rigid"] + [p.rsplit(".", 1)[-1] for p in optsched.plugin_packages() if p != "optsched.rigid"]
    if only is not None:
        bad = [k for k in only if k not in known]
        if bad:
            raise UnknownNameError(f"--only {bad[0]!r} is not a package with demo rows; choose from {known}.")
    names = [p for p in optsched.plugin_packages() if only is None or p.rsplit(".", 1)[-1] in only]
    for pkg in names:
        try:
            mod = importlib.import_module(f"{pkg}.demo")
        except ModuleNotFoundError as e:
            if e.name in (pkg, f"{pkg}.demo"):
                continue
            raise
        t0 = time.perf_counter()
        key = pkg.rsplit(".", 1)[-1]
        if on_update is None:
            part = mod.demo_rows(quick=quick)
        else:
            provisional: list[dict] = []

            def add(new: list[dict], provisional: list[dict] = provisional, key: str = key) -> None:
                provisional.extend({"paper": key, **r} for r in new)
                on_update(rows + provisional)

            with on_rows(add):
                part = mod.demo_rows(quick=quick)
        for r in part:
            r.setdefault("paper", key)
            r.setdefault("violation", None if r.get("verified") else "verification failed (no detail reported)")
        rows.extend(part)
        if on_update is not None:
            on_update(list(rows))
        if progress:
            import sys

            print(
                f"[demo] {pkg.rsplit('.', 1)[-1]}: {len(part)} rows in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
    return rows


def rows_dataframe(rows: list[dict]):
    import pandas as pd

    cols = ["paper", *COLUMNS]
    return pd.DataFrame(rows, columns=cols + [c for c in (rows[0] if rows else {}) if c not in cols])


def demo_dataframe(*, quick: bool = False, only: list[str] | None = None):
    return rows_dataframe(collect_rows(quick=quick, only=only))
