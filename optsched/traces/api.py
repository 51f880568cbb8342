"""Trace names and format detection: :func:`load_trace` (re-exported by :mod:`optsched.traces`).

See :mod:`optsched.traces.table` for the columns and units, :mod:`optsched.traces.loaders` for
the mapping of each trace, :mod:`optsched.traces.synthetic` for the generator.

:func:`load_trace` takes a name (``openb``, ``openb-sample``) or a path whose format is detected
from its extension / header (Philly JSON, Helios, Acme, OpenB CSV); PAI needs its job and task
tables: ``load_pai(job, task[, group])``.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from optsched.exceptions import TraceFormatError, UnknownNameError
from optsched.traces.loaders import (
    OPENB_JOBS,
    OPENB_NODES,
    SHIPPED,
    load_acme,
    load_helios,
    load_openb,
    load_pai,
    load_philly,
    openb_cluster,
)
from optsched.traces.synthetic import (
    PHILLY_GPU_MIX,
    acme_outcome_rates,
    philly_runtimes,
    synthetic_workload,
)
from optsched.traces.table import TABLE_COLUMNS, to_jobs

__all__ = [
    "load_trace",
    "detect_format",
    "TRACES",
    "FORMATS",
    "load_philly",
    "load_helios",
    "load_acme",
    "load_pai",
    "load_openb",
    "openb_cluster",
    "synthetic_workload",
    "philly_runtimes",
    "acme_outcome_rates",
    "PHILLY_GPU_MIX",
    "TABLE_COLUMNS",
    "to_jobs",
    "OPENB_JOBS",
    "OPENB_NODES",
    "SHIPPED",
]

TRACES = {
    "openb": lambda **kw: load_openb(None, **kw),
    "openb-sample": lambda **kw: load_openb(SHIPPED / "alibaba-gpu-2023-openb" / "sample.csv", **kw),
}
FORMATS = {"philly": load_philly, "helios": load_helios, "acme": load_acme, "openb": load_openb}


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
    p = Path(path)
    if not p.is_file():
        raise TraceFormatError(f"Trace file {str(p)!r} does not exist.")
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
    raise TraceFormatError(
        f"{p}: unknown trace format (header {head[:100]!r}). Known: Philly cluster_job_log (.json), Helios "
        f"(job_id,user,vc,gpu_num,...), Acme (job_id,user,node_num,gpu_num,cpu_num,type,...), OpenB "
        f"(name,cpu_milli,...,num_gpu,...,creation_time,...). For PAI use load_pai(job_table, task_table)."
    )


def load_trace(name_or_path: Any, *, format: str | None = None, **options: Any):
    """A job table from a shipped trace name or a file path (format detected unless given).

    Examples
    --------
    >>> len(load_trace("openb-sample")) > 0
    True
    """
    key = str(name_or_path)
    if key in TRACES and format is None:
        return TRACES[key](**options)
    p = Path(key)
    if not p.exists():
        raise UnknownNameError(
            f"Unknown trace {key!r}: not a shipped trace name {sorted(TRACES)} and not an existing file."
        )
    fmt = format or detect_format(p)
    if fmt not in FORMATS:
        raise UnknownNameError(f"Unknown trace format {fmt!r}; choose one of {sorted(FORMATS)}.")
    return FORMATS[fmt](p, **options)
