"""Trace names and format detection: :func:`load_trace` (re-exported by :mod:`optsched.traces`).

See :mod:`optsched.traces.table` for the columns and units, :mod:`optsched.traces.loaders` for
the mapping of each trace, :mod:`optsched.traces.synthetic` for the generator.

:func:`load_trace` takes a name (``openb``, ``openb-sample``) or a path whose format is detected
from its extension / header (Philly JSON, Helios, Acme, OpenB CSV); PAI needs its job and task
tables: ``load_pai(job, task[, group])``.

Tested in ``tests/traces/test_loaders.py`` and ``tests/cli/test_bad_inputs.py``.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from optsched.exceptions import TraceFormatError, UnknownNameError
from optsched.traces.datasets import DATASETS, SHIPPED
from optsched.traces.loaders import (
    load_acme,
    load_helios,
    load_openb,
    load_philly,
)

TRACES = {
    "openb": lambda **kw: load_openb(None, **kw),
    "openb-sample": lambda **kw: load_openb(SHIPPED / "alibaba-gpu-2023-openb" / "sample.csv", **kw),
}
"""Shipped trace names for :func:`load_trace`, each with its loader: ``openb`` (the complete Alibaba
GPU 2023 pod list shipped in the package) and ``openb-sample`` (a shipped sample of it)."""
FORMATS = {"philly": load_philly, "helios": load_helios, "acme": load_acme, "openb": load_openb}
"""Trace file formats :func:`load_trace` reads (detected by :func:`detect_format`, or given as
``format=``), each with its loader. PAI has two tables: :func:`load_pai`."""


def detect_format(path: Any) -> str:
    """``philly``, ``helios``, ``acme`` or ``openb`` from a file's extension and header line.

    Raises
    ------
    TraceFormatError
        If the header matches no known format (the message lists the expected headers).

    Examples
    --------
    >>> import os, tempfile
    >>> from optsched.traces import detect_format
    >>> path = os.path.join(tempfile.mkdtemp(), "pods.csv")
    >>> header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    >>> header += "creation_time,deletion_time,scheduled_time"
    >>> with open(path, "w") as f:
    ...     _ = f.write(header + "\\n")
    >>> detect_format(path)
    'openb'
    """
    p = check_trace_path(path)
    name = p.name.lower()
    if name.endswith((".json", ".json.gz")):
        return "philly"
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(p, "rt", encoding="utf-8", errors="replace") as f:
            head = f.readline().strip().lower()
    except OSError as e:
        raise TraceFormatError(f"{p}: cannot read ({e}).") from None
    cols = [c.strip() for c in head.split(",")]
    if head.startswith("[") or head.startswith("{"):
        return "philly"
    if "num_gpu" in cols and "creation_time" in cols:
        return "openb"
    if "gpu_num" in cols and "vc" in cols:
        return "helios"
    if "gpu_num" in cols and "type" in cols:
        return "acme"
    own = {"arrival", "gpus", "duration", "work"} & set(cols)
    hint = (
        f" Its columns {sorted(own)} are those of a job file of your own: give it with --jobs-csv FILE "
        f"(optsched.traces.read_jobs in Python)."
        if own
        else " A job file of your own (arrival, gpus, duration; other names mapped with --columns) goes to "
        "--jobs-csv FILE (optsched.traces.read_jobs in Python)."
    )
    raise TraceFormatError(
        f"{p}: unknown trace format (header {head[:100]!r}). Known: Philly cluster_job_log (.json), Helios "
        f"(job_id,user,vc,gpu_num,...), Acme (job_id,user,node_num,gpu_num,cpu_num,type,...), OpenB "
        f"(name,cpu_milli,...,num_gpu,...,creation_time,...). For PAI use load_pai(job_table, task_table).{hint}"
    )


def check_trace_path(path: Any) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it is an existing trace file; otherwise raise saying what
    was given (a folder, a fetchable dataset's name, nothing) and what is expected.

    Raises
    ------
    TraceFormatError
        ``path`` is a folder (the message lists the trace-like files in it).
    UnknownNameError
        Nothing exists at ``path``.
    """
    p = Path(str(path)).expanduser()
    if p.is_dir():
        files = sorted(
            f.name for f in p.iterdir() if f.is_file() and f.name.lower().endswith((".json", ".csv", ".gz", ".parquet"))
        )
        inside = (
            f" Files there that may be one: {', '.join(files[:6])}{', ...' if len(files) > 6 else ''}." if files else ""
        )
        raise TraceFormatError(
            f"{str(p)!r} is a folder; a trace is one file: a Philly cluster_job_log (.json), a Helios, Acme or "
            f"OpenB .csv (or a shipped name: {', '.join(sorted(TRACES))}; your own jobs: --jobs-csv FILE).{inside}"
        )
    if not p.is_file():
        of = next((d for d in DATASETS.values() if p.name in d.file_names()), None)
        fetch = (
            f" {str(path)!r} is a public dataset: fetch it with `optsched data fetch {path}`, then give the file "
            f"(`optsched data path {path}` prints where it is)."
            if str(path) in DATASETS
            else f" {p.name!r} is a file of the public {of.name} trace, not shipped: fetch it with `optsched data "
            f"fetch {of.name}`, then give its path (`optsched data path {of.name}` prints the folder; {of.use})."
            if of is not None
            else ""
        )
        raise UnknownNameError(
            f"Unknown trace {str(path)!r}: not a shipped trace name {sorted(TRACES)} and not an existing file.{fetch}"
        )
    return p


def load_trace(name_or_path: Any, *, format: str | None = None, **options: Any):
    """A job table from a shipped trace name or a file path (format detected unless given).

    Parameters
    ----------
    name_or_path : str or path
        A name of :data:`TRACES` or a trace file: a Philly ``cluster_job_log`` (JSON), a Helios,
        Acme or OpenB CSV. A job file of your own (``arrival``, ``gpus``, ``duration``) is read
        by :func:`read_jobs`; PAI's two tables by :func:`load_pai`.
    format : str, optional
        One of :data:`FORMATS` (``"philly"``, ``"helios"``, ``"acme"``, ``"openb"``), to skip the
        detection (:func:`detect_format`).
    **options
        Passed to the format's loader (e.g. ``gpu_only=False`` for :func:`load_openb`).

    Returns
    -------
    pandas.DataFrame
        One row per job, sorted by arrival, with the columns of :data:`TABLE_COLUMNS` (seconds,
        arrival of the first job = 0) and the trace's own extra columns; ``df.attrs`` says which
        rows were dropped and why.

    Raises
    ------
    UnknownNameError
        Neither a shipped name nor an existing file (a public dataset's name says how to fetch it).
    TraceFormatError
        A folder, a file of no known format, or missing or malformed columns (named).

    Examples
    --------
    >>> df = load_trace("openb-sample")
    >>> len(df), list(df.columns[:5])
    (2976, ['job_id', 'arrival', 'duration', 'gpus', 'status'])
    >>> first = df.iloc[0]
    >>> first["job_id"], float(first["arrival"]), float(first["duration"]), int(first["gpus"])
    ('openb-pod-4214', 0.0, 10168.0, 1)
    >>> df.attrs["dropped"]
    {'no positive duration': 507, 'CPU-only (0 GPUs)': 456}
    """
    key = str(name_or_path)
    if key in TRACES and format is None:
        return TRACES[key](**options)
    p = check_trace_path(key)
    fmt = format or detect_format(p)
    if fmt not in FORMATS:
        raise UnknownNameError(f"Unknown trace format {fmt!r}; choose one of {sorted(FORMATS)}.")
    return FORMATS[fmt](p, **options)
