"""The gallery page: the figures optsched's commands draw, drawn by those commands at build time.

Each entry is a command a user can type (shown above its figures); the build runs it on a small
instance through :mod:`docs_jobs` (in parallel with the notebooks, cached by the code's hash) and
puts what it wrote under ``gallery/`` on the site: pictures, and the tables they are drawn from
(CSV, linked under each figure). Nothing is pasted: a change to a command or a figure shows on
the next build.

- ``optsched compare`` (every online policy beside a lower bound): its four pictures;
- ``optsched solve`` then ``optsched verify --plot``: a Gantt chart of a proven optimum;
- ``optsched reproduce NAME --quick`` for every registered reproduction: each figure, with what
  the paper states or reports beside it (the tables' ``claim`` / ``paper`` columns, or the
  reproduction's ``claims`` table) and whether this run reproduced it;
- the simulator's scaling plot, redrawn from the stored benchmark results.

The reproductions' folders are copied whole (tables, PNG and SVG) to
``gallery/reproduce/<name>/``; ``tests/experiments/test_reproduce.py`` checks that folder of
the site ``make test`` built instead of running each reproduction a second time.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

from docs_jobs import Job, Outcome

#: The instance of the Gantt chart: 20 jobs on 4 servers of 4 GPUs, proven optimal in seconds.
GANTT_INSTANCE = "papers/rigid:rigid-bench-n20-4x4"
COMPARE = ("--trace", "openb-sample", "--jobs", "300", "--load", "0.9")
#: compare's pictures, in the order shown, with a caption each.
COMPARE_FIGURES = {
    "jct_summary": "Mean and P95 job completion time (JCT) of every policy, beside the lower bound on the mean.",
    "jct_cdf": "The distribution (CDF) of the JCT of every job, per policy.",
    "queue_delay_cdf": "How long jobs wait for their first start, per policy.",
    "utilization": "The share of GPUs busy over time, per policy.",
}
#: Reproductions whose quick form takes longer than this (declared, seconds) are left out, as
#: the default test run leaves them out.
MAX_QUICK_SECONDS = 90


def _py(*args: str) -> tuple[str, ...]:
    return (sys.executable, *args)


def reproductions() -> list:
    from optsched.experiments.registry import reproductions as registered

    return [r for r in registered() if (r.quick_seconds or 0) <= MAX_QUICK_SECONDS]


def jobs(root: Path) -> list[Job]:
    out = [
        Job("gallery:compare", (_py("-m", "optsched", "compare", *COMPARE, "--quiet", "--out", "{out}"),)),
        Job(
            "gallery:gantt",
            (
                _py("-m", "optsched", "solve", GANTT_INSTANCE, "--time-limit", "60", "--quiet", "--out", "{out}"),
                _py("-m", "optsched", "verify", GANTT_INSTANCE, "{out}/schedule.json", "--plot"),
            ),
        ),
        Job(
            "gallery:scaling",
            (
                _py(
                    "-c",
                    "import sys; from pathlib import Path; from benchmarks.bench_sim import plot_scaling; "
                    "sys.exit(plot_scaling(Path(sys.argv[1]) / 'sim-scaling.png'))",
                    "{out}",
                ),
            ),
            inputs=(root / "benchmarks" / "results" / "sim.json", root / "benchmarks" / "bench_sim.py"),
        ),
    ]
    for r in reproductions():
        out.append(
            Job(
                f"gallery:reproduce:{r.name}",
                (_py("-m", "optsched", "reproduce", r.name, "--quick", "--quiet", "--out", "{out}", "--force"),),
                env=(("MPLBACKEND", "Agg"),),
            )
        )
    return out


# -- what the commands wrote, checked ------------------------------------------------------------


def problems(outcomes: list[Outcome]) -> list[str]:
    """A command that failed, warned that a figure could not be drawn, drew nothing, or drew a
    picture whose smallest text is shown below 9 pt (:func:`small_text`)."""
    out = []
    for o in outcomes:
        if not o.job.name.startswith("gallery:"):
            continue
        if o.out is None:
            out.append(f"gallery: {o.job.name.split(':', 1)[1]} failed: {o.error}")
            continue
        log = (o.out / ".log").read_text(encoding="utf-8") if (o.out / ".log").exists() else o.log
        if "could not be drawn" in log:
            line = next(x for x in log.splitlines() if "could not be drawn" in x)
            out.append(f"gallery: {o.job.name.split(':', 1)[1]}: {line.strip()}")
        if not list(o.out.glob("*.png")):
            out.append(f"gallery: {o.job.name.split(':', 1)[1]} drew no picture in {o.out}")
        out += [f"gallery: {o.job.name.split(':', 1)[1]}: {p}" for p in small_text(o.out)]
    return out


def small_text(folder: Path) -> list[str]:
    """Each picture of ``folder`` whose smallest text is shown below 9 pt on the gallery's page,
    where every picture is shown at its natural size or shrunk to the text column
    (``optsched.plot.style``), or that records no text size (not written by
    ``optsched.plot.save_figure``, so not checkable)."""
    from optsched.plot.files import png_text_size
    from optsched.plot.style import MIN_SHOWN_PT, PAGE_WIDTH_PX, shown_scale

    out = []
    for png in sorted(folder.glob("*.png"), key=_natural):
        size, dpi, width = png_text_size(png)
        if size is None:
            out.append(f"{png.name} records no text size: write it with optsched.plot.save_figure")
            continue
        shown = size * shown_scale(width / dpi, dpi=dpi, column_px=PAGE_WIDTH_PX)
        if shown < MIN_SHOWN_PT:
            out.append(
                f"{png.name}: its smallest text ({size:g} pt, {width} px wide) is shown at {shown:.1f} pt "
                f"in the page's {PAGE_WIDTH_PX}-px column: draw it narrower or its text larger "
                f"(at least {MIN_SHOWN_PT:g} pt as shown)"
            )
    return out


def site_files(outcomes: list[Outcome]) -> dict[str, Path]:
    """``gallery/...`` uri -> the file the command wrote, for every picture and table."""
    files = {}
    for o in outcomes:
        if o.out is None or not o.job.name.startswith("gallery:"):
            continue
        folder = "gallery/" + "/".join(o.job.name.split(":")[1:])
        for p in sorted(o.out.iterdir()):
            if p.suffix in (".png", ".svg", ".csv", ".json"):
                files[f"{folder}/{p.name}"] = p
    return files


# -- the page -------------------------------------------------------------------------------------


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _draws_paper_numbers(name: str, stem: str, rows: list[dict[str, str]]) -> bool:
    """Whether the figure of ``stem`` draws the paper's numbers: a panel names a column of them
    (``optsched.experiments.figures``) and the table has a number there."""
    from optsched.experiments.figures import figure_spec

    spec = figure_spec(name, stem)
    plots = spec if isinstance(spec, tuple) else (spec,) if spec is not None else ()
    cols = set()
    for plot in plots:
        paper = plot.paper
        cols.update((paper,) if isinstance(paper, str) else paper or ())
    return any(_is_number(r.get(c) or "") for c in cols for r in rows)


def _paper_note(name: str, folder: Path, stem: str) -> list[str]:
    """What the paper says about one figure, and whether this run reproduced it, from the tables
    the reproduction wrote (nothing invented: a figure without such columns gets no note)."""
    rows = _read_csv(folder / f"{stem}.csv")
    cols = rows[0].keys() if rows else []
    lines = []
    said = []
    for col in ("claim", "paper"):
        if col in cols:
            for r in rows:
                v = (r.get(col) or "").strip()
                if v and not _is_number(v) and v not in said:
                    said.append(v)
    claims = folder / "claims.csv"
    if not said and claims.exists():
        for r in _read_csv(claims):
            key = r.get("figure") or r.get("table") or ""
            if key and key == stem and r.get("paper"):
                said.append(r["paper"].strip())
    if said:
        lines.append("**The paper:** " + "; ".join(_escape(s) for s in said[:3]) + ".")
    if _draws_paper_numbers(name, stem, rows):
        lines.append("The paper's numbers are the hollow markers.")
    if "reproduced" in cols:
        votes = {(r.get("reproduced") or "").strip() for r in rows} - {""}
        if votes == {"True"}:
            lines.append("**This quick run:** reproduced.")
        elif votes:
            lines.append("**This quick run:** not reproduced in every row.")
    return lines


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def markdown(outcomes: dict[str, Outcome], descriptions: dict[str, str]) -> str:
    """The gallery page; ``descriptions`` gives each reproduction's one-line description."""
    parts = [
        "# Gallery\n",
        "The figures optsched's commands draw, each under the command that drew it. They were drawn "
        "when this site was built, by the commands shown, on small instances (a reproduction's "
        "`--quick` form: fewer seeds and smaller sizes than the paper's), so they show what the "
        "code of this version does. Each picture is also written as SVG, and its table as CSV, "
        "by the same command with `--out DIR`.\n",
    ]
    o = outcomes.get("gallery:compare")
    if o is not None and o.out is not None:
        parts.append("## Which policy, on my trace?\n")
        parts.append(
            "Every online policy of the papers and the baselines on the same 300 jobs of the Alibaba "
            "OpenB sample, on a cluster sized for an offered load of 0.9, each beside a lower bound on "
            "the mean JCT that no policy can beat ([how to read it](compare.md)).\n"
        )
        parts.append(f"```bash\noptsched compare {' '.join(COMPARE)} --out cmp/\n```\n")
        for stem, caption in COMPARE_FIGURES.items():
            if (o.out / f"{stem}.png").exists():
                parts.append(_figure(o.out, "gallery/compare", stem, caption) + f"\n\n{caption}\n")
        parts.append("The table behind them: [compare.csv](gallery/compare/compare.csv).\n")
    o = outcomes.get("gallery:gantt")
    if o is not None and o.out is not None and (o.out / "schedule.png").exists():
        parts.append("## A schedule, solved exactly and checked\n")
        parts.append(
            f"`{GANTT_INSTANCE}`, 20 rigid jobs on 4 servers of 4 GPUs, solved to a proven optimum, "
            "then re-checked by the independent verifier, which draws the schedule: one row per GPU, "
            "one bar per job ([the model](formulations/rigid.md)).\n"
        )
        parts.append(
            f"```bash\noptsched solve {GANTT_INSTANCE} --out run1/\n"
            f"optsched verify {GANTT_INSTANCE} run1/schedule.json --plot\n```\n"
        )
        parts.append(_figure(o.out, "gallery/gantt", "schedule", "Gantt chart of the optimal schedule") + "\n")
    repro = sorted(k for k in outcomes if k.startswith("gallery:reproduce:"))
    if repro:
        parts.append("## The papers' experiments, reproduced\n")
        parts.append(
            "Each reproduction runs a paper's experiment and writes our numbers beside the paper's; "
            "a table that stands for one of the paper's figures or tables gets its picture. Under each "
            "picture, what the paper states, and whether this quick run reproduced it: a quick run is "
            'smaller than the paper\'s, so "not reproduced" here is no finding; what a full run '
            "(`optsched reproduce NAME` without `--quick`) found is on each paper's page "
            "([Papers](papers/index.md)).\n"
        )
    for key in repro:
        o = outcomes[key]
        if o.out is None:
            continue
        name = key.split(":", 2)[2]
        parts.append(f"### `{name}`\n")
        if descriptions.get(name):
            parts.append(_escape(_paper_names(descriptions[name])) + "\n")
        parts.append(f"```bash\noptsched reproduce {name} --quick --out {name}/\n```\n")
        # one figure a row, as wide as the text (two a row would halve their labels), each with
        # its note and table
        for png in sorted(o.out.glob("*.png"), key=_natural):
            stem = png.stem
            note = _paper_note(name, o.out, stem) if (o.out / f"{stem}.csv").exists() else []
            table = f"Table: [{stem}.csv](gallery/reproduce/{name}/{stem}.csv)."
            figure = _figure(o.out, f"gallery/reproduce/{name}", stem, f"{name}: {stem}")
            parts.append(f"{figure}\n\n{' '.join([*note, table])}\n")
    o = outcomes.get("gallery:scaling")
    if o is not None and o.out is not None and (o.out / "sim-scaling.png").exists():
        parts.append("## How the simulator scales\n")
        parts.append(
            "SRTF replayed on 750 servers of 8 GPUs at load 1.0, from 10,000 jobs to the 3.36 million of "
            "a Helios-sized trace, on the Python engine and the compiled kernel; redrawn from the stored "
            "benchmark results ([Simulator: performance](simulator.md#performance)).\n"
        )
        parts.append("```bash\npython -m benchmarks.bench_sim --plot\n```\n")
        parts.append("![simulation time against jobs, both engines](gallery/scaling/sim-scaling.png)\n")
    return "\n".join(p for p in parts if p)


def _figure(folder: Path, uri: str, stem: str, alt: str) -> str:
    """The PNG, linked to its SVG (sharp at any zoom) when the command wrote one."""
    img = f"![{alt}]({uri}/{stem}.png)"
    return f"[{img}]({uri}/{stem}.svg)" if (folder / f"{stem}.svg").exists() else img


#: The papers by name where a reproduction's description numbers them ("Fig. 6-9 of paper 000").
PAPER_NUMBERS = {
    "000": "A-SRPT",
    "001": "the elastic-jobs paper",
    "002": "the RAR paper",
    "003": "the sojourn paper",
    "004": "Lazer",
}


def _paper_names(text: str) -> str:
    return re.sub(r"\bpaper (\d{3})\b", lambda m: PAPER_NUMBERS.get(m.group(1), m.group(0)), text)


def _natural(p: Path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.stem)]
