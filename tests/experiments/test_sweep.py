"""Sweeps: the same table serially, in processes and on a local Dask cluster; resumable after a
kill; provenance recorded and checked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optsched.exceptions import InvalidOptionError
from optsched.experiments import sweep as sweep_mod
from optsched.experiments.sweep import grid, load_sweep, sweep

ROOT = Path(__file__).resolve().parents[2]
PARAMS_AND_RESULTS = ["n", "seed", "optimum", "wspt"]


def exact_vs_wspt(n: int, seed: int) -> dict:
    from optsched.rigid import list_schedule, random_instance, solve_exact
    from optsched.solvers import SolveOptions

    inst = random_instance(n, n_servers=2, gpus_per_server=2, seed=seed)
    opt = solve_exact(inst, options=SolveOptions(time_limit=20, threads=1))
    return {"optimum": opt.objective, "wspt": list_schedule(inst).objective, "status": str(opt.status)}


def heuristics(n: int, seed: int) -> dict:
    from optsched.rigid import list_schedule, random_instance

    inst = random_instance(n, n_servers=2, gpus_per_server=4, seed=seed)
    return {"wspt": list_schedule(inst, rule="wspt").objective, "fifo": list_schedule(inst, rule="fifo").objective}


def slow(i: int, log: str) -> dict:
    with open(log, "a") as f:
        f.write(f"{i}\n")
    time.sleep(0.05)
    return {"square": i * i}


def test_grid():
    assert len(grid(a=[1, 2], b=[3, 4, 5])) == 6


@pytest.mark.parametrize("executor", ["serial", "processes", "dask"])
def test_executors_agree(executor):
    pts = grid(n=[3, 4], seed=[0, 1])
    ref = sweep(exact_vs_wspt, pts, executor="serial", progress=False)
    df = sweep(exact_vs_wspt, pts, executor=executor, n_workers=2, progress=False)
    assert df[PARAMS_AND_RESULTS].equals(ref[PARAMS_AND_RESULTS])
    assert (df["optimum"] <= df["wspt"]).all()
    for col in sweep_mod.PROVENANCE:
        assert col in df


def test_200_cells_identical_on_every_executor_and_from_files(tmp_path):
    pts = grid(n=[4, 6, 8, 10], seed=range(50))
    assert len(pts) == 200
    cols = ["n", "seed", "wspt", "fifo"]
    ref = sweep(heuristics, pts, executor="serial", progress=False, out=tmp_path / "serial")
    for ex in ("processes", "dask"):
        df = sweep(heuristics, pts, executor=ex, n_workers=2, progress=False, out=tmp_path / ex)
        assert df[cols].equals(ref[cols]), ex
        back = load_sweep(tmp_path / ex).sort_values(["n", "seed"]).reset_index(drop=True)
        assert back[cols].equals(ref[cols].sort_values(["n", "seed"]).reset_index(drop=True))


def test_resumes_after_a_kill(tmp_path):
    out, log = tmp_path / "out", tmp_path / "calls.log"
    code = (
        f"from tests.experiments.test_sweep import slow\n"
        f"from optsched.experiments.sweep import sweep\n"
        f"sweep(slow, [{{'i': i, 'log': {str(log)!r}}} for i in range(60)], out={str(out)!r}, progress=False)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(out.glob("cell-*.parquet"))) < 10:
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    n_done = len(list(out.glob("cell-*.parquet")))
    assert 10 <= n_done < 60, "the sweep should have been killed half-way"
    log.write_text("")
    df = sweep(slow, [{"i": i, "log": str(log)} for i in range(60)], out=out, progress=False)
    recomputed = [int(x) for x in log.read_text().split()]
    assert len(recomputed) == 60 - n_done  # finished cells are not run again
    assert df["square"].tolist() == [i * i for i in range(60)]
    assert len(list(out.glob("*.tmp"))) == 0


def test_provenance_mismatch_is_named(tmp_path, monkeypatch):
    sweep(heuristics, grid(n=[3], seed=[0]), out=tmp_path, progress=False)
    with pytest.raises(InvalidOptionError, match="function"):
        sweep(exact_vs_wspt, grid(n=[3], seed=[1]), out=tmp_path, progress=False)
    real = sweep_mod.provenance
    monkeypatch.setattr(sweep_mod, "provenance", lambda: {**real(), "optsched_version": "0.0.1"})
    with pytest.raises(InvalidOptionError, match="optsched_version"):
        sweep(heuristics, grid(n=[3], seed=[1]), out=tmp_path, progress=False)
    df = sweep(heuristics, grid(n=[3], seed=[1]), out=tmp_path, progress=False, force=True)
    assert len(df) == 1


def test_bad_input():
    with pytest.raises(InvalidOptionError, match="executor"):
        sweep(exact_vs_wspt, [], executor="spark", progress=False)
    with pytest.raises(InvalidOptionError, match="duplicate"):
        sweep(heuristics, [{"n": 3, "seed": 0}, {"n": 3, "seed": 0}], progress=False)


def test_unreachable_scheduler_fails_with_its_address():
    with pytest.raises(InvalidOptionError, match=r"127\.0\.0\.1:9"):
        sweep(heuristics, grid(n=[3], seed=[0]), executor="dask", scheduler_address="tcp://127.0.0.1:9", progress=False)


def scaled(i: int, *, factor: int = 1) -> dict:
    return {"value": i * factor}


def test_partial_is_named_after_its_function_and_resumes_in_processes(tmp_path):
    """A functools.partial (fixed keywords such as a cache folder) is recorded under the function it
    wraps, in the worker as in the driver, so a rerun in processes resumes instead of refusing the
    folder (it named the cells 'functools.functools.partial(...)' in the workers before)."""
    from functools import partial

    pts = [{"i": i} for i in range(3)]
    first = sweep(partial(scaled, factor=3), pts, executor="processes", n_workers=2, out=tmp_path, progress=False)
    assert set(first["function"]) == {f"{__name__}.scaled"}
    again = sweep(partial(scaled, factor=3), pts, executor="processes", n_workers=2, out=tmp_path, progress=False)
    assert again["value"].tolist() == [0, 3, 6] and again["elapsed"].tolist() == first["elapsed"].tolist()
