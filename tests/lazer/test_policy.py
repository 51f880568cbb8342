"""Lazer's Alg. 1/2 readings on hand-made cases; the registry; bad input."""

import pytest

from optsched.core import Cluster, Job
from optsched.exceptions import InvalidOptionError
from optsched.lazer import FixedDeferral, Lazer, OracleDeferral, counterfactual_f
from optsched.sim import Simulator, get_policy, policy_registry


def _run(jobs, pol, gpus=1, **kw):
    res = Simulator(Cluster.homogeneous(1, gpus), jobs, pol, load_time=1.0, save_time=2.0, **kw).run()
    return res, res.jobs_frame().set_index("job_id")


def test_idle_cluster_starts_at_once():
    _, df = _run([Job("A", work=5, arrival=3)], Lazer())
    assert df.loc["A", "first_start"] == pytest.approx(3.0)


@pytest.mark.parametrize("x, b_start", [(0.0, 22.0), (10.0, 32.0)])
def test_deferral_moves_the_preemption_to_t0_plus_x(x, b_start):
    pol = Lazer(deferral=x)
    _, df = _run([Job("A", work=100), Job("B", work=10, arrival=20)], pol)
    assert df.loc["B", "first_start"] == pytest.approx(b_start)  # + A's 2 s save
    assert len(pol.decisions) == 1 and pol.decisions[0].x == pytest.approx(x)
    assert pol.decisions[0].victims == ("A",)


def test_deferred_victims_are_hidden_from_other_arrivals():
    pol = Lazer(deferral=10.0)
    jobs = [Job("A", work=100), Job("A2", work=90), Job("B", work=10, arrival=20), Job("C", work=5, arrival=25)]
    _, df = _run(jobs, pol, gpus=2)
    # B defers with J_r = {A} (longest); C's orchestrator sees only A2 (A is in DRQ)
    assert pol.decisions[0].victims == ("A",) and pol.decisions[1].victims == ("A2",)
    assert df.loc["A", "n_preemptions"] == 1 and df.loc["A2", "n_preemptions"] == 1
    assert df.loc["B", "first_start"] == pytest.approx(32.0)
    assert df.loc["C", "first_start"] == pytest.approx(37.0)  # C deferred too: 25 + 10 + 2


def test_a_deferral_ending_at_a_completion_competes_in_the_completion_handler():
    """Reading 4: j_new, whose deferral ends as a job completes, competes in the handler (SRTF
    order over WQ and it) instead of going through the orchestrator after the handler.

    2 GPUs, ℓ = 1, p = 2, X = 10. A and C start at 0 (train from 1; C completes at 16); D (100)
    waits in WQ (A's remaining 99 is not longer); B (20) arrives at 6: J_r = {A}, deferred to 16.
    At 16 the handler takes B (20) before D (100): B starts on C's GPU, A is never preempted and
    D starts when B completes (37). Were B orchestrated after the handler, D would start at 16
    (a job started at this very time is no victim) and B would preempt A (B starts at 18, after
    A's save)."""
    pol = Lazer(deferral=10.0)
    jobs = [Job("A", work=100), Job("C", work=15), Job("D", work=100, arrival=2), Job("B", work=20, arrival=6)]
    _, df = _run(jobs, pol, gpus=2)
    assert len(pol.decisions) == 1 and pol.decisions[0].victims == ("A",)
    assert df.loc["B", "first_start"] == pytest.approx(16.0)
    assert df.loc["A", "n_preemptions"] == 0 and df.loc["A", "completion"] == pytest.approx(101.0)
    assert df.loc["D", "first_start"] == pytest.approx(37.0)
    assert df.loc["D", "completion"] == pytest.approx(138.0)


def test_no_candidate_goes_to_wq_until_a_completion():
    pol = Lazer()
    _, df = _run([Job("A", work=10), Job("B", work=50, arrival=2)], pol)
    assert not pol.decisions  # B is longer than A: no J_r
    assert df.loc["B", "first_start"] == pytest.approx(11.0)  # A's load 1 + 10 s training


def test_oracle_sets_x_to_the_counterfactual_f():
    pol = Lazer(deferral="oracle")
    jobs = [Job("A", work=100), Job("B", work=50, arrival=20), Job("C", work=5, arrival=22.5)]
    _, df = _run(jobs, pol)
    # B at t0 = 20: A saves until 22, B would load 22..23; C (shorter) arrives at 22.5: F = 0.5
    d = pol.decisions[0]
    assert d.x == pytest.approx(0.5)
    assert d.x == pytest.approx(counterfactual_f([0, 20, 22.5], [100, 50, 5], 20, 2.0, 1.0, 50))
    assert df["n_futile"].sum() == 0


