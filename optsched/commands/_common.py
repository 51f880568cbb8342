"""Helpers shared by the CLI subcommands: table output, JSON output, exit codes."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:.6g}"
    return str(v)


def print_table(rows: list[dict[str, Any]], columns: list[str] | None = None, file=None) -> None:
    """Plain-text table (no dependency on a terminal library)."""
    file = file or sys.stdout
    if not rows:
        print("(no rows)", file=file)
        return
    columns = columns or list(rows[0])
    cells = [[_fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row in cells:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)), file=file)


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
