"""A-SRPT and the baselines on the shared simulator: feasibility, Lemma 2 / Theorem 1 against the exact OPT_A."""

import warnings

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from optsched.asrpt import toy_instance
from optsched.asrpt.exact import solve_exact
from optsched.asrpt.generate import random_instance
from optsched.asrpt.online import ASRPT, BASELINES, OrderedPolicy, select_servers
from optsched.asrpt.policy import empirical_ratio, simulate_asrpt
from optsched.exceptions import InvalidOptionError
from optsched.solvers import SolveOptions
from optsched.verify import verify

from .strategies import small_instances

OPT = SolveOptions(threads=1, time_limit=30)


def test_toy_hand_trace():
    # Ã_1 sizes: job1 2.7, job2 0.75 (r=2), job0 3.75 -> pending order 1 (t=2.7), 2 (t=3.45), 0 (t=7.2).
    # Starts at slot boundaries: job 1 at 3 (-> 8.4, whole server 0), job 2 at 4 (-> 8.5, server 1);
    # job 0 needs a whole server: server 0 is free at 8.4, next slot 9 -> 15.0.
    res = simulate_asrpt(toy_instance(), tau=1.0)
    comp = res.jobs_frame().set_index("job_id")["completion"]
    assert res.summary()["total_completion_time"] == pytest.approx(31.9)
    assert comp.to_dict() == pytest.approx({0: 15.0, 1: 8.4, 2: 8.5})
    # continuous-time variant (no slot alignment)
    cont = simulate_asrpt(toy_instance(), tau=1.0, slotted=False)
    assert cont.summary()["total_completion_time"] == pytest.approx(30.0)


