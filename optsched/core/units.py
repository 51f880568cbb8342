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
