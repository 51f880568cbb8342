"""Shared checks: non_preemptive, gpu_exclusive (and resource_capacity, in test_resources.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job, Schedule
from optsched.core.schedule import Segment
from optsched.verify import check_gpu_exclusive, check_non_preemptive, gpu_exclusive_check, verify


def _inst(n_srv=1, g=4, jobs=2):
    return Instance(Cluster.homogeneous(n_srv, g), [Job(i, work=1, gpus=1) for i in range(jobs)])


def test_non_preemptive_flags_a_job_in_two_segments_only():
    inst = _inst()
    s = Schedule()
    s.add(0, 0, 1, {0: 1})
    s.add(1, 0, 0.5, {0: 1})
    s.add(1, 0.7, 1.2, {0: 1})
    assert [v.job for v in check_non_preemptive(inst, s)] == [1]


def test_gpu_exclusive_failing_cases():
    inst = _inst(g=2, jobs=3)
    s = Schedule({0: [Segment(0, 2, {0: 1}, gpu_ids={0: (1,)})], 1: [Segment(1, 3, {0: 1}, gpu_ids={0: (1,)})]})
    v = list(check_gpu_exclusive(inst, s))
    assert len(v) == 1 and "GPU 1 of server 0" in v[0].message and v[0].time == 1
    s = Schedule({0: [Segment(0, 2, {0: 1}, gpu_ids={0: (5,)})]})  # GPU 5 of a 2-GPU server
    assert "GPUs 0..1" in next(iter(check_gpu_exclusive(inst, s))).message
    s = Schedule({0: [Segment(0, 2, {0: 1})]})  # no ids: passes, unless ids are required
    assert not list(check_gpu_exclusive(inst, s))
    assert "does not name its GPUs" in next(iter(gpu_exclusive_check(require_ids=True)(inst, s))).message
    # back to back on one GPU is fine; the verifier runs the check for every cluster kind
    s = Schedule(
        {
            0: [Segment(0, 1, {0: 1}, gpu_ids={0: (0,)})],
            1: [Segment(1, 2, {0: 1}, gpu_ids={0: (0,)})],
            2: [Segment(0, 1, {0: 1}, gpu_ids={0: (1,)})],
        }
    )
    rep = verify(inst, s)
    assert not [x for x in rep.violations if x.label == "gpu_exclusive"], rep.summary()


@st.composite
def feasible_schedules(draw):
    """Jobs placed one after another on explicit GPU ids: feasible by construction."""
    n_srv, g = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    n = draw(st.integers(2, 8))
    free_at = {(m, k): 0.0 for m in range(n_srv) for k in range(g)}
    jobs, segs = [], {}
    for i in range(n):
        m = draw(st.integers(0, n_srv - 1))
        ids = tuple(sorted(draw(st.sets(st.integers(0, g - 1), min_size=1, max_size=g))))
        start = max(free_at[(m, k)] for k in ids) + draw(st.integers(0, 3))
        dur = float(draw(st.integers(1, 5)))
        for k in ids:
            free_at[(m, k)] = start + dur
        jobs.append(Job(i, work=dur, gpus=len(ids)))
        segs[i] = [Segment(start, start + dur, {m: len(ids)}, gpu_ids={m: ids})]
    return Instance(Cluster.homogeneous(n_srv, g), jobs), segs


@settings(max_examples=200, deadline=None)
@given(case=feasible_schedules(), data=st.data())
def test_random_feasible_schedule_passes_and_moving_a_segment_onto_a_busy_gpu_fails(case, data):
    inst, segs = case
    rep = verify(inst, Schedule(segs))
    assert rep.ok, rep.summary()
    # move job b onto a GPU job a holds, at the same time
    a = data.draw(st.sampled_from(sorted(segs)))
    b = data.draw(st.sampled_from([j for j in sorted(segs) if j != a]))
    sa, sb = segs[a][0], segs[b][0]
    ((m, ids_a),) = sa.gpu_ids.items()
    k = len(sb.gpu_ids[next(iter(sb.gpu_ids))])
    g = inst.cluster.gpus[m]
    others = [x for x in range(g) if x != ids_a[0]][: k - 1]
    if len(others) < k - 1:
        return  # b needs more GPUs than the server has besides the busy one
    moved = dict(segs)
    moved[b] = [Segment(sa.start, sa.start + sb.duration, {m: k}, gpu_ids={m: tuple(sorted([ids_a[0], *others]))})]
    bad = [v for v in verify(inst, Schedule(moved)).violations if v.label == "gpu_exclusive"]
    assert bad and any(set(v.job) == {a, b} for v in bad)