def test_feedback_observes_f_after_the_load_window():
    class Record(FixedDeferral):
        needs_feedback = True

        def reset(self, sim, policy):
            self.seen = []

        def observe(self, decision):
            self.seen.append((decision.f, decision.x))

    ch = Record(0.0)
    _, df = _run(
        [Job("A", work=100), Job("B", work=50, arrival=20), Job("C", work=5, arrival=22.5)], Lazer(deferral=ch)
    )
    assert ch.seen[0][0] == pytest.approx(0.5)  # F observed even though X = 0 let B load
    assert df.loc["B", "n_futile"] == 1  # and that load was cut by C: futile


def test_registry():
    reg = policy_registry()
    for name in ("lazer", "lazer-zero", "lazer-fixed", "lazer-oracle"):
        assert reg[name].paper == "lazer"
    assert isinstance(get_policy("lazer", deferral=30), Lazer)
    assert get_policy("lazer-fixed", x=10).deferral.x == pytest.approx(10.0)
    assert isinstance(get_policy("lazer-oracle").deferral, OracleDeferral)


def test_bad_options():
    with pytest.raises(InvalidOptionError, match="'secured'"):
        Lazer(secured="some")
    with pytest.raises(InvalidOptionError, match="fixed deferral 'x'"):
        Lazer(deferral=-1.0)
    with pytest.raises(InvalidOptionError, match="'deferral' option"):
        Lazer(deferral="later")


def test_the_srtf_baselines_are_the_shared_classes():
    from optsched.lazer import baselines
    from optsched.sim import SRTF, PeriodicSRTF

    assert type(baselines.baseline("srtf")) is SRTF and type(baselines.baseline("srtf-60")) is PeriodicSRTF


def test_p_star_is_the_longest_save_of_the_victims():
    """(L3)'s p* is the longest save time among J_r: 2 GPUs, A (save 2 s) and A2 (save 5 s) train
    from 1 (load 1 s); B (2 GPUs) arrives at 20 and needs both: J_r = {A, A2}, p* = 5, and with
    X = 0 B loads once both saves are over (25) and trains from 26."""
    pol = Lazer(deferral=0.0)
    jobs = [Job("A", work=100, save_time=2), Job("A2", work=90, save_time=5), Job("B", work=10, gpus=2, arrival=20)]
    res = Simulator(Cluster.homogeneous(1, 2), jobs, pol, load_time=1.0).run()
    df = res.jobs_frame().set_index("job_id")
    (d,) = pol.decisions
    assert sorted(d.victims) == ["A", "A2"]
    assert d.p_star == pytest.approx(5.0)
    assert df.loc["B", "first_start"] == pytest.approx(25.0)


def test_counterfactual_f_window_is_open_below_and_closed_above():
    """(L3): the first arrival A' with t0 + p* < A' <= t0 + p* + l_new and a duration shorter than
    t_new; here t0 = 0, p* = 2, l_new = 10, t_new = 20: the window is (2, 12]."""
    assert counterfactual_f([0, 12], [50, 1], t0=0, p_star=2, l_new=10, t_new=20) == pytest.approx(10)  # at 12: in
    assert counterfactual_f([0, 2], [50, 1], t0=0, p_star=2, l_new=10, t_new=20) == 0  # at 2: out
    assert counterfactual_f([0, 12.5], [50, 1], t0=0, p_star=2, l_new=10, t_new=20) == 0  # after 12: out
    assert counterfactual_f([0, 5], [50, 20], t0=0, p_star=2, l_new=10, t_new=20) == 0  # not shorter than t_new
    assert counterfactual_f([0, 5, 7], [50, 20, 3], t0=0, p_star=2, l_new=10, t_new=20) == pytest.approx(5)


@pytest.mark.parametrize(
    "deferral, x", [(None, 0.0), ("zero", 0.0), (30, 30.0), (FixedDeferral(7.5), 7.5), ("oracle", None)]
)
def test_compiled_deferral_is_the_fixed_x_or_none(deferral, x):
    assert Lazer(deferral=deferral).compiled_deferral() == x


def test_a_subclass_of_fixed_deferral_is_not_taken_for_a_fixed_x():
    class Late(FixedDeferral):
        def choose(self, sim, policy, decision):
            return self.x + 1

    assert Lazer(deferral=Late(5)).compiled_deferral() is None


