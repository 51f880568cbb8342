"""Demo rows for paper 000 (A-SRPT): exact Problem (8) (CP-SAT and HiGHS) on the toy and paper
instances, and Heavy-Edge vs the exact placement MILP on the Table II profiles.

Placement rows: ``objective`` = per-iteration time (s) of the placement, ``optimum`` = the MILP's
proven minimum, ``verified`` = the MILP's alpha equals eq. (7) re-evaluated on its x and equals the
enumeration optimum.

Tested in ``tests/asrpt/test_problem8.py`` and ``tests/experiments/test_demo.py``.
"""

from __future__ import annotations

import time
import warnings

from optsched.asrpt import toy_instance
from optsched.asrpt.bounds import bound_inputs, check_bounds
from optsched.asrpt.exact import solve_exact
from optsched.asrpt.generate import random_instance
from optsched.asrpt.heavy_edge import heavy_edge, placement_counts
from optsched.asrpt.placement import availability_patterns, enumerate_placement, solve_placement
from optsched.asrpt.profiles import PROFILES
from optsched.asrpt.timing import alpha
from optsched.core.io import load_instance
from optsched.core.library import library_root
from optsched.core.registry import algorithms
from optsched.solvers import SolveOptions
from optsched.verify import verify_result
from optsched.verify.rows import exact_vs_algorithm_rows

ROOT = library_root()


def demo_instances(quick: bool = False):
    out = [toy_instance(f.stem) for f in sorted((ROOT / "toy").glob("asrpt-*.json"))]
    out += [load_instance(f) for f in sorted((ROOT / "papers" / "asrpt").glob("*.json"))]
    if not quick:
        out.append(random_instance(8, n_servers=3, gpus_per_server=4, seed=0, single_gpu=0.3, arrival_rate=2.0))
    return out


def placement_rows(quick: bool = False) -> list[dict]:
    kw = dict(g=8, b_inter=10e9 / 8, b_intra=300e9)
    rows = []
    for name, make in PROFILES.items():
        job = make()
        for free in availability_patterns(job.gpus, 8, 2 if quick else 5, seed=0):
            ex = solve_placement(job, free, exact_usage=True, options=SolveOptions(threads=1, time_limit=30), **kw)
            en = enumerate_placement(job, free, exact_usage=True, **kw)
            proven = ex.optimal if hasattr(ex, "optimal") else ex.status.value == "optimal"
            same = abs(ex.alpha - en.alpha) <= 1e-9 * max(1.0, en.alpha)
            ok = proven and same
            why = None
            if not proven:
                why = f"[placement] the placement MILP is not proven optimal (status {ex.status})."
            elif not same:
                why = f"[placement] the MILP's alpha {ex.alpha!r} differs from the enumeration optimum {en.alpha!r}."
            t0 = time.perf_counter()
            mp = heavy_edge(job, free, seed=0)
            t_he = time.perf_counter() - t0
            a_he = alpha(job, placement_counts(job, mp, len(free)), **kw)
            inst = f"placement-{name}-{'-'.join(map(str, free))}"
            for algo, obj, rt, st, b in (
                ("placement-milp[highs]", ex.alpha, ex.runtime, str(ex.status), ex.bound),
                ("heavy-edge", a_he, t_he, "heuristic", None),
            ):
                rows.append(
                    {
                        "instance": inst,
                        "algorithm": algo,
                        "objective": obj,
                        "optimum": ex.alpha,
                        "bound": b,
                        "gap": ex.gap if b is not None else None,
                        "ratio": obj / ex.alpha,
                        "runtime": rt,
                        "status": st,
                        "verified": bool(ok),
                        "violation": why,
                    }
                )
    return rows


def demo_rows(quick: bool = False) -> list[dict]:
    opts = SolveOptions(time_limit=10 if quick else 60, threads=1)
    rows = []
    for inst in demo_instances(quick):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exact = [solve_exact(inst, backend="cpsat", options=opts)]
            if inst.n_jobs <= 4:
                exact.append(solve_exact(inst, backend="highs", options=opts))
        algos = [spec(inst) for spec in algorithms("asrpt", exact=False)]
        part = exact_vs_algorithm_rows(inst, exact, algos, verify_result)
        opt = next((r for r in exact if r.optimal), None)
        if opt is not None:
            b = bound_inputs(inst)
            for br in check_bounds(inst, opt_a=opt.objective, inputs=b, rtol=1e-4):
                part[0].setdefault(br.name, f"{br.lhs:.4g} <= {br.rhs:.4g}: {br.holds}")
            for row, res in zip(part[len(exact) :], algos, strict=True):
                if res.algorithm == "asrpt-a-srpt":
                    tau = res.info["params"]["tau"]
                    rs = {
                        x.name: x
                        for x in check_bounds(
                            inst, opt_a=opt.objective, gamma_a=res.objective, tau=tau, inputs=b, rtol=1e-4
                        )
                    }
                    row["theorem_1"] = (
                        f"{rs['theorem_1'].lhs:.4g} <= {rs['theorem_1'].rhs:.4g}: {rs['theorem_1'].holds}"
                    )
                    row["lemma_2"] = f"{rs['lemma_2'].lhs:.4g} <= {rs['lemma_2'].rhs:.4g}: {rs['lemma_2'].holds}"
        rows += part
    rows += placement_rows(quick)
    return rows
