"""Parameter sweeps on one machine (serial or processes) or on a Dask cluster, resumable.

Every cell (one call ``func(**point)``) becomes one row: the point's parameters, the function's
results, and provenance (optsched version, git commit when available, package versions, wall
time, machine). With ``out=DIR`` each finished cell is written at once as its own Parquet file
in ``DIR`` (a Parquet dataset: ``pandas.read_parquet(DIR)`` or :func:`load_sweep` reads it), so a
sweep killed half-way keeps its finished cells, and running it again computes only the missing
ones. A results folder written by another optsched version, or by another function, is not mixed
in silently: the mismatch is named (``force=True`` to mix anyway).

>>> from optsched.experiments.sweep import sweep
>>> def f(n, seed):
...     return {"value": n * 10 + seed}
>>> sweep(f, [{"n": 1, "seed": 0}, {"n": 2, "seed": 1}], executor="serial", progress=False)["value"].tolist()
[10, 21]

See the Sweeps page of the documentation (``docs/sweeps.md``) for running on a cluster.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata as md
import itertools
import json
import os
import pickle
import platform
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as completed_futures
from pathlib import Path
from typing import Any

from optsched import __version__
from optsched.core.io import atomic_write
from optsched.exceptions import InvalidOptionError
from optsched.experiments.compare.executors import check_dask_scheduler
from optsched.solvers import interrupt

EXECUTORS = ("serial", "processes", "dask")
"""Where :func:`sweep` runs the cells: this process, local processes, or a Dask cluster."""
PROVENANCE = ("optsched_version", "git_commit", "packages", "machine", "function", "cell", "elapsed")
"""Provenance columns added to every row (``elapsed`` is the cell's wall time in seconds)."""
_PACKAGES = ("numpy", "scipy", "pandas", "pyomo", "highspy", "ortools", "scikit-learn", "dask")


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """The Cartesian product of named axes: one dict per point, the last axis varying fastest.

    Examples
    --------
    >>> grid(n=[10, 20], seed=range(2))
    [{'n': 10, 'seed': 0}, {'n': 10, 'seed': 1}, {'n': 20, 'seed': 0}, {'n': 20, 'seed': 1}]
    """

    keys = list(axes)
    return [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*(list(axes[k]) for k in keys))]


