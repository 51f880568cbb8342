"""The two checks of a path argument that loading, the instance library and the kind registry share:
is it a path at all (:func:`check_path_arg`), and does it name a shipped instance
(:func:`is_library_name`). A leaf of :mod:`optsched.core`: it imports nothing of optsched but the
exceptions. Tested in ``tests/core/test_paths.py``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from optsched.exceptions import InvalidInstanceError, InvalidScheduleError


def is_library_name(text: str) -> bool:
    """True if ``text`` looks like ``collection:name`` (and not like a Windows drive path)."""
    s = str(text)
    return ":" in s and not s.endswith(".json") and len(s.split(":", 1)[0]) > 1


def check_path_arg(path: Any, *, what: str = "instance", func: str = "load_instance") -> None:
    """Raise :class:`InvalidInstanceError` (or :class:`InvalidScheduleError` for a schedule) unless
    ``path`` is a ``str`` or a path-like object, saying what to pass instead."""
    if isinstance(path, (str, os.PathLike)):
        return
    exc = InvalidScheduleError if what == "schedule" else InvalidInstanceError
    a = "an" if what[:1] in "aeiou" else "a"
    if hasattr(path, "kind") and hasattr(path, "jobs"):
        raise exc(
            f"{func} takes a file path, and got an instance object ({type(path).__name__}): it is loaded "
            f"already; use it as it is."
        )
    if isinstance(path, Mapping):
        raise exc(
            f"{func} takes a file path, not a dict; build {a} {what} from a dict with "
            + ("optsched.core.instance_from_dict(d)." if what == "instance" else "its class's from_dict(d).")
        )
    raise exc(
        f"{func} takes the path of {a} {what} JSON file (str or pathlib.Path)"
        + (
            " or a shipped name such as 'toy:rigid-2x2-five' (`optsched instances` lists them)"
            if what == "instance"
            else ""
        )
        + f"; got {path!r} ({type(path).__name__})."
    )
