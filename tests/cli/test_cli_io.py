"""The CLI as a user outside the repository meets it: names instead of paths, --out folders,
errors (exit 2, one line, no traceback) checked before any work."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from optsched.cli import main


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_instances_lists_the_library_and_solve_takes_a_name(capsys, tmp_path):
    code, out, _ = run(["instances", "--json"], capsys)
    names = [r["name"] for r in json.loads(out)]
    assert code == 0 and "toy:rigid-2x2-five" in names and "papers/asrpt:lemma1-counterexample" in names
    code, out, _ = run(["solve", "toy:rigid-2x2-five", "--json"], capsys)
    assert code == 0 and json.loads(out)["objective"] == pytest.approx(19)
    code, out, _ = run(["solve", "rigid-2x2-five", "--json"], capsys)  # a bare unique name
    assert code == 0
    code, _, err = run(["solve", "toy:no-such-instance"], capsys)
    assert code == 2 and "No shipped instance" in err and "optsched instances" in err


def test_out_is_a_folder_checked_before_work(capsys, tmp_path):
    out = tmp_path / "run"
    code, _, _ = run(["solve", "toy:rigid-2x2-five", "--out", str(out)], capsys)
    assert code == 0 and (out / "schedule.json").is_file() and (out / "result.json").is_file()
    mode = stat.S_IMODE(os.stat(out / "schedule.json").st_mode)
    assert mode & 0o044, f"files get the user's normal permissions, not {oct(mode)}"
    code, _, err = run(["solve", "toy:rigid-2x2-five", "--out", str(out)], capsys)
    assert code == 2 and "already exists and is not empty" in err and "--force" in err
    code, _, _ = run(["solve", "toy:rigid-2x2-five", "--out", str(out), "--force"], capsys)
    assert code == 0
    f = tmp_path / "file.txt"
    f.write_text("x")
    code, _, err = run(["demo", "--only", "rigid", "--out", str(f)], capsys)
    assert code == 2 and "is a file" in err


def test_directories_given_as_files_say_so(capsys, tmp_path):
    code, _, err = run(["solve", str(tmp_path)], capsys)
    assert code == 2 and "is a directory" in err
    run(["solve", "toy:rigid-2x2-five", "--out", str(tmp_path / "r")], capsys)
    code, _, err = run(["verify", "toy:rigid-2x2-five", str(tmp_path / "r")], capsys)
    assert code == 2 and "is a directory" in err and "schedule.json" in err


def test_empty_job_list_is_refused_the_same_for_every_backend(capsys, tmp_path):
    p = tmp_path / "empty.json"
    p.write_text(json.dumps({"kind": "rigid", "cluster": {"servers": [{"gpus": 2}]}, "jobs": []}))
    for backend in ("highs", "cpsat"):
        code, _, err = run(["solve", str(p), "--backend", backend], capsys)
        assert code == 2 and "'jobs' list is empty" in err


def test_unknown_names_exit_2_and_list_the_known(capsys):
    code, _, err = run(["demo", "--only", "nope"], capsys)
    assert code == 2 and "'nope'" in err and "rigid" in err
    code, _, err = run(["reproduce", "nope"], capsys)
    assert code == 2 and "sojourn-tables" in err
    assert main(["data", "fetch", "nope"]) == 2  # argparse choices: a usage error, exit 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_missing_unshipped_trace_names_where_it_looked_and_the_fetch_command(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OPTSCHED_DATA", str(tmp_path / "env"))
    code, _, err = run(["data", "path", "philly", "--data-dir", str(tmp_path / "dd")], capsys)
    assert code == 2 and "trace-data.tar.gz" in err and str(tmp_path / "dd") in err and str(tmp_path / "env") in err
    assert "optsched data fetch philly" in err
    code, out, _ = run(["data", "list", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and "philly/philly_runtime.csv" in d["shipped"]


def test_reproduce_writes_each_table_as_it_finishes_and_keeps_them_on_failure(capsys, tmp_path, monkeypatch):
    import pandas as pd

    from optsched.experiments import registry

    def fails_late(save, *, quick, seeds, progress):
        save("first", pd.DataFrame({"a": [1]}))
        raise RuntimeError("late failure")

    monkeypatch.setitem(
        registry._REPRO, "test-fails-late", registry.Reproduction("test-fails-late", fails_late, "test", "none")
    )
    with pytest.raises(RuntimeError):
        main(
            [
                "reproduce",
                "test-fails-late",
                "--out",
                str(tmp_path / "o"),
                "--format",
                "csv",
                "--format",
                "parquet",
                "--quiet",
            ]
        )
    assert (tmp_path / "o" / "first.csv").is_file() and (tmp_path / "o" / "first.parquet").is_file()


def test_no_traceback_and_fast_help():
    r = subprocess.run(
        [sys.executable, "-m", "optsched.cli", "solve", "toy:rigid-2x2-five", "--backend", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, optsched.cli; optsched.cli.build_parser(); "
            "print(sorted(m for m in ('numpy', 'pandas', 'pyomo', 'ortools') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.stdout.strip() == "[]", "the CLI parser must not import heavy libraries"
