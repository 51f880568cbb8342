"""The notes under compare's table are measured on each row's own jobs: a row far from its bound
because one wide job split over servers trained hundreds of times slower says so and names that
job, never a cause written for another trace; the parts of each job's time beyond its own length
add up to it and each is read from the run (checked against a time-stepped recount)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.core import Cluster
from optsched.exceptions import WorkloadWarning
from optsched.experiments.compare.comparison import Comparison
from optsched.experiments.compare.notes import PARTS, _free_time, job_costs, row_note
from optsched.experiments.compare.table import FAR, far_notes

NIC = 1.25e8  # bytes/s per server: 1 Gbit/s, where a split job's all-reduce crawls


def fifty_jobs() -> pd.DataFrame:
    """50 jobs of 1-8 GPUs over 20,000 s on 3 servers of 8 GPUs, all GPT-2 (one A-SRPT profile)."""
    rng = np.random.default_rng(3)
    n = 50
    return pd.DataFrame(
        {
            "arrival": np.sort(rng.uniform(0, 20000, n)),
            "gpus": rng.choice([1, 2, 4, 8], size=n, p=[0.5, 0.2, 0.2, 0.1]),
            "duration": rng.lognormal(7, 1.2, n).round(1),
            "model": ["gpt2"] * n,
        }
    )


@pytest.fixture(scope="module")
def fifty():
    with warnings.catch_warnings():  # GPT-2 is mapped to a size by name: said once, not under test here
        warnings.simplefilter("ignore", WorkloadWarning)
        return Comparison(
            fifty_jobs(),
            Cluster.homogeneous(3, 8),
            policies=["sjf", "asrpt-wcs-duration-online"],
            workers=1,
            progress=False,
            enrich={"asrpt": {"bandwidth_inter": NIC}},
        ).run()


def test_a_row_far_from_the_bound_because_of_a_split_job_names_that_job(fifty):
    """The finding: SJF near its bound and an A-SRPT baseline twenty times it in the same table;
    the baseline's note must blame the split 8-GPU job, not "no preemption (like SJF)"."""
    t = fifty.table().set_index("policy")
    assert t.loc["sjf", "ratio_to_bound"] < 2 and pd.isna(t.loc["sjf", "note"])
    far = t.loc["asrpt-wcs-duration-online"]
    assert far["ratio_to_bound"] >= FAR
    note = far["note"]
    assert "no preemption" not in note and "like SJF" not in note
    # the split 8-GPU job that trained longest beyond its duration, read from the per-job results
    f = fifty.per_job["asrpt-wcs-duration-online"].merge(fifty_jobs()[["duration"]], left_index=True, right_index=True)
    wide = f[(f["servers"] > 1) & (f["gpus"] == 8)]
    worst = wide.loc[(wide["training_time"] - wide["duration"]).idxmax()]
    assert worst["training_time"] > 100 * worst["duration"]  # it trained over a hundred times slower
    assert f"job {worst['job_id']} (8 GPUs split over {worst['servers']} servers" in note
    # the split part comes first (the largest), with its share recounted from the per-job results
    assert far["bound"] == "workload"
    load = fifty.ws[0].table["load_time"].to_numpy()
    beyond = (f["completion"] - f["arrival"]) - f["duration"] - load
    split = (f["training_time"] - f["duration"])[f["servers"] > 1].clip(lower=0).sum()
    share = round(100 * split / beyond.sum())
    assert note.split("own lengths: ")[1].startswith(f"{share} % training beyond their durations split over servers")
    assert far_notes(fifty.rows)[0].startswith("asrpt-wcs-duration-online (")


def test_the_example_note_on_the_compare_page_is_this_runs(fifty):
    page = (Path(__file__).parents[2] / "docs" / "compare.md").read_text(encoding="utf-8")
    block = page.split("```text\nfar from the bound (why")[1].split("```")[0]
    shown = " ".join(line.strip() for line in block.splitlines()[1:] if line.strip())
    assert shown == far_notes(fifty.rows)[0]


