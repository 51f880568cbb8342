"""The paper-scale Fig. 6-9 sweep (optsched.experiments.asrpt.paper) on small traces."""

from __future__ import annotations

import math
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.exceptions import InvalidOptionError
from optsched.experiments.asrpt import paper as ap
from optsched.experiments.asrpt import traces as at
from optsched.experiments.asrpt.repro import build_instance, pai_like_table

N_TOTAL = 2500  # a 500-job test part


def test_points_each_cell_once_fig6_first():
    pts = ap.points(seeds=range(2))
    keys = [(p["n_jobs"], p["single_gpu"], p["nic_gbps"], p["load"], p["seed"]) for p in pts]
    assert len(keys) == len(set(keys))
    # Fig. 6 (both loads) before Fig. 7/8; the 75k Fig. 6 cell carries Fig. 9's predictors
    first78 = next(i for i, p in enumerate(pts) if p["single_gpu"] != 0.7)
    assert all(p["single_gpu"] == 0.7 for p in pts[:first78])
    assert {p["load"] for p in pts[:first78]} == {0.9, "paper"}
    f9 = [p for p in pts if p["n_jobs"] == 75_000 and p["single_gpu"] == 0.7]
    assert f9 and all(p["predictors"] == "rf,perfect,median,mean" for p in f9)
    # Fig. 7's 0 % cell at 10 Gbps is Fig. 8's 10 Gbps cell: once per seed and load
    zero = [p for p in pts if p["single_gpu"] == 0.0 and p["nic_gbps"] == 10.0]
    assert len(zero) == 2
    assert len(ap.points(seeds=range(5))) == 5 * (2 * 4 + 9)


@settings(max_examples=25, deadline=None)
@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.text(min_size=1).filter(lambda s: s != "paper")))
def test_bad_load_is_named(load):
    with pytest.raises(InvalidOptionError, match="load must be 'paper' or a number"):
        ap.points(loads=(load,))


def test_bad_figure_and_cell_options():
    with pytest.raises(InvalidOptionError, match="Unknown figure 'fig5'"):
        ap.points(figures=("fig5",))
    with pytest.raises(InvalidOptionError, match="predictors must be"):
        ap.cell(100, 0.7, 10.0, 0.9, 0, "perfect", n_total=N_TOTAL)
    with pytest.raises(InvalidOptionError, match=r"n_jobs must be in 1\.\.500"):
        ap.cell(501, 0.7, 10.0, 0.9, 0, n_total=N_TOTAL)
    with pytest.raises(InvalidOptionError, match="arrival_rate must be a number > 0"):
        pai_like_table(10, arrival_rate=0.0)


def test_prepare_equals_build_instance(tmp_path):
    """The cached, memoised build gives the jobs build_instance gives (same draws, same forest)."""
    table = at.trace_table(0, 0.7, 0.9, N_TOTAL)
    inst, eps = build_instance(table, n_servers=ap.N_SERVERS, gpus=ap.GPUS, predictor="rf")
    prep = at.prepare(0, n_total=N_TOTAL, max_samples=None, cache_dir=tmp_path)
    mine = at.cell_instance(prep, table["arrival"].to_numpy(float)[prep["cut"] :], inst.n_jobs, "rf", 10.0)
    want = [(j.iterations, j.predicted_iterations, j.arrival, tuple(j.stages), j.group) for j in inst.jobs]
    got = [(j.iterations, j.predicted_iterations, j.arrival, tuple(j.stages), j.group) for j in mine.jobs]
    assert got == want
    assert math.isclose(prep["eps"]["rf"], eps, rel_tol=1e-12)
    # the cache is read back, not recomputed (same object content)
    again = at.prepare(0, n_total=N_TOTAL, max_samples=None, cache_dir=tmp_path)
    assert (again["n"] == prep["n"]).all() and again["eps"] == prep["eps"]
    assert len(list(tmp_path.glob("trace-*.pkl"))) == 1 and not list(tmp_path.glob("*.lock"))


def test_stale_lock_is_taken_over(tmp_path):
    path = at._cache_file(tmp_path, {"x": 1})
    lock = path.with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    assert at._cached_or_lock(path, stale_s=60) is None  # lock taken
    assert lock.exists()