def cell_key(point: Mapping[str, Any]) -> str:
    """A stable id of a cell: the hash of its parameters (sorted, as JSON), the same in every process
    and on every machine; the order of the keys does not matter.

    Examples
    --------
    >>> cell_key({"n": 10, "seed": 0}) == cell_key({"seed": 0, "n": 10})
    True
    >>> len(cell_key({"n": 10, "seed": 0}))
    16
    """
    text = json.dumps({str(k): point[k] for k in sorted(point, key=str)}, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def provenance() -> dict[str, Any]:
    """What produced a result: optsched version, git commit (None outside a checkout), package
    versions (JSON), machine (host, system, CPU count). :func:`sweep` adds it to every row.

    Examples
    --------
    >>> import json, optsched
    >>> p = provenance()
    >>> p["optsched_version"] == optsched.__version__, "numpy" in json.loads(p["packages"])
    (True, True)
    """

    pkgs = {}
    for p in _PACKAGES:
        with contextlib.suppress(md.PackageNotFoundError):
            pkgs[p] = md.version(p)
    return {
        "optsched_version": __version__,
        "git_commit": _git_commit(),
        "packages": json.dumps(pkgs, sort_keys=True),
        "machine": f"{platform.node()} {platform.system()} {platform.machine()} {os.cpu_count()} cpus",
    }


def _func_name(func: Callable[..., Any]) -> str:
    """``module.qualname`` of the function a cell calls; a ``functools.partial`` is named after the
    function it wraps (its fixed keywords, such as a cache folder, are not part of the results)."""

    while isinstance(func, functools.partial):
        func = func.func
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"


def _call(func: Callable[..., Mapping[str, Any]], params: Mapping[str, Any], prov: Mapping[str, Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    res = func(**params)
    if not isinstance(res, Mapping):
        raise InvalidOptionError(
            f"A sweep function must return a mapping of results; {_func_name(func)} returned {type(res).__name__}."
        )
    row = dict(params)
    clash = sorted(set(res) & (set(params) | set(PROVENANCE)))
    if clash:
        raise InvalidOptionError(
            f"{_func_name(func)} returns {clash}, which are parameter or provenance column names; rename them."
        )
    row.update(res)
    row.update(prov)
    row["function"] = _func_name(func)
    row["cell"] = cell_key(params)
    row["elapsed"] = time.perf_counter() - t0
    return row


def _write_cell(out: Path, row: dict[str, Any]) -> None:
    import pandas as pd

    df = pd.DataFrame([row])
    atomic_write(out / f"cell-{row['cell']}.parquet", lambda t: df.to_parquet(t, index=False))


def load_sweep(out: str | Path):
    """The table of a sweep folder: every finished cell, one row each (an empty table if there is none).

    Examples
    --------
    >>> import tempfile
    >>> def square(x):
    ...     return {"y": x * x}
    >>> out = tempfile.mkdtemp()
    >>> _ = sweep(square, grid(x=[1, 2, 3]), executor="serial", out=out, progress=False)
    >>> sorted(load_sweep(out)["y"])
    [1, 4, 9]
    """
    import pandas as pd

    files = sorted(Path(out).glob("cell-*.parquet"))
    if not files:
        return pd.DataFrame()
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _existing(out: Path, func: Callable[..., Any], prov: Mapping[str, Any], force: bool) -> dict[str, dict]:
    done = load_sweep(out)
    if done.empty:
        return {}
    if not force:
        for col, want in (("optsched_version", prov["optsched_version"]), ("function", _func_name(func))):
            have = sorted(set(done[col].astype(str))) if col in done else ["<missing>"]
            if have != [str(want)]:
                raise InvalidOptionError(
                    f"The sweep folder {str(out)!r} has results with {col} {have}, not {want!r}; they are not mixed "
                    f"in silently. Use another folder, or force=True (--force) to mix them."
                )
    return {str(r["cell"]): r for r in done.to_dict("records")}


def _progress(total: int, enabled: bool):
    """A rich progress bar (a no-op object when disabled)."""

    class _Null:
        def advance(self) -> None: ...
        def close(self) -> None: ...

    if not enabled or total == 0:
        return _Null()
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    prog = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        transient=True,
    )
    task = prog.add_task("sweep", total=total)
    prog.start()

    class _Bar:
        def advance(self) -> None:
            prog.advance(task)

        def close(self) -> None:
            prog.stop()

    return _Bar()


def _dask_client(scheduler_address: str | None, n_workers: int):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise InvalidOptionError(
            "executor='dask' needs dask[distributed]: pip install 'optsched[distributed]'."
        ) from None
    if scheduler_address is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None)
        return Client(cluster), cluster
    check_dask_scheduler(scheduler_address)
    try:
        return Client(scheduler_address, timeout="10s"), None
    except (OSError, TimeoutError) as e:
        raise InvalidOptionError(
            f"Cannot reach the Dask scheduler at {scheduler_address!r} within 10 s ({e}); "
            f"check the address and that the scheduler is running."
        ) from None


def _check_picklable(func: Any) -> None:
    """``processes`` sends ``func`` to its workers pickled: say so before any cell runs."""

    try:
        pickle.dumps(func)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        name = getattr(func, "__qualname__", repr(func))
        raise InvalidOptionError(
            f"The sweep function {name!r} cannot be sent to worker processes ({e}): a lambda or a function "
            f"defined inside another is not importable. Define it at the top level of a module, or use "
            f"executor='serial'."
        ) from None


def sweep(
    func: Callable[..., Mapping[str, Any]],
    points: Iterable[Mapping[str, Any]],
    *,
    executor: str = "processes",
    n_workers: int | None = None,
    scheduler_address: str | None = None,
    out: str | Path | None = None,
    force: bool = False,
    progress: bool = True,
):
    """Run ``func(**point)`` for every point and return one DataFrame row per point.

    Parameters
    ----------
    func : callable
        Returns a mapping of results; importable (a module-level function) for ``processes`` and
        ``dask``, whose workers receive it pickled.
    points : iterable of dict
        Keyword arguments of each call (see :func:`grid`); a ``seed`` parameter is recorded like
        any other.
    executor : {"processes", "serial", "dask"}
        ``processes`` uses ``n_workers`` local processes (default: every core); ``dask`` uses
        ``scheduler_address`` (an existing cluster, ``"tcp://host:8786"``, reached within 10 s) or
        starts a ``LocalCluster(n_workers, processes=True)`` for the duration of the sweep.
    out : path, optional
        Results folder: each finished cell is written there at once (Parquet), finished cells of
        an earlier run are not recomputed.
    force : bool
        Mix into an ``out`` folder written by another optsched version or function.
    progress : bool
        A progress bar (rich).

    Returns
    -------
    pandas.DataFrame
        Parameters, results and provenance of each point, in the order of ``points``.

    Raises
    ------
    InvalidOptionError
        Unknown executor, unreachable scheduler, a provenance mismatch in ``out``, a function
        that does not return a mapping, a function ``processes`` cannot pickle (a lambda).
        Checked before any cell runs where possible.

    Examples
    --------
    >>> def exact_vs_wspt(n, seed):  # in a module of your own for "processes" and "dask"
    ...     from optsched.rigid import list_schedule, random_instance, solve_exact
    ...     inst = random_instance(n, n_servers=2, gpus_per_server=2, seed=seed)
    ...     return {"optimum": solve_exact(inst).objective, "wspt": list_schedule(inst).objective}
    >>> df = sweep(exact_vs_wspt, grid(n=[4], seed=[0, 1]), executor="serial", progress=False)
    >>> df[["n", "seed"]].values.tolist(), bool((df["wspt"] >= df["optimum"]).all())
    ([[4, 0], [4, 1]], True)
    >>> sorted(c for c in df.columns if c not in ("n", "seed", "optimum", "wspt"))
    ['cell', 'elapsed', 'function', 'git_commit', 'machine', 'optsched_version', 'packages']

    Run again with ``out=DIR`` and only the cells missing from ``DIR`` are computed; with
    ``executor="dask", scheduler_address="tcp://HOST:8786"`` the cells run on a Dask cluster.
    """
    import pandas as pd

    if executor not in EXECUTORS:
        raise InvalidOptionError(f"Unknown executor {executor!r}; choose one of {list(EXECUTORS)}.")
    n_workers = n_workers or os.cpu_count() or 1
    if n_workers < 1:
        raise InvalidOptionError(f"n_workers must be >= 1; got {n_workers}.")
    pts = [dict(p) for p in points]
    keys = [cell_key(p) for p in pts]
    if len(set(keys)) != len(keys):
        raise InvalidOptionError("The sweep has duplicate points (same parameters twice); give each cell once.")
    prov = provenance()
    done: dict[str, dict] = {}
    out_p = None
    if out is not None:
        out_p = Path(out)
        if out_p.exists() and not out_p.is_dir():
            raise InvalidOptionError(f"The sweep results path {str(out_p)!r} is a file; give a folder.")
        out_p.mkdir(parents=True, exist_ok=True)
        for stale in out_p.glob(".cell-*.tmp"):  # a cell being written when an earlier run was killed
            stale.unlink(missing_ok=True)
        done = _existing(out_p, func, prov, force)
    todo = [i for i, k in enumerate(keys) if k not in done]
    if executor == "processes" and todo:
        _check_picklable(func)
    rows: dict[int, dict[str, Any]] = {i: done[k] for i, k in enumerate(keys) if k in done}
    bar: Any = None

    def finish(i: int, row: dict[str, Any]) -> None:  # the driver writes each cell as it arrives
        rows[i] = row
        if out_p is not None:
            _write_cell(out_p, row)
        bar.advance()

    try:
        with interrupt.deferred():  # a signal waits until the bar is up: a half-started one keeps stderr
            bar = _progress(len(todo), progress)
        if executor == "serial" or not todo:
            for i in todo:
                finish(i, _call(func, pts[i], prov))
        elif executor == "processes":
            with ProcessPoolExecutor(max_workers=n_workers) as ex:
                futs = {ex.submit(_call, func, pts[i], prov): i for i in todo}
                for f in completed_futures(futs):
                    finish(futs[f], f.result())
        else:
            from dask.distributed import as_completed

            client, cluster = _dask_client(scheduler_address, n_workers)
            try:
                futs = client.map(_call, [func] * len(todo), [pts[i] for i in todo], [prov] * len(todo), pure=False)
                index = {f.key: i for f, i in zip(futs, todo, strict=True)}
                for f in as_completed(futs):
                    finish(index[f.key], f.result())
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    finally:
        if bar is not None:
            with interrupt.deferred():  # and until it is down again
                bar.close()
    return pd.DataFrame([rows[i] for i in range(len(pts))])
