"""A job table from a plain file of your own: CSV or Parquet with ``arrival, gpus, duration``.

The columns (seconds for times; one row per job):

============  =========================================================  ========
column        meaning                                                    required
============  =========================================================  ========
``arrival``   submission time (s, 0 to 4e9; any origin, kept as given)   yes
``gpus``      GPUs the job needs (integer >= 1)                          yes
``duration``  run time at rate 1 (s, 1e-6 to 1e9); or give ``work``      one of
``work``      work in seconds at rate 1 (used instead of ``duration``)   the two
``job_id``    job name, unique (default: row number)                     no
``user``      user (kept as a column)                                    no
``model``     the model trained (e.g. ``resnet50``; Lazer's load times   no
              and A-SRPT's profiles are taken from it)
``status``    how the job ended: ``completed``, ``failed``, ``killed``,  no
              ... (lower case; the sojourn policies' outcomes)
``load_time`` the job's own load time before each (re)start (s, >= 0)     no
``save_time`` the job's own pause-and-save time per preemption (s, >= 0)  no
============  =========================================================  ========

Other names are mapped with ``columns={"arrival": "submit", ...}`` (ours: yours), which the
command line takes as ``--columns arrival=submit,gpus=n_gpu``. Every value is checked before any
simulation: a missing or non-numeric column, a negative, NaN or infinite value, a fractional GPU
count, a time beyond the limits of ``docs/instances.md#limits`` are errors naming the file,
the column, the row and the fix.

Examples
--------
>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "jobs.csv"
>>> _ = p.write_text("submit,n_gpu,duration\\n0,1,10\\n5,2,3.5\\n")
>>> df = read_jobs(p, columns="arrival=submit,gpus=n_gpu")
>>> df["gpus"].tolist(), df["duration"].round(6).tolist()
([1, 2], [10.0, 3.5])
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from optsched.core.limits import LIMITS_DOC, MAX_ARRIVAL, MAX_SECONDS, MIN_SECONDS
from optsched.exceptions import InvalidOptionError, TraceFormatError

__all__ = ["read_jobs", "parse_columns", "JOB_FILE_COLUMNS"]

#: Columns a job file may have (ours); ``arrival``, ``gpus`` and ``duration`` or ``work`` are required.
JOB_FILE_COLUMNS = (
    "arrival",
    "gpus",
    "duration",
    "work",
    "job_id",
    "user",
    "model",
    "status",
    "load_time",
    "save_time",
)
#: Largest GPU count a job file may ask for (larger values are data errors, not jobs).
MAX_GPUS = 1_000_000


def parse_columns(spec: str | Mapping[str, str] | None) -> dict[str, str]:
    """``"arrival=submit,gpus=n_gpu"`` (or a mapping) -> ``{"arrival": "submit", "gpus": "n_gpu"}``.

    Raises
    ------
    InvalidOptionError
        For an item without ``=`` or a name that is not one of ours (the message lists them).

    Examples
    --------
    >>> from optsched.traces import parse_columns
    >>> parse_columns("arrival=submit,gpus=n_gpu")
    {'arrival': 'submit', 'gpus': 'n_gpu'}
    """
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        items = [(str(k), str(v)) for k, v in spec.items()]
    else:
        items = []
        for part in str(spec).split(","):
            part = part.strip()
            if not part:
                continue
            if "=" not in part:
                raise InvalidOptionError(f"--columns item {part!r} must be OURS=YOURS, e.g. arrival=submit_time.")
            ours, yours = (x.strip() for x in part.split("=", 1))
            items.append((ours, yours))
    out: dict[str, str] = {}
    for ours, yours in items:
        if ours not in JOB_FILE_COLUMNS:
            raise InvalidOptionError(
                f"--columns names {ours!r}, which is not a job-file column; map one of "
                f"{list(JOB_FILE_COLUMNS)} to a column of your file (ours=yours)."
            )
        if not yours:
            raise InvalidOptionError(f"--columns gives no column of your file for {ours!r}; write {ours}=NAME.")
        out[ours] = yours
    return out


def _show(v: Any) -> str:
    """A value as a user reads it (``nan``, ``-1.5``, ``'abc'``), never a numpy repr."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        with contextlib.suppress(TypeError, ValueError):
            v = v.item()
    return repr(v) if isinstance(v, str) else str(v)


def _check_ids(p: Path, col: str, ids: Any) -> None:
    """Job ids must be unique: the message names the id and the two rows of the file."""
    dup = ids.duplicated()
    if dup.any():
        second = int(dup.to_numpy().nonzero()[0][0])
        first = int((ids == ids.iloc[second]).to_numpy().nonzero()[0][0])
        raise TraceFormatError(
            f"{p}: column {col!r} (our 'job_id') must hold a different id for each job; rows {first + 2} and "
            f"{second + 2} both have {_show(ids.iloc[second])} ({int(dup.sum()):,} repeated). Renumber the jobs, "
            f"or leave the column out (the rows are then numbered)."
        )
    if ids.isna().any():
        i = int(ids.isna().to_numpy().nonzero()[0][0])
        raise TraceFormatError(
            f"{p}: column {col!r} (our 'job_id') is empty at row {i + 2}; give every job an id, or leave the "
            f"column out (the rows are then numbered)."
        )


