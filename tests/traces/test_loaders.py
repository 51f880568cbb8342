"""Loaders on small files written in each official format (rows quoted in the trace READMEs),
the shipped OpenB trace in full, and malformed inputs."""

import gzip
import io
import json
import tarfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.exceptions import DataNotFoundError, TraceFormatError, UnknownNameError
from optsched.traces import (
    detect_format,
    load_acme,
    load_helios,
    load_openb,
    load_pai,
    load_philly,
    load_trace,
    openb_cluster,
    to_jobs,
)
from optsched.traces.datasets import SHIPPED

PHILLY = [
    {
        "status": "Pass",
        "vc": "ee9e8c",
        "jobid": "application_1506638472019_14199",
        "attempts": [
            {
                "start_time": "2017-10-07 01:12:09",
                "end_time": "2017-10-07 01:13:23",
                "detail": [{"ip": "m47", "gpus": [f"gpu{i}" for i in range(8)]}],
            },
            {
                "start_time": "2017-10-07 01:13:30",
                "end_time": "2017-10-09 06:53:12",
                "detail": [{"ip": "m412", "gpus": [f"gpu{i}" for i in range(8)]}],
            },
        ],
        "submitted_time": "2017-10-07 01:11:39",
        "user": "ce2f4c",
    },
    {
        "status": "Failed",
        "vc": "b436b2",
        "jobid": "application_2",
        "user": "u2",
        "attempts": [
            {
                "start_time": "2017-10-07 02:00:00",
                "end_time": "2017-10-07 02:10:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0"]}, {"ip": "m2", "gpus": ["gpu0"]}],
            }
        ],
        "submitted_time": "2017-10-07 01:50:00",
    },
    {
        "status": "Killed",
        "vc": "b436b2",
        "jobid": "application_3",
        "user": "u2",
        "attempts": [],
        "submitted_time": "2017-10-07 03:00:00",
    },
    {
        "status": "Pass",
        "vc": "b436b2",
        "jobid": "application_4",
        "user": "u3",
        "attempts": [
            {"start_time": "2017-10-07 04:00:00", "end_time": None, "detail": [{"ip": "m3", "gpus": ["gpu0"]}]}
        ],
        "submitted_time": "2017-10-07 04:00:00",
    },
]

HELIOS = """job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0
1425512,uVMrF,vchbv,4,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 18:45:36,249,0
1425513,uzqls,vcpDC,1,1,1,CANCELLED,2020-06-09 18:41:28,2020-06-09 18:41:28,2020-06-17 14:15:21,675233,0
1425514,uzqls,vcpDC,0,4,1,COMPLETED,2020-06-09 18:41:29,2020-06-09 18:41:29,2020-06-09 18:42:29,60,0
"""

ACME = """job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time
5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,936.0
5778469,u5907,1,8,128,Other,COMPLETED,2023-03-01 00:23:58+08:00,2023-03-01 00:24:11+08:00,2023-03-01 01:09:04+08:00,2693,13,21544.0
"""

