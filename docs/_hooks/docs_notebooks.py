"""The notebooks on the site: executed at build time, checked, titled, downloadable.

The notebooks are committed without outputs. The build executes each one once
(``run_notebook.py`` through :mod:`docs_jobs`, two at a time, cached by the code's hash) and
mkdocs-jupyter renders the executed copy, so every table and plot shows. ``make test`` relies on
this execution: its pytest run does not execute them again (``make notebooks`` still runs them
under nbmake alone).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from docs_jobs import Job

HERE = Path(__file__).resolve().parent
#: Seconds one cell may run (the notebooks' own solves have time limits well below this).
CELL_TIMEOUT = 600
#: Seconds a whole notebook may take when the build runs it (two at a time, on a machine that may
#: be busy): notebooks/README.md says each runs "in well under three minutes", and
#: :func:`output_problems` fails the build on one that took longer.
MAX_SECONDS = 180
#: "10 · A-SRPT ..." / "20 - RAR ..." (a number prefix) and "(paper 000)" in a title.
_NUMBER = re.compile(r"^\d\d\s*[·\-:]\s*")
_PAPER_NO = re.compile(r"\s*\(paper \d{3}(?:,[^)]*)?\)")


def job(path: Path, root: Path) -> Job:
    rel = path.relative_to(root).as_posix()
    return Job(
        name=f"notebook:{path.stem}",
        steps=(
            (sys.executable, str(HERE / "run_notebook.py"), rel, "{out}/notebooks", "--timeout", f"{CELL_TIMEOUT}"),
        ),
        inputs=(path, HERE / "run_notebook.py"),
        timeout=CELL_TIMEOUT * 3,
    )


def title(path: Path) -> str | None:
    """A notebook's title: its first heading as written, without a number prefix, "(paper 000)",
    code marks or emphasis (mkdocs-jupyter's own title drops code spans: "... (`rarddls`)" would
    read "... ()")."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            first = "".join(cell.get("source", [])).strip().splitlines()[:1]
            if first and first[0].startswith("# "):
                text = first[0][2:].replace("`", "").replace("*", "").strip()
                return _PAPER_NO.sub("", _NUMBER.sub("", text)).strip()
            return None
    return None


def output_problems(executed: Path, source: Path, rel: str) -> list[str]:
    """What an executed notebook lacks for its page: a cell not run, an error shown, a cell that
    calls ``plt.show()`` without a picture, or no picture at all; each at the line of the
    committed notebook (``source``, shown as ``rel``) where the cell starts. With the record
    ``run_notebook.py`` writes beside it (``<name>.run.json``), also a picture whose smallest
    text shows below 9 pt in the page's output column, and a run longer than
    :data:`MAX_SECONDS`."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    starts = [n for n, line in enumerate(source.read_text(encoding="utf-8").split("\n"), 1) if '"cell_type":' in line]
    problems = []
    images = 0
    for k, cell in enumerate(nb.get("cells", []), 1):
        at = f"{rel}:{starts[k - 1] if k - 1 < len(starts) else 1}"
        if cell.get("cell_type") != "code":
            continue
        outputs = cell.get("outputs", [])
        src = "".join(cell.get("source", []))
        has_image = any("image/png" in o.get("data", {}) or "image/svg+xml" in o.get("data", {}) for o in outputs)
        images += has_image
        if src.strip() and cell.get("execution_count") is None:
            problems.append(f"{at}: cell {k} was not executed")
        if any(o.get("output_type") == "error" for o in outputs):
            problems.append(f"{at}: cell {k} shows an error")
        if "plt.show()" in src and not has_image:
            problems.append(f"{at}: cell {k} calls plt.show() but shows no picture")
    if images == 0:
        problems.append(f"{rel}: no picture on the page (every notebook draws at least one plot)")
    run = executed.with_name(f"{executed.stem}.run.json")
    if run.exists():
        problems += _run_problems(json.loads(run.read_text(encoding="utf-8")), nb, starts, rel)
    return problems


def _run_problems(run: dict, nb: dict, starts: list[int], rel: str) -> list[str]:
    """A picture whose smallest text is shown below 9 pt (inline pictures are shown at their
    size, or shrunk to the output column: ``optsched.plot.style``), a run over MAX_SECONDS."""
    from optsched.plot.style import MIN_SHOWN_PT, NOTEBOOK_WIDTH_PX, shown_scale

    counts = {c.get("execution_count"): k for k, c in enumerate(nb.get("cells", []), 1) if c.get("cell_type") == "code"}
    out = []
    for fig in run.get("figures", []):
        if not fig.get("texts"):
            continue
        size, text = fig["texts"][0]
        dpi, width = fig["dpi"], fig["width_px"]
        shown = size * shown_scale(width / dpi, dpi=dpi, column_px=NOTEBOOK_WIDTH_PX)
        if shown < MIN_SHOWN_PT:
            k = counts.get(fig.get("count"))
            at = f"{rel}:{starts[k - 1] if k and k - 1 < len(starts) else 1}"
            out.append(
                f"{at}: cell {k} shows a picture whose smallest text ({text!r}, {size:g} pt, {width} px "
                f"wide at {dpi:g} dpi) is shown at {shown:.1f} pt in the page's {NOTEBOOK_WIDTH_PX}-px "
                f"column: draw it narrower (figsize) or its text larger (at least {MIN_SHOWN_PT:g} pt as shown)"
            )
    seconds = run.get("seconds")
    if seconds is not None and seconds > MAX_SECONDS:
        out.append(
            f"{rel}: ran {seconds:.0f} s when the site was built; notebooks/README.md says each runs in "
            f"under {MAX_SECONDS // 60} minutes: make it faster, or change both (MAX_SECONDS and the README)"
        )
    return out


def download_html(name: str) -> str:
    """The download link put at the top of a notebook's page (the committed notebook, without
    outputs, copied beside the page)."""
    return (
        '<p class="optsched-download">'
        f'<a class="md-button" href="{name}" download>Download the notebook</a> '
        "<span>Run it in Jupyter with optsched installed (<code>pip install optsched</code>); "
        "this page shows it as executed when the site was built.</span></p>\n"
    )


_HEADING = re.compile(r'<h([1-6])\b[^>]*\bid="([^"]+)"[^>]*>')


def align_toc(html: str, toc) -> str:
    """Give each heading of a notebook's page the id its table-of-contents entry links to.

    mkdocs-jupyter makes the table of contents from the notebook converted to markdown, and the
    headings' ids from its HTML: a heading with code in it gets two different ids (the entry of
    "Simulating ... (`optsched.sim`)" led nowhere). Headings and entries come in the same order;
    where the ids differ, the entry's id is added to the heading (its own id stays)."""
    entries = []

    def walk(items):
        for item in items:
            entries.append(item.id)
            walk(item.children)

    walk(toc or [])
    heads = list(_HEADING.finditer(html))
    if len(heads) != len(entries):
        return html  # cannot pair them: the site's link check reports what leads nowhere
    for m, want in sorted(zip(heads, entries, strict=True), key=lambda x: x[0].start(), reverse=True):
        if m.group(2) != want:
            html = html[: m.end()] + f'<span id="{want}"></span>' + html[m.end() :]
    return html
