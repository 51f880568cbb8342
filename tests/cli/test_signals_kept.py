"""Signals as the caller set them: a SIGHUP, SIGINT or SIGTERM that the command was started with
ignored (``nohup``, ``trap '' HUP``, a script's background job) stays ignored, in the ``optsched``
commands and in the ``python -m optsched.experiments...`` modules, which end a signal they do take
with one line and 128 + its number. Each child is started with the signal ignored (as ``nohup``
starts it), sent that signal, then one it takes: the exit code tells which one ended it (signals
pending together are handled in the order of their numbers, so no sleep is needed)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

WAIT = 600  # seconds: generous on a loaded machine; never reached when things work


def _started_ignoring(signum: int, args: list[str], tmp_path) -> subprocess.Popen:
    def ignore() -> None:  # in the child, before exec: what nohup and `trap ''` do
        signal.signal(signum, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, *args],
        preexec_fn=ignore,  # the point of the test; no threads are started before
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "stderr.txt", "w"),  # the child writes it
        cwd=tmp_path,
    )


def _wait_for(tmp_path, p: subprocess.Popen, marker: str) -> None:
    end = time.monotonic() + WAIT
    while marker not in (tmp_path / "stderr.txt").read_text():
        if p.poll() is not None or time.monotonic() > end:
            p.kill()
            pytest.fail("no marker:\n" + (tmp_path / "stderr.txt").read_text())
        time.sleep(0.05)


@pytest.mark.parametrize(
    "ignored, then, code",
    [(signal.SIGHUP, signal.SIGTERM, 143), (signal.SIGINT, signal.SIGHUP, 129), (signal.SIGTERM, signal.SIGINT, 130)],
)
def test_a_signal_inherited_as_ignored_stays_ignored_in_simulate(tmp_path, ignored, then, code):
    args = ["-m", "optsched", "simulate", "--trace", "synthetic", "--jobs", "200000", "--servers", "100"]
    p = _started_ignoring(ignored, [*args, "--policy", "las", "--verbose", "--out", "sim"], tmp_path)
    _wait_for(tmp_path, p, "engine")  # the simulator is built: the run is under way
    p.send_signal(ignored)
    p.send_signal(then)
    assert p.wait(timeout=WAIT) == code
    err = (tmp_path / "stderr.txt").read_text()
    assert f"interrupted ({'Ctrl-C' if then == signal.SIGINT else then.name})" in err
    assert "Traceback" not in err


def test_nohup_protects_a_solve(tmp_path):
    from optsched.rigid import random_instance

    random_instance(100, n_servers=4, gpus_per_server=8, seed=3).to_json(tmp_path / "n100.json")
    args = ["-m", "optsched", "solve", "n100.json", "--backend", "cpsat", "--time-limit", "3600", "--out", "run"]
    p = _started_ignoring(signal.SIGHUP, args, tmp_path)
    _wait_for(tmp_path, p, "solving (cpsat)")
    p.send_signal(signal.SIGHUP)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=WAIT) == 143
    assert (tmp_path / "run" / "schedule.json").exists()  # the incumbent is written


def test_the_sweep_module_keeps_an_ignored_sighup_and_ends_sigterm_with_a_line(tmp_path):
    args = ["-m", "optsched.experiments.asrpt.paper", "--out", "sweep", "--seeds", "1", "--executor", "serial"]
    p = _started_ignoring(signal.SIGHUP, args, tmp_path)
    end = time.monotonic() + WAIT
    while not (tmp_path / "sweep").exists() and p.poll() is None and time.monotonic() < end:
        time.sleep(0.05)  # the sweep has started
    p.send_signal(signal.SIGHUP)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=WAIT) == 143
    err = (tmp_path / "stderr.txt").read_text()
    assert "python -m optsched.experiments.asrpt.paper: interrupted (SIGTERM)." in err
    assert "Traceback" not in err
