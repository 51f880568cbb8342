"""PyJobShop as a third exact reference (issue 12 item 5): on random single-server instances its
proven optimum equals optsched's (HiGHS time-indexed and CP-SAT interval models); its schedule
passes optsched's verifier with the objective it reports (plus sum w r: it minimises flow time)."""

from __future__ import annotations

import pytest

from optsched.core.objectives import objective_value
from optsched.core.result import Status
from optsched.exceptions import InvalidInstanceError
from optsched.rigid import random_instance, solve_exact
from optsched.solvers import SolveOptions
from optsched.verify import verify

pytest.importorskip("pyjobshop")

from optsched.rigid.pyjobshop import flow_time_offset, from_pyjobshop, to_pyjobshop

OBJ = "total_weighted_completion_time"
OPT = SolveOptions(time_limit=30, threads=1)
#: (n jobs, servers, GPUs per server) cycled over the seeds: 24 instances
SHAPES = [(4, 1, 4), (6, 2, 2), (6, 2, 4), (8, 2, 4), (8, 3, 2), (10, 2, 8), (10, 4, 2), (12, 3, 4)]


def _pyjobshop_optimum(inst):
    model = to_pyjobshop(inst)
    res = model.solve(time_limit=30, display=False, num_workers=1)
    assert res.status.name == "OPTIMAL", res.status
    sched = from_pyjobshop(inst, model, res.best)
    return res.objective + flow_time_offset(inst), res.lower_bound + flow_time_offset(inst), sched


@pytest.mark.parametrize("seed", range(24))
def test_same_optimum_as_pyjobshop(seed):
    n, m, g = SHAPES[seed % len(SHAPES)]
    inst = random_instance(n, n_servers=m, gpus_per_server=g, single_server=1.0, seed=100 + seed)
    obj, lb, sched = _pyjobshop_optimum(inst)
    report = verify(inst, sched)
    assert report.ok, report.violations
    assert objective_value(inst, sched, OBJ) == pytest.approx(obj, rel=1e-9)
    assert lb == pytest.approx(obj, rel=1e-9)
    for backend in ("highs", "cpsat"):
        r = solve_exact(inst, backend=backend, options=OPT)
        assert r.status == Status.OPTIMAL
        assert r.objective == pytest.approx(obj, rel=1e-9), backend


def test_spanning_jobs_are_refused():
    inst = random_instance(5, n_servers=2, gpus_per_server=4, single_server=0.0, seed=1)
    with pytest.raises(InvalidInstanceError, match="single-server"):
        to_pyjobshop(inst)


def test_model_shape():
    inst = random_instance(6, n_servers=3, gpus_per_server=4, single_server=1.0, seed=4)
    model = to_pyjobshop(inst)
    assert len(model.resources) == 3 and len(model.tasks) == 6
    feasible = sum(sum(1 for G in inst.cluster.gpus if j.gpus <= G) for j in inst.jobs)
    assert len(model.modes) == feasible
