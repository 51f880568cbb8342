"""Model-size guard: exact builders estimate their size and refuse before exhausting memory.

Tested in ``tests/core/test_limits.py`` and ``tests/solvers/test_portfolio.py``.
"""

from __future__ import annotations

import os

from optsched.exceptions import InvalidOptionError, ModelTooLargeError

DEFAULT_MAX_SIZE = 2_000_000
"""Default limit on (variables + constraints) of an exact model; override with the environment
variable ``OPTSCHED_MAX_MODEL_SIZE`` or a builder's ``max_size=`` argument."""


def max_model_size() -> int:
    """The size limit (variables + constraints) of an exact model: ``OPTSCHED_MAX_MODEL_SIZE`` if set,
    else ``DEFAULT_MAX_SIZE``; builders refuse larger models (:func:`check_model_size`).

    Examples
    --------
    >>> from optsched.solvers import max_model_size
    >>> max_model_size() > 0
    True
    """
    v = os.environ.get("OPTSCHED_MAX_MODEL_SIZE", "").strip()
    if not v:
        return DEFAULT_MAX_SIZE
    try:
        limit = int(v.replace("_", "").replace(",", ""))
    except ValueError:
        limit = 0
    if limit < 1:
        raise InvalidOptionError(
            f"The environment variable OPTSCHED_MAX_MODEL_SIZE must be a whole number >= 1 (variables + "
            f"constraints, e.g. {DEFAULT_MAX_SIZE}); got {v!r}. Fix it, or unset it for the default."
        )
    return limit


def check_model_size(name: str, n_vars: int, n_cons: int, limit: int | None = None) -> int:
    """Raise :class:`ModelTooLargeError` if ``n_vars + n_cons`` exceeds the limit; return the size.

    Examples
    --------
    >>> from optsched.solvers import check_model_size
    >>> check_model_size("toy", n_vars=10, n_cons=5)
    15
    """
    limit = max_model_size() if limit is None else int(limit)
    size = int(n_vars) + int(n_cons)
    if size > limit:
        raise ModelTooLargeError(
            f"The {name} model would have about {n_vars:,} variables and {n_cons:,} constraints "
            f"({size:,} in all), above the limit of {limit:,}. Use a smaller instance or a coarser "
            f"'slot', or raise the limit with max_size= or OPTSCHED_MAX_MODEL_SIZE."
        )
    return size
