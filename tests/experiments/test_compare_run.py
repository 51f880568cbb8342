"""Running a comparison: a policy that raises gives a failed row and the others finish; the 4-job
2D-LAS case and a table in Unix time give a full table; processes and Dask give the serial table;
stopping keeps the finished rows; the table is sorted and says which rows are far from the bound."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from optsched.cli import main
from optsched.core import Cluster
from optsched.exceptions import InvalidOptionError
from optsched.experiments import compare as cmp
from optsched.experiments.compare import Comparison, executors
from optsched.traces import synthetic_workload

FOUR = pd.DataFrame({"arrival": [20.0, 0.0, 56.0, 19.0], "gpus": 1, "duration": [3000.0, 90.0, 3000.0, 90.0]})


def _run(argv, capsys):
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _csv(tmp_path, df, name="jobs.csv"):
    p = tmp_path / name
    df.to_csv(p, index=False)
    return str(p)


@pytest.mark.parametrize("overheads", ["model", "none"])
def test_the_four_job_case_gives_a_full_table(overheads, tmp_path, capsys):
    """2D-LAS swapped two jobs every slot, each resume loading for a slot or more: 'livelock' and no table."""
    code, text, err = _run(
        [
            "compare",
            "--jobs-csv",
            _csv(tmp_path, FOUR),
            "--servers",
            "1",
            "--gpus-per-server",
            "1",
            "--overheads",
            overheads,
            "--workers",
            "1",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    rows = json.loads(text)["rows"]
    assert len(rows) == len(cmp.available_policies())
    assert all(r["failed"] is None and r["skipped"] is None for r in rows)
    assert all(r["ratio_to_bound"] >= 1 - 1e-9 and not r["beats_bound"] for r in rows)


def test_a_table_in_unix_time_gives_a_full_table_without_false_flags(tmp_path, capsys):
    """400 jobs at 1.6e9 s: srtf-periodic ticked from t = 0 and ran past its event limit, and the
    optimal SRTF was flagged as beating a bound 2e-3 s too high."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "arrival": 1.6e9 + np.sort(rng.uniform(0, 20_000, 400)).round(3),
            "gpus": 1,
            "duration": rng.choice([3.7, 12.1, 60.3, 300.9], 400),
        }
    )
    code, text, err = _run(
        [
            "compare",
            "--jobs-csv",
            _csv(tmp_path, df),
            "--servers",
            "1",
            "--gpus-per-server",
            "1",
            "--overheads",
            "none",
            "--policies",
            "srtf,srtf-periodic,fifo,las,sjf",
            "--workers",
            "1",
        ],
        capsys,
    )
    assert code == 0, err
    assert "BUG" not in text and "FAILED" not in text and "times from the first arrival" in text
    assert "srtf-periodic" in text


def test_a_policy_that_raises_gives_a_failed_row_and_the_others_finish(tmp_path, capsys, monkeypatch):
    real = executors.run_policy

    def broken(name, *a, **k):
        if name == "sjf":
            spec = dict(a[0])

            def boom(*_a, **_k):
                raise RuntimeError("the policy broke")

            spec["factory"] = boom
            return real(name, spec, *a[1:], **k)
        return real(name, *a, **k)

    monkeypatch.setattr(executors, "run_policy", broken)
    df = synthetic_workload(60, cluster_gpus=8, max_duration=3600, seed=2)
    with pytest.warns(UserWarning, match="'sjf' failed.*the policy broke.*run it alone"):
        table, per_job = cmp.compare(df, Cluster.homogeneous(2, 4), policies=["fifo", "sjf", "srtf"], progress=False)
    t = table.set_index("policy")
    assert (
        "RuntimeError: the policy broke" in t.loc["sjf", "failed"] and "policies=['sjf']" in t.loc["sjf", "reproduce"]
    )
    assert t.loc[["fifo", "srtf"], "failed"].isna().all() and set(per_job) == {"fifo", "srtf"}
    assert list(table["policy"])[-1] == "sjf"  # failed rows after the ones that ran

    out = tmp_path / "c"
    code, text, _ = _run(
        [
            "compare",
            "--jobs-csv",
            _csv(tmp_path, df),
            "--servers",
            "2",
            "--gpus-per-server",
            "4",
            "--policies",
            "fifo,sjf,srtf",
            "--workers",
            "1",
            "--out",
            str(out),
            "--quiet",
        ],
        capsys,
    )
    assert code == 1  # a failed row: exit 1 at the end, with the table written
    assert "FAILED sjf: seed 0: RuntimeError: the policy broke" in text
    assert "run it alone: optsched compare --jobs-csv" in text and "--policies sjf --workers 1" in text
    csv = pd.read_csv(out / "compare.csv")
    assert set(csv["policy"]) == {"fifo", "sjf", "srtf"} and (out / "bound.json").is_file()


