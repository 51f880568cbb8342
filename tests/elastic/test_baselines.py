"""Baselines of paper 001 (issue 13, item 7): run_baseline, the kind algorithms and jain_greedy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.core.registry import get_algorithm
from optsched.elastic import baselines as B
from optsched.elastic import shapes, solve_exact, solve_maxweight, toy_instance
from optsched.elastic.baselines import BASELINES, NON_PREEMPTIVE, jain_greedy, run_baseline
from optsched.elastic.checks import evaluate_objective, violations
from optsched.elastic.gamma import configs
from optsched.elastic.generate import random_instance
from optsched.elastic.model import ElasticInstance
from optsched.elastic.primal_dual import a_maxweight
from optsched.elastic.schedule import ElasticSchedule
from optsched.elastic.shapes import least_total_use
from optsched.exceptions import InfeasibleError, InvalidOptionError
from optsched.solvers import SolveOptions
from optsched.verify import verify_result

from .strategies import drawn_instances

FAST = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

instances = drawn_instances(max_jobs=6, max_servers=3, max_arrival=6, n_worker_types=2, n_ps_types=2)


def capacity_excess(inst: ElasticInstance, segments: list[dict]) -> float:
    """The largest use above capacity over every slot, server and resource, recomputed from the
    simulator's segments alone (a segment holds its use on [start, end))."""
    if not segments:
        return 0.0
    T = int(math.ceil(max(s["end"] for s in segments)))
    use = np.zeros((T + 1, inst.H, inst.R))
    for s in segments:
        lo, hi = int(math.floor(s["start"] + 1e-9)), int(math.ceil(s["end"] - 1e-9))
        for h, vec in s["use"].items():
            for r, a in vec.items():
                use[lo:hi, h, inst.resources.index(r)] += a
    return float((use - np.asarray(inst.C)[None]).max())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances, seed=st.integers(0, 1000))
def test_every_baseline_finishes_within_capacity(inst, seed):
    for name in BASELINES:
        r = run_baseline(inst, name, seed=seed)
        c = r.info["completions"]
        assert set(c) == set(inst.job_ids)
        for j, job in enumerate(inst.jobs):
            assert c[job.id] >= job.arrival + inst.min_duration(j) - 1e-9
            assert float(c[job.id]).is_integer()  # slotted: completions at slot boundaries
        assert capacity_excess(inst, r.info["segments"]) <= 1e-9
        assert r.objective == pytest.approx(sum(job.weight * c[job.id] for job in inst.jobs))
        assert r.info["makespan"] == pytest.approx(max(c.values()))
        if name not in ("antman", "tiresias", "2d-las"):
            assert r.info["preemptions"] == 0


@FAST
@given(inst=instances, seed=st.integers(0, 1000))
def test_non_preemptive_schedules_pass_the_verifier(inst, seed):
    roomy = inst.replace(horizon=10**5)
    for name in NON_PREEMPTIVE:
        r = run_baseline(inst, name, seed=seed)
        assert isinstance(r.schedule, ElasticSchedule)
        assert violations(roomy, r.schedule) == []
        assert verify_result(roomy, r).ok  # every label and the claimed objective, via optsched.verify
        late = {v.job for v in violations(inst, r.schedule)}
        assert late == set(r.info["late_jobs"])
        assert all(v.label == "horizon" for v in violations(inst, r.schedule))
        assert evaluate_objective(inst, r.schedule, "total_weighted_completion_time") == pytest.approx(r.objective)
        assert len(r.info["starts"]) == inst.n_jobs  # one start each


@FAST
@given(inst=instances)
def test_preemptive_segments_are_the_runs_of_each_job(inst):
    for name in ("antman", "tiresias", "2d-las"):
        r = run_baseline(inst, name, overhead="none")
        for job in inst.jobs:
            segs = sorted((s for s in r.info["segments"] if s["job"] == job.id), key=lambda s: s["start"])
            assert segs, job.id
            ran = sum(s["end"] - s["start"] for s in segs)
            d = next(st_["d"] for st_ in r.info["starts"] if st_["job"] == job.id)
            assert ran == pytest.approx(d)  # no overhead: exactly d slots of service, in pieces
            assert segs[0]["start"] >= job.arrival - 1e-9
            assert segs[-1]["end"] == pytest.approx(r.info["completions"][job.id])
            for a, b in itertools.pairwise(segs):
                assert b["start"] >= a["end"] - 1e-9
        assert r.info["preemptions"] == sum(
            len([s for s in r.info["segments"] if s["job"] == job.id]) - 1 for job in inst.jobs
        )


