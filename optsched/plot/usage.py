"""GPUs in use per server over time.

Tested in ``tests/plot/test_plot.py``.
"""

from __future__ import annotations

from typing import Any

from optsched.plot.occupancy import cluster_shape, usage_steps
from optsched.plot.style import FIGURE_WIDTH, readable


def plot_usage(schedule: Any, cluster: Any = None, ax: Any = None, *, title: str | None = None) -> Any:
    """GPUs in use per server over time (one step line per server, capacities dashed); returns the axes.

    Parameters
    ----------
    schedule : Schedule
    cluster : Cluster or Instance, optional
        Number of servers and their capacities (dashed lines); without it, inferred.
    ax : matplotlib Axes, optional
    title : str, optional

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from optsched.core import Schedule
    >>> s = Schedule()
    >>> s.add("a", 0, 2, {0: 2}); s.add("b", 1, 3, {0: 1, 1: 1})
    >>> ax = plot_usage(s)
    >>> [line.get_label() for line in ax.get_lines()][:2]
    ['server 0', 'server 1']
    """
    import matplotlib.pyplot as plt

    n_srv, cap = cluster_shape(schedule, cluster)
    times, use = usage_steps(schedule, n_srv)
    if ax is None:
        _, ax = plt.subplots(figsize=(FIGURE_WIDTH, 3))
    colours = plt.get_cmap("tab10")
    for m in range(n_srv):
        ax.step(times, use[:, m] if len(times) else [], where="post", label=f"server {m}", color=colours(m % 10))
    if cluster is not None:
        for m, g in enumerate(cap):
            ax.axhline(g, color=colours(m % 10), linestyle="--", linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("GPUs in use")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right")
    if title:
        ax.set_title(title)
    readable(ax)
    ax.figure.tight_layout()
    return ax
