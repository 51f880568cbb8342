"""Sweeps give the same table serially, in processes and on a local Dask cluster."""

from __future__ import annotations

import pytest

from optsched.exceptions import InvalidOptionError
from optsched.experiments.sweep import grid, sweep


def exact_vs_wspt(n: int, seed: int) -> dict:
    from optsched.rigid import list_schedule, random_instance, solve_exact
    from optsched.solvers import SolveOptions

    inst = random_instance(n, 2, 2, seed=seed)
    opt = solve_exact(inst, options=SolveOptions(time_limit=20, threads=1))
    return {"optimum": opt.objective, "wspt": list_schedule(inst).objective, "status": str(opt.status)}


def test_grid():
    assert len(grid(a=[1, 2], b=[3, 4, 5])) == 6


@pytest.mark.parametrize("executor", ["serial", "processes", "dask"])
def test_executors_agree(executor):
    pts = grid(n=[3, 4], seed=[0, 1])
    ref = sweep(exact_vs_wspt, pts, progress=False)
    df = sweep(exact_vs_wspt, pts, executor=executor, n_workers=2, progress=False)
    assert df[["n", "seed", "optimum", "wspt"]].equals(ref[["n", "seed", "optimum", "wspt"]])
    assert (df["optimum"] <= df["wspt"]).all()


def test_unknown_executor():
    with pytest.raises(InvalidOptionError, match="executor"):
        sweep(exact_vs_wspt, [], executor="spark", progress=False)
