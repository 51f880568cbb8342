"""The largest (and smallest) values an instance, a job table or a job file may hold.

Every field is checked against these at the boundary (the JSON schemas carry the same numbers
as ``maximum``; the constructors check them again for objects built in Python), so a value that
would overflow a solver, exhaust memory or make the verifier give up is refused when it is
loaded, with the field, the value and the fix, never half-way through a solve. Why each limit
has its value: ``docs/instances.md#limits``.

>>> MAX_SECONDS, MAX_SLOTS["rigid"]
(1000000000.0, 10000000)
>>> check_slots("rigid", 12, "the time-indexed horizon T")
12
"""

from __future__ import annotations

from optsched.exceptions import ModelTooLargeError

#: Where the limits and their reasons are documented (cited by every message about a limit).
LIMITS_DOC = "docs/instances.md#limits"

#: Longest work, duration, stage size, slot length or time horizon in seconds (about 31.7
#: years). The verifier compares times with an absolute tolerance of 1e-6 s; float64 resolves
#: 1e9 s to 1.2e-7 s, so sums of such times stay within the tolerance.
MAX_SECONDS = 1e9
#: Shortest work, duration or slot length in seconds: the verifier's time tolerance. A shorter
#: job cannot be told apart from no job by the checks.
MIN_SECONDS = 1e-6
#: Latest arrival (submission) time in seconds: room for Unix timestamps (until 2096); beyond
#: 4e9 s one float64 step (4.8e-7 s) nears the verifier's tolerance.
MAX_ARRIVAL = 4e9
#: Largest job weight: weighted objectives (sum of weight x completion time) stay far below
#: 2^63, the integer range of CP-SAT, and HiGHS's coefficients stay within 1e6 of each other.
MAX_WEIGHT = 1e6
#: Largest count of iterations, epochs, chunks or mini-batches of one job.
MAX_COUNT = 10**9
#: Most servers in a cluster (the largest GPU clusters have about 10^4 servers).
MAX_SERVERS = 100_000
#: Most GPUs on one server (real servers have 8-16; an abstract pool may have thousands).
MAX_SERVER_GPUS = 10_000
#: Largest amount of another resource (CPU cores, bytes of memory, bytes/s of network) per
#: server or job: 1e18 (an exabyte) keeps sums over every server finite.
MAX_AMOUNT = 1e18

#: Most time slots an instance of each kind may span, counted as its kind counts them:
#: ``rigid`` and ``asrpt`` - the horizon T of the time-indexed and CP-SAT models (latest
#: release + the sum of the jobs' slots; checked when an exact model is built, since the same
#: instance may be simulated at any length); ``elastic`` - the instance's ``horizon`` T;
#: ``rarddls`` - the serial horizon (the sum of the jobs' longest execution times), which the
#: verifier replays slot by slot (about 6 us per slot: 10^6 slots in 6 s). ``sojourn`` has no
#: slots (continuous time).
MAX_SLOTS: dict[str, int] = {"rigid": 10_000_000, "asrpt": 10_000_000, "elastic": 1_000_000, "rarddls": 1_000_000}


def hint(unit: str) -> str:
    """The hint of a bounded field's message: its unit and where the limits are explained.

    >>> hint("seconds")
    ' (seconds; limits: docs/instances.md#limits)'
    """
    return f" ({unit}; limits: {LIMITS_DOC})"


def check_slots(
    kind: str,
    slots: float,
    what: str,
    fix: str = "use a coarser 'slot' or a smaller instance",
    *,
    exc: type[Exception] = ModelTooLargeError,
) -> int:
    """Return ``slots`` if it is within :data:`MAX_SLOTS` of ``kind``, else raise ``exc``
    (default :class:`ModelTooLargeError`) naming the count, the limit and the fix."""
    limit = MAX_SLOTS[kind]
    if not slots <= limit:  # also NaN
        shown = f"{slots:,}" if isinstance(slots, int) else f"{slots:.4g}"
        raise exc(
            f"The {kind} instance spans {shown} slots ({what}), more than the {limit:,} an instance of kind "
            f"{kind!r} may span ({LIMITS_DOC}); {fix}."
        )
    return int(slots)
