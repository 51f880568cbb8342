"""The per-job table rebuilt from a run's event log alone (:func:`replay_log`): an account of the
run that does not read the engine's counters.

Tested in ``tests/sim/test_invariants.py`` and ``tests/sim/test_futile.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from optsched.sim.model.state import DONE, FAILED


def replay_log(log: Iterable[tuple]) -> Any:
    """Rebuild the per-job table from an event log alone (independent of the engine's counters).

    Returns a DataFrame with ``job_id, arrival, gpus, status, first_start, completion,
    loading_time, training_time, saving_time, n_preemptions, work_done, futile_time, n_futile``
    (work done = integral of the logged rates over training intervals; futile time by Lazer's
    eq. (2): a load cut by a preemption, or a whole load followed by no training before one), in
    order of arrival.

    Examples
    --------
    >>> log = [(0.0, "arrival", 7, None), (0.0, "start", 7, {0: 1}), (0.0, "train", 7, 0.5),
    ...        (4.0, "complete", 7, 1)]
    >>> r = replay_log(log).iloc[0]
    >>> float(r["completion"]), float(r["training_time"]), float(r["work_done"])
    (4.0, 4.0, 2.0)
    """
    import pandas as pd

    rows: dict[Any, dict[str, Any]] = {}
    state: dict[Any, tuple[str, float, float]] = {}  # job -> (phase, since, rate)
    last_load: dict[Any, float] = {}  # job -> length of the load that ended last (0: none)

    def close(jid, t):
        ph, since, rate = state.get(jid, ("waiting", t, 0.0))
        r = rows[jid]
        if ph == "loading":
            r["loading_time"] += t - since
        elif ph == "training":
            r["training_time"] += t - since
            r["work_done"] += rate * (t - since)
        elif ph == "saving":
            r["saving_time"] += t - since
        return ph

    for t, kind, jid, detail in log:
        if kind == "timer":
            continue
        if kind == "arrival":
            rows[jid] = {
                "job_id": jid,
                "arrival": t,
                "gpus": np.nan,
                "status": "waiting",
                "first_start": np.nan,
                "completion": np.nan,
                "loading_time": 0.0,
                "training_time": 0.0,
                "saving_time": 0.0,
                "n_preemptions": 0,
                "work_done": 0.0,
                "futile_time": 0.0,
                "n_futile": 0,
            }
            state[jid] = ("waiting", t, 0.0)
            continue
        r = rows[jid]
        if kind == "start":
            close(jid, t)
            r["gpus"] = sum(detail.values())
            if np.isnan(r["first_start"]):
                r["first_start"] = t
            state[jid] = ("loading", t, 0.0)
        elif kind == "train":
            ph, since, _ = state[jid]
            last_load[jid] = t - since if ph == "loading" else 0.0
            close(jid, t)
            state[jid] = ("training", t, float(detail))
        elif kind == "rate":
            close(jid, t)
            state[jid] = ("training", t, float(detail))
        elif kind in ("preempt", "migrate"):
            ph, since, _ = state[jid]
            r["n_preemptions"] += 1
            if detail == "finish-load":  # the load runs to its end, then the GPUs are freed: all futile
                state[jid] = ("finishing-load", since, 0.0)
                continue
            if ph == "loading":
                r["futile_time"] += t - since
                r["n_futile"] += 1
            elif ph == "training" and since == t and last_load.get(jid, 0.0) > 0:
                r["futile_time"] += last_load[jid]
                r["n_futile"] += 1
            close(jid, t)
            state[jid] = ("saving", t, 0.0)
        elif kind == "saved":
            ph, since, _ = state[jid]
            if ph == "finishing-load":
                r["loading_time"] += t - since
                r["futile_time"] += t - since
                r["n_futile"] += 1
            else:
                close(jid, t)
            state[jid] = ("waiting", t, 0.0)
        elif kind == "checkpoint":
            ph, since, rate = state[jid]
            close(jid, t)
            state[jid] = (ph, t, rate)
        elif kind in ("complete", "fail"):
            close(jid, t)
            r["completion"] = t
            r["status"] = DONE if kind == "complete" else FAILED
            state[jid] = ("done", t, 0.0)
    cols = [
        "job_id",
        "arrival",
        "gpus",
        "status",
        "first_start",
        "completion",
        "loading_time",
        "training_time",
        "saving_time",
        "n_preemptions",
        "work_done",
        "futile_time",
        "n_futile",
    ]
    return pd.DataFrame(list(rows.values()), columns=cols)
