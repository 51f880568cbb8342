"""Speed of Lazer's pieces (paper 004): the deferral predictor per decision, the scheduling delay
per event batch of each policy (Fig. 8f), and full replays of Earth-like workloads on 512 GPUs.

``python -m benchmarks lazer`` (or ``python benchmarks/bench_lazer.py [--quick]``) writes
``benchmarks/results/lazer.json`` with its targets (issue 15): predictor <= 10 ms median in
acquisition and <= 2 ms in exploitation; SRTF <= 15 s and Lazer <= 120 s on 100k Earth-like jobs
on 512 GPUs (``--quick``: 20k jobs).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "lazer.json"


def predictor(n_points=(100, 200), n_calls: int = 40) -> dict:
    """Per-call wall time of acquisition, exploitation and a hyperparameter fit on ``n`` points."""
    import sklearn.gaussian_process  # noqa: F401  (imported before timing a fit)

    from optsched.lazer.predictor import GPDeferral

    rng = np.random.default_rng(0)
    out = {}
    for n in n_points:
        gp = GPDeferral(seed=0)
        gp.reset(None, None)
        base = np.array([39.0, 600.0, 70.0, 8.0])
        xs, f = rng.uniform(0, 100, n), 37.0
        gp._z = [gp._features(x, tuple(base * rng.uniform(0.5, 2, 4)))[0] for x in xs]
        gp._y = list(np.abs(xs - f) + rng.normal(0, 1, n))
        gp.n_updates = 0  # a hyperparameter refit
        t = time.perf_counter()
        gp._fit()
        fit = time.perf_counter() - t
        acq, exp = [], []
        for _ in range(n_calls):
            c = tuple(base * rng.uniform(0.5, 2, 4))
            t = time.perf_counter()
            gp._acquire(c)
            acq.append(time.perf_counter() - t)
            t = time.perf_counter()
            gp._exploit(c)
            exp.append(time.perf_counter() - t)
        out[str(n)] = {
            "fit_ms": fit * 1e3,
            "acquisition_ms_median": float(np.median(acq)) * 1e3,
            "acquisition_ms_p95": float(np.percentile(acq, 95)) * 1e3,
            "exploitation_ms_median": float(np.median(exp)) * 1e3,
        }
    return out


def delays(n_jobs: int) -> dict:
    """Mean wall-clock per event batch (hooks + schedule) on Earth at offered load 2 (Fig. 8f)."""
    from optsched.experiments.lazer.study import simulate_policy

    out = {}
    for p in ("SJF", "SRTF", "Pollux (60 s)", "Muri (360 s)", "Optimus (600 s)", "Lazer X=0", "Lazer"):
        row, _, _ = simulate_policy("Earth", p, 0, n_jobs, rho=2.0)
        out[p] = {
            "decision_ms_mean": row["decision_ms_mean"],
            "wall_s": row["wall_s"],
            "n_decisions": row["n_decisions"],
            "share_x_positive": row["share_x_positive"],
        }
    return out


def replay(n_jobs: int) -> dict:
    """Whole replays for SRTF and Lazer (GP): on 512 GPUs with Table 1's Earth gaps (where nothing
    waits), and on the cluster of offered load 2 (where Lazer decides at most arrivals)."""
    from optsched.experiments.lazer.study import simulate_policy

    out = {}
    for p in ("SRTF", "Lazer"):
        row, _, _ = simulate_policy("Earth", p, 0, n_jobs, servers=64)
        out[p] = {"wall_s": row["wall_s"], "n_decisions": row["n_decisions"]}
        row, _, _ = simulate_policy("Earth", p, 0, n_jobs, rho=2.0)
        out[p + " rho=2"] = {"wall_s": row["wall_s"], "n_decisions": row["n_decisions"], "gpus": row["gpus"]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(RESULTS))
    a = ap.parse_args(argv)
    from optsched.core.io import atomic_write_text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = predictor((100,) if a.quick else (100, 200))
        dl = delays(1200 if a.quick else 5000)
        n_big = 20_000 if a.quick else 100_000
        rp = replay(n_big)
    res = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "quick": a.quick,
        "predictor": pred,
        "delays": dl,
        "replay": {"n_jobs": n_big, **rp},
        "paper": {"delay_ms": {"SJF/SRTF": 3.8, "periodic": 20.5, "Lazer": 7.1}},
        "targets": [
            {
                "case": "lazer predictor acquisition median n=100 (ms)",
                "measured": pred["100"]["acquisition_ms_median"],
                "target": 10.0,
                "unit": "ms",
            },
            {
                "case": "lazer predictor exploitation median n=100 (ms)",
                "measured": pred["100"]["exploitation_ms_median"],
                "target": 2.0,
                "unit": "ms",
            },
            {
                "case": f"lazer SRTF {n_big // 1000}k Earth jobs on 512 GPUs (s)",
                "measured": rp["SRTF"]["wall_s"],
                "target": 15.0 * n_big / 100_000,
                "unit": "s",
            },
            {
                "case": f"lazer Lazer {n_big // 1000}k Earth jobs on 512 GPUs (s)",
                "measured": rp["Lazer"]["wall_s"],
                "target": 120.0 * n_big / 100_000,
                "unit": "s",
            },
            {
                "case": f"lazer SRTF {n_big // 1000}k Earth jobs at offered load 2 (s)",
                "measured": rp["SRTF rho=2"]["wall_s"],
                "target": 15.0 * n_big / 100_000,
                "unit": "s",
            },
            {
                "case": f"lazer Lazer {n_big // 1000}k Earth jobs at offered load 2 (s)",
                "measured": rp["Lazer rho=2"]["wall_s"],
                "target": 120.0 * n_big / 100_000,
                "unit": "s",
            },
        ],
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(Path(a.out), json.dumps(res, indent=2) + "\n")
    print(json.dumps({"predictor": pred, "replay": rp}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
