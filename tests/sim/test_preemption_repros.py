"""Issue 24's repros 1-6: the schedules R1-R12 (formulations/lazer.md) prescribe.

Each expected value is derived by hand from the rules (the derivation is in the docstring) and
checked twice: against the engine, and against the independent reference simulator
(``tests/sim/reference_sim.py``), so a wrong derivation fails too. Notation: a job is
name(arrival, work, ℓ, p, g), g = 1 and ℓ = p = 0 unless given; one server; work in seconds.
Every engine run is bounded (see ``test_differential.run_bounded``): a run that churns fails
instead of hanging.
"""

from __future__ import annotations

import pytest

from .reference_sim import JobSpec as J
from .test_differential import engine_results, reference_results


def _both(gpus, jobs, family, **opts):
    """(engine, reference) per-job results, {name: {field: value}}."""
    return (
        engine_results((gpus,), jobs, family, **opts),
        reference_results((gpus,), jobs, family, **opts),
    )


def _expect(results, expected):
    """Every expected (job, field) value, on the engine and on the reference."""
    eng, ref = results
    for who, res in (("reference", ref), ("engine", eng)):
        got = {(n, f): res[n][f] for n, fields in expected.items() for f in fields}
        want = {(n, f): float(v) for n, fields in expected.items() for f, v in fields.items()}
        bad = {k: (got[k], want[k]) for k in want if got[k] != pytest.approx(want[k], abs=1e-9)}
        assert not bad, f"{who}: (job, field): (got, expected) {bad}"


@pytest.mark.parametrize("reserve", ["best", "preemptor"])
def test_repro1_finish_mode_ends_without_churn(reserve):
    """2 GPUs, finish mode, p = 0: B(0, 10, ℓ2), A(1, 1, g=2), C(1, 10, ℓ2).

    t=1: A (R=1) has 1 free GPU, needs 2; B (R=9... loading, R=10 by R4) is strictly worse and
    not started now: preempted (R11); B is loading, finish mode: its load runs to 2 and is lost
    (futile 2). A claims B's GPU, then the free one, and waits. C (R=10): nothing available (the
    free GPU is A's), no running job worse than it: passes (R12); nobody takes A's free GPU (R6).
    t=2: B's lost load ends; A starts on both GPUs, ends at 3. t=3: B (key (10, 0, 0)) and C start,
    load 3-5, train 5-15.
    """
    jobs = [J("B", 0, 10, 2, 0), J("A", 1, 1, 0, 0, 2), J("C", 1, 10, 2, 0)]
    _expect(
        _both(2, jobs, "srtf", reserve=reserve, preempt_loading="finish"),
        {
            "A": {"first_start": 2, "completion": 3, "n_preemptions": 0},
            "B": {"completion": 15, "n_preemptions": 1, "n_futile": 1, "futile": 2, "L": 4, "W": 1},
            "C": {"first_start": 3, "completion": 15, "n_preemptions": 0, "n_futile": 0},
        },
    )


@pytest.mark.parametrize("reserve", ["best", "preemptor"])
def test_repro1_abort_mode_a_ends_at_4(reserve):
    """2 GPUs, abort mode, ℓ = 0, p = 2: B(0, 10), A(1, 1, g=2), C(1, 10).

    t=1: A preempts B (trained 1 s: saves 1-3, R11) and claims B's GPU and the free one; C finds
    nothing available and no worse running job (R12). t=3: B's save ends; A starts, ends at 4.
    t=4: B (9 left) and C start; B ends at 13, C at 14.
    """
    jobs = [J("B", 0, 10, 0, 2), J("A", 1, 1, 0, 2, 2), J("C", 1, 10, 0, 2)]
    _expect(
        _both(2, jobs, "srtf", reserve=reserve, preempt_loading="abort"),
        {
            "A": {"first_start": 3, "completion": 4},
            "B": {"completion": 13, "n_preemptions": 1, "P": 2, "W": 1},
            "C": {"first_start": 4, "completion": 14, "n_preemptions": 0},
        },
    )


@pytest.mark.parametrize("reserve", ["best", "preemptor"])
def test_repro2_two_preemptors_in_one_round(reserve):
    """2 GPUs, p = 1: A(0, 10), B(0, 10), C(1, 1), D(1, 1).

    t=1: C (key (1, 1, 2)) preempts the worst running job, B (key (9, 0, 1) > A's (9, 0, 0));
    B saves 1-2, C claims its GPU. D is next: its soon-available GPUs are none (B's is C's), so
    it preempts A (R11; several jobs may preempt in one round). t=2: both saves end, C and D
    start, end at 3: D's JCT is 2. A and B restart at 3 (9 left) and end at 12.
    """
    jobs = [J("A", 0, 10, 0, 1), J("B", 0, 10, 0, 1), J("C", 1, 1, 0, 1), J("D", 1, 1, 0, 1)]
    _expect(
        _both(2, jobs, "srtf", reserve=reserve),
        {
            "C": {"first_start": 2, "completion": 3},
            "D": {"first_start": 2, "completion": 3},
            "A": {"completion": 12, "n_preemptions": 1, "P": 1},
            "B": {"completion": 12, "n_preemptions": 1, "P": 1},
        },
    )