def read_jobs(path: str | Path, *, columns: str | Mapping[str, str] | None = None):
    """Read a CSV or Parquet job file into the simulator's job table (see the module docstring).

    Parameters
    ----------
    path : str or Path
        ``.csv`` (optionally ``.csv.gz``) or ``.parquet`` file.
    columns : str or mapping, optional
        Our column name -> the file's, for the columns whose names differ.

    Returns
    -------
    pandas.DataFrame
        Columns ``job_id, arrival, duration, gpus`` (+ ``work``, ``user``, ``model``, ``status``,
        ``load_time``, ``save_time`` when given), in file order; ``attrs["trace"] = "jobs-file"``.

    Raises
    ------
    TraceFormatError
        Missing file (or a folder), unreadable file, missing column, bad value.
    InvalidOptionError
        A malformed ``columns`` mapping.

    Examples
    --------
    >>> import os, tempfile
    >>> from optsched.traces import read_jobs
    >>> path = os.path.join(tempfile.mkdtemp(), "jobs.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("submit,n_gpu,duration\\n0,1,100\\n30,2,50\\n")
    >>> read_jobs(path, columns="arrival=submit,gpus=n_gpu")[["arrival", "gpus"]].values.tolist()
    [[0.0, 1.0], [30.0, 2.0]]
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TraceFormatError(
            f"read_jobs takes the path of a CSV or Parquet job file (str or pathlib.Path); got {path!r} "
            f"({type(path).__name__}). A table already in memory goes to compare() or the simulator as it is."
        )
    import numpy as np
    import pandas as pd

    mapping = parse_columns(columns)
    p = Path(path).expanduser()
    if p.is_dir():
        raise TraceFormatError(f"--jobs-csv {str(p)!r} is a folder; give a CSV or Parquet file.")
    if not p.is_file():
        raise TraceFormatError(
            f"Job file {str(p)!r} does not exist; give a CSV or Parquet file with columns arrival, gpus, duration."
        )
    name = p.name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            raw = pd.read_parquet(p)
        else:
            raw = pd.read_csv(p)
    except (OSError, ValueError, pd.errors.ParserError) as e:
        raise TraceFormatError(
            f"{p}: cannot be read as {'Parquet' if name.endswith(('.parquet', '.pq')) else 'CSV'} ({e})."
        ) from None
    src = {ours: mapping.get(ours, ours) for ours in JOB_FILE_COLUMNS}
    missing = [src[c] for c in ("arrival", "gpus") if src[c] not in raw.columns]
    wcol = "work" if src["work"] in raw.columns else "duration" if src["duration"] in raw.columns else None
    if wcol is None:
        missing.append(src["duration"])
    if missing:
        raise TraceFormatError(
            f"{p}: missing column(s) {missing}; the file has {list(raw.columns)[:15]}. A job file needs arrival, "
            f"gpus and duration (or work); map other names with --columns arrival=YOURS,... "
            f"(columns={{'arrival': 'YOURS'}} in Python)."
        )
    if len(raw) == 0:
        raise TraceFormatError(f"{p}: the job file has no rows; give at least one job.")
    ids = raw[src["job_id"]].tolist() if src["job_id"] in raw.columns else list(range(len(raw)))
    if src["job_id"] in raw.columns:
        _check_ids(p, src["job_id"], raw[src["job_id"]])
    out = pd.DataFrame({"job_id": ids})

    def column(ours: str, rule, what: str):
        col = src[ours]
        values = pd.to_numeric(raw[col], errors="coerce").to_numpy(dtype=float)
        text_bad = np.isnan(values) & raw[col].notna().to_numpy()
        with np.errstate(invalid="ignore"):
            bad = text_bad | ~rule(values)
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            shown = _show(raw[col].iloc[i])
            raise TraceFormatError(
                f"{p}: column {col!r} (our {ours!r}) must be {what}; row {i + 2} (job {_show(ids[i])}) has "
                f"{shown} ({int(bad.sum())} bad row(s)). Fix or drop those rows."
            )
        return values

    out["arrival"] = column(
        "arrival",
        lambda a: np.isfinite(a) & (a >= 0) & (a <= MAX_ARRIVAL),
        f"a number of seconds in [0, {MAX_ARRIVAL:g}] ({LIMITS_DOC})",
    )
    gpus = column(
        "gpus",
        lambda a: np.isfinite(a) & (a >= 1) & (a <= MAX_GPUS) & (a == np.round(a)),
        f"an integer in [1, {MAX_GPUS:,}]",
    )
    out["gpus"] = gpus.astype(np.int64)
    dur = column(
        wcol,
        lambda a: np.isfinite(a) & (a >= MIN_SECONDS) & (a <= MAX_SECONDS),
        f"a number of seconds in [{MIN_SECONDS:g}, {MAX_SECONDS:g}] ({LIMITS_DOC})",
    )
    out["duration"] = dur
    if wcol == "work":
        out["work"] = dur
    for c in ("user", "model"):
        if src[c] in raw.columns:
            out[c] = raw[src[c]].astype(str).to_numpy()
    if src["status"] in raw.columns:  # as the trace loaders give it: lower case, empty when unknown
        st = raw[src["status"]]
        out["status"] = st.where(st.notna(), "").astype(str).str.strip().str.lower().to_numpy()
    for c in ("load_time", "save_time"):  # the simulator's per-job overheads (formulations/lazer.md R2)
        if src[c] in raw.columns:
            ok = lambda a: np.isfinite(a) & (a >= 0) & (a <= MAX_SECONDS)  # noqa: E731
            out[c] = column(c, ok, f"a number of seconds in [0, {MAX_SECONDS:g}]")
    out.attrs.update({"trace": "jobs-file", "source": str(p), "rows_read": len(raw)})
    return out
