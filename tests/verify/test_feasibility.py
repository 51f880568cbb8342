"""The verifier finds every violated constraint by its label, from the schedule alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job, Schedule
from optsched.exceptions import VerificationError
from optsched.rigid import list_schedule
from optsched.verify import checks_for, feasibility, verify, verify_result
from tests.strategies import rigid_instances

INST = Instance(
    Cluster.homogeneous(2, 2),
    [Job(0, work=2, gpus=2, arrival=1), Job(1, work=1, gpus=1), Job(2, work=3, gpus=1, single_server=True)],
    name="v",
)


def good() -> Schedule:
    s = Schedule()
    s.add(0, 1, 3, {0: 2})
    s.add(1, 0, 1, {0: 1})
    s.add(2, 0, 3, {1: 1})
    return s


def labels(rep):
    return {v.label for v in rep.violations}


def test_good_schedule_passes_and_objective_recomputed():
    rep = verify(INST, good(), objective="total_weighted_completion_time", claimed=3 + 1 + 3)
    assert rep.ok, rep.summary()
    assert rep.objectives["total_weighted_completion_time"] == 7


@pytest.mark.parametrize(
    ("mutate", "label"),
    [
        (lambda s: s.add(9, 0, 1, {1: 1}), "one_schedule_per_job"),
        (lambda s: s._seg.pop(1), "one_schedule_per_job"),
        (lambda s: (s._seg.pop(0), s.add(0, 0, 2, {0: 2})), "release"),
        (lambda s: (s._seg.pop(1), s.add(1, 0, 1, {0: 2})), "demand"),  # more GPUs than it needs
        (lambda s: (s._seg.pop(0), s.add(0, 1, 3, {0: 1})), "demand"),  # fewer
        (lambda s: (s._seg.pop(2), s.add(2, 0, 3, {0: 1, 1: 0} if False else {5: 1})), "demand"),
        (lambda s: (s._seg.pop(2), s.add(2, 0, 1.5, {1: 1}), s.add(2, 1, 2.5, {1: 1})), "no_self_overlap"),
        (lambda s: (s._seg.pop(1), s.add(1, 1.5, 2.5, {0: 1})), "capacity"),
        (lambda s: (s._seg.pop(2), s.add(2, 0, 2, {1: 1})), "work"),  # runs 2 s of its 3
        (lambda s: (s._seg.pop(2), s.add(2, 0, 4, {1: 1})), "work"),  # runs 4 s
    ],
)
def test_each_violation_is_labelled(mutate, label):
    s = good()
    mutate(s)
    rep = verify(INST, s)
    assert label in labels(rep), rep.summary()
    with pytest.raises(VerificationError):
        rep.raise_if_failed()


def test_single_server_job_split_is_a_demand_violation():
    s = good()
    s._seg.pop(2)
    inst = Instance(Cluster.homogeneous(2, 2), [Job(2, work=3, gpus=2, single_server=True)], name="x")
    s2 = Schedule()
    s2.add(2, 0, 3, {0: 1, 1: 1})
    assert "demand" in labels(verify(inst, s2))


def test_wrong_claimed_objective_is_caught():
    rep = verify(INST, good(), objective="total_weighted_completion_time", claimed=6.5)
    assert labels(rep) == {"objective"}


def test_resources_capacity():
    from optsched.core import Server

    c = Cluster((Server(4, resources={"cpu": 8}),))
    inst = Instance(c, [Job(0, work=1, gpus=1, resources={"cpu": 6}), Job(1, work=1, gpus=1, resources={"cpu": 6})])
    s = Schedule()
    s.add(0, 0, 1, {0: 1})
    s.add(1, 0, 1, {0: 1})
    assert "resource_capacity" in labels(verify(inst, s))


@given(rigid_instances())
def test_heuristic_schedules_are_feasible(inst):
    for rule in ("wspt", "fifo", "spt", "random"):
        r = list_schedule(inst, rule=rule, seed=1)
        rep = verify_result(inst, r)
        assert rep.ok, rep.summary()


def test_the_verifier_labels_its_rules_v1_to_v7_and_never_with_the_simulators_r():
    text = Path(feasibility.__file__).read_text()
    cited = dict(re.findall(r'"""\(V(\d)\) (\w+)', text))
    assert sorted(cited) == [str(i) for i in range(1, 8)]
    labels = [label for label, _ in checks_for("rigid")]
    assert [cited[str(i)] for i in range(1, 8)] == [x for x in labels if x != "gpu_exclusive"]
    for f in Path(feasibility.__file__).parent.glob("*.py"):  # R1-R12 are the simulator's rules
        assert not re.search(r"\(R\d+\)", f.read_text()), f


# -- the column-by-column checks of large schedules report what the one-by-one checks report


@st.composite
def _instance_and_schedule(draw):
    """A rigid instance and a non-preemptive schedule that may break every rule: a job left out, a
    start before the arrival, a wrong GPU count or server, a single-server job split, a wrong
    length, too many GPUs at once."""
    inst = draw(rigid_instances(max_jobs=6))
    n_srv = inst.cluster.n_servers
    sched = Schedule()
    for j in inst.jobs:
        if draw(st.integers(0, 9)) == 0:
            continue  # not scheduled
        start = float(draw(st.integers(0, 6)))
        length = j.work if draw(st.integers(0, 5)) else float(draw(st.integers(1, 5)))
        servers = draw(st.lists(st.integers(0, n_srv), min_size=1, max_size=2, unique=True))
        split = [max(1, j.gpus // len(servers))] * len(servers)
        if draw(st.booleans()):
            split[0] += j.gpus - sum(split)  # the job's count, unless the split overshoots
        sched.add(j.id, start, start + length, dict(zip(servers, [max(1, g) for g in split], strict=True)))
    return inst, sched


def _one_by_one(inst, sched):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(feasibility, "_single_runs", lambda instance, schedule: None)
        return verify(inst, sched, objective=None)


@settings(max_examples=60, deadline=None)
@given(_instance_and_schedule())
def test_column_checks_report_the_violations_of_the_one_by_one_checks(case):
    inst, sched = case
    fast = verify(inst, sched)
    slow = _one_by_one(inst, sched)
    assert [(v.label, v.message) for v in fast.violations] == [(v.label, v.message) for v in slow.violations]


@settings(max_examples=60, deadline=None)
@given(_instance_and_schedule())
def test_the_gpu_profile_is_the_sum_over_segments_at_every_time(case):
    """``usage_profile``'s GPUs at each breakpoint = the GPUs of the segments running then, per
    server (summed here segment by segment; a server the cluster does not have is left out)."""
    inst, sched = case
    times, use = feasibility.usage_profile(inst, sched)
    n = inst.cluster.n_servers
    segs = [s for _, ss in sched.items() for s in ss if any(m < n for m in s.placement)]
    assert sorted({t for s in segs for t in (s.start, s.end)}) == times.tolist()
    for i, t in enumerate(times.tolist()):
        for m in range(inst.cluster.n_servers):
            assert use[i, m] == sum(s.placement.get(m, 0) for s in segs if s.start <= t < s.end)


@settings(max_examples=60, deadline=None)
@given(_instance_and_schedule())
def test_checks_sharing_their_columns_report_what_each_check_reports_alone(case):
    """verify computes the one-segment lists and columns once for all its checks
    (feasibility.shared_columns): the same violations as each check run on its own."""
    inst, sched = case
    alone = [(v.label, v.message) for _, check in checks_for(inst.kind) for v in check(inst, sched)]
    assert [(v.label, v.message) for v in verify(inst, sched).violations] == alone
