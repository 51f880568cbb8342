"""optsched compare: every registered policy on one workload, each beside the lower bound; the load
that sizes a cluster or calibrates arrivals; bad input; rows written as they end; Ctrl-C."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.core import Cluster
from optsched.exceptions import InvalidOptionError
from optsched.experiments import compare as cmp
from optsched.traces import synthetic_workload
from optsched.traces.load import DEFAULT_MAX_DURATION


def test_every_registered_policy_runs_on_one_workload():
    df = synthetic_workload(40, cluster_gpus=16, load=1.0, max_duration=3600, seed=1)
    table, per_job = cmp.compare(df, Cluster.homogeneous(4, 4), progress=False, overheads="none")
    assert table["skipped"].isna().all()
    assert set(table["policy"]) == set(cmp.available_policies())
    assert (table["n_jobs"] == 40).all() and set(per_job) == set(table["policy"])
    t = table.set_index("policy")
    assert t.loc["srtf", "mean_jct"] <= t.loc["fifo", "mean_jct"] + 1e-9  # SRTF is never worse on the mean here
    assert (t["ratio_to_bound"] >= 1 - 1e-9).all() and not t["beats_bound"].any()
    b = table.attrs["bound"]
    assert b["mean_jct"] == pytest.approx(b["total_jct"] / 40)
    assert set(table.attrs["assumptions"]) == {"asrpt", "elastic", "sojourn"}


def test_seeds_give_intervals_and_a_policy_needing_missing_data_is_skipped(monkeypatch):
    real = cmp.available_policies()
    fake = dict(real)
    fake["needs-profiles"] = {**real["fifo"], "needs": ("model_profile",)}
    from optsched.experiments.compare import comparison

    monkeypatch.setattr(comparison, "available_policies", lambda: fake)

    def gen(seed):
        return synthetic_workload(100, cluster_gpus=8, seed=seed)

    table, _ = cmp.compare(gen, Cluster.homogeneous(2, 4), policies=["fifo", "needs-profiles"], seeds=3, progress=False)
    row = table.set_index("policy").loc["fifo"]
    assert row["mean_jct_ci_lo"] <= row["mean_jct"] <= row["mean_jct_ci_hi"]
    assert row["ratio_to_bound_ci_lo"] <= row["ratio_to_bound"] <= row["ratio_to_bound_ci_hi"]
    assert len(table.attrs["bound"]["per_seed_total_jct"]) == 3
    skipped = table.set_index("policy").loc["needs-profiles", "skipped"]
    assert "'model_profile' column" in skipped and "add it to the job table" in skipped
    with pytest.raises(InvalidOptionError, match="known"):
        cmp.compare(gen, Cluster.homogeneous(2, 4), policies=["nope"], progress=False)
    with pytest.raises(InvalidOptionError, match="overheads"):
        cmp.compare(gen, Cluster.homogeneous(2, 4), policies=["fifo"], overheads="some", progress=False)
    with pytest.raises(InvalidOptionError, match="enrich"):
        cmp.compare(gen, Cluster.homogeneous(2, 4), policies=["fifo"], enrich={"rarddls": {}}, progress=False)


def test_asrpt_says_why_it_cannot_run_on_servers_of_different_sizes():
    df = pd.DataFrame({"arrival": [0.0, 1.0], "gpus": [1, 2], "duration": [10.0, 5.0]})
    from optsched.core.cluster import Server

    with pytest.warns(UserWarning, match="No job ever waited"):
        table, _ = cmp.compare(
            df, Cluster([Server(2), Server(4)]), policies=["fifo", "asrpt-a-srpt"], progress=False, overheads="none"
        )
    reason = table.set_index("policy").loc["asrpt-a-srpt", "skipped"]
    assert "identical servers" in reason and "--load" in reason


# -- the load --------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1000), st.integers(1, 8), st.floats(1, 500)), min_size=1, max_size=30),
    st.floats(0.05, 4.9),
    st.sampled_from([1, 2, 4, 8]),
)
def test_size_cluster_brings_the_load_nearest(jobs, load, gps):
    df = pd.DataFrame(jobs, columns=["arrival", "gpus", "duration"])
    cl = cmp.size_cluster(df, load, gps)
    assert cl.total_gpus >= df["gpus"].max()
    rho = cmp.offered_load(df, cl.total_gpus)
    if cl.n_servers > int(np.ceil(df["gpus"].max() / gps)):  # not forced up by the largest job
        for other in (cl.n_servers - 1, cl.n_servers + 1):
            assert abs(rho - load) <= abs(cmp.offered_load(df, other * gps) - load) + 1e-12


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.1, 2.0), st.sampled_from([8, 32, 128]))
def test_calibrate_load_is_exact_over_the_window_jobs_run_in(seed, load, gpus):
    df = synthetic_workload(300, cluster_gpus=gpus, max_duration=3600.0, seed=seed)
    try:
        out = cmp.calibrate_load(df, load, gpus)
    except InvalidOptionError as e:
        assert "longest job" in str(e)
        return
    assert cmp.offered_load(out, gpus) == pytest.approx(load, rel=1e-9)
    assert out["arrival"].is_monotonic_increasing and (out["duration"] == df["duration"]).all()


def test_synthetic_load_09_is_a_busy_cluster():
    """Issue 25: 'load 0.9' on 128 GPUs used to give FIFO a mean utilisation of 0.25."""
    gen = synthetic_workload(1000, cluster_gpus=128, load=0.9, max_duration=DEFAULT_MAX_DURATION, seed=0)
    df = cmp.calibrate_load(gen, 0.9, 128)
    table, _ = cmp.compare(df, Cluster.homogeneous(16, 8), policies=["fifo"], progress=False, overheads="none")
    row = table.iloc[0]
    assert row["mean_utilization"] > 0.6 and row["mean_queue_delay"] > 1000  # over [0, makespan], drain included


@pytest.mark.parametrize("load", [0, -1, 5, 7.5, float("nan")])
def test_load_out_of_range(load):
    with pytest.raises(InvalidOptionError, match=r"load must be a number in \(0, 5\)"):
        cmp.size_cluster(pd.DataFrame({"arrival": [0.0], "gpus": [1], "duration": [1.0]}), load, 8)


# -- the command line --------------------------------------------------------------------------------
def _run(argv, capsys):
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_cli_writes_table_bound_and_pictures(tmp_path, capsys):
    out = tmp_path / "c"
    code, text, _ = _run(
        [
            "compare",
            "--trace",
            "synthetic",
            "--jobs",
            "100",
            "--servers",
            "4",
            "--gpus-per-server",
            "4",
            "--load",
            "0.9",
            "--policies",
            "fifo,srtf,lazer,sojourn-online-rank",
            "--out",
            str(out),
            "--quiet",
        ],
        capsys,
    )
    assert code == 0
    assert "lower bound on the mean JCT" in text and "lower bound" in text.splitlines()[-3]
    assert "offered load 0.9 over the window in which jobs run" in text
    for f in ("compare.csv", "bound.json"):
        assert (out / f).is_file()
    for f in ("jct_cdf", "jct_summary", "queue_delay_cdf", "utilization"):
        assert (out / f"{f}.png").stat().st_size > 1000 and (out / f"{f}.svg").is_file()
    meta = json.loads((out / "bound.json").read_text())
    assert meta["bound"]["mean_jct"] > 0 and meta["gpus"] == 16 and "sojourn" in meta["assumptions"]
    csv = pd.read_csv(out / "compare.csv")
    assert sorted(csv["policy"]) == sorted(["fifo", "srtf", "lazer", "sojourn-online-rank"])
    assert list(csv["mean_jct"]) == sorted(csv["mean_jct"])  # sorted by mean JCT
    assert (csv["ratio_to_bound"] >= 1).all() and (csv["seconds"] > 0).all()


def test_cli_json_and_unknown_policy(capsys):
    code, _, err = _run(
        ["compare", "--trace", "synthetic", "--jobs", "50", "--servers", "2", "--policies", "nope"], capsys
    )
    assert code == 2 and "unknown policy 'nope'" in err
    code, text, _ = _run(
        ["compare", "--trace", "openb-sample", "--jobs", "300", "--load", "0.9", "--policies", "fifo", "--json"], capsys
    )
    assert code == 0
    doc = json.loads(text)
    row = doc["rows"][0]
    assert row["policy"] == "fifo" and row["n_jobs"] == 300 and row["ratio_to_bound"] >= 1
    assert doc["bound"]["mean_jct"] > 0 and "offered load" in doc["load"]


def test_cli_openb_without_a_size_is_refused_naming_load_and_servers(capsys):
    code, text, err = _run(["compare", "--trace", "openb-sample", "--jobs", "300", "--policies", "fifo"], capsys)
    assert code == 2 and text == ""
    assert "--load R" in err and "--servers N" in err and "every policy would give the same result" in err


def _on_the_openb_nodes(monkeypatch, n_jobs: int) -> None:
    """The command line sizes every trace (--load or --servers); put OpenB's first ``n_jobs`` pods on
    OpenB's own nodes (servers of different sizes), as a Python caller of the workload step can."""
    from optsched.commands import compare as command
    from optsched.traces import load_trace, openb_cluster
    from optsched.traces.workload import Workload

    w = Workload(openb_cluster(), "openb-sample", "on the OpenB nodes", 0.0, table=load_trace("openb-sample")[:n_jobs])
    monkeypatch.setattr(command, "workload_from_args", lambda args, **kw: w)