def _awkward():
    """Equal arrivals and sizes (ties), a whole-cluster job of two stages, an unseen job
    (predicted 0 iterations) and a late arrival, on 2 x 2 GPUs."""
    from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
    from optsched.core.cluster import Cluster

    cl = Cluster.homogeneous(2, 2, bandwidth_inter=1.25e9, bandwidth_intra=3e11)
    one = [Stage(k=1, p_f=0.2, p_b=0.3)]
    jobs = [
        AsrptJob(0, one, iterations=3, arrival=0.0, predicted_iterations=3),
        AsrptJob(1, one, iterations=3, arrival=0.0, predicted_iterations=3),
        AsrptJob(
            2,
            [Stage(k=2, p_f=0.2, p_b=0.2, d_out=1e6, h=1e6), Stage(k=2, p_f=0.1, p_b=0.1, d_in=1e6)],
            iterations=2,
            arrival=0.0,
            predicted_iterations=0,
        ),
        AsrptJob(3, one, iterations=1, arrival=2.0, predicted_iterations=1),
    ]
    return AsrptInstance(cl, jobs, name="awkward", slot=1.0)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=small_instances(max_jobs=4, M=2, g=2, max_it=3, max_bytes=1e7, max_arrival=3),
    tau=st.sampled_from([0.0, 0.5, 2.0]),
)
@example(inst=toy_instance(), tau=0.0)
@example(inst=_awkward(), tau=2.0)
def test_policies_feasible_and_lemma2_theorem1_hold(inst, tau):
    totals = []
    for name, pol in [("A-SRPT", None), *list(BASELINES().items())]:
        res = simulate_asrpt(inst, pol, tau=tau) if pol is None else simulate_asrpt(inst, pol)
        rep = verify(inst, res.schedule(), objective="total_completion_time")
        assert rep.ok, (name, rep.violations)
        starts = res.jobs_frame()["first_start"] / inst.slot
        assert ((starts - starts.round()).abs() < 1e-9).all()
        totals.append(rep.objectives["total_completion_time"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = solve_exact(inst, options=OPT)
    assert ex.optimal
    assert min(totals) >= ex.objective - ex.info["objective_rounding"] - 1e-6  # exact is a lower bound
    out = empirical_ratio(inst, ex.objective, tau=tau)
    assert out["ratio"] >= 1 - 1e-6  # slot-aligned policies cannot beat the slotted optimum
    assert out["theorem_1_holds"], out
    assert out["lemma_2_corrected_holds"], out
    # continuous-time A-SRPT too (starts need not be on the grid; OPT_A is still the slotted optimum)
    cont = empirical_ratio(inst, ex.objective, tau=tau, slotted=False)
    assert cont["lemma_2_corrected_holds"] and cont["theorem_1_corrected_holds"], cont


def test_unseen_jobs_go_first_and_options():
    inst = toy_instance()
    inst2 = inst.replace(jobs=tuple(j.replace(predicted_iterations=0) if j.id == 0 else j for j in inst.jobs))
    res = simulate_asrpt(inst2, tau=0.0)
    df = res.jobs_frame()
    assert df["first_start"].iloc[0] == pytest.approx(0.0)  # job 0 (unseen, ñ=0) starts at once
    with pytest.raises(InvalidOptionError, match="tau"):
        ASRPT(tau=-1)
    assert select_servers([1, 3, 2], 4, most=True) == {1: 3, 2: 1}
    assert select_servers([1, 3, 2], 3, most=False) == {0: 1, 2: 2}
    assert select_servers([1, 0], 2, most=True) is None


def test_overloaded_pai_like_workload_terminates_and_is_feasible():
    """Regression: zero-delay wake-ups (virtual completion or passed deadline at 'now') looped forever."""
    from optsched.experiments.asrpt.repro import build_instance, pai_like_table

    inst, eps = build_instance(pai_like_table(150, cluster_gpus=16, load=2.0, single_gpu=0.3, seed=3), n_servers=2)
    assert eps >= 0
    for pol in (None, BASELINES()["WCS-Duration"]):
        res = simulate_asrpt(inst, pol, tau=1.0) if pol is None else simulate_asrpt(inst, pol)
        assert verify(inst, res.schedule()).ok


@pytest.mark.slow
def test_reproduction_quick_runs():
    from optsched.experiments.asrpt.repro import reproduce

    res = reproduce(quick=True)
    assert set(res) == {"fig6", "fig7", "fig8", "fig9"}
    assert res["fig9"].loc["perfect", "eps_bar"] == 0


def _fragmenting_instance(tau_pred_c=0):
    """2 servers x 2 GPUs, 1-s slots. Job A (1 GPU, 20 s) and job B (2 GPUs, two compute-only stages, 100 s),
    both predicted 1 iteration, start at slot 1: A on server 0, B on the least-free servers, one GPU of each.
    A ends at 21 s, leaving one free GPU per server. Job C (a 2-replica stage with a 1 GB AllReduce:
    communication-heavy, alpha^max / alpha~min = 7.4) arrives at 30 s with prediction ``tau_pred_c``."""
    from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
    from optsched.core.cluster import Cluster

    cl = Cluster.homogeneous(2, 2, bandwidth_inter=1e9, bandwidth_intra=1e11)
    a = AsrptJob("A", [Stage(k=1, p_f=0.5, p_b=0.5)], iterations=20, predicted_iterations=1)
    b = AsrptJob(
        "B", [Stage(k=1, p_f=0.5, p_b=0.5), Stage(k=1, p_f=0.5, p_b=0.5)], iterations=100, predicted_iterations=1
    )
    c = AsrptJob(
        "C", [Stage(k=2, p_f=0.1, p_b=0.2, h=1e9)], iterations=10, arrival=30.0, predicted_iterations=tau_pred_c
    )
    return AsrptInstance(cl, [a, b, c], name="unseen-comm-heavy", slot=1.0)


@pytest.mark.parametrize("slotted", [True, False])
def test_unseen_communication_heavy_job_starts_at_once(slotted):
    """Item 3 of issue 16: with ñ = 0 the wait window of Line 16 is empty, so Line 20 starts the job at
    once on the servers Lines 9-10 chose, even though alpha / alpha~min > COMM_HEAVY there."""
    from optsched.asrpt.online import _JobInfo

    inst = _fragmenting_instance(0)
    info = _JobInfo(inst, inst.jobs[2], 0)
    assert info.comm_heavy and info.a_max / info.a_min > 7
    res = simulate_asrpt(inst, tau=1.0, slotted=slotted)
    df = res.jobs_frame().set_index("job_id")
    assert df.loc["A", "completion"] <= 30.0 < df.loc["B", "completion"]  # the cluster is fragmented at 30 s
    assert df.loc["C", "first_start"] == pytest.approx(30.0)
    assert df.loc["C", "completion"] == pytest.approx(30.0 + 10 * 2.3)  # split over both servers: alpha = 2.3 s
    assert verify(inst, res.schedule()).ok


def test_seen_communication_heavy_job_still_waits_within_its_window():
    """The same job with a prediction (ñ = 10: virtual size (2/4) 10 x 0.31 = 1.55 s, so it heads the queue at
    slot 32; window tau x 1.55 s -> Line 16 loops over slot 33 only) waits that slot for a better placement,
    finds none (B still runs) and starts at 33 (Line 20)."""
    inst = _fragmenting_instance(10)
    res = simulate_asrpt(inst, tau=1.0)
    df = res.jobs_frame().set_index("job_id")
    start = df.loc["C", "first_start"]
    assert start == pytest.approx(33.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rate_model_memo_on_sorted_counts_matches_heavy_edge_on_the_servers(data):
    """HeavyEdgeRate memoises alpha on (profile, sorted GPU counts): equal to Heavy-Edge run on the actual
    server ids (servers are identical, Heavy-Edge orders them by GPUs, ties by index)."""
    from optsched.asrpt.heavy_edge import heavy_edge, placement_counts
    from optsched.asrpt.rate import HeavyEdgeRate
    from optsched.asrpt.timing import alpha

    from .strategies import jobs

    job = data.draw(jobs(max_stages=3, max_k=3))
    inst = random_instance(1, n_servers=6, gpus_per_server=4, seed=0)
    ids = data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True))
    counts = [1] * len(ids)
    for _ in range(job.gpus - len(ids)):
        counts[data.draw(st.integers(0, len(ids) - 1))] += 1
    if job.gpus < len(ids) or max(counts) > inst.g:
        return
    pl = dict(zip(ids, counts, strict=True))
    direct = alpha(
        job, placement_counts(job, heavy_edge(job, {k: pl[k] for k in sorted(pl)}, seed=0), inst.M), instance=inst
    )
    assert HeavyEdgeRate().bind(inst.cluster).alpha(job, pl) == pytest.approx(direct, rel=1e-12)


class _ScanReference(OrderedPolicy):
    """The baselines' original rule, written plainly: sort all waiting jobs by key at every decision, start
    each one that fits (work-conserving) or stop at the first that does not (strict priority)."""

    def on_start(self, sim):
        super().on_start(sim)
        self.plain: list = []

    def on_arrival(self, sim, job):
        self.plain.append(job.id)

    def schedule(self, sim):
        from optsched.asrpt.online import _off_slot

        if self.plain and _off_slot(self, sim):
            return
        for jid in sorted(self.plain, key=self._k):
            pl = select_servers(sim.free_gpus, self.info[jid].job.gpus, most=True)
            if pl is None:
                if self.work_conserving:
                    continue
                break
            self.plain.remove(jid)
            sim.start(jid, pl)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=small_instances(max_jobs=40, M=3, g=4, max_it=20, max_bytes=1e8, max_arrival=10),
    key=st.sampled_from(["duration", "workload", "subtime"]),
    wc=st.booleans(),
)
@example(
    inst=random_instance(30, n_servers=3, gpus_per_server=4, seed=1, single_gpu=0.5, arrival_rate=3.0),
    key="workload",
    wc=True,
)
def test_baselines_per_demand_queues_match_the_plain_scan(inst, key, wc):
    a = simulate_asrpt(inst, OrderedPolicy(key=key, work_conserving=wc)).jobs_frame()
    b = simulate_asrpt(inst, _ScanReference(key=key, work_conserving=wc)).jobs_frame()
    assert a.set_index("job_id")["first_start"].to_dict() == pytest.approx(
        b.set_index("job_id")["first_start"].to_dict()
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=small_instances(max_jobs=12, M=2, g=4, max_it=10, max_bytes=1e8, max_arrival=6),
    tau=st.sampled_from([0.0, 1.0, 4.0]),
)
def test_backfill_variant_is_feasible_and_slot_aligned(inst, tau):
    """ASRPT(backfill=True), a diagnostic variant (not Algorithm 1): every schedule verifies and starts on
    the slot grid; the default is Algorithm 1 (backfill off). That it starts a fitting job behind a
    blocked head is the hand-made case below."""
    assert ASRPT().backfill is False
    res = simulate_asrpt(inst, ASRPT(tau=tau, backfill=True))
    rep = verify(inst, res.schedule(), objective="total_completion_time")
    assert rep.ok, rep.violations
    starts = res.jobs_frame()["first_start"] / inst.slot
    assert ((starts - starts.round()).abs() < 1e-9).all()