PAI_JOB = (
    "4b3f04b66a525d2df903eb16,8cb3bec20d6ce8b6f0c6b3d1e7bd4a5b2f1e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f,"
    "58540f191766,Terminated,4550879.0,4551416.0\n"
    "4f057009a5d481acec67b088,aa11,58540f191766,Failed,1739150.0,1739200.0\n"
    "5f057009a5d481acec67b088,bb22,68540f191766,Running,1739150.0,\n"
)
PAI_TASK = (
    "4b3f04b66a525d2df903eb16,worker,2.0,Terminated,4550880.0,4551416.0,600.0,29.296875,100.0,V100\n"
    "4b3f04b66a525d2df903eb16,ps,1.0,Terminated,4550879.0,4551416.0,600.0,29.296875,0.0,V100\n"
    "4f057009a5d481acec67b088,tensorflow,1.0,Terminated,1739162.0,1739200.0,600.0,29.296875,50.0,MISC\n"
    "5f057009a5d481acec67b088,tensorflow,1.0,Running,1739162.0,,600.0,29.296875,50.0,MISC\n"
)
PAI_GROUP = (
    "8cb3bec20d6ce8b6f0c6b3d1e7bd4a5b2f1e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f,58540f191766,V100,"
    "g1,bert\naa11,58540f191766,,g2,\n"
)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_philly(tmp_path):
    p = write(tmp_path, "cluster_job_log", json.dumps(PHILLY))
    df = load_philly(p).set_index("job_id")
    r = df.loc["application_1506638472019_14199"]
    # 74 s + (2 days 5 h 39 min 42 s = 193,182 s) over two attempts; 8 GPUs; queue = 30 s
    assert r["duration"] == 74 + 193182 and r["gpus"] == 8 and r["n_attempts"] == 2
    assert r["queue_delay"] == 30 and r["status"] == "completed" and r["group"] == "ee9e8c"
    r2 = df.loc["application_2"]
    assert r2["gpus"] == 2 and r2["duration"] == 600 and r2["status"] == "failed"
    assert r2["arrival"] - r["arrival"] == 38 * 60 + 21
    assert len(df) == 2 and df.attrs["rows_read"] == 4
    assert df.attrs["dropped"] == {"unfinished (running/pending at trace end)": 1, "no positive duration": 1}
    # gzip and keep_unfinished
    gz = tmp_path / "log.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(PHILLY).encode()))
    assert len(load_trace(gz)) == 2
    assert "application_4" not in set(load_philly(gz, keep_unfinished=True)["job_id"])  # no positive duration


def test_helios(tmp_path):
    df = load_helios(write(tmp_path, "cluster_log.csv", HELIOS))
    assert df["job_id"].tolist() == ["1425511", "1425512", "1425513"]
    assert df["arrival"].tolist() == [0.0, 26.0, 27.0]
    assert df["status"].tolist() == ["completed", "failed", "killed"]
    assert df["gpus"].tolist() == [1, 4, 1] and df["cpu"].tolist() == [1, 16, 1]
    assert df.attrs["dropped"] == {"CPU-only (0 GPUs)": 1}
    assert len(load_helios(tmp_path / "cluster_log.csv", gpu_only=False)) == 4
    assert detect_format(tmp_path / "cluster_log.csv") == "helios"


def test_acme(tmp_path):
    df = load_acme(write(tmp_path, "trace_seren.csv", ACME))
    assert df["arrival"].tolist() == [0.0, 336.0] and df["duration"].tolist() == [117.0, 2693.0]
    assert df["gpus"].tolist() == [8, 8] and df["type"].tolist() == ["Other", "Other"]
    assert df["status"].tolist() == ["failed", "completed"] and df["queue_delay"].tolist() == [32.0, 13.0]
    assert detect_format(tmp_path / "trace_seren.csv") == "acme"


def test_pai_plain_and_tar_gz(tmp_path):
    jp, tp, gp = (
        write(tmp_path, n, t)
        for n, t in (
            ("pai_job_table.csv", PAI_JOB),
            ("pai_task_table.csv", PAI_TASK),
            ("pai_group_tag_table.csv", PAI_GROUP),
        )
    )
    df = load_pai(jp, tp, gp).set_index("job_id")
    r = df.loc["4b3f04b66a525d2df903eb16"]
    # workers 2 x 100% GPU + ps 0 -> 2 GPUs; duration = end - earliest task start = 537; queue 0
    assert r["gpus"] == 2 and r["gpu_fraction"] == 2.0 and r["duration"] == 537 and r["queue_delay"] == 0
    assert r["group"] == "g1" and r["workload"] == "bert" and r["cpu"] == 18.0 and r["status"] == "completed"
    r2 = df.loc["4f057009a5d481acec67b088"]
    assert r2["gpus"] == 1 and r2["gpu_fraction"] == 0.5 and r2["status"] == "failed"
    assert len(df) == 2  # the running job is dropped
    # the official release: headerless CSV inside tar.gz
    for name, text in (("pai_job_table", PAI_JOB), ("pai_task_table", PAI_TASK)):
        data = text.encode()
        with tarfile.open(tmp_path / f"{name}.tar.gz", "w:gz") as tf:
            info = tarfile.TarInfo(f"{name}.csv")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    df2 = load_pai(tmp_path / "pai_job_table.tar.gz", tmp_path / "pai_task_table.tar.gz")
    cols = ["arrival", "duration", "gpus", "status", "queue_delay"]
    pd.testing.assert_frame_equal(df2.set_index("job_id")[cols], df[cols])


