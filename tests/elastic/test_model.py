"""Kind ``elastic``: units of (1) / (14), validation (the issue's "Bad input"), JSON, the verifier
checks by label, and the Sec. 1 toy."""

from __future__ import annotations

import copy
import math

import pytest

from optsched.core.io import instance_from_dict
from optsched.elastic import toy_instance
from optsched.elastic.checks import evaluate_objective, violations
from optsched.elastic.model import ElasticInstance, toy_instance_dict
from optsched.elastic.schedule import Assignment, ElasticSchedule
from optsched.exceptions import (
    InfeasibleError,
    InvalidInstanceError,
    InvalidOptionError,
    InvalidScheduleError,
    UnplaceableJobError,
)
from optsched.verify import verify


def _doc(**over):
    d = toy_instance_dict()
    d.update(over)
    return d


def _a(start, d, m, workers, ps=None, p=0, q=1):
    return Assignment(start=start, d=d, m=m, p=p, q=q, workers=workers, ps=ps if ps is not None else {0: 1})


def test_intro_toy():
    """Sec. 1: one job on 2 GPUs (10 slots) and one on 1 GPU (15 slots) at once: mean 12.5, vs 15
    for two 2-GPU runs in sequence; the exact model proves 25 optimal."""
    from optsched.elastic.exact import solve_exact
    from optsched.solvers import SolveOptions

    inst = toy_instance()
    assert inst.known_optima["total_weighted_completion_time"]["value"] == 25
    both = ElasticSchedule({0: _a(0, 10, 1, {0: 1}), 1: _a(0, 15, 0, {0: 1})})
    seq = ElasticSchedule({0: _a(0, 10, 1, {0: 1}), 1: _a(10, 10, 1, {0: 1})})
    for s in (both, seq):
        assert violations(inst, s) == []
    assert evaluate_objective(inst, both, "mean_completion_time") == pytest.approx(12.5)
    assert evaluate_objective(inst, seq, "mean_completion_time") == pytest.approx(15.0)
    clash = ElasticSchedule({0: _a(0, 10, 1, {0: 1}), 1: _a(0, 10, 1, {0: 1})})
    assert {v.label for v in violations(inst, clash)} == {"2h"}
    r = solve_exact(inst, options=SolveOptions(time_limit=20, threads=1), initial=None)
    assert r.optimal and r.objective == pytest.approx(25.0)
    assert evaluate_objective(inst, r.schedule, "mean_completion_time") == pytest.approx(12.5)
    assert verify(inst, r.schedule, objective="total_weighted_completion_time").ok


def test_units_of_rho_ps():
    """(1): v = 10 ms, U = 5 ms, pi = 100 MB, b = 10 Gbit/s: 2 pi / b = 1.6 Gbit / 10 Gbit/s = 160 ms."""
    d = _doc(slot=3600.0, horizon=10**6)
    d["worker_types"][0]["bandwidth"] = 10.0
    d["jobs"][0].update(v=[10.0, 10.0], update=[5.0], grad_mb=100.0)
    inst = ElasticInstance.from_dict(d)
    assert inst.iteration_ms(0, 0, 0, 1, 1) == pytest.approx(15.0)
    assert inst.iteration_ms(0, 0, 0, 0, 1) == pytest.approx(175.0)
    assert inst.rho(0, 0, 0, 0) == pytest.approx(3600 / 0.175)
    # d = ceil(E D K / (N rho)) = ceil(100000 * 0.175 s / 3600 s) = ceil(4.86) = 5
    assert inst.duration(0, 0, 0, 0, 1) == 5


def test_units_of_rho_rar():
    """(14): N = 4 workers, U = 20 ms, pi = 50 MB, b = 5 Gbit/s: (N-1)/N = 3/4; 2 pi / b = 160 ms."""
    d = _doc(architecture="rar", slot=60.0, horizon=10**6)
    del d["ps_types"]
    for j in d["jobs"]:
        j.update(update=20.0, grad_mb=50.0, v=[30.0, 30.0], chunks=4)
    d["worker_types"][0]["bandwidth"] = 5.0
    inst = ElasticInstance.from_dict(d)
    assert inst.iteration_ms(0, 0, None, 1, 4) == pytest.approx(30 + 15)
    assert inst.iteration_ms(0, 0, None, 0, 4) == pytest.approx(30 + 15 + 120)
    assert inst.iteration_ms(0, 0, None, 0, 1) == pytest.approx(30)  # one worker: nothing to reduce
    # E D K = 400000 mini-batches x 165 ms / (60 s x 4 workers) = 275 slots
    assert inst.duration(0, 0, None, 0, 4) == 275
    assert inst.duration(0, 0, None, 0, 3) == 334  # 400000 x (30 + 40/3 + 320/3) ms / (60 s x 3) = 333.3


def test_guarded_ceil_keeps_whole_slots():
    inst = toy_instance()
    assert inst.duration(0, 0, 0, 1, 1) == 15  # 100000 x 15 ms / 100 s is 15.000000000000002 in floats
    assert inst.duration(0, 1, 0, 1, 1) == 10


