"""Figures of the paper reproductions, drawn from their tables.

``optsched reproduce NAME --out DIR`` writes, beside each table that stands for one of the
paper's figures or tables, the same name as a picture: ``fig6.csv`` -> ``fig6.png`` and
``fig6.svg``, ``sojourn_IV.csv`` -> ``sojourn_IV.png``, ... as soon as that table is done.
Tables of raw runs, claims and cells get none (:data:`FIGURES` lists what is drawn).

Each figure is drawn from the table alone (what is in the CSV beside it), with matplotlib's
object API (``matplotlib.figure.Figure``: no pyplot, no global state, any backend), so it can
be redrawn from the CSV later. Where the table has the paper's numbers they are drawn as
hollow markers beside ours.

>>> import pandas as pd
>>> df = pd.DataFrame({"lambda": [1, 2, 4], "makespan_mean": [484.0, 417.0, 380.0]})
>>> fig = figure_for("rarddls-sec7", "fig7", df)
>>> fig.axes[0].get_title()
'Fig. 7: makespan vs lambda'
>>> figure_for("rarddls-sec7", "claims", df) is None
True

Tested in ``tests/experiments/test_reproduce.py``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optsched.exceptions import OptschedWarning
from optsched.plot.files import save_figure
from optsched.plot.style import FIGURE_WIDTH, PANELS_WIDTH, TEXT_SIZE, readable


@dataclass(frozen=True)
class Plot:
    """One panel (or one per value of ``facet``) of a figure drawn from a table.

    ``y`` is one column (one series per value of ``group``, or a single series) or several
    columns (one series each). ``err`` is a column of standard deviations, or ``(lo, hi)``
    columns of a confidence interval; a column ``"<y> sd"`` beside ``y`` is used when ``err`` is
    not given. ``paper`` names the column(s) with the paper's numbers, aligned with ``y`` (or
    one column when there is one ``y``). ``where`` keeps the rows whose columns have these
    values. ``kind`` is ``"lines"`` (numeric x) or ``"bars"`` (categories).
    """

    x: str
    y: str | tuple[str, ...]
    kind: str = "lines"
    group: str | None = None
    err: str | tuple[str, str] | None = None
    paper: str | tuple[str, ...] | None = None
    where: Mapping[str, Any] | None = None
    facet: str | None = None
    title: str = ""
    xlabel: str | None = None
    ylabel: str | None = None
    logx: bool = False
    logy: bool = False


def _p(x: str, y: Any, title: str, **kw: Any) -> Plot:
    return Plot(x=x, y=y, title=title, **kw)


_ASRPT = ("A-SRPT", "A-SRPT-Perfect", "SPJF", "SPWF", "WCS-Duration", "WCS-Workload", "WCS-SubTime")
_ASRPT9 = ("A-SRPT", "A-SRPT-Median", "A-SRPT-Mean", "A-SRPT-Perfect", "SPJF", "SPWF", "WCS-Duration", "WCS-Workload")
_JCT_H = "total JCT (h)"
_SOJ = "mean sojourn time of successful jobs"

#: reproduction name -> table name (or a prefix: ``fig6`` draws ``fig6_load-0.9``) -> panels.
#: ``None``: the table has no figure (it would otherwise match a shorter key as a prefix).
FIGURES: dict[str, dict[str, Plot | tuple[Plot, ...] | None]] = {
    "asrpt-fig6-9": {
        "fig6": _p("jobs", _ASRPT, "Fig. 6: total JCT vs jobs", ylabel=_JCT_H),
        "fig7": _p("single-GPU jobs", _ASRPT, "Fig. 7: single-GPU share", kind="bars", ylabel=_JCT_H),
        "fig8": _p("NIC", _ASRPT, "Fig. 8: NIC bandwidth", kind="bars", ylabel=_JCT_H, logy=True),
        "fig9": _p("predictor", _ASRPT, "Fig. 9: iteration predictors", kind="bars", ylabel=_JCT_H),
    },
    "asrpt-paper": {
        "fig6": _p("n_jobs", _ASRPT, "Fig. 6: total JCT vs jobs", ylabel=_JCT_H),
        "fig7": _p("single_gpu", _ASRPT, "Fig. 7: single-GPU share", ylabel=_JCT_H, xlabel="share of single-GPU jobs"),
        "fig8": _p("nic_gbps", _ASRPT, "Fig. 8: NIC bandwidth", ylabel=_JCT_H, xlabel="NIC (Gbit/s)", logx=True),
        "fig9": _p("n_jobs", _ASRPT9, "Fig. 9: iteration predictors", kind="bars", ylabel=_JCT_H),
    },
    "asrpt-table2": {
        "table2": (
            _p(
                "model",
                ("he_pitt_ms", "ilp_pitt_ms"),
                "Table II: PITT",
                kind="bars",
                paper=("paper_he_pitt_ms", "paper_ilp_pitt_ms"),
                ylabel="per-iteration training time (ms)",
            ),
            _p(
                "model",
                ("he_pct_ms", "ilp_pct_ms"),
                "Table II: placement computation time",
                kind="bars",
                paper=("paper_he_pct_ms", "paper_ilp_pct_ms"),
                ylabel="ms",
                logy=True,
            ),
        ),
        "table2_rows": None,  # one row per placement pattern: the data behind table2
    },
    "elastic-sec7": {
        "fig2": _p("jobs", "objective_mean", "Fig. 2: jobs (PS)", group="algorithm", err="objective_std", logy=True),
        "fig3": _p("servers", "objective_mean", "Fig. 3: servers (PS)", group="algorithm", logy=True),
        "fig4": _p("F", "objective_mean", "Fig. 4: F", err="objective_std", logx=True),
        "fig5": _p("jobs", "objective_mean", "Fig. 5: jobs (RAR)", group="algorithm", err="objective_std", logy=True),
        "fig6": _p("servers", "objective_mean", "Fig. 6: servers (RAR)", group="algorithm", logy=True),
        "fig7": _p("jobs", "cpu_s_mean", "Fig. 7: running time", group="architecture", ylabel="CPU s"),
        "fig8": _p("n_jobs", "weight_mean", "Fig. 8: A_maxweight vs Jain et al.", group="algorithm"),
        "fig9": _p("worker_types", "objective_mean", "Fig. 9: worker types", kind="bars", group="architecture"),
        "fig10": _p("workers_bin", "weighted_completion_mean", "Fig. 10: workers per job", kind="bars"),
        "fig11": _p("F", "weight_mean", "Fig. 11: F (max weight)", group="algorithm", logx=True),
        "fig12": _p("n_jobs", "weight_mean", "Fig. 12: servers H", group="H"),
    },
    "lazer": {
        "table2": (
            _p("policy", "jct_p95", "Table 2: p95 JCT", kind="bars", paper="paper_jct_p95", facet="trace"),
            _p("policy", "waiting_p95", "Table 2: p95 waiting", kind="bars", paper="paper_waiting_p95", facet="trace"),
        ),
        "fig3": _p("policy", "jct_over_sjf", "Fig. 3: JCT / SJF's", kind="bars", paper="paper_fig3"),
        "deferral": _p("policy", ("p50_jct", "p95_jct"), "Deferral ablation", kind="bars", ylabel="JCT (s)", logy=True),
        "testbed": _p(
            "policy", "jct_p50_over_lazer", "Testbed: p50 JCT / Lazer's", kind="bars", paper="paper_jct_p50_over_lazer"
        ),
        "fig8e": _p("method", ("best_f", "mean_f"), "Fig. 8e: search efficiency", kind="bars"),
        "base_sweep": _p("base", "p95_jct", "Load-time sweep", group="policy", xlabel="base load time (s)", ylabel="s"),
    },
    "rarddls-sec7": {
        "slowdown": _p("paper", ("alone_one_server", "four_spread"), "Sec. 1: contention slowdown", kind="bars"),
        "fig4": _p("algorithm", ("makespan_mean", "jct_mean"), "Fig. 4: makespan and mean JCT", kind="bars"),
        "fig5": _p("kappa", "makespan_mean", "Fig. 5: makespan vs kappa", err="makespan_std", logx=True),
        "fig6": _p("servers", "makespan_mean", "Fig. 6: makespan vs servers", group="algorithm"),
        "fig7": _p("lambda", "makespan_mean", "Fig. 7: makespan vs lambda", err="makespan_std"),
        "sensitivity50": _p("algorithm", ("makespan_mean", "jct_mean"), "50 % contention", kind="bars"),
    },
    "sojourn-tables": {
        **{
            f"sojourn_{t}": _p(
                "N",
                "mean",
                f"Table {t.replace('_', ' ')}",
                group="algorithm",
                err=("ci_lo", "ci_hi"),
                paper="paper",
                where={"algorithm": ("OPTIMAL", "RANK", "SERPT", "SR", "RANDOM")},
                ylabel=_SOJ,
            )
            for t in ("IV", "V", "VI", "VII", "VIII", "V-VI_U9")
        },
        **{
            f"sojourn_{t}": _p(
                "N",
                "ours",
                f"Table {t.replace('_', ' ')}",
                group="algorithm",
                err=("ci_lo", "ci_hi"),
                paper="paper",
                facet="stat",
                ylabel="competitive ratio (vs OPTIMAL)",
            )
            for t in ("IX", "X", "XI", "XII", "XIII", "X-XI_U9")
        },
        "sojourn_XIV": _p(
            "stages", ("OPTIMAL", "RANK"), "Table XIV: stages", paper=("OPTIMAL_paper", "RANK_paper"), ylabel=_SOJ
        ),
        "sojourn_rank_vs_n": _p(
            "N",
            "rank_ratio_mean",
            "RANK / OPTIMAL vs N",
            group="set",
            err=("ci_lo", "ci_hi"),
            ylabel="E[RANK] / E[OPTIMAL]",
        ),
        "sojourn_adaptive": _p("N", "static_over_adaptive", "best order vs optimal adaptive policy", group="stages"),
        "sojourn_online": _p(
            "servers",
            ("FIFO", "SERPT", "RANK", "SR"),
            "Tables XVI-XVIII: online, multi-server",
            facet="dataset",
            logy=True,
            ylabel=_SOJ,
        ),
    },
}


def figure_spec(reproduction: str, table: str) -> Plot | tuple[Plot, ...] | None:
    """The panels drawn for ``table`` of ``reproduction``: its exact name, else the longest key
    that is a prefix followed by ``_`` (``fig6`` for ``fig6_load-0.9``); None: no figure."""
    specs = FIGURES.get(reproduction, {})
    if table in specs:
        return specs[table]  # may be None: explicitly no figure
    keys = [k for k in specs if table.startswith(k + "_")]
    return specs[max(keys, key=len)] if keys else None


def figure_for(reproduction: str, table: str, df: Any):
    """The figure of ``table`` (a DataFrame) of ``reproduction``, or None if it has none."""
    spec = figure_spec(reproduction, table)
    if spec is None:
        return None
    return draw(df, spec)


def _panels(df: Any, spec: Plot | tuple[Plot, ...]) -> list[tuple[Plot, Any, str]]:
    out = []
    for plot in spec if isinstance(spec, tuple) else (spec,):
        d = df
        for col, val in (plot.where or {}).items():
            if col in d.columns:
                d = d[d[col].isin(val if isinstance(val, (tuple, list, set)) else [val])]
        if plot.facet and plot.facet in d.columns:
            for v in dict.fromkeys(d[plot.facet].tolist()):
                out.append((plot, d[d[plot.facet] == v], f"{plot.title} ({v})"))
        else:
            out.append((plot, d, plot.title))
    return out


def _numbers(values: Iterable[Any]) -> list[float]:
    out = []
    for v in values:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(math.nan)
    return out


def _series(plot: Plot, d: Any) -> list[dict[str, Any]]:
    """[{label, x, y, err, paper}] of one panel."""
    ys = (plot.y,) if isinstance(plot.y, str) else tuple(plot.y)
    ys = tuple(c for c in ys if c in d.columns)
    papers: tuple[str | None, ...]
    if plot.paper is None:
        papers = (None,) * len(ys)
    elif isinstance(plot.paper, str):
        papers = (plot.paper,) * len(ys)
    else:
        papers = tuple(plot.paper)[: len(ys)]
    parts = [(None, d)]
    if plot.group and plot.group in d.columns:
        parts = [(g, d[d[plot.group] == g]) for g in dict.fromkeys(d[plot.group].tolist())]
    out = []
    for g, part in parts:
        for ycol, pcol in zip(ys, papers, strict=False):
            y = _numbers(part[ycol])
            err = None
            if isinstance(plot.err, tuple) and all(c in part.columns for c in plot.err):
                lo, hi = _numbers(part[plot.err[0]]), _numbers(part[plot.err[1]])
                err = [
                    [max(a - b, 0.0) for a, b in zip(y, lo, strict=True)],
                    [max(b - a, 0.0) for a, b in zip(y, hi, strict=True)],
                ]
            else:
                sd = plot.err if isinstance(plot.err, str) else f"{ycol} sd"
                if sd in part.columns:
                    err = [0.0 if math.isnan(v) else v for v in _numbers(part[sd])]
            label = ycol if g is None else (str(g) if len(ys) == 1 else f"{g}: {ycol}")
            paper = _numbers(part[pcol]) if pcol and pcol in part.columns else None
            out.append({"label": label, "x": part[plot.x].tolist(), "y": y, "err": err, "paper": paper})
    return out


def draw(df: Any, spec: Plot | tuple[Plot, ...]):
    """A ``matplotlib.figure.Figure`` with one axes per panel of ``spec`` (see :class:`Plot`)."""
    from matplotlib.figure import Figure

    panels = _panels(df, spec)
    # at most two panels a row, the picture no wider than a page's column shows it without
    # shrinking its labels below 9 pt (optsched.plot.style)
    ncols = min(2, max(1, len(panels)))
    nrows = math.ceil(len(panels) / ncols) if panels else 1
    fig = Figure(figsize=(PANELS_WIDTH if ncols > 1 else FIGURE_WIDTH, 3.4 * nrows))
    legends = []
    for k, (plot, d, title) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        series = _series(plot, d)
        if plot.kind == "bars":
            cats = list(dict.fromkeys(x for s in series for x in s["x"]))
            width = 0.8 / max(1, len(series))
            for i, s in enumerate(series):
                pos = [cats.index(x) - 0.4 + width * (i + 0.5) for x in s["x"]]
                bars = ax.bar(pos, s["y"], width, yerr=s["err"], capsize=2, label=s["label"])
                if s["paper"] is not None:
                    ax.plot(pos, s["paper"], "D", mfc="none", color="black", ms=5, label=None if i else "paper")
                del bars
            ax.set_xticks(range(len(cats)), [str(c) for c in cats], rotation=20 if len(cats) > 3 else 0, ha="right")
        else:
            for s in series:
                x = _numbers(s["x"])
                line = ax.errorbar(x, s["y"], yerr=s["err"], marker="o", ms=4, capsize=3, label=s["label"])
                if s["paper"] is not None:
                    ax.plot(x, s["paper"], "s", mfc="none", color=line[0].get_color(), label=f"{s['label']} (paper)")
            if plot.logx and all(v > 0 for s in series for v in _numbers(s["x"]) if not math.isnan(v)):
                ax.set_xscale("log")
        values = [v for s in series for v in s["y"] if not math.isnan(v)]
        if plot.logy and values and min(values) > 0:
            ax.set_yscale("log")
        ax.set_title(title, fontsize=TEXT_SIZE)
        ax.set_xlabel(plot.xlabel or plot.x)
        ax.set_ylabel(plot.ylabel or (plot.y if isinstance(plot.y, str) else ""))
        if len(series) > 1 or any(s["paper"] is not None for s in series):
            legends.append(ax)
        ax.grid(alpha=0.3)
        readable(ax)
    _legends(fig, legends)
    return fig


def _legends(fig: Any, axes: list[Any]) -> None:
    """One legend under the panels when every panel names the same series, or one panel names
    more than four (it would cover the lines otherwise), else one legend per panel; then the
    layout, once (a layout engine would redo it for every file written)."""
    entries = [ax.get_legend_handles_labels() for ax in axes]
    same = len(axes) > 1 and all(labels == entries[0][1] for _, labels in entries)
    if same or (len(axes) == 1 and len(entries[0][1]) > 4):
        handles, labels = entries[0]
        ncol = min(3, len(labels))
        rows = math.ceil(len(labels) / ncol)
        extra = 0.3 * rows + 0.2  # inches of legend under the panels
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + extra)
        fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=TEXT_SIZE, frameon=False)
        fig.tight_layout(rect=(0, extra / (height + extra), 1, 1))
        return
    for ax in axes:
        ax.legend(fontsize=TEXT_SIZE)
    fig.tight_layout()


def write_table_figure(reproduction: str, name: str, df: Any, out_dir: str | Path) -> list[Path]:
    """Draw and write the figure of one finished table (nothing if it has none). A figure that
    cannot be drawn is a warning, never the loss of the run: the table is written already."""
    try:
        fig = figure_for(reproduction, name, df)
    except Exception as e:  # a table whose columns changed: say so, keep the run going
        warnings.warn(
            f"{reproduction}: the figure of table {name!r} could not be drawn ({e!r}).", OptschedWarning, stacklevel=2
        )
        return []
    if fig is None:
        return []
    return save_figure(fig, out_dir, name)
