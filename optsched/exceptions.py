"""The one error hierarchy of optsched.

Every error a user can trigger derives from :class:`OptschedError`. Messages name the field,
the value and the fix, e.g. ``The 'gpus' field of job 7 must be an integer in [1, 8] (the
largest server); got 0.``
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

MESSAGE_LIMIT = 2000
"""Longest message an error shows (characters); longer ones (a value echoed whole, e.g. a job
table) are cut in the middle, keeping the start (what is wrong) and the end (the fix)."""


def cut_message(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` itself, or its start and end with the middle cut when it is longer than ``limit``.

    >>> cut_message("a" * 50 + "b" * 50, limit=40)
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaa [... 60 characters cut ...] bbbbbbbbbbbb'
    """
    if len(text) <= limit:
        return text
    head, tail = int(limit * 0.7), int(limit * 0.3)
    tail = min(tail, max(0, len(text) - head))
    cut = len(text) - head - tail
    return f"{text[:head].rstrip()} [... {cut:,} characters cut ...] {text[len(text) - tail :].lstrip()}"


class OptschedError(Exception):
    """Base class of every optsched error. Its message is cut to :data:`MESSAGE_LIMIT` characters.

    Examples
    --------
    >>> import optsched
    >>> try:
    ...     optsched.load_instance("toy:no-such-instance")
    ... except optsched.OptschedError as e:
    ...     print(type(e).__name__)
    UnknownNameError
    """

    def __str__(self) -> str:
        return cut_message(super().__str__())


class InvalidInstanceError(OptschedError, ValueError):
    """An instance (file, dict or constructor arguments) is malformed or inconsistent.

    Examples
    --------
    >>> from optsched.core import Job
    >>> from optsched.exceptions import InvalidInstanceError
    >>> try:
    ...     Job(7, work=10, gpus=0)
    ... except InvalidInstanceError as e:
    ...     print("gpus" in str(e), isinstance(e, ValueError))
    True True
    """


class InvalidScheduleError(OptschedError, ValueError):
    """A schedule file or object is malformed (not: infeasible; see the verifier for that)."""


class InvalidOptionError(OptschedError, ValueError):
    """An option passed to an algorithm, a solver or the CLI is out of its domain."""


