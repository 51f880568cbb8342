"""optsched.traces.workload: one workload step for every command, so the same flags give the same jobs,
cluster and load in ``simulate`` and ``compare``."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.traces.load import offered_load, size_cluster, sizing_hint
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


# -- the first examples of the pages a new user reads ----------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _first_examples() -> list[tuple[str, str, list[str]]]:
    """(where, command, argv) of the first ``optsched simulate`` and ``optsched compare`` line of
    the README, Getting started and the two commands' --help (their module docstrings)."""
    from optsched.commands import compare, simulate

    texts = {
        "README.md": (ROOT / "README.md").read_text(encoding="utf-8"),
        "docs/getting-started.md": (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8"),
        "optsched simulate --help": simulate.__doc__,
        "optsched compare --help": compare.__doc__,
    }
    out = []
    for where, text in texts.items():
        for command in ("simulate", "compare"):
            lines = (re.sub(r"\s+#.*$", "", line).strip() for line in text.splitlines())
            first = next((line for line in lines if line.startswith(f"optsched {command} ")), None)
            if first is not None:
                out.append((where, command, shlex.split(first)[2:]))
    return out


FIRST = _first_examples()


def _without(argv: list[str], *options: str) -> list[str]:
    """``argv`` without ``options`` and their values (the example's --out, --policy, ...)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in options:
            skip = True
        else:
            out.append(a)
    return out


def test_every_page_has_its_first_examples():
    assert {(w, c) for w, c, _ in FIRST} >= {
        ("README.md", "simulate"),
        ("README.md", "compare"),
        ("docs/getting-started.md", "simulate"),
        ("docs/getting-started.md", "compare"),
        ("optsched simulate --help", "simulate"),
        ("optsched compare --help", "compare"),
    }


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("where, command, argv", FIRST, ids=[f"{w}: {c}" for w, c, _ in FIRST])
def test_the_first_examples_reach_their_load_and_policies_differ(where, command, argv, capsys):
    """Each first example runs on a cluster where policies differ (SRTF and FIFO, the small fast
    variant of compare's every-policy table) and reaches the load it asks for within 3 %."""
    base = _without(argv, "--out", "--policy", "--policies", "--seeds", "--workers")
    assert "--load" in base or "--servers" in base, f"{where}: {command} sizes no cluster"
    if command == "simulate":
        runs = {p: _simulate_json([*base, "--policy", p], capsys) for p in ("srtf", "fifo")}
        jct = {p: r["mean_jct"] for p, r in runs.items()}
        reached = {r["offered_load"] for r in runs.values()}
    else:
        c = _compare_json([*base, "--policies", "srtf,fifo"], capsys)
        jct = {r["policy"]: r["mean_jct"] for r in c["rows"]}
        reached = {c["offered_load"]}
    (rho,) = reached
    if "--load" in base:
        asked = float(base[base.index("--load") + 1])
        assert rho == pytest.approx(asked, rel=0.03), (where, command, rho, asked)
    else:
        assert rho > 0.5, (where, command, rho)  # a cluster that jobs wait on
    assert jct["fifo"] > 1.2 * jct["srtf"], (where, command, jct)


def test_the_sizing_hint_names_whole_server_counts_not_small_servers():
    # the first 1,000 OpenB pods at --load 0.9: 2 x 8 GPUs give 1.05; 9-GPU and 1-GPU servers were
    # suggested, though OpenB's largest pod needs 8 GPUs
    w = build_workload("openb-sample", n_jobs=1000, load=0.9, gpus_per_server=8)
    assert "--servers 2 reaches 1.05 and --servers 3 reaches 0.699" in w.note and "--load 0.699 do" in w.note
    assert "--gpus-per-server" not in w.note
    assert "spans servers" in build_workload("openb-sample", n_jobs=1000, load=0.9, gpus_per_server=6).note


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.floats(0, 1e4), st.sampled_from([1, 2, 3, 4, 8, 12]), st.floats(1, 5e3)), min_size=1, max_size=40
    ),
    load=st.floats(0.05, 3.0),
    gpus_per_server=st.sampled_from([1, 2, 4, 6, 8, 16]),
)
def test_the_sizing_hint_never_suggests_servers_smaller_than_the_largest_job(rows, load, gpus_per_server):
    df = pd.DataFrame(rows, columns=["arrival", "gpus", "duration"])
    gmax = int(df["gpus"].max())
    hint = sizing_hint(df, load, gpus_per_server)
    for size in map(int, re.findall(r"--gpus-per-server (\d+)", hint)):
        assert size >= gmax, hint
        if size < gpus_per_server:  # a smaller size than asked says why
            assert f"the largest job needs {gmax} GPU" in hint
    for n, reached in re.findall(r"--servers (\d+) reaches ([0-9.e+]+)", hint):
        assert int(n) * gpus_per_server >= gmax  # the largest job fits the cluster suggested
        assert offered_load(df, int(n) * gpus_per_server) == pytest.approx(float(reached), rel=5e-3)
    assert ("spans servers" in hint) == (gmax > gpus_per_server)
    if "reaches" not in hint and "--gpus-per-server" not in hint:  # no hint: whole servers reach the load
        n = size_cluster(df, load, gpus_per_server).n_servers
        rho = offered_load(df, n * gpus_per_server)
        assert rho == pytest.approx(load, rel=0.05) or n == -(-gmax // gpus_per_server)
