"""The LP of (8) / (17): solved directly = its dual (9) solved directly = column generation with the
exact oracle; the LP bounds A_maxweight's weight and OPT(8); the bound is reported only once pricing
proves no improving column."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.elastic import toy_instance
from optsched.elastic.exact import solve_maxweight
from optsched.elastic.formulation import build_dual9, build_lp8
from optsched.elastic.generate import random_instance
from optsched.elastic.lp import column_generation, solve_dual9, solve_lp8
from optsched.elastic.prices import Prices, window_cost
from optsched.elastic.primal_dual import a_maxweight
from optsched.exceptions import InvalidOptionError, ModelTooLargeError, SolverLimitWarning
from optsched.solvers import SolveOptions

from .strategies import small_instances

OPTS = SolveOptions(time_limit=30, threads=1)


def _tau(inst, frac):
    return max(2, int(round(inst.horizon * frac)))


def _lp_equalities(inst, tau):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SolverLimitWarning)
        lp = solve_lp8(inst, tau=tau, options=OPTS)
        du = solve_dual9(inst, tau=tau, options=OPTS)
        cg = column_generation(inst, tau=tau, options=OPTS)
    assert lp.optimal and du.optimal and cg.optimal and cg.info["proven"]
    tol = 1e-6 * max(1.0, lp.objective)
    assert du.objective == pytest.approx(lp.objective, abs=tol)  # strong duality
    assert cg.objective == pytest.approx(lp.objective, abs=tol)
    assert cg.bound == pytest.approx(lp.objective, abs=tol)
    assert cg.info["lp_value"] == pytest.approx(lp.objective, abs=tol)
    # the dual solution is feasible for (9a) on every column (recomputed here, not the solver's word)
    u, delta = np.asarray(du.schedule["u"]), du.schedule["delta"]
    assert (u >= -1e-9).all() and (delta >= -1e-9).all()
    prices = Prices(np.zeros_like(delta), np.maximum(delta, 0.0))
    for c in build_lp8(inst, tau=tau).cols:
        assert u[c.j] + window_cost(prices, c.config, c.start) >= inst.jobs[c.j].weight - 1e-6
    # column generation's fractional solution is feasible for the LP and has its value
    use = np.zeros((tau, inst.H, inst.R))
    per_job = np.zeros(inst.n_jobs)
    for (jid, start, cfg), x in cg.schedule.items():
        per_job[inst.index(jid)] += x
        for h, vec in cfg.use:
            use[start : start + cfg.d, h, :] += x * np.asarray(vec)
    assert (per_job <= 1 + 1e-6).all()
    assert (use <= np.asarray(inst.C)[None] + 1e-6).all()
    assert sum(inst.jobs[inst.index(jid)].weight * x for (jid, _, _), x in cg.schedule.items()) == pytest.approx(
        cg.objective, abs=tol
    )
    # the LP bounds A_maxweight's weight (and so OPT(8) >= A_maxweight)
    assert a_maxweight(inst, tau=tau).weight <= lp.objective + tol
    return lp, cg


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_jobs=5, max_servers=3, max_chunks=3), st.sampled_from([0.3, 0.5, 1.0]))
def test_direct_lp_equals_dual_equals_column_generation(inst, frac):
    _lp_equalities(inst, _tau(inst, frac))


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_jobs=5, max_servers=3, max_chunks=4), st.sampled_from([0.25, 0.5, 0.75, 1.0]))
def test_lp_dual_colgen_on_80_instances(inst, frac):
    lp, _ = _lp_equalities(inst, _tau(inst, frac))
    opt = solve_maxweight(inst, tau=_tau(inst, frac), options=OPTS)
    assert opt.optimal and opt.objective <= lp.objective + 1e-6


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_jobs=4, max_servers=2, max_chunks=3), st.sampled_from([0.3, 0.6]))
def test_lp_bounds_the_integer_optimum_of_8_and_both_masters_agree(inst, frac):
    tau = _tau(inst, frac)
    lp = solve_lp8(inst, tau=tau, options=OPTS)
    opt = solve_maxweight(inst, tau=tau, options=OPTS)
    assert opt.optimal and opt.objective <= lp.objective + 1e-6
    py = column_generation(inst, tau=tau, master="pyomo", options=OPTS)
    gr = column_generation(inst, tau=tau, initial="greedy", options=OPTS)
    assert py.info["proven"] and gr.info["proven"]
    assert py.objective == pytest.approx(lp.objective, abs=1e-6 * max(1, lp.objective))
    assert gr.objective == pytest.approx(lp.objective, abs=1e-6 * max(1, lp.objective))


def test_toy_lp_is_fractional_above_the_integer_optimum():
    """tau = 12 admits only 10-slot (2-GPU) schedules, and the two jobs cannot both run on 3 GPUs:
    OPT(8) = 1 while the LP reaches 1.5 with fractional columns: the LP bound is not tight."""
    inst = toy_instance()
    lp = solve_lp8(inst, tau=12, options=OPTS)
    assert lp.objective == pytest.approx(1.5)
    assert solve_maxweight(inst, tau=12, options=OPTS).objective == pytest.approx(1.0)
    assert solve_dual9(inst, tau=12, options=OPTS).objective == pytest.approx(1.5)
    cg = column_generation(inst, tau=12)
    assert cg.optimal and cg.objective == pytest.approx(1.5) and cg.info["iterations"] >= 2
    assert max(cg.schedule.values()) < 1 + 1e-9 and min(cg.schedule.values()) < 1 - 1e-6  # fractional


def test_unproven_run_reports_no_lp_value_but_a_valid_bound():
    inst = random_instance(5, n_servers=3, seed=0)
    tau = inst.horizon // 2
    lp = solve_lp8(inst, tau=tau, options=OPTS).objective
    with pytest.warns(SolverLimitWarning, match="not proven"):
        r = column_generation(inst, tau=tau, max_iterations=2)
    assert not r.optimal and not r.info["proven"] and r.info["lp_value"] is None
    assert r.info["iterations"] == 2
    assert r.objective <= lp + 1e-6 <= r.bound + 2e-6  # master value <= LP(8) <= dual bound D
    full = column_generation(inst, tau=tau)
    assert full.info["iterations"] > 2  # the first two iterations could not prove it
    assert all(b >= lp - 1e-6 for b in full.info["bounds"])  # every iteration's D is a valid bound
    assert all(v <= lp + 1e-6 for v in full.info["values"])


def test_rar_and_labels_of_the_built_models():
    inst = random_instance(3, n_servers=2, architecture="rar", seed=4)
    m = build_lp8(inst, tau=6)
    assert {"at_most_one_schedule", "capacity", "scheduled_weight", "x"} <= {
        c.local_name for c in m.component_objects()
    }
    d = build_dual9(inst, tau=6)
    assert len(d.delta) == 6 * inst.H * inst.R and len(d.dual_feasibility) == len(m.cols)


def test_bad_options_and_size():
    inst = toy_instance()
    with pytest.raises(InvalidOptionError, match="master"):
        column_generation(inst, tau=12, master="glpk")
    with pytest.raises(InvalidOptionError, match="tau"):
        solve_lp8(inst, tau=0)
    with pytest.raises(InvalidOptionError, match="max_iterations"):
        column_generation(inst, tau=12, max_iterations=0)
    with pytest.raises(ModelTooLargeError):
        build_dual9(inst, tau=300, max_size=1000)


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_jobs=3, max_servers=2, max_chunks=2, max_horizon=8), st.integers(3, 8))
def test_lp_over_the_restricted_gamma_equals_lp_over_every_schedule(inst, tau):
    """The reading of #lp8: the dominance map is linear, so the LP loses nothing by the restriction
    (every schedule of gamma.all_configs, every d up to tau, against the restricted columns)."""
    from optsched.elastic.formulation import column_set
    from optsched.elastic.gamma import all_configs

    full = column_set(
        inst, sense="max", tau=tau, configs_by_job=[all_configs(inst, j, d_max=tau) for j in range(inst.n_jobs)]
    )
    restricted = solve_lp8(inst, tau=tau, options=OPTS).objective
    if not full.cols:
        assert restricted == pytest.approx(0.0)
        return
    assert len(full.cols) >= len(build_lp8(inst, tau=tau).cols)
    from optsched.solvers import solve_pyomo

    sr = solve_pyomo(build_lp8(inst, tau=tau, cs=full), "highs", OPTS)
    assert sr.objective == pytest.approx(restricted, abs=1e-6 * max(1.0, restricted))
