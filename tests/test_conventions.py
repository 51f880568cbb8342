"""Issue 26, item 1: one vocabulary over the six problem kinds, as written in docs/conventions.md.

Every rule is checked on every kind it applies to (rigid, asrpt, elastic, rarddls, sojourn, lazer);
the kinds are listed once, below, and the doc must name each of them.
"""

from __future__ import annotations

import copy
import importlib
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import optsched
from optsched.core.io import instance_from_dict, load_instance
from optsched.core.library import instance_path
from optsched.core.registry import default_exact_model, kinds
from optsched.exceptions import InfeasibleError, InvalidOptionError, InvalidScheduleError
from optsched.solvers import SolveOptions
from optsched.verify import verify_result

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
KINDS = ("rigid", "asrpt", "elastic", "rarddls", "sojourn", "lazer")
WITH_EXACT = ("rigid", "asrpt", "elastic", "rarddls", "sojourn")
TOYS = {
    "rigid": "toy:rigid-2x2-five",
    "asrpt": "toy:asrpt-2x2-three",
    "elastic": "toy:elastic-intro",
    "rarddls": "toy:rarddls-2x2-three",
    "sojourn": "toy:sojourn-four-jobs",
}
OPTS = SolveOptions(time_limit=20, threads=1)


def _toy(kind):
    inst = load_instance(instance_path(TOYS[kind]))
    if kind == "asrpt":  # the toy's known optimum was derived with start slots from 0 (asrpt.toy_instance)
        inst = inst.with_first_slot(0)
    return inst


def _relabelled(kind):
    """The toy with string job ids in reverse order of position: ids and positions never coincide."""
    d = copy.deepcopy(_toy(kind).to_dict())
    n = len(d["jobs"])
    for k, j in enumerate(d["jobs"]):
        j["id"] = f"job-{n - k}"
    d.pop("known_optima", None)
    return instance_from_dict(d)


def _scheduled_ids(schedule) -> set:
    order = getattr(schedule, "order", None)
    return set(order) if order is not None else set(schedule.job_ids)


# -- the doc names every kind and every rule ----------------------------------------------------------
def test_the_doc_covers_every_kind_and_rule():
    for kind in KINDS:
        assert f"`{kind}`" in DOC, kind
        importlib.import_module(f"optsched.{kind}")
    for anchor in ("time", "ids", "resources", "entry-points", "infeasibility", "evaluators", "guards", "deprecated"):
        assert "{#" + anchor + "}" in DOC, anchor
    optsched.load_plugins()
    assert set(WITH_EXACT) <= set(kinds())  # lazer runs on the rigid kind: it has no kind of its own


# -- time ---------------------------------------------------------------------------------------------
def _doc_unit(kind: str) -> str:
    m = re.search(rf"^\| `{kind}` \| (s|slot) \|", DOC, flags=re.M)
    assert m, f"docs/conventions.md#time has no row for {kind}"
    return m.group(1)


@pytest.mark.parametrize("kind", KINDS)
def test_time_unit_is_declared_and_documented(kind):
    if kind == "lazer":  # the simulator's jobs: core instances, seconds
        from optsched.core import Cluster, Instance, Job

        inst = Instance(Cluster.homogeneous(1, 1), [Job(0, work=1)])
    else:
        inst = _toy(kind)
    assert inst.time_unit == _doc_unit(kind)
    if inst.time_unit == "slot":
        assert inst.slot > 0 and inst.seconds(3) == pytest.approx(3 * inst.slot)


@pytest.mark.parametrize("kind", WITH_EXACT)
def test_solve_exact_is_at_the_top_and_its_times_are_on_the_0_based_grid(kind):
    mod = importlib.import_module(f"optsched.{kind}")
    assert "solve_exact" in mod.__all__
    assert default_exact_model(kind).func is mod.solve_exact
    inst = _toy(kind)
    r = mod.solve_exact(inst, options=OPTS)
    assert r.status.value == "optimal" and verify_result(inst, r).ok
    if kind in ("asrpt", "elastic", "rarddls"):  # slotted: starts are whole slots, the first one is slot 0
        if kind == "elastic":
            starts = [a.start for _, a in r.schedule.items()]
        else:
            starts = [segs[0].start / (inst.slot if inst.time_unit == "s" else 1.0) for _, segs in r.schedule.items()]
        assert all(abs(s - round(s)) < 1e-9 for s in starts)
        assert min(starts) == pytest.approx(0.0)


