"""A_maxweight (Alg. 3) with the Thm 3 certificate, and A_online (Alg. 1-2) against the exact optima."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.elastic import toy_instance
from optsched.elastic.bounds import certificate, thm5_check
from optsched.elastic.checks import evaluate_objective, violations
from optsched.elastic.exact import solve_exact, solve_maxweight
from optsched.elastic.generate import random_instance
from optsched.elastic.primal_dual import a_maxweight, a_online, alpha_printed, alpha_thm5
from optsched.elastic.schedule import ElasticSchedule
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.solvers import SolveOptions
from optsched.verify import verify_result

from .strategies import small_instances

OPTS = SolveOptions(time_limit=30, threads=1)


def _run_schedule(inst, run):
    return ElasticSchedule({inst.jobs[j].id: c.config.assignment(c.start) for j, c in run.chosen.items()})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    small_instances(max_jobs=4, max_servers=2, max_chunks=3),
    st.sampled_from(["exact", "paper"]),
    st.sampled_from(["arrival", "weight"]),
)
def test_maxweight_feasible_and_certificate_is_a_valid_dual_bound(inst, oracle, order):
    tau = max(3, inst.horizon // 2)
    run = a_maxweight(inst, tau=tau, oracle=oracle, order=order)
    s = _run_schedule(inst, run)
    assert violations(inst, s, require_all=False, tau=tau, arrivals=False) == []
    opt = solve_maxweight(inst, tau=tau, options=OPTS)
    assert opt.optimal
    P = evaluate_objective(inst, s, "scheduled_weight")
    assert opt.objective + 1e-9 >= P
    cert = certificate(inst, run)
    assert cert["P"] == pytest.approx(P)
    # weak duality: the dual (9) built from the final prices bounds OPT(8) from above
    assert cert["D"] >= opt.objective - 1e-6 * max(1.0, opt.objective)


@pytest.mark.parametrize("seed", range(4))
def test_certificate_meets_thm3_where_the_assumptions_hold(seed):
    inst = random_instance(6, n_servers=2, seed=seed, capacity_scale=40, weights="resource", F=2.0)
    run = a_maxweight(inst, tau=12)
    cert = certificate(inst, run, F=inst.F)
    assert cert["assumption_small_demand"]["holds"]
    if cert["assumptions_hold"]:
        assert cert["holds_log2"], cert["D_over_P"]  # a failure here would be a counterexample to Thm 3
    assert cert["D_over_P"] >= 1 - 1e-12


def test_alpha_of_thm5():
    # gamma = 2 log2 lambda; lambda = 3: gamma = 3.17, log2(gamma / (gamma - 1)) = 0.546; log2(8 / 1) = 3 -> 5 + 1
    assert alpha_thm5(8.0, 1.0, 3.0) == math.floor(3 / math.log2((2 * math.log2(3)) / (2 * math.log2(3) - 1))) + 1
    assert alpha_thm5(1.0, 1.0, 100.0) == 1


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    small_instances(max_jobs=4, max_servers=2, max_chunks=3),
    st.sampled_from(["paper", "compact"]),
    st.sampled_from(["per_round", "thm5", 1]),
)
def test_online_schedules_every_job_and_is_no_better_than_the_optimum(inst, placement, alpha):
    big = inst.replace(horizon=inst.horizon * 64)  # room for the alpha tau_i offsets
    r = a_online(big, placement=placement, alpha=alpha)
    assert not r.info["unscheduled"]
    assert verify_result(big, r).ok, verify_result(big, r).summary()
    opt = solve_exact(inst, options=OPTS)
    assert opt.optimal
    assert r.objective >= opt.objective - 1e-9
    chk = thm5_check(r, opt.objective)
    assert chk["ratio"] >= 1 - 1e-12
    assert all(a.start >= big.jobs[big.index(jid)].arrival for jid, a in r.schedule.items())


def test_online_reports_late_jobs_and_options():
    inst = toy_instance().replace(horizon=100)
    r = a_online(inst)
    assert r.info["late_jobs"], "alpha tau_i = 15 x 16 is beyond T = 100"
    assert not verify_result(inst, r).ok
    assert "horizon" in verify_result(inst, r).by_label()
    with pytest.raises(InvalidOptionError):
        a_online(toy_instance(), placement="early")
    with pytest.raises(InvalidOptionError):
        a_online(toy_instance(), alpha=0)
    with pytest.raises(InvalidOptionError, match="'alpha' option must be one of"):
        a_online(toy_instance(), alpha="printed-ln")
    with pytest.raises(InvalidOptionError, match="'placement' option must be one of"):
        a_online(toy_instance(), placement="Realized")
    with pytest.raises(InvalidOptionError):
        a_maxweight(toy_instance(), tau=10, oracle="greedy")
    with pytest.raises(InvalidInstanceError):
        a_online(object())


def test_online_demo_instance_completes_within_T():
    """Issue 28: `optsched demo` failed on this row with "[horizon] job 1 completes at 366, after the
    horizon T = 300". Round 3 (alpha_3 = 45, tau_3 = 4) placed an 8-slot schedule at 180 and its
    reserved window [180, 360) pushed round 4 (alpha_4 = 1) to 360; round 4 now starts when round 3's
    jobs end."""
    inst = random_instance(3, n_servers=2, seed=1, horizon=300)  # the demo's instance
    r = a_online(inst)
    rep = verify_result(inst, r)
    assert rep.ok, rep.summary()
    assert r.info["late_jobs"] == []
    rounds = {x["round"]: x for x in r.info["rounds"]}
    assert rounds[3]["start"] == 180 and rounds[3]["alpha"] == 45 and rounds[3]["length"] == 8
    assert rounds[4]["start"] == 188


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_jobs=4, max_servers=2, max_chunks=3), st.sampled_from(["per_round", "thm5", 2]))
def test_online_round_starts_at_alpha_tau_or_after_the_earlier_rounds_jobs(inst, alpha):
    """Each round starts at max(alpha_i tau_i, last completion of the earlier rounds' jobs); with one
    alpha for every round that is Alg. 1's alpha tau_i exactly."""
    big = inst.replace(horizon=inst.horizon * 64)
    r = a_online(big, alpha=alpha)
    ends, fixed = 0, alpha != "per_round"
    for x in r.info["rounds"]:
        assert x["start"] == max(x["alpha"] * x["tau"], ends), (x, ends)
        if fixed:
            assert x["start"] == x["alpha"] * x["tau"]
        done = [r.schedule[jid].completion for jid in x["J_i_s"]]
        assert all(c <= x["start"] + x["alpha"] * x["tau"] for c in done)  # Lemma 2 (i): length <= alpha tau_i
        ends = max([ends, *done])
    assert verify_result(big, r).ok


def test_alpha_printed_in_base_10_gives_the_papers_close_to_4():
    """Thm 5's printed denominator 1 + log log lam - log(2 log lam - 1), base 10, at Sec. 7's lambda =
    2 T H R F + 1 = 2 * 150 * 150 * 3 * 1 + 1 = 135,001: log10 lam = 5.1303, log10 5.1303 = 0.7101,
    log10(9.2606) = 0.9667, so the denominator is 0.7434; 20 typical jobs (w(J)/w_min = 260):
    log10 260 = 2.415, 2.415 / 0.7434 = 3.25 -> alpha = 4; one job (13): 1.114 / 0.7434 = 1.50 -> 2."""
    assert alpha_printed(260.0, 1.0, 135001.0) == 4
    assert alpha_printed(13.0, 1.0, 135001.0) == 2
    assert alpha_printed(1300.0, 1.0, 135001.0) == 5  # 3.114 / 0.7434 = 4.19
    assert alpha_printed(5.0, 1.0, 3.0) == 1  # 2 log10 3 - 1 < 0: the printed expression is undefined
    # base 2 with the same weights gives alpha in the hundreds (the project's consistent reading)
    assert alpha_thm5(260.0, 1.0, 135001.0) > 100


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_jobs=4, max_servers=2, max_chunks=3), st.sampled_from(["per_round", "printed-log10", 3]))
def test_realized_offset_is_iota_star_tau_and_equals_compact_when_one_call_places_each_round(inst, alpha):
    """placement="realized": round i starts at max(iota*_i tau_i, the earlier rounds' last completion),
    iota*_i the A_maxweight calls that placed jobs (>= 1, so never before tau_i); its schedule holds in
    iota*_i tau_i (Lemma 2 (i)); where every round's jobs are placed by its first call it is the compact
    start exactly."""
    big = inst.replace(horizon=inst.horizon * 64)
    r = a_online(big, alpha=alpha, placement="realized")
    assert verify_result(big, r).ok
    ends = 0
    for x in r.info["rounds"]:
        if x["scheduled"] == 0:  # no job of J_i fits within tau_i yet: no call placed one
            assert x["iota_star"] == 0
            continue
        assert 1 <= x["iota_star"] <= x["alpha"] and x["offset"] == x["iota_star"]
        assert x["start"] == max(x["iota_star"] * x["tau"], ends) >= x["tau"]
        done = [r.schedule[jid].completion for jid in x["J_i_s"]]
        assert all(c <= x["start"] + x["iota_star"] * x["tau"] for c in done)
        ends = max([ends, *done])
    if all(x["iota_star"] <= 1 for x in r.info["rounds"]):
        assert r.objective == pytest.approx(a_online(big, alpha=alpha, placement="compact").objective)