def test_cell_reports_every_policy_and_load(tmp_path):
    r = ap.cell(300, 0.7, 10.0, 0.9, 1, "rf,perfect,median,mean", n_total=N_TOTAL, cache_dir=str(tmp_path))
    for p in ("A-SRPT", "A-SRPT-Perfect", "A-SRPT-Median", "A-SRPT-Mean", *ap.BASELINE_NAMES):
        assert r[p] > 0 and r[f"{p}_s"] >= 0
    assert r["eps_perfect"] == 0.0 and r["eps_rf"] >= 0
    slow = ap.cell(300, 0.7, 10.0, "paper", 1, n_total=N_TOTAL, cache_dir=str(tmp_path))
    # the trace's own rate (750k jobs over two months) spreads the same jobs over a longer span
    assert slow["arrival_span_days"] > r["arrival_span_days"]
    assert slow["offered_load"] < r["offered_load"]
    assert math.isclose(slow["eps_rf"], r["eps_rf"], rel_tol=1e-12)  # same cached predictions


def test_run_sweep_resumes_and_tables(tmp_path):
    pts = [
        {"n_jobs": n, "single_gpu": 0.7, "nic_gbps": 10.0, "load": 0.9, "seed": s, "n_total": N_TOTAL}
        for n in (200, 400)
        for s in (0, 1)
    ]
    out = tmp_path / "sweep"
    df = ap.run_sweep(out, pts=pts, executor="serial", progress=False)
    assert len(df) == 4 and len(list(out.glob("cell-*.parquet"))) == 4
    first = sorted(df["elapsed"])
    df2 = ap.run_sweep(out, pts=pts, executor="serial", progress=False)  # nothing recomputed
    assert sorted(df2["elapsed"]) == first
    t = ap.tables(df2)["fig6 load=0.9"]
    assert list(t["n_jobs"]) == [200, 400] and list(t["seeds"]) == [2, 2]
    base = df2[list(ap.BASELINE_NAMES)].min(axis=1)
    gains = 1 - df2["A-SRPT"] / base
    assert math.isclose(t["gain_best"].mean(), gains.mean(), rel_tol=1e-9)


def test_backfill_variant_cell_and_table(tmp_path):
    r = ap.cell(
        300, 0.7, 10.0, 0.9, 0, "rf", n_total=N_TOTAL, cache_dir=str(tmp_path), baselines=False, variants="backfill"
    )
    assert r["A-SRPT"] > 0 and r["A-SRPT-Backfill"] > 0
    assert not any(b in r for b in ap.BASELINE_NAMES)
    with pytest.raises(InvalidOptionError, match="variants must be '' or 'backfill'"):
        ap.cell(300, 0.7, 10.0, 0.9, 0, n_total=N_TOTAL, variants="lookahead")
    full = ap.cell(300, 0.7, 10.0, 0.9, 0, "rf", n_total=N_TOTAL, cache_dir=str(tmp_path))
    import pandas as pd

    row = {
        "n_jobs": 300,
        "single_gpu": 0.7,
        "nic_gbps": 10.0,
        "load": 0.9,
        "seed": 0,
        **full,
        "A-SRPT-Backfill": r["A-SRPT-Backfill"],
    }
    t = ap.tables(pd.DataFrame([row]))["fig6 load=0.9"]
    want = 1 - r["A-SRPT-Backfill"] / min(full[b] for b in ap.BASELINE_NAMES)
    assert math.isclose(t["backfill_gain_best"].iloc[0], want, rel_tol=1e-12)
    assert math.isclose(r["A-SRPT"], full["A-SRPT"], rel_tol=1e-12)  # same jobs, same A-SRPT


def test_diagnose_decomposes_the_wait(tmp_path):
    d = ap.diagnose(0, 300, n_total=N_TOTAL, cache_dir=tmp_path).set_index("policy")
    assert list(d.index) == ["A-SRPT", "A-SRPT-Backfill", *ap.BASELINE_NAMES]
    for p in ("A-SRPT", "A-SRPT-Backfill"):
        r = d.loc[p]
        # wait = until the virtual completion + after it (every job is started after it)
        assert math.isclose(
            r["wait_until_virtual_s"] + r["wait_after_virtual_s"], r["mean_wait_s"], rel_tol=1e-9, abs_tol=1e-6
        )
        assert r["wait_after_virtual_s"] >= -1e-9 and 0 <= r["jobs_slowed"] <= r["comm_heavy_jobs"]
    # the same jobs under every policy: total JCT = n (mean wait + mean run)
    assert ((d["total_jct_h"] * 3600 - 300 * (d["mean_wait_s"] + d["mean_run_s"])).abs() < 1e-3).all()
