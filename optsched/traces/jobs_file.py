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
import csv
import gzip
import itertools
import os
import re
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from optsched.core.limits import LIMITS_DOC, MAX_ARRIVAL, MAX_SECONDS, MIN_SECONDS
from optsched.exceptions import InvalidOptionError, TraceFormatError

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


#: Field separators a spreadsheet may write instead of commas (regional settings, "text" export).
_OTHER_DELIMITERS = {";": "';'", "\t": "tabs", "|": "'|'"}
_THOUSANDS_HEAD = re.compile(r"-?\d{1,3}")
_THOUSANDS_TAIL = re.compile(r"\d{3}(\.\d*)?")
_THOUSANDS_TEXT = re.compile(r"-?\d{1,3}(,\d{3})+(\.\d*)?")


def _other_delimiter(header_fields: list[str]) -> str | None:
    """The separator a one-field header seems to use instead of commas (``"';'"``, ``"tabs"``), or None."""
    if len(header_fields) != 1:
        return None
    counts = {d: str(header_fields[0]).count(d) for d in _OTHER_DELIMITERS}
    d = max(counts, key=lambda k: counts[k])
    return _OTHER_DELIMITERS[d] if counts[d] else None


def _field_count_cause(header: list[str], row: list[str], last: bool) -> str:
    """Why a row has another number of fields than the header, in the words of the fix."""
    delim = _other_delimiter(header)
    if delim is not None:
        return (
            f"the file separates its fields with {delim}, not commas (a spreadsheet's regional setting); save it "
            f"as comma-separated CSV"
        )
    n = len(header)
    if len(row) > n and all(not f.strip() for f in row[n:]):
        return "trailing commas at the end of the row; remove them (or give the extra columns a header)"
    if len(row) > n:
        if any(_THOUSANDS_HEAD.fullmatch(a) and _THOUSANDS_TAIL.fullmatch(b) for a, b in itertools.pairwise(row)):
            return (
                "numbers written with thousands separators (such as 3,600), which split one number into two fields; "
                "write numbers without separators (3600), or quote those fields"
            )
        return (
            "a comma inside a field that is not quoted (a decimal comma such as 3,5, or text with commas); write "
            "numbers with a decimal point (3.5) and quote text that holds commas"
        )
    if last:
        return "the last row is cut short: the file ends early (an interrupted download or copy?)"
    return "a missing field; write an empty field between two commas (0,,5) rather than leaving it out"


def _csv_lines(p: Path, gz: bool) -> list[int]:
    """The line number of every data row of the CSV file ``p`` (blank lines skipped, as pandas does),
    after checking that each has as many fields as the header.

    Raises
    ------
    TraceFormatError
        A row with another number of fields (the message names its line and the likely cause), a
        compressed file cut short, bytes that are not UTF-8 text.
    """
    lines: list[int] = []
    header: list[str] | None = None
    bad: tuple[int, list[str]] | None = None
    last = True
    try:
        with (gzip.open if gz else open)(p, "rt", encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f)
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue  # a blank line, skipped as pandas skips it
                if bad is not None:  # another row follows the bad one
                    last = False
                    break
                if header is None:
                    header = row
                elif len(row) != len(header):
                    bad = (reader.line_num, row)
                else:
                    lines.append(reader.line_num)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise TraceFormatError(
            f"{p}: the file ends early (an interrupted download?): {e}. Download or copy it again."
            if isinstance(e, EOFError)
            else f"{p}: cannot be read as a gzip-compressed CSV ({e}); give the file as written (.csv or .csv.gz)."
        ) from None
    except UnicodeDecodeError as e:
        raise TraceFormatError(
            f"{p}: byte {e.start} is not UTF-8 text ({e.reason}); save the file as CSV UTF-8."
        ) from None
    except csv.Error as e:
        raise TraceFormatError(f"{p}: cannot be read as CSV ({e}).") from None
    if bad is not None and header is not None:
        line, row = bad
        raise TraceFormatError(
            f"{p}: line {line} has {len(row)} field(s) but the header has {len(header)}: "
            f"{_field_count_cause(header, row, last)}. Nothing was read."
        )
    return lines