@FAST
@given(inst=instances)
def test_checkpoint_overhead_only_delays_resumed_jobs(inst):
    """A first start is free: a job run in one piece takes exactly its d slots with
    ``overhead="checkpoint"``, a run without preemptions is the ``overhead="none"`` run, and a
    resumed job never finishes in less than d slots of service."""
    for name in ("tiresias", "2d-las"):
        r = run_baseline(inst, name, overhead="checkpoint")
        assert capacity_excess(inst, r.info["segments"]) <= 1e-9
        d = {st_["job"]: st_["d"] for st_ in r.info["starts"]}
        for j, job in enumerate(inst.jobs):
            assert r.info["completions"][job.id] >= job.arrival + inst.min_duration(j) - 1e-9
            segs = [s for s in r.info["segments"] if s["job"] == job.id]
            ran = sum(s["end"] - s["start"] for s in segs)
            if len(segs) == 1:  # never resumed: no overhead at all
                assert ran == pytest.approx(d[job.id]), (name, job.id)
            else:
                assert ran >= d[job.id] - 1e-9, (name, job.id)
        if r.info["preemptions"] == 0:
            free = run_baseline(inst, name, overhead="none")
            assert r.info["completions"] == pytest.approx(free.info["completions"])


def test_checkpoint_overhead_on_the_toy_is_charged_at_resumes_only():
    """The toy (two jobs of d = 10 slots, one fits at a time, :func:`toy_instance`): Tiresias runs
    them one after the other without preemption, so checkpointing costs nothing (completions 10 and
    20 with either overhead); 2D-LAS swaps them every slot, so every resume pays the overhead and
    both finish later than without it (19 and 20 without: 20 slots of work back to back)."""
    inst = toy_instance()
    for ov in ("none", "checkpoint"):
        r = run_baseline(inst, "tiresias", overhead=ov)
        assert r.info["preemptions"] == 0
        assert r.info["completions"] == pytest.approx({0: 10.0, 1: 20.0})
    free = run_baseline(inst, "2d-las", overhead="none").info["completions"]
    paid = run_baseline(inst, "2d-las", overhead="checkpoint").info["completions"]
    assert free == pytest.approx({0: 19.0, 1: 20.0})
    assert all(paid[j] > free[j] for j in free)


tiny = st.builds(
    lambda n, h, arch, seed: random_instance(n, n_servers=h, architecture=arch, seed=seed, n_worker_types=2),
    n=st.integers(1, 3),
    h=st.integers(1, 2),
    arch=st.sampled_from(["ps", "rar"]),
    seed=st.integers(0, 10**6),
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=tiny, seed=st.integers(0, 100))
def test_exact_optimum_is_no_worse_than_the_non_preemptive_baselines(inst, seed):
    runs = {name: run_baseline(inst, name, seed=seed) for name in BASELINES}
    # the horizon raised to the latest baseline completion: every baseline schedule is feasible for (2)
    T = max(inst.horizon, *(int(r.info["makespan"]) for r in runs.values()))
    ex = solve_exact(inst.replace(horizon=T), options=SolveOptions(time_limit=20, threads=1))
    assert ex.optimal
    lower = sum(job.weight * (job.arrival + inst.min_duration(j)) for j, job in enumerate(inst.jobs))
    for name, r in runs.items():
        assert r.objective >= lower - 1e-9
        if name in NON_PREEMPTIVE:
            assert ex.objective <= r.objective + 1e-6


def _two_jobs() -> ElasticInstance:
    """One 1-GPU server: job 0 (10 slots) at slot 0, job 1 (1 slot, weight 100) at slot 1."""
    job = {"epochs": 1, "chunks": 1, "v": [100.0], "update": [0.0], "grad_mb": 0.0}
    return ElasticInstance.from_dict(
        {
            "kind": "elastic",
            "name": "preemption-beats-2",
            "slot": 1.0,
            "horizon": 40,
            "servers": [{"capacity": {"gpu": 1, "cpu": 4}}],
            "worker_types": [{"resources": {"gpu": 1, "cpu": 1}, "bandwidth": 1.0}],
            "ps_types": [{"resources": {"gpu": 0, "cpu": 1}, "bandwidth": 1.0}],
            "jobs": [
                {"id": 0, "arrival": 0, "weight": 1, "minibatches": 100, **job},
                {"id": 1, "arrival": 1, "weight": 100, "minibatches": 10, **job},
            ],
        }
    )