def test_json_roundtrip_and_schema():
    inst = toy_instance()
    again = instance_from_dict(inst.to_dict())
    assert again.to_dict() == inst.to_dict()
    s = ElasticSchedule({0: _a(0, 10, 1, {0: 1}), 1: _a(0, 15, 0, {0: 1})})
    assert ElasticSchedule.from_dict(s.to_dict()) == s
    with pytest.raises(InvalidScheduleError):
        ElasticSchedule.from_dict({"jobs": [{"id": 0, "start": 0}]})
    with pytest.raises(InvalidScheduleError, match="twice"):
        ElasticSchedule.from_dict({"jobs": [s.to_dict()["jobs"][0]] * 2})


def _bad(mut, exc=InvalidInstanceError, match=None, schema=True):
    d = copy.deepcopy(toy_instance_dict())
    mut(d)
    with pytest.raises(exc, match=match):
        ElasticInstance.from_dict(d)
    if schema and exc is InvalidInstanceError:
        with pytest.raises(InvalidInstanceError):
            instance_from_dict(d)


def test_bad_input_messages_name_field_value_and_fix():
    # a type with no resources
    _bad(lambda d: d["ps_types"][0].update(resources={"gpu": 0, "cpu": 0}), match="uses no resources")
    # b_m or B_p <= 0
    _bad(lambda d: d["worker_types"][0].update(bandwidth=0.0), match="'bandwidth' field of worker type 0")
    _bad(lambda d: d["ps_types"][0].update(bandwidth=-1.0), match="'bandwidth' field of PS type 0")
    # D, E, K, v <= 0
    for f in ("chunks", "epochs", "minibatches"):
        _bad(lambda d, f=f: d["jobs"][1].update({f: 0}), match=rf"'{f}' field of job 1 must be an integer in \[1, ")
    _bad(lambda d: d["jobs"][0].update(v=[15.0, 0.0]), match=r"'v\[1\]' field of job 0")
    # w <= 0, F < 1
    _bad(lambda d: d["jobs"][0].update(weight=0), match="'weight' field of job 0")
    _bad(lambda d: d.update(F=0.5), match="'F' field")
    # resource names that differ between servers and types
    _bad(lambda d: d["worker_types"][1].update(resources={"gpu": 2, "mem": 1}), match="same resource names")
    _bad(lambda d: d["servers"].append({"capacity": {"gpu": 1}}), match="every server and type")
    # unknown option values
    _bad(lambda d: d.update(architecture="allreduce"), match="'architecture' field must be one of")
    _bad(lambda d: d["jobs"][0].update(update=1.0), match="U_j\\^p")


def test_infeasible_jobs_are_named():
    def no_fit(d):
        d["worker_types"] = [{"resources": {"gpu": 4, "cpu": 1}, "bandwidth": 1.0}]
        for j in d["jobs"]:
            j["v"] = [10.0]

    with pytest.raises(UnplaceableJobError, match="job 0 fits in no configuration"):
        d = copy.deepcopy(toy_instance_dict())
        no_fit(d)
        ElasticInstance.from_dict(d)
    d = copy.deepcopy(toy_instance_dict())
    d["jobs"][1]["arrival"] = 395  # needs 10 slots, T = 400
    inst = ElasticInstance.from_dict(d)  # issue 26: loading never reports infeasibility; the runs of (2) do
    assert inst.late_jobs() == {1: 405}
    from optsched.elastic import greedy, solve_exact
    from optsched.solvers import SolveOptions

    r = solve_exact(inst, options=SolveOptions(time_limit=10, threads=1))
    assert r.status.value == "infeasible" and r.schedule is None and r.info["late_jobs"] == {1: 405}
    assert "job 1" in r.info["message"]
    with pytest.raises(InfeasibleError, match="cannot complete by T = 400"):
        greedy(inst)


def test_unknown_options_of_the_algorithms():
    from optsched.elastic.exact import greedy, solve_exact

    with pytest.raises(InvalidOptionError):
        greedy(toy_instance(), order="random")
    with pytest.raises(InvalidOptionError):
        solve_exact(toy_instance(), backend="no-such-solver")


def _labels(inst, sched, **kw):
    return {v.label for v in violations(inst, sched, **kw)}


