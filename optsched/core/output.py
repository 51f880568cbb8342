"""Result folders and tables: checked before any work, each file written atomically as soon as
it is ready, so a run that fails late keeps what it finished.

>>> import tempfile, pandas as pd
>>> d = prepare_out_dir(tempfile.mkdtemp() + "/run")
>>> [p.name for p in write_table(pd.DataFrame({"a": [1, 2]}), d, "t", formats=("csv", "json"))]
['t.csv', 't.json']
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from optsched.core.io import atomic_write
from optsched.exceptions import InvalidOptionError

__all__ = ["TABLE_FORMATS", "prepare_out_dir", "write_table", "check_formats", "check_writable_file"]

#: File formats a result table can be written in.
TABLE_FORMATS = ("csv", "json", "parquet")


def check_formats(formats: Iterable[str], *, option: str = "--format") -> tuple[str, ...]:
    """Validate table formats (before any work); parquet needs pyarrow."""
    out = tuple(str(f).lower() for f in formats)
    bad = [f for f in out if f not in TABLE_FORMATS]
    if bad:
        raise InvalidOptionError(f"{option} {bad[0]!r} is not a table format; choose from {list(TABLE_FORMATS)}.")
    if "parquet" in out:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InvalidOptionError(f"{option} parquet needs pyarrow: `pip install pyarrow`, or use csv.") from None
    return out


def prepare_out_dir(path: str | Path, *, force: bool = False, option: str = "--out") -> Path:
    """Check and create a result folder before any computation.

    An existing file is refused (``--out`` is a folder), an existing non-empty folder is refused
    unless ``force`` (its files with the same names are then replaced), a folder that cannot be
    written is refused. Returns the folder.

    Raises
    ------
    InvalidOptionError
        With the path, what is wrong and the fix.
    """
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise InvalidOptionError(f"{option} {str(p)!r} is a file; {option} names a folder. Give a folder path.")
    if p.is_dir() and any(p.iterdir()) and not force:
        raise InvalidOptionError(
            f"{option} {str(p)!r} already exists and is not empty; give a new folder, or "
            f"add --force to replace the files in it."
        )
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidOptionError(
            f"{option} {str(p)!r} cannot be created ({e.strerror}); give a writable folder."
        ) from None
    if not os.access(p, os.W_OK):
        raise InvalidOptionError(f"{option} {str(p)!r} is not writable; give a writable folder.")
    return p


def check_writable_file(path: str | Path, *, option: str, suffixes: Iterable[str] | None = None) -> Path:
    """Check, before any work, that a file can be written at ``path``: the suffix is one of
    ``suffixes`` (when given), the folder exists or can be created, and a file can be created in
    it (tried with a temporary file: permission bits alone do not tell, e.g. for root or /proc).

    Raises
    ------
    InvalidOptionError
        With the path, what is wrong and the fix.
    """
    import tempfile

    p = Path(path).expanduser()
    if suffixes is not None:
        ok = tuple(suffixes)
        if p.suffix.lower() not in ok:
            raise InvalidOptionError(
                f"{option} {str(p)!r} must end in {' or '.join(ok)} for this back end; got {p.suffix or 'no suffix'!r}."
            )
    if p.is_dir():
        raise InvalidOptionError(f"{option} {str(p)!r} is a folder; give a file name, e.g. {p / 'model'!s}{p.suffix}.")
    folder = p.parent
    for a in (folder, *folder.parents):  # the nearest existing ancestor must be a folder
        if a.exists():
            if not a.is_dir():
                raise InvalidOptionError(
                    f"{option} {str(p)!r} cannot be written: {str(a)!r} is a file, not a folder. Give another path."
                )
            break
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".optsched-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InvalidOptionError(
            f"{option} {str(p)!r} cannot be written: creating a file in {str(folder)!r} failed "
            f"({e.strerror or e}); give a path in a writable folder."
        ) from None
    return p


def write_table(df: Any, out_dir: str | Path, name: str, *, formats: Iterable[str] = ("csv",)) -> list[Path]:
    """Write a DataFrame as ``out_dir/name.<fmt>`` for each format, each file atomically."""
    paths = []
    for fmt in check_formats(formats):
        target = Path(out_dir) / f"{name}.{fmt}"
        if fmt == "csv":
            paths.append(atomic_write(target, lambda t: df.to_csv(t, index=False)))
        elif fmt == "json":
            paths.append(atomic_write(target, lambda t: df.to_json(t, orient="records", indent=1)))
        else:
            paths.append(atomic_write(target, lambda t: df.to_parquet(t, index=False)))
    return paths
