"""Fig. 6-9 trends of the A-SRPT paper at a scale that runs in minutes on 2 cores.

Workload (the paper's recipe, Sec. V-A-1-b, on a smaller cluster): a job table with ``arrival``,
``duration``, ``gpus``, ``group``, ``user`` -- the calibrated synthetic *PAI-like* table of
:func:`pai_like_table` (70 % single-GPU jobs, recurring groups, ~60 % of repeats with the same
duration), or the real PAI tables via ``optsched.traces.load_pai`` when downloaded. Each group gets a
model configuration with its GPU demand (:func:`job_for_group`); iterations n_i = duration /
alpha~min_i; predictions by a random forest on (group, user) fitted on the first 80 % of the
table (the paper's split), evaluated on the rest.

``python -m optsched.experiments.asrpt.repro [--quick] [--seeds 0 1 2]`` prints the four tables beside the paper's
claims; ``reproduce(...)`` returns them as DataFrames.

Tested in ``tests/asrpt/test_pai_tables.py`` and ``tests/asrpt/test_perfect_vs_rf.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from optsched.asrpt.heavy_edge import alpha_min_estimate
from optsched.asrpt.model import AsrptInstance, AsrptJob, Stage
from optsched.asrpt.online import ASRPT, BASELINES
from optsched.asrpt.policy import simulate_asrpt
from optsched.asrpt.prediction import IterationPredictor, average_prediction_error
from optsched.asrpt.profiles import MB, pipeline
from optsched.core.cluster import Cluster
from optsched.core.seeds import as_generator
from optsched.exceptions import InvalidOptionError

PAPER_CLAIMS = {
    "fig6": "A-SRPT reduces total JCT by 31%-91% vs the baselines (37.5k-150k jobs, 250 x 8 GPUs); SPJF worst",
    "fig7": "gain grows as single-GPU jobs drop from 80% to 0%: 16%-57%",
    "fig8": "1-50 Gbps NIC, 0% single-GPU: 12% better than WCS-Duration at 50 Gbps, up to 92% at 1 Gbps",
    "fig9": "eps_bar: random forest 369, median 563, mean 593; A-SRPT(RF) 14% worse than A-SRPT-Perfect",
}


def pai_like_table(
    n_jobs: int,
    *,
    single_gpu: float = 0.7,
    n_groups: int | None = None,
    repeat_exact: float = 0.6,
    load: float = 0.9,
    cluster_gpus: int = 64,
    median_s: float = 600.0,
    arrival_rate: float | None = None,
    seed=0,
):
    """A PAI-shaped job table: recurring groups (each with a user, a GPU demand in {1, 2, 4, 8} -- 1 with
    probability ``single_gpu`` -- and a typical duration, lognormal around ``median_s``); a job repeats
    its group's duration exactly with probability ``repeat_exact``, else x lognormal(0, 0.8);
    Poisson arrivals at offered GPU load ``load``, or at ``arrival_rate`` jobs per second when given (the
    same draws: only the time scale changes)."""
    import pandas as pd

    rng = as_generator(seed)
    n_groups = n_groups or max(2, n_jobs // 5)
    g_gpus = np.where(rng.random(n_groups) < single_gpu, 1, rng.choice([2, 4, 8], size=n_groups, p=[0.4, 0.35, 0.25]))
    g_dur = np.minimum(median_s * rng.lognormal(0.0, 1.0, n_groups), 20 * median_s)
    g_user = rng.integers(0, max(2, n_groups // 3), n_groups)
    pop = rng.lognormal(0.0, 1.0, n_groups)  # skewed popularity: a few groups recur often
    grp = rng.choice(n_groups, size=n_jobs, p=pop / pop.sum())
    dur = np.where(rng.random(n_jobs) < repeat_exact, g_dur[grp], g_dur[grp] * rng.lognormal(0.0, 0.8, n_jobs))
    gpus = g_gpus[grp]
    if arrival_rate is not None:
        if not (arrival_rate > 0 and np.isfinite(arrival_rate)):
            raise InvalidOptionError(f"arrival_rate must be a number > 0 (jobs per second); got {arrival_rate!r}.")
        rate = float(arrival_rate)
    else:
        rate = load * cluster_gpus / float(np.mean(dur * gpus))
    arrival = np.cumsum(rng.exponential(1.0 / rate, n_jobs)) - 0.0
    arrival[0] = 0.0
    return pd.DataFrame(
        {
            "job_id": np.arange(n_jobs),
            "arrival": np.round(arrival),
            "duration": dur,
            "gpus": gpus,
            "group": [f"g{k}" for k in grp],
            "user": [f"u{g_user[k]}" for k in grp],
        }
    )


def job_for_group(gpus: int, rng) -> dict:
    """A model configuration with ``gpus`` GPUs (the paper pairs each group with a profiled model):
    one GPU -> a single-stage job (ResNet/Inception-like times); more -> a VGG19-like pipeline, a
    GPT-like uniform pipeline or a BERT-like data-parallel job, chosen at random."""
    if gpus == 1:
        p = float(rng.uniform(0.03, 0.15))
        return {"stages": [Stage(k=1, p_f=p / 3, p_b=2 * p / 3)]}
    kind = rng.choice(["vgg", "gpt", "bert"])
    if kind == "vgg":
        ks = {2: (1, 1), 4: (1, 1, 1, 1), 8: (2, 2, 3, 1)}[gpus]
        if len(ks) == 2:
            j = pipeline(0, ks, (0.024, 0.021), (3.2 * MB,), (76 * MB, 494 * MB))
        else:
            j = pipeline(
                0,
                ks,
                (0.013, 0.011, 0.020, 0.001),
                (51.4 * MB, 25.7 * MB, 3.2 * MB),
                (1.2 * MB, 8.9 * MB, 66 * MB, 494 * MB),
            )
        return {"stages": list(j.stages)}
    if kind == "gpt":
        j = pipeline(0, (1,) * gpus, (0.0034 * 8 / gpus,) * gpus, (12.6 * MB,) * (gpus - 1), (0.0,) * gpus)
        return {"stages": list(j.stages)}
    p = 0.09  # BERT-large, 340M parameters (fp32 gradients 1.36 GB), batch split over the replicas
    return {"stages": [Stage(k=gpus, p_f=p / 3 / gpus, p_b=2 * p / 3 / gpus, h=1.36e9)]}


def build_instance(
    table,
    *,
    n_servers: int = 8,
    gpus: int = 8,
    nic_gbps: float = 10.0,
    intra_gbyte: float = 300.0,
    predictor: str = "rf",
    train_fraction: float = 0.8,
    slot: float = 1.0,
    seed=0,
):
    """Instance from a job table: group -> model config, n_i = duration / alpha~min_i, predictions fitted
    on the first ``train_fraction`` of the table; the returned instance holds the remaining jobs.

    Returns ``(instance, eps_bar)``."""
    rng = as_generator(seed)
    cl = Cluster.homogeneous(n_servers, gpus, bandwidth_inter=nic_gbps * 1e9 / 8, bandwidth_intra=intra_gbyte * 1e9)
    cfg: dict = {}
    rows = []
    probe = AsrptInstance(cl, [], name="probe")
    for r in table.itertuples(index=False):
        g = int(min(r.gpus, gpus * n_servers))
        key = (r.group, g)
        if key not in cfg:
            c = job_for_group(g if g in (1, 2, 4, 8) else 1, rng)
            j = AsrptJob("x", c["stages"], iterations=1)
            cfg[key] = (c, alpha_min_estimate(j, probe))
        c, a = cfg[key]
        rows.append((r, c, max(1, int(round(r.duration / a)))))
    cut = int(round(train_fraction * len(rows)))
    hist = [(r.group, r.user, n) for r, _, n in rows[:cut]]
    test = rows[cut:] if cut < len(rows) else rows
    pred = IterationPredictor(predictor, seed=0).fit(hist)
    n_act = [n for _, _, n in test]
    p = pred.predict([(r.group, r.user) for r, _, _ in test], actual=n_act)
    t0 = min(r.arrival for r, _, _ in test)
    jobs = [
        AsrptJob(
            i,
            c["stages"],
            iterations=n,
            arrival=float(round((r.arrival - t0) / slot) * slot),
            predicted_iterations=int(pi),
            group=r.group,
            user=r.user,
        )
        for i, ((r, c, n), pi) in enumerate(zip(test, p, strict=True))
    ]
    inst = AsrptInstance(cl, jobs, name=f"pai-like-{len(jobs)}", slot=slot)
    return inst, average_prediction_error(n_act, p)


def run_policies(instance, *, tau: float = 1.0, which=None) -> dict:
    """Total JCT (sum of completion - arrival, seconds) of A-SRPT and the five baselines."""
    out = {}
    pols = {"A-SRPT": None, **BASELINES()}
    for name, pol in pols.items():
        if which is not None and name not in which:
            continue
        res = simulate_asrpt(instance, pol, tau=tau) if pol is None else simulate_asrpt(instance, pol)
        out[name] = float(res.summary()["total_flow_time"])
    return out


def reproduce(
    *, quick: bool = False, seed: int = 0, table=None, n_servers: int = 4, tau: float = 1.0, load: float = 2.0
) -> dict:
    """The four figures as DataFrames (rows: x value; columns: policies; values: total JCT in hours)."""
    import pandas as pd

    G = n_servers * 8
    base_n = 60 if quick else 200
    res: dict = {}

    def tbl(n, single=0.7):
        if table is not None:
            return table.head(n)
        # the first 80 % train the predictor, the last 20 % are scheduled: n scheduled jobs need n / 0.2 rows
        return pai_like_table(5 * n, single_gpu=single, cluster_gpus=G, load=load, seed=seed)

    def row(t, **kw):
        inst, eps = build_instance(t, n_servers=n_servers, seed=seed, **kw)
        r = run_policies(inst, tau=tau)
        return {k: v / 3600 for k, v in r.items()}, eps, inst.n_jobs

    fig6 = {}
    for n in [base_n // 2, base_n] if quick else [base_n // 4, base_n // 2, 3 * base_n // 4, base_n]:
        r, _, m = row(tbl(n))
        fig6[m] = r
    res["fig6"] = pd.DataFrame(fig6).T.rename_axis("jobs")
    fig7 = {}
    for s in [0.8, 0.0] if quick else [0.8, 0.6, 0.4, 0.2, 0.0]:
        r, _, _ = row(tbl(base_n // 2, single=s))
        fig7[f"{int(100 * s)}%"] = r
    res["fig7"] = pd.DataFrame(fig7).T.rename_axis("single-GPU jobs")
    fig8 = {}
    for bw in [1, 50] if quick else [1, 5, 10, 25, 50]:
        r, _, _ = row(tbl(base_n // 2, single=0.0), nic_gbps=bw)
        fig8[f"{bw} Gbps"] = r
    res["fig8"] = pd.DataFrame(fig8).T.rename_axis("NIC")
    fig9 = {}
    t = tbl(base_n)
    for p in ("rf", "median", "mean", "perfect"):
        inst, eps = build_instance(t, n_servers=n_servers, seed=seed, predictor=p)
        r = run_policies(inst, tau=tau, which=None if p == "rf" else ["A-SRPT"])
        fig9[p] = {"eps_bar": eps, **{k: v / 3600 for k, v in r.items()}}
    res["fig9"] = pd.DataFrame(fig9).T.rename_axis("predictor")
    for k in ("fig6", "fig7", "fig8"):
        df = res[k]
        base = df.drop(columns=["A-SRPT"])
        df["A-SRPT gain vs best baseline"] = 1 - df["A-SRPT"] / base.min(axis=1)
        df["A-SRPT gain vs worst baseline"] = 1 - df["A-SRPT"] / base.max(axis=1)
    return res


def placement_waste(policy, instance) -> dict:
    """After an A-SRPT run: GPU-seconds busy, the part of them spent above alpha~min (jobs started on
    placements slower than Heavy-Edge's estimate), and how many jobs ran > COMM_HEAVY times slower."""
    n = {j.id: j.iterations for j in instance.jobs}
    busy = extra = 0.0
    slowed, worst = 0, 1.0
    for jid, a in policy.started_alpha.items():
        info = policy.info[jid]
        busy += n[jid] * a * info.job.gpus
        extra += n[jid] * (a - info.a_min) * info.job.gpus
        slowed += a / info.a_min > policy.comm_heavy
        worst = max(worst, a / info.a_min)
    return {
        "gpu_busy_s": busy,
        "waste_share": extra / busy if busy else 0.0,
        "jobs_slowed": int(slowed),
        "max_slowdown": worst,
    }


def perfect_vs_rf(
    seeds=(0, 1, 2, 3, 4),
    *,
    n_jobs: int = 200,
    nic_gbps=(10.0, 2400.0),
    n_servers: int = 4,
    load: float = 2.0,
    tau: float = 1.0,
    single_gpu: float = 0.7,
):
    """A-SRPT with the random forest vs perfect prediction, per seed and NIC bandwidth,
    with the share of busy GPU-seconds wasted on placements slower than alpha~min (:func:`placement_waste`).

    Returns a DataFrame (one row per NIC bandwidth and seed)."""
    import pandas as pd

    out = []
    for nic in nic_gbps:
        for seed in seeds:
            t = pai_like_table(5 * n_jobs, single_gpu=single_gpu, cluster_gpus=8 * n_servers, load=load, seed=seed)
            row = {"nic_gbps": nic, "seed": seed}
            for p in ("rf", "perfect"):
                inst, _ = build_instance(t, n_servers=n_servers, seed=seed, predictor=p, nic_gbps=nic)
                pol = ASRPT(tau=tau)
                res = simulate_asrpt(inst, pol)
                w = placement_waste(pol, inst)
                row[f"{p}_mean_jct_s"] = float(res.summary()["total_flow_time"]) / inst.n_jobs
                row[f"{p}_waste_share"] = w["waste_share"]
                row[f"{p}_jobs_slowed"] = w["jobs_slowed"]
                row[f"{p}_max_slowdown"] = w["max_slowdown"]
            out.append(row)
    return pd.DataFrame(out)


def reproduce_seeds(seeds, **kw) -> dict:
    """:func:`reproduce` for several seeds; the mean of each table (gains recomputed from the means)."""
    runs = [reproduce(seed=s, **kw) for s in seeds]
    out = {}
    for k in runs[0]:
        cols = [c for c in runs[0][k].columns if not c.startswith("A-SRPT gain")]
        df = sum(r[k][cols] for r in runs) / len(runs)
        if k != "fig9":
            base = df.drop(columns=["A-SRPT"])
            df["A-SRPT gain vs best baseline"] = 1 - df["A-SRPT"] / base.min(axis=1)
            df["A-SRPT gain vs worst baseline"] = 1 - df["A-SRPT"] / base.max(axis=1)
        out[k] = df
    return out


def main(argv=None) -> int:  # pragma: no cover
    import pandas as pd

    ap = argparse.ArgumentParser(description="A-SRPT Fig. 6-9 trends")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, nargs="*", default=[0])
    a = ap.parse_args(argv)
    pd.set_option("display.width", 220)
    t0 = time.perf_counter()
    res = reproduce_seeds(a.seeds, quick=a.quick)
    for k, df in res.items():
        print(f"\n== {k}: {PAPER_CLAIMS[k]}\n{df.round(3).to_string()}")
    print(f"\n({time.perf_counter() - t0:.1f} s)")
    return 0


def run(save, *, quick: bool = False, seeds: int | None = None, progress: bool = False) -> None:
    """``optsched reproduce asrpt-fig6-9``: the four tables (mean over seeds; total JCT in hours),
    and the paper's claims beside them (``claims``). ``quick``: 1 seed, 60 jobs per point."""
    import pandas as pd

    n = seeds if seeds is not None else (1 if quick else 3)
    res = reproduce_seeds(list(range(n)), quick=quick)
    for k, df in res.items():
        save(k, df.reset_index())
    save("claims", pd.DataFrame({"figure": list(PAPER_CLAIMS), "paper": list(PAPER_CLAIMS.values())}))


if __name__ == "__main__":  # pragma: no cover
    from optsched.solvers.interrupt import run_main

    raise SystemExit(run_main(main, prog="python -m optsched.experiments.asrpt.repro"))
