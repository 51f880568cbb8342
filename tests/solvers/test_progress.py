"""The progress display of long solves (optsched.solvers.progress): what it shows, in which units,
and that it stays off stdout. The display thread prints asynchronously: the tests wait for its
line (up to a generous timeout), they never time it."""

from __future__ import annotations

import io
import time

from optsched.solvers import progress


def _wait_for(buf: io.StringIO, text: str, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in buf.getvalue():
            return buf.getvalue()
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never shown; got {buf.getvalue()!r}")


def test_display_shows_phase_incumbent_bound_and_gap_in_the_kinds_units():
    buf = io.StringIO()
    with progress.display(file=buf, delay=0, interval=0.01):
        progress.start()
        progress.phase("solving (test)")
        with progress.units(scale=2.0, offset=1.0):
            progress.report(incumbent=50.0, bound=40.0)  # 101 and 81 in the kind's units
            progress.report(incumbent=60.0, bound=30.0)  # worse: the best so far stays
        out = _wait_for(buf, "incumbent 101")
    assert "solving (test)" in out and "bound 81" in out and "gap" in out
    assert "[solve" in out


def test_relaxation_incumbents_are_not_shown_and_nothing_without_a_display():
    heard = []
    with progress.listen(lambda inc, bnd: heard.append((inc, bnd))):
        with progress.units(incumbents=False):
            progress.report(incumbent=5.0, bound=3.0)
        progress.report_kind(incumbent=7.0)
    assert heard == [(None, 3.0), (7.0, None)]
    assert not progress.active()
    progress.phase("nobody listens")  # no display: a no-op
    progress.report(incumbent=1.0)


def test_values_are_shown_whole():
    assert progress.format_value(10000018.0) == "10,000,018"
    assert progress.format_value(float("inf")) == "-"
