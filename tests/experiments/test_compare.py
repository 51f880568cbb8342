"""optsched compare: every registered policy on one workload; unknown names listed; skipped with reasons."""

from __future__ import annotations

import json

import pytest

from optsched.cli import main
from optsched.core import Cluster
from optsched.exceptions import InvalidOptionError
from optsched.experiments import compare as cmp
from optsched.traces import synthetic_workload


def test_every_registered_policy_runs_on_one_workload():
    df = synthetic_workload(300, cluster_gpus=16, load=1.0, max_duration=3600, seed=1)
    table, per_job = cmp.compare(df, Cluster.homogeneous(4, 4), progress=False)
    ran = table[table["skipped"].isna()]
    assert set(ran["policy"]) >= {"fifo", "sjf", "srtf", "las"}
    assert (ran["n_jobs"] == 300).all() and set(per_job) == set(ran["policy"])
    srtf = ran.set_index("policy")
    assert srtf.loc["srtf", "mean_jct"] <= srtf.loc["fifo", "mean_jct"] + 1e-9  # SRTF is never worse on the mean here


def test_seeds_give_intervals_and_a_policy_needing_missing_data_is_skipped(monkeypatch):
    real = cmp.available_policies()
    fake = dict(real)
    fake["needs-profiles"] = {"factory": real["fifo"]["factory"], "needs": ("model_profile",), "description": ""}
    monkeypatch.setattr(cmp, "available_policies", lambda: fake)

    def gen(seed):
        return synthetic_workload(100, cluster_gpus=8, seed=seed)

    table, _ = cmp.compare(gen, Cluster.homogeneous(2, 4), policies=["fifo", "needs-profiles"], seeds=3, progress=False)
    row = table.set_index("policy").loc["fifo"]
    assert row["mean_jct_ci_lo"] <= row["mean_jct"] <= row["mean_jct_ci_hi"]
    skipped = table.set_index("policy").loc["needs-profiles", "skipped"]
    assert "model_profile" in skipped
    with pytest.raises(InvalidOptionError, match="known"):
        cmp.compare(gen, Cluster.homogeneous(2, 4), policies=["nope"], progress=False)


def test_cli_writes_table_and_cdf(tmp_path, capsys):
    code = main(
        [
            "compare",
            "--trace",
            "synthetic",
            "--jobs",
            "200",
            "--servers",
            "4",
            "--gpus-per-server",
            "4",
            "--policies",
            "fifo,srtf",
            "--out",
            str(tmp_path / "c"),
            "--quiet",
        ]
    )
    assert code == 0
    for f in ("compare.csv", "jct_cdf.png", "jct_cdf.svg"):
        assert (tmp_path / "c" / f).is_file()
    code = main(["compare", "--trace", "synthetic", "--jobs", "50", "--servers", "2", "--policies", "nope"])
    assert code == 2 and "unknown policy 'nope'" in capsys.readouterr().err
    assert main(["compare", "--trace", "openb-sample", "--jobs", "300", "--policies", "fifo", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["policy"] == "fifo" and rows[0]["n_jobs"] == 300


def test_cli_lists_only_real_skips_and_warns_when_no_job_waits(capsys):
    # sojourn's policies need sizes/probs (skipped with the reason); fifo and srtf run
    code = main(
        [
            "compare",
            "--trace",
            "openb-sample",
            "--jobs",
            "300",
            "--policies",
            "fifo,srtf,sojourn-online-rank",
            "--quiet",
        ]
    )
    cap = capsys.readouterr()
    assert code == 0
    assert "skipped sojourn-online-rank: the workload has no sizes, probs" in cap.out
    assert "skipped fifo" not in cap.out and "nan" not in cap.out
    assert "No job ever waited" in cap.err  # 300 OpenB jobs on the 1,213 OpenB nodes
    assert (
        main(
            ["compare", "--trace", "openb-sample", "--jobs", "300", "--policies", "fifo,sojourn-online-rank", "--json"]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)  # valid JSON: no NaN
    assert {r["policy"]: r["skipped"] for r in rows}["fifo"] is None
