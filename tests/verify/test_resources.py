"""Resource vectors in schedules (a CPU-only parameter server, explicit use per server) and the
resource_capacity check: a feasible schedule passes, one unit too many fails, at every instant."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job, Schedule, Segment, Server
from optsched.exceptions import InvalidInstanceError, InvalidScheduleError
from optsched.verify import verify


def two_resource_instance():
    # server 0: 4 GPUs, 16 CPUs; server 1: CPU-only (0 GPUs), 8 CPUs, for parameter servers
    cluster = Cluster((Server(4, name="gpu", resources={"cpu": 16}), Server(0, name="ps", resources={"cpu": 8})))
    jobs = [Job(0, work=10, gpus=2, resources={"cpu": 6}), Job(1, work=5, gpus=2, resources={"cpu": 6})]
    return Instance(cluster, jobs, name="ps-example")


def test_worker_on_a_gpu_server_and_a_cpu_only_parameter_server():
    inst = two_resource_instance()
    s = Schedule()
    s.add(0, 0, 10, {0: {"gpus": 2, "cpu": 2}, 1: {"gpus": 0, "cpu": 4}})
    s.add(1, 0, 5, {0: {"gpus": 2, "cpu": 2}, 1: {"cpu": 4}})
    rep = verify(inst, s)
    assert rep.ok, rep.summary()
    # the vector form round-trips through JSON
    assert Schedule.from_dict(s.to_dict()) == s
    assert s.segments(1)[0].placement == {0: 2, 1: 0} and s.segments(1)[0].uses(1, "cpu") == pytest.approx(4)
    # one more CPU on the parameter server at an instant where both run: a violation naming server, time, jobs
    bad = Schedule()
    bad.add(0, 0, 10, {0: {"gpus": 2, "cpu": 2}, 1: {"gpus": 0, "cpu": 4}})
    bad.add(1, 0, 5, {0: {"gpus": 2, "cpu": 2}, 1: {"cpu": 4.5}})
    rep = verify(inst, bad)
    assert not rep.ok and {v.label for v in rep.violations} == {"resource_capacity"}
    assert "Server 1 uses 8.5 of 'cpu'" in rep.summary()


def test_a_resource_no_server_declares():
    inst = two_resource_instance()
    s = Schedule()
    s.add(0, 0, 10, {0: {"gpus": 2, "ram": 1}})
    s.add(1, 10, 15, {0: 2})
    rep = verify(inst, s)
    assert "declares no 'ram'" in rep.summary()
    with pytest.raises(InvalidInstanceError, match="no server declares"):
        Instance(inst.cluster, [Job(0, work=1, gpus=1, resources={"ram": 1})])


@pytest.mark.parametrize(
    ("placement", "words"),
    [
        ({0: {"gpus": 0}}, "uses nothing"),
        ({0: {"gpus": 1, "cpu": -1}}, "cpu"),
        ({0: {"gpus": 1, "cpu": float("nan")}}, "cpu"),
        ({0: {"gpus": 1, "cpu": float("inf")}}, "cpu"),
        ({0: {"gpus": -1}}, "gpus"),
    ],
)
def test_bad_resource_vectors_are_refused(placement, words):
    with pytest.raises(InvalidScheduleError, match=words):
        Segment(0, 1, placement)


def test_bad_gpu_ids_are_refused():
    with pytest.raises(InvalidScheduleError, match="distinct"):
        Segment(0, 1, {0: 2}, gpu_ids={0: (1, 1)})
    with pytest.raises(InvalidScheduleError, match="distinct"):
        Segment(0, 1, {0: 2}, gpu_ids={0: (1,)})
    with pytest.raises(InvalidScheduleError, match=">= 0"):
        Segment(0, 1, {0: 2}, gpu_ids={0: (-1, 0)})


@given(
    st.lists(st.tuples(st.floats(0, 50), st.floats(0.5, 20), st.floats(0, 8)), min_size=1, max_size=6),
    st.integers(0, 5),
)
def test_random_feasible_schedules_pass_and_one_excess_fails(jobs, victim):
    """Jobs run one after another on the GPU server with a parameter server beside it using <= 8
    CPUs: feasible. Then one job's PS use is raised above what the server has: infeasible."""
    cluster = Cluster((Server(2, resources={"cpu": 4}), Server(0, resources={"cpu": 8})))
    inst = Instance(cluster, [Job(k, work=d, gpus=1) for k, (_, d, _) in enumerate(jobs)])
    s, t = Schedule(), 0.0
    for k, (gap, d, cpu) in enumerate(jobs):
        t += gap
        s.add(k, t, t + d, {0: {"gpus": 1, "cpu": 1}, 1: {"gpus": 0, "cpu": cpu}})
        t += d
    assert verify(inst, s).ok
    k = victim % len(jobs)
    bad = Schedule()
    for j, segs in s.items():
        seg = segs[0]
        cpu = 8.5 if j == k else seg.uses(1, "cpu")
        bad.add(j, seg.start, seg.end, {0: {"gpus": 1, "cpu": 1}, 1: {"gpus": 0, "cpu": cpu}})
    rep = verify(inst, bad)
    assert [v.label for v in rep.violations] == ["resource_capacity"]