def test_the_cli_prints_and_writes_the_measured_note(tmp_path, capsys):
    csv = tmp_path / "jobs.csv"
    fifty_jobs().to_csv(csv, index=False)
    base = ["compare", "--jobs-csv", str(csv), "--servers", "3", "--gpus-per-server", "8", "--quiet"]
    base += ["--policies", "sjf,asrpt-wcs-duration-online", "--asrpt-nic-gbps", "1", "--workers", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WorkloadWarning)
        assert main(base) == 0
    out = capsys.readouterr().out
    far = out.split("far from the bound")[1]
    assert "asrpt-wcs-duration-online (" in far and "split over" in far and "sjf (" not in far
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WorkloadWarning)
        assert main([*base, "--json"]) == 0
    rows = {r["policy"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["sjf"]["note"] is None and "split over" in rows["asrpt-wcs-duration-online"]["note"]


def _frame(rows):
    cols = ["job_id", "arrival", "first_start", "completion", "status", "gpus", "loading_time", "training_time"]
    cols += ["saving_time", "servers"]
    return pd.DataFrame(rows, columns=cols)


def test_the_parts_add_up_to_each_jobs_time_beyond_its_own_length():
    # job 0: 8 GPUs on 2 servers, duration 100, loads 10 then 5 again, saves 5, off its GPUs 20 s
    # job 1: waited 50 s for the GPUs job 0 held; job 2 still running (left out)
    f = _frame(
        [
            [0, 0.0, 0.0, 440.0, "done", 8, 15.0, 400.0, 5.0, 2],
            [1, 0.0, 50.0, 160.0, "done", 8, 10.0, 100.0, 0.0, 1],
            [2, 0.0, 440.0, math.nan, "running", 8, 10.0, 1.0, 0.0, 1],
        ]
    )
    steps = (np.array([0.0, 50.0, 160.0, 440.0]), np.array([8, 16, 8, 8]))
    c = job_costs(f, np.array([110.0, 110.0, 110.0]), np.array([10.0, 10.0, 10.0]), steps, 16)
    assert list(c["job_id"]) == [0, 1]
    parts = c[list(PARTS)].to_numpy()
    assert np.allclose(parts.sum(axis=1), c["excess"])
    assert c.loc[0, "split"] == pytest.approx(300.0) and c.loc[0, "overheads"] == pytest.approx(10.0)
    assert c.loc[0, "off_gpus"] == pytest.approx(20.0) and c.loc[1, "queued_free"] == pytest.approx(50.0)
    # with 8 GPUs free throughout [0, 50] job 1's wait is "while enough GPUs were free"; on 8 it is "busy"
    c8 = job_costs(f, np.array([110.0] * 3), np.array([10.0] * 3), (steps[0], np.array([8, 8, 8, 8])), 8)
    assert c8.loc[1, "queued_busy"] == pytest.approx(50.0) and c8.loc[1, "queued_free"] == 0.0


@st.composite
def _steps_and_waits(draw):
    G = draw(st.integers(1, 16))
    k = draw(st.integers(0, 8))
    times = sorted(draw(st.lists(st.integers(0, 40), min_size=k, max_size=k, unique=True)))
    level = draw(st.lists(st.integers(0, G), min_size=k, max_size=k))
    jobs = draw(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, G)), min_size=1, max_size=6))
    return G, times, level, jobs


@given(_steps_and_waits())
@example((4, [], [], [(3, 5, 4)]))  # no steps: every GPU free all along
@example((4, [5, 10], [4, 0], [(0, 20, 1)]))  # a wait across a busy spell
@settings(max_examples=80, deadline=None)
def test_free_time_matches_a_unit_step_recount(case):
    """The time a job waited with at least its GPUs free, against counting unit intervals."""
    G, times, level, jobs = case
    a = np.array([j[0] for j in jobs], float)
    b = a + np.array([j[1] for j in jobs], float)
    need = np.array([j[2] for j in jobs], float)
    got = _free_time(np.array(times, float), np.array(level, float), G, need, a, b)

    def held(t):  # GPUs held over [t, t + 1): the last step at or before t, none before the first
        past = [lv for tt, lv in zip(times, level, strict=True) if tt <= t]
        return past[-1] if past else 0

    want = [sum(1 for t in range(int(x), int(y)) if G - held(t) >= g) for x, y, g in zip(a, b, need, strict=True)]
    assert np.allclose(got, want)


