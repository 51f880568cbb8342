"""The workloads of the Lazer reproduction (:mod:`optsched.experiments.lazer.study`): Table 1's synthetic
traces (Earth, Saturn, Uranus), a real Helios ``cluster_log.csv`` turned into a job table
(:func:`helios_workload`, formulations/lazer.md#helios-log), the check of a job table before any
simulation, and the cluster size for a target load. Tested in ``tests/lazer/test_helios_log.py``
and ``tests/lazer/test_reproduction.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.seeds import as_generator
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, TraceFormatError
from optsched.lazer import DEFAULT_VARIANT, FAMILIES, PARAMETER_COUNTS
from optsched.traces import load_helios, synthetic_workload

#: Table 1: mean inter-arrival time (s), mean training time (min), jobs.
TRACES = {"Earth": (39.0, 59.5, 427_000), "Saturn": (80.0, 72.2, 698_000), "Uranus": (243.0, 128.1, 329_000)}


def workload(trace: str, n_jobs: int, seed: int, *, gpus: int = 512):
    gap, dur_min, _ = TRACES[trace]
    return synthetic_workload(
        n_jobs, cluster_gpus=gpus, mean_gap=gap, mean_duration=dur_min * 60.0, models=FAMILIES, max_gpus=8, seed=seed
    )


def servers_for_load(df, rho: float) -> int:
    """Servers of 8 GPUs on which the jobs' offered load sum(g d) / (span x GPUs) is about ``rho``."""
    span = float(df["arrival"].max() - df["arrival"].min())
    if span <= 0:  # every job arrives at once (e.g. a one-job log): the load over the longest run
        span = float(df["duration"].max())
    work = np.minimum(df["duration"].to_numpy(float), span)  # the heavy tail runs past the arrivals
    return max(1, int(round(float((df["gpus"].to_numpy() * work).sum()) / span / rho / 8)))


#: Helios ``state`` words as :func:`optsched.traces.load_helios` maps them (``SUSPENDED`` -> ``suspended``).
HELIOS_STATES = ("completed", "failed", "killed", "timeout", "suspended")


def _start_cut(start: Any) -> tuple[str, float] | None:
    """``start`` checked: ``("after", seconds after the first GPU job)``, ``("at", seconds since
    the epoch of a time stamp in the log's local time)`` or None."""
    import pandas as pd

    if start is None:
        return None
    if isinstance(start, (int, float, np.integer, np.floating)) and not isinstance(start, bool):
        if np.isfinite(start) and start >= 0:
            return ("after", float(start))
    elif isinstance(start, str) or hasattr(start, "year"):
        try:
            ts = pd.Timestamp(start)
        except (ValueError, TypeError):
            ts = pd.NaT
        if not pd.isna(ts):
            if ts.tzinfo is not None:
                ts = ts.tz_convert("UTC").tz_localize(None)
            return ("at", ts.value / 1e9)
    raise InvalidOptionError(
        f"The 'start' option of helios_workload must be seconds >= 0 after the log's first GPU job, or a "
        f"time stamp such as '2020-06-01 00:00:00' (the log's local time); got {start!r}."
    )


def check_table(df) -> None:
    """A job table for :func:`simulate_policy` (``arrival``, ``duration``, ``gpus`` in [1, 8],
    ``model``), checked before any simulation starts."""
    cols = list(getattr(df, "columns", []))
    missing = [c for c in ("arrival", "duration", "gpus", "model") if c not in cols]
    if missing:
        raise InvalidInstanceError(
            f"The job table lacks the column(s) {missing} (it has {cols[:12]}). Build it with "
            f"helios_workload(path) (which draws the 'model' column), or add them."
        )
    if not len(df):
        raise InvalidInstanceError("The job table has no job; give a table with at least one job.")
    g = df["gpus"].to_numpy()
    bad = ~((g >= 1) & (g <= 8))
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        raise InvalidInstanceError(
            f"The 'gpus' column of the job table must be in [1, 8] (one 8-GPU server); row {i} has {g[i]!r}. "
            f"helios_workload caps larger demands at 8 and drops CPU-only jobs."
        )
    unknown = sorted({str(m) for m in df["model"]} - set(PARAMETER_COUNTS) - set(DEFAULT_VARIANT))
    if unknown:
        raise InvalidInstanceError(
            f"The 'model' column names model(s) without a load/save entry: {unknown[:5]}. Use family names "
            f"(optsched.lazer.FAMILIES) or variants of optsched.lazer.PARAMETER_COUNTS."
        )


def draw_models(df, seed):
    """A copy of ``df`` with a ``model`` column drawn uniformly from the seven families with
    ``seed`` (the same draw as ``synthetic_workload(models=FAMILIES)`` makes for its model column)."""
    out = df.copy()
    out["model"] = as_generator(seed).choice(np.array(FAMILIES, dtype=object), size=len(out))
    out.attrs = dict(df.attrs)
    out.attrs["model_seed"] = seed if isinstance(seed, (int, np.integer)) else None
    return out


def _log_name(path: Any) -> str:
    """The trace name of a log: its folder when that is a Table 1 trace (``.../Earth/cluster_log.csv``
    -> ``Earth``, so that Table 2 puts the paper's row beside it), else the folder or file name."""
    p = Path(path)
    folder = p.parent.name
    for t in TRACES:
        if folder.lower() == t.lower() or p.stem.lower().startswith(t.lower()):
            return t
    return folder or p.stem


