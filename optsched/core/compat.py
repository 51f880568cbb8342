"""Where a warning points: the user's line, not a line deep in the package."""

from __future__ import annotations

import inspect
import os


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
