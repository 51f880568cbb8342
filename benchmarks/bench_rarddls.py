"""Paper 002 (rarddls): SJF-BCO speed on the Sec. 7 setting, exact MILP proofs, MILP = enumeration,
Lemma 2-4 / Thm 5-6 checks on small instances.

``python -m benchmarks rarddls`` (or ``python benchmarks/bench_rarddls.py [--quick]``) writes
``benchmarks/results/rarddls.json`` with a ``targets`` table (issue 14's measured targets).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import warnings
from collections import Counter
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "rarddls.json"


def bench_sjf_bco(seeds):
    from optsched.rarddls import first_fit, list_scheduling, sjf_bco
    from optsched.rarddls.generate import paper_instance

    out = {"printed": [], "sizes": [], "ff": [], "ls": [], "passes_printed": None, "passes_sizes": None}
    for s in seeds:
        inst = paper_instance(seed=s)
        inst.u, inst.phi_table  # noqa: B018 - instance constants, computed once per instance
        for key, f, kw in (
            ("printed", sjf_bco, {}),
            ("sizes", sjf_bco, {"kappas": "sizes"}),
            ("ff", first_fit, {}),
            ("ls", list_scheduling, {}),
        ):
            t0 = time.perf_counter()
            r = f(inst, **kw)
            out[key].append(time.perf_counter() - t0)
            if key in ("printed", "sizes"):
                out[f"passes_{key}"] = r.info["passes"]
    return {k: (statistics.median(v) if isinstance(v, list) else v) for k, v in out.items()}


def bench_exact(cases, seeds, limit, backend="highs"):
    from optsched.exceptions import SolverLimitWarning
    from optsched.rarddls.exact import solve_exact
    from optsched.rarddls.generate import random_instance
    from optsched.solvers import SolveOptions

    res = {}
    for name, n, caps in cases:
        rows = []
        for s in seeds:
            inst = random_instance(n, gpus_per_server=caps, seed=s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SolverLimitWarning)
                r = solve_exact(inst, backend=backend, options=SolveOptions(time_limit=limit, threads=1))
            rows.append(
                {
                    "seed": s,
                    "optimal": r.optimal,
                    "runtime": round(r.runtime, 2),
                    "solver_runtime": round(r.info["solver_runtime"], 2),
                    "objective": r.objective,
                    "bound": r.bound,
                    "horizon": r.info["horizon_slots"],
                    "heuristic_makespan": r.info["heuristic_makespan"],
                    "lower_bound": r.info["lower_bound"],
                    "model_slots": r.info["model_slots"],
                    "n_vars": r.info["n_vars"],
                    "n_constraints": r.info["n_constraints"],
                }
            )
        res[name] = {
            "runs": rows,
            "proven": sum(r["optimal"] for r in rows),
            "of": len(rows),
            "max_runtime_proven": max((r["runtime"] for r in rows if r["optimal"]), default=None),
        }
    return res


def bench_scale(clusters, ns, seeds, limit, backend="highs"):
    """Largest n with every seed proven within ``limit`` s, per cluster (n grows until a seed stays open)."""
    out = {}
    for name, caps in clusters:
        rows, largest = [], None
        for n in ns:
            case = bench_exact([(f"{n} jobs on {name}", n, caps)], seeds, limit, backend)[f"{n} jobs on {name}"]
            rows.append(
                {
                    "n": n,
                    "proven": case["proven"],
                    "of": case["of"],
                    "max_runtime_proven": case["max_runtime_proven"],
                    "runtimes": [r["runtime"] for r in case["runs"]],
                }
            )
            if case["proven"] < case["of"]:
                break
            largest = n
        out[name] = {"largest_n_all_proven": largest, "seeds": list(seeds), "rows": rows}
    return out


def bench_agreement(n_instances):
    from optsched.rarddls.exact import enumerate_optimum, solve_exact
    from optsched.rarddls.generate import random_instance
    from optsched.rarddls.sjfbco import list_scheduling, sjf_bco
    from optsched.solvers import SolveOptions

    agree = 0
    for s in range(n_instances):
        inst = random_instance(3, gpus_per_server=[2, 2], seed=1000 + s)
        H = int(min(sjf_bco(inst, kappas="sizes").objective, list_scheduling(inst).objective))
        best, _, _ = enumerate_optimum(inst, horizon=H)
        r = solve_exact(inst, options=SolveOptions(time_limit=30, threads=1), horizon=H)
        agree += bool(r.optimal and r.objective == best)
    return {"instances": n_instances, "agree": agree}


def bench_bounds(n_instances, limit):
    from optsched.exceptions import SolverLimitWarning
    from optsched.rarddls.bounds import check_bounds
    from optsched.rarddls.generate import random_instance
    from optsched.solvers import SolveOptions

    viol: Counter = Counter()
    ratios, bounds, n = [], [], 0
    for s in range(n_instances):
        inst = random_instance(2 + s % 3, gpus_per_server=[[2, 2], [2, 2, 2], [4, 2]][s % 3], seed=s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SolverLimitWarning)
            rep = check_bounds(inst, options=SolveOptions(time_limit=limit, threads=1))
        if rep.values["T_star"] is None:
            continue
        n += 1
        ratios.append(rep.values["ratio"])
        bounds.append(rep.values["thm5_bound"])
        viol.update(rep.violated)
    return {
        "instances_proven": n,
        "violations": dict(viol),
        "ratio_max": max(ratios),
        "ratio_mean": statistics.mean(ratios),
        "thm5_bound_min": min(bounds),
        "thm5_bound_median": statistics.median(bounds),
    }


SECTIONS = ("sjf", "exact", "agreement", "bounds", "scale", "cpsat")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        default=list(SECTIONS),
        help="sections to (re)measure; the others are kept from the existing results file",
    )
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    q = a.quick
    out = Path(a.out)
    res: dict = json.loads(out.read_text()) if out.exists() and set(a.only) != set(SECTIONS) else {}
    res["machine"] = {
        "python": platform.python_version(),
        "processor": platform.processor(),
        "system": platform.platform(),
    }
    if "sjf" in a.only:
        res["sjf_bco_160_jobs"] = bench_sjf_bco([0] if q else [0, 1, 2])
    if "exact" in a.only:
        res["exact"] = bench_exact(
            [("6 jobs on 3x4", 6, [4, 4, 4]), ("8 jobs on 2x4", 8, [4, 4])], range(2) if q else range(10), 60.0
        )
    if "agreement" in a.only:
        res["milp_vs_enumeration"] = bench_agreement(5 if q else 50)
    if "bounds" in a.only:
        res["bounds"] = bench_bounds(12 if q else 120, 20.0)
    if "scale" in a.only:
        res["scale"] = bench_scale(
            [("3x4", [4, 4, 4]), ("2x4", [4, 4])], [10] if q else [10, 12, 14, 16], range(2) if q else range(5), 60.0
        )
    if "cpsat" in a.only:  # the same rows solved by CP-SAT (1 worker): an alternative back end, not the MILP
        res["exact_cpsat"] = bench_exact(
            [("6 jobs on 3x4", 6, [4, 4, 4]), ("8 jobs on 2x4", 8, [4, 4])], range(2) if q else range(10), 60.0, "cpsat"
        )
        res["scale_cpsat"] = bench_scale(
            [("3x4", [4, 4, 4]), ("2x4", [4, 4])],
            [10] if q else [10, 12, 14, 16],
            range(2) if q else range(5),
            60.0,
            "cpsat",
        )
    sj = res["sjf_bco_160_jobs"]
    ex = res["exact"]
    res["targets"] = [
        {
            "case": "SJF-BCO 160 jobs, printed kappa loop (s)",
            "measured": round(sj["printed"], 3),
            "target": 3.0,
            "unit": "s",
        },
        {
            "case": "SJF-BCO 160 jobs, kappa over sizes (s)",
            "measured": round(sj["sizes"], 3),
            "target": 1.0,
            "unit": "s",
        },
        {
            "case": "MILP proven <= 60 s, 6 jobs on 3x4 (of 10)",
            "measured": ex["6 jobs on 3x4"]["proven"],
            "target": ex["6 jobs on 3x4"]["of"],
            "unit": "instances",
            "sense": "min",
        },
        {
            "case": "MILP proven <= 60 s, 8 jobs on 2x4 (of 10)",
            "measured": ex["8 jobs on 2x4"]["proven"],
            "target": ex["8 jobs on 2x4"]["of"],
            "unit": "instances",
            "sense": "min",
        },
        {
            "case": "MILP = enumeration on 3-job instances",
            "measured": res["milp_vs_enumeration"]["agree"],
            "target": res["milp_vs_enumeration"]["instances"],
            "unit": "instances",
            "sense": "min",
        },
    ]
    res.setdefault("sections_s", {})
    res["sections_s"][" ".join(a.only)] = round(time.perf_counter() - t0, 1)
    res["total_s"] = round(time.perf_counter() - t0, 1)
    res["note"] = f"sections re-measured in the last run: {', '.join(a.only)}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res["targets"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
