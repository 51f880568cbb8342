"""Result folders and tables: checked before any work, each file written atomically as soon as
it is ready, so a run that fails late keeps what it finished.

One run per folder: :func:`prepare_out_dir` takes the folder for this process (a lock file,
``.optsched.lock``, held with an OS lock until :func:`release_out_dir` or the process ends; a
lock left by a process that died is taken over), so a second run into it is refused with the
reason. Every file written there through :func:`optsched.core.io.atomic_write` (tables,
``summary.json``, pictures, schedules) is recorded in ``.optsched-files.json`` before it is
written; ``force=True`` (``--force``) removes the files an earlier run recorded there, and only
those, before the new run writes; it never writes over a file that record does not list (the run
is refused naming the file), and a folder holding the run's own input is refused with or
without it. An empty or blank folder name is refused (``--out "$OUT"`` with ``OUT`` unset).

>>> import tempfile, pandas as pd
>>> d = prepare_out_dir(tempfile.mkdtemp() + "/run")
>>> [p.name for p in write_table(pd.DataFrame({"a": [1, 2]}), d, "t", formats=("csv", "json"))]
['t.csv', 't.json']
>>> recorded_files(d)
['t.csv', 't.json']
>>> release_out_dir(d)

Tested in ``tests/cli/test_out_folder.py`` and ``tests/cli/test_faults.py``.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import tempfile
import time
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

from optsched.core import io as _io
from optsched.core.io import atomic_write
from optsched.exceptions import InvalidOptionError, write_error

#: File formats a result table can be written in.
TABLE_FORMATS = ("csv", "json", "parquet")
#: The lock file of a result folder in use, and the record of the files a run wrote there.
LOCK_NAME, MANIFEST_NAME = ".optsched.lock", ".optsched-files.json"


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


def prepare_out_dir(
    path: str | Path,
    *,
    force: bool = False,
    option: str = "--out",
    command: str | None = None,
    inputs: Iterable[str | Path | None] = (),
) -> Path:
    """Check, take and create a result folder before any computation.

    An existing file is refused (``--out`` is a folder); a folder another run is writing into is
    refused (its lock is held: the message says which process); an existing folder with files is
    refused unless ``force``, which first removes the files an earlier optsched run recorded
    there (other files stay, and writing over one of them later is refused naming it; a folder
    without that record is refused, naming a file in it); a folder holding one of ``inputs``
    (the files the run reads) is refused; an empty or blank ``path`` is refused; a folder that
    cannot be written is refused. The folder stays taken until
    :func:`release_out_dir` (the command line releases it when the command ends) or the end of
    the process; taking it again in the same process is allowed. ``command`` is shown to a
    second run that finds the folder taken. Returns the folder.

    Raises
    ------
    InvalidOptionError
        With the path, what is wrong and the fix.
    """
    check_out_name(path, option=option)
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise InvalidOptionError(f"{option} {str(p)!r} is a file; {option} names a folder. Give a folder path.")
    _refuse_inputs_inside(p, inputs, option)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidOptionError(
            f"{option} {str(p)!r} cannot be created ({e.strerror}); give a writable folder."
        ) from None
    if not os.access(p, os.W_OK):
        raise InvalidOptionError(f"{option} {str(p)!r} is not writable; give a writable folder.")
    release_out_dir(p)  # this process took it before (a loop, a notebook): take it anew
    held = _Lock.take(p, option, command)
    try:
        theirs = sorted(x.name for x in p.iterdir() if x.name not in (LOCK_NAME, MANIFEST_NAME))
        if theirs and not force:
            raise InvalidOptionError(
                f"{option} {str(p)!r} already exists and is not empty ({_some(theirs)}); give a new folder, or "
                f"add --force to replace the files an earlier optsched run wrote there."
            )
        if force and theirs:
            _clear_recorded(p, option, theirs)
            held.foreign = set(_files_under(p))  # what stays is not optsched's: never written over
        held.option = option
        held.start_record()
    except BaseException:
        held.release()
        raise
    _HELD[_key(p)] = held
    return p


def release_out_dir(path: str | Path) -> None:
    """Give up a folder taken by :func:`prepare_out_dir` (nothing happens for another one). The
    record of the files written stays."""
    held = _HELD.pop(_key(Path(path).expanduser()), None)
    if held is not None:
        held.release()


def release_out_dirs() -> None:
    """Give up every folder this process took (the command line calls it when a command ends)."""
    for k in list(_HELD):
        held = _HELD.pop(k, None)
        if held is not None:
            held.release()


def recorded_files(path: str | Path) -> list[str]:
    """The files (relative paths) that the last run recorded in ``path``, in the order written."""
    try:
        doc = json.loads((Path(path).expanduser() / MANIFEST_NAME).read_text(encoding="utf-8"))
        files = doc.get("files", []) if isinstance(doc, dict) else []
        return [f for f in files if isinstance(f, str)]
    except (OSError, ValueError):
        return []


def _key(p: Path) -> str:
    return os.path.realpath(p)


def _some(names: list[str], k: int = 3) -> str:
    more = f" and {len(names) - k:,} more" if len(names) > k else ""
    return ", ".join(repr(n) for n in names[:k]) + more


def check_out_name(path: str | Path | None, *, option: str = "--out") -> None:
    """Refuse an empty or blank folder name (``--out "$OUT"`` with ``OUT`` unset would otherwise
    mean "no folder" and save nothing, or the current folder)."""
    if path is not None and not str(path).strip():
        raise InvalidOptionError(
            f'{option} {str(path)!r} is empty: give a folder path (an unset shell variable in {option} "$OUT"?), '
            f"or leave {option} out to write nothing."
        )


def out_folder_arg(value: str) -> str:
    """An ``argparse`` ``type=`` for a result-folder option: a blank name is a usage error (exit 2)."""

    try:
        check_out_name(value)
    except InvalidOptionError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--out ")) from None
    return value


def _refuse_inputs_inside(p: Path, inputs: Iterable[str | Path | None], option: str) -> None:
    """A file the run reads inside its own result folder would be written over or removed."""
    root = os.path.realpath(p)
    for f in inputs:
        if f is None or not str(f).strip() or not Path(f).expanduser().is_file():
            continue
        real = os.path.realpath(Path(f).expanduser())
        if os.path.commonpath([root, real]) == root:
            raise InvalidOptionError(
                f"{option} {str(p)!r} holds the input {str(f)!r} of this run, which the results could write "
                f"over or --force remove; give another folder, or move the input out of it."
            )


def _files_under(p: Path) -> list[str]:
    """The files in ``p`` and its subfolders (relative paths), without the lock and the record."""
    out = []
    for dirpath, _dirs, files in os.walk(p):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), p)
            if rel not in (LOCK_NAME, MANIFEST_NAME):
                out.append(rel)
    return sorted(out)


def _clear_recorded(p: Path, option: str, theirs: list[str]) -> None:
    """``--force``: remove the files an earlier run recorded in ``p`` (and its temporary files)."""
    names = recorded_files(p)
    if not (p / MANIFEST_NAME).exists():
        raise InvalidOptionError(
            f"{option} {str(p)!r} has no record of an earlier optsched run ({_some(theirs)} and the rest are not "
            f"optsched's to remove); --force replaces only the files such a record lists. Remove the files, "
            f"or give another folder."
        )
    root = os.path.realpath(p)
    for name in names:
        f = Path(os.path.realpath(p / name))
        if os.path.commonpath([root, str(f)]) != root or f.is_dir():  # a record never reaches outside
            continue
        with suppress(FileNotFoundError):
            f.unlink()
        for tmp in f.parent.glob(f".{f.name}.*.tmp"):  # left by a run that was killed while writing
            with suppress(FileNotFoundError):
                tmp.unlink()


class _Lock:
    """A taken result folder: the lock file's descriptor (an OS lock on it while open) and the
    record of the files written."""

    def __init__(self, folder: Path, fd: int | None) -> None:
        self.folder, self.fd, self.recording = folder, fd, False
        self.files: list[str] = []
        self.foreign: set[str] = set()  # files that were there and are not optsched's (--force keeps them)
        self.option = "--out"
        self.root = os.path.realpath(folder)
        self.pid = os.getpid()  # a forked child (a worker) inherits the lock: it never releases it

    @classmethod
    def take(cls, p: Path, option: str, command: str | None) -> _Lock:
        lock = p / LOCK_NAME
        me = {"pid": os.getpid(), "command": command or "python", "since": time.strftime("%Y-%m-%d %H:%M:%S")}
        try:
            import fcntl
        except ImportError:  # no fcntl (Windows): the lock file alone
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                raise InvalidOptionError(
                    _in_use(p, option, lock, _read_lock(lock)) + f" If no run is using it, remove {str(lock)!r}."
                ) from None
            os.write(fd, json.dumps(me).encode())
            return cls(p, fd)
        for _ in range(10):
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise InvalidOptionError(
                    f"{option} {str(p)!r} cannot be written ({e.strerror}); give a writable folder."
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise InvalidOptionError(_in_use(p, option, lock, _read_lock(lock))) from None
            try:  # the previous holder may have removed the file between our open and our lock
                same = os.path.samestat(os.fstat(fd), os.stat(lock))
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.write(fd, json.dumps(me).encode())
                return cls(p, fd)
            os.close(fd)
        raise InvalidOptionError(_in_use(p, option, lock, None))  # pragma: no cover - a lock taken and freed 10 times

    def start_record(self) -> None:
        self.files, self.recording = [], True
        self._save()

    def record(self, path: Path) -> None:
        if not self.recording:
            return
        rel = os.path.relpath(os.path.realpath(path.parent), self.root)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            return
        name = path.name if rel == os.curdir else str(Path(rel) / path.name)
        if name in self.foreign:
            raise InvalidOptionError(
                f"{self.option} {str(self.folder)!r}: {name!r} was not written by an earlier optsched run (the "
                f"folder's record does not list it), so --force does not write over it. Remove it, or give "
                f"another folder."
            )
        if name not in self.files and name not in (LOCK_NAME, MANIFEST_NAME):
            self.files.append(name)
            self._save()

    def _save(self) -> None:
        """The record, replaced atomically (not through atomic_write: it is not a result)."""
        target = self.folder / MANIFEST_NAME
        tmp = self.folder / f"{MANIFEST_NAME}.{os.getpid()}.tmp"
        doc = {"written_by": "optsched", "pid": os.getpid(), "files": self.files}
        try:
            tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
            os.replace(tmp, target)
        except OSError as e:
            with suppress(FileNotFoundError):
                tmp.unlink()
            raise write_error(target, e) from None

    def release(self) -> None:
        if self.fd is None or os.getpid() != self.pid:
            return
        self.recording = False
        with suppress(FileNotFoundError):
            (self.folder / LOCK_NAME).unlink()  # before the OS lock goes: a newcomer then finds no stale file
        with suppress(OSError):
            os.close(self.fd)
        self.fd = None


def _read_lock(lock: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(lock.read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) else None
    except (OSError, ValueError):
        return None


def _in_use(p: Path, option: str, lock: Path, who: dict[str, Any] | None) -> str:
    by = ""
    if who:
        by = f" (`optsched {who.get('command')}`, process {who.get('pid')}, since {who.get('since')})"
    return (
        f"{option} {str(p)!r} is in use by another optsched run{by}; two runs into one folder would mix their "
        f"files. Wait for it to end, or give another folder."
    )


#: Folders this process took: realpath -> _Lock.
_HELD: dict[str, _Lock] = {}


def _record(path: Path) -> None:
    """An :data:`optsched.core.io.WRITE_HOOKS` hook: record ``path`` in the folder taken that holds it."""
    if not _HELD:
        return
    parent = os.path.realpath(path.parent)
    for held in list(_HELD.values()):
        if parent == held.root or parent.startswith(held.root + os.sep):
            held.record(path)
            return


_io.WRITE_HOOKS.append(_record)
atexit.register(release_out_dirs)


def check_writable_file(path: str | Path, *, option: str, suffixes: Iterable[str] | None = None) -> Path:
    """Check, before any work, that a file can be written at ``path``: the suffix is one of
    ``suffixes`` (when given), the folder exists or can be created, and a file can be created in
    it (tried with a temporary file: permission bits alone do not tell, e.g. for root or /proc).

    Raises
    ------
    InvalidOptionError
        With the path, what is wrong and the fix.
    """

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
