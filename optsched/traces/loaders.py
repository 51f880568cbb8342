"""Loaders of public GPU-cluster traces into the one job table of :mod:`optsched.traces.table`.

Each loader reads the trace's *original* public file format (plain, ``.gz``, or for PAI the
official ``.tar.gz``). Mapping per trace (all times in seconds):

Philly ``cluster_job_log`` (JSON list)
    arrival = ``submitted_time``; duration = sum over attempts of ``end_time - start_time``
    (attempts with a missing time are skipped; a last attempt without ``end_time`` means the job
    was still running: status ``running``); gpus = number of GPU ids in ``detail`` of the last
    attempt with GPUs; queue_delay = first attempt start - submission; ``n_attempts``;
    status ``Pass``/``Failed``/``Killed`` -> completed/failed/killed; group = ``vc``.
Helios ``cluster_log.csv`` (Venus/Earth/Saturn/Uranus)
    arrival = ``submit_time``; duration = ``duration``; gpus = ``gpu_num``; status = ``state``
    (COMPLETED -> completed, CANCELLED -> killed, FAILED/NODE_FAIL -> failed, TIMEOUT -> timeout);
    queue_delay = ``queue``; group = ``vc``; ``cpu`` = ``cpu_num``.
Acme ``trace_seren.csv`` / ``trace_kalos.csv``
    as Helios (times carry ``+08:00``); ``type`` kept; ``node_num`` kept as ``nodes``.
Alibaba PAI 2020 (headerless ``pai_job_table``, ``pai_task_table``, optional ``pai_group_tag_table``)
    arrival = job ``start_time`` (= submission); duration = job ``end_time`` - earliest task
    ``start_time``; queue_delay = earliest task start - submission; gpus = ceil(sum over tasks
    of ``inst_num * plan_gpu / 100``) (``plan_gpu`` is % of one GPU), raw sum in
    ``gpu_fraction``; status Terminated -> completed, Failed -> failed, Running -> running,
    Waiting -> pending; ``group``/``workload`` from the group-tag table (first instance).
Alibaba GPU 2023 "OpenB" (``openb_pod_list_*.csv``; shipped in full)
    one pod = one job; arrival = ``creation_time``; duration = ``deletion_time - scheduled_time``;
    queue_delay = ``scheduled_time - creation_time``; gpus = ``num_gpu`` (a GPU-sharing pod with
    ``gpu_milli < 1000`` counts as one GPU; ``gpu_milli`` kept); group = ``qos``; status =
    ``pod_phase`` in lower case (a snapshot label, not an outcome: ``running`` is kept). Pending
    pods have no ``scheduled_time`` and are dropped.

By default rows without a positive duration, CPU-only jobs, and jobs unfinished at trace end are
dropped (``gpu_only=False`` / ``keep_unfinished=True`` keep them where possible); counts per
reason are in ``df.attrs["dropped"]``.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster, Server
from optsched.exceptions import DataNotFoundError, TraceFormatError
from optsched.traces.datasets import SHIPPED
from optsched.traces.table import finish_table, numeric, parse_times, require_columns

OPENB_JOBS = SHIPPED / "alibaba-gpu-2023-openb" / "jobs.csv.gz"
"""The complete OpenB pod list shipped in the package (:func:`load_openb`'s default)."""
OPENB_NODES = SHIPPED / "alibaba-gpu-2023-openb" / "nodes.csv"
"""The OpenB node list shipped in the package (:func:`openb_cluster`'s default)."""
PHILLY_RUNTIME = SHIPPED / "philly" / "philly_runtime.csv"
ACME_SUMMARY = SHIPPED / "acme" / "cluster_summary.csv"

_SLURM_STATUS = {
    "COMPLETED": "completed",
    "CANCELLED": "killed",
    "FAILED": "failed",
    "NODE_FAIL": "failed",
    "TIMEOUT": "timeout",
    "RUNNING": "running",
    "PENDING": "pending",
}


def _exists(path: Any, trace: str) -> Path:
    p = Path(path)
    if not p.is_file():
        if p.is_dir():
            raise TraceFormatError(f"{trace} trace path {str(p)!r} is a directory; give the trace file inside it.")
        raise DataNotFoundError(
            f"{trace} trace file {str(p)!r} does not exist. Give the right path; the public "
            f"traces and how to fetch them are listed by `optsched data list` (docs/data.md)."
        )
    return p


def _read_csv(path: Path, trace: str, **kw):
    import pandas as pd

    try:
        return pd.read_csv(path, **kw)
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError, OSError) as e:
        raise TraceFormatError(f"{path}: cannot read the {trace} trace as CSV ({e}).") from None
    except pd.errors.EmptyDataError:
        raise TraceFormatError(f"{path}: the {trace} trace file is empty.") from None


