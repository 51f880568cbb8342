"""Reproduction functions return the paper's tables (tiny trial counts here; the real run is
`python -m optsched.experiments.sojourn`)."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.experiments import sojourn as ex


@pytest.fixture(scope="module")
def raw():
    return ex.run_trials(sets=(1, 5), n_values=(3, 5), trials=40, seed=0)


def test_mean_and_ratio_tables(raw):
    m = ex.mean_table(raw, 1)
    assert set(m["algorithm"]) == {"OPTIMAL", "RANK", "RANK/OPTIMAL (mean ratio)"}
    row = m[(m.N == 3) & (m.algorithm == "OPTIMAL")].iloc[0]
    assert row.paper == 1.219 and row.ci_lo <= row["mean"] <= row.ci_hi
    r = ex.ratio_table(raw, 5)
    assert set(r["stat"]) == {"Max", "P95", "P75"} and (r["ours"] >= 1 - 1e-12).all()
    assert r[(r.N == 3) & (r.algorithm == "RANDOM") & (r.stat == "Max")].iloc[0].paper == 165.583
    # exact optimum <= every algorithm on every trial
    for a in ("RANK", "RANDOM", "SERPT", "SR"):
        assert (raw[a] >= raw["OPTIMAL"] * (1 - 1e-9)).all()


def test_same_seed_same_numbers():
    a = ex.run_trials(sets=(2,), n_values=(4,), trials=5, seed=3)
    b = ex.run_trials(sets=(2,), n_values=(4,), trials=5, seed=3)
    assert np.allclose(a[["OPTIMAL", "RANK", "SR"]].to_numpy(), b[["OPTIMAL", "RANK", "SR"]].to_numpy())


def test_stages_table_and_extension():
    st = ex.stages_table(trials=10, stage_values=(2, 4))
    assert list(st["stages"]) == [2, 4] and (st["MAX_CR"] >= 1).all() and st["OPTIMAL_paper"].iloc[0] == 1.786
    ext = ex.rank_vs_n(n_values=(4, 24), sets=(1,), trials=5, seed=0)
    assert (ext["rank_ratio_mean"] >= 1 - 1e-12).all() and set(ext["N"]) == {4, 24}
    ax = ex.plot_rank_vs_n(ext)
    assert ax.get_xlabel() == "number of jobs N"


def test_adaptive_study_small():
    df = ex.adaptive_study(n_instances=15, seed=1, max_jobs=4)
    assert (df["static_over_adaptive"] >= -1e-9).all()
    assert np.allclose(df["nonpreemptive_over_preemptive"], 0, atol=1e-9)


def test_optimum_methods_agree():
    from optsched.sojourn.dp import subset_dp
    from optsched.sojourn.evaluate import pair_costs
    from optsched.sojourn.generate import crossing_instance, workload

    for inst in (workload(4, 9, seed=1), crossing_instance(11, seed=2, spread=0.0), crossing_instance(18, seed=2)):
        pc = pair_costs(inst)
        v, order, _how = ex.optimum(pc)
        assert v == pytest.approx(subset_dp(pc)[0], rel=1e-9) and sorted(order) == list(range(inst.n_jobs))
