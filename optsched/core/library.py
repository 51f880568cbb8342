"""The instance library shipped inside the package (``optsched/instances/``).

Instances are named ``<collection>:<name>`` where the collection is ``toy``, or ``papers/<key>``
(for example ``toy:rigid-2x2-five``, ``papers/asrpt:lemma1-counterexample``). A bare name is
looked up in every collection and must be unique. Files are read with
:mod:`importlib.resources`, so the library works from an installed wheel in any folder.

>>> instance_path("toy:rigid-2x2-five").name
'rigid-2x2-five.json'
>>> "toy:sojourn-two-jobs" in [r["name"] for r in list_instances()]
True
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from optsched.core.paths import check_path_arg, is_library_name
from optsched.exceptions import InvalidInstanceError, UnknownNameError


def library_root() -> Path:
    """The folder of the shipped instance library (inside the installed package)."""
    return Path(str(files("optsched") / "instances"))


def _collections() -> list[str]:
    root = library_root()
    out = []
    for p in sorted(root.rglob("*.json")):
        coll = p.parent.relative_to(root).as_posix()
        if coll not in out:
            out.append(coll)
    return out


def list_instances(collection: str | None = None) -> list[dict[str, Any]]:
    """Every shipped instance: ``name`` (``collection:stem``), ``kind``, ``n_jobs`` and ``path``."""
    root = library_root()
    rows = []
    for p in sorted(root.rglob("*.json")):
        coll = p.parent.relative_to(root).as_posix()
        if collection is not None and coll != collection:
            continue
        try:
            d = json.loads(p.read_text())
            kind, n_jobs = d.get("kind", "rigid"), len(d.get("jobs", []))
        except (OSError, ValueError):  # pragma: no cover - shipped files are tested
            kind, n_jobs = "?", 0
        rows.append({"name": f"{coll}:{p.stem}", "kind": kind, "n_jobs": n_jobs, "path": p})
    return rows


def instance_path(name: str) -> Path:
    """Path of a shipped instance from ``collection:name`` or a bare unique name.

    Raises
    ------
    UnknownNameError
        No such instance (the message lists the collections and how to list the names).
    """
    root = library_root()
    s = str(name).removesuffix(".json")
    if ":" in s:
        coll, stem = s.split(":", 1)
        p = root / coll / f"{stem}.json"
        # only a collection's own files: no '..', no sub-path, nothing outside the library
        if coll in _collections() and _plain(stem) and p.is_file():
            return p
        hits: list[Path] = []
    elif not _plain(s):
        hits = []
    else:
        hits = sorted(root.rglob(f"{s}.json"))
        if len(hits) == 1:
            return hits[0]
    if len(hits) > 1:
        names = [f"{h.parent.relative_to(root).as_posix()}:{h.stem}" for h in hits]
        raise UnknownNameError(f"Instance name {name!r} is ambiguous: {names}. Give it as collection:name.")
    raise UnknownNameError(
        f"No shipped instance {name!r}. Collections: {_collections()}; list the names with "
        f"`optsched instances` (or optsched.core.library.list_instances())."
    )


def _plain(stem: str) -> bool:
    """A file name alone: no folder part, no '..', no glob pattern."""
    return bool(stem) and not any(c in stem for c in "/\\*?[]") and stem not in (".", "..")


def resolve_instance(text: str | Path) -> Path:
    """A file path as given, or the shipped instance it names (``toy:rigid-2x2-five``).

    An existing file wins over a library name; a directory is reported as such.
    """
    check_path_arg(text)
    p = Path(text)
    if p.is_file():
        return p
    if p.is_dir():
        raise InvalidInstanceError(
            f"{str(p)!r} is a directory, not an instance file: give a .json file or a "
            f"shipped name such as toy:rigid-2x2-five (`optsched instances` lists them)."
        )
    if is_library_name(str(text)) or (not p.suffix and p.parent == Path(".")):
        return instance_path(str(text))
    return p