def test_a_preemptive_baseline_can_beat_the_optimum_of_2():
    """(2) has no preemption: Tiresias-like preempts job 0 for job 1 (11 + 200 = 211), while the
    best schedule of (2) idles slot 0..1 (12 + 200 = 212). So 'exact <= baseline' holds only for
    the non-preemptive baselines."""
    inst = _two_jobs()
    ex = solve_exact(inst, options=SolveOptions(time_limit=20, threads=1))
    assert ex.optimal and ex.objective == pytest.approx(212.0)
    r = run_baseline(inst, "tiresias")
    assert r.objective == pytest.approx(211.0) and r.info["preemptions"] == 1
    assert run_baseline(inst, "fifo", seed=0).objective == pytest.approx(10 + 100 * 11)


def test_toy_values():
    inst = toy_instance()
    # both jobs want the 2-GPU worker (10 slots) and 1 of 3 GPUs stays idle: one after the other,
    # except 2D-LAS, which swaps them every slot (the one with less attained service runs): 19 + 20
    want = {"fifo": 30.0, "drf": 30.0, "antman": 30.0, "tiresias": 30.0, "2d-las": 39.0}
    for name in BASELINES:
        r = run_baseline(inst, name, seed=0)
        assert r.objective == pytest.approx(want[name]), name
        assert r.info["mean_jct"] == pytest.approx(want[name] / 2)
    assert run_baseline(inst, "2d-las").info["preemptions"] == 18


def test_antman_demotes_and_preempts():
    """Job 0 (2 GPUs, 4 slots) holds the 2-GPU server; job 2 (1 GPU, 10 slots) waits and is demoted
    after 1 slot, then runs opportunistically from slot 4; guarantee job 1 (2 GPUs) arrives at slot 5
    and preempts it. Without demotion job 2 runs as a guarantee job and job 1 waits for it."""
    job = {"epochs": 1, "v": [100.0], "update": [0.0], "grad_mb": 0.0}
    inst = ElasticInstance.from_dict(
        {
            "kind": "elastic",
            "slot": 1.0,
            "horizon": 60,
            "servers": [{"capacity": {"gpu": 2, "cpu": 4}}],
            "worker_types": [{"resources": {"gpu": 1, "cpu": 1}, "bandwidth": 1.0}],
            "ps_types": [{"resources": {"gpu": 0, "cpu": 1}, "bandwidth": 1.0}],
            "jobs": [
                {"id": 0, "arrival": 0, "chunks": 2, "minibatches": 40, **job},
                {"id": 1, "arrival": 5, "chunks": 2, "minibatches": 20, **job},
                {"id": 2, "arrival": 0, "chunks": 1, "minibatches": 100, **job},
            ],
        }
    )
    r = run_baseline(inst, "antman", demote_after=1)
    assert r.info["demotions"] == 1 and r.info["preemptions"] == 1
    assert r.info["completions"] == {0: 4.0, 1: 7.0, 2: 16.0}  # job 2: slots 4-5 and 7-15
    assert capacity_excess(inst, r.info["segments"]) <= 1e-9
    slow = run_baseline(inst, "antman", demote_after=1000)  # never demoted: no preemption
    assert slow.info["demotions"] == 0 and slow.info["preemptions"] == 0
    assert slow.info["completions"] == {0: 4.0, 1: 16.0, 2: 14.0}
    default = run_baseline(inst, "antman")  # demoted after its own d: job 1 (d = 2) at slot 7, nothing free
    assert default.info["demotions"] == 1 and default.info["completions"] == slow.info["completions"]


# -- jain_greedy ------------------------------------------------------------------------------------
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=tiny, tau=st.integers(2, 12))
def test_jain_greedy_is_feasible_and_below_the_optimum_of_8(inst, tau):
    run = jain_greedy(inst, tau=tau)
    sched = ElasticSchedule({inst.jobs[j].id: c.config.assignment(c.start) for j, c in run.chosen.items()})
    assert violations(inst, sched, require_all=False, tau=tau, arrivals=False) == []
    assert run.weight == pytest.approx(sum(inst.jobs[j].weight for j in run.chosen))
    opt = solve_maxweight(inst, tau=tau, options=SolveOptions(time_limit=20, threads=1))
    assert opt.optimal
    assert run.weight <= opt.objective + 1e-9
    other = a_maxweight(inst, tau=tau)  # comparable: the same type and fields
    assert type(other) is type(run) and set(run.chosen) <= set(range(inst.n_jobs))


