"""Names, limits and unit conversions shared by every file of the elastic model: the kind and its
objective, the two architectures, the most chunks and milliseconds a job may carry, the guarded
ceiling of durations (``formulations/elastic.md#rho``) and pi / b in milliseconds. A leaf: it
imports nothing of the elastic package. Tested through ``tests/elastic/test_model.py``.
"""

from __future__ import annotations

import math

from optsched.core.limits import MAX_SECONDS

KIND = "elastic"
"""The instance kind of this package (``load_instance`` reads it from a file's ``kind``)."""
OBJECTIVE = "total_weighted_completion_time"
"""The objective of problem (2): the total weighted completion time (in slots)."""
ARCHITECTURES = ("ps", "rar")
#: ceil(x - CEIL_GUARD * max(1, x)): a whole number of slots stays whole despite binary rounding.
CEIL_GUARD = 1e-9
BANDWIDTH = "bandwidth"
#: Most data chunks D_j of a job (= the most workers it may use): the configurations of a job are
#: enumerated per worker count, so D_j bounds that loop (docs/instances.md#limits).
MAX_CHUNKS = 10_000
#: Longest per-mini-batch or update time in ms (MAX_SECONDS in ms).
MAX_MS = MAX_SECONDS * 1000.0


def transfer_ms(grad_mb: float, gbps: float) -> float:
    """pi / b in milliseconds for pi in MB (1e6 bytes) and b in Gbit/s: 8 pi / b.

    >>> transfer_ms(100.0, 10.0)
    80.0
    """
    return 8.0 * float(grad_mb) / float(gbps)


def guarded_ceil(x: float) -> int:
    """ceil(x) that keeps 15.000000000000002 at 15 (relative guard :data:`CEIL_GUARD`)."""
    return int(math.ceil(x - CEIL_GUARD * max(1.0, abs(x))))
