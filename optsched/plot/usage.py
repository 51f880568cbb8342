"""GPUs in use per server over time."""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.plot.gantt import _cluster_of

__all__ = ["usage_steps", "plot_usage"]


def usage_steps(schedule: Any, n_servers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(times, use)``: ``use[i, m]`` GPUs busy on server ``m`` during ``[times[i], times[i+1])``;
    the last row is 0 (everything has ended).

    Examples
    --------
    >>> from optsched.core import Schedule
    >>> s = Schedule()
    >>> s.add("a", 0, 2, {0: 2}); s.add("b", 1, 3, {0: 1, 1: 1})
    >>> t, u = usage_steps(s)
    >>> t.tolist(), u.tolist()
    ([0.0, 1.0, 2.0, 3.0], [[2, 0], [3, 1], [1, 1], [0, 0]])
    """
    segs = [s for _, ss in schedule.items() for s in ss if s.end > s.start]
    n = n_servers if n_servers is not None else 1 + max((k for s in segs for k in s.placement), default=0)
    times = np.array(sorted({float(x) for s in segs for x in (s.start, s.end)}))
    use = np.zeros((len(times), n), dtype=np.int64)
    for s in segs:
        i, k = np.searchsorted(times, [s.start, s.end])
        for m, g in s.placement.items():
            if m < n:
                use[i:k, m] += int(g)
    return times, use


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

    n_srv, cap = _cluster_of(schedule, cluster)
    times, use = usage_steps(schedule, n_srv)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3))
    colours = plt.get_cmap("tab10")
    for m in range(n_srv):
        ax.step(times, use[:, m] if len(times) else [], where="post", label=f"server {m}", color=colours(m % 10))
    if cluster is not None:
        for m, g in enumerate(cap):
            ax.axhline(g, color=colours(m % 10), linestyle="--", linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("GPUs in use")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=8)
    if title:
        ax.set_title(title)
    ax.figure.tight_layout()
    return ax