def helios_workload(
    path: Any,
    *,
    seed: Any = 0,
    n_jobs: int | None = None,
    start: Any = None,
    states: Sequence[str] | None = None,
):
    """A job table for :func:`simulate_policy` from a SenseTime Helios ``cluster_log.csv``.

    Read with :func:`optsched.traces.load_helios` (which drops CPU-only jobs, rows without a
    positive ``duration`` or a submission time, and jobs unfinished at the end of the trace), then:

    * every finished GPU job is kept with its run time (``duration`` = end - start), whatever its
      ``state`` (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL): the paper replays "all DT jobs",
      and a failed or cancelled job held its GPUs for that long. ``states=("completed",)`` keeps
      only COMPLETED jobs (words: ``HELIOS_STATES``);
    * ``start`` (seconds after the first kept job, or a time stamp of the log's local time) and
      ``n_jobs`` keep the first ``n_jobs`` jobs submitted at or after ``start``; arrivals are shifted
      so that the first kept job arrives at 0;
    * ``gpus`` is capped at 8 (one server: the study's cluster is 8-GPU servers, multi-server
      jobs are not modelled); the trace's demand stays in ``trace_gpus``;
    * ``model`` is drawn uniformly from :data:`optsched.lazer.FAMILIES` with ``seed``, as
      ``synthetic_workload(models=)`` does (the log has no model), so that
      :class:`optsched.lazer.LoadSaveModel` gives the load and save times.

    ``df.attrs`` adds ``n_capped`` (jobs whose demand was capped), ``states``, ``start``,
    ``model_seed`` and ``name`` (the trace name :func:`run` uses: the log's folder, e.g. ``Earth``).

    Raises
    ------
    DataNotFoundError
        ``path`` does not exist.
    TraceFormatError
        The file is not a Helios log (missing columns, bad numbers or times).
    InvalidOptionError
        ``n_jobs`` not a positive integer, ``start`` neither seconds >= 0 nor a time stamp,
        ``states`` empty or with an unknown word.
    InvalidInstanceError
        No GPU job left after the filtering (the message gives the counts).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "cluster_log.csv")
    >>> rows = ["1,u1,vc1,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 19:41:01,3600,0",
    ...         "2,u2,vc1,0,4,1,COMPLETED,2020-06-09 18:41:05,2020-06-09 18:41:05,2020-06-09 18:42:05,60,0",
    ...         "3,u1,vc2,16,32,2,FAILED,2020-06-09 18:42:01,2020-06-09 18:42:01,2020-06-09 18:47:01,300,0"]
    >>> _ = open(p, "w").write("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,"
    ...                        "end_time,duration,queue\\n" + "\\n".join(rows) + "\\n")
    >>> df = helios_workload(p, seed=1)
    >>> df[["job_id", "arrival", "duration", "gpus", "trace_gpus"]].values.tolist()
    [['1', 0.0, 3600.0, 1, 1], ['3', 60.0, 300.0, 8, 16]]
    >>> from optsched.lazer import FAMILIES
    >>> bool(df["model"].isin(FAMILIES).all()), helios_workload(p, states=["completed"])["job_id"].tolist()
    (True, ['1'])
    """
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs <= 0):
        raise InvalidOptionError(
            f"The 'n_jobs' option of helios_workload must be a positive integer (keep the first n_jobs GPU "
            f"jobs) or None (all of them); got {n_jobs!r}."
        )
    cut = _start_cut(start)
    if states is not None:
        wanted = [states] if isinstance(states, str) else list(states)
        bad = [s for s in wanted if not isinstance(s, str) or s.lower() not in HELIOS_STATES]
        if not wanted or bad:
            raise InvalidOptionError(
                f"The 'states' option of helios_workload must be None (every finished job) or a non-empty list "
                f"of {list(HELIOS_STATES)} (CANCELLED is 'killed', NODE_FAIL is 'failed'); got {states!r}."
            )
        wanted = [s.lower() for s in wanted]
    try:
        df = load_helios(path)
    except TraceFormatError as e:
        if "no usable job left" not in str(e):
            raise
        raise InvalidInstanceError(
            f"The Helios log {str(path)!r} has no GPU job with a positive 'duration' to simulate (every row is "
            f"CPU-only (gpu_num 0), unfinished or without run time: {e}). Give a log with GPU jobs."
        ) from None
    read = len(df)
    dropped = dict(df.attrs.get("dropped", {}))
    origin = float(df.attrs.get("time_origin", 0.0))
    if states is not None:
        df = df[df["status"].isin(wanted)]
    if cut is not None:
        df = df[df["arrival"] >= (cut[1] if cut[0] == "after" else cut[1] - origin)]
    if n_jobs is not None:
        df = df.iloc[: int(n_jobs)]
    if not len(df):
        raise InvalidInstanceError(
            f"No GPU job of the Helios log {str(path)!r} is left to simulate: {read} finished GPU job(s) read "
            f"(dropped by the loader: {dropped}), states={states!r}, start={start!r}. Widen 'states' or move "
            f"'start' before the last submission."
        )
    df = df.copy()
    df["arrival"] = df["arrival"] - float(df["arrival"].iloc[0])
    df["trace_gpus"] = df["gpus"].astype("int64")
    df["gpus"] = np.minimum(df["trace_gpus"].to_numpy(), 8)
    df = df.reset_index(drop=True)
    df.attrs.update(
        {
            "n_capped": int((df["trace_gpus"] > 8).sum()),
            "states": wanted if states is not None else None,
            "start": start,
            "name": _log_name(path),
        }
    )
    return draw_models(df, seed)
