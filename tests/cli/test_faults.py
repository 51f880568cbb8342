"""Faults while writing: every command leaves each result file whole or absent and ends with one
line that names the cause and the fix (exit 1), never a traceback: a full disk at a seeded random
write (a patched ``os.replace``, the last step of every atomic write), memory running out in a
writer, and (as root, where a small tmpfs can be mounted; slow) a real full disk."""

from __future__ import annotations

import errno
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from optsched.cli import main
from optsched.core.output import MANIFEST_NAME

TOY = "toy:rigid-2x2-five"
SYN = ["--trace", "synthetic", "--servers", "4", "--jobs", "300", "--max-duration", "3600"]

COMMANDS = {
    "solve": ["solve", TOY, "--plot"],
    "simulate": ["simulate", *SYN[:6]],
    "compare": ["compare", *SYN, "--policies", "fifo,srtf", "--format", "csv", "--format", "json"],
    "demo": ["demo", "--quick", "--only", "rigid"],
}


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())} if d.exists() else {}


def _whole(d: Path) -> None:
    """No temporary file is left, every picture ends as it should."""
    assert not [p.name for p in d.glob(".*.tmp")]
    for p in d.glob("*.svg"):
        assert p.read_text().rstrip().endswith("</svg>"), p.name
    for p in d.glob("*.png"):
        assert p.read_bytes()[-8:] == b"\x00\x00\x00\x00IEND\xaeB`\x82"[-8:], p.name  # the PNG end chunk


def _inside(path, folder: Path) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(folder) + os.sep)


def _writes_of(argv, tmp_path, capsys) -> int:
    """How many atomic writes the command makes into its --out folder."""
    real, n = os.replace, [0]

    def count(src, dst, *a, **k):
        n[0] += _inside(dst, tmp_path / "count")
        return real(src, dst, *a, **k)

    os.replace = count
    try:
        code = main([*argv, "--out", str(tmp_path / "count")])
    finally:
        os.replace = real
    capsys.readouterr()
    assert code == 0
    return n[0]


@pytest.mark.parametrize(
    "command", [c if c in ("solve", "compare") else pytest.param(c, marks=pytest.mark.slow) for c in COMMANDS]
)
def test_a_full_disk_at_a_random_write_leaves_whole_files_and_one_line(command, tmp_path, capsys, monkeypatch):
    argv = COMMANDS[command]
    total = _writes_of(argv, tmp_path, capsys)
    k = random.Random(f"{command}-34").randrange(1, total + 1)
    real, n = os.replace, [0]

    def full(src, dst, *a, **kw):
        n[0] += _inside(dst, tmp_path / "out")
        if n[0] == k and _inside(dst, tmp_path / "out"):
            raise OSError(errno.ENOSPC, "No space left on device", str(src))
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", full)
    d = tmp_path / "out"
    code = main([*argv, "--out", str(d)])
    monkeypatch.setattr(os, "replace", real)
    _, err = capsys.readouterr()
    assert code == 1, (k, total, err)
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("optsched: error:")]
    assert len(lines) == 1 and "No space left" in lines[0] and "--out elsewhere" in lines[0], err
    _whole(d)


def test_memory_running_out_while_the_job_table_is_written(tmp_path, capsys, monkeypatch):
    import pandas as pd

    real = pd.DataFrame.to_csv

    def to_csv(self, path=None, *a, **k):
        if "job_id" in self.columns and len(self) > 100:  # the job table, not the small ones
            raise MemoryError
        return real(self, path, *a, **k)

    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)
    d = tmp_path / "out"
    code = main(["simulate", *SYN[:6], "--out", str(d)])
    _, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert "Out of memory while writing" in err and "--jobs" in err
    assert "jobs.csv" not in _files(d)  # nothing of it
    _whole(d)


def test_an_interrupt_while_a_table_is_written_is_taken_after_it(tmp_path, capsys, monkeypatch):
    """A signal in the middle of a write waits until the file is whole, then stops the command."""
    import signal

    import pandas as pd

    real, sent = pd.DataFrame.to_csv, []

    def to_csv(self, path=None, *a, **k):
        if not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs here, in the middle of the write
                pass
        return real(self, path, *a, **k)

    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)
    d = tmp_path / "out"
    code = main(["compare", *SYN, "--policies", "fifo,srtf", "--out", str(d)])
    _, err = capsys.readouterr()
    assert code == 143 and "interrupted after" in err and "(SIGTERM)" in err and "Traceback" not in err
    assert len(pd.read_csv(d / "compare.csv")) >= 1  # the table being written when the signal came is whole
    assert (d / "bound.json").is_file()
    _whole(d)


def _tmpfs(path: Path, kb: int) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kb}k", "tmpfs", str(path)], capture_output=True)
    return r.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("command, kb", [("compare", 200), ("simulate", 64), ("solve", 24)])
def test_a_real_full_disk(command, kb, tmp_path):
    mnt = tmp_path / "small"
    if not _tmpfs(mnt, kb):
        pytest.skip("needs root on Linux to mount a small tmpfs")
    try:
        d = mnt / "out"
        big = ["simulate", "--trace", "synthetic", "--servers", "4", "--jobs", "20000"]
        argv = {**COMMANDS, "simulate": big}[command]
        r = subprocess.run(
            [sys.executable, "-m", "optsched", *argv, "--out", str(d)], capture_output=True, text=True, timeout=600
        )
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stderr and "No space left" in r.stderr
        _whole(d)
        assert (d / MANIFEST_NAME).exists()
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
