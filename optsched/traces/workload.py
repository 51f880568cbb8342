"""One workload, one meaning: a trace, a job file, a DataFrame or the synthetic generator, with
the cluster and the load, turned into the job table and the cluster the same way for every
command (``optsched simulate``, ``optsched compare``) and every Python entry.

The rules (formulations/rigid.md#load):

- **synthetic**: ``servers`` x ``gpus_per_server`` GPUs; ``n_jobs`` jobs (1000) drawn with
  durations capped at ``max_duration`` (one day; 0 for no cap), their arrivals scaled so that the
  offered load over the window in which the jobs run is ``load`` (0.8). Each seed is a new draw.
- **a trace, a job file or a table**: read and checked (:func:`~optsched.traces.check_job_table`
  for a file or a table), the first ``n_jobs`` by arrival kept; ``load`` sizes the cluster (whole
  servers of ``gpus_per_server`` GPUs) for that offered load over the replay window; else
  ``servers`` gives it; else the workload is refused, naming ``--load R`` and ``--servers N``.
  Whole servers may miss the load: the title then says what to ask instead
  (:func:`~optsched.traces.load.sizing_hint`: the loads whole servers reach, never servers
  smaller than the largest job).

The shipped OpenB traces come with their own nodes, 1,213 servers on which the trace's offered
load is 0.27 %: no job ever waits there and every policy gives the same numbers. A new user who
runs ``--trace openb --policy srtf`` wants to see what a policy does, and a table in which all
policies tie looks like an answer and is not one; so without ``load`` or ``servers`` the shipped
OpenB traces are refused too (exit 2 on the command line), before any work, with the load their
nodes would give and the cluster ``--load 0.9`` would size. The nodes stay one call away in
Python (:func:`~optsched.traces.openb_cluster`) for a study of the real cluster.

Tested in ``tests/traces/test_workload.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from optsched.core.cluster import Cluster
from optsched.core.limits import LIMITS_DOC, MAX_ARRIVAL, MAX_SERVERS
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.traces.api import load_trace
from optsched.traces.jobs_file import check_job_table, read_jobs
from optsched.traces.load import (
    DEFAULT_MAX_DURATION,
    calibrate_load,
    check_load,
    offered_load,
    size_cluster,
    sizing_hint,
)
from optsched.traces.loaders import openb_cluster
from optsched.traces.synthetic import synthetic_workload

#: The offered load of a synthetic workload when none is asked.
DEFAULT_LOAD = 0.8
#: The number of synthetic jobs when none is asked.
DEFAULT_JOBS = 1000
#: Trace names that come with their own (huge) cluster, the OpenB nodes: refused without a size.
OWN_NODES = ("openb", "openb-sample")


@dataclass
class Workload:
    """The jobs and the cluster of one workload.

    Attributes
    ----------
    cluster : Cluster
    name : str
        How titles name it (``synthetic``, the trace name, the file).
    note : str
        The offered load reached, as titles state it.
    load : float
        The offered load reached (of the first seed for a synthetic workload).
    table : DataFrame or None
        The job table of a trace, file or table (the same for every seed).
    draw : callable or None
        ``seed -> job table`` for the synthetic generator (a mapping of NumPy columns, which every
        optsched entry takes as it takes a DataFrame: no pandas import on this path).
    n_skipped : int
        Jobs larger than the cluster, dropped (``skip_oversized``).
    """

    cluster: Cluster
    name: str
    note: str
    load: float
    table: Any = None
    draw: Callable[[int], Any] | None = None
    n_skipped: int = 0

    def jobs(self, seed: int = 0) -> Any:
        """The job table of ``seed`` (a trace's is the same for every seed)."""
        return self.draw(seed) if self.draw is not None else self.table

    @property
    def source(self) -> Any:
        """What :class:`~optsched.experiments.compare.Comparison` takes: the table, or ``seed -> table``."""
        return self.draw if self.draw is not None else self.table


def _positive_int(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidOptionError(f"{name} must be a whole number >= 1; got {value!r}.")


def build_workload(
    source: Any = None,
    *,
    jobs_file: Any = None,
    columns: Any = None,
    trace_format: str | None = None,
    n_jobs: int | None = None,
    servers: int | None = None,
    gpus_per_server: int = 8,
    load: float | None = None,
    max_duration: float | None = None,
    arrivals: str = "poisson",
    seed: int = 0,
    skip_oversized: bool = False,
) -> Workload:
    """The job table(s) and the cluster of a workload (the rules: the module docstring).

    Parameters
    ----------
    source : str, DataFrame or mapping of columns, optional
        ``"synthetic"``, a shipped trace name or a trace file (:func:`~optsched.traces.load_trace`),
        or a job table. Give this or ``jobs_file``.
    jobs_file : path, optional
        A CSV or Parquet job file (:func:`~optsched.traces.read_jobs`).
    columns : str or mapping, optional
        Our column name -> the file's or table's (``--columns``).
    trace_format : str, optional
        A trace file's format when its detection is not wanted (``--trace-format``).
    n_jobs : int, optional
        Synthetic: the number of jobs (1000); otherwise keep the first ``n_jobs`` by arrival.
    servers, gpus_per_server : int
        The cluster (``gpus_per_server`` also sizes the servers of a cluster sized by ``load``).
    load : float, optional
        The offered load: synthetic, the arrivals are scaled to it (0.8); otherwise the cluster is
        sized for it (not with ``servers``).
    max_duration : float, optional
        Synthetic: the cap on durations (s; one day; 0 for none).
    arrivals : str
        Synthetic: ``"poisson"`` or ``"trace"`` (:func:`~optsched.traces.synthetic_workload`).
    seed : int
        Synthetic: the seed whose draw is checked here (each seed is a new draw).
    skip_oversized : bool
        Drop (and count) the jobs of a trace larger than the cluster instead of refusing them.

    Raises
    ------
    InvalidOptionError
        Options that contradict each other or miss (the message names them and the fix), a load
        that cannot be reached.
    TraceFormatError, InvalidInstanceError
        A bad file or table (named by :func:`~optsched.traces.check_job_table`).

    Examples
    --------
    >>> w = build_workload("synthetic", n_jobs=200, servers=2, gpus_per_server=8, load=0.9, seed=1)
    >>> round(w.load, 6), w.cluster.total_gpus, len(w.jobs(1)["arrival"])
    (0.9, 16, 200)
    """
    for name, v in (("servers", servers), ("gpus_per_server", gpus_per_server), ("n_jobs", n_jobs)):
        _positive_int(name, v)
    if (source is None) == (jobs_file is None):
        raise InvalidOptionError("Give one workload: a trace (or 'synthetic', or a job table) or a job file.")
    if load is not None:
        load = check_load(load)
    synthetic = isinstance(source, str) and source == "synthetic"
    if max_duration is not None and not synthetic:
        raise InvalidOptionError("--max-duration caps the synthetic generator's durations; give --trace synthetic.")
    if synthetic:
        if servers is None:
            raise InvalidOptionError("Give --servers N (and --gpus-per-server G) for the synthetic workload.")
        cluster = Cluster.homogeneous(servers, gpus_per_server)
        rho = DEFAULT_LOAD if load is None else load
        cap = DEFAULT_MAX_DURATION if max_duration is None else (max_duration or None)
        n = n_jobs or DEFAULT_JOBS
        total = cluster.total_gpus

        def draw(s: int):
            df = synthetic_workload(
                n,
                cluster_gpus=total,
                load=rho,
                arrivals=arrivals,
                max_gpus=total,
                max_duration=cap,
                seed=s,
                frame=False,
            )
            return calibrate_load(df, rho, total)

        first = draw(seed)  # a load that cannot be reached fails here, before any run
        last = float(first["arrival"].max())
        if last > MAX_ARRIVAL:
            raise InvalidOptionError(
                f"--load {rho:g} spreads the {n:,} arrivals over {last:,.0f} s, beyond the {MAX_ARRIVAL:g} s a "
                f"workload may span ({LIMITS_DOC}); give --load of at least {rho * last / MAX_ARRIVAL:.2g}, or fewer "
                f"jobs (--jobs)."
            )
        cache = {seed: first}
        reached = offered_load(first, total)
        return Workload(
            cluster,
            "synthetic",
            f"offered load {reached:.3g} over the window in which jobs run",
            reached,
            draw=lambda s: cache[s] if s in cache else draw(s),
        )
    if load is not None and servers is not None:
        raise InvalidOptionError(
            "--load sizes the cluster of a trace; give --load or --servers, not both "
            "(with --servers the load is whatever the trace brings)."
        )
    if jobs_file is not None:
        name = str(jobs_file)
        df = read_jobs(jobs_file, columns=columns)
    elif isinstance(source, str) or hasattr(source, "__fspath__"):
        if columns is not None:
            raise InvalidOptionError("--columns maps the columns of --jobs-csv FILE; give --jobs-csv too.")
        name = str(source)
        df = load_trace(source, format=trace_format)
    else:
        name = "the job table"
        df = check_job_table(source, columns=columns, error=InvalidInstanceError)
    if n_jobs is not None:
        df = df.iloc[:n_jobs].reset_index(drop=True)
    if len(df) == 0:
        raise InvalidOptionError(f"{name!r} has no job to run.")
    if load is not None:
        try:
            cluster = size_cluster(df, load, gpus_per_server)
        except InvalidInstanceError:  # more servers than a cluster may have
            raise InvalidOptionError(
                f"--load {load:g} would need more than {MAX_SERVERS:,} servers of {gpus_per_server} GPUs for "
                f"{name!r} ({LIMITS_DOC}); give a larger --load (or more --gpus-per-server)."
            ) from None
    elif servers is not None:
        cluster = Cluster.homogeneous(servers, gpus_per_server)
    elif isinstance(source, str) and source in OWN_NODES:
        nodes = openb_cluster()
        c = size_cluster(df, 0.9, gpus_per_server)
        raise InvalidOptionError(
            f"Give --load R (to size the cluster for that offered load) or --servers N for {name!r}: on its own "
            f"{nodes.n_servers:,} nodes ({nodes.total_gpus:,} GPUs) its offered load is "
            f"{offered_load(df, nodes.total_gpus):.2g}, no job would wait and every policy would give the same "
            f"result. --load 0.9 gives {c.n_servers} server{'s' * (c.n_servers != 1)} of {gpus_per_server} GPUs at "
            f"offered load {offered_load(df, c.total_gpus):.3g}"
            + "".join(f"; {h}" for h in [sizing_hint(df, 0.9, gpus_per_server)] if h)
            + "."
        )
    else:
        raise InvalidOptionError(
            f"Give --load R (to size the cluster for that offered load) or --servers N for {name!r}."
        )
    n_skipped = 0
    too_big = df["gpus"].to_numpy() > cluster.total_gpus
    if too_big.any():
        if not skip_oversized:
            i = int(too_big.nonzero()[0][0])
            raise InvalidOptionError(
                f"{int(too_big.sum()):,} job(s) of {name!r} need more than the cluster's {cluster.total_gpus} GPUs, "
                f"e.g. job {df['job_id'].iloc[i]!s} with {int(df['gpus'].iloc[i])}; give more --servers or "
                f"--gpus-per-server (or --load to size the cluster), or drop and count them (--skip-oversized)."
            )
        n_skipped = int(too_big.sum())
        df = df[~too_big].reset_index(drop=True)
        if len(df) == 0:
            raise InvalidOptionError(f"No job of {name!r} fits the cluster; give a larger cluster.")
    rho = offered_load(df, cluster.total_gpus)
    note = f"offered load {rho:.3g} over the replay window"
    if load is not None:
        note += f" (asked {load:g}; whole servers of {gpus_per_server} GPUs)"
        hint = sizing_hint(df, load, gpus_per_server)
        if hint:
            note += f"; {hint}"
    return Workload(cluster, name, note, rho, table=df, n_skipped=n_skipped)