def test_lazer_has_no_exact_model_and_the_doc_says_why():
    import optsched.lazer as lazer

    assert not hasattr(lazer, "solve_exact")
    assert "`lazer` has no offline problem" in DOC


def test_elastic_paper_indexing_is_only_in_the_formulation():
    """0-based slots at the API (the Sec. 1 toy: 25); the paper's t in [T] = {1..T} gives 27, written in
    formulations/elastic.md and labelled there."""
    inst = _toy("elastic")
    r = optsched.elastic.solve_exact(inst, options=OPTS)
    assert r.objective == pytest.approx(25.0)
    assert r.objective + sum(j.weight for j in inst.jobs) == pytest.approx(27.0)
    text = (ROOT / "formulations" / "elastic.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| **paper** indexing"))
    assert "25" in row and "27" in row and "[T] = {1, ..., T}" in row


def test_rarddls_has_a_slot_length_that_round_trips(tmp_path):
    inst = _toy("rarddls").replace(slot=60.0)
    assert inst.seconds(optsched.rarddls.sjf_bco(inst).objective) == pytest.approx(540.0)
    p = tmp_path / "r.json"
    inst.save(p)
    assert load_instance(p).slot == 60.0  # through the JSON schema
    assert "slot" not in _toy("rarddls").to_dict()  # the default (1 s) is not written


# -- jobs by id ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", WITH_EXACT)
def test_schedules_name_jobs_by_id(kind):
    inst = _relabelled(kind)
    r = importlib.import_module(f"optsched.{kind}").solve_exact(inst, options=OPTS)
    assert r.status.value == "optimal" and verify_result(inst, r).ok
    assert _scheduled_ids(r.schedule) == set(inst.job_ids)


def test_elastic_pricing_and_gamma_take_job_ids():
    from optsched.elastic.gamma import columns, configs, useful_counts
    from optsched.elastic.prices import Prices
    from optsched.elastic.pricing import a_mincost2, least_use, min_cost

    inst = _relabelled("elastic")  # ids job-2 (position 0), job-1 (position 1)
    pr = Prices.zero(inst, 20)
    assert min_cost(inst, "job-1", pr).cost == pytest.approx(0.0)
    assert least_use(inst, "job-2") == pytest.approx(40.0)
    assert len(configs(inst, "job-1")) == len(configs(inst, "job-2"))
    assert columns(inst, "job-1") and useful_counts(inst, "job-1", 1, 0, 1) == ((1, 10),)
    assert a_mincost2(inst, "job-2", pr) is not None
    with pytest.raises(InvalidOptionError, match=r"no job with id 1 .* job ids are \['job-2', 'job-1'\]"):
        min_cost(inst, 1, pr)  # a position is no id: refused, naming the ids
    with pytest.raises(InvalidOptionError, match="no job with id 'job-9'"):
        min_cost(inst, "job-9", pr)
    # ids that are integers in another order than the positions: the id wins
    d = _toy("elastic").to_dict()
    d["jobs"][0]["id"], d["jobs"][1]["id"] = 1, 0
    d["jobs"][0]["arrival"] = 3  # id 1 (position 0) arrives at 3
    swapped = instance_from_dict(d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert min(c.start for c in columns(swapped, 1)) == 3
        assert min(c.start for c in columns(swapped, 0)) == 0


# -- resources ----------------------------------------------------------------------------------------
def test_elastic_resources_keep_the_input_order_and_arrays_are_priced_as_given():
    """Issue 26: the R axis was sorted by name, so arrays built in the input order mispriced silently."""
    from optsched.elastic.prices import Prices
    from optsched.elastic.pricing import min_cost

    d = _toy("elastic").to_dict()  # capacity {"gpu": 3, "cpu": 8}
    a = instance_from_dict(d)
    d2 = copy.deepcopy(d)
    d2["servers"][0]["capacity"] = {"cpu": 8, "gpu": 3}
    for t in d2["worker_types"] + d2["ps_types"]:
        t["resources"] = {"cpu": t["resources"]["cpu"], "gpu": t["resources"]["gpu"]}
    b = instance_from_dict(d2)
    assert a.resources == ("gpu", "cpu") and b.resources == ("cpu", "gpu")
    assert a.C == ((3.0, 8.0),) and b.C == ((8.0, 3.0),)
    costs = []
    for inst in (a, b):
        unit = {"gpu": 1.0, "cpu": 0.0}  # a GPU-slot costs 1, a CPU-slot nothing
        pr = Prices.zero(inst, 20)
        pr.delta[:] = np.array([unit[r] for r in inst.resources])[None, None, :]
        costs.append(min_cost(inst, 0, pr).cost)
    assert costs[0] == pytest.approx(costs[1]) == pytest.approx(15.0)  # 1 GPU for 15 slots


# -- infeasibility ------------------------------------------------------------------------------------
def test_elastic_infeasibility_is_reported_by_the_run_alone_or_jointly():
    from optsched.elastic.prices import Prices
    from optsched.elastic.pricing import min_cost

    d = _toy("elastic").to_dict()
    d["horizon"] = 9  # each job needs 10 slots at least
    alone = instance_from_dict(d)  # loading succeeds (issue 26: it raised InfeasibleError)
    r = optsched.elastic.solve_exact(alone, options=OPTS)
    assert r.status.value == "infeasible" and r.schedule is None
    assert optsched.elastic.solve_maxweight(alone, tau=12, options=OPTS).objective == pytest.approx(1.0)
    assert min_cost(alone, 0, Prices.zero(alone, 12)) is not None  # the pricing ignores T
    with pytest.raises(InfeasibleError):
        optsched.elastic.greedy(alone)
    d["horizon"] = 14  # each fits alone (10), not both (15 on one GPU, or 10 + 10 one after the other)
    jointly = instance_from_dict(d)
    assert jointly.late_jobs() == {}
    r = optsched.elastic.solve_exact(jointly, options=OPTS)
    assert r.status.value == "infeasible" and r.schedule is None  # the same channel


def test_rarddls_infeasibility_same_channels():
    inst = _toy("rarddls")
    r = optsched.rarddls.solve_exact(inst, horizon=5, options=OPTS)
    assert r.status.value == "infeasible" and r.schedule is None
    with pytest.raises(InfeasibleError, match="Raise the horizon"):
        optsched.rarddls.sjf_bco(inst, horizon=5)


# -- public evaluators ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("starts", "placements", "label"),
    [
        ([0, 0, 5], [{0: 2}, {0: 2}, {1: 1}], "capacity"),  # both 2-GPU jobs on one 2-GPU server
        ([0, 0, 5], [{0: 1}, {1: 2}, {0: 1}], "demand"),  # 1 GPU for a 2-GPU job
    ],
)
def test_rarddls_replay_validates_through_the_verifier(starts, placements, label):
    inst = _toy("rarddls")
    with pytest.raises(InvalidScheduleError, match=rf"\[{label}\]"):
        optsched.rarddls.replay(inst, starts, placements)
    assert optsched.rarddls.replay(inst, starts, placements, validate=False).completion  # what-if, as asked


