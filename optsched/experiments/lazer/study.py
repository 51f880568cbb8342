"""Reproduction of paper 004 (Lazer): Table 2, Fig. 3-5, the load-time sweep, the deferral
ablation, the share of decisions with X > 0 and the per-batch decision delay (Fig. 8f).

Workloads: ``synthetic_workload`` with Table 1's mean inter-arrival time and mean training time
(Earth 39 s / 59.5 min, Saturn 80 s / 72.2 min, Uranus 243 s / 128.1 min), Philly-like GPU
demands (at most one server), the seven models drawn uniformly; 512 GPUs (64 x 8). Load and
save times: :class:`optsched.lazer.LoadSaveModel` (base 60 s unless swept). Baselines: SJF, SRTF
(reserve="best"), periodic SRTF at 60/360/600 s (the intervals of Pollux/Sia, Muri/Gavel,
Optimus). Every table has the paper's number beside ours where the paper gives one, unit-free
ratios, and a ``reproduced`` column for the claim it tests.

A real Helios ``cluster_log.csv`` (Earth, Saturn, Uranus or Venus; not shipped) replaces the
synthetic workloads: :func:`helios_workload` turns it into a job table (every finished GPU job
with its run time, GPUs capped at one 8-GPU server, models drawn with the seed), and
``simulate_policy(..., table=)`` / ``run(..., log=)`` run on it. See formulations/lazer.md#helios-log.

>>> tabs = {}
>>> run(lambda name, df: tabs.__setitem__(name, df), quick=True, seeds=1, only=("table2_512",), n_jobs=200)
>>> list(tabs["table2_512"]["policy"])[:2], bool(tabs["table2_512"]["ours_w95_le_jct95"].all())
(['SJF', 'SRTF'], True)

Tested in ``tests/lazer/test_reproduction.py`` and ``tests/lazer/test_helios_log.py``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from optsched.core import Cluster
from optsched.exceptions import InvalidOptionError
from optsched.experiments.lazer.workloads import (
    TRACES,
    check_table,
    draw_models,
    helios_workload,
    servers_for_load,
    workload,
)
from optsched.lazer import FAMILIES, Lazer, LoadSaveModel
from optsched.lazer.baselines import baseline
from optsched.lazer.deferral import Decision
from optsched.lazer.predictor import GPDeferral
from optsched.sim import Simulator
from optsched.traces import synthetic_workload

POLICY_NAMES = ["SJF", "SRTF", "Pollux (60 s)", "Muri (360 s)", "Optimus (600 s)", "Lazer"]

#: Table 2 (printed unit: minutes), per trace: metric -> six (P50, P95) pairs in POLICY_NAMES order.
PAPER_TABLE2 = {
    "Earth": {
        "jct": [(5.6, 12.6), (7.4, 29.0), (9.9, 94.5), (8.2, 24.4), (10.8, 22.9), (4.6, 10.4)],
        "waiting": [(0.2, 50.7), (1.0, 255.0), (2.9, 1667.9), (4.5, 286.7), (6.9, 270.8), (0.1, 1.1)],
        "futile": [(0.0, 0.0), (1.3, 128.0), (6.4, 252.4), (0.0, 0.0), (0.0, 0.0), (0.1, 4.3)],
    },
    "Saturn": {
        "jct": [(5.3, 129.5), (8.1, 595.1), (8.7, 2260.7), (6.6, 24.8), (9.6, 27.1), (2.8, 13.2)],
        "waiting": [(0.4, 1286.3), (1.6, 13988.2), (3.1, 53772.9), (4.7, 329.6), (7.4, 418.8), (0.0, 4.6)],
        "futile": [(0.0, 0.0), (4.0, 231.8), (7.6, 377.2), (0.0, 0.0), (0.0, 0.0), (0.2, 5.3)],
    },
    "Uranus": {
        "jct": [(14.6, 6999.9), (9.7, 245.6), (14.2, 1018.4), (11.1, 73.9), (12.8, 68.7), (5.9, 29.9)],
        "waiting": [(2.9, 167529.8), (1.8, 4835.8), (4.4, 23585.2), (5.82, 986.5), (8.7, 917.1), (0.2, 88.3)],
        "futile": [(0.0, 0.0), (1.7, 223.5), (2.8, 331.2), (0.0, 0.0), (0.0, 0.0), (0.0, 4.7)],
    },
}


def _policy(name: str, seed: int, gp_cap: int = 500):
    table = {
        "SJF": lambda: baseline("sjf"),
        "SRTF": lambda: baseline("srtf"),
        "Pollux (60 s)": lambda: baseline("srtf-60"),
        "Muri (360 s)": lambda: baseline("srtf-360"),
        "Optimus (600 s)": lambda: baseline("srtf-600"),
        "Lazer": lambda: Lazer(deferral=GPDeferral(seed=seed, cap=gp_cap)),
        "Lazer X=0": lambda: Lazer(),
        "Lazer X=10": lambda: Lazer(deferral=10.0),
        "Lazer X=30": lambda: Lazer(deferral=30.0),
        "Lazer X=60": lambda: Lazer(deferral=60.0),
        "Lazer X=F (oracle)": lambda: Lazer(deferral="oracle"),
    }
    return table[name]()


def simulate_policy(
    trace: str,
    policy: str,
    seed: int,
    n_jobs: int | None,
    *,
    base: float = 60.0,
    servers: int | None = 64,
    rho: float | None = None,
    gp_cap: int = 500,
    table: Any = None,
    record_log: bool = False,
):
    """One run on ``servers`` x 8 GPUs (or as many as give offered load ``rho``): (summary row,
    policy object, result).

    ``table``: a job table (e.g. :func:`helios_workload` of a real log) used instead of the
    synthetic ``workload(trace, n_jobs, seed)``; ``trace`` is then only the label of the row,
    ``n_jobs`` is ignored (the row gives the table's length) and ``seed`` seeds the GP only.
    It is checked (columns ``arrival``, ``duration``, ``gpus`` in [1, 8], ``model``) before the
    simulation starts. ``record_log``: keep the event log (for ``optsched.lazer.check_lifecycle``).
    """
    if table is not None:
        check_table(table)
        df = table
    else:
        df = workload(trace, n_jobs, seed)
    if rho is not None:
        servers = servers_for_load(df, rho)
    ls = LoadSaveModel(base=base)
    pol = _policy(policy, seed, gp_cap)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = Simulator(
            Cluster.homogeneous(servers, 8),
            df,
            pol,
            load_time=ls.load_time,
            save_time=ls.save_time,
            time_decisions=True,
            record_log=record_log,
        ).run()
    wall = time.perf_counter() - t
    cols = res.job_columns()
    s = res.summary()
    fut = cols["futile_time"]
    dec = getattr(pol, "decisions", [])
    row = {
        "trace": trace,
        "policy": policy,
        "seed": seed,
        "base": base,
        "n_jobs": n_jobs if table is None else len(df),
        "gpus": servers * 8,
        "p50_jct": s["p50_jct"] / 60,
        "p95_jct": s["p95_jct"] / 60,
        "p50_waiting": s["p50_waiting"] / 60,
        "p95_waiting": s["p95_waiting"] / 60,
        "p50_futile": float(np.percentile(fut, 50)) / 60,
        "p95_futile": float(np.percentile(fut, 95)) / 60,
        "futile_gpu_share": s["futile_gpu_share"],
        "n_futile": int(cols["n_futile"].sum()),
        "median_W": float(np.median(cols["waiting"])),
        "median_L": float(np.median(cols["loading_time"])),
        "median_T": float(np.median(cols["training_time"])),
        "median_P": float(np.median(cols["saving_time"])),
        "mean_L": float(np.mean(cols["loading_time"])),
        "mean_P": float(np.mean(cols["saving_time"])),
        "decision_ms_mean": s.get("decision_ms_mean", float("nan")),
        "n_decisions": len(dec),
        "share_x_positive": (sum(d.x > 0 for d in dec) / len(dec)) if dec else float("nan"),
        "mean_training_utilization": s["mean_training_utilization"],
        "wall_s": wall,
    }
    return row, pol, res


def _runs(traces, policies, seeds, n_jobs, progress, tables=None, **kw):
    """Rows of ``simulate_policy`` for every (trace, policy, seed); ``tables``: seed -> job table
    (a real log) instead of the synthetic workloads."""
    import pandas as pd

    rows = []
    for tr in traces:
        for p in policies:
            for sd in seeds:
                if tables is not None:
                    kw["table"] = tables(sd)
                rows.append(simulate_policy(tr, p, sd, n_jobs, **kw)[0])
                if progress:
                    print(f"lazer: {tr} {p} seed {sd} done ({rows[-1]['wall_s']:.1f} s)")
    return pd.DataFrame(rows)


def table2(runs):
    """Table 2 beside the paper: mean over seeds of P50/P95 of JCT, waiting and futile time (min)."""
    import pandas as pd

    m = runs.groupby(["trace", "policy"], sort=False).mean(numeric_only=True).reset_index()
    out = []
    for r in m.itertuples(index=False):
        k = POLICY_NAMES.index(r.policy)
        nan = (float("nan"), float("nan"))
        pap = PAPER_TABLE2.get(r.trace, {"jct": [nan] * 6, "waiting": [nan] * 6, "futile": [nan] * 6})
        out.append(
            {
                "trace": r.trace,
                "policy": r.policy,
                "jct_p50": r.p50_jct,
                "paper_jct_p50": pap["jct"][k][0],
                "jct_p95": r.p95_jct,
                "paper_jct_p95": pap["jct"][k][1],
                "waiting_p50": r.p50_waiting,
                "paper_waiting_p50": pap["waiting"][k][0],
                "waiting_p95": r.p95_waiting,
                "paper_waiting_p95": pap["waiting"][k][1],
                "futile_p50": r.p50_futile,
                "paper_futile_p50": pap["futile"][k][0],
                "futile_p95": r.p95_futile,
                "paper_futile_p95": pap["futile"][k][1],
                "paper_w95_le_jct95": (pap["waiting"][k][1] <= pap["jct"][k][1]) if r.trace in PAPER_TABLE2 else None,
                "ours_w95_le_jct95": r.p95_waiting <= r.p95_jct + 1e-9,
            }
        )
    return pd.DataFrame(out)


def ratios(runs, trace: str = "Earth"):
    """Fig. 3 (median JCT / SJF's), Fig. 4 (futile GPU share), Fig. 5 (median W / SJF's) and the
    median W/L/T/P breakdown, each claim marked reproduced or not."""
    import pandas as pd

    m = runs[runs["trace"] == trace].groupby("policy", sort=False).mean(numeric_only=True)
    sjf = m.loc["SJF"]
    paper_jct = {"SRTF": 1.6, "Pollux (60 s)": 2.1, "Muri (360 s)": 2.1, "Optimus (600 s)": 2.6}
    paper_w = {"Pollux (60 s)": 14.2, "Muri (360 s)": 22.2, "Optimus (600 s)": 34.5}
    paper_share = {"SRTF": 0.10, "Pollux (60 s)": 0.13, "Muri (360 s)": 0.0, "Optimus (600 s)": 0.0}
    rows = []
    for p, r in m.iterrows():
        jr = r.p50_jct / sjf.p50_jct
        wr = r.median_W / sjf.median_W if sjf.median_W > 0 else float("nan")
        rows.append(
            {
                "policy": p,
                "median_W_s": r.median_W,
                "median_L_s": r.median_L,
                "median_T_s": r.median_T,
                "median_P_s": r.median_P,
                "mean_P_s": r.mean_P,
                "jct_over_sjf": jr,
                "paper_fig3": paper_jct.get(p, float("nan")),
                "fig3_reproduced": (jr > 1.0) if p in paper_jct else None,
                "W_over_sjf": wr,
                "paper_fig5": paper_w.get(p, float("nan")),
                "futile_gpu_share": r.futile_gpu_share,
                "paper_fig4": paper_share.get(p, float("nan")),
                "fig4_reproduced": (
                    (r.futile_gpu_share > 0.01) if paper_share.get(p, 0) > 0 else (r.futile_gpu_share == 0)
                )
                if p in paper_share
                else None,
            }
        )
    return pd.DataFrame(rows)


PAPER_TESTBED_JCT_P50 = {"SJF": 1.3, "SRTF": 1.5, "Pollux (60 s)": 2.1, "Muri (360 s)": 5.3, "Optimus (600 s)": 8.8}


def fig8_testbed(seeds: Sequence[int], *, n_jobs: int = 100, gap: float | None = None):
    """Fig. 8a-d: 100 Earth-like jobs on the 16-GPU testbed (4 servers x 4 GPUs, jobs of at most
    4 GPUs); P50/P95 JCT and waiting over Lazer's, futile time, and the median of the per-window
    (60 s) utilisation (Fig. 8d; GPUs held, and GPUs training). ``gap``: mean inter-arrival time
    (default: the one that gives offered load 2 on 16 GPUs)."""
    import pandas as pd

    rows = []
    for sd in seeds:
        df = synthetic_workload(
            n_jobs, cluster_gpus=16, mean_gap=39.0, mean_duration=59.5 * 60, models=FAMILIES, max_gpus=4, seed=sd
        )
        span = float(df["arrival"].max())
        load = float((df["gpus"] * np.minimum(df["duration"], span)).sum()) / (span * 16)
        df["arrival"] = df["arrival"] * (load / 2.0 if gap is None else gap / 39.0)
        ls = LoadSaveModel()
        for p in POLICY_NAMES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = Simulator(
                    Cluster.homogeneous(4, 4), df, _policy(p, sd, 150), load_time=ls.load_time, save_time=ls.save_time
                ).run()
            s = res.summary()
            cols = res.job_columns()
            rows.append(
                {
                    "seed": sd,
                    "policy": p,
                    "p50_jct": s["p50_jct"],
                    "p95_jct": s["p95_jct"],
                    "p50_waiting": s["p50_waiting"],
                    "p95_waiting": s["p95_waiting"],
                    "p50_futile": float(np.percentile(cols["futile_time"], 50)),
                    "p95_futile": float(np.percentile(cols["futile_time"], 95)),
                    "median_window_utilization": float(np.median(res.utilization_windows(60.0))),
                    "mean_training_utilization": s["mean_training_utilization"],
                }
            )
    m = pd.DataFrame(rows).groupby("policy", sort=False).mean(numeric_only=True).reset_index()
    lz = m.set_index("policy").loc["Lazer"]
    m["jct_p50_over_lazer"] = m["p50_jct"] / lz["p50_jct"]
    m["paper_jct_p50_over_lazer"] = m["policy"].map(PAPER_TESTBED_JCT_P50)
    m["reproduced"] = [
        (r > 1.0) if p in PAPER_TESTBED_JCT_P50 else None
        for p, r in zip(m["policy"], m["jct_p50_over_lazer"], strict=True)
    ]
    return m


def search_efficiency(seeds: Sequence[int], n_jobs: int | None, *, rho: float = 2.0, n_search: int = 100, tables=None):
    """Fig. 8e: best and mean f = |X - F| over ``n_search`` decisions for BO (the GP in acquisition),
    random search (integer X uniform in [0, 100]) and grid search (X = 0, 1, 2, ...), on the
    decision contexts and counterfactual F of an Earth replay (taken from the oracle's decisions);
    ``tables``: seed -> job table (a real log) instead of the synthetic Earth workload."""
    import pandas as pd

    rows = []
    for sd in seeds:
        tab = None if tables is None else tables(sd)
        _, pol, _ = simulate_policy("Earth", "Lazer X=F (oracle)", sd, n_jobs, rho=rho, table=tab)
        decs = pol.decisions[:n_search]
        rng = np.random.default_rng(sd)
        gp = GPDeferral(seed=sd, min_updates=10**6, cap=10**6)
        gp.reset(None, None)
        f_bo = []
        for d in decs:  # F known at once here: each decision is observed before the next
            e = Decision(d.t0, d.job_id, d.victims, d.context)
            e.x = gp.choose(None, None, e)
            e.f = d.x  # the oracle's X is F
            gp.observe(e)
            f_bo.append(abs(e.x - e.f))
        F = np.array([d.x for d in decs])
        f_rand = np.abs(rng.integers(0, 101, len(F)) - F)
        f_grid = np.abs(np.arange(len(F)) % 101 - F)
        for name, f in (("BO (GP, log-EI)", np.array(f_bo)), ("random", f_rand), ("grid", f_grid)):
            rows.append(
                {
                    "seed": sd,
                    "method": name,
                    "n": len(F),
                    "best_f": float(f.min()) if len(f) else np.nan,
                    "mean_f": float(f.mean()) if len(f) else np.nan,
                    "share_F_zero": float(np.mean(F == 0)),
                }
            )
    df = pd.DataFrame(rows).groupby("method", sort=False).mean(numeric_only=True).reset_index()
    df["paper_best_f_ratio_vs_BO"] = df["method"].map({"random": 1.5, "grid": 1.4})
    return df


def run(
    save: Callable,
    *,
    quick: bool = False,
    seeds: int | None = None,
    progress: bool = False,
    only: Sequence[str] | None = None,
    n_jobs: int | None = None,
    rho: float = 2.0,
    log: Any = None,
    log_start: Any = None,
    table: Any = None,
) -> None:
    """Tables (each saved when done):

    * ``table2_512``: Earth on 512 GPUs as printed (Table 1's gaps; the finding: nothing waits);
    * ``table2`` / ``runs``: every trace on the cluster that gives offered load ``rho`` (default 2.0,
      durations cut at the arrival window: the heavy tail runs past it; see formulations/lazer.md);
    * ``fig3``: Fig. 3-5 ratios on Earth (same cluster);
    * ``deferral``: X = 0, 10, 30, 60, F (oracle), the GP, and SRTF on Earth;
    * ``testbed``: Fig. 8a-d, 100 jobs on 16 GPUs;
    * ``fig8e``: BO vs random vs grid search, 100 searches each, best and mean f = |X - F|;
    * ``base_sweep``: load base 5/30/60/120 s on Earth.

    ``quick``: 1 seed, 1,200 jobs, Earth only, the GP's acquisition capped at 150 updates, no GP in
    the sweep (under a minute); default 5 seeds, 20,000 jobs, cap 500.

    A real Helios log instead of the synthetic traces: ``log`` (path of a ``cluster_log.csv``;
    :func:`helios_workload` with ``n_jobs`` (default: the whole log, 1,200 jobs if ``quick``) and
    ``start=log_start``; the models are drawn again for each seed) or ``table`` (a ready job table,
    used as it is for every seed; the seed then seeds the GP only). Every table above except
    ``testbed`` (the 16-GPU testbed stays synthetic) then runs on it, under the trace name of its
    folder (``.../Earth/cluster_log.csv`` -> ``Earth``, compared with the paper's Earth row), and
    ``table2`` has that one trace. The log is read and checked before any simulation starts.
    """
    cap = 150 if quick else 500
    n = seeds if seeds is not None else (1 if quick else 5)
    sd = list(range(n))
    tables = None
    if log is not None and table is not None:
        raise InvalidOptionError("Give 'log' (a Helios cluster_log.csv) or 'table' (a job table), not both.")
    if log is not None:
        base_table = helios_workload(
            log, seed=0, n_jobs=n_jobs if n_jobs is not None else (1200 if quick else None), start=log_start
        )

        def tables(seed):
            return draw_models(base_table, seed)

    elif table is not None:
        check_table(table)
        base_table = table

        def tables(seed):
            return table

    if tables is not None:
        nj = len(base_table)
        name = base_table.attrs.get("name") or "log"
        traces = [name]
    else:
        nj = n_jobs if n_jobs is not None else (1200 if quick else 20000)
        name = "Earth"
        traces = ["Earth"] if quick else list(TRACES)

    def want(what):
        return only is None or what in only

    if want("table2_512"):
        lit = _runs([name], POLICY_NAMES, sd, nj, progress, tables, servers=64, gp_cap=cap)
        save("table2_512", table2(lit))
    if want("table2") or want("fig3"):
        runs = _runs(traces if want("table2") else [name], POLICY_NAMES, sd, nj, progress, tables, rho=rho, gp_cap=cap)
        if want("fig3"):
            save("fig3", ratios(runs, trace=name))
        if want("table2"):
            save("table2", table2(runs))
            save("runs", runs)
    if want("deferral"):
        pols = ["Lazer X=0", "Lazer X=10", "Lazer X=30", "Lazer X=60", "Lazer X=F (oracle)", "Lazer", "SRTF"]
        d = _runs([name], pols, sd, nj, progress, tables, rho=rho, gp_cap=cap)
        save("deferral", d.groupby("policy", sort=False).mean(numeric_only=True).reset_index())
    if want("testbed"):
        save("testbed", fig8_testbed(sd if quick else list(range(max(5, n)))))
    if want("fig8e"):
        save("fig8e", search_efficiency(sd, nj, rho=rho, tables=tables))
    if want("base_sweep"):
        import pandas as pd

        parts = []
        for base in (5.0, 30.0, 60.0, 120.0):
            pols = ["SJF", "SRTF", "Pollux (60 s)", "Lazer X=0"] + ([] if quick else ["Lazer"])
            parts.append(_runs([name], pols, sd, nj, progress, tables, base=base, rho=rho, gp_cap=cap))
        b = pd.concat(parts)
        save("base_sweep", b.groupby(["base", "policy"], sort=False).mean(numeric_only=True).reset_index())
