"""Every online policy on one workload, each beside a lower bound: "which policy, on my trace?"
(``optsched compare``).

The policies come from the simulator's policy registry (the baselines, and every paper's policies
as their packages register them), never from a list here. A generic job table (``arrival``,
``gpus``, ``duration``; optional ``model``, ``status``, ``user``) is turned into what each paper's
policies need by that paper's enrichment function (:mod:`.workload`), each assumption documented
in ``formulations/<key>.md`` and overridable (``enrich=``). With ``overheads="model"`` (the
default) every policy pays the load and save times of Lazer's model (a (re)start loads, a
preemption saves), so preemption has a price for all of them.

Every table carries a certified lower bound on the total (and mean) JCT of the workload on the
cluster, the same whatever policies are asked for (:mod:`.bound`,
formulations/rigid.md#jct-bound), and each row its ratio to it; a row below its bound is flagged
(``beats_bound``): that is a bug.

The package: :mod:`.load` (the offered load, sizing a cluster, calibrating arrivals),
:mod:`.workload` (one seed's workload and its enrichments), :mod:`.bound`, :mod:`.runner` (one
policy on one seed), :mod:`.executors` (serial, processes, Dask), :mod:`.table` (rows, sorting,
notes), :mod:`.notes` (each far row's causes, measured on its jobs), :mod:`.comparison`
(:class:`Comparison`, what :func:`compare` runs) and :mod:`.figures`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optsched.experiments.compare.comparison import Comparison
from optsched.experiments.compare.executors import EXECUTORS
from optsched.experiments.compare.figures import (
    best_of_each_paper,
    plot_jct_cdf,
    plot_queue_delay_cdf,
    plot_summary,
    plot_utilization,
    save_figures,
)
from optsched.experiments.compare.runner import METRICS, available_policies
from optsched.experiments.compare.table import FAR, SORT_COLUMNS, far_notes
from optsched.experiments.compare.workload import OVERHEADS
from optsched.traces.load import (
    calibrate_load,
    offered_load,
    replay_window,
    size_cluster,
)

__all__ = [
    "available_policies",
    "compare",
    "Comparison",
    "plot_jct_cdf",
    "plot_summary",
    "plot_queue_delay_cdf",
    "plot_utilization",
    "save_figures",
    "best_of_each_paper",
    "offered_load",
    "replay_window",
    "size_cluster",
    "calibrate_load",
    "far_notes",
    "METRICS",
    "OVERHEADS",
    "EXECUTORS",
    "SORT_COLUMNS",
    "FAR",
]


def compare(
    workload: Any | Callable[[int], Any],
    cluster: Any,
    *,
    policies: Sequence[str] | str = "all",
    seeds: int = 1,
    seed: int = 0,
    placement: str | None = None,
    progress: bool | str = True,
    sim_options: dict[str, Any] | None = None,
    overheads: str = "model",
    load_base: float = 60.0,
    enrich: Mapping[str, Mapping[str, Any]] | None = None,
    on_row: Callable[[dict, list], None] | None = None,
    exact_max_jobs: int = 12,
    exact_time_limit: float = 10.0,
    workers: int | None = None,
    executor: str | None = None,
    scheduler_address: str | None = None,
    sort_by: str | None = "mean_jct",
):
    """Run each policy on the same workload; one row per policy, each with its ratio to a lower bound.

    Parameters
    ----------
    workload : pandas.DataFrame or callable
        A trace (the same table for every seed; the enrichments draw with the seed) or a generator
        called with each seed. Columns ``arrival``, ``gpus``, ``duration`` (or ``work``); optional
        ``job_id``, ``model``, ``status``, ``user``. Times are measured from the first arrival
        (Unix timestamps are fine; ``table.attrs["time_origin"]`` says where they started).
    cluster : Cluster
    policies : "all" or names
        Unknown or repeated names raise :class:`InvalidOptionError` (before any run).
    seed : int
        The first seed: the runs use seeds ``seed, seed + 1, ..., seed + seeds - 1`` (each a new
        draw of a synthetic workload and of every enrichment).
    seeds : int
        Runs per policy (seeds ``seed`` to ``seed + seeds - 1``); with more than one, each metric is the mean and the
        table has ``<metric>_ci_lo`` / ``<metric>_ci_hi`` (95% t-interval).
    placement : str, optional
        Placement rule passed to every policy that takes one.
    progress : bool or {"bar", "lines"}
        A progress bar (True, ``"bar"``), or one line on stderr per finished row with the rows
        done, the time elapsed and the time expected (``"lines"``: for a log file), or nothing.
    overheads : {"model", "none"}
        ``"model"``: load and save times from each job's model size (Lazer's (L1)-(L2), base
        ``load_base`` s) for every policy; ``"none"``: free (re)starts and preemptions.
    enrich : mapping paper -> options, optional
        Options of each paper's enrichment function (``{"elastic": {"slot": 600}}``,
        ``{"sojourn": {"n_stages": 8}}``, ``{"lazer": {"model_column": "arch"}}``, ...). A-SRPT
        bandwidths that break its time model's premise are refused
        (:func:`optsched.asrpt.workload.check_bandwidths`).
    on_row : callable(row, rows), optional
        Called as each policy's row is complete (ran on every seed, failed or skipped), in the
        order they end (e.g. to write the table so far).
    exact_max_jobs, exact_time_limit : int, float
        With at most ``exact_max_jobs`` jobs, the exact rigid model also bounds the total JCT of
        every *non-preemptive* schedule (:func:`optsched.rigid.trace_bounds.nonpreemptive_lower_bound`,
        ``exact_time_limit`` s per seed); the rows that never preempted and whose jobs are rigid
        (all but the elastic policies) get ``ratio_to_np_bound``. 0 turns it off.
    workers : int, optional
        Runs at once (processes; default: this machine's cores, one process for small workloads).
        Every (policy, seed) run is independent and seeded: the table is the same for any number.
    executor : {"serial", "processes", "dask"}, optional
        Default ``"processes"`` (``"dask"`` when ``scheduler_address`` is given).
    scheduler_address : str, optional
        With ``executor="dask"``: a Dask scheduler (``"tcp://host:8786"``, reached within 10 s), or
        ``"local"`` / None for a ``LocalCluster`` of ``workers`` processes started for the call.
    sort_by : str or None
        Column the rows are sorted by (smallest first; :data:`SORT_COLUMNS`), default ``mean_jct``;
        None keeps the order asked for. Failed, then skipped rows come last.

    Returns
    -------
    (table, per_job)
        ``table``: DataFrame, one row per policy with its metrics, ``ratio_to_bound``, ``bound``
        (which bound the ratio is to: ``workload``, or ``asrpt-model`` for A-SRPT rows whose time
        model lets a job train faster than its duration), ``seconds`` (wall time of its runs),
        ``beats_bound`` (a row below its bound), ``note`` (for a row :data:`FAR` times its bound or
        more: where its jobs' time beyond their own lengths went, measured on the first seed's jobs;
        :mod:`.notes`), ``skipped`` (why a policy could not run) and
        ``failed`` (why a run raised; ``reproduce``: how to run it alone). ``table.attrs`` holds
        ``bound`` (per seed and mean, each part named), ``utilization`` {policy: (times, GPUs held)
        of seed 0}, ``gpus``, ``assumptions``, ``offered_load``, ``time_origin``.
        ``per_job``: {policy: per-job DataFrame of seed 0, seconds from the first arrival}.

    Raises
    ------
    InvalidOptionError, InvalidInstanceError
        Before any run: unknown or repeated policies, a bad option, an empty or malformed table, a
        job larger than the cluster, an unreachable Dask scheduler. A policy that raises while it
        runs gives a failed row (and a warning), never an exception.

    Notes
    -----
    Use :class:`Comparison` directly to keep the finished rows when the run is stopped: build it,
    call ``run()`` and read ``table()`` / ``per_job`` after a ``KeyboardInterrupt`` or a ``stop()``.

    References
    ----------
    formulations/rigid.md#jct-bound (the bound), formulations/rigid.md#load (the load), each
    paper's ``formulations/<key>.md#from-a-trace`` (the enrichments), docs/compare.md.

    Examples
    --------
    >>> from optsched.core import Cluster
    >>> from optsched.traces import synthetic_workload
    >>> df = synthetic_workload(200, cluster_gpus=16, max_duration=3600, seed=0)
    >>> table, per_job = compare(df, Cluster.homogeneous(4, 4), policies=["fifo", "srtf"], progress=False)
    >>> list(table["policy"])  # sorted by mean JCT
    ['srtf', 'fifo']
    >>> bool((table["ratio_to_bound"] >= 1).all()), table.attrs["bound"]["which"]
    (True, 'own_length')

    The bound belongs to the workload: asking for one policy gives the same ratio.

    >>> alone, _ = compare(df, Cluster.homogeneous(4, 4), policies=["srtf"], progress=False)
    >>> round(float(alone["ratio_to_bound"].iloc[0]), 9) == round(float(table["ratio_to_bound"].iloc[0]), 9)
    True
    """
    run = Comparison(
        workload,
        cluster,
        policies=policies,
        seeds=seeds,
        seed=seed,
        placement=placement,
        progress=progress,
        sim_options=sim_options,
        overheads=overheads,
        load_base=load_base,
        enrich=enrich,
        on_row=on_row,
        exact_max_jobs=exact_max_jobs,
        exact_time_limit=exact_time_limit,
        workers=workers,
        executor=executor,
        scheduler_address=scheduler_address,
        sort_by=sort_by,
    ).run()
    return run.table(), run.per_job
