"""``optsched simulate``: shipped trace, synthetic workload, files, exit codes."""

import json

import pandas as pd
import pytest

from optsched.cli import main


def test_openb_sample_all_policies(capsys):
    for pol in ("fifo", "sjf", "srtf", "las"):
        argv = ["simulate", "--trace", "openb-sample", "--servers", "3", "--policy", pol, "--json", "--no-progress"]
        assert main(argv) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["policy"] == pol and out["n_jobs"] > 2000 and out["n_done"] == out["n_jobs"]


def test_synthetic_to_files(tmp_path, capsys):
    rc = main(
        [
            "simulate",
            "--trace",
            "synthetic",
            "--jobs",
            "300",
            "--load",
            "1.5",
            "--policy",
            "srtf",
            "--servers",
            "4",
            "--gpus-per-server",
            "8",
            "--save-time",
            "5",
            "--load-time",
            "5",
            "--out",
            str(tmp_path),
            "--seed",
            "2",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "mean_jct" in text and "p99_jct" in text
    jobs = pd.read_csv(tmp_path / "jobs.csv")
    assert len(jobs) == 300 and (jobs["status"] == "done").all()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["mean_jct"] == pytest.approx(jobs["jct"].mean())
    assert (tmp_path / "utilization.csv").exists()


def test_trace_file_path(tmp_path, capsys):
    p = tmp_path / "cluster_log.csv"
    p.write_text(
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
        "1,u,vc,2,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:41:11,10,0\n"
        "2,u,vc,2,1,1,COMPLETED,2020-06-09 18:41:02,2020-06-09 18:41:02,2020-06-09 18:41:12,10,0\n"
    )
    argv = ["simulate", "--trace", str(p), "--servers", "1", "--gpus-per-server", "2", "--overheads", "none"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["makespan"] == 20.0 and out["mean_jct"] == 14.5


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--trace", "nope", "--servers", "1"], "Unknown trace"),
        (["--trace", "synthetic", "--policy", "edf", "--servers", "1"], "Unknown policy 'edf'"),
        (
            ["--trace", "synthetic", "--policy", "sojourn-online-rank", "--servers", "1", "--max-duration", "3600"],
            "needs job data",
        ),
        (["--trace", "synthetic", "--policy", "lazer-zero", "--servers", "1", "--no-backfill"], "its own"),
        (["--trace", "synthetic"], "--servers"),
        (["--trace", "synthetic", "--servers", "0"], "--servers must be >= 1"),
        (["--trace", "synthetic", "--servers", "1", "--placement", "best"], "placement"),
    ],
)
def test_bad_input_exit_2(argv, msg, capsys):
    assert main(["simulate", *argv, "--jobs", "20", "--no-progress"]) == 2
    assert msg in capsys.readouterr().err


def _jobs_csv(tmp_path, text="submit,n_gpu,duration\n0,1,10\n1,4,5\n2,2,3\n"):
    p = tmp_path / "jobs.csv"
    p.write_text(text)
    return p


def test_jobs_csv_with_column_mapping_matches_the_python_reader(tmp_path, capsys):
    from optsched.core import Cluster
    from optsched.sim import Simulator, get_policy
    from optsched.traces import read_jobs

    p = _jobs_csv(tmp_path)
    assert (
        main(
            [
                "simulate",
                "--jobs-csv",
                str(p),
                "--columns",
                "arrival=submit,gpus=n_gpu",
                "--servers",
                "1",
                "--gpus-per-server",
                "4",
                "--policy",
                "srtf",
                "--overheads",
                "none",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    df = read_jobs(p, columns="arrival=submit,gpus=n_gpu")
    ref = Simulator(Cluster.homogeneous(1, 4), df, get_policy("srtf")).run().summary()
    assert out["n_jobs"] == 3 and out["mean_jct"] == pytest.approx(ref["mean_jct"])


def test_strict_fifo_and_whole_node_options(tmp_path, capsys):
    # 2 servers x 4: A (3 GPUs) and B (3 GPUs) fill one server each; C (2 GPUs) arrives next.
    p = _jobs_csv(tmp_path, "arrival,gpus,duration\n0,3,10\n0,3,20\n1,2,5\n2,1,1\n")
    base = ["simulate", "--jobs-csv", str(p), "--servers", "2", "--gpus-per-server", "4", "--json"]
    assert main(base) == 0
    spread = json.loads(capsys.readouterr().out)
    assert main([*base, "--placement", "whole_node"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main([*base, "--no-backfill"]) == 0
    strict = json.loads(capsys.readouterr().out)
    # consolidate splits C over the two 1-GPU holes at t=1; whole_node keeps it on one server (t=10)
    assert spread["mean_jct"] < whole["mean_jct"]
    assert strict["n_done"] == 4


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--jobs-csv", "{dir}", "--servers", "1"], "is a folder"),
        (["--jobs-csv", "{missing}", "--servers", "1"], "does not exist"),
        (["--jobs-csv", "{csv}", "--servers", "1", "--columns", "arrival"], "OURS=YOURS"),
        (["--trace", "synthetic", "--servers", "1", "--columns", "arrival=t"], "give --jobs-csv too"),
        (
            [
                "--jobs-csv",
                "{csv}",
                "--columns",
                "arrival=submit,gpus=n_gpu",
                "--servers",
                "1",
                "--gpus-per-server",
                "2",
            ],
            "--skip-oversized",
        ),
        (["--trace", "synthetic", "--servers", "1", "--jobs", "200", "--max-jobs", "100"], "--max-jobs"),
        (["--trace", "synthetic", "--servers", "1", "--placement", "yarn"], "invalid choice: 'yarn'"),
        (["--trace", "synthetic", "--servers", "1", "--load-time", "-1"], "--load-time"),
        (["--trace", "synthetic", "--servers", "1", "--out", "{file}"], "is a file"),
        (["--trace", "synthetic", "--servers", "1", "--out", "{full}"], "--force"),
    ],
)
def test_bad_input_is_refused_before_any_work(argv, msg, tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.csv").write_text("keep me")
    (tmp_path / "file").write_text("x")
    paths = {
        "dir": tmp_path,
        "missing": tmp_path / "nope.csv",
        "csv": _jobs_csv(tmp_path),
        "file": tmp_path / "file",
        "full": tmp_path / "full",
    }
    argv = [a.format(**paths) for a in argv]
    assert main(["simulate", *argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err
    assert (tmp_path / "full" / "x.csv").read_text() == "keep me"


def test_skip_oversized_counts_and_force_replaces(tmp_path, capsys):
    p = _jobs_csv(tmp_path)  # the 4-GPU job does not fit 1 x 2
    out = tmp_path / "out"
    earlier = [
        "simulate",
        "--trace",
        "synthetic",
        "--jobs",
        "5",
        "--servers",
        "1",
        "--max-duration",
        "3600",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(earlier) == 0  # an earlier run's files, listed in the folder's record: --force replaces them
    capsys.readouterr()
    assert (
        main(
            [
                "simulate",
                "--jobs-csv",
                str(p),
                "--columns",
                "arrival=submit,gpus=n_gpu",
                "--servers",
                "1",
                "--gpus-per-server",
                "2",
                "--skip-oversized",
                "--out",
                str(out),
                "--force",
                "--json",
            ]
        )
        == 0
    )
    s = json.loads(capsys.readouterr().out)
    assert s["n_skipped_oversized"] == 1 and s["n_jobs"] == 2
    assert len(pd.read_csv(out / "jobs.csv")) == 2
    assert oct((out / "jobs.csv").stat().st_mode & 0o777) != oct(0o600)


def test_openb_without_a_size_is_refused_naming_load_and_servers(capsys):
    # on its own 1,213 nodes OpenB runs at 0.27 % utilisation: every policy would give the same result
    assert main(["simulate", "--trace", "openb-sample", "--policy", "fifo", "--json", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--load R" in err and "--servers N" in err and "1,213 nodes" in err and "--load 0.9 gives" in err


def test_a_cluster_so_large_no_job_waits_warns_naming_servers(capsys):
    argv = ["simulate", "--trace", "openb-sample", "--servers", "400", "--policy", "fifo", "--json", "--quiet"]
    assert main(argv) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert "No job ever waited" in cap.err and "--servers" in out["warning"]
    assert "to" in out["utilization_window"]


def test_declared_choices_match_the_registries():
    from optsched.commands.simulate import PLACEMENT_CHOICES, POLICY_CHOICES
    from optsched.core.placement import PLACEMENT_RULES
    from optsched.sim.policies import POLICIES

    assert set(PLACEMENT_CHOICES) == set(PLACEMENT_RULES)
    assert set(POLICY_CHOICES) == set(POLICIES)


def test_synthetic_simulate_does_not_import_pandas():
    """The 1,000-job command line path stays light (start-up target in `make bench`)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom optsched.cli import main\n"
        "main(['simulate', '--trace', 'synthetic', '--jobs', '300', '--servers', '4', '--json', '--quiet'])\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_numpy_columns_and_dataframe_give_the_same_run():
    from optsched.core import Cluster
    from optsched.sim import Simulator, get_policy
    from optsched.traces import synthetic_workload

    cols = synthetic_workload(400, cluster_gpus=16, load=1.2, seed=3, frame=False)
    df = synthetic_workload(400, cluster_gpus=16, load=1.2, seed=3)
    a = Simulator(Cluster.homogeneous(2, 8), cols, get_policy("srtf")).run()
    b = Simulator(Cluster.homogeneous(2, 8), df, get_policy("srtf")).run()
    pd.testing.assert_frame_equal(a.jobs_frame(), b.jobs_frame())
    assert a.summary() == b.summary()


def test_a_paper_policy_from_the_registry(capsys):
    assert (
        main(
            [
                "simulate",
                "--trace",
                "synthetic",
                "--jobs",
                "200",
                "--servers",
                "4",
                "--policy",
                "lazer-zero",
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n_done"] == 200 and out["policy"] == "lazer-zero"  # the registry name, not the class's


def test_default_overheads_are_compares_model_and_fixed_times_choose_none(tmp_path, capsys):
    # One default with compare: each job's load/save times from its model; --load-time alone means
    # every job loads that long and nothing else (the two 10-s jobs on 1 x 2 GPUs of test_trace_file_path).
    p = tmp_path / "jobs.csv"
    p.write_text("job_id,arrival,gpus,duration\n1,0,2,10\n2,1,2,10\n")
    base = ["simulate", "--jobs-csv", str(p), "--servers", "1", "--gpus-per-server", "2", "--json"]
    assert main([*base, "--overheads", "none"]) == 0
    none = json.loads(capsys.readouterr().out)
    assert main(base) == 0
    default = json.loads(capsys.readouterr().out)
    assert main([*base, "--overheads", "model"]) == 0
    model = json.loads(capsys.readouterr().out)
    assert default["mean_jct"] == pytest.approx(model["mean_jct"])
    assert default["mean_jct"] > none["mean_jct"] + 60  # every job loads for at least the 60-s base
    assert main([*base, "--load-time", "5"]) == 0
    fixed = json.loads(capsys.readouterr().out)
    # job 1: load 5 + run 10 -> done at 15; job 2 waits from 1 to 15, loads 5, runs 10 -> 30: JCT 29
    assert fixed["mean_jct"] == pytest.approx((15 + 29) / 2)
