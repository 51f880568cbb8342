"""``optsched compare`` keeps what finished when stopped without ``--out``: the finished rows are
printed (the table, or JSON with ``--json``) before exit 130/143; with stderr not a terminal (a log
file, a pipe) progress is one line per finished row (rows done, elapsed, expected). The signal is
sent once the first progress line is on stderr, never after a fixed sleep."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from optsched.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

WAIT = 600  # seconds: generous on a loaded machine; never reached when things work
POLICIES = ["fifo", "sjf", "srtf", "las", "srtf-periodic", "lazer", "lazer-zero", "lazer-fixed"]
ARGS = ["compare", "--trace", "synthetic", "--servers", "8", "--jobs", "1500", "--max-duration", "36000"]
LINE = re.compile(r"^compare: (\d+)/(\d+) rows done \(([\w-]+)\), [\d.]+ (s|min) elapsed", re.M)


def _stopped(tmp_path, extra: list[str], signum: int) -> tuple[int, str, str]:
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with open(out, "w") as fo, open(err, "w") as fe:
        p = subprocess.Popen(
            [sys.executable, "-m", "optsched", *ARGS, "--policies", ",".join(POLICIES), *extra], stdout=fo, stderr=fe
        )
        end = time.monotonic() + WAIT
        while not LINE.search(err.read_text()) and p.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        p.send_signal(signum)
        code = p.wait(timeout=WAIT)
    return code, out.read_text(), err.read_text()


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_compare_stopped_without_out_prints_the_finished_rows_as_a_table(tmp_path, signum, code):
    got, stdout, stderr = _stopped(tmp_path, [], signum)
    assert got == code, stderr
    assert "Traceback" not in stderr and "the finished rows are printed above" in stderr
    done = [m.group(3) for m in LINE.finditer(stderr)]
    assert done and len(done) < len(POLICIES)
    table = [line.split()[0] for line in stdout.splitlines() if line.split() and line.split()[0] in POLICIES]
    assert set(done) <= set(table) and len(table) - len(done) in (0, 1)  # a row may end with the signal
    assert "lower bound on the mean JCT" in stdout


def test_compare_stopped_without_out_prints_the_finished_rows_as_json(tmp_path):
    got, stdout, stderr = _stopped(tmp_path, ["--json"], signal.SIGTERM)
    assert got == 143, stderr
    rows = json.loads(stdout)["rows"]
    done = [m.group(3) for m in LINE.finditer(stderr)]
    assert 0 < len(rows) < len(POLICIES) and set(done) <= {r["policy"] for r in rows}


def test_progress_is_one_line_per_finished_row_when_stderr_is_not_a_terminal(capsys):
    small = ["compare", "--trace", "synthetic", "--jobs", "40", "--servers", "2", "--max-duration", "3600"]
    code = main([*small, "--policies", "fifo,sjf,srtf"])
    assert code == 0
    err = capsys.readouterr().err
    lines = LINE.findall(err)
    assert [(n, total) for n, total, _, _ in lines] == [("1", "3"), ("2", "3"), ("3", "3")]
    assert sorted(p for _, _, p, _ in lines) == ["fifo", "sjf", "srtf"]
    assert main([*small, "--policies", "fifo", "--quiet"]) == 0
    assert not LINE.search(capsys.readouterr().err)  # --quiet: none
