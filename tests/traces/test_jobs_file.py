"""``read_jobs``: a user's own CSV/Parquet job file, with clear errors for every malformed input."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.exceptions import InvalidOptionError, TraceFormatError
from optsched.traces import parse_columns, read_jobs


def _write(tmp_path, text, name="jobs.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_csv_and_parquet_give_the_same_table(tmp_path):
    df = pd.DataFrame(
        {"job_id": ["a", "b"], "arrival": [0.0, 2.5], "gpus": [1, 4], "duration": [10.0, 3.0], "user": ["u1", "u2"]}
    )
    df.to_csv(tmp_path / "j.csv", index=False)
    df.to_parquet(tmp_path / "j.parquet", index=False)
    a, b = read_jobs(tmp_path / "j.csv"), read_jobs(tmp_path / "j.parquet")
    pd.testing.assert_frame_equal(a, b)
    assert a["job_id"].tolist() == ["a", "b"] and a["gpus"].tolist() == [1, 4]
    assert a["user"].tolist() == ["u1", "u2"]


def test_column_mapping_and_work(tmp_path):
    p = _write(tmp_path, "t,n,w\n0,2,5\n1,1,7\n")
    df = read_jobs(p, columns={"arrival": "t", "gpus": "n", "work": "w"})
    assert df["duration"].tolist() == pytest.approx([5.0, 7.0]) and "work" in df
    assert parse_columns("arrival=t, gpus=n") == {"arrival": "t", "gpus": "n"}


@pytest.mark.parametrize(
    "text, words",
    [
        ("arrival,gpus\n0,1\n", ["missing column", "duration"]),
        ("arrival,gpus,duration\n0,one,5\n", ["'gpus'", "row 2", "'one'"]),
        ("arrival,gpus,duration\n0,1,5\n-1,1,5\n", ["'arrival'", "row 3", "-1"]),
        ("arrival,gpus,duration\n0,1,nan\n", ["'duration'", "nan"]),
        ("arrival,gpus,duration\n0,1,inf\n", ["'duration'", "inf"]),
        ("arrival,gpus,duration\n0,1.5,5\n", ["'gpus'", "integer in [1,", "1.5"]),
        ("arrival,gpus,duration\n0,1,0\n", ["'duration'", "[1e-06, 1e+09]"]),
        # issue 28: a duration of 1e308 was accepted and simulated (mean_jct 5e+307)
        ("arrival,gpus,duration\n0,1,1e308\n5,2,3\n", ["'duration'", "1e+308", "row 2", "docs/instances.md#limits"]),
        ("arrival,gpus,duration\n5e9,1,3\n", ["'arrival'", "[0, 4e+09]", "5000000000"]),
        ("arrival,gpus,duration\n", ["no rows"]),
    ],
)
def test_bad_files_name_the_column_row_and_value(tmp_path, text, words):
    with pytest.raises(TraceFormatError) as e:
        read_jobs(_write(tmp_path, text))
    msg = str(e.value)
    for w in words:
        assert w in msg, (w, msg)
    assert "np.float64" not in msg


def test_missing_file_folder_and_bad_mapping(tmp_path):
    with pytest.raises(TraceFormatError, match="does not exist"):
        read_jobs(tmp_path / "nope.csv")
    with pytest.raises(TraceFormatError, match="is a folder"):
        read_jobs(tmp_path)
    with pytest.raises(InvalidOptionError, match="OURS=YOURS"):
        parse_columns("arrival")
    with pytest.raises(InvalidOptionError, match="not a job-file column"):
        parse_columns("start=t")


cells = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 50), st.sampled_from(["", "x", "1e3", " 2"])
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(cells, cells, cells), min_size=1, max_size=6))
def test_random_files_are_read_or_refused_clearly(tmp_path, rows):
    p = tmp_path / "r.csv"
    pd.DataFrame(rows, columns=["arrival", "gpus", "duration"]).to_csv(p, index=False)
    try:
        df = read_jobs(p)
    except TraceFormatError as e:
        assert str(p) in str(e) and "np." not in str(e)
        return
    assert len(df) == len(rows)
    assert all(math.isfinite(x) and x >= 0 for x in df["arrival"])
    assert all(g >= 1 for g in df["gpus"]) and all(math.isfinite(d) and d > 0 for d in df["duration"])


@pytest.mark.parametrize("ours", ["arrival", "gpus", "duration"])
def test_a_mapping_to_a_missing_column_names_the_column_already_there(tmp_path, ours):
    """``--columns arrival=submit`` on a file that has ``arrival`` says so, not "missing 'submit'"."""
    p = _write(tmp_path, "arrival,gpus,duration\n0,8,3600\n")
    with pytest.raises(TraceFormatError) as err:
        read_jobs(p, columns={ours: "submit"})
    msg = str(err.value)
    assert f"already has a column {ours!r}" in msg and "submit" in msg
    assert f"drop {ours}=submit" in msg and "missing column" not in msg
