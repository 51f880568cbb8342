"""Parameter sweeps on one machine (serial or processes) or on a Dask cluster.

>>> from optsched.experiments.sweep import sweep
>>> def f(n, seed):
...     return {"value": n * 10 + seed}
>>> sweep(f, [{"n": 1, "seed": 0}, {"n": 2, "seed": 1}], progress=False)["value"].tolist()
[10, 21]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from optsched.exceptions import InvalidOptionError

__all__ = ["sweep", "grid"]


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """Cartesian product of named axes: ``grid(n=[1, 2], seed=[0, 1])`` -> 4 dicts."""
    import itertools

    keys = list(axes)
    return [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*(list(axes[k]) for k in keys))]


def _call(func: Callable[..., Mapping[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    out = dict(func(**params))
    row = dict(params)
    row.update(out)
    row.setdefault("elapsed", time.perf_counter() - t0)
    return row


def sweep(func: Callable[..., Mapping[str, Any]], points: Iterable[Mapping[str, Any]], *,
          executor: str = "serial", n_workers: int = 2, scheduler_address: str | None = None,
          progress: bool = True):
    """Run ``func(**point)`` for every point and return one DataFrame row per point.

    Parameters
    ----------
    func : callable returning a mapping of results (must be importable: a module-level function
        for ``processes`` and ``dask``).
    points : iterable of dict
        Keyword arguments of each call (see :func:`grid`).
    executor : {"serial", "processes", "dask"}
        ``dask`` uses ``scheduler_address`` (an existing cluster, e.g. ``"tcp://host:8786"``) or
        starts a ``LocalCluster(n_workers, processes=True)`` for the duration of the sweep.
    progress : bool
        A tqdm progress bar.

    Returns
    -------
    pandas.DataFrame
        The parameters and the results of each point, in the order of ``points``.
    """
    import pandas as pd
    from tqdm.auto import tqdm

    pts = [dict(p) for p in points]
    bar = tqdm(total=len(pts), disable=not progress, desc="sweep")
    rows: list[dict[str, Any]] = [None] * len(pts)  # type: ignore[list-item]
    if executor == "serial":
        for i, p in enumerate(pts):
            rows[i] = _call(func, p)
            bar.update()
    elif executor == "processes":
        with ProcessPoolExecutor(max_workers=n_workers) as ex:
            futs = {ex.submit(_call, func, p): i for i, p in enumerate(pts)}
            from concurrent.futures import as_completed

            for f in as_completed(futs):
                rows[futs[f]] = f.result()
                bar.update()
    elif executor == "dask":
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError:
            raise InvalidOptionError("executor='dask' needs dask[distributed]: pip install 'optsched[distributed]'.") \
                from None
        cluster = None
        if scheduler_address is None:
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        client = Client(scheduler_address or cluster)
        try:
            futs = client.map(_call, [func] * len(pts), pts, pure=False)
            index = {f.key: i for i, f in enumerate(futs)}
            for f in as_completed(futs):
                rows[index[f.key]] = f.result()
                bar.update()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        raise InvalidOptionError(f"Unknown executor {executor!r}; choose 'serial', 'processes' or 'dask'.")
    bar.close()
    return pd.DataFrame(rows)
