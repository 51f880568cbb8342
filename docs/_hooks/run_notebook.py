"""Execute one notebook for the site: ``python docs/_hooks/run_notebook.py NOTEBOOK OUT_DIR``.

Runs every cell in the notebook's own folder (as Jupyter and ``pytest --nbmake`` do) with the
kernel its metadata names, and writes the executed copy to ``OUT_DIR/<name>.ipynb``; the
committed notebook is not touched. A cell that raises stops the run: the message names the
notebook, the line of the ``.ipynb`` file where the cell starts, the cell's number and its
error, and the exit code is 1 (the site build then fails). A cell that runs longer than
``--timeout`` seconds (default 600) fails the same way.

Beside the executed copy it writes ``OUT_DIR/<name>.run.json``: the seconds the run took, and
for every picture a cell showed, the cell's execution count, the picture's resolution and width
in pixels and its smallest texts in points as drawn (recorded in the kernel as each picture is
rendered, :data:`RECORD_FIGURES`), so the build can check how large they are shown
(``docs_notebooks.output_problems``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

#: Run silently in the kernel before the first cell: every picture rendered into memory (what a
#: cell shows inline; a file a cell saves is left out) appends one JSON line to the file named
#: by ``__PATH__``.
RECORD_FIGURES = """
def _optsched_record_figures(path):
    import io, json
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.text import Text

    draw = FigureCanvasBase.print_figure
    # the execution count of the cell running, counted here (a picture shown at a cell's end is
    # flushed after the shell's own count has moved on; some IPython versions move it first)
    cell = {"count": 0}
    get_ipython().events.register("pre_run_cell", lambda *_: cell.update(count=cell["count"] + 1))

    def print_figure(self, filename, *args, **kwargs):
        out = draw(self, filename, *args, **kwargs)
        if isinstance(filename, io.BytesIO) and filename.getvalue()[:8] == b"\\x89PNG\\r\\n\\x1a\\n":
            fig = self.figure
            texts = sorted(
                (float(t.get_fontsize()), t.get_text()[:40])
                for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            )
            dpi = kwargs.get("dpi")
            dpi = fig.dpi if dpi in (None, "figure") else dpi
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({
                    "count": cell["count"],
                    "dpi": float(dpi),
                    "width_px": int.from_bytes(filename.getvalue()[16:20], "big"),
                    "texts": texts[:3],
                }) + "\\n")
        return out

    FigureCanvasBase.print_figure = print_figure

_optsched_record_figures(__PATH__)
del _optsched_record_figures
"""


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
    args.out_dir.mkdir(parents=True, exist_ok=True)
    figures = args.out_dir / f"{src.stem}.figures.jsonl"
    figures.unlink(missing_ok=True)
    preamble = RECORD_FIGURES.replace("__PATH__", repr(str(figures)))
    client.on_notebook_start = lambda **_: client.kc.execute(preamble, silent=True, store_history=False)
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
    seconds = time.monotonic() - t0
    nbformat.write(nb, args.out_dir / src.name)
    shown = [json.loads(line) for line in figures.read_text(encoding="utf-8").splitlines()] if figures.exists() else []
    figures.unlink(missing_ok=True)
    record = {"seconds": round(seconds, 1), "figures": shown}
    (args.out_dir / f"{src.stem}.run.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{args.notebook.as_posix()}: executed in {seconds:.1f} s")
    return 0


def _failed_cell(nb) -> int | None:
    """The index of the cell whose output holds the error."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            return i
    return None


if __name__ == "__main__":
    sys.exit(main())