def test_a_note_says_which_part_costs_most_and_names_the_policys_own_rule():
    c = pd.DataFrame(
        {
            "job_id": [4, 5],
            "gpus": [2, 1],
            "servers": [1, 1],
            "own": [10.0, 10.0],
            "training_time": [10.0, 10.0],
            "excess": [900.0, 100.0],
            "split": [0.0, 0.0],
            "slower": [0.0, 0.0],
            "queued_busy": [0.0, 100.0],
            "queued_free": [900.0, 0.0],
            "off_gpus": [0.0, 0.0],
            "overheads": [0.0, 0.0],
        }
    )
    note = row_note("elastic-online", c)
    assert note.startswith(
        "of the jobs' 1,000 s beyond their own lengths: 90 % waiting to start while enough GPUs were free"
    )
    assert "Theorem 5" in note and "job 4 (2 GPUs: waited 900 s while its GPUs were free) 90 %" in note
    assert "Theorem 5" not in row_note("fifo", c)
    assert row_note("fifo", c, top=1).count("job ") == 1


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 6), st.sampled_from([1.0, 3.0, 10.0, 40.0])),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(["fifo", "srtf", "las"]),
)
@example([(0, 3, 10.0), (0, 1, 1.0)], "fifo")  # a 3-GPU job on 2-GPU servers: split over 2
@settings(max_examples=25, deadline=None)
def test_servers_per_job_is_the_same_from_both_engines(jobs, policy):
    """The ``servers`` column (SimResult.job_servers) from the compiled kernel's packed segments
    equals the count over the Python engine's placements, and a job wider than a server is split."""
    from optsched.core import Job
    from optsched.sim import Simulator, get_policy

    js = [Job(i, work=w, gpus=g, arrival=float(a)) for i, (a, g, w) in enumerate(jobs)]
    got = {}
    for engine in ("python", "compiled"):
        res = Simulator(Cluster.homogeneous(3, 2), js, get_policy(policy), engine=engine).run()
        assert res.engine == engine
        got[engine] = res.job_servers()
    assert got["python"].tolist() == got["compiled"].tolist()
    assert all(k >= 2 for k, (_, g, _) in zip(got["python"], jobs, strict=True) if g > 2)


ROW_POLICIES = ["fifo", "las", "srtf-periodic", "asrpt-spjf-online", "elastic-fifo", "sojourn-online-sr", "lazer"]


@st.composite
def _workloads(draw):
    n = draw(st.integers(1, 7))
    return pd.DataFrame(
        {
            "arrival": [float(draw(st.integers(0, 60))) for _ in range(n)],
            "gpus": [draw(st.sampled_from([1, 2, 3, 4])) for _ in range(n)],
            "duration": [draw(st.sampled_from([1.0, 7.0, 61.0, 200.0, 3000.0])) for _ in range(n)],
            "model": [draw(st.sampled_from(["vgg19", "gpt2", "resnet50"])) for _ in range(n)],
            "status": [draw(st.sampled_from(["completed", "failed"])) for _ in range(n)],
        }
    )


@given(_workloads())
@example(pd.DataFrame({"arrival": [0.0, 0.0], "gpus": [4, 3], "duration": [200.0, 7.0], "model": ["gpt2"] * 2,
                       "status": ["completed"] * 2}))  # fmt: skip
@settings(max_examples=8, deadline=None)
def test_every_row_s_parts_are_read_from_its_run_and_none_is_negative(df):
    """On each family's rows (rigid, preemptive, A-SRPT's time model, elastic slots, sojourn stages,
    Lazer), every finished job's parts are >= 0 and add up to its time beyond its own length, and
    its two waiting parts to its wait for a first start."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = Comparison(df, Cluster.homogeneous(2, 2), policies=ROW_POLICIES, workers=1, progress=False).run()
    from optsched.experiments.compare.notes import own_lengths

    for row in run.rows:
        if row.get("skipped") is not None:
            continue
        assert row.get("failed") is None, row
        f = run.per_job[row["policy"]]
        own, load = own_lengths(run.ws[0], row["bound"])
        c = job_costs(f, own, load, run._util[row["policy"]], 4)
        scale = 1e-6 * max(1.0, float(f["completion"].max()))
        assert (c[list(PARTS)].to_numpy() >= -scale).all(), (row["policy"], c)
        assert np.allclose(c[list(PARTS)].sum(axis=1), c["excess"], atol=scale)
        fin = f[f["status"].isin(["done", "failed"])]
        wait = (fin["first_start"] - fin["arrival"]).to_numpy()
        assert np.allclose(c["queued_busy"] + c["queued_free"], wait, atol=scale)


def test_with_several_seeds_the_note_says_whose_jobs_it_measured():
    from optsched.traces import synthetic_workload

    df = synthetic_workload(60, cluster_gpus=2, max_duration=3600, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WorkloadWarning)
        t = Comparison(df, Cluster.homogeneous(1, 2), policies=["las"], seeds=2, seed=3, workers=1, progress=False)
        row = t.run().table().iloc[0]
    assert row["ratio_to_bound"] >= FAR  # LAS shares one server's GPUs among 60 jobs
    assert row["note"].startswith("seed 3's jobs: of the jobs' ") and "idle after starting (preempted" in row["note"]
