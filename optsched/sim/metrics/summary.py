"""The per-job table's columns and their summary (:func:`summarize`).

Per-job columns (seconds unless noted)
--------------------------------------
``arrival``, ``first_start``, ``completion``; ``queue_delay`` = first_start - arrival (the delay
to the *first* start only: a job preempted later and waiting again adds nothing to it);
``jct`` = completion - arrival (job completion time = flow time); ``waiting`` = W, all the time not
holding GPUs = jct - loading - training - saving (the queue delay plus every wait after a
preemption); ``loading_time``, ``training_time``, ``saving_time``
(pause-and-save); ``futile_time`` = loading time wasted by preemptions during loading (Lazer's
futile preemption); ``lost_work`` = work rolled back to a checkpoint (work units);
``n_preemptions``; ``stages_done``; ``status`` (``done``, ``failed``, or the phase if unfinished).
In slotted mode also ``finish``: when the work was done (``completion`` is the end of that slot;
the GPUs are held, idle, in between, which is neither waiting nor training).

Tested in ``tests/sim/test_summary_windows.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.sim.model.state import DONE, FAILED

JOB_COLUMNS = [
    "job_id",
    "arrival",
    "gpus",
    "work",
    "weight",
    "status",
    "first_start",
    "completion",
    "queue_delay",
    "jct",
    "waiting",
    "loading_time",
    "training_time",
    "saving_time",
    "futile_time",
    "n_futile",
    "lost_work",
    "n_preemptions",
    "stages_done",
]
"""The columns of ``SimResult.jobs_frame()``, in order (docs/simulator.md#results-and-checks)."""


def summarize(df) -> dict[str, Any]:
    """Summary of a per-job table: a DataFrame (:meth:`SimResult.jobs_frame`, :func:`replay_log`) or
    a mapping of columns (:meth:`SimResult.job_columns`).

    ``mean_queue_delay`` (and its percentiles) is the delay to the first start; ``mean_waiting``,
    ``total_waiting`` and the ``*_waiting`` percentiles are W, every second a job spent without
    GPUs (they need a ``waiting`` column).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"arrival": [0.0, 0.0], "completion": [1.0, 3.0], "weight": [1.0, 2.0],
    ...                    "first_start": [0.0, 1.0], "status": ["done", "done"]})
    >>> s = summarize(df); s["mean_jct"], s["total_weighted_completion_time"], s["makespan"]
    (2.0, 7.0, 3.0)
    >>> df["waiting"] = [0.0, 1.5]  # job 1 started at 1, was preempted and waited 0.5 s more
    >>> s = summarize(df); s["mean_queue_delay"], s["mean_waiting"], s["total_waiting"]
    (0.5, 0.75, 1.5)
    """
    status = np.asarray(df["status"], dtype=object)
    fin = (status == DONE) | (status == FAILED)

    def col(name: str) -> np.ndarray:
        return np.asarray(df[name], dtype=float)[fin]

    jct = col("completion") - col("arrival")
    qd = col("first_start") - col("arrival")
    w = col("weight") if "weight" in df else np.ones(int(fin.sum()))
    comp = col("completion")

    def pct(a, q):
        return float(np.percentile(a, q)) if len(a) else float("nan")

    out = {
        "n_jobs": int(len(status)),
        "n_done": int((status == DONE).sum()),
        "n_failed": int((status == FAILED).sum()),
        "mean_jct": float(jct.mean()) if len(jct) else float("nan"),
        "p50_jct": pct(jct, 50),
        "p95_jct": pct(jct, 95),
        "p99_jct": pct(jct, 99),
        "mean_queue_delay": float(qd.mean()) if len(qd) else float("nan"),
        "p50_queue_delay": pct(qd, 50),
        "p95_queue_delay": pct(qd, 95),
        "p99_queue_delay": pct(qd, 99),
        "makespan": float(comp.max()) if len(comp) else 0.0,
        "total_completion_time": float(comp.sum()),
        "total_weighted_completion_time": float((w * comp).sum()),
        "total_flow_time": float(jct.sum()),
        "total_weighted_flow_time": float((w * jct).sum()),
    }
    if "waiting" in df:  # W_k of Lazer's eq. (1): all the time without GPUs, after preemptions too
        wt = col("waiting")
        out["mean_waiting"] = float(wt.mean()) if len(wt) else float("nan")
        out["p50_waiting"], out["p95_waiting"], out["p99_waiting"] = pct(wt, 50), pct(wt, 95), pct(wt, 99)
        out["total_waiting"] = float(wt.sum())
    if "n_preemptions" in df:
        out["n_preemptions"] = int(np.asarray(df["n_preemptions"]).sum())
    if "futile_time" in df:
        out["futile_time"] = float(np.asarray(df["futile_time"], dtype=float).sum())
    return out
