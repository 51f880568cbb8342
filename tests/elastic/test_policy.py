"""The elastic baselines as simulator policies: conversion, ideal configuration, placement, registry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from optsched.elastic import toy_instance
from optsched.elastic.baselines import BASELINES, run_baseline
from optsched.elastic.checks import violations
from optsched.elastic.gamma import configs
from optsched.elastic.generate import random_instance
from optsched.elastic.model import ElasticInstance
from optsched.elastic.policy_base import ElasticRate, sim_resource_names, to_sim
from optsched.elastic.policy_online import ElasticOnline
from optsched.elastic.policy_priority import ElasticTiresias
from optsched.elastic.primal_dual import a_online
from optsched.elastic.schedule import Assignment, ElasticSchedule
from optsched.elastic.shapes import Shape, find_placement, ideal_config, ideal_shape
from optsched.exceptions import InvalidOptionError
from optsched.sim import Simulator, get_policy, policy_registry

from .strategies import drawn_instances

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

instances = st.builds(
    lambda n, h, arch, seed: random_instance(n, n_servers=h, architecture=arch, seed=seed, max_chunks=5),
    n=st.integers(1, 4),
    h=st.integers(1, 4),
    arch=st.sampled_from(["ps", "rar"]),
    seed=st.integers(0, 10**6),
)


@FAST
@given(inst=instances)
def test_ideal_config_is_the_least_duration(inst):
    for j in range(inst.n_jobs):
        c = ideal_config(inst, j)
        assert c.d == inst.min_duration(j)  # the model's own enumeration, not Gamma_j's
        same = [k for k in configs(inst, j) if k.d == c.d]
        assert c.d * c.total_use == pytest.approx(min(k.d * k.total_use for k in same))
        assert ideal_shape(inst, j) == Shape(c.m, c.p, c.q, c.n_workers, c.d)


@FAST
@given(inst=instances, data=st.data())
def test_find_placement_is_valid_and_finds_every_fitting_shape(inst, data):
    C = np.asarray(inst.C, dtype=float)
    frac = np.array(data.draw(st.lists(st.floats(0, 1), min_size=C.size, max_size=C.size))).reshape(C.shape)
    free = C * frac
    for j in range(inst.n_jobs):
        for c in configs(inst, j):
            sh = Shape(c.m, c.p, c.q, c.n_workers, c.d)
            got = find_placement(inst, sh, free)
            fits = all(np.all(np.asarray(v) <= free[h] + 1e-9) for h, v in c.use)
            if fits:
                assert got is not None  # complete: a placement exists, so the search finds one
            if got is None:
                continue
            workers, ps = got
            a = Assignment(start=inst.jobs[j].arrival, d=c.d, m=c.m, p=c.p, q=c.q, workers=workers, ps=ps)
            # the verifier accepts it as a schedule of job j alone (every label but (2a) for the others)
            roomy = inst.replace(horizon=10**5)
            assert violations(roomy, ElasticSchedule({inst.jobs[j].id: a}), require_all=False) == []
            use = np.zeros_like(C)
            for h, y in workers.items():
                use[h] += y * np.asarray(inst.e[c.m])
            for h, s in ps.items():
                use[h] += s * np.asarray(inst.z[c.p])
            assert np.all(use <= free + 1e-9)


def test_to_sim_and_resource_names():
    inst = toy_instance()
    cluster, jobs = to_sim(inst)
    assert [dict(s.resources) for s in cluster.servers] == [{"cpu": 8.0, "gpu": 3.0}]
    assert [j.work for j in jobs] == [10.0, 10.0] and all(j.gpus == 1 for j in jobs)
    assert cluster.servers[0].gpus == inst.n_jobs  # tokens: one per job, never binding
    # an elastic resource named "gpus" is renamed in the simulator (the placement's token key)
    d = inst.to_dict()
    for block in [s["capacity"] for s in d["servers"]] + [t["resources"] for t in d["worker_types"] + d["ps_types"]]:
        block["gpus"] = block.pop("gpu")
    renamed = ElasticInstance.from_dict(d)
    assert sim_resource_names(renamed) == {"cpu": "cpu", "gpus": "res:gpus"}
    for name in BASELINES:
        assert run_baseline(renamed, name, seed=0).objective == run_baseline(inst, name, seed=0).objective


@FAST
@given(inst=instances)
def test_registry_policies_run_on_the_simulator_directly(inst):
    specs = policy_registry()
    for name in BASELINES:
        assert specs[f"elastic-{name}"].paper == "elastic"
    pol = get_policy("elastic-tiresias", instance=inst)
    assert isinstance(pol, ElasticTiresias)
    cluster, jobs = to_sim(inst)
    res = Simulator(cluster, jobs, pol, rate_model=ElasticRate(), slot=1.0, record_log=False).run()
    frame = res.jobs_frame()
    got = dict(zip(frame["job_id"], frame["completion"], strict=True))
    want = run_baseline(inst, "tiresias").info["completions"]
    assert got == pytest.approx(want)


@FAST
@given(inst=instances)
def test_drf_jobs_run_at_the_speed_of_their_computed_shape(inst):
    r = run_baseline(inst, "drf")
    for s in r.info["starts"]:
        j = inst.index(s["job"])
        assert 1 <= s["n"] <= ideal_shape(inst, j).n
        assert s["d"] == inst.duration(j, s["m"], s["p"], s["q"], s["n"])
        assert r.info["completions"][s["job"]] == pytest.approx(s["slot"] + s["d"])


def test_policy_bad_input():
    inst = toy_instance()
    with pytest.raises(InvalidOptionError, match="ElasticInstance"):
        ElasticTiresias({"jobs": []})
    with pytest.raises(InvalidOptionError, match="overhead"):
        ElasticTiresias(inst, overhead="always")
    # a resume that costs a whole slot could never progress under 2D-LAS: refused at the start
    d = inst.to_dict()
    d["slot"] = 0.01
    d["horizon"] = 10**6
    for job in d["jobs"]:
        job["grad_mb"] = 10.0
    slow = ElasticInstance.from_dict(d)
    with pytest.raises(InvalidOptionError, match="whole slot"):
        run_baseline(slow, "2d-las", overhead="checkpoint")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=drawn_instances(max_jobs=5, max_servers=3, max_arrival=2),
    reading=st.sampled_from(
        [{}, {"alpha": "printed-log10"}, {"placement": "realized"}, {"alpha": "printed-log10", "placement": "realized"}]
    ),
)
@example(inst=toy_instance(), reading={})
@example(inst=toy_instance(), reading={"alpha": "printed-log10", "placement": "realized"})
def test_a_online_on_the_simulator_gives_its_completions(inst, reading):
    """Each round's plan released at tau_i and started at its slots: the engine accepts every start
    (arrived, free resources) and the completions are A_online's, under each reading of alpha and of
    the round offset (the simulator checks independently that no start comes before tau_i)."""
    pol = get_policy("elastic-online", instance=inst, **reading)
    assert isinstance(pol, ElasticOnline)
    cluster, jobs = to_sim(inst)
    res = Simulator(cluster, jobs, pol, rate_model=ElasticRate(), slot=1.0, record_log=False).run()
    frame = res.jobs_frame()
    got = dict(zip(frame["job_id"], frame["completion"], strict=True))
    want = a_online(inst, **reading)
    assert got == pytest.approx({jid: float(a.completion) for jid, a in want.schedule.items()})
    taus = {jid: rd["tau"] for rd in want.info["rounds"] for jid in rd["J_i_s"]}
    for jid, t, *_ in pol.starts:  # started no earlier than its round and its arrival
        assert t >= taus[jid] and t >= inst.jobs[inst.index(jid)].arrival


# -- 2D-LAS with costly resumes, and the speed-ups that keep every schedule ---------------------------
def _two_d_las(inst, load_slots: float, policy_cls=None):
    """2D-LAS on ``inst`` where every resume loads for ``load_slots`` slots (a simulator overhead, as
    ``optsched compare`` gives it), with the per-job records of the run."""
    from optsched.elastic.policy_priority import Elastic2DLAS

    cl, jobs = to_sim(inst)
    pol = (policy_cls or Elastic2DLAS)(inst)

    def load(job, placement=None):
        return load_slots if job.n_starts > 1 else 0.0

    res = Simulator(cl, jobs, pol, rate_model=ElasticRate(), slot=1.0, load_time=load, record_log=False).run()
    return res, pol


@pytest.mark.parametrize("load_slots", [0.6, 1.0, 1.3, 2.5])
def test_2d_las_with_resumes_of_a_slot_or_more_ends(load_slots):
    """Two equal jobs swapped every slot: with a resume load of a slot or more, plain 2D-LAS spent
    every slot loading (the livelock guard fired at slot 230 of the 4-job OpenB-like case). A
    (re)started job now keeps its resources until it has trained as long as it loaded."""
    from optsched.elastic.policy_priority import Elastic2DLAS

    inst = toy_instance()
    res, _ = _two_d_las(inst, load_slots)
    f = res.jobs_frame()
    assert (f["status"] == "done").all()
    # every start bought at least as much training as it paid in loading (the last start may end first)
    assert (f["training_time"] >= f["loading_time"] - load_slots - 1e-9).all()
    free, _ = _two_d_las(inst, 0.0)
    assert free.jobs_frame()["completion"].tolist() == [19.0, 20.0]  # the toy's plain 2D-LAS

    class Unpinned(Elastic2DLAS):
        def pinned(self, sim, job):
            return False

    if load_slots in (0.6, 2.5):  # without the rule the two jobs swap and load more than they train
        g = _two_d_las(inst, load_slots, Unpinned)[0].jobs_frame()
        assert (g["loading_time"] > g["training_time"] + load_slots).all()
        assert g["completion"].max() > f["completion"].max()


def test_2d_las_without_resume_costs_is_plain_2d_las():
    """The pin never binds without a load: the same schedule as a 2D-LAS without it."""
    from optsched.elastic.policy_priority import Elastic2DLAS

    class Unpinned(Elastic2DLAS):
        def pinned(self, sim, job):
            return False

    for seed in range(4):
        inst = random_instance(6, n_servers=2, seed=seed, max_chunks=4)
        a, _ = _two_d_las(inst, 0.0)
        b, _ = _two_d_las(inst, 0.0, Unpinned)
        fa, fb = a.jobs_frame(), b.jobs_frame()
        assert fa["completion"].tolist() == fb["completion"].tolist()
        assert fa["n_preemptions"].tolist() == fb["n_preemptions"].tolist()


def test_priority_policies_keep_their_schedules_with_the_cached_uses():
    """The running jobs' uses are kept from their start: the same decisions as recomputing them."""
    from optsched.elastic import policy_priority as P

    class Recompute(P.ElasticTiresias):
        def _held_use(self, job):
            cfg = job.config
            return placement_use(self.instance, cfg["shape"], cfg["workers"], cfg["ps"])

    from optsched.elastic.shapes import placement_use

    for seed in range(4):
        inst = random_instance(8, n_servers=3, seed=seed, max_chunks=4)
        a, _ = _two_d_las(inst, 0.3, P.ElasticTiresias)
        b, _ = _two_d_las(inst, 0.3, Recompute)
        assert a.jobs_frame()["completion"].tolist() == b.jobs_frame()["completion"].tolist()