def _is_bool(series: Any) -> Any:
    """A mask of the cells of ``series`` that are yes/no values (``True``, ``numpy.bool_``)."""
    import numpy as np

    if series.dtype == bool:
        return np.ones(len(series), dtype=bool)
    if series.dtype == object:
        return series.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
    return np.zeros(len(series), dtype=bool)


def arrival_id_order(arrival: Any, ids: list) -> Any:
    """Row order by (arrival, id), stable: ids compared as numbers when all are numbers, else as text.

    >>> arrival_id_order([5.0, 0.0, 5.0], ["b", "c", "a"]).tolist()
    [1, 2, 0]
    """
    import numpy as np

    if all(isinstance(i, (int, float, np.integer, np.floating)) and not isinstance(i, bool) for i in ids):
        key = np.asarray(ids, dtype=float)
    else:
        key = np.asarray([str(i) for i in ids])
    return np.lexsort((key, np.asarray(arrival, dtype=float)))


def check_job_table(
    raw: Any,
    *,
    columns: str | Mapping[str, str] | None = None,
    source: str = "The job table",
    where: Callable[[int], str] | None = None,
    keep_other: bool = True,
    error: type[Exception] = TraceFormatError,
):
    """A job table (a DataFrame, or a mapping of columns) checked and put in the simulator's form.

    The one check of a job table, whether it came from a CSV file, a Parquet file or a DataFrame:
    columns ``arrival``, ``gpus`` and ``duration`` (or ``work``) must be there and hold numbers in
    range (never yes/no values, never lists); job ids must be given for every row and different;
    the rows come back in (arrival, id) order, so that ties never depend on the order of the rows.

    Parameters
    ----------
    raw : DataFrame or mapping of columns
        The table as given.
    columns : str or mapping, optional
        Our column name -> the table's, for the columns whose names differ.
    source : str
        How messages name the table (a file's path).
    where : callable, optional
        Row position -> how a message names that row (a file's ``"line 7"``); default ``"row i"``.
    keep_other : bool
        Keep the table's other columns (a DataFrame's); a file keeps only the job-file columns.
    error : exception class
        What a bad table raises (a file: :class:`TraceFormatError`).

    Returns
    -------
    pandas.DataFrame
        ``job_id, arrival, duration, gpus`` (+ the optional job-file columns present, and the others
        with ``keep_other``), sorted by (arrival, id), index 0..n-1; ``attrs["rows_read"]``.

    Examples
    --------
    >>> check_job_table({"arrival": [5.0, 0.0], "gpus": [1, 2], "duration": [3.0, 4.0]})["job_id"].tolist()
    [1, 0]
    """
    import numpy as np
    import pandas as pd

    raw = raw if isinstance(raw, pd.DataFrame) else pd.DataFrame(raw)
    raw = raw.reset_index(drop=True)
    where = where or (lambda i: f"row {i}")
    mapping = parse_columns(columns)
    src = {ours: mapping.get(ours, ours) for ours in JOB_FILE_COLUMNS}
    missing = [src[c] for c in ("arrival", "gpus") if src[c] not in raw.columns]
    wcol = "work" if src["work"] in raw.columns else "duration" if src["duration"] in raw.columns else None
    if src["duration"] in raw.columns and src["work"] in raw.columns and "duration" not in mapping:
        wcol = "duration"  # a table with both: 'duration' is the processing time (as compare reads it)
    if wcol is None:
        missing.append(src["duration"])
    # a mapping to a name the table lacks, for a column the table has under our name: say that
    already = [(ours, yours) for ours, yours in mapping.items() if yours not in raw.columns and ours in raw.columns]
    if missing and already:
        ours, yours = already[0]
        raise error(
            f"{source}: --columns {ours}={yours} maps {ours!r} to a column {yours!r} the table does not have, but "
            f"it already has a column {ours!r}: drop {ours}={yours} from --columns (it has "
            f"{list(raw.columns)[:15]})."
        )
    if missing:
        delim = _other_delimiter([str(c) for c in raw.columns])
        cause = (
            f" The file separates its fields with {delim}, not commas (a spreadsheet's regional setting): save it as "
            f"comma-separated CSV."
            if delim is not None
            else ""
        )
        raise error(
            f"{source}: missing column(s) {missing}; it has {list(raw.columns)[:15]}.{cause} A job table needs "
            f"arrival, gpus and duration (or work); map other names with --columns arrival=YOURS,... "
            f"(columns={{'arrival': 'YOURS'}} in Python)."
        )
    if len(raw) == 0:
        raise error(f"{source}: the job table has no rows; give at least one job.")
    if src["job_id"] in raw.columns:
        ids = _checked_ids(raw[src["job_id"]], src["job_id"], source, where, error)
    else:
        ids = list(range(len(raw)))

    def column(ours: str, rule, what: str):
        col = src[ours]
        cells = raw[col]
        if cells.dtype == object:
            shapes = cells.map(np.ndim).to_numpy() != 0  # a list in a cell, even of one number
            if shapes.any():
                i = int(np.nonzero(shapes)[0][0])
                raise error(
                    f"{source}: column {col!r} (our {ours!r}) must hold one number per job; {where(i)} (job "
                    f"{_show(ids[i])}) has {cells.iloc[i]!r}. Fix or drop those rows."
                )
        values = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=float)
        text_bad = np.isnan(values) & cells.notna().to_numpy()
        with np.errstate(invalid="ignore"):
            bad = text_bad | ~rule(values) | _is_bool(cells)
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            v = cells.iloc[i]
            hint = ""
            if isinstance(v, (bool, np.bool_)):
                hint = " (a yes/no value, not a number)"
            elif isinstance(v, str) and _THOUSANDS_TEXT.fullmatch(v.strip()):
                hint = f" (a thousands separator: write {v.strip().replace(',', '')})"
            raise error(
                f"{source}: column {col!r} (our {ours!r}) must be {what}; {where(i)} (job {_show(ids[i])}) has "
                f"{_show(v)}{hint} ({int(bad.sum())} bad row(s)). Fix or drop those rows."
            )
        return values

    out = pd.DataFrame({"job_id": ids})
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
    out["duration"] = column(
        wcol,
        lambda a: np.isfinite(a) & (a >= MIN_SECONDS) & (a <= MAX_SECONDS),
        f"a number of seconds in [{MIN_SECONDS:g}, {MAX_SECONDS:g}] ({LIMITS_DOC})",
    )
    out["gpus"] = gpus.astype(np.int64)
    if wcol == "work":
        out["work"] = out["duration"]
    for c in ("user", "model"):  # a file's as text; a table's as given (None: not known)
        if src[c] in raw.columns:
            out[c] = raw[src[c]].to_numpy() if keep_other else raw[src[c]].astype(str).to_numpy()
    if src["status"] in raw.columns:  # as the trace loaders give it: lower case, empty when unknown
        st = raw[src["status"]]
        out["status"] = st.where(st.notna(), "").astype(str).str.strip().str.lower().to_numpy()
    for c in ("load_time", "save_time"):  # the simulator's per-job overheads (formulations/lazer.md R2)
        if src[c] in raw.columns:
            ok = lambda a: np.isfinite(a) & (a >= 0) & (a <= MAX_SECONDS)  # noqa: E731
            out[c] = column(c, ok, f"a number of seconds in [0, {MAX_SECONDS:g}]")
    if keep_other:
        used = {src[c] for c in JOB_FILE_COLUMNS if src[c] in raw.columns} | set(out.columns)
        for c in raw.columns:
            if c not in used:
                out[c] = raw[c].to_numpy()
    order = arrival_id_order(out["arrival"].to_numpy(), ids)
    if (order != np.arange(len(order))).any():
        out = out.iloc[order].reset_index(drop=True)
    out.attrs.update({"rows_read": len(raw)})
    return out


