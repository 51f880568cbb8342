"""What a schedule occupies, as numbers (no matplotlib): the GPUs in use per server over time and
the cluster's shape to draw it on. Both pictures (:mod:`.gantt`, :mod:`.usage`) read it. Tested in
``tests/plot/test_plot.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


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


def cluster_shape(schedule: Any, cluster: Any) -> tuple[int, list[int]]:
    """(number of servers, GPUs per server): from ``cluster`` (a Cluster or an Instance) or, without
    one, the most GPUs held at once on each server (the capacity is unknown: nothing is over it)."""
    cluster = getattr(cluster, "cluster", cluster)
    if cluster is not None:
        return int(cluster.n_servers), [int(g) for g in cluster.gpus]
    _, use = usage_steps(schedule)
    if not len(use):
        return 1, [1]
    return use.shape[1], [max(1, int(x)) for x in use.max(axis=0)]
