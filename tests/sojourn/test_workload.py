"""Staged jobs from a generic job table (formulations/sojourn.md#from-a-trace): every job processes
exactly its trace duration, the policies see a proper distribution, the engine alone the outcome."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.sim import Simulator, get_policy
from optsched.sojourn.workload import PHILLY_PASS_RATE, from_table

STATUS = ["completed", "Failed", "KILLED", "running", "timeout", "pass"]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 50), st.integers(1, 3), st.floats(1, 500), st.sampled_from(STATUS), st.sampled_from("abc")
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(2, 6),
    st.booleans(),
)
def test_each_job_runs_its_duration_and_the_probabilities_are_a_distribution(rows, M, with_status):
    t = pd.DataFrame(rows, columns=["arrival", "gpus", "duration", "status", "user"]).astype({"arrival": float})
    if not with_status:
        t = t.drop(columns="status")
    s = from_table(t, n_stages=M, seed=3)
    for i, (sizes, probs) in enumerate(zip(s.table["sizes"], s.table["probs"], strict=True)):
        assert len(sizes) == len(probs) == M and np.all(np.diff(sizes) > 0)
        assert sum(probs) == pytest.approx(1.0) and min(probs) > 0
        k = s.terminate_after.get(i, M)
        assert sizes[k - 1] == pytest.approx(t["duration"].iloc[i])  # what the job really processes
    if with_status:
        failed = t["status"].str.lower().isin(["failed", "killed", "timeout"])
        assert set(s.terminate_after) == set(np.nonzero(failed.to_numpy())[0])
    res = Simulator(Cluster.homogeneous(1, 4), s.table, get_policy("sojourn-online-rank"), **s.sim_options()).run()
    f = res.jobs_frame()
    assert set(f["status"]) <= {"done", "failed"}
    assert f["training_time"].to_numpy() == pytest.approx(t["duration"].to_numpy())


def test_success_rate_per_user_and_the_prior():
    t = pd.DataFrame(
        {
            "arrival": np.zeros(6),
            "gpus": 1,
            "duration": 10.0,
            "user": ["a", "a", "a", "b", "b", "b"],
            "status": ["completed", "completed", "completed", "failed", "failed", "running"],
        }
    )
    s = from_table(t, n_stages=2, prior_strength=0.0)
    q = [p[-1] for p in s.table["probs"]]
    assert q[0] == pytest.approx(1 - 1e-6) and q[3] == pytest.approx(1e-6)
    s = from_table(t, n_stages=2, by=None)
    assert [p[-1] for p in s.table["probs"]] == pytest.approx([0.6] * 6)
    assert "3 successes, 2 failures, 1 unknown" in s.assumptions["success_probability"]
    s = from_table(t.drop(columns="status"), n_stages=2)
    assert [p[-1] for p in s.table["probs"]] == pytest.approx([PHILLY_PASS_RATE] * 6)


def test_bad_input():
    t = pd.DataFrame({"arrival": [0.0], "gpus": [1], "duration": [1.0]})
    with pytest.raises(InvalidOptionError, match="n_stages"):
        from_table(t, n_stages=1)
    with pytest.raises(InvalidOptionError, match="prior"):
        from_table(t, prior=0)
    with pytest.raises(InvalidInstanceError, match="duration"):
        from_table(t.drop(columns="duration"))


def test_missing_users_get_the_trace_rate_not_their_own_outcome():
    """OpenB's user column is empty: every job must get the trace's rate, never a group of its own."""
    t = pd.DataFrame(
        {
            "arrival": np.zeros(5),
            "gpus": 1,
            "duration": 10.0,
            "user": [None, None, np.nan, "a", "a"],
            "status": ["completed", "failed", "failed", "completed", "failed"],
        }
    )
    s = from_table(t, n_stages=2, prior_strength=2.0)
    q = [p[-1] for p in s.table["probs"]]
    assert q[:3] == pytest.approx([0.4] * 3)  # 2 successes of 5
    assert q[3] == q[4] == pytest.approx((1 + 2 * 0.4) / (2 + 2))
    s = from_table(t.assign(user=None), n_stages=2)
    assert [p[-1] for p in s.table["probs"]] == pytest.approx([0.4] * 5)
    assert "is empty" in s.assumptions["success_probability"]
