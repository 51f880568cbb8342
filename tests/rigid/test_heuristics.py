"""optsched.rigid.heuristics: list scheduling by each order rule gives a feasible schedule whose
objective the verifier recomputes, the registered ``rigid-<rule>`` algorithms run it, and the orders
are the documented ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core import get_algorithm
from optsched.core.result import Status
from optsched.exceptions import UnknownNameError
from optsched.rigid import ORDER_RULES, list_schedule, random_instance
from optsched.rigid.heuristics import rule_algorithm
from optsched.verify import verify_result
from tests.strategies import rigid_instances


@settings(max_examples=25, deadline=None)
@given(inst=rigid_instances())
def test_every_rule_gives_a_feasible_schedule_with_its_recomputed_objective(inst):
    for rule in ORDER_RULES:
        res = list_schedule(inst, rule=rule, seed=0)
        assert res.status == Status.HEURISTIC and res.algorithm == f"rigid-{rule}"
        assert verify_result(inst, res).ok, rule
        assert sorted(map(str, res.info["order"])) == sorted(str(j.id) for j in inst.jobs)


def test_the_orders_are_the_documented_ones():
    inst = random_instance(8, n_servers=2, gpus_per_server=4, seed=5)
    jobs = {j.id: j for j in inst.jobs}
    order = list_schedule(inst, rule="wspt").info["order"]
    ratios = [jobs[i].weight / (jobs[i].gpus * jobs[i].work) for i in order]
    assert ratios == sorted(ratios, reverse=True)  # Smith's ratio, largest first
    fifo, spt = (list_schedule(inst, rule=rule).info["order"] for rule in ("fifo", "spt"))
    assert [jobs[i].arrival for i in fifo] == sorted(j.arrival for j in inst.jobs)
    assert [jobs[i].work for i in spt] == sorted(j.work for j in inst.jobs)


def test_random_order_is_reproducible_by_seed():
    """The same seed gives the same order, and the seed matters: among 8! = 40320 orders, ten
    seeds giving one order would be a chance of 40320**-9; a Generator is taken as it is."""
    inst = random_instance(8, n_servers=2, gpus_per_server=4, seed=5)
    a, b = (list_schedule(inst, rule="random", seed=3).info["order"] for _ in range(2))
    assert a == b
    orders = {tuple(list_schedule(inst, rule="random", seed=s).info["order"]) for s in range(10)}
    assert len(orders) > 1
    assert sorted(map(str, a)) == sorted(str(j.id) for j in inst.jobs)  # a permutation of the jobs
    gen = list_schedule(inst, rule="random", seed=np.random.default_rng(3)).info["order"]
    assert gen == list_schedule(inst, rule="random", seed=np.random.default_rng(3)).info["order"]


def test_an_unknown_rule_is_refused_naming_the_rules():
    inst = random_instance(3, n_servers=1, gpus_per_server=2, seed=1)
    with pytest.raises(UnknownNameError, match="choose one of"):
        list_schedule(inst, rule="lpt")


@pytest.mark.parametrize("rule", ORDER_RULES)
def test_the_registered_algorithm_of_each_rule_runs_list_schedule(rule):
    inst = random_instance(6, n_servers=2, gpus_per_server=2, seed=2)
    spec = get_algorithm(f"rigid-{rule}")
    assert spec.kind == "rigid" and not spec.exact and spec.randomized == (rule == "random")
    expected = list_schedule(inst, rule=rule, seed=4)
    for run in (spec.func, rule_algorithm(rule)):
        got = run(inst, seed=4)
        assert got.objective == pytest.approx(expected.objective) and got.info["order"] == expected.info["order"]


@settings(max_examples=30, deadline=None)
@given(inst=rigid_instances(max_jobs=12, max_work=3, max_arrival=2))
def test_numpy_orders_are_the_python_orders(inst):
    """The NumPy sort of large instances gives the order of the Python sort (ties: arrival, then
    str(id)), here on small instances with many ties and ids of both kinds."""
    from optsched.core.job import Job
    from optsched.rigid.heuristics import _order_numpy, _python_order

    # mixed ids: "10" sorts before "9" as a string, and int 3 and "3" both exist
    jobs = [
        Job(x, work=j.work, gpus=j.gpus, arrival=j.arrival, weight=j.weight, single_server=j.single_server)
        for x, j in zip([9, "10", 3, "3", "a", "", "b\u00e9", 11, "0", 100, "z", 7], inst.jobs, strict=False)
    ]
    inst = inst.replace(jobs=tuple(jobs))
    for rule in ("wspt", "fifo", "spt"):
        assert _order_numpy(inst, rule) == _python_order(inst, rule, None), rule


@settings(max_examples=25, deadline=None)
@given(inst=rigid_instances(max_jobs=10, single=False), cut=st.integers(0, 10))
def test_jobs_appended_at_the_deadline_get_the_sweeps_placements(inst, cut):
    """A warm start cut after ``cut`` jobs appends the rest one after another; their placements,
    given without the decoding sweep, are the sweep's (the same schedule, job order included)."""
    import types

    import optsched.rigid.sgs as sgs

    calls = {"n": 0}

    def clock():  # before the deadline for the first ``cut`` looks at the clock, then after it
        calls["n"] += 1
        return 0.0 if calls["n"] <= cut else 10.0

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sgs, "DEADLINE_EVERY", 1)
        mp.setattr(sgs, "time", types.SimpleNamespace(monotonic=clock))
        res = list_schedule(inst, rule="wspt", deadline=5.0, on_deadline="append")
    assert res.info.get("appended", 0) == max(0, inst.n_jobs - cut)
    starts = {jid: res.schedule.start(jid) for jid in res.schedule.job_ids}
    assert res.schedule.to_dict() == sgs.decode_placements(inst, starts).to_dict()
    assert verify_result(inst, res).ok