def test_printed_log10_flags_a_round_whose_cap_stops_calls_that_would_place_jobs():
    """alpha = 1 caps every round at one A_maxweight call. Two jobs that each need the whole (only)
    server for tau_i slots cannot both be placed by one call: the round is capped (a second call would
    place the other job), which goes to the next round; with alpha = 2 nothing is capped."""
    from optsched.elastic.generate import random_instance as rnd

    for seed in range(40):  # an instance where round 1 has two jobs and one call places only one
        inst = rnd(4, n_servers=1, seed=seed, horizon=400)
        r1 = a_online(inst, alpha=1, placement="realized")
        if r1.info["rounds_capped"]:
            break
    else:  # pragma: no cover - the generator changed
        pytest.skip("no capped round among 40 seeds")
    capped = [x for x in r1.info["rounds"] if x["capped"]]
    assert all(x["scheduled"] < x["jobs"] and x["iota_star"] == x["alpha"] == 1 for x in capped)
    r_many = a_online(inst, alpha=64, placement="realized")
    assert r_many.info["rounds_capped"] == 0


@pytest.mark.parametrize("seed", range(3))
def test_lemma2_per_round_and_lemma1_chain(seed):
    from optsched.elastic.bounds import lemma1_chain, lemma2_check

    inst = random_instance(4, n_servers=2, seed=seed)
    big = inst.replace(horizon=inst.horizon * 64)
    r = a_online(big)
    for row in lemma2_check(big, r, options=OPTS):
        assert row["opt7_proven"]
        assert row["weight_ok"] and row["length_ok"], row
    opt = solve_exact(inst, options=OPTS)
    chain = lemma1_chain(inst, r, opt.schedule)
    assert chain and all(x["holds"] for x in chain), chain
    assert chain[-1]["opt_cum"] == pytest.approx(sum(j.weight for j in inst.jobs))


