"""Validation helpers: one place that words the error messages.

Every message names the field, its owner, the value and the fix, e.g.
``The 'gpus' field of job 7 must be an integer in [1, 8] (the largest server); got 0.``
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from optsched.exceptions import InvalidInstanceError


def where(owner: str | None) -> str:
    return f" of {owner}" if owner else ""


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def check_int(
    value: Any,
    field: str,
    owner: str | None = None,
    *,
    lo: int | None = None,
    hi: int | None = None,
    hint: str = "",
    exc: type[Exception] = InvalidInstanceError,
) -> int:
    """Return ``value`` as an ``int`` or raise ``exc`` naming field, owner, value and range."""
    if type(value) is int and (lo is None or value >= lo) and (hi is None or value <= hi):
        return value  # the common case, without the checks below (a large instance has millions)
    ok = _is_int(value) and (lo is None or value >= lo) and (hi is None or value <= hi)
    if not ok:
        rng = (
            f" in [{lo}, {hi}]"
            if lo is not None and hi is not None
            else f" >= {lo}"
            if lo is not None
            else f" <= {hi}"
            if hi is not None
            else ""
        )
        raise exc(f"The '{field}' field{where(owner)} must be an integer{rng}{hint}; got {value!r}.")
    return int(value)


def check_number(
    value: Any,
    field: str,
    owner: str | None = None,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hint: str = "",
    allow_inf: bool = False,
    exc: type[Exception] = InvalidInstanceError,
) -> float:
    """Return ``value`` as a finite ``float`` or raise ``exc`` with a precise message."""
    if type(value) is float or type(value) is int:  # the common case first (a large instance has millions)
        v = float(value)
        if (
            v == v  # not NaN
            and (allow_inf or -math.inf < v < math.inf)
            and (lo is None or (v > lo if lo_open else v >= lo))
            and (hi is None or v <= hi)
        ):
            return v
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = not math.isnan(v) and (allow_inf or math.isfinite(v))
        if ok and lo is not None:
            ok = v > lo if lo_open else v >= lo
        if ok and hi is not None:
            ok = v <= hi
    if not ok:
        parts = []
        if lo is not None:
            parts.append(f"{'>' if lo_open else '>='} {lo:g}")
        if hi is not None:
            parts.append(f"<= {hi:g}")
        rng = (" " + " and ".join(parts)) if parts else ""
        raise exc(f"The '{field}' field{where(owner)} must be a finite number{rng}{hint}; got {value!r}.")
    return float(value)


def check_bool(
    value: Any, field: str, owner: str | None = None, *, exc: type[Exception] = InvalidInstanceError
) -> bool:
    if value is True or value is False:
        return value
    if not isinstance(value, bool):
        raise exc(f"The '{field}' field{where(owner)} must be true or false; got {value!r}.")
    return value


def check_mapping(
    value: Any, field: str, owner: str | None = None, *, exc: type[Exception] = InvalidInstanceError
) -> dict:
    if value is None:
        return {}
    if type(value) is dict:
        return dict(value)
    if not isinstance(value, Mapping):
        raise exc(f"The '{field}' field{where(owner)} must be an object (mapping); got {value!r}.")
    return dict(value)
