"""Signals during a run: Ctrl-C (SIGINT), and on the command line SIGTERM and SIGHUP, stop the work
and keep what was found, at any moment.

Python's default SIGINT handler raises ``KeyboardInterrupt`` wherever the main thread is. Inside a
solver or a library's own work that is no good: CP-SAT runs in C++ (the exception waits until it
returns, and OR-Tools' own ``catch_sigint_signal`` leaves SIGINT at the system default afterwards,
so the next Ctrl-C kills the process without a word); HiGHS calls Python only from its callbacks,
where an exception is swallowed or ends the run without its incumbent; and an exception raised in
the middle of a Pyomo transformation (relaxing a model's integer variables) leaves the model half
changed (Pyomo then reports an internal ``DeveloperError`` instead of the interruption). So:

* **Inside a guard** (:func:`guard`, entered by :func:`optsched.solvers.exact.run_exact`, by the
  back ends and by the commands around an exact solve and its writing) a signal never raises.
  It sets :func:`requested` and calls the stop functions of the running solver
  (:func:`stoppable`: CP-SAT ``stop_search``, which runs in a worker thread so the main thread
  takes the signal; HiGHS a flag that its interrupt callbacks turn into ``user_interrupt``; a
  portfolio the signal forwarded to its members), which then ends with its incumbent and bound.
  Python phases look at the flag between steps (:func:`check`, at points where nothing is half
  changed: between the phases of a solve, between the components of a model build) and skip
  what is left; the result's status is ``interrupted``. Work inside a library call (a Pyomo
  transformation, handing a model to HiGHS) is finished first.
* **Inside** :func:`deferred` (a file being written): a signal waits until the block is done and
  is raised as ``KeyboardInterrupt`` when the outermost such block ends, so a file is never cut
  by a signal; a second signal during the write changes nothing.
* **Elsewhere** a signal raises ``KeyboardInterrupt``, as Python's default does.

A third signal inside a guard, while nothing stops, raises ``KeyboardInterrupt`` at once (the
user insists; what the library was doing may be lost).

A loop of solves (``optsched demo``, ``reproduce``, a user's script) that should end on Ctrl-C
runs inside :func:`stop_on_interrupt`: an interrupted solve then raises :class:`Interrupted` (a
``KeyboardInterrupt`` carrying the interrupted result) instead of returning it.

In Python only SIGINT is taken (SIGTERM keeps ending the process, as a script expects); the
command line wraps each command in :func:`handle_signals`, which treats SIGTERM and SIGHUP (what
``timeout``, ``kill``, batch schedulers, container stops and a closed terminal send) exactly like
Ctrl-C; :func:`exit_code` is then 128 + the first signal's number (130 SIGINT, 143 SIGTERM, 129
SIGHUP), as shells report it. A signal the caller set to be ignored (``nohup``, ``trap '' HUP``, the
SIGINT of a script's background job) stays ignored. Handlers can only be set in the main thread: elsewhere nothing is
installed and signals keep their default behaviour. A process forked from one with these handlers
(a worker pool) gets the default behaviour back, except a portfolio member (:func:`member`).
"""

from __future__ import annotations

import atexit
import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any


class Interrupted(KeyboardInterrupt):
    """Raised by an exact solve interrupted inside :func:`stop_on_interrupt`; ``result`` is the
    interrupted :class:`~optsched.core.result.Result` (best schedule so far, status ``interrupted``)."""

    def __init__(self, result: Any = None) -> None:
        super().__init__("interrupted")
        self.result = result


#: The signals the command line treats as Ctrl-C (those this platform has).
CLI_SIGNALS = tuple(getattr(signal, s) for s in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, s))


class _State:
    def __init__(self) -> None:
        self.requested = False
        self.signals = 0  # signals inside the current outermost guard
        self.signum: int | None = None  # the first signal of the run (the exit code)
        self.depth = 0  # guards (a solve) and deferred blocks (a write) entered
        self.absorb = 0  # guards among them: their signal is the result's status, not an exception
        self.pending = False  # a signal arrived inside; raised when the outermost deferred block ends
        self.propagate = 0
        self.previous: Any = None
        self.installed = False
        self.cli: dict[int, Any] = {}  # signal -> previous handler, while handle_signals() is active
        self.pid = os.getpid()
        self.stoppers: dict[int, Callable[[], None]] = {}
        self.member = False


