"""Demo rows for paper 002: exact T* (MILP, and enumeration for <= 3 jobs) vs SJF-BCO, FF, LS, with
the Thm 5 bound n_g varphi u / l beside each row.

Tested in ``tests/rarddls/test_bounds.py``.
"""

from __future__ import annotations

from optsched.rarddls import toy_instance
from optsched.rarddls.exact import solve_exact
from optsched.rarddls.generate import random_instance
from optsched.rarddls.sjfbco import first_fit, list_scheduling, sjf_bco
from optsched.solvers import SolveOptions
from optsched.verify import verify_result
from optsched.verify.rows import exact_vs_algorithm_rows


def demo_instances(quick: bool = False):
    out = [toy_instance()]
    out += [random_instance(n, gpus_per_server=[2, 2], seed=s) for n, s in ((4, 1), (5, 2))]
    if not quick:
        out += [
            random_instance(6, gpus_per_server=[4, 4, 4], seed=3),
            random_instance(8, gpus_per_server=[4, 4], seed=4),
        ]
    return out


def demo_rows(quick: bool = False) -> list[dict]:
    """One row per (instance, algorithm), each schedule verified; ``thm5_bound`` = n_g varphi u / l."""
    opts = SolveOptions(time_limit=10 if quick else 60, threads=1)
    rows = []
    for inst in demo_instances(quick):
        exact = [solve_exact(inst, options=opts)]
        if inst.n_jobs <= 3:
            exact.append(solve_exact(inst, backend="enumerate"))
        algos = [sjf_bco(inst), first_fit(inst), list_scheduling(inst)]
        new = exact_vs_algorithm_rows(inst, exact, algos, verify_result)
        for r in new:
            r["thm5_bound"] = inst.n_g * inst.varphi * inst.u / inst.l
        rows += new
    return rows
