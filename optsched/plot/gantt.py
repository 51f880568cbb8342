"""Gantt chart of a schedule: one band per server, one row per GPU.

Tested in ``tests/plot/test_plot.py``.
"""

from __future__ import annotations

from typing import Any

from optsched.plot.occupancy import cluster_shape
from optsched.plot.style import FIGURE_WIDTH, TEXT_SIZE, readable


def plot_schedule(schedule: Any, cluster: Any = None, ax: Any = None, *, title: str | None = None) -> Any:
    """Gantt chart of ``schedule``: one band per server, one row per GPU; returns the axes.

    Parameters
    ----------
    schedule : Schedule
        Any :class:`optsched.core.Schedule` (rigid, asrpt, ...): segments with placements.
    cluster : Cluster or Instance, optional
        Gives the number of GPUs per server (rows); without it, the most GPUs held at once on
        each server (then no segment can be over capacity).
    ax : matplotlib Axes, optional
        Drawn into; a new figure otherwise.
    title : str, optional

    Notes
    -----
    Each segment takes the GPU rows given by its ``gpu_ids`` if the schedule has them, else the
    lowest rows free at its start (the GPUs of a server are interchangeable). A segment that
    finds no free row (an over-capacity schedule) is drawn above its band with a red edge, so a
    wrong schedule is visible, not hidden. A job keeps its colour (colour by sorted job id).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from optsched.core import Schedule
    >>> s = Schedule()
    >>> s.add("a", 0, 2, {0: 2}); s.add("b", 1, 3, {0: 1, 1: 1})
    >>> ax = plot_schedule(s)
    >>> len(ax.collections)  # one bar per (segment, GPU row)
    4
    """
    import matplotlib.pyplot as plt

    n_srv, cap = cluster_shape(schedule, cluster)
    jobs = sorted((j for j, _ in schedule.items()), key=str)
    if ax is None:
        _, ax = plt.subplots(figsize=(FIGURE_WIDTH, 1.2 + 0.9 * n_srv))
    cmap = plt.get_cmap("tab10" if len(jobs) <= 10 else "tab20")
    colour = {j: cmap(i % cmap.N) for i, j in enumerate(jobs)}
    busy: list[list[float]] = [[-float("inf")] * cap[m] for m in range(n_srv)]
    segs_all = sorted(
        ((s.start, s.end, j, s) for j, segs in schedule.items() for s in segs), key=lambda x: (x[0], x[1], str(x[2]))
    )
    for a, b, j, s in segs_all:
        for m, g in s.placement.items():
            if m >= n_srv or g <= 0:
                continue
            ids = getattr(s, "gpu_ids", None)
            if ids is not None and m in ids:
                rows = [r for r in ids[m] if r < cap[m]]
            else:
                rows = [r for r in range(cap[m]) if busy[m][r] <= a + 1e-9][:g]
            over = len(rows) < g
            for r in rows:
                busy[m][r] = b
            h = 0.8 / max(cap[m], 1)
            ys = [m + 0.1 + r * h for r in rows] or [m + 0.9]
            for y in ys:
                ax.broken_barh(
                    [(a, b - a)],
                    (y, h),
                    color=colour[j],
                    edgecolor="red" if over else "black",
                    linewidth=1.5 if over else 0.5,
                )
            ax.text(a + (b - a) / 2, (min(ys) + max(ys) + h) / 2, str(j), ha="center", va="center", fontsize=TEXT_SIZE)
    ax.set_yticks([i + 0.5 for i in range(n_srv)])
    ax.set_yticklabels([f"server {i}" for i in range(n_srv)])
    ax.set_xlabel("time (s)")
    ax.set_ylim(0, n_srv + 0.05)
    for i in range(1, n_srv):
        ax.axhline(i, color="grey", linewidth=0.5)
    if title:
        ax.set_title(title)
    readable(ax)
    ax.figure.tight_layout()
    return ax