_state = _State()
_ids = itertools.count()


def requested() -> bool:
    """True once a signal arrived inside the current outermost :func:`guard` (False outside any)."""
    return _state.requested and _state.depth > 0


def received() -> int | None:
    """The number of the first signal taken since :func:`handle_signals` (or the outermost guard)
    began, else ``None``."""
    return _state.signum


def signal_name(signum: int | None = None) -> str:
    """``"SIGTERM"`` for 15 (default: the first signal received; ``"SIGINT"`` without one)."""
    signum = received() if signum is None else signum
    if signum is None:
        return "SIGINT"
    with suppress(ValueError):
        return signal.Signals(signum).name
    return f"signal {signum}"


def described(signum: int | None = None) -> str:
    """How a message names the signal: ``"Ctrl-C"`` for SIGINT, else its name (``"SIGTERM"``)."""
    name = signal_name(signum)
    return "Ctrl-C" if name == "SIGINT" else name


def exit_code(signum: int | None = None) -> int:
    """128 + the signal's number, as shells report a process a signal ended: 130 for Ctrl-C
    (SIGINT), 143 for SIGTERM, 129 for SIGHUP (default: the first signal received, else 130).

    >>> import signal
    >>> exit_code(signal.SIGTERM), exit_code(signal.SIGINT)
    (143, 130)
    """
    signum = received() if signum is None else signum
    return 128 + int(signum if signum is not None else signal.SIGINT)


def propagating() -> bool:
    """True inside :func:`stop_on_interrupt`: an interrupted solve raises :class:`Interrupted`."""
    return _state.propagate > 0


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a signal arrived inside the current guard: called by Python
    phases at points where nothing is half changed (between the phases of a solve, between rows of
    a model build)."""
    if _state.requested and _state.depth > 0:
        raise KeyboardInterrupt


def _default(signum: int) -> None:
    """What the signal does without optsched's handler: SIGINT raises KeyboardInterrupt, the
    others end the process."""
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _handler(signum: int, frame: Any) -> None:
    st = _state
    if os.getpid() != st.pid:  # a forked process (a worker pool) that did not ask for this: the default
        _default(signum)
        return
    if st.signum is None:
        st.signum = signum
    st.requested = True
    st.signals += 1
    for stop in list(st.stoppers.values()):
        with suppress(Exception):  # a stop never fails the handler
            stop()
    if st.depth == 0:
        raise KeyboardInterrupt
    st.pending = True
    if st.signals >= 3 and st.absorb and not st.member:  # the third: the user insists
        raise KeyboardInterrupt


def ignored(signum: int) -> bool:
    """True when the caller set ``signum`` to be ignored (``nohup`` for SIGHUP, ``trap '' TERM``, a
    background job of a script for SIGINT): optsched then leaves it ignored."""
    try:
        return signal.getsignal(signum) == signal.SIG_IGN
    except (ValueError, TypeError, OSError):  # no signals here (an embedded interpreter)
        return False


def _install(signums: tuple[int, ...]) -> dict[int, Any]:
    """Our handler for ``signums`` (main thread only) except those the caller ignores; returns
    the previous handlers."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for s in signums:
        if ignored(s):  # the caller's choice (nohup, trap ''): kept
            continue
        with suppress(ValueError, TypeError, OSError):  # no signals here (an embedded interpreter)
            previous[s] = signal.signal(s, _handler)
    return previous


def _restore(previous: dict[int, Any]) -> None:
    for s, h in previous.items():
        with suppress(ValueError, TypeError, OSError):
            signal.signal(s, h if h is not None else signal.SIG_DFL)


@contextmanager
def handle_signals(signums: tuple[int, ...] = CLI_SIGNALS) -> Iterator[None]:
    """For a command-line program: while inside, SIGTERM and SIGHUP act exactly like Ctrl-C
    (``KeyboardInterrupt`` outside a guard, a stopped solver inside one) and :func:`exit_code`
    tells which signal came first. The previous handlers are restored on exit."""
    st = _state
    outer = not st.cli
    if outer:
        st.signum, st.pid = None, os.getpid()
        st.cli = _install(signums)
    try:
        yield
    finally:
        if outer:
            prev, st.cli = st.cli, {}
            _restore(prev)