def test_openb_full_shipped_trace():
    df = load_openb()
    assert df.attrs["rows_read"] == 8152
    # 897 pending pods (no scheduled_time) and the CPU-only pods are dropped, nothing else
    assert df.attrs["dropped"]["no positive duration"] == 897
    assert len(df) + sum(df.attrs["dropped"].values()) == 8152
    assert df["arrival"].is_monotonic_increasing and df["arrival"].iloc[0] == 0
    assert set(df["gpus"].unique()) <= {1, 2, 4, 8} and (df["duration"] > 0).all()
    raw = pd.read_csv(SHIPPED / "alibaba-gpu-2023-openb" / "jobs.csv.gz")
    one = raw.set_index("name").loc["openb-pod-4214"]
    r = df.set_index("job_id").loc["openb-pod-4214"]
    assert r["duration"] == one["deletion_time"] - one["scheduled_time"]
    assert r["queue_delay"] == one["scheduled_time"] - one["creation_time"]
    c = openb_cluster()
    assert c.total_gpus == 6212 and c.max_server_gpus == 8
    assert len(to_jobs(df, limit=5)) == 5
    assert len(load_trace("openb-sample")) < len(df)


def test_detect_and_unknown(tmp_path):
    p = write(tmp_path, "x.csv", "a,b,c\n1,2,3\n")
    with pytest.raises(TraceFormatError, match="unknown trace format"):
        load_trace(p)
    with pytest.raises(UnknownNameError, match="Unknown trace 'nope'"):
        load_trace("nope")


@pytest.mark.parametrize(
    ("name", "dataset"),
    [("cluster_log.csv", "helios"), ("cluster_job_log", "philly"), ("trace_seren.csv", "acme")],
)
def test_a_missing_file_of_a_public_trace_names_the_fetch_command(tmp_path, monkeypatch, name, dataset):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownNameError) as err:
        load_trace(name)
    msg = str(err.value)
    assert f"{name!r}" in msg and f"optsched data fetch {dataset}" in msg and f"optsched data path {dataset}" in msg
    with pytest.raises(UnknownNameError) as err:  # a path to it too, wherever the reader expected it
        load_trace(tmp_path / "Venus" / name)
    assert f"optsched data fetch {dataset}" in str(err.value)


@pytest.mark.parametrize(
    "text, msg",
    [
        (HELIOS.replace(",36848,", ",abc,"), "'duration' column of the helios trace must be numeric; row 1 has 'abc'"),
        (HELIOS.replace("2020-06-09 18:41:27,2020", "yesterday,2020"), "'submit_time' column"),
        (HELIOS.replace("gpu_num", "gpus"), r"missing column\(s\) \['gpu_num'\]"),
        (HELIOS.replace(",4,16,", ",1.5,16,"), "'gpu_num' must be a whole number"),
        ("", "empty"),
    ],
)
def test_helios_malformed(tmp_path, text, msg):
    with pytest.raises(TraceFormatError, match=msg):
        load_helios(write(tmp_path, "bad.csv", text))