@pytest.mark.parametrize("reserve", ["best", "preemptor"])
def test_repro2_periodic_second_preemptor_does_not_wait_a_period(reserve):
    """The same jobs under periodic SRTF, P = 2: both preemptions happen at the tick at 2.

    t=2 (tick): C preempts B, D preempts A (saves 2-3), each claims its victim's GPU. t=3 (no
    tick): a job holding a claim starts when it fits its available GPUs: C and D start, end at 4.
    A and B wait for the tick at 4 (no claim), restart there, end at 12.
    """
    jobs = [J("A", 0, 10, 0, 1), J("B", 0, 10, 0, 1), J("C", 1, 1, 0, 1), J("D", 1, 1, 0, 1)]
    _expect(
        _both(2, jobs, "srtf-periodic", reserve=reserve, period=2),
        {
            "C": {"first_start": 3, "completion": 4},
            "D": {"first_start": 3, "completion": 4},
            "A": {"completion": 12, "n_preemptions": 1},
            "B": {"completion": 12, "n_preemptions": 1},
        },
    )


def test_repro3_loading_job_is_ranked_by_its_whole_remaining_work():
    """2 GPUs: A(0, 9, p1), B(1, 6, ℓ4, p1), C(4, 1).

    t=1: B starts on the free GPU, loads 1-5. t=4: C arrives (R=1); A has 5 s left, B 6 s (R4: a
    loading job's R is its whole remaining work, the load is not counted): B is the worst and the
    victim; it is loading, abort mode: its GPU is free at once, 3 s of load are futile; C starts
    at 4, ends at 5. t=5: B restarts, loads 5-9, trains 9-15. A is never preempted, ends at 9.
    """
    jobs = [J("A", 0, 9, 0, 1), J("B", 1, 6, 4, 1), J("C", 4, 1)]
    _expect(
        _both(2, jobs, "srtf", reserve="best"),
        {
            "A": {"completion": 9, "n_preemptions": 0},
            "B": {"completion": 15, "n_preemptions": 1, "n_futile": 1, "futile": 3, "L": 7},
            "C": {"first_start": 4, "completion": 5},
        },
    )


def test_repro4_no_rounds_on_stale_entries():
    """3 GPUs, SRTF best: A(1, 8, ℓ2), B(1, 7, p2), C(2, 4, ℓ2, p1, g=3).

    t=1: B (R=7) then A (R=8) start; A loads 1-3. t=2: C needs 3 GPUs, 1 is free; victims worst
    first: A (8), then B (6): both needed. A is loading: aborted, 1 s futile; B saves 2-4. The
    follow-up round (A's GPU freed at once, R3) remakes the claims: C claims B's GPU and the two
    free ones; A finds no worse running job. t=3: nothing happens (A's old load end was
    cancelled: no round, R3). t=4: B's save ends, C starts, loads 4-6, ends at 10. t=10: B and A
    restart; B ends at 16, A (load 10-12) at 20. A is preempted once.
    """
    jobs = [J("A", 1, 8, 2, 0), J("B", 1, 7, 0, 2), J("C", 2, 4, 2, 1, 3)]
    _expect(
        _both(3, jobs, "srtf", reserve="best"),
        {
            "A": {"completion": 20, "n_preemptions": 1, "n_futile": 1, "futile": 1},
            "B": {"completion": 16, "n_preemptions": 1, "P": 2},
            "C": {"first_start": 4, "completion": 10, "n_preemptions": 0},
        },
    )


@pytest.mark.parametrize("reserve", ["best", "preemptor"])
def test_repro5_ties_among_victims_go_by_the_key(reserve):
    """2 GPUs, ℓ = p = 0: A(0, 4), B(1, 3), C(2, 1).

    t=2: A and B both have 2 s left; keys (2, 0, 0) and (2, 1, 1): B is worse (R4, later
    arrival) and is the victim; C runs 2-3; B is not strictly worse than A (R5), waits, restarts
    at 3 and ends at 5; A ends at 4.
    """
    jobs = [J("A", 0, 4), J("B", 1, 3), J("C", 2, 1)]
    _expect(
        _both(2, jobs, "srtf", reserve=reserve),
        {
            "A": {"completion": 4, "n_preemptions": 0},
            "B": {"completion": 5, "n_preemptions": 1},
            "C": {"first_start": 2, "completion": 3},
        },
    )