def test_thm3_weight_assumption_needs_every_ratio_within_1_and_F():
    """Thm 3's first assumption, 1 <= w_j / sum f(l) <= F for every chosen job: on the toy with
    weights 100 (resource use 40: ratio 2.5) it holds for F = 3, fails for F = 2 (above F) and
    for weight 1 (ratio 0.025, below 1)."""
    from dataclasses import replace

    heavy = toy_instance()
    heavy = heavy.replace(jobs=tuple(replace(j, weight=100.0) for j in heavy.jobs))
    run = a_maxweight(heavy, tau=16)
    ratio = certificate(heavy, run, F=3.0)["assumption_weight_ratio"]
    assert ratio["min"] == pytest.approx(2.5) and ratio["max"] == pytest.approx(2.5) and ratio["holds"]
    assert not certificate(heavy, run, F=2.0)["assumption_weight_ratio"]["holds"]
    light = toy_instance()
    assert not certificate(light, a_maxweight(light, tau=16), F=3.0)["assumption_weight_ratio"]["holds"]


def _assignments(res) -> list:
    """Every assignment to the last bit (starts, completions, shapes, placements)."""
    rows = []
    for jid in sorted(res.schedule, key=str):
        a = res.schedule[jid]
        rows.append(
            (
                str(jid),
                float(a.start).hex(),
                float(a.completion).hex(),
                a.m,
                a.p,
                a.q,
                int(a.d),
                sorted((int(h), float(y).hex()) for h, y in a.workers.items()),
                sorted((int(h), float(s).hex()) for h, s in a.ps.items()),
            )
        )
    return rows


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("arch", ["ps", "rar"])
def test_kept_prices_give_the_schedules_of_prices_computed_afresh(seed, arch, monkeypatch):
    # A_maxweight keeps its prices' residual and window prefixes between oracle calls (a speed-up
    # that must not move any job): the same runs with every price computed afresh at each call
    # (the plain Prices) give the same schedules to the last bit, under the default options and
    # placement="compact" with alpha=2.
    from optsched.elastic import primal_dual
    from optsched.elastic.prices import Prices

    inst = random_instance(12, architecture=arch, n_servers=4, max_chunks=6, seed=seed)
    kept = [_assignments(a_online(inst)), _assignments(a_online(inst, placement="compact", alpha=2))]
    fresh_zero = Prices.zero.__func__
    monkeypatch.setattr(
        primal_dual.Prices, "zero", classmethod(lambda cls, i, t, *, incremental=False: fresh_zero(cls, i, t))
    )
    fresh = [_assignments(a_online(inst)), _assignments(a_online(inst, placement="compact", alpha=2))]
    assert kept == fresh