@pytest.mark.parametrize(
    "obj, msg",
    [
        ({"jobs": []}, "JSON list"),
        ([{"status": "Pass"}], "must be an object with 'jobid'"),
        ([dict(PHILLY[1], submitted_time="07/10/2017")], "'submitted_time' of Philly job 'application_2'"),
        ([dict(PHILLY[1], attempts="none")], "'attempts' of Philly job"),
    ],
)
def test_philly_malformed(tmp_path, obj, msg):
    with pytest.raises(TraceFormatError, match=msg):
        load_philly(write(tmp_path, "bad.json", json.dumps(obj)))
    with pytest.raises(TraceFormatError, match="not a Philly"):
        load_philly(write(tmp_path, "bad2.json", "{not json"))


def test_pai_malformed(tmp_path):
    jp = write(tmp_path, "j.csv", "a,b,c\n")
    tp = write(tmp_path, "t.csv", PAI_TASK)
    with pytest.raises(TraceFormatError, match="has 6 columns"):
        load_pai(jp, tp)
    jp = write(tmp_path, "j2.csv", PAI_JOB.replace("4550879.0", "soon"))
    with pytest.raises(
        TraceFormatError, match="'start_time' column of the PAI job table trace must be numeric; row 1 has 'soon'"
    ):
        load_pai(jp, tp)
    with pytest.raises(DataNotFoundError, match="does not exist"):
        load_pai(tmp_path / "missing.csv", tp)


@settings(max_examples=30)
@given(
    col=st.sampled_from(["cpu_milli", "num_gpu", "creation_time", "deletion_time", "scheduled_time"]),
    junk=st.text(alphabet="abcxyz!?", min_size=1, max_size=5),
    row=st.integers(0, 2),
)
def test_openb_malformed_cells_named(tmp_path_factory, col, junk, row):
    raw = pd.read_csv(SHIPPED / "alibaba-gpu-2023-openb" / "sample.csv", nrows=3, dtype=str)
    raw.loc[row, col] = junk
    p = tmp_path_factory.mktemp("ob") / "pods.csv"
    raw.to_csv(p, index=False)
    with pytest.raises(TraceFormatError, match=f"'{col}' column of the OpenB trace must be numeric; row {row + 1} "):
        load_openb(p)


@settings(max_examples=30)
@given(
    gpus=st.lists(st.integers(0, 16), min_size=1, max_size=8),
    durs=st.lists(st.integers(-5, 10**6), min_size=8, max_size=8),
)
def test_helios_roundtrip_property(tmp_path_factory, gpus, durs):
    lines = ["job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"]
    for i, g in enumerate(gpus):
        lines.append(
            f"{i},u,vc,{g},1,1,COMPLETED,2020-06-09 18:41:{i:02d},2020-06-09 18:41:{i:02d},"
            f"2020-06-09 18:41:{i:02d},{durs[i]},0"
        )
    p = tmp_path_factory.mktemp("h") / "log.csv"
    p.write_text("\n".join(lines) + "\n")
    keep = [i for i, g in enumerate(gpus) if g >= 1 and durs[i] > 0]
    if not keep:
        with pytest.raises(TraceFormatError, match="no usable job"):
            load_helios(p)
        return
    df = load_helios(p)
    assert df["job_id"].tolist() == [str(i) for i in keep]
    assert df["gpus"].tolist() == [gpus[i] for i in keep]
    assert np.allclose(df["arrival"], np.array(keep) - keep[0])


def test_ties_in_arrival_are_ordered_by_job_id_not_by_row():
    import pandas as pd

    from optsched.traces.table import finish_table

    raw = pd.DataFrame(
        {"job_id": ["b", "c", "a"], "arrival": [5.0, 9.0, 5.0], "duration": [1.0, 2.0, 3.0], "gpus": [1, 1, 2]}
    )
    out = finish_table(raw, trace="t", source="x", rows_read=3)
    assert out["job_id"].tolist() == ["a", "b", "c"] and out["gpus"].tolist() == [2, 1, 1]
