"""Execute one notebook for the site: ``python docs/_hooks/run_notebook.py NOTEBOOK OUT_DIR``.

Runs every cell in the notebook's own folder (as Jupyter and ``pytest --nbmake`` do) with the
kernel its metadata names, and writes the executed copy to ``OUT_DIR/<name>.ipynb``; the
committed notebook is not touched. A cell that raises stops the run: the message names the
notebook, the line of the ``.ipynb`` file where the cell starts, the cell's number and its
error, and the exit code is 1 (the site build then fails). A cell that runs longer than
``--timeout`` seconds (default 600) fails the same way.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError


def cell_line(path: Path, index: int) -> int:
    """The line of the ``.ipynb`` file where cell ``index`` (0-based) starts."""
    starts = [n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if '"cell_type":' in line]
    return starts[index] if index < len(starts) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebook", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    src = args.notebook.resolve()
    nb = nbformat.read(src, as_version=4)
    client = NotebookClient(
        nb,
        timeout=args.timeout,
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(src.parent)}},
    )
    t0 = time.monotonic()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as exc:
        index = _failed_cell(nb)
        if index is None:  # a timeout: the last cell that started
            started = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("execution_count")]
            index = started[-1] if started else 0
        print(
            f"{args.notebook.as_posix()}:{cell_line(src, index)}: cell {index + 1} failed:\n{exc}",
            file=sys.stderr,
        )
        return 1
    args.out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, args.out_dir / src.name)
    print(f"{args.notebook.as_posix()}: executed in {time.monotonic() - t0:.1f} s")
    return 0


def _failed_cell(nb) -> int | None:
    """The index of the cell whose output holds the error."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            return i
    return None


if __name__ == "__main__":
    sys.exit(main())
