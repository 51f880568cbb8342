"""optsched.core.objectives: each objective recomputed from a schedule, against a hand count."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from optsched.core import Cluster, Instance, Job, Schedule
from optsched.core.objectives import OBJECTIVES, objective_value
from optsched.exceptions import UnknownNameError
from optsched.rigid import list_schedule
from tests.strategies import rigid_instances

INST = Instance(Cluster.homogeneous(1, 2), [Job(0, work=2, weight=3), Job(1, work=1, arrival=1, gpus=2)])
SCHED = Schedule()
SCHED.add(0, 0, 2, {0: 1})
SCHED.add(1, 2, 3, {0: 2})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("total_weighted_completion_time", 3 * 2 + 1 * 3),
        ("total_completion_time", 2 + 3),
        ("total_flow_time", 2 + (3 - 1)),
        ("total_weighted_flow_time", 3 * 2 + 1 * 2),
        ("mean_jct", (2 + 2) / 2),
        ("makespan", 3),
    ],
)
def test_each_objective_by_hand(name, value):
    assert objective_value(INST, SCHED, name) == pytest.approx(value)
    assert set(OBJECTIVES) >= {name}


@settings(max_examples=20, deadline=None)
@given(rigid_instances(max_jobs=5))
def test_weighted_completion_is_the_sum_over_jobs(inst):
    sched = list_schedule(inst, rule="fifo").schedule
    want = sum(j.weight * sched.completion(j.id) for j in inst.jobs)
    assert objective_value(inst, sched, "total_weighted_completion_time") == pytest.approx(want)
    assert objective_value(inst, sched, "makespan") == pytest.approx(max(sched.completion(j.id) for j in inst.jobs))


def test_an_unknown_objective_is_named():
    with pytest.raises(UnknownNameError, match="no_such"):
        objective_value(INST, SCHED, "no_such")


class _OnlyCompletions:
    """A schedule-like object with ``completion`` only (no ``segment_lists``)."""

    def __init__(self, sched):
        self.completion = sched.completion


@settings(max_examples=40, deadline=None)
@given(rigid_instances(max_jobs=6))
def test_weighted_completion_of_a_schedule_is_the_sum_of_its_completions_to_the_last_bit(inst):
    """Read in place from a Schedule (one or several segments per job) or through ``completion``:
    the same float."""
    sched = list_schedule(inst, rule="wspt").schedule
    j = inst.jobs[0]
    first = sched.segments(j.id)[0]
    sched.add(j.id, first.end + 0.1, first.end + 0.7, dict(first.placement))  # a second segment
    want = float(sum(job.weight * sched.completion(job.id) for job in inst.jobs))
    assert objective_value(inst, sched, "total_weighted_completion_time") == want
    assert objective_value(inst, _OnlyCompletions(sched), "total_weighted_completion_time") == want
