"""optsched.rigid.sgs: the serial schedule generation gives a feasible, active schedule for every
order, and the placement decoder fills start times that respect the total capacity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job
from optsched.exceptions import InfeasibleError
from optsched.rigid.sgs import decode_placements, serial_sgs
from optsched.verify import verify
from tests.strategies import rigid_instances


@settings(max_examples=40, deadline=None)
@given(rigid_instances(max_jobs=6), st.randoms(use_true_random=False))
def test_every_order_gives_a_feasible_schedule(inst, rnd):
    order = [j.id for j in inst.jobs]
    rnd.shuffle(order)
    assert verify(inst, serial_sgs(inst, order)).ok


@settings(max_examples=40, deadline=None)
@given(rigid_instances(max_jobs=6, single=False), st.randoms(use_true_random=False))
def test_each_job_starts_at_the_first_time_it_fits_beside_the_jobs_placed_before_it(inst, rnd):
    order = [j.id for j in inst.jobs]
    rnd.shuffle(order)
    sched = serial_sgs(inst, order)
    jobs = {j.id: j for j in inst.jobs}
    total = inst.cluster.total_gpus
    for k, jid in enumerate(order):
        j, s = jobs[jid], sched.start(jid)
        before = [(sched.start(i), sched.completion(i), jobs[i].gpus) for i in order[:k]]

        def fits(t, j=j, before=before):
            points = [t] + [a for a, _, _ in before if t < a < t + j.work]
            return all(sum(g for a, b, g in before if a <= x < b) + j.gpus <= total for x in points)

        assert fits(s)
        earlier = [j.arrival] + [b for _, b, _ in before if j.arrival <= b < s - 1e-9]
        assert not any(fits(t) for t in earlier if t < s - 1e-9), (jid, s)


def test_the_order_must_list_every_job_once():
    inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=1), Job(1, work=1)])
    with pytest.raises(InfeasibleError, match="every job of the instance exactly once"):
        serial_sgs(inst, [0, 0])


def test_decode_places_within_the_free_gpus_and_refuses_an_overload():
    inst = Instance(Cluster.homogeneous(2, 2), [Job(0, work=2, gpus=3), Job(1, work=2, gpus=1), Job(2, work=1, gpus=2)])
    sched = decode_placements(inst, {0: 0, 1: 0, 2: 2})
    assert verify(inst, sched).ok
    with pytest.raises(InfeasibleError, match="overload the cluster at t=0"):
        decode_placements(inst, {0: 0, 1: 0, 2: 0})
