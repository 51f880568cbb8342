"""Input conversion for the simulator: core ``Job`` lists or job tables (DataFrames, as the
trace loaders return) to :class:`~optsched.sim.model.state.SimJob`, validated with messages that
name the column, the job and the fix. Job tables are converted column-wise (no core ``Job``
per row), which keeps million-job replays fast.

Tested in ``tests/sim/test_engine.py`` and ``tests/sim/test_resource_vectors.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.job import Job
from optsched.core.limits import LIMITS_DOC, MAX_ARRIVAL, MAX_SECONDS, MAX_WEIGHT, MIN_SECONDS
from optsched.exceptions import InvalidInstanceError
from optsched.sim.model.state import SimJob


def make_jobs(
    jobs: Any, cluster: Cluster, stages: Mapping[Any, Sequence[float]] | None, *, attrs_columns: Sequence[str] = ()
) -> list[SimJob]:
    total, largest = cluster.total_gpus, cluster.max_server_gpus
    out: list[SimJob] = []
    stages = dict(stages or {})
    if is_table(jobs):
        df = jobs
        t = table_columns(df, cluster, attrs_columns=attrs_columns)
        ids, columns, n_rows = t["ids"], t["columns"], len(t["ids"])
        extra = [c for c in ("user", "group", "vc", "status", "model") if c in columns]
        extra += [c for c in attrs_columns if c not in extra]
        extra_vals = {c: _col(df, c).tolist() for c in extra}
        arr_l, work_l, gp_l = t["arrival"].tolist(), t["work"].tolist(), t["gpus"].tolist()
        w_l, s_l = t["weight"].tolist(), t["single"].tolist()
        for i in range(n_rows):
            attrs = {c: extra_vals[c][i] for c in extra} if extra else None
            st = _stages(stages.get(ids[i]), work_l[i], ids[i])
            out.append(SimJob(ids[i], i, arr_l[i], work_l[i], gp_l[i], w_l[i], s_l[i], st, attrs))
        if "load_time" in t or "save_time" in t:
            lo, sa = t.get("load_time"), t.get("save_time")
            for i, sj in enumerate(out):
                sj.load_s = None if lo is None else lo[i]
                sj.save_s = None if sa is None else sa[i]
        return out
    if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Iterable):
        raise InvalidInstanceError(f"The 'jobs' argument must be a list of Job or a DataFrame; got {jobs!r}.")
    for i, j in enumerate(jobs):
        if not isinstance(j, Job):
            j = Job.from_dict(j, i) if isinstance(j, Mapping) else j
            if not isinstance(j, Job):
                raise InvalidInstanceError(f"Job at index {i} must be an optsched Job or a mapping; got {j!r}.")
        lim = largest if j.single_server else total
        if j.gpus > lim:
            raise InvalidInstanceError(
                f"The 'gpus' field of {j.label} must be at most {lim} "
                f"({'the largest server' if j.single_server else 'the cluster'}); got {j.gpus}. "
                f"Use a larger cluster or drop the job."
            )
        st = stages.get(j.id, j.attrs.get("stages") if j.attrs else None)
        sj = SimJob(j.id, i, j.arrival, j.work, j.gpus, j.weight, j.single_server, _stages(st, j.work, j.id), j.attrs)
        if j.resources:
            sj.resources = {r: float(a) for r, a in j.resources.items() if a > 0}
        sj.load_s, sj.save_s = j.load_time, j.save_time
        out.append(sj)
    if not out:
        raise InvalidInstanceError(_EMPTY)
    check_unique_ids([sj.id for sj in out], None)
    return out


def check_unique_ids(ids: list, column: str | None) -> None:
    """Refuse repeated job ids (both engines know a job by its id), naming the first one repeated;
    ``column`` is the job table's id column (None: the ids of a list of jobs).

    >>> check_unique_ids(["a", "b", "a"], "job_id")
    Traceback (most recent call last):
    ...
    optsched.exceptions.InvalidInstanceError: Job ids must be unique; the 'job_id' column has 'a' at rows 0 and 2 \
