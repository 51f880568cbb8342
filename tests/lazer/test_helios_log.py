"""The Lazer reproduction on a user's Helios ``cluster_log.csv`` (issue 15 item 7): a seeded
Helios-format file with mixed states and GPU demands (0, 1-8, > 8) goes through
``helios_workload`` and ``simulate_policy(table=)`` / ``run(log=)`` for every policy of Table 2;
each run passes ``optsched.verify`` and (1); bad input fails before any simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.exceptions import DataNotFoundError, InvalidInstanceError, InvalidOptionError, TraceFormatError
from optsched.experiments.lazer import study as ex
from optsched.experiments.lazer.workloads import helios_workload
from optsched.lazer import FAMILIES, check_lifecycle
from optsched.traces import load_helios

from .conftest import verify_run

HEADER = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"
STATES = ["COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"]


def write_log(
    path, n: int = 40, seed: int = 3, *, gpus=(0, 1, 1, 2, 4, 8, 16), states=STATES, t0="2020-06-09 18:41:01"
):
    """A Helios-format log: ``n`` jobs, gaps 0-90 s, run times 30-2,400 s (one with duration 0),
    GPU demands drawn from ``gpus``, states from ``states``."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp(t0)
    t = 0.0
    lines = [HEADER]
    for i in range(n):
        t += float(rng.integers(0, 91))
        sub = start + pd.Timedelta(seconds=t)
        dur = 0 if i == 5 else int(rng.integers(30, 2401))
        g = int(rng.choice(gpus))
        st = str(rng.choice(states))
        end = sub + pd.Timedelta(seconds=dur)
        f = "%Y-%m-%d %H:%M:%S"
        lines.append(
            f"{1000 + i},u{i % 5},vc{i % 3},{g},{4 * max(g, 1)},{max(1, -(-g // 8))},{st},"
            f"{sub.strftime(f)},{sub.strftime(f)},{end.strftime(f)},{dur},0"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("helios") / "Earth"  # data/Earth/cluster_log.csv as released
    folder.mkdir()
    return write_log(folder / "cluster_log.csv")


def test_table_from_the_log(log):
    raw = pd.read_csv(log, dtype={"job_id": str})
    df = helios_workload(log, seed=7)
    # every finished GPU job with a positive run time, whatever its state; CPU-only and 0 s dropped
    keep = raw[(raw["gpu_num"] >= 1) & (raw["duration"] > 0)]
    assert df["job_id"].tolist() == keep["job_id"].tolist()
    assert set(df["status"]) > {"completed"}  # failed / killed / timeout jobs are kept
    np.testing.assert_allclose(df["duration"], keep["duration"].to_numpy(float))
    # arrivals from the submit times, first kept job at 0
    sub = pd.to_datetime(keep["submit_time"])
    np.testing.assert_allclose(df["arrival"], (sub - sub.iloc[0]).dt.total_seconds().to_numpy())
    # GPUs capped at one 8-GPU server; the trace's demand kept
    np.testing.assert_array_equal(df["gpus"], np.minimum(keep["gpu_num"].to_numpy(), 8))
    np.testing.assert_array_equal(df["trace_gpus"], keep["gpu_num"].to_numpy())
    assert df.attrs["n_capped"] == int((keep["gpu_num"] > 8).sum()) > 0
    assert df["model"].isin(FAMILIES).all()
    assert df.attrs["name"] == "Earth"  # the folder names the trace: the paper's Earth row


def test_models_are_seeded(log):
    a, b, c = helios_workload(log, seed=7), helios_workload(log, seed=7), helios_workload(log, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert (a["model"] != c["model"]).any()
    pd.testing.assert_frame_equal(a.drop(columns="model"), c.drop(columns="model"))
    # the same draw as synthetic_workload(models=FAMILIES) makes for its model column
    rng = np.random.default_rng(7)
    assert a["model"].tolist() == rng.choice(np.array(FAMILIES, dtype=object), size=len(a)).tolist()


def test_states_start_and_n_jobs(log):
    full = helios_workload(log)
    done = helios_workload(log, states=["completed"])
    assert (done["status"] == "completed").all() and 0 < len(done) < len(full)
    later = helios_workload(log, start=600.0, n_jobs=5)
    assert len(later) == 5 and later["arrival"].iloc[0] == pytest.approx(0.0)
    first = full[full["arrival"] >= 600.0].iloc[:5]
    assert later["job_id"].tolist() == first["job_id"].tolist()
    np.testing.assert_allclose(later["arrival"], first["arrival"] - first["arrival"].iloc[0])
    # a time stamp of the log's local time selects the same jobs
    t = pd.Timestamp(load_helios(log)["submit_time"].iloc[0]) + pd.Timedelta(seconds=600)
    stamp = helios_workload(log, start=str(t), n_jobs=5)
    assert stamp["job_id"].tolist() == later["job_id"].tolist()


@pytest.fixture(scope="module")
def runs(log):
    table = helios_workload(log, seed=0)
    out = {}
    for name in ex.POLICY_NAMES:
        row, pol, res = ex.simulate_policy("Earth", name, 0, None, servers=1, table=table, record_log=True)
        out[name] = (row, pol, res)
    return table, out


@pytest.mark.parametrize("name", ex.POLICY_NAMES)
def test_every_policy_runs_on_the_log_and_verifies(runs, name):
    table, out = runs
    row, _, res = out[name]
    df = res.jobs_frame().set_index("job_id")
    assert row["n_jobs"] == len(table) and row["gpus"] == 8
    assert (df["status"] == "done").all() and sorted(df.index) == sorted(table["job_id"])
    # (1) JCT = W + L + T + P per job, from the engine's counters and from the log alone
    assert check_lifecycle(res) == []
    np.testing.assert_allclose(
        df["waiting"] + df["loading_time"] + df["training_time"] + df["saving_time"], df["jct"], rtol=1e-9, atol=1e-6
    )
    # T_k = the log's run time (rate 1); loads from the model column are >= 60 s each
    dur = table.set_index("job_id")["duration"]
    np.testing.assert_allclose(df["training_time"], dur.loc[df.index], rtol=1e-9, atol=1e-6)
    assert (df["loading_time"] >= 60.0 - 1e-9).all()
    assert (df["futile_time"] <= df["loading_time"] + 1e-9).all()
    jobs = [
        Job(r.job_id, work=float(r.duration), gpus=int(r.gpus), arrival=float(r.arrival)) for r in table.itertuples()
    ]
    rep = verify_run(Cluster.homogeneous(1, 8), jobs, res, full=False)
    assert rep.ok, rep.summary()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(3, 30),
    name=st.sampled_from(ex.POLICY_NAMES),
    completed_only=st.booleans(),
    servers=st.integers(1, 2),
)
def test_any_small_log_verifies(tmp_path, seed, n, name, completed_only, servers):
    log = write_log(tmp_path / f"log{seed}_{n}.csv", n=n, seed=seed)
    try:
        table = helios_workload(log, seed=seed, states=["completed"] if completed_only else None)
    except InvalidInstanceError:  # nothing left (e.g. only CPU jobs drawn): refused, never simulated
        return
    assert (table["gpus"] >= 1).all() and (table["gpus"] <= 8).all() and table["arrival"].iloc[0] == 0
    assert (np.diff(table["arrival"]) >= 0).all()
    _, _, res = ex.simulate_policy("log", name, seed, None, servers=servers, table=table, record_log=True)
    assert check_lifecycle(res) == []
    jobs = [Job(r.job_id, work=r.duration, gpus=r.gpus, arrival=r.arrival) for r in table.itertuples()]
    rep = verify_run(Cluster.homogeneous(servers, 8), jobs, res, full=False)
    assert rep.ok, rep.summary()


def test_the_log_is_contended(runs):
    """The small log on one 8-GPU server makes jobs wait and preempt (else the test shows little)."""
    _, out = runs
    assert out["SJF"][0]["p95_waiting"] > 0
    assert sum(out[p][2].summary()["n_preemptions"] for p in ("SRTF", "Pollux (60 s)", "Lazer")) > 0


def test_run_on_a_log(log):
    tabs = {}
    ex.run(lambda name, df: tabs.__setitem__(name, df), quick=True, seeds=1, only=("table2",), log=log, rho=2.0)
    t2 = tabs["table2"]
    assert t2["trace"].unique().tolist() == ["Earth"] and t2["policy"].tolist() == ex.POLICY_NAMES
    assert t2["ours_w95_le_jct95"].all()
    assert t2["paper_jct_p50"].notna().all()  # the paper's Earth row beside ours
    assert set(tabs["runs"]["n_jobs"]) == {len(helios_workload(log))}


def test_a_log_of_another_cluster_has_no_paper_numbers(tmp_path):
    folder = tmp_path / "Venus"
    folder.mkdir()
    log = write_log(folder / "cluster_log.csv", n=12, seed=5)
    tabs = {}
    ex.run(lambda name, df: tabs.__setitem__(name, df), quick=True, seeds=1, only=("table2",), log=log)
    t2 = tabs["table2"]
    assert t2["trace"].unique().tolist() == ["Venus"]
    assert t2["paper_jct_p50"].isna().all() and t2["paper_w95_le_jct95"].isna().all()
    assert t2["ours_w95_le_jct95"].all()


def test_run_without_a_log_keeps_the_synthetic_workload():
    """No log: the same rows as the synthetic path gives (``table=`` changes nothing else)."""
    a = ex.simulate_policy("Earth", "SRTF", 1, 150, rho=2.0)[0]
    b = ex.simulate_policy("Earth", "SRTF", 1, 150, rho=2.0, table=ex.workload("Earth", 150, 1))[0]
    for k in ("p50_jct", "p95_jct", "p95_waiting", "n_futile", "gpus", "n_jobs"):
        assert a[k] == pytest.approx(b[k], rel=1e-12)


# -- bad input: clear errors before any simulation ------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(DataNotFoundError, match="does not exist"):
        helios_workload(tmp_path / "nope.csv")
    with pytest.raises(DataNotFoundError, match="does not exist"):
        ex.run(lambda *a: pytest.fail("nothing may be saved"), quick=True, log=tmp_path / "nope.csv")


def test_not_a_helios_file(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(TraceFormatError, match="missing column"):
        helios_workload(p)


def test_no_gpu_job_left(tmp_path):
    cpu_only = write_log(tmp_path / "cpu.csv", n=8, gpus=(0,))
    with pytest.raises(InvalidInstanceError, match="no GPU job"):
        helios_workload(cpu_only)
    with pytest.raises(InvalidInstanceError, match="no GPU job"):
        ex.run(lambda *a: pytest.fail("nothing may be saved"), quick=True, log=cpu_only)
    failed = write_log(tmp_path / "failed.csv", n=8, gpus=(1,), states=("FAILED",))
    with pytest.raises(InvalidInstanceError, match=r"states=\['completed'\]"):
        helios_workload(failed, states=["completed"])
    log = write_log(tmp_path / "ok.csv", n=8)
    with pytest.raises(InvalidInstanceError, match="start"):
        helios_workload(log, start=10**7)


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"n_jobs": 0}, "'n_jobs'"),
        ({"n_jobs": -3}, "'n_jobs'"),
        ({"n_jobs": 2.5}, "'n_jobs'"),
        ({"n_jobs": True}, "'n_jobs'"),
        ({"start": -1.0}, "'start'"),
        ({"start": float("nan")}, "'start'"),
        ({"start": "not a time"}, "'start'"),
        ({"states": []}, "'states'"),
        ({"states": ["done"]}, "'states'"),
    ],
)
def test_bad_options(tmp_path, kw, field):
    # checked before the file is read: a missing file is not what is reported
    with pytest.raises(InvalidOptionError, match=field):
        helios_workload(tmp_path / "nope.csv", **kw)


def test_run_checks_before_simulating(log, monkeypatch):
    calls = []
    monkeypatch.setattr(ex, "simulate_policy", lambda *a, **k: calls.append(1))
    with pytest.raises(InvalidOptionError, match="'n_jobs'"):
        ex.run(lambda *a: None, quick=True, log=log, n_jobs=0)
    with pytest.raises(InvalidOptionError, match="not both"):
        ex.run(lambda *a: None, quick=True, log=log, table=helios_workload(log))
    with pytest.raises(InvalidInstanceError, match="'model'"):
        ex.run(lambda *a: None, quick=True, table=helios_workload(log).drop(columns="model"))
    assert calls == []


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d: d.drop(columns="model"), "'model'"),
        (lambda d: d.assign(gpus=16), "'gpus'"),
        (lambda d: d.assign(gpus=0), "'gpus'"),
        (lambda d: d.assign(model="GPT-5"), "load/save entry"),
        (lambda d: d.iloc[:0], "no job"),
    ],
)
def test_bad_table(log, change, match):
    with pytest.raises(InvalidInstanceError, match=match):
        ex.simulate_policy("Earth", "SJF", 0, None, servers=1, table=change(helios_workload(log)))
