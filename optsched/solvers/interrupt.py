"""Ctrl-C (SIGINT) during exact solves: stop the solver, keep the best schedule found so far.

Python's default SIGINT handler raises ``KeyboardInterrupt`` wherever the main thread is. Inside
a solver that is no good: CP-SAT runs in C++ (the exception waits until it returns, and OR-Tools'
own ``catch_sigint_signal`` leaves SIGINT at the system default afterwards, so the next Ctrl-C
kills the process without a word), and HiGHS calls Python only from its callbacks, where an
exception is swallowed or ends the run without its incumbent. So, while an exact solve runs
(:func:`guard`, entered by :func:`optsched.solvers.exact.run_exact` and by the back ends):

* a solver call registers how to stop it (:func:`stoppable`): CP-SAT ``stop_search`` (the solve
  runs in a worker thread, so the main thread can take the signal), HiGHS a flag that its
  interrupt callbacks turn into ``user_interrupt``, a portfolio the SIGINT forwarded to its
  members. SIGINT then calls those and returns: the solver ends with its incumbent and bound;
* outside a solver call (Python work: building a Pyomo model, handing it to HiGHS), SIGINT raises
  ``KeyboardInterrupt`` as usual; ``run_exact`` catches it and returns what it has (the warm start);
* either way :func:`requested` is true until the outermost guard is left, later phases are
  skipped, and the result's status is ``interrupted``.

A loop of solves (``optsched demo``, ``reproduce``, a user's script) that should end on Ctrl-C
runs inside :func:`stop_on_interrupt`: an interrupted solve then raises :class:`Interrupted` (a
``KeyboardInterrupt`` carrying the interrupted result) instead of returning it.

A third SIGINT while a solver does not stop restores Python's default handler and raises
``KeyboardInterrupt``. Signal handlers can only be set in the main thread: elsewhere nothing is
installed and SIGINT keeps Python's default behaviour.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

__all__ = ["Interrupted", "guard", "stoppable", "requested", "stop_on_interrupt", "propagating", "member", "forward"]


class Interrupted(KeyboardInterrupt):
    """Raised by an exact solve interrupted inside :func:`stop_on_interrupt`; ``result`` is the
    interrupted :class:`~optsched.core.result.Result` (best schedule so far, status ``interrupted``)."""

    def __init__(self, result: Any = None) -> None:
        super().__init__("interrupted")
        self.result = result


class _State:
    def __init__(self) -> None:
        self.requested = False
        self.signals = 0
        self.depth = 0
        self.propagate = 0
        self.previous: Any = None
        self.installed = False
        self.stoppers: dict[int, Callable[[], None]] = {}
        self.member = False


_state = _State()
_ids = itertools.count()


def requested() -> bool:
    """True once SIGINT arrived inside the current outermost :func:`guard` (False outside any)."""
    return _state.requested and _state.depth > 0


def propagating() -> bool:
    """True inside :func:`stop_on_interrupt`: an interrupted solve raises :class:`Interrupted`."""
    return _state.propagate > 0


def _handler(signum: int, frame: Any) -> None:
    st = _state
    st.requested = True
    st.signals += 1
    if not st.stoppers:
        raise KeyboardInterrupt
    for stop in list(st.stoppers.values()):
        with suppress(Exception):  # a stop never fails the handler
            stop()
    if st.signals >= 3 and not st.member:  # the solver does not stop: give the user Python's default back
        signal.signal(signal.SIGINT, signal.default_int_handler)
        raise KeyboardInterrupt


@contextmanager
def guard() -> Iterator[None]:
    """While inside (nestable): SIGINT stops the running solver instead of raising (see the
    module doc). The outermost guard of the main thread installs the handler, clears
    :func:`requested` on entry and restores the previous handler on exit."""
    st = _state
    outer = st.depth == 0
    if outer and not st.member:
        st.requested, st.signals = False, 0
        if threading.current_thread() is threading.main_thread():
            with suppress(ValueError, TypeError):  # no signals here (an embedded interpreter)
                st.previous = signal.signal(signal.SIGINT, _handler)
                st.installed = True
    st.depth += 1
    try:
        yield
    finally:
        st.depth -= 1
        if outer and st.installed:
            st.installed = False
            with suppress(ValueError, TypeError):
                signal.signal(signal.SIGINT, st.previous if st.previous is not None else signal.default_int_handler)


@contextmanager
def stoppable(stop: Callable[[], None] | None = None) -> Iterator[None]:
    """While inside: SIGINT calls ``stop()`` (e.g. ``CpSolver.stop_search``) and returns instead
    of raising ``KeyboardInterrupt`` (``stop=None``: only :func:`requested` is set; the code
    inside polls it)."""
    token = next(_ids)
    _state.stoppers[token] = stop if stop is not None else (lambda: None)
    try:
        yield
    finally:
        _state.stoppers.pop(token, None)


@contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """For a loop of solves that should end on Ctrl-C: inside, an interrupted exact solve raises
    :class:`Interrupted` (with its result) instead of returning it, and SIGINT between solves
    raises ``KeyboardInterrupt`` as usual.

    >>> from optsched.solvers.interrupt import stop_on_interrupt, propagating
    >>> with stop_on_interrupt():
    ...     propagating()
    True
    """
    with guard():
        _state.propagate += 1
        try:
            yield
        finally:
            _state.propagate -= 1


def member() -> None:
    """In a forked portfolio member: forget the parent's stoppers (SIGINT now stops this
    process's own solver; the parent forwards its SIGINT to the members)."""
    _state.stoppers.clear()
    _state.member = True


def forward(pids: list[int]) -> Callable[[], None]:
    """A stop function that sends SIGINT to the processes ``pids`` (the portfolio's members)."""

    def stop() -> None:
        for pid in pids:
            with suppress(OSError):
                os.kill(pid, signal.SIGINT)

    return stop
