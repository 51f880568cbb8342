"""Slotted mode: decisions at slot boundaries, GPUs freed at the end of the finishing slot."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Job
from optsched.exceptions import InvalidOptionError
from optsched.sim import Simulator, get_policy

from .test_invariants import workloads


def _frame(jobs, policy, servers=1, gpus=2, **kw):
    return Simulator(Cluster.homogeneous(servers, gpus), jobs, policy, **kw).run().jobs_frame().set_index("job_id")


def test_hand_computed_three_jobs():
    # slot 10 s, one server of 2 GPUs, FIFO.
    # J0 (1 GPU, 15 s) starts at 0, its work is done at 15, it frees its GPU at 20.
    # J1 (2 GPUs, 5 s) arrives at 3: decided at 10 (no room), starts at 20, done 25, completes 30.
    # J2 (1 GPU, 4 s) arrives at 12: decided at 20 behind J1 (FIFO), starts at 30, done 34, completes 40.
    jobs = [Job("J0", work=15, gpus=1), Job("J1", work=5, gpus=2, arrival=3), Job("J2", work=4, gpus=1, arrival=12)]
    df = _frame(jobs, get_policy("fifo"), slot=10)
    assert df["first_start"].tolist() == pytest.approx([0, 20, 30])
    assert df["completion"].tolist() == pytest.approx([20, 30, 40])
    assert df["finish"].tolist() == pytest.approx([15, 25, 34])
    assert df["training_time"].tolist() == pytest.approx([15, 5, 4])
    assert df["waiting"].tolist() == pytest.approx([0, 17, 18])  # the idle slot tail is not waiting
    cont = _frame(jobs, get_policy("fifo"))
    assert cont["completion"].tolist() == pytest.approx([15, 21, 16])  # J2 backfills at 12, J1 waits to 16
    assert "finish" not in cont.columns


def test_arrival_inside_a_slot_waits_for_its_end_even_with_free_gpus():
    df = _frame([Job(0, work=1, gpus=1, arrival=0.5)], get_policy("srtf"), slot=2)
    assert df.loc[0, "first_start"] == pytest.approx(2.0) and df.loc[0, "completion"] == pytest.approx(4.0)


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "1", True])
def test_bad_slot_is_refused(bad):
    with pytest.raises(InvalidOptionError, match="'slot'"):
        Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1)], get_policy("fifo"), slot=bad)


@settings(max_examples=60, deadline=None)
@given(
    w=workloads(),
    policy=st.sampled_from(["fifo", "sjf", "srtf", "las"]),
    rule=st.sampled_from(["consolidate", "first_fit", "whole_node"]),
)
def test_a_slot_that_divides_every_event_time_changes_nothing(w, policy, rule):
    """Arrivals and work are multiples of 0.5 s at rate 1: with slot 0.5 (or 0.25) every event
    falls on a boundary, so the slotted run equals the continuous one."""
    cluster, jobs = w
    opts = {"quantum": 2.0} if policy == "las" else {}
    cont = _frame(jobs, get_policy(policy, placement=rule, **opts), cluster.n_servers, cluster.gpus[0])
    for slot in (0.5, 0.25):
        sl = _frame(jobs, get_policy(policy, placement=rule, **opts), cluster.n_servers, cluster.gpus[0], slot=slot)
        for col in ("first_start", "completion", "n_preemptions"):
            assert sl[col].tolist() == pytest.approx(cont[col].tolist(), abs=1e-9), col
        assert sl["finish"].tolist() == pytest.approx(sl["completion"].tolist(), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(specs=st.lists(st.tuples(st.floats(0, 20), st.floats(0.01, 10)), min_size=1, max_size=8))
def test_results_converge_to_continuous_time_as_slots_shrink(specs):
    """One GPU, FIFO: slotting delays each job by at most one slot per job up to it (and its
    own), so the gap shrinks in proportion to the slot and is never negative."""
    jobs = [Job(i, work=w, gpus=1, arrival=a) for i, (a, w) in enumerate(specs)]
    cont = _frame(jobs, get_policy("fifo"), 1, 1)["completion"]
    for slot in (0.1, 0.01, 0.001):
        sl = _frame(jobs, get_policy("fifo"), 1, 1, slot=slot)["completion"]
        assert ((sl - cont).abs() <= 2 * (len(jobs) + 1) * slot + 1e-9).all()
        assert (sl >= cont - 1e-9).all()
