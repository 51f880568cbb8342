"""``optsched simulate``: shipped trace, synthetic workload, files, exit codes."""

import json

import pandas as pd
import pytest

from optsched.cli import main


def test_openb_sample_all_policies(capsys):
    for pol in ("fifo", "sjf", "srtf", "las"):
        assert main(["simulate", "--trace", "openb-sample", "--policy", pol, "--json", "--no-progress"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["policy"] == pol and out["n_jobs"] > 2000 and out["n_done"] == out["n_jobs"]


def test_synthetic_to_files(tmp_path, capsys):
    rc = main(["simulate", "--trace", "synthetic", "--jobs", "300", "--load", "1.5", "--policy", "srtf",
               "--servers", "4", "--gpus-per-server", "8", "--save-time", "5", "--load-time", "5",
               "--out", str(tmp_path), "--seed", "2"])
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
    p.write_text("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                 "1,u,vc,2,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:41:11,10,0\n"
                 "2,u,vc,2,1,1,COMPLETED,2020-06-09 18:41:02,2020-06-09 18:41:02,2020-06-09 18:41:12,10,0\n")
    assert main(["simulate", "--trace", str(p), "--servers", "1", "--gpus-per-server", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["makespan"] == 20.0 and out["mean_jct"] == 14.5


@pytest.mark.parametrize("argv, msg", [
    (["--trace", "nope", "--servers", "1"], "Unknown trace"),
    (["--trace", "synthetic", "--policy", "edf", "--servers", "1"], "Unknown policy"),
    (["--trace", "synthetic"], "--servers"),
    (["--trace", "synthetic", "--servers", "0"], "--servers must be >= 1"),
    (["--trace", "synthetic", "--servers", "1", "--placement", "best"], "placement"),
])
def test_bad_input_exit_2(argv, msg, capsys):
    assert main(["simulate", *argv, "--jobs", "20", "--no-progress"]) == 2
    assert msg in capsys.readouterr().err
