"""A signal acts within seconds in every phase of a HiGHS solve and of the portfolio, and the
incumbent is kept: while Pyomo hands the model to HiGHS, in HiGHS's presolve and root LP (where
HiGHS calls no callback for 10 s and more: the solve runs in a thread and is left to stop on its
own once the grace has passed), in branch and bound (tests/cli/test_interrupt.py), in the
portfolio's members. Each test sends the signal when a marker line is on stderr and checks the exit
code, the message and the files; the seconds to act are measured in benchmarks/bench_signal.py,
not asserted here."""

from __future__ import annotations

import json
import re
import signal
import sys

import pytest

import optsched
from optsched.rigid import random_instance

from .test_interrupt import _Run

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

BOUND = re.compile(r"bound ([0-9,.]+)")


@pytest.fixture(scope="module")
def big_instance(tmp_path_factory):
    """HiGHS spends its first 10-15 s on this one in presolve and the root LP."""
    path = tmp_path_factory.mktemp("inst") / "n100.json"
    random_instance(100, n_servers=4, gpus_per_server=8, seed=3).to_json(path)
    return path


def _check(inst_path, out, code, stdout, stderr, signum) -> None:
    from optsched.core.schedule import Schedule
    from optsched.verify import verify

    assert code == 128 + signum, stderr
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    assert f"interrupted ({name})" in stderr
    assert "Traceback" not in stderr and "kInterrupt" not in stderr
    res = json.loads(stdout)  # stdout is the result alone: no HiGHS log line got into it
    assert res["status"] == "interrupted" and res["verified"] is True
    assert res["bound"] is not None and res["bound"] <= res["objective"]
    assert json.loads((out / "result.json").read_text())["objective"] == res["objective"]
    rep = verify(
        optsched.load_instance(inst_path),
        Schedule.load(out / "schedule.json"),
        objective="total_weighted_completion_time",
        claimed=res["objective"],
    )
    assert rep.ok, rep.summary()


def _solve(inst, out, backend: str, tmp_path) -> _Run:
    args = ["solve", str(inst), "--backend", backend, "--time-limit", "3600", "--json", "--out", str(out)]
    return _Run(args, tmp_path)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_as_highs_starts_is_taken_and_the_incumbent_kept(big_instance, tmp_path, signum):
    """The first "solving (highs)" line: Pyomo hands the model over, or HiGHS presolves."""
    out = tmp_path / "run"
    run = _solve(big_instance, out, "highs", tmp_path)
    run.wait_for(lambda s: "solving (highs)" in s)
    code, stdout, stderr = run.interrupt_with(signum)
    _check(big_instance, out, code, stdout, stderr, signum)


def test_a_signal_in_highs_presolve_or_root_lp_is_taken_and_the_incumbent_kept(big_instance, tmp_path):
    """The second "solving (highs)" line with the bound HiGHS started from: the display's line
    repeated while HiGHS works without news (presolve, root LP), or the first one of its search."""
    out = tmp_path / "run"
    run = _solve(big_instance, out, "highs", tmp_path)
    first = run.wait_for(lambda s: "solving (highs)" in s)
    run.wait_for(lambda s: "solving (highs)" in s and s != first)
    code, stdout, stderr = run.interrupt_with(signal.SIGTERM)
    _check(big_instance, out, code, stdout, stderr, signal.SIGTERM)


def test_a_signal_to_the_portfolio_is_taken_and_the_incumbent_kept(big_instance, tmp_path):
    out = tmp_path / "run"
    run = _solve(big_instance, out, "portfolio", tmp_path)
    run.wait_for(lambda s: "solving (portfolio)" in s)
    code, stdout, stderr = run.interrupt_with(signal.SIGTERM)
    _check(big_instance, out, code, stdout, stderr, signal.SIGTERM)
