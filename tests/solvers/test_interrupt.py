"""Ctrl-C (SIGINT) during exact solves (optsched.solvers.interrupt): the solver stops, its incumbent
is kept (status interrupted), SIGINT behaves as usual afterwards. In process: the signal is sent
from a progress listener when the solver reports its first own incumbent, so the test does not
depend on timing."""

from __future__ import annotations

import os
import signal
import warnings

import pytest

from optsched.core.objectives import objective_value
from optsched.core.result import Status
from optsched.rigid import decode_placements, random_instance, solve_exact
from optsched.solvers import SolveOptions, interrupt, progress, solve_cpsat
from optsched.verify import verify_result

OBJ = "total_weighted_completion_time"


def _serial(inst):
    """A feasible but poor schedule: the jobs one after another (by release)."""
    t, starts = 0.0, {}
    for j in sorted(inst.jobs, key=lambda j: (j.arrival, j.id)):
        t = max(t, j.arrival)
        starts[j.id] = t
        t += j.work
    return decode_placements(inst, starts)


def _sigint_on_first_improvement(start_value):
    sent = []

    def hook(incumbent, bound):
        if incumbent is not None and incumbent < start_value - 1e-9 and not sent:
            sent.append(incumbent)
            os.kill(os.getpid(), signal.SIGINT)

    return hook, sent


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_sigint_stops_the_solver_and_keeps_its_incumbent(backend):
    inst = random_instance(40, n_servers=4, gpus_per_server=4, seed=11)
    bad = _serial(inst)
    bad_value = objective_value(inst, bad, OBJ)
    hook, sent = _sigint_on_first_improvement(bad_value)
    with warnings.catch_warnings(), progress.listen(hook):
        warnings.simplefilter("ignore")
        r = solve_exact(inst, backend=backend, initial=bad, options=SolveOptions(time_limit=600, threads=1))
    assert sent, "the solver never reported an incumbent better than the serial schedule"
    assert r.status == Status.INTERRUPTED
    assert r.info["incumbent"] == "solver"  # the solver's schedule, not the warm start
    assert r.objective < bad_value and verify_result(inst, r).ok
    assert r.bound is not None and r.bound <= r.objective
    # the handler is gone and SIGINT is Python's again (CP-SAT's own handling would leave SIG_DFL)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not interrupt.propagating()


def test_sigint_after_a_cpsat_solve_still_raises_keyboard_interrupt():
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = m.new_int_var(0, 5, "x")
    m.maximize(x)
    assert solve_cpsat(m).objective == 5
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs between bytecodes
            pass


def test_sigint_inside_stop_on_interrupt_raises_interrupted_with_the_result():
    inst = random_instance(40, n_servers=4, gpus_per_server=4, seed=11)
    bad = _serial(inst)
    hook, sent = _sigint_on_first_improvement(objective_value(inst, bad, OBJ))
    with warnings.catch_warnings(), progress.listen(hook):
        warnings.simplefilter("ignore")
        with pytest.raises(interrupt.Interrupted) as e, interrupt.stop_on_interrupt():
            solve_exact(inst, backend="cpsat", initial=bad, options=SolveOptions(time_limit=600, threads=1))
    r = e.value.result
    assert sent and r.status == Status.INTERRUPTED and verify_result(inst, r).ok
    assert isinstance(e.value, KeyboardInterrupt)


def test_sigint_while_the_model_is_built_returns_the_warm_start(monkeypatch):
    """Ctrl-C in Python code (a Pyomo build) raises inside run_exact, which returns the warm
    start with the combinatorial bound, status interrupted."""
    import sys

    rexact = sys.modules["optsched.rigid.exact"]
    inst = random_instance(12, n_servers=2, gpus_per_server=4, seed=3)
    real = rexact.build_time_indexed

    def build_then_sigint(*a, **k):
        m = real(*a, **k)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
        return m

    monkeypatch.setattr(rexact, "build_time_indexed", build_then_sigint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_exact(inst, backend="highs", options=SolveOptions(time_limit=60, threads=1))
    assert r.status == Status.INTERRUPTED and r.info["incumbent"] == "initial"
    assert r.info["stopped_because"].startswith("interrupted")
    assert r.bound is not None and r.bound <= r.objective and verify_result(inst, r).ok


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_a_signal_the_caller_ignores_stays_ignored_inside_handle_signals_and_guard():
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGHUP, signal.SIGINT)}
    try:
        assert interrupt.ignored(signal.SIGHUP) and not interrupt.ignored(signal.SIGTERM)
        with interrupt.handle_signals():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_IGN, signal.SIG_DFL)  # taken
        with interrupt.guard():  # in Python: SIGINT only, and not when the caller ignores it
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def test_run_stoppable_leaves_a_call_that_does_not_stop_and_gives_the_streams_back():
    import sys
    import threading

    release, asked, silenced = threading.Event(), [], []
    stdout = sys.stdout

    def stuck():  # a solver in a phase without callbacks, which captured the process's output
        sys.stdout = None
        release.wait()
        return "late"

    with interrupt.guard():
        os.kill(os.getpid(), signal.SIGINT)  # taken by the guard: requested, nothing raised
        with pytest.raises(interrupt.Abandoned):
            interrupt.run_stoppable(
                stuck, grace=0.0, on_request=lambda: asked.append(1), on_abandon=lambda: silenced.append(1)
            )
    assert asked == [1] and silenced == [1]
    assert sys.stdout is stdout  # given back while the call goes on
    assert interrupt.abandoned()
    release.set()
    interrupt.join_abandoned()
    assert not interrupt.abandoned()
    sys.stdout = stdout


def test_run_stoppable_returns_the_result_and_raises_the_error_of_a_call_that_ends():
    assert interrupt.run_stoppable(lambda: 42, grace=1.0) == 42
    with pytest.raises(ZeroDivisionError):
        interrupt.run_stoppable(lambda: 1 / 0, grace=1.0)


def test_run_stoppable_leaves_a_call_that_captures_the_output_only_once_it_has():
    import sys
    import threading

    go, release = threading.Event(), threading.Event()
    stdout, stderr = sys.stdout, sys.stderr

    def slow_to_capture():  # Pyomo's solve before its capture_output: it must not take them after the give-back
        go.wait()
        sys.stdout = sys.stderr = None
        release.wait()

    timer = threading.Timer(0.2, go.set)
    with interrupt.guard():
        os.kill(os.getpid(), signal.SIGINT)
        timer.start()
        with pytest.raises(interrupt.Abandoned):
            interrupt.run_stoppable(slow_to_capture, grace=0.0, captures_output=True)
    assert go.is_set()  # left only after it had taken the streams
    assert (sys.stdout, sys.stderr) == (stdout, stderr)  # and they were given back
    release.set()
    interrupt.join_abandoned()
