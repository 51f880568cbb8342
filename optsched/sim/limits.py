"""A simulation's run limits and the errors that end a run, written once for both engines.

``Simulator.run(max_time=, max_events=)`` turns a livelock into an error instead of a hang; both
engines (the Python event loop, :mod:`optsched.sim.engine`, and the compiled kernel's driver,
:mod:`optsched.sim.compiled.driver`) take their limits from :func:`run_limits` and raise the errors
built here, so that the same run fails the same way, with the same message, on either.

Tested in ``tests/sim/test_limits_and_overheads.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from optsched.exceptions import InvalidOptionError, SimulationError, SimulationLimitError

#: Rounds of decisions at one simulated time after which a run is a livelock (a policy starting
#: and preempting the same jobs without time advancing).
MAX_BATCHES_AT_ONE_TIME = 100_000


def run_limits(
    max_time: Any, max_events: Any, *, n_jobs: int, workload: Callable[[], tuple[float, float]], rate: float
) -> tuple[float, float]:
    """The run's limits ``(max_time, max_events)`` from the options of ``Simulator.run`` (checked: a
    positive number, ``"auto"`` or ``None`` for no limit).

    ``"auto"``: ``max_events`` = 1,000,000 + 1,000 per job; ``max_time`` = the last arrival +
    1,000 x the total work at the constant ``rate`` + 10^6 s, or no limit when ``rate`` is 0 (a
    rate model whose work is not in seconds). ``workload()`` gives (last arrival, total work),
    asked only then.

    Raises
    ------
    InvalidOptionError
        A limit that is not a positive number (an integer for ``max_events``), "auto" or None.

    Examples
    --------
    >>> run_limits("auto", None, n_jobs=2, workload=lambda: (5.0, 10.0), rate=1.0)
    (1010005.0, inf)
    >>> run_limits(60, "auto", n_jobs=2, workload=lambda: (5.0, 10.0), rate=0.0)
    (60.0, 1002000)
    """
    out = []
    for name, v in (("max_time", max_time), ("max_events", max_events)):
        if v is None:
            out.append(math.inf)
            continue
        if isinstance(v, str) and v == "auto":
            if name == "max_events":
                out.append(1_000_000 + 1_000 * n_jobs)
            elif rate:
                last, total = workload()
                out.append(last + 1_000.0 * total / rate + 1e6)
            else:
                out.append(math.inf)
            continue
        ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and v > 0
        if not ok or (name == "max_events" and v != int(v)):
            what = "a positive number of seconds" if name == "max_time" else "a positive integer"
            raise InvalidOptionError(
                f"The '{name}' option of Simulator.run must be {what}, 'auto' or None (no limit); got {v!r}."
            )
        out.append(float(v))
    return out[0], out[1]


def limit_error(
    policy: str,
    t: float,
    n_events: int,
    max_time: float,
    max_events: float,
    *,
    n_jobs: int,
    n_unfinished: int,
    running: Sequence[tuple[str, str, int]],
) -> SimulationLimitError:
    """The error for a run past its limits, with what a user needs to see why: the policy, the
    simulated time, the events processed and the jobs holding GPUs (``running``: their label,
    phase and number of preemptions)."""
    show = ", ".join(f"{label} ({phase}, {n_pre} preemptions)" for label, phase, n_pre in running[:5])
    which = (
        f"max_time={max_time:g} s (simulated time is {t:g} s)"
        if t > max_time
        else f"max_events={max_events:g} (at simulated time {t:g} s)"
    )
    return SimulationLimitError(
        f"Policy {policy!r} ran past {which} after {n_events} events, with {n_unfinished} of "
        f"{n_jobs} jobs unfinished and {len(running)} holding GPUs{': ' + show if show else ''}"
        f"{' ...' if len(running) > 5 else ''}. A livelock (jobs preempted and restarted over and over) "
        f"or a limit set too low: pass run(max_time=..., max_events=...) larger, or None for no limit."
    )


def livelock_error(policy: str, rounds: int, t: float) -> SimulationError:
    """The error for a policy that made ``rounds`` rounds of decisions at time ``t``."""
    return SimulationError(
        f"Policy {policy!r} made {rounds} rounds of decisions at t={t:g} without time "
        f"advancing (e.g. starting and preempting the same jobs): a livelock. Fix the policy."
    )


def unfinished_error(policy: str, n_stuck: int, label: str, phase: str, gpus: int) -> SimulationError:
    """The error for a run that ended with ``n_stuck`` jobs unfinished and no pending event (the
    policy starved them); ``label``, ``phase`` and ``gpus`` describe the first of them."""
    return SimulationError(
        f"Policy {policy!r} left {n_stuck} job(s) unfinished with no pending event, e.g. "
        f"{label} ({phase}, {gpus} GPUs). A policy must start every waiting job eventually "
        f"(or pass allow_unfinished=True)."
    )


def already_ran_error() -> SimulationError:
    """The error for a second ``run()`` of one Simulator."""
    return SimulationError("This Simulator has already run; build a new one (policies are reusable).")
