"""Demo rows for rigid jobs: exact (HiGHS, CP-SAT) vs list scheduling on the toy and benchmark
instances.

Tested in ``tests/experiments/test_demo.py``.
"""

from __future__ import annotations

from optsched.core.io import load_instance
from optsched.core.library import library_root
from optsched.rigid.exact import solve_exact
from optsched.rigid.heuristics import list_schedule
from optsched.solvers import SolveOptions
from optsched.verify import verify_result
from optsched.verify.rows import exact_vs_algorithm_rows

ROOT = library_root()


def demo_instances(quick: bool = False):
    files = sorted((ROOT / "toy").glob("rigid-*.json"))
    if not quick:
        files += sorted((ROOT / "papers" / "rigid").glob("*.json"))
    return [load_instance(f) for f in files]


def demo_rows(quick: bool = False) -> list[dict]:
    opts = SolveOptions(time_limit=10 if quick else 60, mip_abs_gap=0.999, threads=1)
    rows = []
    for inst in demo_instances(quick):
        exact = [solve_exact(inst, backend="highs", options=opts), solve_exact(inst, backend="cpsat", options=opts)]
        algos = [list_schedule(inst, rule=r, seed=0) for r in ("wspt", "fifo", "spt", "random")]
        rows += exact_vs_algorithm_rows(inst, exact, algos, verify_result)
    return rows
