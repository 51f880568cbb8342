"""What a long exact solve shows while it runs: elapsed time, phase, incumbent and bound.

The solvers report here (:func:`phase`, :func:`report`) whether anyone listens or not: the calls
cost a few attribute reads. Something is shown only inside :func:`display`, which the CLI opens
around ``optsched solve`` (not with ``--quiet``, ``--verbose`` or inside a forked member): after
the first second, on standard error, a live line on a terminal (rich) or a plain line whenever
the phase, the incumbent or the bound changed (at most one a second, and at least one every
:data:`HEARTBEAT` seconds while the solve runs), e.g.::

    [solve   4.1 s] solving (highs): incumbent 4,822, bound 4,814 (gap 0.166 %)

Never on standard output: ``--json`` output stays one JSON document.

Values are in the kind's units: a back end reports in its model's units and the innermost
:func:`units` context converts them (``offset + scale * value``), as
:func:`optsched.solvers.exact.run_exact` does for the model it solves. ``units(...,
incumbents=False)`` shows only bounds: a relaxation's incumbents are not schedules of the instance.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class _Units:
    scale: float
    offset: float
    incumbents: bool


#: Seconds after which a plain (not a terminal) display repeats its line though nothing changed.
HEARTBEAT = 5.0

_units: list[_Units] = []
_current: _Display | None = None
_listeners: list[Callable[[float | None, float | None], None]] = []
_local = threading.local()  # .timelines: the Timelines open in this thread, outermost first


class Timeline:
    """The phases reported by :func:`phase` while it is open, with the ``time.monotonic()`` at
    which each began (``marks``): which phase ran for how long, and which one was running at a
    given instant (the one that ran out of time when that instant is the deadline).

    >>> with timeline() as tl:
    ...     phase("reading")
    ...     phase("solving")
    >>> list(tl.seconds())
    ['reading', 'solving']
    >>> tl.at(tl.marks[1][0]), tl.at(tl.marks[0][0] - 1)
    ('solving', None)
    """

    def __init__(self) -> None:
        self.marks: list[tuple[float, str]] = []
        self.closed: float | None = None

    def mark(self, text: str) -> None:
        if not self.marks or self.marks[-1][1] != text:
            self.marks.append((time.monotonic(), text))

    def at(self, instant: float) -> str | None:
        """The phase running at ``instant`` (the last one begun by then; ``None`` before the first)."""
        name = None
        for t, text in self.marks:
            if t > instant:
                break
            name = text
        return name

    def seconds(self, until: float | None = None) -> dict[str, float]:
        """Seconds per phase (a phase entered twice: the sum), in the order first entered, up to
        ``until`` (default: when the timeline was closed, or now)."""
        end = until if until is not None else self.closed if self.closed is not None else time.monotonic()
        out: dict[str, float] = {}
        for k, (t, text) in enumerate(self.marks):
            nxt = self.marks[k + 1][0] if k + 1 < len(self.marks) else end
            out[text] = round(out.get(text, 0.0) + max(0.0, min(nxt, end) - t), 3)
        return out


@contextmanager
def timeline() -> Iterator[Timeline]:
    """Record the phases reported inside (in this thread) on a new :class:`Timeline`; timelines
    nest, and every open one records."""
    tl = Timeline()
    stack = _timelines()
    stack.append(tl)
    try:
        yield tl
    finally:
        tl.closed = time.monotonic()
        stack.remove(tl)


def outer_timeline() -> Timeline | None:
    """The outermost :class:`Timeline` open in this thread (the caller's that began first: the
    CLI's, which has the reading of the instance, else the paper's, which has its warm start)."""
    stack = _timelines()
    return stack[0] if stack else None


def _timelines() -> list[Timeline]:
    stack = getattr(_local, "timelines", None)
    if stack is None:
        stack = _local.timelines = []
    return stack


def format_value(v: float | None) -> str:
    """A value as shown: integers in full with thousands separators, others to 6 significant digits.

    >>> format_value(10000018.0), format_value(4812.5), format_value(None)
    ('10,000,018', '4,812.5', '-')
    """
    if v is None or not math.isfinite(v):
        return "-"
    if abs(v) < 1e15 and float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.6g}"


class _Display:
    def __init__(self, file: Any, delay: float, interval: float) -> None:
        self.file, self.delay, self.interval = file, delay, interval
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.phase = "starting"
        self.maximize = False
        self.incumbent: float | None = None
        self.bound: float | None = None
        self.version = 0  # bumped on every change
        self.shown = -1
        self.last_line = -math.inf
        self.stop = threading.Event()
        self.tty = bool(getattr(file, "isatty", lambda: False)())
        self.live: Any = None
        self.lines = 0
        self.thread = threading.Thread(target=self._run, name="optsched-progress", daemon=True)

    # -- state (any thread)
    def set_phase(self, text: str) -> None:
        with self.lock:
            if text != self.phase:
                self.phase, self.version = text, self.version + 1

    def start(self, maximize: bool) -> None:
        with self.lock:
            self.maximize, self.incumbent, self.bound = maximize, None, None
            self.version += 1

    def update(self, incumbent: float | None, bound: float | None) -> None:
        with self.lock:
            better = (lambda a, b: a > b) if self.maximize else (lambda a, b: a < b)
            changed = False
            if (
                incumbent is not None
                and math.isfinite(incumbent)
                and (self.incumbent is None or better(incumbent, self.incumbent))
            ):
                self.incumbent, changed = incumbent, True
            if bound is not None and math.isfinite(bound) and (self.bound is None or better(self.bound, bound)):
                self.bound, changed = bound, True
            if changed:
                self.version += 1

    def text(self) -> str:
        with self.lock:
            parts = [f"incumbent {format_value(self.incumbent)}", f"bound {format_value(self.bound)}"]
            line = f"[solve {time.monotonic() - self.t0:6.1f} s] {self.phase}: " + ", ".join(parts)
            if self.incumbent is not None and self.bound is not None:
                gap = abs(self.incumbent - self.bound) / max(abs(self.incumbent), 1e-10)
                line += f" (gap {100 * gap:.3g} %)"
            return line

    # -- output (the display's own thread)
    def _run(self) -> None:
        while not self.stop.wait(self.interval):
            if time.monotonic() - self.t0 < self.delay:
                continue
            with suppress(Exception):  # the display never fails a solve
                self._show()

    def _show(self) -> None:
        if self.tty:
            if self.live is None:
                from rich.console import Console
                from rich.live import Live

                console = Console(file=self.file, stderr=self.file is sys.stderr)
                self.live = Live(
                    console=console, auto_refresh=False, transient=True, redirect_stdout=False, redirect_stderr=True
                )
                self.live.start()
            from rich.text import Text

            self.live.update(Text(self.text(), style="dim"), refresh=True)
            return
        now = time.monotonic()
        # a change (at most one line a second), or the same line every HEARTBEAT s: a solver that
        # works long without news (HiGHS's presolve and root LP) still shows that it runs
        if (self.version != self.shown and now - self.last_line >= 1.0) or now - self.last_line >= HEARTBEAT:
            self.shown, self.last_line = self.version, now
            print(self.text(), file=self.file, flush=True)
            self.lines += 1

    def close(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=2)
        if self.live is not None:
            with suppress(Exception):
                self.live.stop()


@contextmanager
def display(*, file: Any = None, delay: float = 1.0, interval: float = 0.25) -> Iterator[Any]:
    """Show the progress of the solves inside on ``file`` (default standard error) once they
    have run ``delay`` seconds; yields the display (``None`` when one is open already)."""
    global _current
    if _current is not None:
        yield None
        return
    own = None
    if file is None:  # a copy of the stderr descriptor: Pyomo captures fds 1 and 2 while HiGHS runs
        try:
            sys.stderr.flush()
            own = file = os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1, encoding="utf-8", errors="replace")
        except (AttributeError, OSError, ValueError):  # no real descriptor (a test's capture)
            file = sys.stderr
    d = _Display(file, delay, interval)
    _current = d
    d.thread.start()
    try:
        yield d
    finally:
        _current = None
        d.close()
        if own is not None:
            with suppress(OSError):
                own.close()


@contextmanager
def listen(fn: Callable[[float | None, float | None], None]) -> Iterator[None]:
    """While inside, ``fn(incumbent, bound)`` (kind units, either may be ``None``) is called
    with every report, from the thread that reports (a solver callback): for a notebook widget,
    a log, or a test. ``fn`` must be quick and must not raise."""
    _listeners.append(fn)
    try:
        yield
    finally:
        _listeners.remove(fn)


def active() -> bool:
    """Whether anything shows or hears the reports (back ends skip the work otherwise)."""
    return _current is not None or bool(_listeners)


def detach() -> None:
    """In a forked process: show nothing (the parent's display thread does not exist here)."""
    global _current
    _current = None
    _units.clear()
    _listeners.clear()
    _local.timelines = []


def start(*, maximize: bool = False) -> None:
    """A new solve begins: forget the incumbent and bound shown so far."""
    d = _current
    if d is not None:
        d.start(maximize)


def phase(text: str) -> None:
    """The phase now running (``"building the model (highs)"``, ``"solving (cpsat)"``, ...):
    shown by the display, recorded by every open :func:`timeline`."""
    for tl in getattr(_local, "timelines", ()):
        tl.mark(text)
    d = _current
    if d is not None:
        d.set_phase(text)


def report_kind(incumbent: float | None = None, bound: float | None = None) -> None:
    """An incumbent's objective and/or a valid bound, in the kind's units."""
    d = _current
    if d is not None:
        d.update(incumbent, bound)
    for fn in list(_listeners):
        with suppress(Exception):
            fn(incumbent, bound)


def report(incumbent: float | None = None, bound: float | None = None) -> None:
    """An incumbent and/or a bound in the units of the model being solved (converted by the
    innermost :func:`units`; incumbents dropped under ``incumbents=False``)."""
    if not active():
        return
    u = _units[-1] if _units else _Units(1.0, 0.0, True)
    inc = (
        None
        if incumbent is None or not u.incumbents or not math.isfinite(incumbent)
        else u.offset + u.scale * incumbent
    )
    bnd = None if bound is None or not math.isfinite(bound) else u.offset + u.scale * bound
    report_kind(inc, bnd)


@contextmanager
def units(scale: float = 1.0, offset: float = 0.0, *, incumbents: bool = True) -> Iterator[None]:
    """While inside, :func:`report` converts model values to the kind's: ``offset + scale * value``."""
    _units.append(_Units(float(scale), float(offset), incumbents))
    try:
        yield
    finally:
        _units.pop()
