"""The user pages as written: every code block runs as shown, and no page leaks internal text.

**Python blocks.** Every ````` ```python ````` block of every page under ``docs/`` (and of the
README) runs, each page's blocks in order in one fresh interpreter (one ``python`` process per
page, started in an empty folder with this checkout first on ``sys.path``), so a block may use
what an earlier block of its page defined and nothing else. A block that is a fragment on
purpose (the end of a module the reader writes, a sketch with ``...``) says so on its first line,
visibly for the reader, and is skipped by that name::

    # fragment: in your package's __init__.py

**Shell blocks.** Every line of a ````` ```bash ````` block that runs ``optsched`` on shipped data
runs too, each page's lines in order in one folder (so ``--out run1/`` then ``run1/schedule.json``
work), with ``optsched`` meaning this checkout's ``python -m optsched``. Lines that cannot run here
are listed in :data:`SHELL_NOT_RUN` with the reason (the project's own set-up, the network, a
trace that must be fetched, the reader's own file); lines too long for the default suite are in
:data:`SHELL_SLOW` and run with ``make test-slow``. A pattern that matches no line of any page
fails :func:`test_every_shell_exception_still_matches_a_line`, so the lists stay short and true.

**Leaks.** :func:`docs_checks.leaks` (run by the site build too) finds test paths, private names
and the papers' internal numbers on user pages.

**Measured figures.** Every ``[[fig:...]]`` and ``[[when:...]]`` of a page names a value in
``benchmarks/results/`` (``docs_figures``), no page types a time or a ratio outside the sections
still listed in ``optsched_docs.TYPED_KNOWN``, and compare's pictures show no label below 9 pt at
the page's width.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "_hooks"

#: Every page a user reads: the site's written pages and the README.
PAGES = sorted([*(p for p in (ROOT / "docs").rglob("*.md") if "_hooks" not in p.parts), ROOT / "README.md"])

#: The first line of a Python block that is a fragment on purpose (skipped, see the docstring).
FRAGMENT = "# fragment"

#: Shell lines not run, by a pattern of the line: the reason.
SHELL_NOT_RUN: dict[str, str] = {
    r"^(make|pip) ": "sets up, tests or builds the project itself",
    r"\bdata fetch\b|--dask\b": "needs the network or a Dask cluster",
    r"\bdata path pai-2020\b": "a trace that must be fetched first",
    r"\bcluster_log\.csv\b": "a Helios trace that must be fetched first (optsched data fetch helios)",
    r"\bmy_jobs\.csv\b": "the reader's own file (run where the page writes it first)",
    r"asrpt.paper": "a full paper reproduction (hours)",
}
#: Shell lines that run only in the slow suite (``make test-slow``), by a pattern: the reason.
SHELL_SLOW: dict[str, str] = {
    r"compare --trace openb\b(?!-)": "every policy on the full OpenB trace (minutes)",
    r"--jobs (10000|100000|1000000)\b": "a workload of 10,000 jobs or more",
    r"compare --trace openb-sample --jobs 1800\b": "every policy on 1,800 jobs (20 s to a minute on a loaded machine)",
}


def _blocks(text: str, lang: str) -> list[tuple[int, str]]:
    """The ``lang`` fenced blocks of a page: (line of the fence, code)."""
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(1))
        for m in re.finditer(rf"^```{lang}[ \t]*\n(.*?)^```", text, flags=re.S | re.M)
    ]


def _rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg"}


def python_blocks(page: Path) -> list[tuple[str, str]]:
    """(name, code) of each Python block of ``page`` that runs, in order (fragments left out)."""
    return [
        (f"{_rel(page)}:{line} (python block {i})", code)
        for i, (line, code) in enumerate(_blocks(page.read_text(encoding="utf-8"), "python"))
        if not code.lstrip().startswith(FRAGMENT)
    ]


def shell_lines(page: Path) -> list[tuple[str, str, str | None]]:
    """(where, line, why not in the default suite) of each command of the page's shell blocks:
    why is ``None`` for a line the default suite runs, ``"slow: ..."`` for one the slow suite runs,
    ``"not run: ..."`` for one that never runs here."""
    out: list[tuple[str, str, str | None]] = []
    written: set[str] = set()
    for start, code in _blocks(page.read_text(encoding="utf-8"), "bash"):
        for k, line in enumerate(code.splitlines(), 1):
            command = re.sub(r"\s+#.*$", "", line).strip()  # the patterns read the command, not its comment
            if not command or command.startswith("#"):
                continue
            written.update(re.findall(r">\s*(\S+)", command))
            not_run = next((why for pat, why in SHELL_NOT_RUN.items() if re.search(pat, command)), None)
            if not_run and "my_jobs.csv" in command and "my_jobs.csv" in written:
                not_run = None
            slow = next((why for pat, why in SHELL_SLOW.items() if re.search(pat, command)), None)
            why = f"not run: {not_run}" if not_run else (f"slow: {slow}" if slow else None)
            out.append((f"{_rel(page)}:{start + k}", line, why))
    return out


def _run_python(page: Path, folder: Path) -> None:
    blocks = python_blocks(page)
    runner = (
        "import json, sys\n"
        "for _docs_name, _docs_code in json.load(sys.stdin):\n"
        "    exec(compile(_docs_code, _docs_name, 'exec'), globals())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", runner],
        input=json.dumps(blocks),
        cwd=folder,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, f"{_rel(page)}: a Python block fails as shown:\n{out.stderr[-4000:]}"


def _run_shell(page: Path, folder: Path, *, slow: bool) -> None:
    lines = [
        (where, line) for where, line, why in shell_lines(page) if why is None or (slow and why.startswith("slow"))
    ]
    prelude = 'optsched() { "$OPTSCHED_PYTHON" -m optsched "$@"; }\n'
    env = {**_env(), "OPTSCHED_PYTHON": sys.executable}
    for where, line in lines:
        out = subprocess.run(
            ["bash", "-c", prelude + line], cwd=folder, env=env, capture_output=True, text=True, timeout=1800
        )
        assert out.returncode == 0, f"{where}: `{line}` exits {out.returncode}:\n{out.stderr[-3000:]}"


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=_rel)
def test_the_python_blocks_of_a_page_run_in_order(page, tmp_path):
    _run_python(page, tmp_path)


@pytest.mark.parametrize("page", [p for p in PAGES if any(why is None for _, _, why in shell_lines(p))], ids=_rel)
def test_the_shell_lines_of_a_page_run(page, tmp_path):
    _run_shell(page, tmp_path, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", [p for p in PAGES if any((w or "").startswith("slow") for *_, w in shell_lines(p))], ids=_rel
)
def test_the_long_shell_lines_of_a_page_run(page, tmp_path):
    _run_shell(page, tmp_path, slow=True)


def test_every_shell_exception_still_matches_a_line():
    """Each pattern of SHELL_NOT_RUN and SHELL_SLOW names a line some page shows (else remove it)."""
    lines = [re.sub(r"\s+#.*$", "", line) for page in PAGES for _, line, _ in shell_lines(page)]
    stale = [pat for pat in [*SHELL_NOT_RUN, *SHELL_SLOW] if not any(re.search(pat, line) for line in lines)]
    assert not stale, f"patterns that match no shell line of any page: {stale}"


def test_the_runner_finds_every_block_and_skips_fragments_by_name(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Text\n\n```python\nx = 1\n```\n\n```python\n# fragment: a sketch\nundefined()\n```\n\n"
        "```bash\noptsched info   # versions\nmake test\n\noptsched compare --trace openb --load 0.9\n```\n\n"
        "```python\nassert x == 1\n```\n",
        encoding="utf-8",
    )
    assert python_blocks(page) == [
        ("page.md:3 (python block 0)", "x = 1\n"),
        ("page.md:19 (python block 2)", "assert x == 1\n"),
    ]
    shell = shell_lines(page)
    assert (shell[0][0], shell[0][2]) == ("page.md:13", None)
    assert shell[1][2].startswith("not run:") and shell[2][2].startswith("slow:")
    _run_python(page, tmp_path)


# -- leaks ----------------------------------------------------------------------------------------


def _checks():
    if str(HOOKS) not in sys.path:
        sys.path.insert(0, str(HOOKS))
    spec = importlib.util.spec_from_file_location("docs_checks", HOOKS / "docs_checks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_user_page_shows_a_test_path_a_private_name_or_an_internal_number():
    assert _checks().leaks([p for p in PAGES if p.is_relative_to(ROOT / "docs")], ROOT) == []


def test_the_leak_check_finds_each_kind_on_user_pages_only(tmp_path):
    text = (
        "Checked by `tests/sim/test_kernel.py`.\n"
        "See `optsched.solvers.members._private_locks` and `_REPRO.pop(name)`.\n"
        "Lazer (paper 004), numbered 000/004.\n"
        "| Lazer (004) | a table's row |\n"
        "Fine: `__init__.py`, `__name__`, `optsched.sim.rules`, `RULES[n]`, the latest tests, paper 2022.\n"
    )
    for name in ("user.md", "conventions.md"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = _checks().leaks([tmp_path / "user.md", tmp_path / "conventions.md"], tmp_path)
    assert [f.split(": ", 1)[0] for f in found] == [
        "user.md:1", "user.md:2", "user.md:2", "user.md:3", "user.md:3", "user.md:4"
    ]  # fmt: skip
    assert "'tests/sim/test_kernel.py'" in found[0] and "'_REPRO'" in found[2] and "'000/004'" in found[4]


# -- measured figures -----------------------------------------------------------------------------


def _hook(name: str):
    if str(HOOKS) not in sys.path:
        sys.path.insert(0, str(HOOKS))
    spec = importlib.util.spec_from_file_location(name, HOOKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RESULTS = ROOT / "benchmarks" / "results"
DOCS_PAGES = [p for p in PAGES if p.is_relative_to(ROOT / "docs")]
#: The formulations, on the site through the same hooks (their figures are written in as the pages').
FORMULATIONS = sorted((ROOT / "formulations").glob("*.md"))


@pytest.mark.parametrize("page", [*DOCS_PAGES, *FORMULATIONS], ids=_rel)
def test_every_figure_a_page_names_is_measured_with_its_date(page):
    figures = _hook("docs_figures")
    text, problems, _ = figures.substitute(page.read_text(encoding="utf-8"), RESULTS, _rel(page))
    assert problems == []
    assert "[[fig:" not in text and "[[when:" not in text


def test_no_page_readme_or_notebook_types_a_measured_figure_outside_the_sections_still_listed():
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    known = _hook("optsched_docs").TYPED_KNOWN
    pages = [*DOCS_PAGES, *FORMULATIONS, ROOT / "README.md", *sorted((ROOT / "notebooks").glob("*.ipynb"))]
    assert _hook("docs_figures").typed_problems(pages, ROOT, known) == []


def _results(tmp_path: Path) -> Path:
    doc = {
        "date": "2026-11-28 06:01:22 UTC",
        "cases": [
            {
                "case": "all-10k",
                "load_average": [1.97, 2.3, 3.1],
                "total_seconds": 136.29,
                "rows": {"srtf": {"seconds": 0.07}},
            },
            {"case": "late", "measured": "2026-12-07 13:44 UTC", "load_average": 2.4, "seconds": 1610.56},
        ],
        "runs": [{"instance": "n30-4x4", "share": True, "seconds": 2.531}],
        "load_1min": {"min": 4.77, "max": 6.04},
    }
    (tmp_path / "bench.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "undated.json").write_text(json.dumps({"seconds": 3.0}), encoding="utf-8")
    return tmp_path


def test_a_figure_is_read_from_its_results_file_with_the_date_and_load_of_its_run(tmp_path):
    figures = _hook("docs_figures")
    text = (
        "all: [[fig:bench/cases/all-10k/total_seconds]] s = [[fig:bench/cases/all-10k/total_seconds as min]] min"
        " ([[when:bench/cases/all-10k]]); srtf [[fig:bench/cases/all-10k/rows/srtf/seconds as ms]] ms;"
        " late [[fig:bench/cases/late/seconds as ,.0f]] s ([[when:bench/cases/late]]);"
        " share [[fig:bench/runs/instance=n30-4x4/seconds]] s, first [[fig:bench/runs/0/seconds as .1f]] s"
        " ([[when:bench/runs/0]])"
    )
    out, problems, stated = figures.substitute(text, _results(tmp_path), "page.md")
    assert problems == []
    # 136.29 s to three significant figures; / 60 = 2.2715 minutes; 0.07 s = 70 ms; the entry's own
    # date and load where it has them (late), else the file's date and the nearest load above it
    assert out == (
        "all: 136 s = 2.27 min (measured 2026-11-28 06:01 UTC, load average 2.0); srtf 70 ms;"
        " late 1,611 s (measured 2026-12-07 13:44 UTC, load average 2.4);"
        " share 2.53 s, first 2.5 s (measured 2026-11-28 06:01 UTC, load average 4.8-6.0)"
    )
    assert stated["[[fig:bench/cases/all-10k/total_seconds]]"] == "136"


def test_a_table_is_written_from_its_results_file_one_row_per_entry_or_group(tmp_path):
    figures = _hook("docs_figures")
    doc = {
        "date": "2026-11-28 01:35 UTC",
        "rows": [
            {"n": 500, "backend": "highs", "wall": 4.07, "objective": 14926.0, "out": "building"},
            {"n": 500, "backend": "cpsat", "wall": 11.12, "objective": 14926.0, "out": None},
            {"n": 1000, "backend": "highs", "wall": 3.96, "objective": 52143.0, "out": "building"},
            {"n": 1000, "backend": "cpsat", "wall": 11.0, "objective": 52143.0, "out": None},
        ],
    }
    results = tmp_path / "r"
    results.mkdir()
    (results / "limit.json").write_text(json.dumps(doc), encoding="utf-8")
    text = (
        "| n | highs | cpsat |\n|---|---|---|\n"
        "[[rows:limit/rows by n]]\n"
        "| n{n} | {backend=highs/wall} s, {backend=highs/objective as ,.0f}; {backend=highs/out} "
        "| {backend=cpsat/wall as .1f} s; {backend=cpsat/out} |\n"
        "each:\n[[rows:limit/rows]]\n- {backend} {wall as ms} ms\n"
        "fastest cpsat [[fig:limit/rows/all(backend=cpsat)/min(wall)]] s, slowest highs "
        "[[fig:limit/rows/all(backend=highs)/max(wall)]] s\n"
    )
    out, problems, _ = figures.substitute(text, results, "page.md")
    assert problems == []
    # one row per n, each backend's cell from its own entry; null shows as an en dash
    assert out.split("\n") == [
        "| n | highs | cpsat |",
        "|---|---|---|",
        "| n500 | 4.07 s, 14,926; building | 11.1 s; \u2013 |",
        "| n1,000 | 3.96 s, 52,143; building | 11.0 s; \u2013 |",
        "each:",
        "- highs 4,070 ms",
        "- cpsat 11,120 ms",
        "- highs 3,960 ms",
        "- cpsat 11,000 ms",
        "fastest cpsat 11 s, slowest highs 4.07 s",
        "",
    ]
    bad, problems, _ = figures.substitute("x\n[[rows:limit/rows]]\n| {wal} |\n", results, "docs/p.md")
    assert len(problems) == 1 and problems[0].startswith("docs/p.md:2: the rows [[rows:limit/rows]]")
    assert "'wal'" in problems[0] and "[[rows:limit/rows]]" in bad


def test_a_solve_cell_a_missing_count_and_a_bound_read_from_the_file(tmp_path):
    figures = _hook("docs_figures")
    doc = {
        "date": "2026-11-23 22:36 UTC",
        "results": [
            {
                "instance": "n8",
                "highs": {"status": "optimal", "objective": 94.0, "bound": 94.0, "load": 4.77},
                "cpsat": {"status": "feasible", "objective": 413.0, "bound": 402.0, "load": 5.31},
                "pjs": {"status": "feasible", "objective": 420.5, "bound": None, "load": 6.04},
            }
        ],
        "runs": [{"share": True, "shared": {"cpsat": {"sent": 15}}}, {"share": False, "shared": {}}],
    }
    (tmp_path / "peer.json").write_text(json.dumps(doc), encoding="utf-8")
    text = (
        "[[rows:peer/results]]\n| {highs as result} | {cpsat as result} | {pjs as result} "
        "| {min(load) as .1f}-{max(load) as .1f} |\n"
        "[[rows:peer/runs]]\n- {share as on}: {shared/cpsat/sent else none}\n"
    )
    out, problems, _ = figures.substitute(text, tmp_path, "page.md")
    assert problems == []
    # proven: "**opt**" and the objective; else objective / bound; no bound said so; the load
    # range over the row's solves; a count a run does not hold shows the page's own word
    assert out.split("\n") == [
        "| **opt** 94 | 413 / 402 | 420.50, no bound | 4.8-6.0 |",
        "- on: 15",
        "- off: none",
        "",
    ]


def test_a_figure_key_in_code_is_shown_as_written(tmp_path):
    figures = _hook("docs_figures")
    text = (
        "the syntax: `[[fig:<file>/<path>]]` and ``[[when:<key>]]``, measured [[fig:bench/runs/0/seconds]] s\n"
        "```\n[[fig:nothing/x]]\n[[rows:nothing/y]]\n{a}\n```\n"
    )
    out, problems, _ = figures.substitute(text, _results(tmp_path), "CHANGELOG.md")
    assert problems == []
    assert out == text.replace("[[fig:bench/runs/0/seconds]]", "2.53")


@pytest.mark.parametrize(
    ("figure", "why"),
    [
        ("[[fig:nothing/cases/x]]", "no results file benchmarks/results/nothing.json"),
        ("[[fig:bench/cases/all-100k/total_seconds]]", "has no 'all-100k'"),
        ("[[fig:bench/cases/all-10k/wall]]", "has no 'wall'"),
        ("[[when:undated]]", "no date"),
        ("[[fig:bench/date as .1f]]", "is not a number"),
    ],
)
def test_a_figure_that_names_no_measured_value_fails_naming_page_key_and_command(tmp_path, figure, why):
    figures = _hook("docs_figures")
    out, problems, _ = figures.substitute(f"line one\nthe run took {figure} s\n", _results(tmp_path), "docs/x.md")
    assert len(problems) == 1 and figure in out
    file = figure.split(":", 1)[1].split("/", 1)[0].rstrip("]")
    assert problems[0].startswith(f"docs/x.md:2: the figure {figure}: ") and why in problems[0]
    assert f"python -m benchmarks.bench_{file}" in problems[0]


def test_typed_figures_are_found_outside_code_marked_lines_and_known_sections():
    figures = _hook("docs_figures")
    text = (
        "# Page\n"
        "The full comparison takes about 6 minutes.\n"  # the issue's example: one run, two figures
        "## Worked example\n"
        "the run took 40 minutes; SRTF 1.5x the bound, 13.6x for 10x the jobs\n"
        "`--time-limit 20 s` in code, [[fig:compare/cases/all-10k/total_seconds]] s from a file\n"
        "```\nsimulated in 0.17 s\n```\n"
        "    indented code: 3 s\n"
        "a time limit of 60 s <!-- not measured -->, 1e-6 s, 4e9 s, 10^6 s, 2.6·10^6 s, a 1-s slot\n"
        "## Cost\n"
        "rows take 1,611 s (26.8 min), 0.5-1 s, 10 to 15 µs, 1.8 h\n"
    )
    found = [p.split(": the figure ")[1].split(" is typed")[0] for p in figures.typed_figures(text, "p.md")]
    assert found == ["'6 minutes'", "'40 minutes'", "'1.5x'", "'13.6x'", "'10x'", "'1,611 s'", "'26.8 min'",
                     "'0.5-1 s'", "'10 to 15 µs'", "'1.8 h'"]  # fmt: skip
    left = figures.typed_figures(text, "p.md", ("Worked example",))
    assert [p.split(":")[1] for p in left] == ["2", "12", "12", "12", "12", "12"]
    assert figures.typed_figures(text, "p.md", ("*",)) == []


def test_a_notebooks_markdown_cells_are_checked_and_labels_and_pairs_are_no_times(tmp_path):
    figures = _hook("docs_figures")
    cells = [
        {"cell_type": "markdown", "source": ["# N\n", "runs in about 40 s\n", "slots of 100 s <!-- not measured -->"]},
        {"cell_type": "code", "source": ["sleep(5)  # 5 s\n"]},
        {"cell_type": "markdown", "source": "both need 4 GPUs ((2h)); the pair (0, h); 1.8 h; 1,611 s"},
    ]
    (tmp_path / "n.ipynb").write_text(json.dumps({"cells": cells}), encoding="utf-8")
    problems = figures.typed_problems([tmp_path / "n.ipynb"], tmp_path, {})
    # the markdown cells only, named by cell and line; an equation's label and a pair are not times
    assert [p.split(" is typed")[0] for p in problems] == [
        "n.ipynb#cell0:2: the figure '40 s'",
        "n.ipynb#cell2:1: the figure '1.8 h'",
        "n.ipynb#cell2:1: the figure '1,611 s'",
    ]


def test_a_known_section_that_types_no_figure_must_leave_the_list(tmp_path):
    figures = _hook("docs_figures")
    (tmp_path / "a.md").write_text("# A\n## Typed\ntook 40 minutes\n## Clean\nno figure\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\nnothing measured\n", encoding="utf-8")
    known = {"a.md": ("Typed", "Clean"), "b.md": ("*",)}
    problems = figures.typed_problems([tmp_path / "a.md", tmp_path / "b.md"], tmp_path, known)
    assert problems == [
        "a.md: the section 'Clean' types no figure now: remove it from TYPED_KNOWN",
        "b.md: the page types no figure now: remove it from TYPED_KNOWN",
    ]


# -- figure labels at the page's width ------------------------------------------------------------

#: The width a picture is shown at on a 1,280-px page (the article's width, CSS px; the browser
#: test checks the site gives at least this), the resolution pictures are written at
#: (optsched.plot.files) and the smallest label a reader should meet, in points as shown.
CONTENT_PX = 680
DPI = 120
MIN_LABEL_PT = 9


def _shown_label_sizes(fig) -> list[tuple[float, str]]:
    """(points as shown on the page, text) of every visible text of ``fig``: a picture wider than
    CONTENT_PX is shrunk to it (CSS: 1 pt = 4/3 px)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    width_px = fig.get_figwidth() * DPI
    scale = min(1.0, CONTENT_PX / width_px)
    return [
        (t.get_fontsize() * DPI / 72 * scale * 0.75, t.get_text())
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip()
    ]