def test_backfill_starts_a_small_job_behind_a_head_that_does_not_fit():
    """Two servers x 2 GPUs. Job 0 (2 GPUs, predicted 1 iteration, runs 1,000) is started at once and
    holds half the cluster; job 1 (4 GPUs) completes in Ã_1 first and heads the pending queue but cannot
    fit; job 2 (1 GPU) completes in Ã_1 later, behind it. Algorithm 1 keeps job 2 waiting until job 1
    has run; the backfill variant starts it on the free GPUs."""
    from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
    from optsched.core.cluster import Cluster

    cl = Cluster.homogeneous(2, 2, bandwidth_inter=1.25e9, bandwidth_intra=3e11)
    jobs = [
        AsrptJob(0, [Stage(k=2, p_f=0.1, p_b=0.2)], iterations=1000, arrival=0.0, predicted_iterations=1),
        AsrptJob(1, [Stage(k=4, p_f=0.1, p_b=0.2)], iterations=10, arrival=2.0),
        AsrptJob(2, [Stage(k=1, p_f=0.1, p_b=0.2)], iterations=100, arrival=6.0),
    ]
    inst = AsrptInstance(cl, jobs, name="hol", slot=1.0)
    strict = simulate_asrpt(inst, ASRPT(tau=0.0)).jobs_frame().set_index("job_id")["first_start"]
    res = simulate_asrpt(inst, ASRPT(tau=0.0, backfill=True))
    back = res.jobs_frame().set_index("job_id")["first_start"]
    assert strict[2] > strict[1] > 100  # Algorithm 1: the small job waits behind the blocked head
    assert back[2] < 20 and back[1] == pytest.approx(strict[1])
    assert verify(inst, res.schedule()).ok
    with pytest.raises(InvalidOptionError, match="'backfill' option of A-SRPT must be True or False"):
        ASRPT(backfill="yes")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(2, 12),
    backfill=st.booleans(),
    b_inter=st.sampled_from([1.25e8, 1.25e9]),
)
def test_never_split_variant_starts_a_comm_heavy_job_only_consolidated_or_on_an_idle_cluster(
    seed, n, backfill, b_inter
):
    """ASRPT(split_heavy=False), the prose of Sec. IV-C: every schedule verifies, and a communication-heavy
    job starts only on a placement that passes Line 12's test (alpha / alpha~min <= 1.5), or when no other
    job runs. Algorithm 1 (Line 20) instead starts it anywhere once its window ends."""
    inst = random_instance(
        n, n_servers=2, gpus_per_server=4, seed=seed, single_gpu=0.2, arrival_rate=2.0, b_inter=b_inter
    )
    pol = ASRPT(tau=0.5, backfill=backfill, split_heavy=False)
    assert ASRPT().split_heavy is True
    res = simulate_asrpt(inst, pol)
    assert verify(inst, res.schedule(), objective="total_completion_time").ok
    f = res.jobs_frame().set_index("job_id")
    for jid, a in pol.started_alpha.items():
        info = pol.info[jid]
        if not info.comm_heavy or a / info.a_min <= pol.comm_heavy + 1e-12:
            continue
        t = f.loc[jid, "first_start"]
        others = f.drop(index=jid)
        assert not ((others["first_start"] < t - 1e-9) & (others["completion"] > t + 1e-9)).any(), jid


