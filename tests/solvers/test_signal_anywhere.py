"""A signal at any moment of an exact solve (warm start, model build, CP-SAT probe, LP bound,
solving, certifying) ends it with a certified result, never with an exception from inside a
library: in-process, the signal is sent at the start of each phase (the phase names the progress
display shows) and at seeded random points counted in Python function calls, the way
``optsched solve`` runs a solve (inside a guard, SIGTERM and SIGHUP taken like Ctrl-C).

A Ctrl-C that landed inside Pyomo's ``relax_integer_vars`` (the LP bound) used to end in
Pyomo's ``DeveloperError`` ("the '_data' dictionary and '_index' attribute are out of sync for
indexed Var 'x'"), with the incumbent lost."""

from __future__ import annotations

import os
import random
import signal
import sys
import warnings

import pytest

from optsched.core.result import Status
from optsched.rigid import random_instance, solve_exact
from optsched.solvers import SolveOptions, interrupt, progress
from optsched.verify import verify_result

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

INSTANCE = random_instance(25, n_servers=4, gpus_per_server=8, seed=3)  # proven in seconds by either back end
TIME_LIMIT = 600.0  # never reached: which phases run does not depend on the machine's load


@pytest.fixture(autouse=True)
def no_probe(monkeypatch):
    """Without CP-SAT's short probe (which proves this instance at once) the staged CP-SAT solve goes
    through the LP bound, the phase where a signal used to land inside Pyomo's transformation."""
    import optsched.solvers.staged as staged

    monkeypatch.setattr(staged, "probe_time_budget", lambda options: 0.0)


def _solve(backend: str):
    """One solve as `optsched solve` runs it: signal handlers of the command line, a guard around it."""
    with warnings.catch_warnings(), interrupt.handle_signals(), interrupt.guard():
        warnings.simplefilter("ignore")
        r = solve_exact(INSTANCE, backend=backend, options=SolveOptions(time_limit=TIME_LIMIT, threads=1))
        return r, interrupt.received()


def _check(r, signum, sent: bool) -> None:
    assert r.status is not None
    if sent:
        assert signum is not None, "the signal was sent but not taken"
    if r.schedule is not None:
        assert verify_result(INSTANCE, r).ok, r.status
        assert r.bound is None or r.bound <= r.objective + 1e-6
    # the handlers of the command line are gone again
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _phases(backend: str) -> list[str]:
    seen: list[str] = []
    real = progress.phase

    def record(text: str) -> None:
        seen.append(text)
        real(text)

    progress.phase = record
    try:
        _solve(backend)
    finally:
        progress.phase = real
    return list(dict.fromkeys(seen))


ALL = [(b, s) for b in ("cpsat", "highs") for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]
FAST = [("cpsat", signal.SIGTERM), ("highs", signal.SIGHUP)]


@pytest.mark.parametrize(
    "backend, signum", [pytest.param(*c, marks=() if c in FAST else pytest.mark.slow) for c in ALL]
)
def test_a_signal_at_the_start_of_each_phase(backend, signum, monkeypatch):
    phases = _phases(backend)
    assert any("building" in p for p in phases) and any("solving" in p for p in phases), phases
    if backend == "cpsat":
        assert any("LP bound" in p for p in phases), phases  # the phase where Pyomo relaxes the model
    for target in phases:
        real = progress.phase
        sent = []

        def phase(text: str, target=target, sent=sent, real=real) -> None:
            real(text)
            if text == target and not sent:
                sent.append(text)
                os.kill(os.getpid(), signum)

        monkeypatch.setattr(progress, "phase", phase)
        r, got = _solve(backend)
        monkeypatch.setattr(progress, "phase", real)
        assert sent == [target]
        _check(r, got, sent=True)
        assert got == signum
        assert r.status == Status.INTERRUPTED or target == "certifying", (target, r.status)


def _count_calls(backend: str) -> int:
    n = [0]

    def prof(frame, event, arg):
        if event == "call":
            n[0] += 1

    sys.setprofile(prof)
    try:
        _solve(backend)
    finally:
        sys.setprofile(None)
    return n[0]


def _at_call(k: int, signum: int):
    """A profile function that sends ``signum`` at the k-th Python call (and records where)."""
    state = {"n": 0, "where": None}

    def prof(frame, event, arg):
        if event == "call":
            state["n"] += 1
            if state["n"] == k:
                state["where"] = frame.f_code.co_qualname
                os.kill(os.getpid(), signum)

    return prof, state


def _random_points(backend: str, n: int, seed: int) -> None:
    total = _count_calls(backend)
    rng = random.Random(seed)
    for k in sorted(rng.randrange(1, total) for _ in range(n)):
        prof, state = _at_call(k, rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]))
        sys.setprofile(prof)
        try:
            r, got = _solve(backend)
        finally:
            sys.setprofile(None)
        _check(r, got, sent=state["where"] is not None)


def test_a_signal_at_random_points_of_a_solve():
    _random_points("cpsat", 2, seed=34)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cpsat", "highs"])
def test_a_signal_at_many_random_points_of_a_solve(backend):
    _random_points(backend, 40, seed=35)


def test_a_signal_inside_pyomos_relaxation_of_the_lp_bound(monkeypatch):
    """The signal lands inside Pyomo's relax_integer_vars (the 50th variable it relaxes): the
    transformation finishes, the LP is skipped, the result is certified (it used to end in Pyomo's
    DeveloperError)."""
    from pyomo.core.plugins.transform.discrete_vars import RelaxIntegerVars

    real, calls = RelaxIntegerVars._relax_var, [0]

    def relax(self, v, reverse_dict):
        calls[0] += 1
        if calls[0] == 50:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(100):  # Python runs the handler between these bytecodes: inside the transformation
                pass
        return real(self, v, reverse_dict)

    monkeypatch.setattr(RelaxIntegerVars, "_relax_var", relax)
    r, got = _solve("cpsat")
    assert calls[0] > 50, "the LP bound was not computed"
    _check(r, got, sent=True)
    assert r.status == Status.INTERRUPTED and r.schedule is not None
