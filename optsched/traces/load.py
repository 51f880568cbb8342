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


#: The server sizes :func:`sizing_hint` may suggest (GPUs per server, as servers are built).
SERVER_SIZES = (1, 2, 4, 8, 16)


def sizing_hint(table: Any, load: float, gpus_per_server: int) -> str:
    """What to ask instead when whole servers of ``gpus_per_server`` GPUs miss ``load`` by more
    than 5 %: the loads the two nearest server counts reach (``--servers N``, or that number as
    ``--load``), and a common server size (:data:`SERVER_SIZES`) no smaller than the largest job
    that comes nearer. A size below the asked one is named with the reason (the largest job's
    GPUs); servers smaller than the largest job are never suggested, since its GPUs would span
    servers. Empty when :func:`size_cluster` reaches the load within 5 %; a note when the asked
    servers are smaller than the largest job.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 0.0], "duration": [100.0, 100.0], "gpus": [8, 8]})
    >>> sizing_hint(t, 1.0, 8)
    ''
    >>> print(sizing_hint(t, 0.9, 8))
    --servers 2 reaches 1 and --servers 3 reaches 0.667, as --load 1 and --load 0.667 do
    """
    gmax = int(np.max(np.asarray(table["gpus"])))
    out = []
    if gmax > gpus_per_server:
        out.append(f"the largest job needs {gmax} GPUs, more than a server's {gpus_per_server}: it spans servers")
    n = size_cluster(table, load, gpus_per_server).n_servers
    rho = offered_load(table, n * gpus_per_server)
    if abs(rho / load - 1) <= 0.05:
        return "; ".join(out)
    # the other whole number of servers on the far side of the asked load
    other = n + 1 if rho > load else n - 1
    if other >= max(1, math.ceil(gmax / gpus_per_server)):
        lo, hi = sorted((n, other))
        r_lo, r_hi = (offered_load(table, k * gpus_per_server) for k in (lo, hi))
        out.append(
            f"--servers {lo} reaches {r_lo:.3g} and --servers {hi} reaches {r_hi:.3g}, as --load {r_lo:.3g} and "
            f"--load {r_hi:.3g} do"
        )
    sizes = [g for g in SERVER_SIZES if g >= gmax and g != gpus_per_server]

    def miss(g: int) -> float:
        return abs(offered_load(table, size_cluster(table, load, g).total_gpus) / load - 1)

    best = min(sizes, key=lambda g: (miss(g), -g), default=None)
    if best is not None and miss(best) < abs(rho / load - 1):
        c = size_cluster(table, load, best)
        why = f" (the largest job needs {gmax} GPU{'s' * (gmax != 1)})" if best < gpus_per_server else ""
        out.append(
            f"--gpus-per-server {best}{why} gives {offered_load(table, c.total_gpus):.3g} on {c.n_servers} servers"
        )
    return "; ".join(out)


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
