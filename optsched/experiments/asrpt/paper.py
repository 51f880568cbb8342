"""Fig. 6-9 of the A-SRPT paper at the paper's scale, as a resumable sweep.

The paper (Sec. V-B): 250 servers x 8 GPUs, 10 Gbps NICs, 300 GB/s inside a server; "consecutive jobs
sampled from the trace", 37,500 to 150,000 of them ("5 % to 20 % of the trace", so the trace has
750,000 jobs over two months); the random forest trained on the first 80 % of the trace.

Here one *trace* is a PAI-like table of :data:`TRACE_JOBS` jobs
(:func:`optsched.experiments.asrpt.repro.pai_like_table`, one per seed and single-GPU share); its first
80 % train the predictors, and a cell of ``n_jobs`` jobs schedules the first ``n_jobs`` jobs of the
remaining 20 % (150,000 jobs: the largest cell is all of them). Two arrival processes:

* ``load="paper"``: the trace's own rate, 750,000 jobs over 61 days (0.142 jobs/s). With our job sizes
  this is an offered GPU load of about 0.16 on 2,000 GPUs (reported per cell as ``offered_load``);
* ``load=<float>``: Poisson arrivals at that offered GPU load (the generator's default is 0.9).

The expensive part of a cell, the trace's job configurations, iterations and predictions (a random
forest on 600,000 rows), does not depend on the arrival process or the cell size: it is computed once
per (seed, single-GPU share, NIC bandwidth) and cached in ``cache_dir`` (atomic pickle files), so the
four sizes, both loads and Fig. 9 reuse it. A cached trace takes ~27 MB (the 50 traces of the full sweep
~1.4 GB); delete ``cache_dir`` when the sweep is done.

>>> from optsched.experiments.asrpt.paper import points
>>> len(points(seeds=range(5)))
85

Tested in ``tests/asrpt/test_paper_sweep.py``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from optsched import __version__
from optsched.asrpt.online import ASRPT, BASELINES
from optsched.asrpt.policy import simulate_asrpt
from optsched.core.output import out_folder_arg
from optsched.exceptions import InvalidOptionError
from optsched.experiments.asrpt.repro import placement_waste
from optsched.experiments.asrpt.traces import (
    GPUS,
    N_SERVERS,
    TRACE_JOBS,
    cell_instance,
    first_test_row,
    prepare,
    trace_table,
)
from optsched.experiments.sweep import load_sweep, sweep

SIZES = (37_500, 75_000, 112_500, 150_000)
FIG7_SINGLE = (0.8, 0.6, 0.4, 0.2, 0.0)
FIG8_NIC = (1.0, 5.0, 10.0, 25.0, 50.0)
BASELINE_NAMES = ("SPJF", "SPWF", "WCS-Duration", "WCS-Workload", "WCS-SubTime")
#: What the paper states for each figure (Sec. V-B-2), to print beside ours.
PAPER_FIGURES = {
    "fig6": "37.5k-150k jobs: A-SRPT 31 %-91 % below the baselines; SPJF worst",
    "fig7": "75k jobs, single-GPU share 80 % -> 0 %: A-SRPT's gain over the baselines grows from 16 % to 57 %",
    "fig8": "75k jobs, 0 % single-GPU, NIC 1-50 Gbps: 12 % below WCS-Duration at 50 Gbps, up to 92 % at 1 Gbps",
    "fig9": "eps_bar RF 369, median 563, mean 593 iterations; A-SRPT(RF) 14 % above A-SRPT-Perfect",
}


def _load_value(load) -> float | str:
    if isinstance(load, str):
        if load != "paper":
            raise InvalidOptionError(f"load must be 'paper' or a number > 0; got {load!r}.")
        return load
    v = float(load)
    if not (v > 0 and np.isfinite(v)):
        raise InvalidOptionError(f"load must be 'paper' or a number > 0; got {load!r}.")
    return v


def points(
    *,
    seeds=range(5),
    loads=(0.9, "paper"),
    figures=("fig6", "fig9", "fig7", "fig8"),
    sizes=SIZES,
    fig7_single=FIG7_SINGLE,
    fig8_nic=FIG8_NIC,
    fig78_loads=(0.9,),
    fig78_n: int = 75_000,
    n_total: int = TRACE_JOBS,
) -> list[dict[str, Any]]:
    """The sweep's cells, most important first (Fig. 6 at every load and seed; Fig. 9; then Fig. 7
    and 8 at ``fig78_loads``), each cell once (Fig. 7's 0 % cell at 10 Gbps is Fig. 8's 10 Gbps cell,
    Fig. 9 is Fig. 6's 75k cell with two more predictors)."""
    out: list[dict[str, Any]] = []
    seen: set = set()

    def add(n, single, nic, load, seed, predictors="rf,perfect"):
        key = (n, single, nic, load, seed)
        if key in seen:
            return
        seen.add(key)
        pt = {
            "n_jobs": int(n),
            "single_gpu": float(single),
            "nic_gbps": float(nic),
            "load": load,
            "seed": int(seed),
            "predictors": predictors,
        }
        if n_total != TRACE_JOBS:  # the paper's trace size is not written, so its cell ids stay put
            pt["n_total"] = int(n_total)
        out.append(pt)

    seeds = list(seeds)
    test_part = n_total - int(round(0.8 * n_total))
    too_big = [n for n in (*sizes, fig78_n) if not 0 < n <= test_part]
    if too_big:
        raise InvalidOptionError(
            f"Cell sizes {too_big} do not fit the test part of a {n_total}-job trace (1..{test_part} jobs); "
            f"give smaller sizes or a larger n_total."
        )
    for f in figures:
        if f not in PAPER_FIGURES:
            raise InvalidOptionError(f"Unknown figure {f!r}; choose from {list(PAPER_FIGURES)}.")
    for load in [_load_value(x) for x in loads]:
        for s in seeds:
            if "fig9" in figures:  # first, so the 75k cell carries the extra predictors
                add(fig78_n, 0.7, 10.0, load, s, "rf,perfect,median,mean")
            if "fig6" in figures:
                for n in sizes:
                    add(n, 0.7, 10.0, load, s)
    for load in [_load_value(x) for x in fig78_loads]:
        for s in seeds:
            if "fig7" in figures:  # the paper's Fig. 7 and 8 have no A-SRPT-Perfect
                for sg in fig7_single:
                    add(fig78_n, sg, 10.0, load, s, "rf")
            if "fig8" in figures:
                for nic in fig8_nic:
                    add(fig78_n, 0.0, nic, load, s, "rf")
    return out


def cell(
    n_jobs: int,
    single_gpu: float,
    nic_gbps: float,
    load,
    seed: int,
    predictors: str = "rf,perfect",
    *,
    n_total: int = TRACE_JOBS,
    max_samples: float | None = 0.1,
    cache_dir: str | None = None,
    tau: float = 1.0,
    baselines: bool = True,
    variants: str = "",
) -> dict[str, Any]:
    """One point: total JCT (hours) of A-SRPT with each predictor in ``predictors`` and of the five
    baselines (random-forest predictions, as in the paper), eps_bar of each predictor, the offered
    GPU load of the arrivals, and the wall time of each replay.

    ``baselines=False`` skips the baselines; ``variants="backfill"`` adds ``A-SRPT-Backfill``
    (random forest, :class:`~optsched.asrpt.online.ASRPT` ``backfill=True``: not the paper's algorithm,
    the diagnostic of formulations/asrpt.md finding 6)."""
    load = _load_value(load)
    preds = [p.strip() for p in str(predictors).split(",") if p.strip()]
    bad = [p for p in preds if p not in ("rf", "perfect", "median", "mean")]
    if bad or "rf" not in preds:
        raise InvalidOptionError(
            f"predictors must be a comma list of rf, perfect, median, mean including rf; got {predictors!r}."
        )
    vars_ = [v.strip() for v in str(variants).split(",") if v.strip()]
    if any(v != "backfill" for v in vars_):
        raise InvalidOptionError(f"variants must be '' or 'backfill'; got {variants!r}.")
    cut = first_test_row(n_jobs, n_total)
    t0 = time.perf_counter()
    prep = prepare(
        seed, single_gpu=single_gpu, nic_gbps=nic_gbps, n_total=n_total, max_samples=max_samples, cache_dir=cache_dir
    )
    table = trace_table(seed, single_gpu, load, n_total)
    arrivals = table["arrival"].to_numpy(float)[cut:]
    span = float(arrivals[n_jobs - 1] - arrivals[0])
    test = table.iloc[cut : cut + n_jobs]
    out: dict[str, Any] = {
        "offered_load": float((test["duration"] * test["gpus"]).sum() / max(span, 1.0) / (N_SERVERS * GPUS)),
        "arrival_span_days": span / 86_400.0,
        "build_s": time.perf_counter() - t0,
    }
    for p in preds:
        out[f"eps_{p}"] = float(prep["eps"][p])
    insts = {}
    for p in preds:
        inst = insts[p] = cell_instance(prep, arrivals, n_jobs, p, nic_gbps)
        name = "A-SRPT" if p == "rf" else f"A-SRPT-{p.capitalize()}"
        t = time.perf_counter()
        res = simulate_asrpt(inst, None, tau=tau)
        out[f"{name}_s"] = time.perf_counter() - t
        out[name] = float(res.summary()["total_flow_time"]) / 3600.0
    runs = [("A-SRPT-Backfill", ASRPT(tau=tau, backfill=True))] if vars_ else []
    if baselines:
        runs += list(BASELINES().items())
    for name, pol in runs:
        t = time.perf_counter()
        res = simulate_asrpt(insts["rf"], pol)
        out[f"{name}_s"] = time.perf_counter() - t
        out[name] = float(res.summary()["total_flow_time"]) / 3600.0
    return out


def diagnose(
    seed: int = 0,
    n_jobs: int = 37_500,
    *,
    nic_gbps: float = 10.0,
    load=0.9,
    single_gpu: float = 0.7,
    n_total: int = TRACE_JOBS,
    max_samples: float | None = 0.1,
    cache_dir=None,
    tau: float = 1.0,
):
    """Where A-SRPT's time goes in one cell (formulations/asrpt.md, finding 6): per policy (A-SRPT,
    A-SRPT-Backfill, the five baselines; random-forest predictions) the total JCT (hours), the mean
    wait and mean run (s); for A-SRPT and its backfilling variant also the mean wait until the job's
    virtual completion in Ã_1 and after it, the communication-heavy jobs, those that ran more than
    COMM_HEAVY slower than alpha~min, and the share of busy GPU-seconds spent above alpha~min.

    Returns a DataFrame, one row per policy."""
    import pandas as pd

    load = _load_value(load)
    cut = first_test_row(n_jobs, n_total)
    prep = prepare(
        seed, single_gpu=single_gpu, nic_gbps=nic_gbps, n_total=n_total, max_samples=max_samples, cache_dir=cache_dir
    )
    arrivals = trace_table(seed, single_gpu, load, n_total)["arrival"].to_numpy(float)[cut:]
    inst = cell_instance(prep, arrivals, n_jobs, "rf", nic_gbps)
    rows = []
    pols = [("A-SRPT", ASRPT(tau=tau)), ("A-SRPT-Backfill", ASRPT(tau=tau, backfill=True)), *BASELINES().items()]
    for name, pol in pols:
        cols = simulate_asrpt(inst, pol).job_columns()
        a, s, c = (np.asarray(cols[k], float) for k in ("arrival", "first_start", "completion"))
        row: dict[str, Any] = {
            "policy": name,
            "total_jct_h": float((c - a).sum()) / 3600.0,
            "mean_wait_s": float((s - a).mean()),
            "mean_run_s": float((c - s).mean()),
        }
        if isinstance(pol, ASRPT):
            vc = np.array([pol.virtual_completion.get(j, np.nan) for j in cols["job_id"]], float)
            w = placement_waste(pol, inst)
            row.update(
                {
                    "wait_until_virtual_s": float(np.nanmean(vc - a)),
                    "wait_after_virtual_s": float(np.nanmean(s - vc)),
                    "comm_heavy_jobs": int(sum(i.comm_heavy for i in pol.info.values())),
                    "jobs_slowed": w["jobs_slowed"],
                    "busy_gpu_s": w["gpu_busy_s"],
                    "waste_share": w["waste_share"],
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def run_sweep(
    out,
    *,
    pts=None,
    executor: str = "processes",
    n_workers: int | None = None,
    scheduler_address: str | None = None,
    cache_dir=None,
    progress: bool = True,
):
    """Run (or resume) the sweep into the folder ``out`` (one Parquet file per finished cell); the
    trace cache goes to ``cache_dir`` (default ``out/cache``). Returns the table of all cells."""

    pts = points() if pts is None else list(pts)
    cache = str(Path(cache_dir) if cache_dir is not None else Path(out) / "cache")
    return sweep(
        partial(cell, cache_dir=cache),
        pts,
        executor=executor,
        n_workers=n_workers,
        scheduler_address=scheduler_address,
        out=out,
        progress=progress,
    )


def tables(df) -> dict[str, Any]:
    """Fig. 6-9 tables from the sweep's rows: per x value the mean and standard deviation over seeds
    of each policy's total JCT (hours), the number of seeds, and A-SRPT's gain over the best and the
    worst baseline (mean of the per-seed gains, and their min/max)."""
    import pandas as pd

    if df.empty:
        return {}
    df = df.copy()
    df["load"] = df["load"].astype(str)
    base = [c for c in BASELINE_NAMES if c in df]
    df["gain_best"] = 1 - df["A-SRPT"] / df[base].min(axis=1)
    df["gain_worst"] = 1 - df["A-SRPT"] / df[base].max(axis=1)
    pols = ["A-SRPT", "A-SRPT-Perfect", "A-SRPT-Backfill", *base]
    if "A-SRPT-Backfill" in df:
        df["backfill_gain_best"] = 1 - df["A-SRPT-Backfill"] / df[base].min(axis=1)

    def summarise(sub, by):
        rows = []
        for x, g in sub.groupby(by, sort=True):
            r: dict[str, Any] = {by: x, "seeds": len(g)}
            for p in pols:
                if p not in g or g[p].isna().all():
                    continue
                r[p] = g[p].mean()
                r[f"{p} sd"] = g[p].std(ddof=1) if len(g) > 1 else float("nan")
            for c in ("gain_best", "gain_worst", "backfill_gain_best"):
                if c not in g:
                    continue
                r[c] = g[c].mean()
                r[f"{c} min"] = g[c].min()
                r[f"{c} max"] = g[c].max()
            r["offered_load"] = g["offered_load"].mean()
            rows.append(r)
        return pd.DataFrame(rows)

    res = {}
    others = df[df.single_gpu != 0.7]
    n78 = int(others["n_jobs"].mode().iloc[0]) if len(others) else None  # Fig. 7/8's job count
    for load, d in df.groupby("load"):
        f6 = d[(d.single_gpu == 0.7) & (d.nic_gbps == 10.0)]
        res[f"fig6 load={load}"] = summarise(f6, "n_jobs")
        if n78 is not None:
            f7 = d[(d.n_jobs == n78) & (d.nic_gbps == 10.0)]
            if f7["single_gpu"].nunique() > 1:
                res[f"fig7 load={load}"] = summarise(f7, "single_gpu").sort_values("single_gpu", ascending=False)
            f8 = d[(d.n_jobs == n78) & (d.single_gpu == 0.0)]
            if f8["nic_gbps"].nunique() > 1:
                res[f"fig8 load={load}"] = summarise(f8, "nic_gbps")
        f9 = d[d["A-SRPT-Mean"].notna()] if "A-SRPT-Mean" in d else d.iloc[:0]
        if len(f9):
            r = {"n_jobs": int(f9["n_jobs"].iloc[0]), "seeds": len(f9)}
            for p in ("rf", "median", "mean", "perfect"):
                r[f"eps_{p}"] = f9[f"eps_{p}"].mean()
            for p in ("A-SRPT", "A-SRPT-Median", "A-SRPT-Mean", "A-SRPT-Perfect", *base):
                r[p] = f9[p].mean()
            r["RF over Perfect"] = (f9["A-SRPT"] / f9["A-SRPT-Perfect"]).mean() - 1
            res[f"fig9 load={load}"] = pd.DataFrame([r])
    return res


def _sweep_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("optsched")) / "sweeps" / f"asrpt-paper-{__version__}"


def run(save, *, quick: bool = False, seeds: int | None = None, progress: bool = False, out=None) -> None:
    """``optsched reproduce asrpt-paper``: Fig. 6-9 at the paper's scale (5 seeds; hours on 2 cores:
    the sweep folder, ``out`` or by default ``<user cache>/optsched/sweeps/asrpt-paper-<version>``, keeps
    every finished cell, so an interrupted run resumes where it stopped). ``quick``: one seed of a
    2,500-job trace (cells of 200-500 jobs) in a temporary folder, under a minute. Saves one table per
    figure and load, the paper's statements and every cell (``cells``)."""
    import pandas as pd

    n = seeds if seeds is not None else (1 if quick else 5)
    if quick:
        pts = points(
            seeds=range(n),
            sizes=(200, 300, 400, 500),
            fig78_n=300,
            n_total=2500,
            fig7_single=(0.8, 0.0),
            fig8_nic=(1.0, 50.0),
        )
    else:
        pts = points(seeds=range(n))
    if out is None and quick:
        with tempfile.TemporaryDirectory(prefix="asrpt-paper-quick-") as tmp:
            df = run_sweep(tmp, pts=pts, progress=progress)
    else:
        df = run_sweep(out if out is not None else _sweep_dir(), pts=pts, progress=progress)
    for name, t in tables(df).items():
        save(name.replace(" ", "_").replace("=", "-"), t)
    save("claims", pd.DataFrame({"figure": list(PAPER_FIGURES), "paper": list(PAPER_FIGURES.values())}))
    save("cells", df.drop(columns=["packages"], errors="ignore"))


def main(argv=None) -> int:  # pragma: no cover - a thin command line over run_sweep and tables

    import pandas as pd

    ap = argparse.ArgumentParser(description="A-SRPT Fig. 6-9 at the paper's scale (resumable sweep)")
    ap.add_argument(
        "--out", required=True, type=out_folder_arg, help="sweep folder (finished cells are kept; rerun to resume)"
    )
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--executor", default="processes", choices=["serial", "processes", "dask"])
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--scheduler", default=None, help="address of a running Dask scheduler (tcp://host:8786)")
    ap.add_argument("--tables-only", action="store_true", help="print the tables of the finished cells and stop")
    a = ap.parse_args(argv)
    pd.set_option("display.width", 240)
    if a.tables_only:
        df = load_sweep(a.out)
    else:
        df = run_sweep(
            a.out,
            pts=points(seeds=range(a.seeds)),
            executor=a.executor,
            n_workers=a.workers,
            scheduler_address=a.scheduler,
        )
    for name, t in tables(df).items():
        print(f"\n== {name}: {PAPER_FIGURES[name.split()[0]]}\n{t.round(3).to_string(index=False)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    from optsched.solvers.interrupt import run_main

    raise SystemExit(run_main(main, prog="python -m optsched.experiments.asrpt.paper"))
