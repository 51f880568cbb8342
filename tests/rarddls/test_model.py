"""Model (1)-(9): readings, bad input, JSON round trip, the slotted evaluator and the checker."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.core.cluster import Cluster
from optsched.core.io import instance_from_dict
from optsched.exceptions import InvalidInstanceError, InvalidScheduleError, OptschedWarning
from optsched.rarddls import RarInstance, RarJob, build_schedule, replay, toy_instance
from optsched.rarddls.checks import slot_completions
from optsched.verify import verify
from tests.rarddls.strategies import small_instances, what_if_replay


def inst(jobs, caps=(2, 2), **kw):
    base = dict(b_e=10.0, b_i=100.0, C=100.0, xi1=1.0, xi2=0.05, alpha=0.5)
    base.update(kw)
    return RarInstance(Cluster(tuple({"gpus": c} for c in caps)), tuple(jobs), **base)


def job(i, G=2, F=30, m=1.0, compute=0.1, rho=5.0, **kw):
    return RarJob(i, G, F, m, compute, rho, **kw)


def test_json_round_trip():
    a = toy_instance()
    b = instance_from_dict(a.to_dict())
    assert b.to_dict() == a.to_dict()
    c = inst([job(0)], k_reading="affine", gamma_reading="servers_minus_1", horizon=40)
    assert instance_from_dict(c.to_dict()).to_dict() == c.to_dict()


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: inst([job(0, G=5)]), "gpus"),
        (lambda: inst([job(0, F=0)]), "iterations"),
        (lambda: inst([job(0, m=0.0)]), "grad_size"),
        (lambda: inst([job(0, rho=0.0)]), "rho_hat"),
        (lambda: inst([job(0)], C=0.0), "'C'"),
        (lambda: inst([job(0)], b_e=0.0), "b_e"),
        (lambda: inst([job(0)], b_i=-1.0), "b_i"),
        (lambda: inst([job(0)], xi1=0.0), "xi1"),
        (lambda: inst([job(0)], xi1=1.5), "xi1"),
        (lambda: inst([job(0)], xi2=-0.1), "xi2"),
        (lambda: inst([job(0)], alpha=-1.0), "alpha"),
        (lambda: inst([job(0, lam=0.5)]), "lam"),
        (lambda: inst([job(0, compute=0.9)]), "finer slot"),
        (lambda: inst([job(0)], f=lambda k: 2 * k), "f(1) = 1"),
        (lambda: inst([job(0), job(1)], f=lambda k: 1.0 if k <= 1 else 0.5), "increasing"),
    ],
)
def test_bad_input(make, field):
    with pytest.raises(InvalidInstanceError, match=re.escape(field)):
        make()


def test_b_i_below_b_e_warns():
    with pytest.warns(OptschedWarning, match="b_i"):
        inst([job(0)], b_i=5.0)


def test_printed_k_refused_when_f_nonpositive():
    # k = xi1 p with xi1 = 0.5, alpha = 1.5 >= xi1 / (1 - xi1) = 1: f(0.5) = 0.5 - 0.75 < 0
    with pytest.raises(InvalidInstanceError, match="<= 0"):
        inst([job(0), job(1)], xi1=0.5, alpha=1.5, k_reading="printed")
    ok = inst([job(0), job(1)], xi1=0.5, alpha=1.5)  # max(1, xi1 p) keeps f >= 1
    assert ok.fk(ok.k_of_p(1)) == pytest.approx(1.0)


def test_k_readings():
    i1 = inst([job(0), job(1)], xi1=0.5)
    assert i1.k_of_p(1) == pytest.approx(1.0) and i1.k_of_p(2) == pytest.approx(1.0)
    i2 = inst([job(0), job(1)], xi1=0.5, k_reading="affine")
    assert i2.k_of_p(2) == pytest.approx(1.5)
    i3 = inst([job(0), job(1)], xi1=0.5, alpha=0.1, k_reading="printed")
    assert i3.k_of_p(1) == pytest.approx(0.5)
    # printed reading: a job alone on the link gets more than b_e
    assert i3.tau(0, 2, 1) < inst([job(0), job(1)], xi1=0.5, alpha=0.1).tau(0, 2, 1)


def test_custom_f_validated():
    i = inst([job(0), job(1)], f=lambda k: k**2)
    assert i.fk(2.0) == pytest.approx(4.0)


def test_gamma_readings():
    a = inst([job(0)])
    b = inst([job(0)], gamma_reading="servers_minus_1")
    assert a.tau(0, 1, 0) - b.tau(0, 1, 0) == pytest.approx(0.05)
    assert a.tau(0, 2, 1) - b.tau(0, 2, 1) == pytest.approx(0.05)


def test_replay_hand_cases():
    i = toy_instance()
    # one server, no contention: tau = 2*0.5/100 + 0.5/100 + 0.05 + 0.1 = 0.165, phi = 6, 30/6 = 5 slots
    r = replay(i, [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}])
    assert r.completion == [5, 5, 9]
    # job 0 alone split: p = 1, k = 1, B = b_e = 10: tau = 0.1 + 0.005 + 0.1 (2 servers) + 0.1 = 0.305, phi = 3
    # -> 10 slots; job 2 on one server (1 GPU: no comm): tau = 0.05 + 0.1, phi = 6 -> 4 slots
    r = replay(i, [0, 20, 2], [{0: 1, 1: 1}, {0: 2}, {1: 1}])
    assert r.completion == [10, 25, 6]


def test_fig2():
    """Fig. 2: two 2-GPU jobs on 2 servers x 2 GPUs: (a) each on one server, no contention; (b) both split,
    contention p = 2 on both NICs."""
    i = inst([job(0), job(1)])
    a = replay(i, [0, 0], [{0: 2}, {1: 2}]).completion
    b = replay(i, [0, 0], [{0: 1, 1: 1}, {0: 1, 1: 1}]).completion
    alone_split = replay(i.without(1), [0], [{0: 1, 1: 1}]).completion
    assert a == [5, 5]
    assert b[0] > alone_split[0] > a[0]


def test_one_server_jobs_do_not_contend():
    i = inst([job(0), job(1, G=1, F=40)], caps=(2, 2))
    split_alone = replay(i.without(1), [0], [{0: 1, 1: 1}]).completion[0]
    with_local = replay(i, [0, 0], [{0: 1, 1: 1}, {0: 1}]).completion[0]
    assert with_local == split_alone


@settings(max_examples=40)
@given(small_instances(max_jobs=3), st.data())
def test_removing_a_job_never_slows_another(instance, data):
    from optsched.rarddls.formulation import patterns

    n = instance.n_jobs
    starts = [data.draw(st.integers(0, 4)) for _ in range(n)]
    pls = []
    for j in range(n):
        p = data.draw(st.sampled_from(patterns(instance, j)))
        pls.append({s: y for s, y in enumerate(p) if y > 0})
    full = what_if_replay(instance, starts, pls)  # random decisions
    k = data.draw(st.integers(0, n - 1))
    if n == 1:
        return
    rest = [j for j in range(n) if j != k]
    sub = what_if_replay(instance.without(instance.jobs[k].id), [starts[j] for j in rest], [pls[j] for j in rest])
    for a, j in zip(sub, rest, strict=True):
        assert a <= full[j]


@settings(max_examples=40)
@given(small_instances(max_jobs=3), st.data())
def test_event_replay_equals_slot_by_slot_checker(instance, data):
    from optsched.rarddls.formulation import patterns

    n = instance.n_jobs
    starts = [data.draw(st.integers(0, 5)) for _ in range(n)]
    pls = [{s: y for s, y in enumerate(data.draw(st.sampled_from(patterns(instance, j)))) if y > 0} for j in range(n)]
    comp = what_if_replay(instance, starts, pls)
    sched = build_schedule(
        instance, starts, pls, gpu_ids=[{s: tuple(range(y)) for s, y in p.items()} for p in pls], completion=comp
    )
    assert [slot_completions(instance, sched)[j.id] for j in instance.jobs] == comp


def test_checker_catches_wrong_end_and_shared_gpu():
    i = toy_instance()
    good = build_schedule(i, [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}])
    assert verify(i, good, objective="makespan", claimed=9).ok
    bad = build_schedule(i, [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}], completion=[5, 4, 9])
    assert "contention_progress" in verify(i, bad).by_label()
    with pytest.raises(InvalidScheduleError, match=r"\[capacity\]"):  # issue 26: decisions are validated
        build_schedule(i, [0, 0, 3], [{0: 2}, {1: 2}, {0: 1}])
    clash = build_schedule(
        i, [0, 0, 3], [{0: 2}, {1: 2}, {0: 1}], gpu_ids=[{0: (0, 1)}, {1: (0, 1)}, {0: (0,)}], validate=False
    )
    labels = verify(i, clash).by_label()
    assert "gpu_exclusive" in labels and "capacity" in labels


def test_u_l_bracket_realized():
    from optsched.rarddls import sjf_bco
    from optsched.rarddls.generate import random_instance

    for seed in range(5):
        i = random_instance(5, n_servers=2, gpus_per_server=4, seed=seed)
        r = sjf_bco(i, kappas="sizes")
        for j in i.jobs:
            seg = r.schedule.segments(j.id)[0]
            rho = seg.end - seg.start
            assert i.l * rho <= j.rho_hat + 1e-9 <= i.u * rho + 2e-9
            lo, hi = i.rho_range(i.index(j.id))
            assert lo <= rho <= hi


def test_warning_free_toy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        toy_instance()