def _checked_ids(ids: Any, col: str, source: str, where: Callable[[int], str], error: type[Exception]) -> list:
    """A job-id column as a list of ids: every row has one (a blank or a yes/no value is refused, with the
    rows named), all different (the two rows of the first repeat named); numpy integers become ``int``."""
    import numpy as np

    blank = ids.isna().to_numpy()
    if ids.dtype == object:
        blank |= ids.map(lambda v: isinstance(v, str) and not v.strip()).to_numpy(dtype=bool)
    if blank.any():
        rows = np.nonzero(blank)[0]
        named = ", ".join(where(int(i)) for i in rows[:5]) + (", ..." if len(rows) > 5 else "")
        raise error(
            f"{source}: column {col!r} (our 'job_id') is empty at {named} ({len(rows):,} row(s)); give every job "
            f"an id, or leave the column out (the rows are then numbered)."
        )
    bools = _is_bool(ids)
    if bools.any():
        i = int(np.nonzero(bools)[0][0])
        raise error(
            f"{source}: column {col!r} (our 'job_id') must hold numbers or text; {where(i)} has {_show(ids.iloc[i])}."
        )
    values = ids.tolist()  # numpy integers become int, numpy strings str
    seen: dict[Any, int] = {}
    for i, v in enumerate(values):
        try:
            first = seen.setdefault(v, i)
        except TypeError:  # a list in a cell
            raise error(
                f"{source}: column {col!r} (our 'job_id') must hold numbers or text; {where(i)} has {v!r}."
            ) from None
        if first != i:
            n_rep = len(values) - len(set(values))
            raise error(
                f"{source}: column {col!r} (our 'job_id') must hold a different id for each job; {where(first)} and "
                f"{where(i)} both have {_show(v)} ({n_rep:,} repeated). Renumber the jobs, or leave the column out "
                f"(the rows are then numbered)."
            )
    return values