@FAST
@given(inst=instances, tau=st.integers(1, 20))
def test_jain_greedy_places_each_job_as_late_as_it_fits(inst, tau):
    """Replays the greedy's order: at its turn each job's start is the latest start of any of its
    configurations that fits the residual capacity; a job left out fits nowhere."""
    run = jain_greedy(inst, tau=tau)
    order = sorted(range(inst.n_jobs), key=lambda j: (-run.utility[j], j))
    C = np.asarray(inst.C, dtype=float)
    used = np.zeros((tau, inst.H, inst.R))

    def fits(cfg, t):
        return all(np.all(used[t : t + cfg.d, h] + np.asarray(v) <= C[h] + 1e-9) for h, v in cfg.use)

    for j in order:
        assert run.utility[j] == pytest.approx(inst.jobs[j].weight / least_total_use(inst, j))
        latest = max(
            (t for cfg in configs(inst, j) for t in range(tau - cfg.d + 1) if fits(cfg, t)),
            default=None,
        )
        if j not in run.chosen:
            assert latest is None
            continue
        c = run.chosen[j]
        assert c.start == latest and c.start + c.config.d <= tau and fits(c.config, c.start)
        for h, v in c.config.use:
            used[c.start : c.start + c.config.d, h] += np.asarray(v)


def test_jain_greedy_toy():
    run = jain_greedy(toy_instance(), tau=16)
    assert sorted(run.chosen) == [0, 1]
    assert run.chosen[0].start + run.chosen[0].config.d == 16  # latest start: ends at tau
    assert run.chosen[1].start == 1
    assert jain_greedy(toy_instance(), tau=9).chosen == {}  # no configuration is shorter than 10
    with pytest.raises(InvalidOptionError, match="tau"):
        jain_greedy(toy_instance(), tau=0)


# -- bad input, registration, determinism ------------------------------------------------------------
def test_bad_input():
    inst = toy_instance()
    with pytest.raises(InvalidOptionError, match=r"'sjf'.*fifo.*2d-las"):
        run_baseline(inst, "sjf")
    with pytest.raises(InvalidOptionError, match=r"'bogus'.*overhead"):
        run_baseline(inst, "tiresias", bogus=1)
    with pytest.raises(InvalidOptionError, match="no options"):
        run_baseline(inst, "drf", overhead="none")
    with pytest.raises(InvalidOptionError, match=r"'overhead'.*'never'"):
        run_baseline(inst, "2d-las", overhead="never")
    with pytest.raises(InvalidOptionError, match="demote_after"):
        run_baseline(inst, "antman", demote_after=-1)
    with pytest.raises(InvalidOptionError, match="workers"):
        run_baseline(inst, "fifo", workers=(0, 3))


def test_a_job_without_configuration_is_named(monkeypatch):
    inst = random_instance(3, seed=1)
    real = shapes.candidate_shapes
    monkeypatch.setattr(shapes, "candidate_shapes", lambda instance, j: [] if j == 2 else real(instance, j))
    with pytest.raises(InfeasibleError, match="job 2"):
        run_baseline(inst, "fifo", seed=0)
    with pytest.raises(InfeasibleError, match="job 2"):
        jain_greedy(inst, tau=10)


def test_registered_and_deterministic():
    assert get_algorithm("elastic-fifo").kind == "elastic"
    assert get_algorithm("elastic-drf").kind == "elastic"
    inst = random_instance(6, seed=4)
    for name in BASELINES:
        a, b = run_baseline(inst, name, seed=11), run_baseline(inst, name, seed=11)
        assert a.objective == b.objective and a.info["starts"] == b.info["starts"]
    draws = {tuple(s["n"] for s in run_baseline(inst, "fifo", seed=s).info["starts"]) for s in range(8)}
    assert len(draws) > 1  # the worker counts come from the seed
    assert B.fifo(inst, seed=3).objective == run_baseline(inst, "fifo", seed=3).objective


def test_checkpoint_overhead_costs_slots_on_the_toy():
    """2D-LAS alternates the toy's two jobs every slot; with overhead="checkpoint" each resume loads
    for 2 x 8 pi / b = 16 ms (1.6e-4 of a 100-s slot), so ten 1-slot turns no longer finish the
    10-slot work: each job needs an eleventh turn (19 + 20 -> 21 + 22)."""
    inst = toy_instance()
    free = run_baseline(inst, "2d-las", overhead="none")
    paid = run_baseline(inst, "2d-las", overhead="checkpoint")
    assert free.info["completions"] == {0: 19.0, 1: 20.0}
    assert paid.info["completions"] == {0: 21.0, 1: 22.0}
    assert paid.info["preemptions"] > free.info["preemptions"]