def test_cli_on_openb_nodes_skips_asrpt_with_the_reason_and_warns_when_no_job_waits(capsys, monkeypatch):
    _on_the_openb_nodes(monkeypatch, 300)
    code, text, err = _run(
        [
            "compare",
            "--trace",
            "openb-sample",
            "--jobs",
            "300",
            "--policies",
            "fifo,srtf,sojourn-online-rank,asrpt-a-srpt",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0
    assert "skipped asrpt-a-srpt: The A-SRPT policies need identical servers" in text
    assert "skipped fifo" not in text and "skipped sojourn" not in text and "nan" not in text
    assert "No job ever waited" in err  # 300 OpenB jobs on the 1,213 OpenB nodes


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--trace", "openb-sample", "--load", "0"], "--load must be in (0, 5)"),
        (["--trace", "openb-sample", "--load", "5"], "--load must be in (0, 5)"),
        (["--trace", "openb-sample", "--load", "-0.5"], "--load must be in (0, 5)"),
        (["--trace", "openb-sample", "--load", "0.9", "--servers", "3"], "give --load or --servers, not both"),
        (["--trace", "openb-sample", "--servers", "1", "--gpus-per-server", "1"], "more than the cluster's 1"),
        (["--trace", "synthetic", "--jobs", "20", "--servers", "100", "--load", "0.9"], "longest job"),
        (["--trace", "synthetic", "--jobs", "20"], "Give --servers N"),
        (["--trace", "openb-sample", "--load", "0.9", "--max-duration", "100"], "--max-duration caps the synthetic"),
        (["--trace", "openb-sample", "--load", "0.9", "--overheads", "sometimes"], "invalid choice"),
    ],
)
def test_cli_bad_input(argv, msg, capsys):
    code, _, err = _run(["compare", "--policies", "fifo", "--quiet", *argv], capsys)
    assert code == 2 and msg in err