def test_never_split_waits_where_algorithm_1_splits():
    """Two servers x 2 GPUs, 10 Gbit/s. Jobs 0-2 (one GPU, predicted one iteration, so they start at
    slot 1 in arrival order) fill server 0 and one GPU of server 1 (least free GPUs first); job 0 ends at
    4 s, leaving one free GPU on each server until jobs 1 and 2 end at 301 s. Job 3 (2 GPUs, 500 MB of
    gradients: communication-heavy) arrives at 20 s. Algorithm 1 with tau = 0 (an empty window, Line
    20) starts it split within seconds; split_heavy=False waits until a server is whole."""
    from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
    from optsched.core.cluster import Cluster

    cl = Cluster.homogeneous(2, 2, bandwidth_inter=1.25e9, bandwidth_intra=3e11)
    one = [Stage(k=1, p_f=0.1, p_b=0.2)]
    jobs = [
        AsrptJob(0, one, iterations=10, arrival=0.0, predicted_iterations=1),
        AsrptJob(1, one, iterations=1000, arrival=0.1, predicted_iterations=1),
        AsrptJob(2, one, iterations=1000, arrival=0.2, predicted_iterations=1),
        AsrptJob(3, [Stage(k=2, p_f=0.1, p_b=0.2, h=500e6)], iterations=10, arrival=20.0),
    ]
    inst = AsrptInstance(cl, jobs, name="split", slot=1.0)
    lit_pol, ns_pol = ASRPT(tau=0.0), ASRPT(tau=0.0, split_heavy=False)
    lit = simulate_asrpt(inst, lit_pol)
    ns = simulate_asrpt(inst, ns_pol)
    t_lit = lit.jobs_frame().set_index("job_id")["first_start"]
    t_ns = ns.jobs_frame().set_index("job_id")["first_start"]
    assert t_lit[3] < 30.0  # at the first slot after it completes in the virtual machine
    assert lit_pol.started_alpha[3] / lit_pol.info[3].a_min > 1.5  # split: the NIC carries the AllReduce
    assert t_ns[3] >= 301.0 - 1e-9 and ns_pol.started_alpha[3] == pytest.approx(ns_pol.info[3].a_min)
    assert verify(inst, ns.schedule()).ok
    with pytest.raises(InvalidOptionError, match="'split_heavy' option of A-SRPT must be True or False"):
        ASRPT(split_heavy=1)


