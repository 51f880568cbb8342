"""Benchmarks of the asrpt package (paper 000): Table II and Problem (8) scaling.

    .venv/bin/python -m benchmarks asrpt                    # full: Table II + Problem (8) sweep (~10-20 min)
    .venv/bin/python benchmarks/bench_asrpt.py --quick      # small sweep, 10 s limit
    .venv/bin/python benchmarks/bench_asrpt.py --only-repro # Fig. 6-9 trends only, merged into the JSON
    .venv/bin/python benchmarks/bench_asrpt.py --only-audit # issue 16: lemma sweep, Table II readings, replay times

Writes ``benchmarks/results/asrpt.json``:

* ``reproduction``: Fig. 6-9 tables (mean of 3 seeds) beside the paper's claims;
* ``table2``: per model, mean PITT/PCT of Heavy-Edge and the exact MILP over 20 availability
  patterns (each MILP cross-checked by enumeration), beside the paper's numbers;
* ``problem8``: for n jobs on 3 servers x 4 GPUs (seeds 0-2), CP-SAT status, objective, bound, gap and
  runtime with a 60 s limit; the time-indexed HiGHS model on the smallest size as cross-check;
* for each proven instance: OPT_A1 / OPT_A beside rho (Lemma 1), Lemma 3's sides, and Gamma / OPT_A of
  A-SRPT (tau = 0, 1) and the five baselines beside Theorem 1's bound.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # pragma: no cover - direct script use
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "benchmarks" / "results" / "asrpt.json"


def problem8_sweep(sizes, seeds, time_limit, *, cross_check_size=None):
    from optsched.asrpt.bounds import bound_inputs, lemma3_rhs, opt_a1, opt_a1_tilde
    from optsched.asrpt.exact import solve_exact
    from optsched.asrpt.generate import random_instance
    from optsched.solvers import SolveOptions
    from optsched.verify import verify_result

    rows = []
    for n in sizes:
        for seed in seeds:
            inst = random_instance(n, n_servers=3, gpus_per_server=4, seed=seed, single_gpu=0.3, arrival_rate=2.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = solve_exact(inst, options=SolveOptions(time_limit=time_limit, threads=1, seed=0))
            row = {
                "n_jobs": n,
                "seed": seed,
                "backend": "cpsat",
                "status": str(r.status),
                "objective": r.objective,
                "bound": r.bound,
                "gap": r.gap,
                "runtime": r.runtime,
                "patterns": r.info["patterns"],
                "horizon_slots": r.info["horizon_slots"],
                "verified": verify_result(inst, r).ok if r.schedule is not None else None,
            }
            if r.optimal:
                b = bound_inputs(inst)
                a1 = opt_a1(b)
                row.update(
                    {
                        "opt_a1": a1,
                        "rho": b.rho,
                        "kappa": b.kappa,
                        "opt_a1_over_opt_a": a1 / r.objective,
                        "lemma1_holds": a1 <= b.rho * r.objective,
                        "opt_a1_tilde": opt_a1_tilde(b),
                        "lemma3_rhs": lemma3_rhs(b),
                        "lemma3_holds": opt_a1_tilde(b) <= lemma3_rhs(b),
                        "eps_bar": b.eps_bar,
                    }
                )
                from optsched.asrpt.online import BASELINES
                from optsched.asrpt.policy import empirical_ratio, simulate_asrpt

                for tau in (0.0, 1.0):
                    e = empirical_ratio(inst, r.objective, tau=tau)
                    row[f"asrpt_tau{tau:g}_ratio"] = e["ratio"]
                    row[f"asrpt_tau{tau:g}_theorem1_bound"] = e["theorem_1_bound"]
                    row[f"asrpt_tau{tau:g}_lemma2_holds"] = e["lemma_2_holds"]
                for name, pol in BASELINES().items():
                    res = simulate_asrpt(inst, pol)
                    row[f"{name}_ratio"] = res.summary()["total_completion_time"] / r.objective
            rows.append(row)
            print(f"  problem8 n={n} seed={seed}: {r}", flush=True)
            if n == cross_check_size:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    h = solve_exact(inst, backend="highs", options=SolveOptions(time_limit=time_limit, threads=1))
                rows.append(
                    {
                        "n_jobs": n,
                        "seed": seed,
                        "backend": "highs",
                        "status": str(h.status),
                        "objective": h.objective,
                        "bound": h.bound,
                        "gap": h.gap,
                        "runtime": h.runtime,
                        "verified": verify_result(inst, h).ok if h.schedule is not None else None,
                    }
                )
                print(f"  problem8 n={n} seed={seed}: {h}", flush=True)
    return rows


def repro(seeds, quick):
    """Fig. 6-9 tables (mean over seeds), total JCT in hours, beside the paper's claims."""
    from optsched.experiments.asrpt.repro import PAPER_CLAIMS, reproduce_seeds

    res = reproduce_seeds(seeds, quick=quick)
    for k, df in res.items():
        print(f"== {k}: {PAPER_CLAIMS[k]}\n{df.round(3).to_string()}", flush=True)
    return {
        k: {"paper": PAPER_CLAIMS[k], "seeds": list(seeds), "table": json.loads(df.to_json(orient="index"))}
        for k, df in res.items()
    }


