"""Units, stated once.

optsched's internal units are: time in **seconds**, data in **bytes**, bandwidth in
**bytes per second**, GPUs as integer counts. Exact time-indexed models use **slots** of
``Instance.slot`` seconds. Convert explicitly at the boundary with the helpers below.
"""

from __future__ import annotations

import math

from optsched.exceptions import InvalidInstanceError

SECOND = 1.0
MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0

BYTE = 1.0
KB = 1e3
MB = 1e6
GB = 1e9
KIB = 1024.0
MIB = 1024.0**2
GIB = 1024.0**3


def gbit_per_s(x: float) -> float:
    """Bandwidth in Gbit/s -> bytes/s (1 Gbit/s = 1.25e8 bytes/s)."""
    return float(x) * 1e9 / 8.0


def gbyte_per_s(x: float) -> float:
    """Bandwidth in GB/s (decimal) -> bytes/s."""
    return float(x) * 1e9


def to_slots(seconds: float, slot: float, *, what: str = "duration", exact: bool = True) -> int:
    """Convert seconds to an integer number of slots of ``slot`` seconds.

    With ``exact=True`` the value must be a whole number of slots (within 1e-9 relative);
    otherwise it is rounded up (a job needs its whole last slot).

    Raises
    ------
    InvalidInstanceError
        If ``exact`` and ``seconds`` is not a multiple of ``slot``.
    """
    q = float(seconds) / float(slot)
    r = round(q)
    if abs(q - r) <= 1e-9 * max(1.0, abs(q)):
        return int(r)
    if exact:
        raise InvalidInstanceError(
            f"The {what} {seconds!r} s is not a whole number of slots of {slot!r} s; "
            f"choose a 'slot' that divides every time in the instance, or round the data."
        )
    return int(math.ceil(q - 1e-9))


def fmt_number(v: float, digits: int = 6) -> str:
    """``digits`` significant digits, but never fewer than the integer part has.

    A whole number prints in full (a CP-SAT objective 10000018 stays 10000018, not 1e+07); a
    fraction with ``digits`` or more integer digits keeps them all and one decimal. Exponents appear
    only for magnitudes of 1e15 and more and for tiny fractions.

    Examples
    --------
    >>> fmt_number(10000018.0), fmt_number(1234567.25), fmt_number(0.123456789), fmt_number(2.5e307)
    ('10000018', '1234567.2', '0.123457', '2.5e+307')
    """
    v = float(v)
    if not math.isfinite(v) or abs(v) >= 1e15:
        return f"{v:.{digits}g}"
    if v.is_integer():
        return str(int(v))
    int_digits = len(str(int(abs(v))))
    if int_digits >= digits:
        return f"{v:.1f}"
    return f"{v:.{digits}g}"
