"""optsched.rigid.sgs: the serial schedule generation against a deliberately simple reference
(every candidate time, the release and every end time after it, tried in order, the peak usage of
each window recomputed from the jobs placed so far: the O(n^3) method written from the
definition); every order gives a feasible, active schedule; its deadline; the placement decoder
fills start times that respect the total capacity."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job
from optsched.core.placement import place
from optsched.core.schedule import Schedule
from optsched.exceptions import InfeasibleError, TimeLimitReached
from optsched.rigid import decode_placements, random_instance, serial_sgs
from optsched.verify import verify
from tests.strategies import rigid_instances


def _peak(placed: list[tuple[float, float, int]], a: float, b: float) -> int:
    pts = [a] + [s for s, _, _ in placed if a < s < b]
    return max(sum(g for s, e, g in placed if s <= t < e) for t in pts)


def reference_sgs(instance, order, *, server_of=None, rule="consolidate", rng=None) -> Schedule:
    jobs = {j.id: j for j in instance.jobs}
    G = instance.cluster.gpus
    if not any(j.single_server for j in instance.jobs) and server_of is None:
        placed: list[tuple[float, float, int]] = []
        starts = {}
        for jid in order:
            job = jobs[jid]
            for t in sorted({job.arrival} | {e for _, e, _ in placed if e > job.arrival}):
                if _peak(placed, t, t + job.work) + job.gpus <= int(G.sum()):
                    starts[jid] = t
                    placed.append((t, t + job.work, job.gpus))
                    break
        return decode_placements(instance, starts, rule)
    per: list[list[tuple[float, float, int]]] = [[] for _ in range(len(G))]
    sched = Schedule()
    for jid in order:
        job = jobs[jid]
        for t in sorted({job.arrival} | {e for lst in per for _, e, _ in lst if e > job.arrival}):
            free = np.array([G[m] - _peak(per[m], t, t + job.work) for m in range(len(G))])
            if server_of is not None and job.single_server:
                m = server_of[jid]
                pl = {int(m): job.gpus} if free[m] >= job.gpus else None
            else:
                pl = place(free, job.gpus, rule=rule, single_server=job.single_server, rng=rng)
            if pl is not None:
                for m, g in pl.items():
                    per[m].append((t, t + job.work, g))
                sched.add(jid, t, t + job.work, pl)
                break
    return sched


@settings(max_examples=150, deadline=None)
@given(
    rigid_instances(max_jobs=12, max_servers=3, max_gpus=4, max_work=5, max_arrival=6),
    st.randoms(use_true_random=False),
    st.sampled_from(["consolidate", "first_fit", "least_loaded", "random"]),
    st.booleans(),
)
def test_serial_sgs_matches_the_reference(inst, rnd, rule, fixed_servers):
    order = [j.id for j in inst.jobs]
    rnd.shuffle(order)
    server_of = None
    if fixed_servers:  # a server per single-server job, big enough or not (a job that never fits is left out)
        server_of = {j.id: rnd.randrange(inst.cluster.n_servers) for j in inst.jobs}

    def run(f):
        try:
            return f(inst, order, server_of=server_of, rule=rule, rng=np.random.default_rng(7)).to_dict()
        except Exception as e:  # the same refusal (e.g. the random rule without a generator)
            return type(e).__name__

    assert run(serial_sgs) == run(reference_sgs)


@pytest.mark.parametrize("single", [0.0, 0.5, 1.0])
def test_serial_sgs_matches_the_reference_at_60_jobs(single):
    inst = random_instance(60, n_servers=3, gpus_per_server=8, single_server=single, max_work=9, seed=11)
    order = [j.id for j in sorted(inst.jobs, key=lambda j: -j.weight / (j.gpus * j.work))]
    assert serial_sgs(inst, order).to_dict() == reference_sgs(inst, order).to_dict()


def test_serial_sgs_stops_at_its_deadline():
    inst = random_instance(40, seed=1)
    with pytest.raises(TimeLimitReached, match="list-scheduling"):
        serial_sgs(inst, [j.id for j in inst.jobs], deadline=time.monotonic() - 1)


@pytest.mark.parametrize("single", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("placed", [0, 32, 64])
def test_serial_sgs_appends_the_rest_at_its_deadline(single, placed, monkeypatch):
    """The jobs not placed by the deadline run one after another after every placed one: the
    first ``placed`` jobs start as in the full serial SGS (with their servers too, unless every
    job spans servers: placements are then decoded from all the starts), the schedule is feasible."""
    import optsched.rigid.sgs as sgs

    inst = random_instance(100, n_servers=3, gpus_per_server=4, single_server=single, seed=2)
    order = [j.id for j in inst.jobs]
    full = serial_sgs(inst, order)
    clock = iter([0.0] * (placed // sgs.DEADLINE_EVERY) + [1e9] * 10)  # the deadline passes before job `placed`
    monkeypatch.setattr(sgs.time, "monotonic", lambda: next(clock))
    info: dict = {}
    sched = serial_sgs(inst, order, deadline=1.0, on_deadline="append", info=info)
    assert info["appended"] == 100 - placed and len(sched) == 100
    assert verify(inst, sched).ok
    for jid in order[:placed]:
        assert sched.start(jid) == full.start(jid)
        assert single == 0.0 or sched.segments(jid) == full.segments(jid)
    rest = sorted((sched.start(j), sched.completion(j)) for j in order[placed:])
    last = max((sched.completion(j) for j in order[:placed]), default=0.0)
    assert rest[0][0] >= last - 1e-9 and all(a[1] <= b[0] + 1e-9 for a, b in itertools.pairwise(rest))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=8), st.integers(1, 40), st.booleans())
def test_the_plain_python_consolidation_is_place(free, gpus, single):
    from optsched.rigid.sgs import consolidate

    expected = place(np.array(free), gpus, rule="consolidate", single_server=single)
    assert consolidate(list(free), gpus, single) == expected


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