class _Unmemoised(ASRPT):
    """A-SRPT computing Heavy-Edge's most-free placement and its alpha afresh at every look (the memo of
    :meth:`ASRPT.most_free` removed): the reference the memo must equal."""

    def most_free(self, sim, jid):
        job = self.info[jid].job
        pl = select_servers(sim.free_gpus, job.gpus, most=True)
        return pl, (None if pl is None else self.rate_model.alpha(job, pl))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_jobs=st.integers(5, 40),
    arrival_rate=st.sampled_from([0.5, 2.0, 8.0]),
    tau=st.sampled_from([0.0, 1.0, 4.0]),
    backfill=st.booleans(),
    split_heavy=st.booleans(),
)
def test_the_memo_of_most_free_gives_the_unmemoised_schedule_exactly(
    seed, n_jobs, arrival_rate, tau, backfill, split_heavy
):
    """The memoised most-free placements and alphas (kept while the free GPUs stay the same) start
    every job at the same time on the same GPUs as computing them at every look."""
    inst = random_instance(n_jobs, n_servers=3, gpus_per_server=4, single_gpu=0.3, arrival_rate=arrival_rate, seed=seed)
    kw = dict(tau=tau, backfill=backfill, split_heavy=split_heavy)
    a = simulate_asrpt(inst, ASRPT(**kw))
    b = simulate_asrpt(inst, _Unmemoised(**kw))
    assert a.jobs_frame().to_dict("records") == b.jobs_frame().to_dict("records")
    assert a.schedule().json_text() == b.schedule().json_text()  # the same GPUs, the same times