def test_rarddls_replay_refuses_bad_starts_and_servers():
    inst = _toy("rarddls")
    for starts, pls in (([-1, 0, 5], [{0: 2}, {1: 2}, {0: 1}]), ([0, 0, 5], [{0: 2}, {7: 2}, {0: 1}])):
        with pytest.raises(InvalidScheduleError):
            optsched.rarddls.replay(inst, starts, pls, validate=False)
    st, pl = optsched.rarddls.decisions(inst, optsched.rarddls.sjf_bco(inst).schedule)
    assert optsched.rarddls.replay(inst, st, pl).makespan == 9


def test_other_public_evaluators_refuse_bad_input():
    from optsched.asrpt import alpha
    from optsched.exceptions import InvalidInstanceError

    soj = _toy("sojourn")
    ids = soj.job_ids
    with pytest.raises(InvalidScheduleError, match="exactly once"):
        optsched.sojourn.expected_sojourn(soj, [ids[0], *ids[:-1]])
    a = _toy("asrpt")
    with pytest.raises(InvalidInstanceError, match="exactly k"):
        alpha(a.jobs[0], np.array([[9, 0]]), instance=a)


# -- guards in the formulations ------------------------------------------------------------------------
def test_numerical_guards_are_written_in_the_formulations():
    from optsched.elastic.constants import CEIL_GUARD
    from optsched.rarddls.model import EPS

    el = (ROOT / "formulations" / "elastic.md").read_text(encoding="utf-8")
    rd = (ROOT / "formulations" / "rarddls.md").read_text(encoding="utf-8")
    assert CEIL_GUARD == 1e-9 and "1e-9 max(1, |x|)" in el
    assert EPS == 1e-9 and "floor(1/tau + 1e-9)" in rd