@pytest.mark.parametrize("reserve", ["best", "preemptor"])
def test_repro5_pending_preemptor_takes_any_available_gpu(reserve):
    """2 GPUs: A(0, 3), B(0, 10, p4), C(1, 2), D(3, 5).

    t=1: C (R=2) preempts B (9 > 2; A's 2 is not strictly worse); B saves 1-5; C claims B's GPU.
    t=3: A ends. C fits its available GPUs (A's freed GPU, unclaimed; R6/R8): starts on it at 3,
    its claim ends. D (R=5) claims B's GPU, still being saved (R10). t=5: B's save ends, C ends:
    D starts on its claimed GPU (ends at 10), B restarts on C's (9 left, ends at 14).
    """
    jobs = [J("A", 0, 3), J("B", 0, 10, 0, 4), J("C", 1, 2), J("D", 3, 5)]
    _expect(
        _both(2, jobs, "srtf", reserve=reserve),
        {
            "A": {"completion": 3},
            "B": {"completion": 14, "n_preemptions": 1, "P": 4, "W": 0},
            "C": {"first_start": 3, "completion": 5},
            "D": {"first_start": 5, "completion": 10},
        },
    )


def test_repro6_periodic_preemptor_starts_when_the_save_ends():
    """Periodic SRTF (best), P = 10, 1 GPU, ℓ = 1, p = 2: A(0, 100), B(10, 5).

    t=0 (tick): A starts, loads 0-1. t=10 (tick): B (R=5) preempts A (91 left), A saves 10-12, B
    claims its GPU. t=12 (save end, no tick): B holds a claim and fits: starts at 12, loads
    12-13, ends at 18. t=18: no tick, A holds no claim: waits for the tick at 20, loads 20-21,
    ends at 112.
    """
    jobs = [J("A", 0, 100, 1, 2), J("B", 10, 5, 1, 2)]
    _expect(
        _both(1, jobs, "srtf-periodic", reserve="best", period=10),
        {
            "B": {"first_start": 12, "completion": 18, "W": 2},
            "A": {"completion": 112, "n_preemptions": 1, "P": 2, "W": 8},
        },
    )


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0, {"A": {"completion": 37}, "B": {"completion": 18, "n_futile": 1, "futile": 2}, "C": {"completion": 11}}),
        (10, {"A": {"completion": 35}, "B": {"completion": 23, "n_futile": 0}, "C": {"completion": 26}}),
    ],
)
def test_lazer_fixed_deferral_by_hand(x, expected):
    """Lazer (reading 4), 1 GPU, ℓ = 2, p = 1: A(0, 20), B(5, 5), C(8, 1).

    X = 0: B preempts A at 5 (A saves 5-6), B loads 6-8; C arrives at 8 as B's load ends, C's 1
    s beats B's 5: B's whole load is futile (eq. (2), boundary), C starts at once, ends at 11;
    the completion handler starts B (11-18), then A (7 s left, ends 37).
    X = 10: B's preemption is deferred to 15 (B in DWQ, A in DRQ); C at 8 finds no RQ job: WQ.
    At 15 A (7 left) is preempted (saves 15-16), B starts at 16 and ends at 23; the handler
    starts C (23-26), then A (26-35).
    """
    jobs = [J("A", 0, 20, 2, 1), J("B", 5, 5, 2, 1), J("C", 8, 1, 2, 1)]
    _expect(_both(1, jobs, "lazer", deferral=x), expected)


@pytest.mark.parametrize("reserve", ["best", "preemptor"])
def test_r11_drops_the_victims_not_needed_best_first(reserve):
    """3 GPUs, p = 0: A(0, 100, g=1), B(0, 50, g=2), C(1, 1, g=2).

    t=0: A and B start (3 GPUs). t=1: C (R=1) finds nothing free; the strictly worse running jobs,
    worst first: A (R=99, 1 GPU: 1 < 2), then B (R=49: 3 >= 2). Victims not needed are dropped
    best first (R11): B cannot go (3 - 2 = 1 < 2), A can (3 - 1 = 2 >= 2, exactly enough): only
    B is preempted. C runs 1-2; B resumes at 2 and ends at 51; A is never preempted, ends at 100.
    """
    jobs = [J("A", 0, 100, 0, 0, 1), J("B", 0, 50, 0, 0, 2), J("C", 1, 1, 0, 0, 2)]
    _expect(
        _both(3, jobs, "srtf", reserve=reserve),
        {
            "A": {"completion": 100, "n_preemptions": 0},
            "B": {"completion": 51, "n_preemptions": 1},
            "C": {"first_start": 1, "completion": 2, "n_preemptions": 0},
        },
    )


def test_r1_a_job_trains_at_its_rate():
    """R1 at a rate other than 1 (the reference simulator has rate 1 only; derived by hand): one
    GPU, rate 2, A(0, 12), B(1, 2). A does 2 s of work by t=1 (10 left); B (R=2) preempts it
    (p = 0) and runs 1-2 (2 s of work at rate 2); A resumes at 2 and ends at 2 + 10 / 2 = 7."""
    from optsched.core import Cluster, Job
    from optsched.sim import SRTF, ConstantRate, Simulator

    jobs = [Job("A", work=12.0), Job("B", work=2.0, arrival=1.0)]
    res = Simulator(Cluster.homogeneous(1, 1), jobs, SRTF(), rate_model=ConstantRate(2.0)).run()
    f = res.jobs_frame().set_index("job_id")
    assert f["completion"].to_dict() == pytest.approx({"A": 7.0, "B": 2.0})
    assert f["n_preemptions"].to_dict() == {"A": 1, "B": 0}
