"""Which phase ran out of the time limit (certify.limit_phase), on synthetic timelines: no clock
is read, every instant is given."""

from __future__ import annotations

import time

from optsched.core.result import Status
from optsched.solvers import SolveOptions, progress
from optsched.solvers.certify import limit_phase, phase_at


def _timeline(*marks: tuple[float, str]) -> progress.Timeline:
    tl = progress.Timeline()
    tl.marks.extend(marks)
    return tl


def test_the_phase_running_at_the_deadline():
    now = time.monotonic()
    tl = _timeline((now - 9, "warm start"), (now - 5, "building the model (cpsat)"), (now - 0.1, "certifying"))
    past = SolveOptions(time_limit=10, deadline=now - 2)  # passed during the build
    assert limit_phase(tl, past, None, Status.FEASIBLE, now - 0.1) == "building the model (cpsat)"


def test_a_solve_stopped_by_its_limit_just_before_the_deadline():
    now = time.monotonic()
    tl = _timeline((now - 9, "building the model (cpsat)"), (now - 6, "solving (cpsat)"), (now - 0.01, "certifying"))
    # the deadline is 0.1 s away (within the margin), or passed while certifying: the solve ran out
    soon = SolveOptions(time_limit=10, deadline=now + 0.1)
    assert limit_phase(tl, soon, None, Status.FEASIBLE, now - 0.01) == "solving (cpsat)"
    during = SolveOptions(time_limit=10, deadline=now - 0.005)
    assert limit_phase(tl, during, None, Status.FEASIBLE, now - 0.01) == "solving (cpsat)"


def test_no_phase_ran_out():
    now = time.monotonic()
    tl = _timeline((now - 1, "solving (highs)"), (now - 0.5, "certifying"))
    spare = SolveOptions(time_limit=60, deadline=now + 50)
    assert limit_phase(tl, spare, None, Status.FEASIBLE, now - 0.5) is None  # stopped with time to spare
    # ... unless the solver says it stopped at its own (a phase's share of the) limit
    assert limit_phase(tl, spare, None, Status.FEASIBLE, now - 0.5, solver_stopped=True) == "solving (highs)"
    past = SolveOptions(time_limit=10, deadline=now - 1)
    for status in (Status.OPTIMAL, Status.INTERRUPTED, Status.INFEASIBLE):
        assert limit_phase(tl, past, None, status, now - 0.5) is None
    assert limit_phase(tl, SolveOptions(time_limit=None), None, Status.FEASIBLE, now) is None


def test_a_phase_cut_short_is_named_and_the_time_before_the_call():
    now = time.monotonic()
    tl = _timeline((now - 1, "building the model (highs)"))
    o = SolveOptions(time_limit=60, deadline=now + 50)
    assert limit_phase(tl, o, "building the model (highs)", Status.FEASIBLE, now) == "building the model (highs)"
    assert phase_at(tl, now - 5) == "before the call" and phase_at(None, now) is None


def test_which_solver_results_mean_a_time_limit():
    from optsched.solvers.exact import _at_time_limit
    from optsched.solvers.options import SolveResult

    def sr(status, solver, message):
        return SolveResult(status, None, None, 1.0, solver, "", message=message)

    assert _at_time_limit(sr(Status.FEASIBLE, "cpsat", "FEASIBLE"))
    assert _at_time_limit(sr(Status.NO_SOLUTION, "highs", "maxTimeLimit"))
    assert not _at_time_limit(sr(Status.OPTIMAL, "cpsat", "OPTIMAL"))
    assert not _at_time_limit(sr(Status.FEASIBLE, "highs", "iterationLimit"))
    assert not _at_time_limit(None)
    assert _at_time_limit(sr(Status.FEASIBLE, "portfolio", "cpsat: feasible; highs: skipped"))
    assert not _at_time_limit(sr(Status.FEASIBLE, "portfolio", "cpsat: optimal; highs: error"))


def test_timeline_seconds_merge_a_phase_entered_twice():
    tl = _timeline((0.0, "a"), (1.0, "b"), (3.0, "a"), (3.5, "c"))
    assert tl.seconds(until=4.0) == {"a": 1.5, "b": 2.0, "c": 0.5}
    assert tl.at(2.0) == "b" and tl.at(-1.0) is None and tl.at(10.0) == "c"
