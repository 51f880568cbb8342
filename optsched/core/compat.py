"""Old call forms kept working for a while, each with one :class:`DeprecationWarning`."""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from optsched.exceptions import InvalidOptionError

__all__ = [
    "deprecated_positional",
    "deprecated_alias",
    "user_stacklevel",
    "DEPRECATED_SINCE",
    "REMOVED_IN",
]

#: The release that deprecates the former names and call forms, and the one that removes them
#: (docs/conventions.md#deprecated lists them).
DEPRECATED_SINCE = "0.2.0"
REMOVED_IN = "0.3.0"


def deprecated_positional(
    who: str, args: Sequence[Any], names: Sequence[str], given: Mapping[str, Any], *, stacklevel: int = 3
) -> dict[str, Any]:
    """Map the old positional ``args`` of ``who`` onto keyword ``names`` (warning once per call).

    ``given`` holds the keywords passed as well; a name given both ways is an error.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     deprecated_positional("f", (2, 4), ("n_servers", "gpus_per_server"), {})
    {'n_servers': 2, 'gpus_per_server': 4}
    >>> w[0].category.__name__, str(w[0].message)
    ('DeprecationWarning', 'f(..., 2, 4) is deprecated: pass n_servers=2, gpus_per_server=4 by keyword.')
    """
    if not args:
        return {}
    if len(args) > len(names):
        raise InvalidOptionError(
            f"{who} takes at most {len(names)} option(s) by position ({', '.join(names)}), "
            f"deprecated; got {len(args)}. Pass them by keyword."
        )
    out = dict(zip(names, args, strict=False))
    both = [n for n in out if given.get(n) is not None]
    if both:
        raise InvalidOptionError(
            f"{who} got {', '.join(both)} both by position and by keyword; pass it by keyword only."
        )
    shown = ", ".join(f"{n}={v!r}" for n, v in out.items())
    warnings.warn(
        f"{who}(..., {', '.join(map(repr, args))}) is deprecated: pass {shown} by keyword.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return out


def deprecated_alias(who: str, old: str, new: str, value: Any, *, stacklevel: int = 3) -> Any:
    """Warn that option ``old`` of ``who`` is now ``new``; return ``value``."""
    warnings.warn(f"The '{old}' option of {who} is deprecated; use '{new}'.", DeprecationWarning, stacklevel=stacklevel)
    return value


def user_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn`, called from the function that warns, that names
    the first caller outside optsched (the user's line, not a line deep in the package), whatever
    the depth of the calls between.

    >>> import warnings
    >>> def f():
    ...     warnings.warn("look here", UserWarning, stacklevel=user_stacklevel())
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f()
    >>> w[0].filename.endswith("compat.py")
    False
    """

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    here = inspect.currentframe()
    frame, level = (here.f_back if here is not None else None), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
