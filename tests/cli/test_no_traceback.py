"""Inputs that used to end in a traceback or be accepted silently: each is now refused with one
line naming the option (or variable), the value and the fix (exit 2 on the command line), with
the same check in Python and on the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from optsched.cli import main
from optsched.core import Cluster
from optsched.core.library import instance_path
from optsched.exceptions import InvalidOptionError, TraceFormatError, UnknownNameError

TOY = "toy:rigid-2x2-five"


def _run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5"])
def test_a_bad_max_model_size_variable_is_named(monkeypatch, capsys, value):
    from optsched.solvers import max_model_size

    monkeypatch.setenv("OPTSCHED_MAX_MODEL_SIZE", value)
    code, out, err = _run(["solve", TOY, "--model", "rigid-exact"], capsys)
    assert code == 2 and out == ""
    assert "OPTSCHED_MAX_MODEL_SIZE" in err and repr(value) in err and "Traceback" not in err
    with pytest.raises(InvalidOptionError, match="OPTSCHED_MAX_MODEL_SIZE"):
        max_model_size()
    monkeypatch.setenv("OPTSCHED_MAX_MODEL_SIZE", "1_000")
    assert max_model_size() == 1000


def test_an_ascii_terminal_shows_a_unicode_instance_name_escaped(tmp_path):
    doc = json.loads(instance_path(TOY).read_text())
    doc["name"] = "résumé-集群"
    (tmp_path / "uni.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    r = subprocess.run(
        [sys.executable, "-m", "optsched", "solve", "uni.json"], cwd=tmp_path, env=env, capture_output=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert b"Traceback" not in r.stderr
    assert b"r\\xe9sum\\xe9-\\u96c6\\u7fa4" in r.stdout  # escaped, not an error


@pytest.mark.parametrize("path", [123, None, ["jobs.csv"]])
def test_read_jobs_names_a_path_that_is_not_one(path):
    from optsched.traces import read_jobs

    with pytest.raises(TraceFormatError, match=r"read_jobs takes the path .* \(" + type(path).__name__):
        read_jobs(path)


def _cell(n, seed):  # importable: the processes executor pickles it
    return {"v": n + seed}


def test_sweep_refuses_a_function_its_processes_cannot_receive_before_any_cell(tmp_path):
    from optsched.experiments.sweep import grid, sweep

    with pytest.raises(InvalidOptionError, match=r"lambda.*top level of a module.*serial"):
        sweep(lambda n, seed: {"v": n}, grid(n=[1], seed=[0]), out=tmp_path / "s", progress=False)
    assert not list((tmp_path / "s").glob("*.parquet"))  # no cell ran
    ok = sweep(lambda n, seed: {"v": n}, grid(n=[1], seed=[0]), executor="serial", progress=False)
    assert ok["v"].tolist() == [1]
    assert sweep(_cell, grid(n=[1], seed=[2]), executor="processes", n_workers=1, progress=False)["v"].tolist() == [3]


def test_an_unknown_placement_is_refused_the_same_in_python_and_on_the_command_line(capsys):
    from optsched.experiments.compare import compare

    jobs = pd.DataFrame({"arrival": [0.0, 1.0], "gpus": [1, 1], "duration": [10.0, 20.0]})
    with pytest.raises(InvalidOptionError, match="placement 'diagonal' is not a placement rule") as py:
        compare(jobs, Cluster.homogeneous(1, 2), policies=["fifo"], placement="diagonal", progress=False)
    argv = ["compare", "--trace", "synthetic", "--jobs", "40", "--servers", "2", "--placement", "diagonal"]
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert "--placement 'diagonal' is not a placement rule" in err
    assert str(py.value).split("; ", 1)[1] in err  # the same rules listed


def test_a_period_too_long_for_the_run_advises_a_shorter_one(capsys):
    argv = ["simulate", "--trace", "synthetic", "--jobs", "200", "--servers", "4", "--policy", "srtf-periodic"]
    code, _, err = _run([*argv, "--period", "1e9"], capsys)
    assert code != 0 and "Traceback" not in err
    assert "a shorter --period" in err and "a longer --period" not in err


def test_reproduce_refuses_seeds_for_a_reproduction_without_seeds(capsys):
    code, out, err = _run(["reproduce", "sojourn-tables", "--quick", "--seeds", "3"], capsys)
    assert code == 2 and out == ""
    assert "--seeds" in err and "sojourn-tables" in err


@pytest.mark.parametrize(
    "name",
    [
        "toy:../papers/asrpt/lemma1-counterexample",  # a shipped file, but reached through '..'
        "toy:../../core/schemas/rigid.schema",  # a package file outside the instance library
        "../core/schemas/rigid.schema",
        "toy:../..",
        "nope:rigid-2x2-five",
        "toy:*",
    ],
)
def test_a_library_name_never_reaches_outside_the_instance_library(name, capsys):
    with pytest.raises(UnknownNameError, match="No shipped instance"):
        instance_path(name)
    code, _, err = _run(["solve", name], capsys)
    assert code == 2 and "Traceback" not in err
