"""``make demo`` / ``optsched demo``: exact optimum vs algorithms on the benchmark instances.

Each paper package may have a ``demo`` module with ``demo_rows(quick: bool) -> list[dict]``;
this module collects them (it is the one place that knows every package) and prints one
table. Every row's schedule has been verified independently (column ``verified``); a row that
failed says which check and why in ``violation`` ("[label] message", the label of the violated
equation or check).
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable

import optsched
from optsched.exceptions import UnknownNameError
from optsched.verify.rows import on_rows

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
"""The columns of the demo table after ``paper`` (a package may add its own after them)."""


def collect_rows(
    *,
    quick: bool = False,
    only: list[str] | None = None,
    progress: bool = True,
    on_update: Callable[[list[dict]], None] | None = None,
) -> list[dict]:
    """The demo rows of every package (or of ``only``), in package order.

    Parameters
    ----------
    quick : bool
        The short version of each package's demo (what ``optsched demo --quick`` runs).
    only : list of str, optional
        Package keys (``rigid``, ``asrpt``, ``elastic``, ``rarddls``, ``sojourn``, ``lazer``).
    progress : bool
        One line per package on standard error.
    on_update : callable, optional
        ``on_update(rows)`` gets every row finished so far each time an instance's rows are built
        (through :func:`optsched.verify.rows.on_rows`) and when a package is done (its final rows
        replace the provisional ones), so a caller can write them as they come.

    Returns
    -------
    list of dict
        One row per (instance, algorithm): ``paper`` and :data:`COLUMNS`; each row's schedule was
        checked by the verifier (``verified``, and ``violation`` naming the failed check).

    Raises
    ------
    UnknownNameError
        A key of ``only`` is not a package with demo rows.

    Examples
    --------
    >>> rows = collect_rows(quick=True, only=["sojourn"], progress=False)
    >>> {r["paper"] for r in rows}, all(r["verified"] for r in rows)
    ({'sojourn'}, True)
    >>> all(r["ratio"] >= 1 - 1e-9 for r in rows if r["ratio"] is not None)  # nothing beats a proven optimum
    True
    """
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
            print(
                f"[demo] {pkg.rsplit('.', 1)[-1]}: {len(part)} rows in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
    return rows


def rows_dataframe(rows: list[dict]):
    """The demo rows as a table: ``paper``, :data:`COLUMNS`, then any other column of the first row.

    Examples
    --------
    >>> df = rows_dataframe([{"paper": "rigid", "instance": "toy", "algorithm": "wspt", "objective": 20.0, "note": 1}])
    >>> list(df.columns[:4]), list(df.columns[-1:]), bool(df["optimum"].isna().all())
    (['paper', 'instance', 'algorithm', 'objective'], ['note'], True)
    """
    import pandas as pd

    cols = ["paper", *COLUMNS]
    return pd.DataFrame(rows, columns=cols + [c for c in (rows[0] if rows else {}) if c not in cols])


def demo_dataframe(*, quick: bool = False, only: list[str] | None = None):
    """:func:`collect_rows` as a table (:func:`rows_dataframe`): the table ``optsched demo`` prints.

    Examples
    --------
    >>> df = demo_dataframe(quick=True, only=["sojourn"])
    >>> bool(df["verified"].all()), sorted(set(df["paper"]))
    (True, ['sojourn'])
    """
    return rows_dataframe(collect_rows(quick=quick, only=only))