def read_jobs(path: str | Path, *, columns: str | Mapping[str, str] | None = None):
    """Read a CSV or Parquet job file into the simulator's job table (see the module docstring).

    Every row of a CSV file must have as many fields as its header: a row with more or fewer is
    refused, naming its line and the likely cause (numbers with thousands separators, trailing
    commas, another separator than commas, a file cut short), never read shifted. The checks of
    the values are those of :func:`check_job_table`, for CSV and Parquet alike.

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
        ``load_time``, ``save_time`` when given), sorted by (arrival, id);
        ``attrs["trace"] = "jobs-file"``.

    Raises
    ------
    TraceFormatError
        Missing file (or a folder), unreadable or truncated file, a row with another number of
        fields than the header, missing column, blank or repeated id, bad value.
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
    import pandas as pd

    parse_columns(columns)  # a malformed mapping is said before the file is read
    p = Path(path).expanduser()
    if p.is_dir():
        raise TraceFormatError(f"--jobs-csv {str(p)!r} is a folder; give a CSV or Parquet file.")
    if not p.is_file():
        raise TraceFormatError(
            f"Job file {str(p)!r} does not exist; give a CSV or Parquet file with columns arrival, gpus, duration."
        )
    name = p.name.lower()
    parquet = name.endswith((".parquet", ".pq"))
    lines: list[int] | None = None
    try:
        if parquet:
            raw = pd.read_parquet(p)
        else:
            lines = _csv_lines(p, gz=name.endswith(".gz"))
            raw = pd.read_csv(p, index_col=False, encoding="utf-8-sig")
    except TraceFormatError:  # said in full by the field check (a ValueError too)
        raise
    except EOFError:
        raise TraceFormatError(
            f"{p}: the file ends early (an interrupted download?). Download or copy it again."
        ) from None
    except (OSError, ValueError, pd.errors.ParserError) as e:
        raise TraceFormatError(f"{p}: cannot be read as {'Parquet' if parquet else 'CSV'} ({e}).") from None
    if lines is not None and len(lines) == len(raw):
        where = lambda i: f"line {lines[i]}"  # noqa: E731
    else:
        where = lambda i: f"row {i + 1}"  # noqa: E731
    out = check_job_table(raw, columns=columns, source=str(p), where=where, keep_other=False)
    out.attrs.update({"trace": "jobs-file", "source": str(p), "rows_read": len(raw)})
    return out
