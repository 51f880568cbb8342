"""The pictures of a comparison: JCT and queueing-delay CDFs, mean and P95 JCT per policy beside the
bound, GPU utilisation over time; :func:`save_figures` writes them as PNG and SVG.

Tested in ``tests/experiments/test_compare.py``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from optsched.plot.files import save_figure

#: The size of the pictures' labels, ticks and legends (points). Drawn 7 inches wide, a picture is
#: shown about 690 px wide on a 1,280-px page, so a 10-pt label shows at about 10 pt.
LABEL_SIZE = 10


def _label(name: str) -> str:
    return name


def _ran(table):
    """The rows that ran (neither skipped nor failed)."""
    keep = np.ones(len(table), bool)
    for col in ("skipped", "failed"):
        if col in table:
            keep &= table[col].isna().to_numpy()
    return table[keep]


def _colors(names):
    import matplotlib.pyplot as plt  # heavy: only when drawing

    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(names)}


def plot_jct_cdf(per_job: dict[str, Any], ax=None, *, log: bool = True, column: str = "jct"):
    """One CDF per policy of JCT (``column="jct"``) or queueing delay (``"queue_delay"``) of the
    finished jobs, on one axes.

    Examples
    --------
    >>> import pandas as pd
    >>> from optsched.core import Cluster
    >>> from optsched.experiments.compare import compare
    >>> jobs = pd.DataFrame({"arrival": [0.0, 0.0, 1.0, 2.0, 3.0], "gpus": [2, 1, 1, 2, 1],
    ...                      "duration": [50.0, 5.0, 10.0, 20.0, 5.0]})
    >>> table, per_job = compare(jobs, Cluster.homogeneous(1, 2), policies=["fifo", "srtf"], overheads="none",
    ...                          workers=1, progress=False)
    >>> ax = plot_jct_cdf(per_job)
    >>> sorted(t.get_text() for t in ax.get_legend().get_texts()), ax.get_xlabel()
    (['fifo', 'srtf'], 'job completion time (s)')
    >>> import matplotlib.pyplot as plt
    >>> plt.close(ax.figure)
    """
    import matplotlib.pyplot as plt  # heavy: only when drawing

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    col = _colors(per_job)
    for name, df in per_job.items():
        fin = df["status"].isin(["done", "failed"]) if "status" in df else np.ones(len(df), bool)
        if column == "jct" and "jct" not in df:
            v = (df["completion"] - df["arrival"])[fin]
        elif column == "queue_delay" and "queue_delay" not in df:
            v = (df["first_start"] - df["arrival"])[fin]
        else:
            v = df.loc[fin, column]
        v = np.sort(np.asarray(v, dtype=float))
        if len(v) == 0:
            continue
        if log:
            v = np.maximum(v, 1e-3)
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=_label(name), color=col[name])
    if log:
        ax.set_xscale("log")
    label = "job completion time (s)" if column == "jct" else "queueing delay (s, first start - arrival)"
    ax.set_xlabel(label + (" (0 drawn at 1e-3)" if log and column != "jct" else ""))
    ax.set_ylabel("fraction of jobs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=LABEL_SIZE, ncol=2)
    ax.figure.tight_layout()
    return ax


def plot_queue_delay_cdf(per_job: dict[str, Any], ax=None, *, log: bool = True):
    """CDF of the queueing delay (first start - arrival) per policy.

    Examples
    --------
    >>> import pandas as pd
    >>> from optsched.core import Cluster
    >>> from optsched.experiments.compare import compare
    >>> jobs = pd.DataFrame({"arrival": [0.0, 0.0, 1.0, 2.0, 3.0], "gpus": [2, 1, 1, 2, 1],
    ...                      "duration": [50.0, 5.0, 10.0, 20.0, 5.0]})
    >>> table, per_job = compare(jobs, Cluster.homogeneous(1, 2), policies=["fifo", "srtf"], overheads="none",
    ...                          workers=1, progress=False)
    >>> ax = plot_queue_delay_cdf(per_job)
    >>> sorted(t.get_text() for t in ax.get_legend().get_texts()), ax.get_xlabel().startswith("queueing delay")
    (['fifo', 'srtf'], True)
    >>> import matplotlib.pyplot as plt
    >>> plt.close(ax.figure)
    """
    return plot_jct_cdf(per_job, ax, log=log, column="queue_delay")


#: The height of one policy's row in the summary chart (inches): 23 points, room for a tick label
#: of :data:`LABEL_SIZE` points and its two bars, so the chart grows taller with the policies.
ROW_HEIGHT = 0.32


def plot_summary(table, ax=None):
    """Mean and P95 JCT per policy as horizontal bars, least mean JCT on top (with the seeds' 95%
    intervals when there are several), the lower bound on the mean JCT as a line. Drawn on a new
    figure, the chart is 7 inches wide and :data:`ROW_HEIGHT` taller per policy, so its labels keep
    :data:`LABEL_SIZE` points however many policies ran.

    Examples
    --------
    >>> import pandas as pd
    >>> from optsched.core import Cluster
    >>> from optsched.experiments.compare import compare
    >>> jobs = pd.DataFrame({"arrival": [0.0, 0.0, 1.0, 2.0, 3.0], "gpus": [2, 1, 1, 2, 1],
    ...                      "duration": [50.0, 5.0, 10.0, 20.0, 5.0]})
    >>> table, per_job = compare(jobs, Cluster.homogeneous(1, 2), policies=["fifo", "srtf"], overheads="none",
    ...                          workers=1, progress=False)
    >>> ax = plot_summary(table)
    >>> [t.get_text() for t in ax.get_yticklabels()]  # by mean JCT, from the top
    ['srtf', 'fifo']
    >>> any("lower bound" in t.get_text() for t in ax.get_legend().get_texts())
    True
    >>> import matplotlib.pyplot as plt
    >>> plt.close(ax.figure)
    """
    import matplotlib.pyplot as plt  # heavy: only when drawing

    ran = _ran(table)
    ran = ran.sort_values("mean_jct")
    if ax is None:
        # 7 inches wide whatever the number of rows (a wider picture is shown shrunk, its labels
        # too small to read); one row per policy, the legend above
        _, ax = plt.subplots(figsize=(7, 2.2 + ROW_HEIGHT * max(len(ran), 6)))
    y = np.arange(len(ran))
    for k, (m, off, c) in enumerate((("mean_jct", -0.2, "tab:blue"), ("p95_jct", 0.2, "tab:orange"))):
        v = ran[m].to_numpy(float)
        err = None
        if f"{m}_ci_lo" in ran:
            lo, hi = ran[f"{m}_ci_lo"].to_numpy(float), ran[f"{m}_ci_hi"].to_numpy(float)
            err = np.vstack([np.nan_to_num(v - lo), np.nan_to_num(hi - v)])
        ax.barh(y + off, v, 0.4, xerr=err, capsize=2, color=c, label=("mean JCT", "P95 JCT")[k])
    b = table.attrs.get("bound", {}).get("mean_jct")
    if b is not None:
        ax.axvline(b, color="k", ls="--", lw=1, label=f"lower bound on the mean ({b:,.0f} s)")
    ax.set_yticks(y)
    ax.set_yticklabels(ran["policy"], fontsize=LABEL_SIZE)
    ax.set_ylim(len(ran) - 0.5, -0.5)  # the least mean JCT on top
    ax.set_xscale("log")
    ax.set_xlabel("seconds")
    ax.tick_params(axis="x", labelsize=LABEL_SIZE)
    ax.grid(alpha=0.3, axis="x")
    # above the bars, right-aligned: the left is the names' room when the axes are given narrow
    ax.legend(fontsize=LABEL_SIZE, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.figure.tight_layout()
    return ax


def plot_utilization(table, ax=None, *, policies: Sequence[str] | None = None, bins: int = 200):
    """Fraction of GPUs held over time (seed 0), one line per policy, averaged over ``bins`` windows.

    Examples
    --------
    >>> import pandas as pd
    >>> from optsched.core import Cluster
    >>> from optsched.experiments.compare import compare
    >>> jobs = pd.DataFrame({"arrival": [0.0, 0.0, 1.0, 2.0, 3.0], "gpus": [2, 1, 1, 2, 1],
    ...                      "duration": [50.0, 5.0, 10.0, 20.0, 5.0]})
    >>> table, per_job = compare(jobs, Cluster.homogeneous(1, 2), policies=["fifo", "srtf"], overheads="none",
    ...                          workers=1, progress=False)
    >>> ax = plot_utilization(table, policies=["srtf"], bins=50)
    >>> [line.get_label() for line in ax.get_lines()], ax.get_ylabel()
    (['srtf'], 'fraction of GPUs held')
    >>> import matplotlib.pyplot as plt
    >>> plt.close(ax.figure)
    """
    import matplotlib.pyplot as plt  # heavy: only when drawing

    util = table.attrs.get("utilization", {})
    G = table.attrs.get("gpus", 1)
    names = list(policies) if policies is not None else list(util)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    col = _colors(list(util))
    ends = sorted(float(util[n][0][-1]) for n in names if len(util[n][0]))
    # up to three times the median policy's end: one policy that runs for ages does not squash the rest
    end = min(ends[-1], 3 * ends[len(ends) // 2]) if ends else 1.0
    edges = np.linspace(0.0, end, bins + 1)
    for name in names:
        t, lvl = util[name]
        if not len(t):
            continue
        tt = np.append(t, end)
        cum = np.concatenate([[0.0], np.cumsum(np.diff(tt) * lvl)])
        at = np.interp(edges, tt, cum, left=0.0)
        ax.plot(edges[:-1] / 3600.0, np.diff(at) / (G * np.diff(edges)), lw=0.8, label=_label(name), color=col[name])
    ax.set_xlabel("time (h)")
    ax.set_ylabel("fraction of GPUs held")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=LABEL_SIZE, ncol=2)
    ax.figure.tight_layout()
    return ax


def best_of_each_paper(table) -> list[str]:
    """The policy of least mean JCT of each paper (and of the baselines), then FIFO: the lines the
    CDF and utilisation pictures show (``jct_summary`` shows every row).

    Examples
    --------
    Rows that were skipped or failed are left out:

    >>> import pandas as pd
    >>> table = pd.DataFrame({
    ...     "policy": ["fifo", "srtf", "lazer", "lazer-zero", "sojourn-online-sr", "elastic-fifo"],
    ...     "paper": ["baseline", "baseline", "lazer", "lazer", "sojourn", "elastic"],
    ...     "mean_jct": [90.0, 40.0, 50.0, 45.0, 70.0, None],
    ...     "skipped": [None, None, None, None, None, "no slot"],
    ... })
    >>> best_of_each_paper(table)
    ['srtf', 'lazer-zero', 'sojourn-online-sr', 'fifo']
    """
    ran = _ran(table)
    ran = ran.sort_values("mean_jct")
    out = list(dict.fromkeys(ran.groupby("paper", sort=False)["policy"].first()))
    if "fifo" in set(ran["policy"]) and "fifo" not in out:
        out.append("fifo")
    return out


def save_figures(
    table, per_job, out, *, formats: Sequence[str] = ("png", "svg"), policies: Sequence[str] | None = None
) -> list:
    """``jct_summary`` (every policy), ``jct_cdf``, ``queue_delay_cdf`` and ``utilization`` (the
    ``policies`` given, default :func:`best_of_each_paper`) as PNG and SVG in ``out``.

    Examples
    --------
    >>> import pandas as pd
    >>> from optsched.core import Cluster
    >>> from optsched.experiments.compare import compare
    >>> jobs = pd.DataFrame({"arrival": [0.0, 0.0, 1.0, 2.0, 3.0], "gpus": [2, 1, 1, 2, 1],
    ...                      "duration": [50.0, 5.0, 10.0, 20.0, 5.0]})
    >>> table, per_job = compare(jobs, Cluster.homogeneous(1, 2), policies=["fifo", "srtf"], overheads="none",
    ...                          workers=1, progress=False)
    >>> import shutil, tempfile
    >>> out = tempfile.mkdtemp()
    >>> paths = save_figures(table, per_job, out, formats=("png",))  # default: PNG and SVG
    >>> sorted(p.name for p in paths)
    ['jct_cdf.png', 'jct_summary.png', 'queue_delay_cdf.png', 'utilization.png']
    >>> shutil.rmtree(out)
    """

    import matplotlib  # heavy: only when drawing

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # heavy: only when drawing

    out = Path(out)
    show = [p for p in (policies or best_of_each_paper(table)) if p in per_job]
    sub = {k: per_job[k] for k in show}
    paths = []
    for fname, draw in (
        ("jct_cdf", lambda: plot_jct_cdf(sub)),
        ("jct_summary", lambda: plot_summary(table)),
        ("queue_delay_cdf", lambda: plot_queue_delay_cdf(sub)),
        ("utilization", lambda: plot_utilization(table, policies=show)),
    ):
        ax = draw()
        paths += save_figure(ax.figure, out, fname, formats=formats)  # each file whole or absent
        plt.close(ax.figure)
    return paths
