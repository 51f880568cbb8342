"""Demo rows for paper 003: exact optimum (HiGHS, CP-SAT, subset DP) vs RANK, SERPT, SR and
RANDOM on the two-job example of Sec. III-A and on benchmark instances (N = 30, 40).

Tested in ``tests/sojourn/test_cli.py``.
"""

from __future__ import annotations

from optsched.core.io import load_instance
from optsched.core.library import library_root
from optsched.sojourn.evaluate import pair_costs
from optsched.sojourn.exact import solve_exact
from optsched.sojourn.policies import random_policy, rank, serpt, sr
from optsched.solvers import SolveOptions
from optsched.verify import verify_result
from optsched.verify.rows import exact_vs_algorithm_rows

ROOT = library_root()


def demo_instances(quick: bool = False):
    files = sorted((ROOT / "toy").glob("sojourn-*.json"))
    papers = sorted((ROOT / "papers" / "sojourn").glob("*.json"))
    files += [f for f in papers if "n30" in f.name] if quick else papers
    return [load_instance(f) for f in files]


def demo_rows(quick: bool = False) -> list[dict]:
    opts = SolveOptions(time_limit=10 if quick else 60, threads=1)
    rows = []
    for inst in demo_instances(quick):
        pc = pair_costs(inst)
        exact = [solve_exact(inst, backend=b, options=opts, pc=pc) for b in ("highs", "cpsat")]
        if inst.n_jobs <= 16:
            exact.append(solve_exact(inst, backend="dp", pc=pc))
        algos = [rank(inst, pc=pc), serpt(inst, pc=pc), sr(inst, pc=pc), random_policy(inst, seed=0, pc=pc)]
        rows += exact_vs_algorithm_rows(inst, exact, algos, verify_result)
    return rows
