"""Ctrl-C on the command line: SIGINT (and SIGTERM, SIGHUP) to a running ``optsched solve``
(CP-SAT, HiGHS), ``compare``, ``simulate`` and ``demo --out`` returns and writes what was found so
far, exit code 128 + the signal, and stdout holds the result only. The signal is sent once a
marker is there (a line on stderr: the progress display, the demo's "rows written", the engine
chosen; a file written), never after a fixed sleep; the timeouts are generous (a loaded machine)."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import optsched
from optsched.rigid import random_instance

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")

WAIT = 600  # seconds: generous on a loaded 2-core machine; never reached when things work
INCUMBENT = re.compile(r"incumbent ([0-9,.]+)")
BOUND = re.compile(r"bound ([0-9,.]+)")


class _Run:
    """``python -m optsched ARGS`` with stdout to a file and stderr read line by line."""

    def __init__(self, args: list[str], tmp_path) -> None:
        self.out_path = tmp_path / "stdout.txt"
        self._out = open(self.out_path, "w")  # noqa: SIM115 - closed in finish()
        self.p = subprocess.Popen(
            [sys.executable, "-m", "optsched", *args], stdout=self._out, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self._q: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stderr is not None
        for line in self.p.stderr:
            self._q.put(line)
        self._q.put(None)

    def wait_for(self, ok) -> str:
        """The first stderr line for which ``ok(line)`` holds (fails if the process ends first)."""
        end = time.monotonic() + WAIT
        while time.monotonic() < end:
            try:
                line = self._q.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                pytest.fail("the command ended before the marker:\n" + "".join(self.lines))
            self.lines.append(line)
            if ok(line):
                return line
        self.p.kill()
        pytest.fail("no marker within the timeout:\n" + "".join(self.lines))

    def interrupt(self) -> tuple[int, str, str]:
        return self.interrupt_with(signal.SIGINT)

    def interrupt_with(self, signum: int | None) -> tuple[int, str, str]:
        """Send ``signum`` (None: nothing more) and wait for the end: (exit code, stdout, stderr)."""
        if signum is not None:
            self.p.send_signal(signum)
        code = self.p.wait(timeout=WAIT)
        self._out.close()
        while (line := self._q.get(timeout=WAIT)) is not None:
            self.lines.append(line)
        return code, self.out_path.read_text(), "".join(self.lines)


def _value(pattern: re.Pattern, line: str) -> float | None:
    m = pattern.search(line)
    return None if m is None else float(m.group(1).replace(",", ""))


@pytest.fixture(scope="module")
def big_instance(tmp_path_factory):
    """Not proven in minutes by either back end (n100 on 4 x 8 GPUs; HiGHS's root LP takes seconds)."""
    path = tmp_path_factory.mktemp("inst") / "n100.json"
    random_instance(100, n_servers=4, gpus_per_server=8, seed=3).to_json(path)
    return path


def _check_written(inst_path, out_dir, stdout: str, last_incumbent: float | None) -> None:
    from optsched.core.schedule import Schedule
    from optsched.verify import verify

    res = json.loads(stdout)  # stdout is the result only (one JSON document)
    assert res["status"] == "interrupted" and res["verified"] is True
    written = json.loads((out_dir / "result.json").read_text())
    assert written["status"] == "interrupted" and written["objective"] == res["objective"]
    inst = optsched.load_instance(inst_path)
    rep = verify(
        inst,
        Schedule.load(out_dir / "schedule.json"),
        objective="total_weighted_completion_time",
        claimed=res["objective"],
    )
    assert rep.ok, rep.summary()  # feasible, with the objective the result claims
    if last_incumbent is not None:  # the best incumbent at the time of the signal, or better
        assert res["objective"] <= last_incumbent + 1e-9
    assert res["bound"] is not None and res["bound"] <= res["objective"]


def test_sigint_to_a_cpsat_solve_returns_and_writes_its_incumbent(big_instance, tmp_path):
    out = tmp_path / "run"
    run = _Run(
        ["solve", str(big_instance), "--backend", "cpsat", "--time-limit", "3600", "--json", "--out", str(out)],
        tmp_path,
    )
    line = run.wait_for(lambda s: "solving (cpsat)" in s)
    code, stdout, stderr = run.interrupt()
    assert code == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr
    _check_written(big_instance, out, stdout, _value(INCUMBENT, line))


def test_sigint_to_a_highs_solve_returns_and_writes_its_incumbent(big_instance, tmp_path):
    out = tmp_path / "run"
    run = _Run(
        ["solve", str(big_instance), "--backend", "highs", "--time-limit", "3600", "--json", "--out", str(out)],
        tmp_path,
    )
    first = run.wait_for(lambda s: BOUND.search(s) is not None and _value(BOUND, s) is not None)
    start_bound = _value(BOUND, first)
    # HiGHS is running (its MIP callbacks report a bound above the combinatorial one)
    line = run.wait_for(lambda s: "solving (highs)" in s and (_value(BOUND, s) or 0) > start_bound)
    code, stdout, stderr = run.interrupt()
    assert code == 130, stderr
    assert "Traceback" not in stderr and "kInterrupt" not in stderr
    _check_written(big_instance, out, stdout, _value(INCUMBENT, line))
    assert json.loads(stdout)["bound"] >= _value(BOUND, line) - 1  # HiGHS's bound is kept (rounded to a slot)


def test_sigint_to_demo_keeps_the_finished_rows(tmp_path):
    out = tmp_path / "demo"
    run = _Run(["demo", "--only", "rigid", "--only", "sojourn", "--out", str(out), "--json"], tmp_path)
    line = run.wait_for(lambda s: "rows written to" in s)
    n = int(line.split("]")[1].split()[0])
    code, stdout, stderr = run.interrupt()
    assert code == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr
    import pandas as pd

    table = pd.read_csv(out / "demo.csv")
    assert len(table) >= n > 0
    rows = json.loads(stdout)  # the finished rows, as written
    assert len(rows) == len(table)
    assert set(table["paper"]) <= {"rigid", "sojourn"}


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_solver_log_goes_to_stderr_and_stdout_is_the_result(backend):
    """-v: the solver's log (native output, and Pyomo's echo of it) on stderr, the JSON on stdout
    (it used to stop with Pyomo's "TeeStream: deadlock observed" under --json)."""
    out = subprocess.run(
        [sys.executable, "-m", "optsched", "solve", "toy:rigid-2x2-five", "--backend", backend, "-v", "--json"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "optimal"
    assert ("HiGHS" if backend == "highs" else "CP-SAT") in out.stderr


# -- SIGTERM and SIGHUP are Ctrl-C; a second signal changes nothing --------------------------------


@pytest.mark.parametrize(
    "backend, signum, code",
    [
        ("cpsat", signal.SIGTERM, 143),
        pytest.param("highs", signal.SIGHUP, 129, marks=pytest.mark.slow),
    ],
)
def test_sigterm_and_sighup_to_a_solve_write_its_best_schedule(big_instance, tmp_path, backend, signum, code):
    out = tmp_path / "run"
    run = _Run(
        ["solve", str(big_instance), "--backend", backend, "--time-limit", "3600", "--json", "--out", str(out)],
        tmp_path,
    )
    line = run.wait_for(lambda s: f"solving ({backend})" in s and INCUMBENT.search(s) is not None)
    run.p.send_signal(signum)
    code_, stdout, stderr = run.interrupt_with(None)
    assert code_ == code, stderr
    assert "Traceback" not in stderr and signal.Signals(signum).name in stderr
    _check_written(big_instance, out, stdout, _value(INCUMBENT, line))
    assert not (out / ".optsched.lock").exists()  # the folder is free again


def test_a_second_sigint_during_cpsat_does_not_kill_the_process(big_instance, tmp_path):
    out = tmp_path / "run"
    run = _Run(
        ["solve", str(big_instance), "--backend", "cpsat", "--time-limit", "3600", "--json", "--out", str(out)],
        tmp_path,
    )
    line = run.wait_for(lambda s: "solving (cpsat)" in s and INCUMBENT.search(s) is not None)
    run.p.send_signal(signal.SIGINT)
    time.sleep(0.2)
    code, stdout, stderr = run.interrupt()  # the second one
    assert code == 130, stderr
    assert "Traceback" not in stderr
    _check_written(big_instance, out, stdout, _value(INCUMBENT, line))


def test_sigterm_to_compare_keeps_rows_bound_and_pictures_and_json_prints_them(tmp_path):
    out = tmp_path / "cmp"
    run = _Run(
        [
            "compare",
            "--trace",
            "synthetic",
            "--servers",
            "8",
            "--jobs",
            "1500",
            "--max-duration",
            "36000",
            "--policies",
            "fifo,sjf,srtf,las,srtf-periodic,lazer,lazer-zero,lazer-fixed",
            "--json",
            "--out",
            str(out),
        ],
        tmp_path,
    )
    end = time.monotonic() + WAIT
    while not (out / "compare.csv").exists() and time.monotonic() < end and run.p.poll() is None:
        time.sleep(0.05)
    run.p.send_signal(signal.SIGTERM)
    code, stdout, stderr = run.interrupt_with(None)
    assert code == 143, stderr
    assert "Traceback" not in stderr and "SIGTERM" in stderr
    import pandas as pd

    table = pd.read_csv(out / "compare.csv")
    rows = json.loads(stdout)["rows"]  # --json prints the finished rows
    assert 0 < len(rows) == len(table) < 8
    assert json.loads((out / "bound.json").read_text())["bound"]["mean_jct"] > 0
    for name in ("jct_cdf", "jct_summary", "queue_delay_cdf", "utilization"):
        assert (out / f"{name}.svg").read_text().rstrip().endswith("</svg>")
        assert (out / f"{name}.png").stat().st_size > 0
    assert not list(out.glob(".*.tmp"))


@pytest.mark.slow
def test_sigterm_to_simulate_says_so_and_writes_nothing_half(tmp_path):
    out = tmp_path / "sim"
    run = _Run(
        [
            "simulate",
            "--trace",
            "synthetic",
            "--jobs",
            "200000",
            "--servers",
            "100",
            "--policy",
            "las",
            "--load-time",
            "5",
            "--verbose",
            "--out",
            str(out),
        ],
        tmp_path,
    )
    run.wait_for(lambda s: "engine" in s)  # the simulator is built: the run is under way
    code, _, stderr = run.interrupt_with(signal.SIGTERM)
    assert code == 143, stderr
    assert "Traceback" not in stderr and "interrupted (SIGTERM)" in stderr
    assert not list(out.glob(".*.tmp"))
