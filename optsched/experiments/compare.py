"""Every online policy on one workload: "which policy, on my trace?" (``optsched compare``).

The policies come from the simulator's policy registry (baselines, and every paper's policies
as their packages register them), never from a list here. A policy that needs job data the
workload lacks (model profiles, stage distributions, ...) is skipped with the reason.

>>> from optsched.core import Cluster
>>> from optsched.traces import synthetic_workload
>>> df = synthetic_workload(200, cluster_gpus=16, seed=0)
>>> table, _ = compare(df, Cluster.homogeneous(4, 4), policies=["fifo", "srtf"], progress=False)
>>> list(table["policy"])
['fifo', 'srtf']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from optsched.exceptions import InvalidOptionError

__all__ = ["available_policies", "compare", "plot_jct_cdf", "METRICS"]

#: Metrics of the comparison table (seconds unless the name says otherwise).
METRICS = (
    "mean_jct",
    "p50_jct",
    "p95_jct",
    "p99_jct",
    "mean_queue_delay",
    "p95_queue_delay",
    "makespan",
    "mean_utilization",
    "n_preemptions",
)


def available_policies() -> dict[str, dict[str, Any]]:
    """name -> {"factory": callable(**options) -> Policy, "needs": tuple of job columns, "description"}.

    Reads the simulator's registry (:func:`optsched.sim.policy_registry`) after loading every
    paper package, so that their policies are registered too.
    """
    from optsched import load_plugins

    load_plugins()
    from optsched.sim import policy_registry

    return {
        name: {"factory": spec.factory, "needs": spec.needs, "description": spec.description}
        for name, spec in policy_registry().items()
    }


def _missing(needs: Sequence[str], table: Any) -> list[str]:
    cols = set(getattr(table, "columns", ()))
    attrs = set()
    if "attrs" in cols:
        first = next((a for a in table["attrs"] if isinstance(a, dict)), {})
        attrs = set(first)
    return [n for n in needs if n not in cols and n not in attrs]


def _ci95(values: Sequence[float]) -> tuple[float, float, float]:
    a = np.asarray([v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))], float)
    if len(a) == 0:
        return float("nan"), float("nan"), float("nan")
    if len(a) == 1:
        return float(a[0]), float("nan"), float("nan")
    from scipy import stats

    h = float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))
    return float(a.mean()), float(a.mean() - h), float(a.mean() + h)


def compare(
    workload: Any | Callable[[int], Any],
    cluster: Any,
    *,
    policies: Sequence[str] | str = "all",
    seeds: int = 1,
    placement: str | None = None,
    progress: bool = True,
    sim_options: dict[str, Any] | None = None,
):
    """Run each policy on the same workload; one row per policy.

    Parameters
    ----------
    workload : job table, or ``seed -> job table``
        A trace (the same table for every seed) or a generator called with each seed.
    cluster : Cluster
    policies : "all" or names
        Unknown names raise :class:`InvalidOptionError` listing the known ones (before any run).
    seeds : int
        Runs per policy (seeds 0..seeds-1); with more than one, each metric is the mean and the
        table has ``<metric>_ci_lo`` / ``<metric>_ci_hi`` (95% t-interval).
    placement : str, optional
        Placement rule passed to every policy that takes one.

    Returns
    -------
    (table, per_job)
        ``table``: DataFrame, one row per policy run (``skipped`` holds the reason of a policy
        that could not run); ``per_job``: {policy: jobs DataFrame of seed 0} for the CDF plot.
    """
    import pandas as pd

    reg = available_policies()
    names = sorted(reg) if policies == "all" else list(policies)
    unknown = [n for n in names if n not in reg]
    if unknown:
        raise InvalidOptionError(f"Unknown policy {unknown[0]!r}; known: {sorted(reg)}.")
    if seeds < 1:
        raise InvalidOptionError(f"seeds must be >= 1; got {seeds}.")
    from optsched.sim import Simulator

    tables = {s: (workload(s) if callable(workload) else workload) for s in range(seeds)}
    rows, per_job = [], {}
    bar = None
    if progress:
        from rich.progress import Progress

        bar = Progress(transient=True)
        task = bar.add_task("compare", total=len(names) * seeds)
        bar.start()
    try:
        for name in names:
            spec = reg[name]
            miss = _missing(spec["needs"], tables[0])
            if miss:
                rows.append({"policy": name, "skipped": f"the workload has no {', '.join(miss)} (needed by {name})"})
                if bar:
                    bar.advance(task, seeds)
                continue
            runs = []
            for s, table in tables.items():
                opts = {} if placement is None else {"placement": placement}
                try:
                    pol = spec["factory"](**opts)
                except TypeError:
                    pol = spec["factory"]()
                res = Simulator(cluster, table, pol, seed=s, record_log=False, **(sim_options or {})).run()
                summ = res.summary()
                summ["mean_utilization"] = summ.get("mean_utilization", res.mean_utilization())
                runs.append(summ)
                if s == 0:
                    per_job[name] = res.jobs_frame()
                if bar:
                    bar.advance(task)
            row: dict[str, Any] = {"policy": name, "seeds": seeds, "n_jobs": runs[0].get("n_jobs")}
            for m in METRICS:
                vals = [r.get(m) for r in runs]
                if seeds == 1:
                    row[m] = vals[0]
                else:
                    row[m], row[f"{m}_ci_lo"], row[f"{m}_ci_hi"] = _ci95(vals)
            row["skipped"] = None
            rows.append(row)
    finally:
        if bar:
            bar.stop()
    return pd.DataFrame(rows), per_job


def plot_jct_cdf(per_job: dict[str, Any], ax=None, *, log: bool = True):
    """One CDF of JCT per policy (finished jobs), on one axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    for name, df in per_job.items():
        jct = (
            np.sort(df.loc[df["status"] == "done", "jct"].to_numpy(dtype=float))
            if "status" in df
            else np.sort(df["jct"].to_numpy(dtype=float))
        )
        if len(jct) == 0:
            continue
        ax.step(jct, np.arange(1, len(jct) + 1) / len(jct), where="post", label=name)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.figure.tight_layout()
    return ax
