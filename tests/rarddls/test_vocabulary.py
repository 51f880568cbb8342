"""Issue 26 for rarddls: the public entry points (solve_exact, decisions, the MILP without a heuristic start),
SJF-BCO's smallest-feasible theta (the paper's theta~_u) and the theta Lemma 4 is checked with."""

from __future__ import annotations

import pytest

import optsched.rarddls as R
from optsched.rarddls.bounds import check_bounds
from optsched.rarddls.generate import random_instance
from optsched.rarddls.sjfbco import BISECTIONS, run_pass
from optsched.solvers import SolveOptions
from optsched.verify import verify_result

OPTS = SolveOptions(time_limit=20, threads=1)


def _inst(s):
    return random_instance(2 + s % 3, gpus_per_server=[[2, 2], [2, 2, 2], [4, 2]][s % 3], seed=s)


def test_milp_runs_without_the_heuristic_start():
    inst = R.toy_instance()
    plain = R.solve_exact(inst, options=SolveOptions(time_limit=120, threads=1), heuristic_start=False, horizon=12)
    assert plain.info["heuristic_makespan"] is None and plain.info["model_slots"] == 12
    assert plain.status.value == "optimal" and plain.objective == R.solve_exact(inst, options=OPTS).objective == 9.0
    assert verify_result(inst, plain).ok
    assert R.solve_exact(inst, options=OPTS, heuristic_start=False, horizon=8).status.value == "infeasible"


def test_decisions_invert_build_schedule():
    inst = R.toy_instance()
    starts, pls = [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}]
    assert R.decisions(inst, R.build_schedule(inst, starts, pls)) == (starts, pls)


@pytest.mark.parametrize("s", [0, 1, 2, 3, 4])
def test_smallest_feasible_is_the_least_feasible_theta(s):
    """The paper's theta~_u ("the minimum theta_u feasible to Problem (14)"): one below it, no kappa places every
    job by T; ``feasibility`` (the same search) reports the theta of its best pass instead, never smaller."""
    inst = _inst(s)
    sf = R.sjf_bco(inst, bisection="smallest-feasible")
    fe = R.sjf_bco(inst, bisection="feasibility")
    th, T = int(sf.info["theta"]), sf.info["T"]
    assert th <= fe.info["theta"] and verify_result(inst, sf).ok
    if th > 1:
        for kappa in range(1, inst.n_g + 1):
            p = run_pass(inst, th - 1, kappa)
            assert not (p.ok and p.makespan <= T)
    assert sf.info["W_max"] <= th + 1e-9  # Lemma 2 as an inequality, at the paper's theta


def test_the_readings_differ_and_lemma4_uses_the_papers_theta():
    """s = 1: the best pass of the feasibility search is at theta 11, the smallest feasible theta is 5; before
    issue 26 check_bounds tested Lemma 4 with the printed bisection's theta (11)."""
    inst = _inst(1)
    assert R.sjf_bco(inst, bisection="feasibility").info["theta"] == 11
    assert R.sjf_bco(inst, bisection="smallest-feasible").info["theta"] == 5
    assert R.sjf_bco(inst).info["theta"] == 11
    rep = check_bounds(inst, options=OPTS)
    assert rep.values["theta_tilde"] == 5 and rep.values["theta_returned"] == 11
    assert rep.values["lemma4_theta"] == "smallest-feasible" and rep.holds["lemma4"]
    assert check_bounds(inst, options=OPTS, lemma4_theta="returned").values["theta_tilde"] == 11
    assert BISECTIONS == ("printed", "feasibility", "smallest-feasible")
    with pytest.raises(Exception, match="bisection must be one of"):
        R.sjf_bco(inst, bisection="paper")