def test_cli_missing_column_names_the_column_and_the_fix(tmp_path, capsys):
    p = tmp_path / "jobs.csv"
    pd.DataFrame({"arrival": [0, 5], "gpus": [1, 2]}).to_csv(p, index=False)
    code, _, err = _run(["compare", "--jobs-csv", str(p), "--servers", "1", "--policies", "fifo"], capsys)
    assert code == 2 and "duration" in err


def test_rows_are_written_as_they_end_and_ctrl_c_keeps_them(tmp_path, capsys, monkeypatch):
    from optsched.experiments.compare import executors

    real = executors.run_policy
    calls = []

    def interrupted(*a, **k):
        calls.append(a[0])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(executors, "run_policy", interrupted)
    out = tmp_path / "c"
    code, text, err = _run(
        [
            "compare",
            "--trace",
            "openb-sample",
            "--jobs",
            "200",
            "--load",
            "0.9",
            "--policies",
            "fifo,sjf,srtf,las",
            "--workers",
            "1",
            "--sort",
            "policy",
            "--out",
            str(out),
            "--quiet",
        ],
        capsys,
    )
    assert code == 130
    assert "interrupted after 2 policies" in err and "compare.csv" in err and text == ""
    assert sorted(pd.read_csv(out / "compare.csv")["policy"]) == sorted(calls[:2])
    assert (out / "jct_cdf.png").is_file() and (out / "bound.json").is_file()


# -- every trace format ------------------------------------------------------------------------------
def _helios(path, n=14, seed=0):
    rng = np.random.default_rng(seed)
    rows = ["job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"]
    t0 = pd.Timestamp("2020-06-09 18:41:01")
    for i in range(n):
        sub = t0 + pd.Timedelta(seconds=int(rng.integers(0, 3000)) + 300 * i)
        dur = int(rng.integers(30, 5000))
        st = ["COMPLETED", "FAILED", "CANCELLED"][i % 3]
        end = sub + pd.Timedelta(seconds=dur)
        rows.append(f"{100 + i},u{i % 3},vc1,{[1, 2, 4, 8][i % 4]},4,1,{st},{sub},{sub},{end},{dur},0")
    path.write_text("\n".join(rows) + "\n")
    return path