def _same(a, b):
    cols = [c for c in a.columns if c not in ("seconds", "cpu_seconds")]
    pd.testing.assert_frame_equal(
        a[cols].reset_index(drop=True), b[cols].reset_index(drop=True), check_exact=True, check_dtype=False
    )


def test_processes_give_the_serial_table():
    df = synthetic_workload(150, cluster_gpus=16, max_duration=3600, seed=5)
    cl = Cluster.homogeneous(4, 4)
    pols = ["fifo", "srtf", "lazer", "asrpt-a-srpt", "elastic-2d-las", "sojourn-online-rank", "srtf-periodic"]
    kw = {"policies": pols, "seeds": 2, "progress": False}
    serial, pj1 = cmp.compare(df, cl, workers=1, **kw)
    par, pj2 = cmp.compare(df, cl, workers=2, executor="processes", **kw)
    _same(serial, par)
    assert serial.attrs["bound"] == par.attrs["bound"]
    for name in pols:
        pd.testing.assert_frame_equal(pj1[name], pj2[name], check_exact=True)


@pytest.mark.slow
def test_a_local_dask_cluster_gives_the_serial_table():
    df = synthetic_workload(80, cluster_gpus=8, max_duration=3600, seed=6)
    cl = Cluster.homogeneous(2, 4)
    kw = {"policies": ["fifo", "srtf", "elastic-tiresias"], "progress": False}
    serial, _ = cmp.compare(df, cl, workers=1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own notices
        dask, _ = cmp.compare(df, cl, workers=2, executor="dask", scheduler_address="local", **kw)
    _same(serial, dask)


def test_stop_keeps_the_finished_rows():
    df = synthetic_workload(60, cluster_gpus=8, max_duration=3600, seed=2)
    run = None

    def first_only(row, rows):
        run.stop()

    run = Comparison(df, Cluster.homogeneous(2, 4), policies=["fifo", "sjf", "srtf"], progress=False, on_row=first_only)
    run.run()
    t = run.table()
    assert len(t) == 1 and not run.complete and t.attrs["complete"] is False
    assert t.attrs["bound"]["total_jct"] > 0


def test_rows_are_sorted_and_far_rows_get_a_note(tmp_path, capsys):
    df = synthetic_workload(120, cluster_gpus=8, max_duration=3600, seed=1)
    cl = Cluster.homogeneous(2, 4)
    t, _ = cmp.compare(df, cl, policies=["fifo", "srtf", "sjf"], progress=False, sort_by="p95_jct")
    assert list(t["p95_jct"]) == sorted(t["p95_jct"])
    t, _ = cmp.compare(df, cl, policies=["fifo", "srtf", "sjf"], progress=False, sort_by=None)
    assert list(t["policy"]) == ["fifo", "srtf", "sjf"]
    t, _ = cmp.compare(df, cl, policies=["fifo", "srtf"], progress=False, sort_by=None)
    for r in t.to_dict("records"):  # a note exactly on the rows at FAR times their bound or more
        assert isinstance(r["note"], str) == (r["ratio_to_bound"] >= cmp.FAR)
    rows = [
        {"policy": "fifo", "ratio_to_bound": 86.1, "note": "of the jobs' 9 s beyond their own lengths: ..."},
        {"policy": "srtf", "ratio_to_bound": 1.5, "note": None},
        {"policy": "las", "ratio_to_bound": 12.0, "note": "of the jobs' 5 s beyond their own lengths: ..."},
    ]
    assert cmp.far_notes(rows) == [
        f"fifo (86.1 x the bound): {rows[0]['note']}",
        f"las (12 x the bound): {rows[2]['note']}",
    ]
    assert cmp.far_notes(rows, far=50.0) == [f"fifo (86.1 x the bound): {rows[0]['note']}"]
    with pytest.raises(InvalidOptionError, match="sort_by"):
        cmp.compare(df, cl, policies=["fifo"], progress=False, sort_by="nope")


@pytest.mark.parametrize(
    "extra, msg",
    [
        (["--policies", "fifo,srtf,fifo"], "'fifo' is asked for twice"),
        (["--policies", "fifo,nope"], "unknown policy 'nope'"),
        (["--policies", "fifo", "--workers", "0"], "--workers must be a whole number >= 1"),
        (["--policies", "fifo", "--workers", "-2"], "--workers must be a whole number >= 1"),
        (["--policies", "fifo", "--dask", "tcp://127.0.0.1:9"], "No Dask scheduler at"),
        (["--policies", "fifo", "--sort", "nope"], "sort_by (--sort) must be one of"),
        (["--asrpt-nic-gbps", "0"], "--asrpt-nic-gbps must be a bandwidth > 0 in Gbit/s per server"),
        (["--asrpt-nic-gbps", "-10"], "got -10.0 Gbit/s"),
        (["--asrpt-nic-gbps", "1e-9"], "below 1 byte/s"),
        (["--asrpt-nic-gbps", "3000"], "3000 Gbit/s per server is faster across servers than inside one"),
    ],
)
def test_cli_bad_input_before_any_run(extra, msg, tmp_path, capsys):
    out = tmp_path / "never"
    base = ["compare", "--jobs-csv", _csv(tmp_path, FOUR), "--servers", "1", "--gpus-per-server", "1", "--quiet"]
    code, text, err = _run([*base, *extra, "--out", str(out)], capsys)
    assert code == 2 and msg in err and text == ""
    assert not out.exists() or not any(out.iterdir())  # nothing written


def test_cli_a_workload_every_asked_policy_skips_is_refused_before_any_run(tmp_path, capsys, monkeypatch):
    """OpenB's nodes are of different sizes: A-SRPT alone has nothing to run (exit 2, its reason
    named, no --out folder)."""
    from optsched.commands import compare as command
    from optsched.traces import load_trace, openb_cluster
    from optsched.traces.workload import Workload

    # the command line sizes every trace: the workload on OpenB's own nodes, as a Python caller builds it
    w = Workload(openb_cluster(), "openb-sample", "on the OpenB nodes", 0.0, table=load_trace("openb-sample")[:50])
    monkeypatch.setattr(command, "workload_from_args", lambda args, **kw: w)
    out = tmp_path / "never"
    argv = ["compare", "--trace", "openb-sample", "--jobs", "50", "--policies", "asrpt-a-srpt", "--quiet"]
    code, text, err = _run([*argv, "--out", str(out)], capsys)
    assert code == 2 and "No policy could run" in err and "identical servers" in err and text == ""
    assert not out.exists()


def test_cli_timestamps_that_are_not_numbers_name_the_field(tmp_path, capsys):
    df = FOUR.assign(arrival=["2020-06-09 18:41:01", "2020-06-09 18:40:41", "2020-06-09 18:41:37", "x"])
    code, _, err = _run(
        ["compare", "--jobs-csv", _csv(tmp_path, df), "--servers", "1", "--gpus-per-server", "1", "--policies", "fifo"],
        capsys,
    )
    assert code == 2 and "'arrival'" in err


def test_python_bad_input():
    df = FOUR
    with pytest.raises(InvalidOptionError, match="asked for twice"):
        cmp.compare(df, Cluster.homogeneous(1, 1), policies=["fifo", "fifo"], progress=False)
    with pytest.raises(InvalidOptionError, match="workers"):
        cmp.compare(df, Cluster.homogeneous(1, 1), policies=["fifo"], workers=0, progress=False)
    with pytest.raises(InvalidOptionError, match="Cluster"):
        cmp.compare(df, "4x8", policies=["fifo"], progress=False)
    with pytest.raises(InvalidOptionError, match="executor"):
        cmp.compare(df, Cluster.homogeneous(1, 1), policies=["fifo"], executor="threads", progress=False)


def test_cli_stopped_by_a_handler_keeps_the_finished_rows(tmp_path, capsys, monkeypatch):
    """What a signal handler does (Comparison.stop()): the run ends after the results it is
    collecting, the finished rows and bound.json are written, exit 130."""
    real = Comparison._add

    def add_then_stop(self, row):
        real(self, row)
        self.stop()

    monkeypatch.setattr(Comparison, "_add", add_then_stop)
    out = tmp_path / "c"
    df = synthetic_workload(60, cluster_gpus=8, max_duration=3600, seed=2)
    code, text, err = _run(
        [
            "compare",
            "--jobs-csv",
            _csv(tmp_path, df),
            "--servers",
            "2",
            "--gpus-per-server",
            "4",
            "--policies",
            "fifo,sjf,srtf",
            "--workers",
            "1",
            "--out",
            str(out),
            "--quiet",
        ],
        capsys,
    )
    assert code == 130 and "interrupted after 1 policies" in err and text == ""
    assert len(pd.read_csv(out / "compare.csv")) == 1 and (out / "bound.json").is_file()


def test_cli_asrpt_rows_say_their_nic_profiles_and_time_model(tmp_path, capsys):
    """The A-SRPT rows' NIC is in the title and bound.json (default g x 100 Gbit/s; --asrpt-nic-gbps
    sets it), with the profiles; a note under the table says they run under their own time model
    beside rows that do not (srtf here), and points at the asrpt-wcs-* rows."""
    import json

    df = FOUR.assign(gpus=[2, 1, 2, 1], model=["vit_b_16", "resnet50", "bert", "vgg19"])
    base = ["compare", "--jobs-csv", _csv(tmp_path, df), "--servers", "2", "--gpus-per-server", "2", "--quiet"]
    base += ["--overheads", "none"]  # the model column as given (no Lazer enrichment drawing models)
    pols = ["--policies", "srtf,asrpt-a-srpt,asrpt-a-srpt-backfill,asrpt-a-srpt-backfill-no-split"]
    for nic, want in ((None, 200.0), ("10", 10.0)):
        out = tmp_path / f"out-{nic}"
        extra = [] if nic is None else ["--asrpt-nic-gbps", nic]
        code, text, _ = _run([*base, *pols, *extra, "--out", str(out)], capsys)
        assert code == 0
        assert f"A-SRPT NIC {want:g} Gbit/s per server" in text.splitlines()[0]
        assert "the asrpt-* rows run under the A-SRPT paper's time model" in text and "asrpt-wcs-*" in text
        a = json.loads((out / "bound.json").read_text())["assumptions"]["asrpt"]
        assert a["nic_gbps_per_server"] == pytest.approx(want) and a["bandwidth_inter"] == pytest.approx(want * 1e9 / 8)
        assert set(a["profiles"]) == {"ViT", "ResNet", "BERT", "VGG19"}
        for row in ("asrpt-a-srpt ", "asrpt-a-srpt-backfill ", "asrpt-a-srpt-backfill-no-split "):
            assert row in text
