"""Demo rows for paper 004 (``optsched demo``): the futile-preemption chain (2) on one GPU, the
SRPT optimum on one GPU without load/save times (Lazer with X = 0 and SRTF reach it), and
Lazer vs SRTF and SJF on 1,000 Earth-like jobs (mean JCT; no exact optimum there).

Tested in ``tests/experiments/test_demo.py``.
"""

from __future__ import annotations

import time

from optsched.core import Cluster, Instance, Job
from optsched.lazer.baselines import baseline
from optsched.lazer.lifecycle import check_lifecycle, is_futile, srpt_total_flow
from optsched.lazer.loadsave import FAMILIES, LoadSaveModel
from optsched.lazer.policy import Lazer
from optsched.sim import Simulator
from optsched.traces import synthetic_workload
from optsched.verify import verify
from optsched.verify.report import Violation
from optsched.verify.rows import violation_text


def _row(instance, algorithm, objective, optimum, runtime, problems, **extra):
    """One demo row; ``problems`` are the violations found (empty: verified)."""
    return {
        "instance": instance,
        "algorithm": algorithm,
        "objective": objective,
        "optimum": optimum,
        "bound": None,
        "gap": None,
        "ratio": (objective / optimum) if optimum else None,
        "runtime": runtime,
        "status": "heuristic",
        "verified": not problems,
        "violation": violation_text(problems),
        **extra,
    }


def _lifecycle(res) -> list:
    return [Violation("lifecycle (1)", m) for m in check_lifecycle(res)]


def _problems(cluster, jobs, res, *, lifecycle: bool = False) -> list:
    """The verifier's violations of the simulated schedule (with each job's held time as its work),
    and with ``lifecycle`` the problems of (1) JCT = W + L + T + P."""
    df = res.jobs_frame().set_index("job_id")
    held = df["loading_time"] + df["training_time"] + df["saving_time"]
    inst = Instance(cluster, [Job(j.id, work=float(held[j.id]), gpus=j.gpus, arrival=j.arrival) for j in jobs])
    return list(verify(inst, res.schedule()).violations) + (_lifecycle(res) if lifecycle else [])


def _policies():
    return {
        "sjf": lambda: baseline("sjf"),
        "srtf": lambda: baseline("srtf"),
        "lazer": lambda: Lazer(),
        "lazer-oracle": lambda: Lazer(deferral="oracle"),
    }


def demo_rows(quick: bool = False) -> list[dict]:
    import numpy as np

    rows = []
    one = Cluster.homogeneous(1, 1)
    for gap in (1.0, 3.0, 7.0):  # (2): A trains, B preempts it (p = 2, l = 5), C arrives gap s after B
        jobs = [Job("A", work=100), Job("B", work=60, arrival=10), Job("C", work=30, arrival=10 + gap)]
        for name in ("srtf", "lazer", "lazer-oracle"):
            t = time.perf_counter()
            res = Simulator(one, jobs, _policies()[name](), load_time=5.0, save_time=2.0).run()
            df = res.jobs_frame()
            rows.append(
                _row(
                    f"lazer-chain-gap{gap:g}",
                    name,
                    float(df["futile_time"].sum()),
                    None,
                    time.perf_counter() - t,
                    _problems(one, jobs, res, lifecycle=True),
                    objective_name="futile seconds",
                    eq2_futile=is_futile(95, 60, 30, 2, 5, gap),
                )
            )
    # l = p = 0 on one GPU: SRPT is optimal for total flow time (Schrage 1968)
    rng = np.random.default_rng(4)
    jobs = [Job(i, work=float(rng.integers(1, 20)), arrival=float(rng.integers(0, 30))) for i in range(12)]
    flows = {}
    for name in ("srtf", "lazer", "sjf"):
        t = time.perf_counter()
        res = Simulator(one, jobs, _policies()[name]()).run()
        flows[name] = (res.summary()["total_flow_time"], time.perf_counter() - t, _problems(one, jobs, res))
    opt = srpt_total_flow(jobs)
    for name, (v, rt, ok) in flows.items():
        rows.append(_row("lazer-srpt-12", name, v, opt, rt, ok, objective_name="total flow time"))
    # 1,000 Earth-like jobs (Table 1 gaps and mean duration) on 8 x 8 GPUs
    n = 300 if quick else 1000
    df = synthetic_workload(
        n, cluster_gpus=64, mean_gap=39.0, mean_duration=59.5 * 60, models=FAMILIES, max_gpus=8, seed=0
    )
    ls = LoadSaveModel()
    cl = Cluster.homogeneous(8, 8)
    for name in ("sjf", "srtf", "lazer"):
        t = time.perf_counter()
        res = Simulator(cl, df, _policies()[name](), load_time=ls.load_time, save_time=ls.save_time).run()
        s = res.summary()
        rows.append(
            _row(
                f"lazer-earth-{n}",
                name,
                s["mean_jct"],
                None,
                time.perf_counter() - t,
                _lifecycle(res),
                objective_name="mean JCT (s)",
                futile_gpu_share=s["futile_gpu_share"],
            )
        )
    return rows
