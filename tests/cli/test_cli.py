"""CLI: commands, exit codes (0 ok, 1 infeasible/check failed, 2 bad input), no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import optsched
from optsched.cli import main

TOY = str(optsched.toy_path("rigid-2x2-five"))


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_info(capsys):
    code, out, _ = run(["info", "--json"], capsys)
    info = json.loads(out)
    assert code == 0 and info["solvers"]["highs"] and info["solvers"]["cpsat"]
    assert any(a["name"] == "rigid-exact" for a in info["algorithms"])


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_solve_table_and_json(capsys, tmp_path, backend):
    code, out, _ = run(["solve", TOY, "--backend", backend, "--out", str(tmp_path / "run")], capsys)
    assert code == 0 and "optimal" in out and "19" in out
    code, out, _ = run(["solve", TOY, "--backend", backend, "--json"], capsys)
    d = json.loads(out)
    assert d["status"] == "optimal" and d["objective"] == 19 and d["verified"] is True
    # the written schedule verifies on its own
    code, out, _ = run(["verify", TOY, str(tmp_path / "run" / "schedule.json"), "--claimed", "19"], capsys)
    assert code == 0 and "feasible" in out


def test_solve_heuristic_by_name(capsys):
    code, out, _ = run(["solve", TOY, "--model", "rigid-wspt", "--json"], capsys)
    assert code == 0 and json.loads(out)["status"] == "heuristic"


def test_verify_failing_schedule_exits_1(capsys, tmp_path):
    bad = {"jobs": [{"id": j, "segments": [{"start": 0, "end": 1, "placement": {"0": 1}}]} for j in range(5)]}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    code, out, _ = run(["verify", TOY, str(p)], capsys)
    assert code == 1 and "[work]" in out and "[release]" in out


def _write(tmp_path, text):
    p = tmp_path / "i.json"
    p.write_text(text)
    return str(p)


BASE = {"kind": "rigid", "cluster": {"servers": [{"gpus": 4}]}, "jobs": [{"id": 0, "work": 2, "gpus": 1}]}


def _doc(**changes):
    d = json.loads(json.dumps(BASE))
    for k, v in changes.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    return json.dumps(d)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"cluster": ', "not valid JSON"),
        (_doc(jobs=None), "no 'jobs' field"),
        (_doc(jobs=[{"id": 0, "gpus": 1}]), "'work'"),
        (_doc(jobs=[{"id": 0, "work": "two", "gpus": 1}]), "'work' field"),
        (_doc(jobs=[{"id": 0, "work": 1, "gpus": 0}]), "'gpus' field"),
        (_doc(jobs=[{"id": 0, "work": 1, "gpus": -2}]), "'gpus' field"),
        (_doc(jobs=[{"id": 0, "work": 1, "gpus": 9}]), "[1, 4]"),
        (_doc(jobs=[{"id": 0, "work": 1, "arrival": 50}], horizon=10), "horizon"),
        (_doc(cluster={"servers": []}), "servers"),
        (_doc(kind="nonsense"), "Unknown instance kind"),
    ],
)
def test_bad_instances_exit_2_with_clear_message(capsys, tmp_path, text, words):
    code, _out, err = run(["solve", _write(tmp_path, text)], capsys)
    assert code == 2
    assert words in err, err
    assert "Traceback" not in err


def test_missing_file_unknown_model_unknown_solver(capsys, tmp_path):
    code, _, err = run(["solve", str(tmp_path / "nope.json")], capsys)
    assert code == 2 and "does not exist" in err
    code, _, err = run(["solve", TOY, "--model", "no-such-model"], capsys)
    assert code == 2 and "Unknown algorithm or model" in err
    code, _, err = run(["solve", TOY, "--backend", "no_such_solver"], capsys)
    assert code == 2 and "'no_such_solver' is not a back end" in err and "highs" in err
    code, _, err = run(["solve", TOY, "--time-limit", "-3"], capsys)
    assert code == 2 and "--time-limit" in err


def test_usage_error_exits_2():
    out = subprocess.run([sys.executable, "-m", "optsched.cli", "solve"], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_python_dash_m_optsched_is_the_command_line():
    out = subprocess.run([sys.executable, "-m", "optsched", "reproduce", "--list"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "asrpt-paper" in out.stdout and "lazer" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "optsched", "solve"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_console_script_and_demo_quick(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "optsched.cli", "demo", "--quick", "--only", "rigid"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "rigid-exact[highs]" in out.stdout and "0 failed verification" in out.stdout


@pytest.mark.parametrize("backend", ["highs", "cpsat", "portfolio"])
def test_solve_verbose_prints_the_model_summary(capsys, backend):
    code, out, _ = run(["solve", TOY, "--backend", backend, "-v"], capsys)
    lines = [ln for ln in out.splitlines() if ln.startswith("model ")]
    assert code == 0 and lines, out
    # variables, constraints and non-zeros are counted from the built model
    assert all(" variables, " in ln and " constraints, " in ln and " non-zeros" in ln for ln in lines)
    if backend == "highs":
        assert "(pyomo)" in lines[0] and "horizon 13" in lines[0]


def test_solve_verbose_json_keeps_stdout_one_document(capfd):
    code = main(["solve", TOY, "--backend", "highs", "-v", "--json"])
    out, err = capfd.readouterr()
    d = json.loads(out)  # the solver log went to stderr
    assert code == 0 and d["status"] == "optimal"
    (summary,) = d["model_summary"].values()
    assert summary["kind"] == "pyomo" and summary["variables"] > 0 and summary["nonzeros"] >= summary["variables"]
    assert err.strip()