def _philly(path, n=12, seed=0):
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2017-10-07 01:00:00")
    jobs = []
    for i in range(n):
        sub = t0 + pd.Timedelta(seconds=600 * i)
        start = sub + pd.Timedelta(seconds=int(rng.integers(0, 100)))
        end = start + pd.Timedelta(seconds=int(rng.integers(60, 20_000)))
        g = [1, 2, 4, 8][i % 4]
        jobs.append(
            {
                "status": ["Pass", "Failed", "Killed"][i % 3],
                "vc": "vc1",
                "jobid": f"application_{i}",
                "user": f"u{i % 4}",
                "submitted_time": str(sub),
                "attempts": [
                    {"start_time": str(start), "end_time": str(end), "detail": [{"ip": "m1", "gpus": ["gpu0"] * g}]}
                ],
            }
        )
    path.write_text(json.dumps(jobs))
    return path


@pytest.mark.parametrize("kind", ["helios", "philly", "jobs-csv"])
def test_every_policy_runs_on_each_trace_format(kind, tmp_path, capsys):
    if kind == "helios":
        src = ["--trace", str(_helios(tmp_path / "cluster_log.csv"))]
    elif kind == "philly":
        src = ["--trace", str(_philly(tmp_path / "cluster_job_log"))]
    else:
        p = tmp_path / "mine.csv"
        pd.DataFrame(
            {
                "submit": [0.0, 10.0, 10.0, 50.0, 70.0, 75.0],
                "gpus": [1, 2, 4, 1, 8, 1],
                "duration": [300.0, 200.0, 100.0, 900.0, 60.0, 30.0],
                "model": ["vgg19", "gpt2", "bert", "x", "resnet50", "ViT"],
            }
        ).to_csv(p, index=False)
        src = ["--jobs-csv", str(p), "--columns", "arrival=submit"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, text, err = _run(["compare", *src, "--load", "0.9", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(text)
    assert len(doc["rows"]) == len(cmp.available_policies())
    assert all(r["skipped"] is None for r in doc["rows"]), [r["skipped"] for r in doc["rows"] if r["skipped"]]
    assert all(r["ratio_to_bound"] >= 1 - 1e-9 for r in doc["rows"])


def test_figures_from_a_comparison(tmp_path):
    df = synthetic_workload(60, cluster_gpus=8, max_duration=3600, seed=2)
    table, per_job = cmp.compare(
        df, Cluster.homogeneous(2, 4), policies=["fifo", "srtf"], seeds=2, progress=False, overheads="none"
    )
    paths = cmp.save_figures(table, per_job, tmp_path)
    assert len(paths) == 8 and all(p.stat().st_size > 0 for p in paths)
    ax = cmp.plot_summary(table)
    assert any("lower bound" in t.get_text() for t in ax.get_legend().get_texts())


@pytest.mark.parametrize("n", [3, 40])
def test_the_summary_chart_keeps_its_labels_readable_however_many_policies_ran(n):
    """Every text of the summary (each policy's name, the ticks, the legend) shows at 9 pt or more
    in the page's column, with 3 policies and with 40: the chart grows taller, its text stays."""
    import matplotlib.pyplot as plt

    from optsched.experiments.compare.figures import LABEL_SIZE
    from optsched.plot.style import too_small

    rng = np.random.default_rng(n)
    names = [f"{'a-long-policy-name-' if i % 3 == 0 else 'p'}{i}" for i in range(n)]
    table = pd.DataFrame({"policy": names, "mean_jct": rng.uniform(1e3, 1e6, n), "p95_jct": rng.uniform(1e3, 1e7, n)})
    table.attrs["bound"] = {"mean_jct": 900.0}
    ax = cmp.plot_summary(table)
    try:
        labels = ax.get_yticklabels()
        assert [t.get_text() for t in labels] == list(table.sort_values("mean_jct")["policy"])
        assert {t.get_fontsize() for t in labels} == {LABEL_SIZE}
        assert too_small(ax.figure) == []
        assert ax.figure.get_figwidth() == 7
    finally:
        plt.close(ax.figure)