def test_the_kernel_refuses_a_chooser_it_does_not_have_and_names_it():
    pytest.importorskip("numba")
    jobs = [Job("A", work=100), Job("B", work=10, arrival=20)]
    with pytest.raises(InvalidOptionError, match="OracleDeferral"):
        Simulator(Cluster.homogeneous(1, 1), jobs, Lazer(deferral="oracle"), engine="compiled")


@pytest.mark.parametrize("x", [0.0, 10.0])
def test_the_kernel_runs_the_hand_made_deferral_case_as_the_python_engine(x):
    """The case of test_deferral_moves_the_preemption_to_t0_plus_x on the compiled kernel: B starts
    at t0 + X + A's save (the kernel keeps no decisions)."""
    pytest.importorskip("numba")
    _, df = _run([Job("A", work=100), Job("B", work=10, arrival=20)], Lazer(deferral=x), engine="compiled")
    assert df.loc["B", "first_start"] == pytest.approx(22.0 + x)
    assert df.loc["A", "n_preemptions"] == 1


@pytest.mark.parametrize("placement", ["consolidate", "first_fit", "least_loaded", "whole_node"])
def test_the_kernel_replays_lazer_bit_for_bit_on_a_busy_cluster_with_tiny_buffers(placement, monkeypatch):
    """300 synthetic jobs (1-8 GPUs on 4-GPU servers: jobs that span servers) at load 1.2 with 30 s
    loads and 10 s saves, X = 0 and 30 s, both ``secured`` modes, on each placement rule the kernel
    has; the kernel runs in chunks of 3 event times from buffers of one row with stale heap rows
    dropped at once (the deferral timers survive that): the same job table to the last bit, the
    same events and log as the Python engine."""
    pytest.importorskip("numba")
    import numpy as np

    from optsched.sim.compiled import driver as D
    from optsched.traces import synthetic_workload

    from ..sim.test_kernel import assert_same

    cluster = Cluster.homogeneous(3, 4)
    df = synthetic_workload(300, cluster_gpus=cluster.total_gpus, load=1.2, max_duration=7200.0, seed=3)
    kw = dict(load_time=30.0, save_time=10.0, record_log=True)
    deferred = 0
    for x in (0.0, 30.0):
        for secured in ("all", "released"):

            def pol(x=x, secured=secured):
                return Lazer(deferral=x, secured=secured, placement=placement)

            p = pol()
            want = Simulator(cluster, df, p, engine="python", **kw).run()
            deferred += sum(d.x > 0 for d in p.decisions)
            with monkeypatch.context() as m:
                m.setattr(D.CompiledRun, "BUDGET", 3)
                m.setattr(D.CompiledRun, "EVENT_SLACK", 0)
                m.setattr(D.CompiledRun, "RUN_SLACK", 0)
                got = Simulator(cluster, df, pol(), engine="compiled", **kw)._compiled.run(None, initial=1)
            assert_same(got, want)
            a, b = got.job_columns(), want.job_columns()
            for c in a:
                if np.asarray(a[c]).dtype.kind == "f":
                    assert np.array_equal(a[c], b[c], equal_nan=True), c
    assert deferred > 0  # the deferral timers were exercised


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_a_deferral_ending_at_a_completion_competes_in_the_handler(engine):
    """Reading 4 on both engines. 2 GPUs, 1 s loads, 2 s saves. At 0, C (work 30), A (100) and W (150)
    arrive: C and A start, W waits in WQ (no running job is longer). B (work 10) arrives at 21, when
    C has 10 left (not longer than B), so J_r = {A} and B is deferred to 21 + 10 = 31, when C
    completes (0 + 1 + 30). The handler at 31 runs over WQ and B: B (shorter than W) takes C's GPU,
    A is never preempted, and W starts when B completes (31 + 1 + 10). Were B left out of the
    handler, W would take the GPU and B would preempt A."""
    if engine == "compiled":
        pytest.importorskip("numba")
    jobs = [Job("C", work=30), Job("A", work=100), Job("W", work=150), Job("B", work=10, arrival=21)]
    _, df = _run(jobs, Lazer(deferral=10.0), gpus=2, engine=engine)
    assert df.loc["C", "completion"] == pytest.approx(31.0)
    assert df.loc["B", "first_start"] == pytest.approx(31.0)
    assert df.loc["W", "first_start"] == pytest.approx(42.0)
    assert df["n_preemptions"].sum() == 0