def _enter(*, absorb: bool) -> bool:
    st = _state
    outer = st.depth == 0
    if outer and not st.member:
        st.requested, st.signals, st.pending = False, 0, False
        if not st.cli:  # in Python: SIGINT only, for as long as the outermost block lasts
            st.signum = None
            prev = _install((signal.SIGINT,))
            if prev:
                st.previous, st.installed = prev[signal.SIGINT], True
    st.depth += 1
    st.absorb += absorb
    return outer


def _leave(outer: bool, *, absorb: bool) -> bool:
    """Leave a guard or deferred block; True when a signal that arrived inside is owed as an exception."""
    st = _state
    st.depth -= 1
    st.absorb -= absorb
    if not outer:
        return False
    if st.installed:
        st.installed = False
        _restore({signal.SIGINT: st.previous if st.previous is not None else signal.default_int_handler})
    owed, st.pending = st.pending and not absorb, False
    return owed


@contextmanager
def guard() -> Iterator[None]:
    """While inside (nestable): a signal stops the running solver and sets :func:`requested`
    instead of raising (see the module doc); the code inside polls it (:func:`check`). The
    outermost guard clears :func:`requested` on entry; in Python (without
    :func:`handle_signals`) it installs the SIGINT handler and restores the previous one on exit."""
    outer = _enter(absorb=True)
    try:
        yield
    finally:
        _leave(outer, absorb=True)


@contextmanager
def deferred() -> Iterator[None]:
    """While inside (nestable): a signal waits; when the outermost block ends, one that arrived
    inside is raised as ``KeyboardInterrupt`` (inside a :func:`guard`: it only stays
    :func:`requested`). For writing a file: a signal never cuts it, a second one changes nothing.

    >>> from optsched.solvers.interrupt import deferred
    >>> with deferred():
    ...     pass
    """
    outer = _enter(absorb=False)
    owed = False
    try:
        yield
    finally:
        owed = _leave(outer, absorb=False)
    if owed:
        raise KeyboardInterrupt


@contextmanager
def stoppable(stop: Callable[[], None] | None = None) -> Iterator[None]:
    """While inside: a signal calls ``stop()`` (e.g. ``CpSolver.stop_search``) (``stop=None``: only
    :func:`requested` is set; the code inside polls it)."""
    token = next(_ids)
    _state.stoppers[token] = stop if stop is not None else (lambda: None)
    try:
        yield
    finally:
        _state.stoppers.pop(token, None)


@contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """For a loop of solves that should end on Ctrl-C: inside, an interrupted exact solve raises
    :class:`Interrupted` (with its result) instead of returning it, and a signal between solves
    raises ``KeyboardInterrupt`` as usual.

    >>> from optsched.solvers.interrupt import stop_on_interrupt, propagating
    >>> with stop_on_interrupt():
    ...     propagating()
    True
    """
    _state.propagate += 1
    try:
        yield
    finally:
        _state.propagate -= 1


def member() -> None:
    """In a forked portfolio member: forget the parent's stoppers (SIGINT and SIGHUP now stop
    this process's own solver; the parent forwards its signal to the members as SIGINT).
    SIGTERM ends the member at once (the parent stops members it no longer needs with it)."""
    st = _state
    st.stoppers.clear()
    st.member = True
    st.pid = os.getpid()  # the handlers it inherited act here (SIGHUP too, on the command line)
    if threading.current_thread() is threading.main_thread():
        with suppress(ValueError, TypeError, OSError):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            # the parent's stop message, even when the caller made the parent ignore Ctrl-C
            signal.signal(signal.SIGINT, _handler)


def forward(pids: list[int]) -> Callable[[], None]:
    """A stop function that sends SIGINT to the processes ``pids`` (the portfolio's members)."""

    def stop() -> None:
        for pid in pids:
            with suppress(OSError):
                os.kill(pid, signal.SIGINT)

    return stop