def test_comparison_pictures_show_labels_of_at_least_9_points_at_the_pages_width():
    """The gallery's comparison pictures (every policy of ``compare --policies all`` in the
    summary) shown at CONTENT_PX: no label, tick or legend below MIN_LABEL_PT."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from optsched.experiments.compare import figures
    from optsched.experiments.compare.runner import available_policies

    names = list(available_policies())[:25]
    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        {"policy": names, "mean_jct": rng.uniform(1e3, 1e6, len(names)), "p95_jct": rng.uniform(1e3, 1e7, len(names))}
    )
    table.attrs.update(
        bound={"mean_jct": 900.0},
        gpus=8,
        utilization={n: (np.array([0.0, 10.0, 3600.0]), np.array([4.0, 8.0, 0.0])) for n in names[:7]},
    )
    per_job = {
        n: pd.DataFrame({"jct": rng.exponential(100.0, 50), "queue_delay": rng.exponential(10.0, 50)})
        for n in names[:7]
    }
    small = {}
    for name, draw in (
        ("summary", lambda: figures.plot_summary(table)),
        ("jct_cdf", lambda: figures.plot_jct_cdf(per_job)),
        ("queue_delay_cdf", lambda: figures.plot_queue_delay_cdf(per_job)),
        ("utilization", lambda: figures.plot_utilization(table, policies=names[:7])),
    ):
        ax = draw()
        small[name] = [(round(pt, 1), text[:30]) for pt, text in _shown_label_sizes(ax.figure) if pt < MIN_LABEL_PT]
        plt.close(ax.figure)
    assert small == {k: [] for k in small}


def test_a_papers_figure_is_marked_as_the_papers_and_a_new_figure_in_a_listed_section_fails(tmp_path):
    figures = _hook("docs_figures")
    text = (
        "# F\n"
        "Table 2 of the paper: 13.6x the baseline, 136 s <!-- paper -->\n"
        "a 60 s limit <!-- not measured -->\n"
        "## Findings\n"
        "our replay took 40 s\n"
        "and 2 min more\n"
    )
    (tmp_path / "formulations").mkdir()
    page = tmp_path / "formulations" / "f.md"
    page.write_text(text, encoding="utf-8")
    # the marked lines are left out; the two typed figures are reported
    assert [p.split(":")[1] for p in figures.typed_figures(text, "f.md")] == ["5", "6"]
    check = figures.typed_problems
    assert check([page], tmp_path, {"formulations/f.md": {"Findings": 2}}) == []
    assert check([page], tmp_path, {"formulations/f.md": ("Findings",)}) == []
    # one more figure in the listed section fails, naming it; one fewer asks to lower the count
    page.write_text(text + "then 3 s\n", encoding="utf-8")
    (more,) = check([page], tmp_path, {"formulations/f.md": {"Findings": 2}})
    assert "the section 'Findings' types 3 figures, TYPED_KNOWN allows 2" in more and "'3 s'" in more
    page.write_text(text.replace("and 2 min more\n", ""), encoding="utf-8")
    assert check([page], tmp_path, {"formulations/f.md": {"Findings": 2}}) == [
        "formulations/f.md: the section 'Findings' types 1 figures now, not 2: lower its count in TYPED_KNOWN"
    ]
    assert check([page], tmp_path, {"formulations/f.md": {"*": 1}}) == []


def test_the_build_checks_the_formulations_for_typed_figures():
    source = (HOOKS / "optsched_docs.py").read_text(encoding="utf-8")
    assert 'p.parent == ROOT / "formulations"' in source  # the pages given to typed_problems
    known = _hook("optsched_docs").TYPED_KNOWN if importlib.util.find_spec("mkdocs") else {}
    assert _hook("docs_figures").typed_problems(FORMULATIONS, ROOT, known) == []


def test_min_and_max_without_a_field_read_a_list_of_numbers(tmp_path):
    figures = _hook("docs_figures")
    (tmp_path / "r.json").write_text(
        json.dumps({"rows": [{"n": 12, "runtimes": [27.3, 54.67, 19.44]}]}), encoding="utf-8"
    )
    text = "took [[fig:r/rows/n=12/runtimes/min() as .0f]]-[[fig:r/rows/n=12/runtimes/max() as .0f]] s"
    out, problems, _ = figures.substitute(text, tmp_path, "p.md")
    assert (out, problems) == ("took 19-55 s", [])