def _dense_priority_schedule(self, sim):
    """The rule of the preemptive baselines' ``schedule`` in whole H x R arrays, without its shortcuts
    (no shapes remembered as not fitting, every running job's use compared and subtracted entire):
    the plain form the policies are held to."""
    from optsched.elastic.shapes import TOL, find_placement, placement_use
    from optsched.sim import LOADING, TRAINING, WAITING

    self.check_progress(sim)
    act = self.active()
    order = sorted(act, key=lambda j: (self.key(j), j.arrival, j.index))
    cap = np.asarray(self.instance.C, dtype=float).copy()
    now_free = self.free(sim)
    kept, start = set(), []
    for job in order:
        if job.phase in (LOADING, TRAINING) and self.pinned(sim, job):
            cap -= self._use[job.id]
            kept.add(job.id)
    for job in order:
        if job.phase in (LOADING, TRAINING):
            if job.id not in kept and np.all(self._use[job.id] <= cap + TOL):
                cap -= self._use[job.id]
                kept.add(job.id)
        elif job.phase == WAITING:
            sh = self.shape(job)
            got = find_placement(self.instance, sh, np.minimum(cap, now_free))
            if got is None:
                got = find_placement(self.instance, sh, cap)
            if got is not None:
                use = placement_use(self.instance, sh, *got)
                cap -= use
                now_free -= use
                start.append((job, sh, got))
    for job in act:
        if job.phase in (LOADING, TRAINING) and job.id not in kept:
            sim.preempt(job)
    for job, sh, got in start:
        self.start(sim, job, sh, *got)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=drawn_instances(max_jobs=8, max_servers=3, max_arrival=4, n_worker_types=2, n_ps_types=2),
    name=st.sampled_from(["tiresias", "2d-las"]),
    load_slots=st.sampled_from([0.0, 0.3, 0.6, 1.5]),
)
def test_priority_policies_take_the_decisions_of_the_dense_rule(inst, name, load_slots):
    """Tiresias and 2D-LAS check and take a running job's resources on the entries it uses only, and
    skip shapes that did not fit: the same starts, at the same slots on the same servers, as the
    plain H x R rule (resume loads make 2D-LAS pin jobs, which exercises the unconditional take)."""
    from optsched.elastic.policy_priority import Elastic2DLAS, ElasticTiresias

    cls = {"tiresias": ElasticTiresias, "2d-las": Elastic2DLAS}[name]
    dense = type(f"Dense{cls.__name__}", (cls,), {"schedule": _dense_priority_schedule})
    a, pa = _two_d_las(inst, load_slots, cls)
    b, pb = _two_d_las(inst, load_slots, dense)
    assert pa.starts == pb.starts
    assert a.jobs_frame().equals(b.jobs_frame())