class UnknownNameError(OptschedError, KeyError):
    """A model, algorithm, policy, solver or trace name that is not registered."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return cut_message(str(self.args[0])) if self.args else ""


class InfeasibleError(OptschedError):
    """The model or instance has no feasible solution (proved by a solver or by construction).

    Examples
    --------
    >>> from optsched.exceptions import InfeasibleError, OptschedError
    >>> issubclass(InfeasibleError, OptschedError)
    True
    """


class UnplaceableJobError(InvalidInstanceError, InfeasibleError):
    """A job that no schedule can hold at all (larger than every server): invalid data, refused at
    construction like a rigid job asking for more GPUs than the largest server. Also an
    :class:`InfeasibleError`, which is what it was raised as before."""


class SolverUnavailableError(OptschedError, RuntimeError):
    """A solver back end is not installed or cannot be loaded; the message says how to install it.

    Examples
    --------
    >>> from optsched.exceptions import SolverUnavailableError
    >>> from optsched.solvers import available_solvers
    >>> available_solvers()["highs"]  # else solving with HiGHS raises SolverUnavailableError
    True
    """


class SolverError(OptschedError, RuntimeError):
    """A solver failed for a reason other than infeasibility or a limit."""


class ModelTooLargeError(OptschedError, MemoryError):
    """An exact model would exceed the configured size limit; raised before it is built.

    Examples
    --------
    >>> from optsched.exceptions import ModelTooLargeError
    >>> from optsched.solvers import check_model_size
    >>> try:
    ...     check_model_size("toy", n_vars=600, n_cons=500, limit=1000)
    ... except ModelTooLargeError as e:
    ...     print("1,100 in all" in str(e))
    True
    """


class TimeLimitReached(OptschedError):
    """The time limit of a whole exact call ran out in a phase that cannot stop with a partial
    result (building a model); :func:`optsched.solvers.exact.run_exact` catches it and returns
    the best schedule and bound it has, with status ``feasible`` or ``no_solution``."""


class VerificationError(OptschedError, AssertionError):
    """A schedule failed an independent feasibility or objective check."""


class SimulationError(OptschedError, RuntimeError):
    """A policy asked the simulator for an illegal decision (over capacity, double start, ...)."""


class SimulationLimitError(SimulationError):
    """A simulation ran past its ``max_time`` or ``max_events`` (a livelock, or a limit set too low)."""


class TraceFormatError(OptschedError, ValueError):
    """A trace file does not follow the format its loader expects."""


class DataNotFoundError(OptschedError, FileNotFoundError):
    """A data file (trace) is not on this machine; the message says where it was looked for and
    which command fetches it."""


class InternalError(OptschedError, RuntimeError):
    """Two parts of optsched disagree where they never should (a bug: please report it)."""

    def __str__(self) -> str:
        msg = cut_message(str(self.args[0])) if self.args else ""
        return f"{msg} (this is a bug in optsched: please report it with the command that produced it)"


class WriteError(OptschedError, OSError):
    """A result file could not be written (a full disk, a missing permission, memory running out);
    nothing of it was written and an earlier file of that name stays as it was. ``path`` is the
    file, ``cause`` the original exception."""

    path: str = ""
    cause: BaseException | None = None


def write_error(path: Any, e: BaseException) -> WriteError:
    """The :class:`WriteError` for ``e`` (an ``OSError`` or ``MemoryError``) while writing ``path``:
    the file, the cause and the fix in one sentence.

    >>> import errno
    >>> e = write_error("out/jobs.csv", OSError(errno.ENOSPC, "No space left on device"))
    >>> str(e).startswith("No space left on the device of 'out' while writing 'jobs.csv'; nothing of it")
    True
    """

    p = Path(path)
    folder, name = str(p.parent), p.name
    if isinstance(e, MemoryError):
        msg = (
            f"Out of memory while writing {str(p)!r}; nothing of it was written. Write a smaller result (fewer "
            f"jobs), or free memory."
        )
    elif getattr(e, "errno", None) in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        what = "No space left" if e.errno == errno.ENOSPC else "The disk quota is used up"
        msg = (
            f"{what} on the device of {folder!r} while writing {name!r}; nothing of it was written. Free space "
            f"there, or write the results to another disk (--out elsewhere)."
        )
    elif getattr(e, "errno", None) == errno.EFBIG:
        msg = (
            f"{str(p)!r} would exceed the largest file this system allows; nothing of it was written. Write a "
            f"smaller result, or to another disk."
        )
    elif getattr(e, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS):
        msg = f"{str(p)!r} cannot be written ({e.strerror}); give a writable folder (--out elsewhere)."
    else:
        why = getattr(e, "strerror", None) or str(e) or type(e).__name__
        msg = f"{str(p)!r} cannot be written ({why}); nothing of it was written. Check the folder, or write elsewhere."
    err = WriteError(msg)
    err.path, err.cause = str(p), e  # not errno/filename: OSError would print those instead of the message
    return err


class OptschedWarning(UserWarning):
    """Base class of optsched's warnings (the CLI prints them as one line)."""


class SolverLimitWarning(OptschedWarning):
    """A solver stopped at a time, gap or node limit: the solution is not proven optimal."""


class WorkloadWarning(OptschedWarning):
    """A workload or cluster choice that makes a run uninformative (e.g. no job ever waits)."""


class EngineFallbackWarning(OptschedWarning):
    """``Simulator(engine="auto")`` runs a large simulation on the Python engine, not the compiled
    kernel; the message says why (a policy, option or input the kernel does not cover, or numba
    missing). Said once per process and reason. Filter it to silence it, or pass
    ``engine="python"`` to choose the Python engine explicitly.

    Examples
    --------
    >>> import warnings
    >>> from optsched.exceptions import EngineFallbackWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", EngineFallbackWarning)  # e.g. around a sweep of big runs
    ...     warnings.warn("the Python engine runs this simulation", EngineFallbackWarning)
    >>> issubclass(EngineFallbackWarning, UserWarning)
    True
    """
