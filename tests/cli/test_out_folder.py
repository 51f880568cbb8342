"""One run per --out folder: a second run into a folder in use is refused (exit 2, which run holds
it); a lock left by a run that died is taken over; --force removes the files the earlier run
recorded there, and only those, and never writes over another file (a folder without a record, a
file of the user's, the run's own input: exit 2 naming the file); an empty --out is refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from optsched.cli import main
from optsched.core.output import LOCK_NAME, MANIFEST_NAME, prepare_out_dir, recorded_files, release_out_dir
from optsched.exceptions import InvalidOptionError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fcntl locks and POSIX signals")

TOY = "toy:rigid-2x2-five"
WAIT = 300


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _holder(folder, command: str = "compare") -> subprocess.Popen:
    """Another process that takes ``folder`` and keeps it until killed."""
    code = textwrap.dedent(
        f"""
        import signal, sys
        from optsched.core.output import prepare_out_dir
        prepare_out_dir({str(folder)!r}, command={command!r})
        print("taken", flush=True)
        signal.pause()
        """
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "taken"
    return p


def test_a_second_run_into_a_folder_in_use_is_refused(tmp_path, capsys):
    d = tmp_path / "out"
    holder = _holder(d)
    try:
        code, out, err = run(["solve", TOY, "--out", str(d)], capsys)
        assert code == 2 and out == ""
        assert "in use by another optsched run" in err and "optsched compare" in err and str(holder.pid) in err
        assert err.count("\n") == 1
        assert not (d / "result.json").exists()  # the second run wrote nothing
        with pytest.raises(InvalidOptionError, match="in use"):
            prepare_out_dir(d, force=True)  # --force does not take a folder in use either
    finally:
        holder.terminate()
        holder.wait(WAIT)
    # the holder ended (its lock with it): the folder is free, and holds no result yet
    code, out, err = run(["solve", TOY, "--out", str(d)], capsys)
    assert code == 0, err
    assert recorded_files(d) == ["schedule.json", "result.json"]
    assert not (d / LOCK_NAME).exists()


def test_a_lock_left_by_a_killed_run_is_taken_over(tmp_path, capsys):
    d = tmp_path / "out"
    holder = _holder(d, "solve")
    holder.send_signal(signal.SIGKILL)  # dies without a word: its lock file stays
    holder.wait(WAIT)
    assert (d / LOCK_NAME).exists()
    code, _, err = run(["solve", TOY, "--out", str(d)], capsys)
    assert code == 0, err
    assert (d / "schedule.json").is_file() and not (d / LOCK_NAME).exists()


@pytest.mark.slow
def test_two_solves_into_one_new_folder_one_is_refused(tmp_path):
    d = tmp_path / "same"
    inst = tmp_path / "n60.json"
    from optsched.rigid import random_instance

    random_instance(60, n_servers=4, gpus_per_server=8, seed=3).to_json(inst)
    first = subprocess.Popen(
        [sys.executable, "-m", "optsched", "solve", str(inst), "--time-limit", "3600", "--out", str(d), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        end = time.monotonic() + WAIT
        while not (d / LOCK_NAME).exists() and time.monotonic() < end:
            time.sleep(0.05)
        second = subprocess.run(
            [sys.executable, "-m", "optsched", "solve", TOY, "--out", str(d)],
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert second.returncode == 2 and "in use by another optsched run" in second.stderr
        assert "optsched solve" in second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=WAIT)
    assert first.returncode == 130, err
    assert json.loads((d / "result.json").read_text())["instance"] == "rigid-random-n60-4x8"  # not mixed


def test_force_removes_the_earlier_runs_files_and_only_those(tmp_path, capsys):
    d = tmp_path / "out"
    assert run(["solve", TOY, "--out", str(d), "--plot"], capsys)[0] == 0
    assert set(recorded_files(d)) == {"schedule.json", "schedule.png", "schedule.svg", "result.json"}
    (d / "notes.txt").write_text("mine")
    code, _, err = run(["solve", TOY, "--out", str(d)], capsys)
    assert code == 2 and "--force" in err  # not empty: refused without --force
    code, _, err = run(["solve", TOY, "--out", str(d), "--force"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in d.iterdir()) == [MANIFEST_NAME, "notes.txt", "result.json", "schedule.json"]
    assert recorded_files(d) == ["schedule.json", "result.json"]


def test_force_on_a_folder_without_a_record_is_refused_naming_a_file(tmp_path, capsys):
    d = tmp_path / "out"
    d.mkdir()
    (d / "summary.json").write_text('{"mine": 1}')  # the user's own file
    code, out, err = run(["solve", TOY, "--out", str(d), "--force"], capsys)
    assert code == 2 and out == ""
    assert "no record" in err and "'summary.json'" in err and err.count("\n") == 1
    assert (d / "summary.json").read_text() == '{"mine": 1}' and not (d / "result.json").exists()


def test_force_never_writes_over_a_file_the_record_does_not_list(tmp_path, capsys):
    d = tmp_path / "out"
    assert run(["solve", TOY, "--out", str(d)], capsys)[0] == 0  # the record: schedule.json, result.json
    (d / "summary.json").write_text('{"mine": 1}')  # the user's own file, of a name simulate writes
    argv = [
        "simulate",
        "--trace",
        "synthetic",
        "--jobs",
        "20",
        "--servers",
        "2",
        "--max-duration",
        "3600",
        "--out",
        str(d),
        "--force",
    ]
    code, _, err = run(argv, capsys)
    assert code == 2, err
    assert "'summary.json'" in err and "not written by an earlier optsched run" in err
    assert (d / "summary.json").read_text() == '{"mine": 1}'
    assert not (d / "result.json").exists()  # the earlier run's files were removed (--force), as recorded


@pytest.mark.parametrize("force", [False, True])
def test_a_folder_holding_the_input_is_refused_with_or_without_force(tmp_path, capsys, force):
    d = tmp_path / "o"
    argv = [
        "simulate",
        "--trace",
        "synthetic",
        "--jobs",
        "20",
        "--servers",
        "2",
        "--max-duration",
        "3600",
        "--out",
        str(d),
    ]
    assert run(argv, capsys)[0] == 0
    jobs = next(f for f in recorded_files(d) if f.startswith("jobs."))  # written by optsched: in the record
    before = (d / jobs).read_bytes()
    argv = ["simulate", "--jobs-csv", str(d / jobs), "--servers", "2", "--out", str(d), *(["--force"] * force)]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert "holds the input" in err and jobs in err
    assert (d / jobs).read_bytes() == before  # neither removed nor written over


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", TOY],
        ["simulate", "--trace", "synthetic", "--jobs", "20"],
        ["compare", "--trace", "synthetic", "--jobs", "20"],
        ["demo", "--quick"],
        ["reproduce", "asrpt-table2", "--quick"],
    ],
)
@pytest.mark.parametrize("blank", ["", "  "])
def test_an_empty_or_blank_out_is_refused(tmp_path, capsys, monkeypatch, argv, blank):
    monkeypatch.chdir(tmp_path)
    code, out, err = run([*argv, "--out", blank], capsys)
    assert code == 2 and out == ""
    assert "--out" in err and "is empty" in err
    assert list(tmp_path.iterdir()) == []  # nothing written, here or anywhere
    with pytest.raises(InvalidOptionError, match="is empty"):
        prepare_out_dir(blank)  # the same rule in Python


def test_every_file_is_recorded_before_it_is_written(tmp_path):
    from optsched.core.io import atomic_write_text

    d = prepare_out_dir(tmp_path / "o")
    try:
        seen = []

        def write(t):
            seen.append(recorded_files(d))  # while the file is being written
            with open(t, "w") as f:
                f.write("x")

        from optsched.core.io import atomic_write

        atomic_write(d / "a.txt", write)
        atomic_write_text(d / "sub" / "b.txt", "y")
        assert seen == [["a.txt"]]
        assert recorded_files(d) == ["a.txt", os.path.join("sub", "b.txt")]
    finally:
        release_out_dir(d)
