"""The lower bound on the total JCT (formulations/rigid.md#jct-bound): SRPT's one-machine value
against an exhaustive search, and the bound against schedules of the simulator's baselines."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.core.bounds import jct_lower_bound, srpt_total_completion
from optsched.exceptions import InvalidInstanceError


def brute_preemptive_min(release, work) -> int:
    """min sum C of 1|r_j, pmtn|sum C_j with integer data, by trying every job in every unit slot
    (an optimal schedule with integer data exists that changes jobs only at integer times)."""
    n = len(release)

    @functools.cache
    def best(t: int, rem: tuple) -> int:
        if all(x == 0 for x in rem):
            return 0
        ready = [i for i in range(n) if rem[i] > 0 and release[i] <= t]
        if not ready:
            return best(t + 1, rem)
        out = None
        for i in ready:
            r = list(rem)
            r[i] -= 1
            v = (t + 1 if r[i] == 0 else 0) + best(t + 1, tuple(r))
            out = v if out is None else min(out, v)
        return out

    return best(0, tuple(work))


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3)), min_size=1, max_size=4))
def test_srpt_is_the_one_machine_optimum(jobs):
    r = [a for a, _ in jobs]
    w = [b for _, b in jobs]
    assert srpt_total_completion(r, w) == pytest.approx(brute_preemptive_min(r, w))


@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(1, 4), st.integers(1, 40)),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from(["fifo", "sjf", "srtf", "las"]),
)
def test_no_baseline_schedule_beats_the_bound(jobs, policy):
    import pandas as pd

    from optsched.core import Cluster
    from optsched.sim import Simulator, get_policy

    df = pd.DataFrame(jobs, columns=["arrival", "gpus", "duration"]).astype(float)
    cluster = Cluster.homogeneous(2, 2)
    res = Simulator(cluster, df, get_policy(policy)).run()
    f = res.jobs_frame()
    b = jct_lower_bound(df["arrival"], df["gpus"], df["duration"], cluster.total_gpus)
    assert float(f["jct"].sum()) >= b.total * (1 - 1e-12)
    assert b.total >= max(b.own_length, b.fluid) - 1e-9


def test_bound_is_tight_when_no_job_waits_and_when_jobs_fill_the_cluster():
    # one job per GPU, no overlap: the own lengths
    b = jct_lower_bound([0, 0, 0], [1, 1, 1], [5, 6, 7], total_gpus=3)
    assert b.total == 18 and b.which == "own_length"
    # every job as wide as the cluster, all released at 0: SRPT order is the best order
    b = jct_lower_bound([0, 0, 0], [4, 4, 4], [3, 1, 2], total_gpus=4)
    assert b.total == pytest.approx(1 + 3 + 6) and b.which == "fluid"
    assert b.mean == pytest.approx(10 / 3)


@pytest.mark.parametrize(
    "args, msg",
    [
        (([0, 1], [1], [1, 1], 2), "one value per job"),
        (([0], [1], [-1.0], 2), "'processing' of job 0"),
        (([0], [1], [float("nan")], 2), "'processing' of job 0"),
        (([0], [1], [1.0], 0), "total_gpus"),
    ],
)
def test_bad_input(args, msg):
    with pytest.raises(InvalidInstanceError, match=msg):
        jct_lower_bound(*args)


def test_large_workload_is_fast_enough_to_run_in_every_table():
    rng = np.random.default_rng(0)
    n = 50_000
    r = np.sort(rng.uniform(0, 1e6, n))
    b = jct_lower_bound(r, rng.integers(1, 9, n), rng.exponential(1000, n), total_gpus=64)
    assert b.total > 0 and b.n_jobs == n


@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(1, 4), st.integers(1, 6)), min_size=1, max_size=5),
)
def test_nonpreemptive_bound_equals_the_enumerated_optimum_on_whole_seconds(jobs):
    from optsched.core import Cluster, Instance, Job
    from optsched.rigid import brute_force_optimum
    from optsched.rigid.trace_bounds import nonpreemptive_lower_bound

    cluster = Cluster.homogeneous(1, 4)
    r = [a for a, _, _ in jobs]
    g = [b for _, b, _ in jobs]
    p = [c for _, _, c in jobs]
    inst = Instance(cluster, [Job(i, work=p[i], gpus=g[i], arrival=r[i]) for i in range(len(jobs))])
    opt, _ = brute_force_optimum(inst)
    b = nonpreemptive_lower_bound(r, g, p, cluster, time_limit=20)
    assert b.slot == 1.0 and b.optimal
    assert b.total == pytest.approx(opt - sum(r))


@given(
    st.lists(st.tuples(st.floats(0, 30), st.integers(1, 4), st.floats(0.5, 40)), min_size=1, max_size=8),
    st.sampled_from(["fifo", "sjf"]),
)
def test_no_nonpreemptive_schedule_beats_the_nonpreemptive_bound(jobs, policy):
    import pandas as pd

    from optsched.core import Cluster
    from optsched.rigid.trace_bounds import nonpreemptive_lower_bound
    from optsched.sim import Simulator, get_policy

    df = pd.DataFrame(jobs, columns=["arrival", "gpus", "duration"])
    cluster = Cluster.homogeneous(2, 2)
    f = Simulator(cluster, df, get_policy(policy)).run().jobs_frame()
    b = nonpreemptive_lower_bound(df["arrival"], df["gpus"], df["duration"], cluster, max_slots=60)
    assert float(f["jct"].sum()) >= b.total * (1 - 1e-9)


def test_preemption_can_beat_the_nonpreemptive_bound_but_not_the_general_one():
    # a long job, then a short one: SRTF preempts, which no non-preemptive schedule can do
    import pandas as pd

    from optsched.core import Cluster
    from optsched.rigid.trace_bounds import nonpreemptive_lower_bound
    from optsched.sim import Simulator, get_policy

    df = pd.DataFrame({"arrival": [0.0, 1.0], "gpus": [1, 1], "duration": [10.0, 1.0]})
    cluster = Cluster.homogeneous(1, 1)
    jct = float(Simulator(cluster, df, get_policy("srtf")).run().jobs_frame()["jct"].sum())
    npb = nonpreemptive_lower_bound(df["arrival"], df["gpus"], df["duration"], cluster)
    gen = jct_lower_bound(df["arrival"], df["gpus"], df["duration"], 1)
    assert gen.total <= jct < npb.total  # 12 < 13 (the short job first, after an idle second)


# -- the mean busy time part --------------------------------------------------------------------------
def stepped_mean_busy(release, processing, gpus, G, dt=1 / 64):
    """The least-work-first preemptive schedule of the pooled machine, stepped in dt (written from
    the formulation, not from the code): sum_i (mean busy time + p_i / 2)."""
    q = [g * p / G for g, p in zip(gpus, processing, strict=True)]
    left = list(q)
    busy = [0.0] * len(q)
    t = 0.0
    while any(x > 1e-12 for x in left):
        ready = [i for i in range(len(q)) if release[i] <= t + 1e-12 and left[i] > 1e-12]
        if ready:
            i = min(ready, key=lambda k: (q[k], k))
            run = min(dt, left[i])
            busy[i] += run * (t + run / 2)
            left[i] -= run
        t += dt
    return sum(busy[i] / q[i] + processing[i] / 2 for i in range(len(q)))


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 4), st.integers(1, 6)), min_size=1, max_size=5))
def test_mean_busy_part_equals_a_stepped_least_work_first_schedule(jobs):
    from optsched.core.bounds import mean_busy_total_completion

    r = [a for a, _, _ in jobs]
    g = [b for _, b, _ in jobs]
    p = [c for _, _, c in jobs]
    # releases and works on a 1/64 grid (G = 4): the stepped schedule is exact
    assert mean_busy_total_completion(r, p, g, 4) == pytest.approx(stepped_mean_busy(r, p, g, 4), abs=1e-9)


def brute_preemptive_rigid(release, gpus, work, G) -> int:
    """min sum C over schedules that run any set of released jobs of at most G GPUs in each unit
    slot (preemption at integer times): a feasible value, so at least the true optimum."""
    import itertools

    n = len(release)

    @functools.cache
    def best(t: int, rem: tuple) -> int:
        if all(x == 0 for x in rem):
            return 0
        ready = [i for i in range(n) if rem[i] > 0 and release[i] <= t]
        out = None
        for k in range(len(ready), -1, -1):
            for S in itertools.combinations(ready, k):
                if sum(gpus[i] for i in S) > G or (k == 0 and ready):
                    continue
                r = list(rem)
                for i in S:
                    r[i] -= 1
                v = sum(t + 1 for i in S if r[i] == 0) + best(t + 1, tuple(r))
                out = v if out is None else min(out, v)
        return out

    return best(0, tuple(work))


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3), st.integers(1, 3)), min_size=1, max_size=4))
def test_every_part_is_below_a_preemptive_schedule_of_multi_gpu_jobs(jobs):
    r = [a for a, _, _ in jobs]
    g = [b for _, b, _ in jobs]
    p = [c for _, _, c in jobs]
    feasible = brute_preemptive_rigid(r, g, p, 3) - sum(r)
    b = jct_lower_bound(r, g, p, total_gpus=3)
    assert b.own_length <= feasible + 1e-9 and b.fluid <= feasible + 1e-9 and b.mean_busy <= feasible + 1e-9


def test_the_mean_busy_part_can_beat_both_others():
    # one 2-GPU job of 10 s and two 1-GPU jobs of 4 s, all at 0, on 2 GPUs: own lengths 18; fluid
    # 2 + 4 + 14 = 20 (works 2, 2, 10 on the pooled machine); mean busy times 3 + 5 + 14 = 22, the
    # optimum (the short jobs side by side, then the wide one)
    b = jct_lower_bound([0, 0, 0], [2, 1, 1], [10, 4, 4], total_gpus=2)
    assert (b.own_length, b.fluid, b.mean_busy) == (18.0, 20.0, 22.0)
    assert b.which == "mean_busy" and b.total == 4 + 4 + 14


def test_the_bound_is_the_same_at_any_time_origin():
    rng = np.random.default_rng(1)
    r = np.sort(rng.uniform(0, 5000, 300)).round(3)
    g = rng.integers(1, 5, 300)
    p = rng.choice([3.7, 12.1, 60.3, 300.9], 300)
    a = jct_lower_bound(r, g, p, total_gpus=8)
    b = jct_lower_bound(r + 1.6e9, g, p, total_gpus=8)
    tol = 2 * 300 * np.spacing(1.6e9)  # the shifted arrivals are only that precise
    for k in ("total", "own_length", "fluid", "mean_busy"):
        assert getattr(b, k) == pytest.approx(getattr(a, k), abs=tol)


def test_nonpreemptive_bound_says_when_it_is_the_slot_rounded_optimum():
    """The 4-job case: slots of 16 s floor 20, 56, 19 and 3000, 90: the proven optimum of the floored
    instance (2,360.2 s per job) is a bound, not the real optimum (2,383.75 s)."""
    from optsched.core import Cluster
    from optsched.rigid.trace_bounds import nonpreemptive_lower_bound

    one = Cluster.homogeneous(1, 1)
    b = nonpreemptive_lower_bound([20, 0, 56, 19], [1] * 4, [3000, 90, 3000, 90], one)
    assert b.optimal and not b.exact_data and b.slot == 16.0
    assert b.description.startswith("optimum of the slot-rounded instance") and b.mean < 2383.75
    whole = nonpreemptive_lower_bound([0, 1], [1, 1], [10, 1], one)
    assert whole.optimal and whole.exact_data and whole.description == "proven optimum"
    assert whole.total == 13.0
