"""optsched.traces.workload: one workload step for every command, so the same flags give the same jobs,
cluster and load in ``simulate`` and ``compare``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from optsched.cli import main
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.traces.load import offered_load
from optsched.traces.workload import build_workload


def test_synthetic_load_is_reached_with_durations_capped():
    w = build_workload("synthetic", n_jobs=300, servers=2, gpus_per_server=8, load=0.9, max_duration=3600, seed=4)
    df = w.jobs(4)
    assert offered_load(df, 16) == pytest.approx(0.9, rel=1e-9) and w.load == pytest.approx(0.9, rel=1e-9)
    assert float(np.max(df["duration"])) <= 3600
    assert "offered load 0.9 " in w.note
    again = build_workload("synthetic", n_jobs=300, servers=2, gpus_per_server=8, load=0.9, max_duration=3600, seed=4)
    assert np.array_equal(again.jobs(4)["arrival"], df["arrival"])  # a seed is one draw
    assert not np.array_equal(w.jobs(5)["arrival"], df["arrival"])  # another seed another


def test_a_trace_gets_the_cluster_its_load_asks_for():
    w = build_workload("openb-sample", load=0.5, gpus_per_server=8)
    assert w.load == pytest.approx(offered_load(w.table, w.cluster.total_gpus))
    assert set(w.cluster.gpus) == {8} and "asked 0.5" in w.note
    n = build_workload("openb-sample", n_jobs=50, servers=3)
    assert len(n.table) == 50 and n.cluster.n_servers == 3
    assert (np.diff(n.table["arrival"].to_numpy()) >= 0).all()  # the first 50 by arrival


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"source": "openb-sample", "load": 0.9, "servers": 3}, "not both"),
        ({"source": "openb-sample", "max_duration": 100.0, "load": 0.9}, "--max-duration caps"),
        ({"source": "synthetic", "n_jobs": 20}, "Give --servers"),
        ({"source": "synthetic", "n_jobs": 20, "servers": 1, "load": 7}, "(0, 5)"),
        ({"source": "openb-sample", "servers": 1, "gpus_per_server": 1}, "more than the cluster's 1 GPUs"),
        ({"source": None}, "Give one workload"),
    ],
)
def test_contradicting_or_missing_options_are_refused(kwargs, words):
    with pytest.raises(InvalidOptionError, match=None) as e:
        build_workload(**kwargs)
    assert words in str(e.value)


def test_a_table_is_checked_and_oversized_jobs_skipped_on_request():
    df = pd.DataFrame({"arrival": [0.0, 1.0, 2.0], "gpus": [1, 9, 2], "duration": [5.0, 5.0, 5.0]})
    with pytest.raises(InvalidOptionError, match="skip-oversized"):
        build_workload(df, servers=1)
    w = build_workload(df, servers=1, skip_oversized=True)
    assert w.n_skipped == 1 and w.table["gpus"].tolist() == [1, 2]
    with pytest.raises(InvalidInstanceError, match="yes/no"):
        build_workload(df.assign(gpus=[True, True, True]), servers=1)


def _simulate_json(argv, capsys) -> dict:
    assert main(["simulate", *argv, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def _compare_json(argv, capsys) -> dict:
    assert main(["compare", *argv, "--json", "--quiet", "--workers", "1"]) == 0
    return json.loads(capsys.readouterr().out)


SYN = ["--trace", "synthetic", "--jobs", "300", "--servers", "2", "--gpus-per-server", "8", "--load", "0.9"]


@pytest.mark.filterwarnings("ignore")
def test_simulate_and_compare_reach_the_same_load(capsys):
    # --load 0.9 in simulate ran at a small fraction of that utilization (its arrivals spread by the
    # uncapped durations' mean, not over the window in which jobs run), compare at the asked load
    s = _simulate_json([*SYN, "--policy", "fifo", "--seed", "3", "--overheads", "none"], capsys)
    c = _compare_json([*SYN, "--policies", "fifo", "--seed", "3", "--overheads", "none"], capsys)
    assert s["load"] == c["load"] and "offered load 0.9 " in s["load"]
    assert s["offered_load"] == pytest.approx(c["offered_load"]) == pytest.approx(0.9, rel=1e-9)
    (row,) = c["rows"]
    assert s["mean_jct"] == pytest.approx(row["mean_jct"], rel=1e-9)
    assert s["mean_utilization_makespan"] > 0.6  # 0.17 when simulate's --load meant another window


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("policy", ["fifo", "sjf", "srtf", "las", "srtf-periodic"])
def test_simulate_and_compare_agree_on_every_baseline(policy, capsys):
    opts = ["--placement", "consolidate", "--seed", "2"]
    s = _simulate_json([*SYN, "--policy", policy, "--overheads", "none", *opts], capsys)
    c = _compare_json([*SYN, "--policies", policy, "--overheads", "none", *opts], capsys)
    (row,) = c["rows"]
    assert s["mean_jct"] == pytest.approx(row["mean_jct"], rel=1e-9), (policy, s["mean_jct"], row["mean_jct"])
    assert s["n_jobs"] == row["n_jobs"] == 300


@pytest.mark.filterwarnings("ignore")
def test_a_trace_sized_by_load_is_the_same_cluster_in_both(capsys):
    argv = ["--trace", "openb-sample", "--jobs", "200", "--load", "0.8"]
    s = _simulate_json([*argv, "--policy", "fifo", "--overheads", "none"], capsys)
    c = _compare_json([*argv, "--policies", "fifo", "--overheads", "none"], capsys)
    assert (s["servers"], s["gpus"]) == (c["servers"], c["gpus"]) and s["load"] == c["load"]
    assert s["offered_load"] == pytest.approx(c["offered_load"])


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("policy", ["fifo", "srtf"])
def test_simulate_with_model_overheads_is_compares_default_row(policy, capsys):
    # compare's default overheads (each job's load/save times from its model, drawn by id and seed)
    s = _simulate_json([*SYN, "--policy", policy, "--seed", "1", "--overheads", "model"], capsys)
    c = _compare_json([*SYN, "--policies", policy, "--seed", "1"], capsys)
    (row,) = c["rows"]
    assert s["mean_jct"] == pytest.approx(row["mean_jct"], rel=1e-9), (policy, s["mean_jct"], row["mean_jct"])
    assert s["n_preemptions"] == row["n_preemptions"]


def test_model_overheads_and_fixed_times_are_one_choice(capsys):
    assert main(["simulate", *SYN, "--overheads", "model", "--load-time", "5", "--quiet"]) == 2
    assert "--overheads model" in capsys.readouterr().err
