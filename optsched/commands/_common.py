"""Helpers shared by the CLI subcommands: table output, JSON output, exit codes."""

from __future__ import annotations

import contextlib
import json
import math
import sys
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
#: Stopped by Ctrl-C (SIGINT): 128 + 2, as shells report it; what was finished is written.
EXIT_INTERRUPTED = 130


#: Column name -> unit shown in the header.
UNITS = {
    "runtime": "s",
    "mean_jct": "s",
    "p50_jct": "s",
    "p95_jct": "s",
    "p99_jct": "s",
    "makespan": "s",
    "mean_queue_delay": "s",
    "p95_queue_delay": "s",
    "p99_queue_delay": "s",
    "sim_seconds": "s",
    "load_seconds": "s",
}


def fmt_runtime(v: float) -> str:
    """Runtimes in ms below one second, in s above."""
    return f"{v * 1000:.3g} ms" if v < 1 else f"{v:.3g} s"


def _fmt(v: Any, column: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):  # numpy scalars print as plain numbers
        with contextlib.suppress(TypeError, ValueError):
            v = v.item()
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if column == "runtime":
            return fmt_runtime(v)
        if column == "gap" and abs(v) < 1e-9:
            return "0"
        return f"{v:.6g}"
    return str(v)


def _header(c: str) -> str:
    if c == "runtime":
        return "runtime"
    return f"{c} [{UNITS[c]}]" if c in UNITS else c


def print_table(
    rows: list[dict[str, Any]], columns: list[str] | None = None, file=None, *, title: str | None = None
) -> None:
    """An aligned table: rich on a terminal, plain text otherwise (pipes, files, tests).

    Units stand in the headers, runtimes in ms or s, gaps below 1e-9 as 0.
    """
    file = file or sys.stdout
    if not rows:
        print("(no rows)", file=file)
        return
    columns = columns or list(rows[0])
    cells = [[_fmt(r.get(c), c) for c in columns] for r in rows]
    heads = [_header(c) for c in columns]
    if file.isatty() if hasattr(file, "isatty") else False:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title, show_lines=False)
        for h, c in zip(heads, columns, strict=True):
            numeric = any(isinstance(r.get(c), (int, float)) and not isinstance(r.get(c), bool) for r in rows)
            t.add_column(h, justify="right" if numeric else "left")
        for row in cells:
            t.add_row(*row)
        Console(file=file).print(t)
        return
    if title:
        print(title, file=file)
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip(), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row in cells:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip(), file=file)


def add_output_options(p, *, out_help: str = "write the results into this folder (created; see --force)") -> None:
    """``--out DIR``, ``--force`` and ``--format`` with the same meaning in every command."""
    p.add_argument("--out", default=None, metavar="DIR", help=out_help)
    p.add_argument("--force", action="store_true", help="replace the files of an existing, non-empty --out folder")
    p.add_argument(
        "--format",
        action="append",
        default=None,
        choices=["csv", "json", "parquet"],
        help="table file format(s) for --out (repeatable; default csv)",
    )


def print_json(obj: Any, file=None) -> None:
    print(json.dumps(obj, indent=2, default=_json_default), file=file or sys.stdout)


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if hasattr(o, "value"):
        return o.value
    return str(o)