def audit(quick: bool) -> dict:
    """Issue 16 measurements: the lemma sweep under both slot conventions, Table II under both readings of
    eq. (6), perfect vs random-forest prediction with the placement-waste decomposition."""
    import pandas as pd

    from optsched.asrpt.audit import lemma_sweep, reading_changes, table2_readings, table2_summary
    from optsched.experiments.asrpt.repro import perfect_vs_rf

    out: dict = {"lemma_sweep": {}}
    for label, kw, n in (
        ("2x2", {}, 200 if quick else 2000),
        ("3x4", dict(n_servers=3, gpus=4, max_jobs=7), 30 if quick else 300),
    ):
        for fs in (1, 0):
            t0 = time.perf_counter()
            df = pd.DataFrame(lemma_sweep(n, first_slot=fs, seed=2026, time_limit=20, **kw))
            ok = df[df.status == "optimal"]
            row = {
                "cases": len(df),
                "proven": len(ok),
                "seconds": time.perf_counter() - t0,
                "rho_hat_gt_rho": int((ok.rho_hat > ok.rho * (1 + 1e-12)).sum()),
            }
            for c in [c for c in df.columns if c.startswith(("lemma2", "theorem1"))]:
                row[f"{c}_fail"] = int((~ok[c].astype(bool)).sum())
            out["lemma_sweep"][f"{label}-first_slot{fs}"] = row
            print(f"  lemma sweep {label} first_slot={fs}: {row}", flush=True)
    rows = table2_readings(n_patterns=5 if quick else 20)
    out["table2_readings"] = json.loads(table2_summary(rows).reset_index().to_json(orient="records"))
    out["alpha_min_changed_by_reading"] = {
        f"{M}x{g}": reading_changes(200, n_servers=M, gpus=g) for M, g in ((4, 2), (3, 4))
    }
    pv = perfect_vs_rf(seeds=(0, 1) if quick else (0, 1, 2, 3, 4), n_jobs=60 if quick else 200)
    out["perfect_vs_rf"] = json.loads(pv.to_json(orient="records"))
    print(pv.round(3).to_string(), flush=True)
    return out


def replay_times(sizes, *, predictor: str = "rf") -> list[dict]:
    """Wall time of one replay of A-SRPT and of each baseline on the paper's cluster (250 x 8 GPUs, 10 Gbps,
    300 GB/s), PAI-like jobs at the generator's default load (0.9), seed 0."""
    from optsched.asrpt.online import ASRPT, BASELINES
    from optsched.asrpt.policy import simulate_asrpt
    from optsched.experiments.asrpt.repro import build_instance, pai_like_table

    rows = []
    for n in sizes:
        t0 = time.perf_counter()
        inst, _ = build_instance(
            pai_like_table(5 * n, cluster_gpus=2000, load=0.9, seed=0), n_servers=250, seed=0, predictor=predictor
        )
        row = {"jobs": inst.n_jobs, "predictor": predictor, "build_s": time.perf_counter() - t0}
        for name, pol in {"A-SRPT": ASRPT(tau=1.0), **BASELINES()}.items():
            t1 = time.perf_counter()
            simulate_asrpt(inst, pol)
            row[f"{name}_s"] = time.perf_counter() - t1
        row["A-SRPT_ms_per_job"] = 1e3 * row["A-SRPT_s"] / inst.n_jobs
        rows.append(row)
        print(f"  replay {row}", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="*")
    ap.add_argument("--time-limit", type=float)
    ap.add_argument("--skip-table2", action="store_true")
    ap.add_argument("--skip-repro", action="store_true", help="skip the Fig. 6-9 reproduction (~2 min for 3 seeds)")
    ap.add_argument(
        "--only-repro", action="store_true", help="only (re)run the reproduction and merge it into the JSON"
    )
    ap.add_argument(
        "--only-audit",
        action="store_true",
        help="only the issue-16 measurements (lemma sweep, Table II readings, perfect vs RF, replay "
        "times) merged into the JSON (~10 min)",
    )
    a = ap.parse_args(argv or [])
    if a.only_audit:
        out = json.loads(OUT.read_text()) if OUT.exists() else {}
        out["audit"] = audit(a.quick)
        out["replay"] = replay_times([1000] if a.quick else [1000, 10000])
        OUT.write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"merged the audit into {OUT}")
        return 0
    if a.only_repro:
        out = json.loads(OUT.read_text()) if OUT.exists() else {}
        out["reproduction"] = repro([0] if a.quick else [0, 1, 2], a.quick)
        OUT.write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"merged the reproduction into {OUT}")
        return 0
    sizes = a.sizes or ([4, 8] if a.quick else [4, 8, 12, 16, 20, 24, 28])
    seeds = [0] if a.quick else [0, 1, 2]
    tl = a.time_limit or (10.0 if a.quick else 60.0)
    t0 = time.perf_counter()
    out = {"machine": platform.platform(), "python": platform.python_version(), "time_limit": tl}
    if not a.skip_table2:
        from optsched.experiments.asrpt.table2 import table2, table2_rows

        rows = table2_rows(n_patterns=5 if a.quick else 20)
        out["table2_rows"] = rows
        out["table2"] = json.loads(table2(rows).to_json(orient="index"))
        print(table2(rows).round(3).T, flush=True)
    out["problem8"] = problem8_sweep(sizes, seeds, tl, cross_check_size=sizes[0])
    if not a.skip_repro:
        out["reproduction"] = repro([0] if a.quick else [0, 1, 2], a.quick)
    out["runtime"] = time.perf_counter() - t0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print(f"wrote {OUT} in {out['runtime']:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