def _tenths(inst):
    """``inst`` with every capacity and per-worker/PS use divided by 10 (not whole numbers)."""
    d = inst.to_dict()
    for s in d["servers"]:
        s["capacity"] = {r: v / 10 for r, v in s["capacity"].items()}
    for t in (*d["worker_types"], *d.get("ps_types", [])):
        t["resources"] = {r: v / 10 for r, v in t["resources"].items()}
    return ElasticInstance.from_dict(d)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=drawn_instances(max_jobs=8, max_servers=3, max_arrival=4, n_worker_types=2, n_ps_types=2),
    name=st.sampled_from(["tiresias", "2d-las"]),
    load_slots=st.sampled_from([0.0, 0.3, 0.6, 1.5]),
    tenths=st.booleans(),
)
def test_priority_policies_decide_by_running_sums_as_entry_by_entry(inst, name, load_slots, tenths):
    """With whole-number capacities and uses, Tiresias and 2D-LAS decide a slot by running sums over
    the running jobs (exact in any order): the same starts, slots and servers as checking each job
    entry by entry, the rule they keep for capacities that are not whole numbers (tenths)."""
    from optsched.elastic.policy_priority import Elastic2DLAS, ElasticTiresias

    if tenths:
        inst = _tenths(inst)
    cls = {"tiresias": ElasticTiresias, "2d-las": Elastic2DLAS}[name]

    def on_start(self, sim):
        cls.on_start(self, sim)
        self._whole = False

    entrywise = type(f"Entrywise{cls.__name__}", (cls,), {"on_start": on_start})
    a, pa = _two_d_las(inst, load_slots, cls)
    b, pb = _two_d_las(inst, load_slots, entrywise)
    assert pa._whole is not tenths  # drawn capacities and uses are whole numbers
    assert pa.starts == pb.starts
    assert a.jobs_frame().equals(b.jobs_frame())


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 70),
    st.integers(1, 3),
    st.data(),
)
def test_sliding_min_is_the_minimum_of_every_window(n, width, data):
    from numpy.lib.stride_tricks import sliding_window_view

    from optsched.elastic.prices import sliding_min

    d = data.draw(st.integers(1, n))
    a = np.asarray(data.draw(st.lists(st.floats(-5, 5), min_size=n * width, max_size=n * width))).reshape(n, width)
    assert np.array_equal(sliding_min(a, d), sliding_window_view(a, d, axis=0).min(axis=-1))
