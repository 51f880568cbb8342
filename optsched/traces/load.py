"""The offered load of a workload on a cluster, and the two ways a command reaches an asked load:
size the cluster for a trace, scale the arrivals of a synthetic workload
(formulations/rigid.md#load).

Tested in ``tests/experiments/test_compare.py`` and ``tests/traces/test_workload.py``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optsched.core import Cluster
from optsched.exceptions import InvalidInstanceError, InvalidOptionError

__all__ = [
    "DEFAULT_MAX_DURATION",
    "LOAD_CAP",
    "offered_load",
    "replay_window",
    "size_cluster",
    "calibrate_load",
    "check_load",
    "work_column",
]

DEFAULT_MAX_DURATION = 86_400.0
"""The cap (s, one day) on the durations of synthetic workloads when no ``max_duration``
(``--max-duration``) is given: the longest job stays short against the window, so the offered load
is spread over it (formulations/rigid.md#load)."""
LOAD_CAP = 5.0
"""The largest offered load (exclusive) that :func:`size_cluster`, :func:`calibrate_load` and
``--load`` accept: a load must be in (0, LOAD_CAP)."""


def check_load(load: Any) -> float:
    """``load`` as a float in (0, :data:`LOAD_CAP`), else :class:`InvalidOptionError`."""
    try:
        v = float(load)
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(load, bool) or not (0 < v < LOAD_CAP):
        raise InvalidOptionError(
            f"The load must be a number in (0, {LOAD_CAP:g}) (offered GPU-seconds / available GPU-seconds); "
            f"got {load!r}."
        )
    return v


def work_column(table: Any) -> str:
    """The column holding each job's processing time: ``duration`` (or ``work``)."""
    cols = list(getattr(table, "columns", table))
    for c in ("duration", "work"):
        if c in cols:
            return c
    raise InvalidInstanceError(f"The job table has no 'duration' (or 'work') column (s); columns: {cols}.")


def replay_window(table: Any) -> tuple[float, float]:
    """(first arrival, last r_i + p_i): the window in which the jobs run if none ever waits.

    >>> import pandas as pd
    >>> replay_window(pd.DataFrame({"arrival": [0.0, 5.0], "duration": [10.0, 1.0], "gpus": [1, 1]}))
    (0.0, 10.0)
    """
    r = np.asarray(table["arrival"], dtype=float)
    p = np.asarray(table[work_column(table)], dtype=float)
    return float(r.min()), float((r + p).max())


def offered_load(table: Any, total_gpus: int) -> float:
    """sum_i g_i p_i / (G x the replay window): the offered load of ``table`` on G GPUs.

    >>> import pandas as pd
    >>> offered_load(pd.DataFrame({"arrival": [0.0, 0.0], "duration": [10.0, 10.0], "gpus": [1, 1]}), 4)
    0.5
    """
    a, b = replay_window(table)
    g = np.asarray(table["gpus"], dtype=float)
    p = np.asarray(table[work_column(table)], dtype=float)
    return float((g * p).sum()) / (total_gpus * (b - a)) if b > a else math.inf


def size_cluster(table: Any, load: float, gpus_per_server: int) -> Cluster:
    """Identical servers of ``gpus_per_server`` GPUs, as many as bring the offered load over the
    replay window closest to ``load`` (ties: more servers), at least enough for the largest job.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 0.0], "duration": [100.0, 100.0], "gpus": [4, 4]})
    >>> size_cluster(t, 0.5, 4).n_servers
    4
    """
    load = check_load(load)
    if isinstance(gpus_per_server, bool) or not isinstance(gpus_per_server, (int, np.integer)) or gpus_per_server < 1:
        raise InvalidOptionError(f"--gpus-per-server must be an integer >= 1; got {gpus_per_server!r}.")
    a, b = replay_window(table)
    g = np.asarray(table["gpus"], dtype=float)
    p = np.asarray(table[work_column(table)], dtype=float)
    need = float((g * p).sum()) / (load * (b - a)) if b > a else float(g.max())
    exact = need / gpus_per_server
    lo, hi = max(1, math.floor(exact)), max(1, math.ceil(exact))
    # the load is need * load / (n G_s): compare the two candidates by the load they give
    n = hi if abs(exact / hi - 1) <= abs(exact / lo - 1) else lo
    n = max(n, math.ceil(float(g.max()) / gpus_per_server))
    return Cluster.homogeneous(int(n), int(gpus_per_server))


def calibrate_load(table: Any, load: float, total_gpus: int):
    """A copy of ``table`` with its arrivals scaled (one factor) so that the offered load over the
    window in which the jobs run, [0, max_i (r_i + p_i)], is ``load`` on ``total_gpus`` GPUs.

    Raises
    ------
    InvalidOptionError
        The load cannot be reached: the longest job alone is longer than the window the load allows.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 1.0, 2.0], "duration": [10.0, 10.0, 10.0], "gpus": [1, 1, 1]})
    >>> round(offered_load(calibrate_load(t, 0.5, 2), 2), 9)
    0.5
    """
    load = check_load(load)
    r = np.asarray(table["arrival"], dtype=float)
    r = r - r.min()
    p = np.asarray(table[work_column(table)], dtype=float)
    g = np.asarray(table["gpus"], dtype=float)
    target = float((g * p).sum()) / (load * total_gpus)  # the window that gives the load
    if target < p.max() or r.max() <= 0:
        raise InvalidOptionError(
            f"At load {load:g} on {total_gpus} GPUs the {len(p)} jobs fill a window of {target:,.0f} s, shorter "
            f"than the longest job ({p.max():,.0f} s): no arrival process reaches that load. Use more jobs "
            f"(--jobs), a shorter --max-duration, a lower --load or fewer GPUs."
        )
    lo, hi = 0.0, target / r.max()
    for _ in range(200):  # W(s) = max_i (s r_i + p_i) is continuous and increasing: bisection
        mid = (lo + hi) / 2
        if float((mid * r + p).max()) < target:
            lo = mid
        else:
            hi = mid
    out = table.copy()
    out["arrival"] = hi * r
    return out