(1 repeated id(s) in all). Renumber the jobs, or drop the column (the rows are then numbered).
    """
    try:
        if len(set(ids)) == len(ids):
            return
    except TypeError:  # an unhashable id (a list): no engine could key it
        bad = next(i for i, jid in enumerate(ids) if not isinstance(jid, Hashable))
        raise InvalidInstanceError(
            f"Job ids must be numbers or strings; the id of job {bad} is {ids[bad]!r}."
        ) from None
    seen: dict[Any, int] = {}
    for i, jid in enumerate(ids):
        first = seen.setdefault(jid, i)
        if first != i:
            table = column is not None
            fix = "drop the column (the rows are then numbered)" if table else "give each job its own id"
            where = f"the '{column}' column has {jid!r} at rows" if table else f"the jobs have id {jid!r} at positions"
            raise InvalidInstanceError(
                f"Job ids must be unique; {where} {first} and {i} "
                f"({len(ids) - len(set(ids)):,} repeated id(s) in all). Renumber the jobs, or {fix}."
            )


def is_table(jobs: Any) -> bool:
    """Whether ``jobs`` is a job table: a DataFrame (has ``.columns``) or a mapping of equal-length
    columns with an ``arrival`` column (no pandas needed)."""
    return hasattr(jobs, "columns") or (isinstance(jobs, Mapping) and "arrival" in jobs)


def count_jobs(jobs: Any) -> int:
    """How many jobs ``jobs`` holds, without converting it: a table's rows, a list's length (0 when
    it cannot tell: a generator, or input :func:`make_jobs` will refuse).

    >>> count_jobs({"arrival": [0.0, 1.0], "gpus": [1, 1], "work": [2.0, 2.0]}), count_jobs([])
    (2, 0)
    """
    try:
        if is_table(jobs):
            return len(jobs) if hasattr(jobs, "columns") else len(jobs["arrival"])
        return len(jobs)
    except TypeError:
        return 0


def _col(df: Any, name: str, dtype: Any = None) -> np.ndarray:
    c = df[name]
    if dtype is float:  # a yes/no value is not a number here (Job(gpus=True) is refused too)
        if hasattr(c, "dtype"):  # an array or a Series: only booleans or objects may hold one
            values = c.tolist() if getattr(c.dtype, "kind", None) in ("b", "O") else None
        else:  # a plain sequence: its items as given
            values = list(c) if isinstance(c, Iterable) else None
        if values is not None:
            bad = next((i for i, v in enumerate(values) if isinstance(v, (bool, np.bool_))), None)
            if bad is not None:
                raise InvalidInstanceError(
                    f"The '{name}' column of the job table must hold numbers; row {bad} has {values[bad]!r} "
                    f"(a yes/no value). Fix or drop those rows."
                )
    try:
        a = c.to_numpy(dtype=dtype) if hasattr(c, "to_numpy") else np.asarray(c, dtype=dtype)
        if a.ndim == 1:
            return a
    except (TypeError, ValueError):  # text, lists or None in a column of numbers
        pass
    # (a mapping's column of equal-length lists converts to a 2-D array without an error)
    i, v = _first_bad(c.tolist() if hasattr(c, "tolist") else list(c), dtype)
    raise InvalidInstanceError(
        f"The '{name}' column of the job table must hold numbers; row {i} has {v!r}. Fix or drop those rows."
    )


def _first_bad(values: list, dtype: Any) -> tuple[int, Any]:
    """The first (row, value) of ``values`` that does not convert to ``dtype``."""
    for i, v in enumerate(values):
        try:
            if np.ndim(v) != 0:  # a list or array in a cell, even of one number
                return i, v
            np.asarray(v, dtype=dtype).item()
        except (TypeError, ValueError):
            return i, v
    return 0, values[0] if values else None  # pragma: no cover - converts one by one, not as a whole


def job_table_columns(table: Any, *, who: str = "", prefer: str = "work") -> tuple[list[str], str]:
    """A job table's column names and the column holding each job's work (``"work"`` or
    ``"duration"``, seconds at rate 1; ``prefer`` says which when it has both), checked: it must have
    ``arrival``, ``gpus`` and one of the two. ``who`` names what needs them, for the message (e.g.
    "the A-SRPT policies"): the one check of the simulator and of every paper's enrichment.

    Raises
    ------
    InvalidInstanceError
        A missing column (the message names it, what needs it and the columns the table has).

    Examples
    --------
    >>> job_table_columns({"arrival": [0], "gpus": [1], "duration": [5.0]})
    (['arrival', 'gpus', 'duration'], 'duration')
    """
    columns = list(table.columns) if hasattr(table, "columns") else list(table)
    need = f", which {who} need" if who else ""
    for c in ("arrival", "gpus"):
        if c not in columns:
            raise InvalidInstanceError(
                f"The job table has no '{c}' column{need}; give 'arrival' (s), 'gpus' and 'work' or 'duration' (s) "
                f"(columns: {columns})."
            )
    other = "duration" if prefer == "work" else "work"
    wcol = prefer if prefer in columns else other if other in columns else None
    if wcol is None:
        raise InvalidInstanceError(
            f"The job table has neither a 'work' nor a 'duration' column (seconds){need}; add one (columns: {columns})."
        )
    return columns, wcol


def table_columns(df: Any, cluster: Cluster, *, attrs_columns: Sequence[str] = ()) -> dict[str, Any]:
    """A job table's columns, validated, as NumPy arrays: what :func:`make_jobs` builds SimJobs
    from, and what the compiled engine reads directly. Keys: ``ids`` (list), ``columns`` (the
    table's column names), ``arrival``, ``work``, ``gpus`` (int64), ``weight``, ``single`` (bool),
    and ``load_time`` / ``save_time`` (lists) if the table has them.

    Raises
    ------
    InvalidInstanceError
        A missing column, no rows, a bad value (the message names the column, the job, the value
        and the fix), a job larger than the cluster, or ``attrs_columns`` naming a column the table
        lacks.
    """
    total, largest = cluster.total_gpus, cluster.max_server_gpus
    columns, wcol = job_table_columns(df)
    if not hasattr(df, "columns"):  # a mapping of columns: check they line up (a DataFrame does)
        single = [c for c in columns if isinstance(df[c], (str, bytes)) or not hasattr(df[c], "__len__")]
        if single:
            raise InvalidInstanceError(
                f"The '{single[0]}' column of the job table is one value ({df[single[0]]!r}), not a column: give "
                f"each column as a list, one value per job (e.g. {{'arrival': [0.0], 'gpus': [1], 'duration': [5.0]}})."
            )
        lengths = {c: len(df[c]) for c in columns}
        if len(set(lengths.values())) > 1:
            raise InvalidInstanceError(f"The columns of the job table have different lengths: {lengths}.")
    idcol = "job_id" if "job_id" in columns else "id" if "id" in columns else None
    arr = _col(df, "arrival", float)
    n_rows = len(arr)
    if n_rows == 0:
        raise InvalidInstanceError(_EMPTY)
    work = _col(df, wcol, float)
    weight = _col(df, "weight", float) if "weight" in columns else np.ones(n_rows)
    single = _col(df, "single_server", bool) if "single_server" in columns else np.zeros(n_rows, bool)
    ids = _col(df, idcol).tolist() if idcol else list(range(n_rows))
    if idcol:
        check_unique_ids(ids, idcol)
    _check_array(
        "arrival",
        arr,
        ids,
        lambda a: np.isfinite(a) & (a >= 0) & (a <= MAX_ARRIVAL),
        f"a number of seconds in [0, {MAX_ARRIVAL:g}] ({LIMITS_DOC})",
    )
    _check_array(
        wcol,
        work,
        ids,
        lambda a: np.isfinite(a) & (a >= MIN_SECONDS) & (a <= MAX_SECONDS),
        f"a number of seconds in [{MIN_SECONDS:g}, {MAX_SECONDS:g}] ({LIMITS_DOC})",
    )
    _check_array(
        "weight",
        weight,
        ids,
        lambda a: np.isfinite(a) & (a > 0) & (a <= MAX_WEIGHT),
        f"a number in (0, {MAX_WEIGHT:g}]",
    )
    gpf = _col(df, "gpus", float)
    _check_array("gpus", gpf, ids, lambda a: np.isfinite(a) & (a >= 1) & (a == np.round(a)), "an integer >= 1")
    gpi = gpf.astype(np.int64)
    lim = np.where(single, largest, total)
    bad = np.nonzero(gpi > lim)[0]
    if len(bad):
        i = int(bad[0])
        raise InvalidInstanceError(
            f"The 'gpus' field of job {ids[i]!r} must be at most {int(lim[i])} "
            f"({'the largest server' if single[i] else 'the cluster'}); got {int(gpi[i])}. Use a larger cluster "
            f"or drop the job ({len(bad)} job(s) are too large)."
        )
    missing = [c for c in attrs_columns if c not in columns]
    if missing:
        raise InvalidInstanceError(
            f"attrs_columns names {missing}, which the job table does not have; columns: {columns}."
        )
    out = {"ids": ids, "columns": columns, "arrival": arr, "work": work, "gpus": gpi, "weight": weight}
    out["single"] = single
    for c in ("load_time", "save_time"):
        if c in columns:
            a = _col(df, c, float)
            _check_array(c, a, ids, lambda a: np.isfinite(a) & (a >= 0), "a number of seconds >= 0")
            out[c] = a.tolist()
    return out


#: A simulation without jobs has no completion times: every job metric (mean JCT, percentiles,
#: queueing delay) would be NaN. Refused, as ``optsched simulate`` refuses an empty workload.
_EMPTY = (
    "The simulator got no jobs (an empty list or a job table without rows): there is nothing to simulate "
    "and every job metric would be undefined (NaN). Give at least one job, or skip the run when a filter "
    "leaves none."
)


def _check_array(name: str, a: np.ndarray, ids: list, ok: Callable[[np.ndarray], np.ndarray], what: str) -> None:
    with np.errstate(invalid="ignore"):
        good = ok(a)
    bad = np.nonzero(~good)[0]
    if len(bad):
        i = int(bad[0])
        raise InvalidInstanceError(
            f"The '{name}' field of job {ids[i]!r} must be {what}; got {float(a[i])!r} "
            f"({len(bad)} row(s) are invalid). Fix or drop those rows."
        )


def _stages(st: Sequence[float] | None, work: float, jid: Any) -> tuple[float, ...] | None:
    """Cumulative stage ends from per-stage work amounts (None: one stage)."""
    if st is None:
        return None
    try:
        parts = [float(x) for x in st]
    except (TypeError, ValueError):
        raise InvalidInstanceError(
            f"The 'stages' of job {jid!r} must be a list of positive numbers; got {st!r}."
        ) from None
    if not parts or any(not (p > 0 and math.isfinite(p)) for p in parts):
        raise InvalidInstanceError(
            f"The 'stages' of job {jid!r} must be a non-empty list of positive numbers (work per stage); got {st!r}."
        )
    cum = list(np.cumsum(parts))
    if abs(cum[-1] - work) > 1e-9 * max(1.0, work):
        raise InvalidInstanceError(
            f"The 'stages' of job {jid!r} add up to {cum[-1]:g}; they must add up to its work {work:g}."
        )
    cum[-1] = work
    return tuple(float(c) for c in cum)