# -- Philly ---------------------------------------------------------------------------------------
def load_philly(path: Any, *, gpu_only: bool = True, keep_unfinished: bool = False):
    """Load Microsoft Philly ``cluster_job_log`` (JSON list of jobs with attempts).

    Parameters
    ----------
    path : path-like
        The JSON file (optionally ``.gz``).
    gpu_only : bool
        Drop the jobs without GPUs.
    keep_unfinished : bool
        Keep the jobs still running when the trace ends (dropped by default).

    Returns
    -------
    pandas.DataFrame
        The job table (see :mod:`optsched.traces.table`) plus ``n_attempts``.

    Raises
    ------
    TraceFormatError
        Not a JSON list of job objects, a job without ``jobid``/``submitted_time``/``attempts``,
        or an unparseable time.

    Examples
    --------
    >>> import json, tempfile, os
    >>> rows = [{"status": "Pass", "vc": "ee9e8c", "jobid": "app_1", "user": "ce2f4c",
    ...          "submitted_time": "2017-10-07 01:11:39",
    ...          "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
    ...                        "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1"]}]}]}]
    >>> p = os.path.join(tempfile.mkdtemp(), "log.json"); _ = open(p, "w").write(json.dumps(rows))
    >>> load_philly(p)[["job_id", "duration", "gpus", "queue_delay", "status"]].values.tolist()
    [['app_1', 74.0, 2, 30.0, 'completed']]
    """
    import pandas as pd

    p = _exists(path, "Philly")
    opener = gzip.open if p.suffix == ".gz" else open
    try:
        with opener(p, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as e:
        raise TraceFormatError(f"{p}: not a Philly cluster_job_log JSON file ({e}).") from None
    if not isinstance(data, list):
        raise TraceFormatError(f"{p}: a Philly cluster_job_log is a JSON list of jobs; got a {type(data).__name__}.")
    fmt = "%Y-%m-%d %H:%M:%S"

    def ts(v, field, jid):
        if v is None or v == "None" or v == "":
            return math.nan
        try:
            return datetime.strptime(str(v), fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            raise TraceFormatError(
                f"{p}: the '{field}' of Philly job {jid!r} must look like '2017-10-07 01:12:09'; got {v!r}."
            ) from None

    rows = []
    status_map = {"Pass": "completed", "Failed": "failed", "Killed": "killed"}
    for i, job in enumerate(data):
        if not isinstance(job, dict) or "jobid" not in job or "submitted_time" not in job:
            raise TraceFormatError(
                f"{p}: Philly job #{i} must be an object with 'jobid', 'submitted_time', 'status' and "
                f"'attempts'; got {str(job)[:120]!r}."
            )
        jid = job["jobid"]
        attempts = job.get("attempts") or []
        if not isinstance(attempts, list):
            raise TraceFormatError(f"{p}: the 'attempts' of Philly job {jid!r} must be a list; got {attempts!r}.")
        sub = ts(job["submitted_time"], "submitted_time", jid)
        run = 0.0
        first = math.nan
        gpus = 0
        running = False
        for k, a in enumerate(attempts):
            if not isinstance(a, dict):
                raise TraceFormatError(f"{p}: attempt {k} of Philly job {jid!r} must be an object; got {a!r}.")
            s, e = ts(a.get("start_time"), "start_time", jid), ts(a.get("end_time"), "end_time", jid)
            if not math.isnan(s) and math.isnan(first):
                first = s
            if not math.isnan(s) and not math.isnan(e) and e >= s:
                run += e - s
            elif not math.isnan(s) and math.isnan(e) and k == len(attempts) - 1:
                running = True
            g = sum(len(d.get("gpus") or []) for d in (a.get("detail") or []) if isinstance(d, dict))
            if g:
                gpus = g
        st = status_map.get(job.get("status"), str(job.get("status")).lower())
        rows.append(
            (
                str(jid),
                sub,
                run if run > 0 else math.nan,
                gpus,
                "running" if running else st,
                job.get("user"),
                job.get("vc"),
                first - sub,
                job["submitted_time"],
                len(attempts),
            )
        )
    df = pd.DataFrame(
        rows,
        columns=[
            "job_id",
            "arrival",
            "duration",
            "gpus",
            "status",
            "user",
            "group",
            "queue_delay",
            "submit_time",
            "n_attempts",
        ],
    )
    return finish_table(
        df, trace="philly", source=p, rows_read=len(data), gpu_only=gpu_only, keep_unfinished=keep_unfinished
    )


# -- Helios / Acme -----------------------------------------------------------------------------------
def _slurm_like(path: Any, trace: str, *, extra: dict[str, str], gpu_only: bool, keep_unfinished: bool):
    p = _exists(path, trace)
    df = _read_csv(p, trace, dtype={"job_id": str})
    need = ["job_id", "user", "gpu_num", "state", "submit_time", "duration"]
    require_columns(df, need, trace, p)
    import pandas as pd

    out = pd.DataFrame(
        {
            "job_id": df["job_id"].astype(str),
            "arrival": parse_times(df["submit_time"], "submit_time", trace, p),
            "duration": numeric(df, "duration", trace, p),
            "gpus": numeric(df, "gpu_num", trace, p),
            "status": df["state"].astype(str).map(lambda s: _SLURM_STATUS.get(s, s.lower())),
            "user": df["user"],
            "group": df["vc"] if "vc" in df.columns else None,
            "queue_delay": numeric(df, "queue", trace, p) if "queue" in df.columns else np.nan,
            "submit_time": df["submit_time"],
        }
    )
    for src, dst in extra.items():
        if src in df.columns:
            out[dst] = df[src].to_numpy()
    bad = out["gpus"].notna() & (out["gpus"] != np.round(out["gpus"]))
    if bad.any():
        i = int(np.nonzero(bad.to_numpy())[0][0])
        raise TraceFormatError(f"{p}: 'gpu_num' must be a whole number; row {i + 1} has {out['gpus'].iloc[i]!r}.")
    return finish_table(
        out, trace=trace, source=p, rows_read=len(df), gpu_only=gpu_only, keep_unfinished=keep_unfinished
    )


def load_helios(path: Any, *, gpu_only: bool = True, keep_unfinished: bool = False):
    """Load a SenseTime Helios ``cluster_log.csv`` (Venus, Earth, Saturn or Uranus).

    Header: ``job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,
    duration,queue``. Returns the job table plus ``cpu`` and ``nodes``.

    Raises
    ------
    TraceFormatError
        Missing columns, non-numeric ``duration``/``gpu_num``/``queue``, unparseable times.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "cluster_log.csv")
    >>> _ = open(p, "w").write("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,"
    ...     "end_time,duration,queue\\n1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,"
    ...     "2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\\n")
    >>> load_helios(p)[["job_id", "duration", "gpus", "status", "group"]].values.tolist()
    [['1425511', 36848.0, 1, 'completed', 'vcJkd']]
    """
    return _slurm_like(
        path,
        "helios",
        extra={"cpu_num": "cpu", "node_num": "nodes"},
        gpu_only=gpu_only,
        keep_unfinished=keep_unfinished,
    )


def load_acme(path: Any, *, gpu_only: bool = True, keep_unfinished: bool = False):
    """Load a Shanghai AI Lab Acme trace (``trace_seren.csv`` or ``trace_kalos.csv``).

    Header: ``job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,
    duration,queue,gpu_time`` (Kalos adds memory and fail/stop columns). Times with ``+08:00``
    are converted to UTC. Returns the job table plus ``cpu``, ``nodes``, ``type``, ``gpu_time``.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "trace_seren.csv")
    >>> _ = open(p, "w").write("job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,"
    ...     "end_time,duration,queue,gpu_time\\n5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,"
    ...     "2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,936.0\\n")
    >>> load_acme(p)[["duration", "gpus", "status", "queue_delay"]].values.tolist()
    [[117.0, 8, 'failed', 32.0]]
    """
    return _slurm_like(
        path,
        "acme",
        extra={"cpu_num": "cpu", "node_num": "nodes", "type": "type", "gpu_time": "gpu_time"},
        gpu_only=gpu_only,
        keep_unfinished=keep_unfinished,
    )


# -- Alibaba PAI 2020 ------------------------------------------------------------------------------------
_PAI_JOB = ["job_name", "inst_id", "user", "status", "start_time", "end_time"]
_PAI_TASK = [
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
]
_PAI_GROUP = ["inst_id", "user", "gpu_type_spec", "group", "workload"]


def _read_headerless(path: Any, names: list[str], table: str):
    """Read an official headerless PAI table (``.csv``, ``.csv.gz`` or the ``.tar.gz`` release)."""
    p = _exists(path, f"PAI {table}")
    src: Any = p
    if p.name.endswith((".tar.gz", ".tgz", ".tar")):
        try:
            with tarfile.open(p) as tf:
                members = [m for m in tf.getmembers() if m.isfile() and not m.name.endswith(".header")]
                if len(members) != 1:
                    raise TraceFormatError(f"{p}: expected one CSV in the archive; found {[m.name for m in members]}.")
                src = io.BytesIO(tf.extractfile(members[0]).read())
        except tarfile.TarError as e:
            raise TraceFormatError(f"{p}: not a readable tar archive ({e}).") from None
    df = _read_csv(
        src if src is not p else p, f"PAI {table}", header=None, dtype=str, keep_default_na=False, na_values=[""]
    )
    if df.shape[1] != len(names):
        raise TraceFormatError(
            f"{p}: the PAI {table} has {len(names)} columns ({','.join(names)}), without header; "
            f"this file has {df.shape[1]}."
        )
    df.columns = names
    if len(df) and str(df.iloc[0, 0]) == names[0]:  # tolerate a header line
        df = df.iloc[1:].reset_index(drop=True)
    return df


def load_pai(
    job_table: Any,
    task_table: Any,
    group_table: Any | None = None,
    *,
    gpu_only: bool = True,
    keep_unfinished: bool = False,
):
    """Load Alibaba PAI 2020 (``pai_job_table``, ``pai_task_table``, optional ``pai_group_tag_table``).

    Returns the job table plus ``gpu_fraction`` (sum of requested GPU shares), ``cpu`` (cores),
    ``n_tasks``, ``gpu_type``, and with the group table ``workload``.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> jp, tp = os.path.join(d, "pai_job_table.csv"), os.path.join(d, "pai_task_table.csv")
    >>> _ = open(jp, "w").write("4f057009a5d481acec67b088,8cb3,58540f191766,Terminated,1739150.0,1739200.0\\n")
    >>> _ = open(tp, "w").write("4f057009a5d481acec67b088,tensorflow,1.0,Terminated,1739162.0,1739200.0,"
    ...                         "600.0,29.296875,50.0,MISC\\n")
    >>> load_pai(jp, tp)[["duration", "gpus", "gpu_fraction", "queue_delay", "status"]].values.tolist()
    [[38.0, 1, 0.5, 12.0, 'completed']]
    """
    import pandas as pd

    jobs = _read_headerless(job_table, _PAI_JOB, "job table")
    tasks = _read_headerless(task_table, _PAI_TASK, "task table")
    for df, cols, name in (
        (jobs, ["start_time", "end_time"], "job table"),
        (tasks, ["inst_num", "start_time", "end_time", "plan_cpu", "plan_gpu"], "task table"),
    ):
        for c in cols:
            df[c] = numeric(df, c, f"PAI {name}", job_table if name == "job table" else task_table)
    tasks["gpu"] = tasks["inst_num"].fillna(1.0) * tasks["plan_gpu"].fillna(0.0) / 100.0
    tasks["cpu"] = tasks["inst_num"].fillna(1.0) * tasks["plan_cpu"].fillna(0.0) / 100.0
    agg = tasks.groupby("job_name", sort=False).agg(
        gpu_fraction=("gpu", "sum"),
        cpu=("cpu", "sum"),
        first_start=("start_time", "min"),
        n_tasks=("task_name", "size"),
        gpu_type=("gpu_type", "first"),
    )
    m = jobs.merge(agg, left_on="job_name", right_index=True, how="left")
    status_map = {"Terminated": "completed", "Failed": "failed", "Running": "running", "Waiting": "pending"}
    out = pd.DataFrame(
        {
            "job_id": m["job_name"],
            "arrival": m["start_time"],
            "duration": m["end_time"] - m["first_start"],
            "gpus": np.ceil(m["gpu_fraction"].fillna(0.0).to_numpy() - 1e-9),
            "status": m["status"].map(lambda s: status_map.get(s, str(s).lower())),
            "user": m["user"],
            "group": None,
            "queue_delay": m["first_start"] - m["start_time"],
            "submit_time": m["start_time"],
            "gpu_fraction": m["gpu_fraction"],
            "cpu": m["cpu"],
            "n_tasks": m["n_tasks"],
            "gpu_type": m["gpu_type"],
        }
    )
    if group_table is not None:
        g = _read_headerless(group_table, _PAI_GROUP, "group tag table").drop_duplicates("inst_id")
        gi = g.set_index("inst_id")
        out["group"] = m["inst_id"].map(gi["group"]).to_numpy()
        out["workload"] = m["inst_id"].map(gi["workload"]).to_numpy()
    return finish_table(
        out, trace="pai", source=job_table, rows_read=len(jobs), gpu_only=gpu_only, keep_unfinished=keep_unfinished
    )


# -- Alibaba GPU 2023 OpenB ----------------------------------------------------------------------------------
def load_openb(path: Any = None, *, gpu_only: bool = True, keep_unfinished: bool = True):
    """Load the Alibaba GPU 2023 "OpenB" pod list (default: the complete shipped file).

    Pods are taken as jobs. ``keep_unfinished`` defaults to true because ``pod_phase`` is a
    snapshot label (most pods are ``Running`` yet have a deletion time); pending pods are dropped
    anyway (no ``scheduled_time``). Returns the job table plus ``cpu`` (cores), ``memory_mib``,
    ``gpu_milli``.

    Examples
    --------
    >>> df = load_openb()
    >>> len(df), int(df["gpus"].max()), df.attrs["rows_read"]
    (6203, 8, 8152)
    """
    import pandas as pd

    p = _exists(OPENB_JOBS if path is None else path, "OpenB")
    df = _read_csv(p, "OpenB", dtype={"name": str, "gpu_spec": str, "qos": str, "pod_phase": str})
    need = [
        "name",
        "cpu_milli",
        "memory_mib",
        "num_gpu",
        "gpu_milli",
        "qos",
        "pod_phase",
        "creation_time",
        "deletion_time",
        "scheduled_time",
    ]
    require_columns(df, need, "OpenB", p)
    cre = numeric(df, "creation_time", "OpenB", p)
    sch = numeric(df, "scheduled_time", "OpenB", p)
    dele = numeric(df, "deletion_time", "OpenB", p)
    out = pd.DataFrame(
        {
            "job_id": df["name"],
            "arrival": cre,
            "duration": dele - sch,
            "gpus": numeric(df, "num_gpu", "OpenB", p),
            "status": df["pod_phase"].astype(str).str.lower(),
            "user": None,
            "group": df["qos"],
            "queue_delay": sch - cre,
            "submit_time": cre,
            "cpu": numeric(df, "cpu_milli", "OpenB", p) / 1000.0,
            "memory_mib": numeric(df, "memory_mib", "OpenB", p),
            "gpu_milli": numeric(df, "gpu_milli", "OpenB", p),
        }
    )
    pending = np.isnan(sch)
    out.loc[pending, "status"] = "pending"
    return finish_table(
        out, trace="openb", source=p, rows_read=len(df), gpu_only=gpu_only, keep_unfinished=keep_unfinished
    )


def openb_cluster(path: Any = None, *, gpu_only: bool = True):
    """The OpenB cluster (``nodes.csv``): one server per node with its GPUs (GPU nodes only by default).

    Examples
    --------
    >>> c = openb_cluster()
    >>> c.n_servers, c.total_gpus
    (1213, 6212)
    """

    p = _exists(OPENB_NODES if path is None else path, "OpenB nodes")
    df = _read_csv(p, "OpenB nodes")
    require_columns(df, ["sn", "cpu_milli", "memory_mib", "gpu"], "OpenB nodes", p)
    g = numeric(df, "gpu", "OpenB nodes", p)
    servers = [
        Server(int(gi), name=str(sn), resources={"cpu": float(c) / 1000.0, "mem_mib": float(mm)})
        for sn, gi, c, mm in zip(df["sn"], g, df["cpu_milli"], df["memory_mib"], strict=True)
        if not (gpu_only and gi < 1)
    ]
    return Cluster(tuple(servers))
