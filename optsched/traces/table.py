"""The one job table every loader returns, and helpers shared by the loaders.

Columns (one row per job, sorted by arrival, then job id)
--------------------------------------------
=================  ==============================================================  ==========
column             meaning                                                         unit
=================  ==============================================================  ==========
``job_id``         the trace's job id (string)                                     --
``arrival``        submission time, relative to the first kept job (first = 0)     seconds
``duration``       run time in the trace (the simulator's ``work`` at rate 1)      seconds
``gpus``           GPUs the job held / requested (integer >= 1 for GPU jobs)       count
``status``         ``completed``, ``failed``, ``killed`` (cancelled), ``timeout``,  --
                   ``running`` / ``pending`` (not finished when the trace ended),
                   or the trace's own word in lower case
``user``           hashed user (if the trace has one)                              --
``group``          virtual cluster / group / QoS class (if the trace has one)      --
``queue_delay``    trace's own waiting time, start - submission (NaN if unknown)   seconds
``submit_time``    original submission timestamp (string or trace seconds)         --
=================  ==============================================================  ==========

Loaders may add trace-specific columns (``n_attempts``, ``cpu``, ``gpu_milli``, ...).
``df.attrs`` holds ``trace`` (name), ``source`` (path), ``rows_read``, ``dropped`` (reason ->
count) and ``time_origin`` (the submission time mapped to 0).

Tested in ``tests/traces/test_loaders.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from optsched.core.job import Job
from optsched.exceptions import TraceFormatError
from optsched.traces.jobs_file import arrival_id_order

TABLE_COLUMNS = ["job_id", "arrival", "duration", "gpus", "status", "user", "group", "queue_delay", "submit_time"]
"""The columns every loader returns, in this order (meaning and unit: the :mod:`optsched.traces.table`
module docstring); a loader may add the trace's own after them."""


def require_columns(df, needed: list[str], trace: str, path: Any) -> None:
    """Raise TraceFormatError naming the missing columns and the expected header."""
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise TraceFormatError(
            f"{path}: not a {trace} file: missing column(s) {missing}. Expected a header with "
            f"{needed}; got {list(df.columns)[:15]}."
        )


def parse_times(series, column: str, trace: str, path: Any, fmt: str | None = None, utc: bool = False):
    """Parse wall-clock strings to seconds since the epoch (float; NaN for empty)."""
    import pandas as pd

    try:
        t = pd.to_datetime(series, format=fmt, errors="raise", utc=utc)
    except (ValueError, TypeError) as e:
        bad = None
        for v in series:
            try:
                pd.to_datetime(v, format=fmt, utc=utc)
            except (ValueError, TypeError):
                bad = v
                break
        raise TraceFormatError(
            f"{path}: the '{column}' column of the {trace} trace must hold times like "
            f"'2020-06-09 18:41:01'; got {bad!r} ({e})."
        ) from None
    if getattr(t.dt, "tz", None) is not None:
        t = t.dt.tz_convert("UTC").dt.tz_localize(None)
    ns = t.to_numpy(dtype="datetime64[ns]").astype("int64").astype(float)
    ns[t.isna().to_numpy()] = np.nan
    return ns / 1e9


def numeric(df, column: str, trace: str, path: Any):
    """A column as float, with a clear error on non-numeric cells."""
    import pandas as pd

    s = pd.to_numeric(df[column], errors="coerce")
    bad = s.isna() & df[column].notna() & (df[column].astype(str).str.strip() != "")
    if bad.any():
        i = int(np.nonzero(bad.to_numpy())[0][0])
        raise TraceFormatError(
            f"{path}: the '{column}' column of the {trace} trace must be numeric; row {i + 1} has "
            f"{df[column].iloc[i]!r}. Is this the right file/format?"
        )
    return s.to_numpy(dtype=float)


def finish_table(
    df, *, trace: str, source: Any, rows_read: int, gpu_only: bool = True, keep_unfinished: bool = False
) -> Any:
    """Normalize: drop unusable rows (counted in ``df.attrs['dropped']``), shift arrivals to 0,
    sort by (arrival, job id) (ties never follow the file's row order), fill missing standard columns."""

    dropped: dict[str, int] = {}

    def drop(mask, why):
        n = int(mask.sum())
        if n:
            dropped[why] = dropped.get(why, 0) + n
        return df[~mask]

    for c in TABLE_COLUMNS:
        if c not in df.columns:
            df[c] = np.nan if c in ("queue_delay",) else None
    df = drop(df["arrival"].isna(), "no submission time")
    if not keep_unfinished:
        df = drop(df["status"].isin(["running", "pending"]), "unfinished (running/pending at trace end)")
    df = drop(~(df["duration"] > 0), "no positive duration")
    if gpu_only:
        df = drop(~(df["gpus"] >= 1), "CPU-only (0 GPUs)")
    df = df.copy()
    df["gpus"] = df["gpus"].astype("int64")
    origin = float(df["arrival"].min()) if len(df) else 0.0
    df["arrival"] = df["arrival"] - origin
    df["job_id"] = df["job_id"].astype(str)
    df = df.iloc[arrival_id_order(df["arrival"].to_numpy(), df["job_id"].tolist())].reset_index(drop=True)
    cols = TABLE_COLUMNS + [c for c in df.columns if c not in TABLE_COLUMNS]
    df = df[cols]
    df.attrs.update(
        {"trace": trace, "source": str(source), "rows_read": int(rows_read), "dropped": dropped, "time_origin": origin}
    )
    if not len(df):
        raise TraceFormatError(
            f"{source}: no usable job left in the {trace} trace after dropping {dropped}. "
            f"Check the file, or pass gpu_only=False / keep_unfinished=True."
        )
    return df


def to_jobs(df, *, limit: int | None = None) -> list:
    """Core :class:`~optsched.core.Job` objects from a job table (``work`` = ``duration``).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"job_id": ["a"], "arrival": [0.0], "duration": [5.0], "gpus": [2]})
    >>> to_jobs(df)[0]
    Job(id='a', work=5.0, gpus=2, arrival=0.0, weight=1.0, single_server=False, resources={}, attrs={})
    """

    d = df if limit is None else df.iloc[:limit]
    extra = [c for c in ("user", "group", "status") if c in d.columns]
    out = []
    for row in d.itertuples(index=False):
        attrs: Mapping[str, Any] = {
            c: getattr(row, c)
            for c in extra
            if getattr(row, c) is not None and not (isinstance(getattr(row, c), float) and np.isnan(getattr(row, c)))
        }
        out.append(
            Job(row.job_id, work=float(row.duration), gpus=int(row.gpus), arrival=float(row.arrival), attrs=dict(attrs))
        )
    return out
