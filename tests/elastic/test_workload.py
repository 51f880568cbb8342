"""Elastic jobs from a generic job table (formulations/elastic.md#from-a-trace): no configuration
of a job trains in less than its duration or on fewer than g x duration GPU-seconds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster
from optsched.elastic.shapes import candidate_shapes
from optsched.elastic.workload import default_slot, from_table
from optsched.exceptions import InvalidInstanceError, InvalidOptionError


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 5000), st.sampled_from([1, 2, 3, 4, 6, 8]), st.floats(1, 20_000)), min_size=1, max_size=6
    ),
    st.sampled_from([None, {1: 0.5, 2: 0.3, 4: 0.2}, {2: 1.0}, {1: 1.0, 8: 1.0}]),
    st.sampled_from([None, 30.0, 600.0]),
    st.integers(0, 100),
)
def test_no_configuration_beats_the_duration(jobs, mix, slot, seed):
    t = pd.DataFrame(jobs, columns=["arrival", "gpus", "duration"])
    inst = from_table(t, Cluster.homogeneous(2, 4), worker_gpus=mix, slot=slot, seed=seed)
    D = inst.slot
    gpu = inst.resources.index("gpu")
    for j, job in enumerate(inst.jobs):
        assert job.arrival * D >= t["arrival"].iloc[j] - 1e-6
        g, dur = int(t["gpus"].iloc[j]), float(t["duration"].iloc[j])
        for sh in candidate_shapes(inst, j):
            per_worker = inst.e[sh.m][gpu]
            assert sh.d * D >= dur * (1 - 1e-9), (sh, dur)
            assert sh.n * per_worker * sh.d * D >= g * dur * (1 - 1e-9), (sh, g, dur)
        # the job's own shape on one server (if it fits) takes ceil(duration / slot) slots
        assert inst.min_duration(j) >= -(-dur // D) - 1e-9


def test_own_type_and_chunks_follow_the_mix():
    t = pd.DataFrame({"arrival": [0.0, 0.0, 0.0], "gpus": [4, 3, 8], "duration": [600.0, 600.0, 600.0]})
    inst = from_table(t, Cluster.homogeneous(2, 8), worker_gpus={2: 1.0}, slot=60.0)
    assert [j.chunks for j in inst.jobs] == [2, 3, 4]  # 3 GPUs: no 2-GPU split, one GPU per worker
    assert [inst.min_duration(j) for j in range(3)] == [10, 11, 10]
    a = inst.metadata["assumptions"]
    assert a["slot"] == 60.0 and a["worker_gpus"] == {2: 1.0} and inst.F >= 1


def test_default_slot_and_bad_input():
    assert default_slot(100.0) == 60.0 and default_slot(60.0 * 2000 * 3.5) == 240.0
    t = pd.DataFrame({"arrival": [0.0], "gpus": [16], "duration": [10.0]})
    with pytest.raises(InvalidInstanceError, match="more than the cluster's 8"):
        from_table(t, Cluster.homogeneous(1, 8))
    with pytest.raises(InvalidInstanceError, match="'duration' column"):
        from_table(t.drop(columns="duration"), Cluster.homogeneous(2, 8))
    t = pd.DataFrame({"arrival": [0.0], "gpus": [1], "duration": [10.0]})
    with pytest.raises(InvalidOptionError, match="'slot'"):
        from_table(t, Cluster.homogeneous(1, 8), slot=0)
    with pytest.raises(InvalidOptionError, match="worker_gpus"):
        from_table(t, Cluster.homogeneous(1, 8), worker_gpus={0: 1.0})


def _long_table(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "arrival": np.sort(rng.uniform(0, 36_000, n)),
            "gpus": rng.choice([1, 2, 4], n),
            "duration": rng.uniform(600, 7_200, n),
        }
    )


def test_default_slot_grows_until_the_horizon_fits_the_limit(monkeypatch):
    """At 100,000 synthetic jobs the one-minute-based default slot gave a serial horizon of
    1,385,530 slots, past the elastic limit of 10^6, and compare skipped every elastic row; the
    default slot now grows (whole minutes) until it fits. Here the limit is made small."""
    from optsched.core import limits

    monkeypatch.setitem(limits.MAX_SLOTS, "elastic", 5_000)
    table = _long_table()
    inst = from_table(table, Cluster.homogeneous(4, 4))
    slot = inst.metadata["assumptions"]["slot"]
    assert slot > default_slot(float((table.arrival + table.duration).max())) and slot % 60 == 0
    assert inst.horizon <= 5_000
    with pytest.raises(InvalidInstanceError) as e:  # a given slot is kept, and refused with the fix
        from_table(table, Cluster.homogeneous(4, 4), slot=60.0)
    msg = str(e.value)
    assert "more than the 5,000" in msg and "--elastic-slot" in msg
    least = float(msg.split("--elastic-slot ")[1].split()[0])
    assert from_table(table, Cluster.homogeneous(4, 4), slot=least).horizon <= 5_000
    with pytest.raises(InvalidInstanceError):  # the least slot is the least whole minute that fits
        from_table(table, Cluster.homogeneous(4, 4), slot=least - 60.0)


def test_to_sim_of_more_jobs_than_a_server_may_have_gpus():
    """The simulator's cluster gave each server one placement token per job (100,000 tokens at
    100,000 jobs, past the 10,000 GPUs a server may have: every elastic row of compare failed);
    a server needs a token only per worker or PS that can fit on it at once."""
    from optsched.core.limits import MAX_SERVER_GPUS
    from optsched.elastic.policy_base import to_sim

    n = MAX_SERVER_GPUS + 1
    table = pd.DataFrame({"arrival": np.arange(n, dtype=float), "gpus": 1, "duration": 60.0})
    inst = from_table(table, Cluster.homogeneous(2, 4))
    cluster, jobs = to_sim(inst)
    assert len(jobs) == n
    # a server of 4 GPUs and 32 CPUs holds at most 4 one-GPU workers (4 CPUs each) and 8 PSs (4 CPUs)
    assert [s.gpus for s in cluster.servers] == [12, 12]