def test_each_check_fires_on_its_violation():
    inst = toy_instance()
    ok = {0: _a(0, 10, 1, {0: 1}), 1: _a(0, 15, 0, {0: 1})}

    def with_(**kw):
        s = dict(ok)
        s[0] = Assignment(**{**ok[0].__dict__, **kw})
        return ElasticSchedule(s)

    assert _labels(inst, ElasticSchedule({0: ok[0]})) == {"2a"}
    assert _labels(inst, with_(q=0)) == {"2d", "2f"}  # q = 0 also means the slower rho of (1)
    assert _labels(inst, with_(ps={})) == {"2e"}
    assert _labels(inst, with_(d=9)) == {"2f"}
    assert "2g" in _labels(inst, with_(workers={0: 2}, m=0))
    assert _labels(inst, with_(start=1.5)) == {"2n"}
    assert _labels(inst, with_(workers={0: 0.5})) == {"2k"}
    assert _labels(inst, with_(ps={0: -1})) == {"2l"}
    assert _labels(inst, with_(d=0)) == {"2m"}
    assert _labels(inst, with_(q=2)) == {"2o"}
    assert _labels(inst, with_(start=395)) == {"horizon"}
    assert _labels(inst, with_(m=5)) == {"2b"}
    assert _labels(inst, with_(p=3)) == {"2c"}
    late = copy.deepcopy(toy_instance_dict())
    late["jobs"][0]["arrival"] = 2
    assert _labels(ElasticInstance.from_dict(late), ElasticSchedule(ok)) == {"2j"}
    # (2i) and a q = 0 schedule: two servers, workers on server 1, one PS on server 0
    d = copy.deepcopy(toy_instance_dict())
    d["servers"].append({"capacity": {"gpu": 3, "cpu": 8}})
    d["ps_types"][0]["bandwidth"] = 1.0
    d["worker_types"][0]["bandwidth"] = 1.0
    for j in d["jobs"]:
        j["chunks"] = 2
    two = ElasticInstance.from_dict(d)
    dur = two.duration(0, 0, 0, 0, 2)
    other = Assignment(0, two.duration(1, 0, 0, 1, 1), 0, 0, 1, {0: 1}, {0: 1})
    good = ElasticSchedule({0: Assignment(0, dur, 0, 0, 0, {1: 2}, {0: 2}), 1: other})
    assert _labels(two, good) == set()
    starved = ElasticSchedule({0: Assignment(0, dur, 0, 0, 0, {1: 2}, {0: 1}), 1: other})
    assert _labels(two, starved) == {"2i"}
    # (2f) is recomputed with q: the same placement claimed with q = 1's shorter duration fails
    short = ElasticSchedule({0: Assignment(0, two.duration(0, 0, 0, 1, 2), 0, 0, 0, {1: 2}, {0: 2}), 1: other})
    assert "2f" in _labels(two, short)


def test_rar_checks():
    d = copy.deepcopy(toy_instance_dict())
    d["architecture"] = "rar"
    del d["ps_types"]
    d["servers"].append({"capacity": {"gpu": 1, "cpu": 8}})
    for j in d["jobs"]:
        j.update(update=0.0, chunks=2)
    inst = ElasticInstance.from_dict(d)
    one = Assignment(0, inst.duration(0, 0, None, 1, 1), 0, None, 1, {0: 1}, {})
    split = Assignment(0, inst.duration(1, 0, None, 0, 2), 0, None, 0, {0: 1, 1: 1}, {})
    assert _labels(inst, ElasticSchedule({0: one, 1: split})) == set()
    assert _labels(inst, ElasticSchedule({0: one, 1: Assignment(**{**split.__dict__, "q": 1})})) == {"15a"}
    big = Assignment(0, inst.duration(1, 1, None, 1, 1), 1, None, 1, {0: 1}, {})
    assert _labels(inst, ElasticSchedule({0: Assignment(**{**big.__dict__}), 1: big})) == {"15b"}  # 2 + 2 GPUs > 3
    assert "2c" in _labels(inst, ElasticSchedule({0: Assignment(0, one.d, 0, None, 1, {0: 1}, {0: 1}), 1: split}))


def test_verifier_runs_every_label():
    inst = toy_instance()
    rep = verify(
        inst,
        ElasticSchedule({0: _a(0, 10, 1, {0: 1}), 1: _a(0, 15, 0, {0: 1})}),
        objective="total_weighted_completion_time",
    )
    assert rep.ok and math.isclose(rep.objectives["total_weighted_completion_time"], 25.0)
    from optsched.elastic.checks import LABELS

    assert set(LABELS) <= set(rep.checks)


def _placeable_plain(inst, m, p, q, n):
    """Every server, every split of the workers: the definition placeable() shortcuts."""
    H = inst.H
    if q == 1:
        return any(inst.fits(h, m, n, p, 1 if p is not None else 0) for h in range(H))
    caps = [min(inst.fit_count(h, inst.e[m]), n) for h in range(H)]
    if p is None:
        return n >= 2 and sum(1 for c in caps if c > 0) >= 2 and sum(caps) >= n
    for nn in range(H):
        others = sum(caps) - caps[nn]
        for g in range(n):
            if n - g <= others and inst.fits(nn, m, g, p, inst.ps_needed(m, p, n - g)):
                return True
    return False


@pytest.mark.parametrize("seed", range(16))
def test_placeable_equals_the_plain_search(seed):
    from optsched.elastic.generate import random_instance

    inst = random_instance(
        1,
        n_servers=1 + seed % 5,
        seed=seed,
        max_chunks=8,
        capacity_scale=1.0 + 0.5 * (seed % 4),
        architecture="ps" if seed % 3 else "rar",
    )
    ps = range(inst.P) if inst.is_ps else [None]
    for m in range(inst.M):
        for p in ps:
            for q in (0, 1):
                for n in range(1, 12):
                    assert inst.placeable(m, p, q, n) == _placeable_plain(inst, m, p, q, n), (m, p, q, n)