def run_main(main: Callable[[], Any], prog: str = "optsched") -> int:
    """For a ``python -m optsched....`` module: run ``main()`` as the command line runs a command
    (SIGTERM and SIGHUP act like Ctrl-C, a signal the caller ignores stays ignored) and end an
    interruption with one line on stderr and :func:`exit_code` (130, 143, 129); returns
    ``main()``'s exit code otherwise.

    >>> run_main(lambda: 0)
    0
    """

    for stream in (sys.stdout, sys.stderr):  # a character the terminal cannot show: an escape, not an error
        with suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]  # a TextIOWrapper's
    try:
        with handle_signals():
            code = main()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted ({described()}).", file=sys.stderr)
        return exit_code()
    return int(code or 0)


#: Solver threads left running after a stop they could not take in time (see :func:`run_stoppable`).
_abandoned: list[threading.Thread] = []


class Abandoned(Exception):
    """Raised by :func:`run_stoppable` when the call did not end within ``grace`` seconds of a signal
    (it goes on in its thread, which :func:`join_abandoned` waits for)."""


def run_stoppable(
    call: Callable[[], Any],
    *,
    grace: float,
    on_request: Callable[[], None] | None = None,
    on_abandon: Callable[[], None] | None = None,
    captures_output: bool = False,
) -> Any:
    """``call()`` in a worker thread while the main thread waits, so that a signal is taken at once
    even while ``call`` is inside C++ that calls no Python for a while (HiGHS's presolve and root LP
    run its callbacks only between phases). On a signal (:func:`requested`) ``on_request()`` is
    called (e.g. to make the solver's callbacks stop it) and the call gets ``grace`` seconds to
    return; if it has not, :class:`Abandoned` is raised and the thread is left to end on its own
    (:func:`join_abandoned`; the command line exits without waiting for it) after ``on_abandon()``
    (e.g. to silence it). The process's standard output and error, which ``call`` may have
    redirected for as long as it runs (Pyomo captures them around a solve), are given back to this
    thread first; ``captures_output=True``: ``call`` redirects them soon after it starts, and it is
    left only once it has (so that it cannot take them again after they were given back). Outside
    the main thread ``call()`` simply runs here."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    join_abandoned()  # one solve at a time: a solver left running ends first (it was told to stop)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e

    streams = _Streams()
    t = threading.Thread(target=target, name="optsched-solver", daemon=True)
    t.start()
    asked: float | None = None
    try:
        while t.is_alive():
            t.join(0.05)
            if asked is None and requested():
                asked = time.monotonic()
                if on_request is not None:
                    on_request()
            late = asked is not None and t.is_alive() and time.monotonic() - asked > grace
            if late and (not captures_output or streams.taken()):
                raise Abandoned
    except (Abandoned, KeyboardInterrupt):  # KeyboardInterrupt: a third signal, the user insists
        if t.is_alive():
            _abandoned.append(t)
            if on_abandon is not None:
                with suppress(Exception):
                    on_abandon()
            streams.give_back()
        raise
    finally:
        streams.close()
    if "error" in box:
        raise box["error"]
    return box["result"]


class _Streams:
    """This process's standard output and error as they are now (file objects and descriptors), to
    give them back while a call that redirected them goes on in another thread."""

    def __init__(self) -> None:
        self.objects = (sys.stdout, sys.stderr)
        self.fds: dict[int, int] = {}
        for fd in (1, 2):
            with suppress(OSError):
                self.fds[fd] = os.dup(fd)

    def taken(self) -> bool:
        """True once another thread replaced ``sys.stdout`` or ``sys.stderr``."""

        return (sys.stdout, sys.stderr) != self.objects

    def give_back(self) -> None:
        for fd, saved in self.fds.items():
            with suppress(OSError):
                os.dup2(saved, fd)
        sys.stdout, sys.stderr = self.objects

    def close(self) -> None:
        for saved in self.fds.values():
            with suppress(OSError):
                os.close(saved)
        self.fds = {}


def abandoned() -> bool:
    """True while a solver thread left by :func:`run_stoppable` still runs."""
    _abandoned[:] = [t for t in _abandoned if t.is_alive()]
    return bool(_abandoned)


def join_abandoned(timeout: float | None = None) -> None:
    """Wait for the solver threads :func:`run_stoppable` left running (they were told to stop)."""
    for t in list(_abandoned):
        t.join(timeout)
    _abandoned[:] = [t for t in _abandoned if t.is_alive()]


atexit.register(join_abandoned)  # a script's interpreter never ends under a solver still running
