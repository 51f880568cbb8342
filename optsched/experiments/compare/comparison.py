"""A comparison as an object: checked and prepared when built (every input error before any run),
run with :meth:`Comparison.run`, and readable at any time: :meth:`Comparison.table` holds the rows
finished so far, so a caller that stops it (Ctrl-C, a signal handler calling :meth:`Comparison.stop`)
keeps them.

Tested in ``tests/experiments/test_compare_run.py`` and ``tests/experiments/test_compare.py``."""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optsched.core import Cluster
from optsched.core.placement import check_placement
from optsched.exceptions import InvalidOptionError
from optsched.experiments.compare.bound import SeedBound, seed_bound
from optsched.experiments.compare.executors import (
    EXECUTORS,
    SMALL,
    check_workers,
    connect_dask,
    default_workers,
    execute,
)
from optsched.experiments.compare.notes import note_of, own_lengths
from optsched.experiments.compare.runner import RunResult, available_policies
from optsched.experiments.compare.table import FAR, SORT_COLUMNS, attrs, failed_row, row_of, skipped_row, sort_rows
from optsched.experiments.compare.workload import OVERHEADS, SeededWorkload, check_enrich
from optsched.sim.registry import policy_key

#: Heavier families first, so that the slow runs start early on a pool of workers (results do not
#: depend on the order).
_COST_ORDER = {"elastic": 0, "asrpt": 1, "sojourn": 2, "lazer": 3}


def policy_names(policies: Sequence[str] | str, reg: Mapping[str, Any]) -> list[str]:
    """The policy names asked for, normalised (``srtf_periodic`` -> ``srtf-periodic``), checked:
    unknown or repeated names raise :class:`InvalidOptionError` naming them and the known ones."""
    if isinstance(policies, str):
        if policies == "all":
            return sorted(reg)
        policies = [p for p in policies.split(",")]
    names = [policy_key(p) for p in policies]
    if not names or any(not n for n in names):
        raise InvalidOptionError(
            f"policies must name at least one policy, without empty names; got {list(policies)!r}."
        )
    unknown = [n for n in names if n not in reg]
    if unknown:
        raise InvalidOptionError(f"Unknown policy {unknown[0]!r}; known: {sorted(reg)}.")
    seen: set[str] = set()
    dup = [n for n in names if n in seen or seen.add(n)]
    if dup:
        raise InvalidOptionError(f"Policy {dup[0]!r} is asked for twice; give each policy once.")
    return names


class Comparison:
    """Every asked policy on one workload, each beside its lower bound (see :func:`compare`, whose
    parameters it takes). Building it checks every input and prepares the seeds' workloads and
    bounds; :meth:`run` runs the policies; :meth:`table` and :attr:`per_job` hold what has finished.
    ``warn_failures=False``: no warning for a failed row (a caller that reports them itself);
    ``reproduce(name)``: the text that says how to run one policy alone (default: the Python call).

    Attributes
    ----------
    rows : list of dict
        One per policy that ended (ran, failed or skipped), in the order they ended.
    per_job : dict
        {policy: per-job DataFrame of seed 0} of the rows that ran.
    complete : bool
        Every asked policy has its row.

    Examples
    --------
    Five jobs on one server of two GPUs; building the comparison checks the input, runs nothing:

    >>> import pandas as pd
    >>> from optsched.core import Cluster
    >>> jobs = pd.DataFrame({"arrival": [0.0, 0.0, 1.0, 2.0, 3.0], "gpus": [2, 1, 1, 2, 1],
    ...                      "duration": [50.0, 5.0, 10.0, 20.0, 5.0]})
    >>> run = Comparison(jobs, Cluster.homogeneous(1, 2), policies=["fifo", "srtf"], overheads="none",
    ...                  workers=1, progress=False)
    >>> run.complete, len(run.rows)
    (False, 0)
    >>> table = run.run().table()
    >>> list(table["policy"]), run.complete  # sorted by mean JCT
    (['srtf', 'fifo'], True)
    >>> bool((table["ratio_to_bound"] >= 1).all()), sorted(run.per_job)
    (True, ['fifo', 'srtf'])

    A bad input is refused when the comparison is built, before any run:

    >>> Comparison(jobs, Cluster.homogeneous(1, 2), policies=["fifo", "nope"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    optsched.exceptions.InvalidOptionError: Unknown policy 'nope'; known: [...].
    """

    def __init__(
        self,
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
        warn_failures: bool = True,
        reproduce: Callable[[str], str] | None = None,
    ):
        import numpy as np

        if not isinstance(cluster, Cluster):
            raise InvalidOptionError(
                f"cluster must be an optsched Cluster (e.g. Cluster.homogeneous(4, 8)); got {type(cluster).__name__}."
            )
        self.reg = available_policies()
        self.names = policy_names(policies, self.reg)
        if isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer)) or seeds < 1:
            raise InvalidOptionError(f"seeds must be an integer >= 1; got {seeds!r}.")
        if overheads not in OVERHEADS:
            raise InvalidOptionError(f"overheads must be one of {OVERHEADS}; got {overheads!r}.")
        if sort_by is not None and sort_by not in SORT_COLUMNS:
            raise InvalidOptionError(f"sort_by (--sort) must be one of {list(SORT_COLUMNS)} or None; got {sort_by!r}.")
        workers = check_workers(workers)
        if executor is None:
            executor = "dask" if scheduler_address is not None else "processes"
        if executor not in EXECUTORS:
            raise InvalidOptionError(f"Unknown executor {executor!r}; choose one of {list(EXECUTORS)}.")
        self.enrich = check_enrich(enrich, cluster)
        self.cluster = cluster
        self.seeds = int(seeds)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InvalidOptionError(f"seed must be an integer >= 0; got {seed!r}.")
        self.seed = int(seed)
        self.placement = check_placement(placement)
        if progress not in (True, False, "bar", "lines"):
            raise InvalidOptionError(f"progress must be True, False, 'bar' or 'lines'; got {progress!r}.")
        self.progress = progress
        self.sim_options = dict(sim_options or {})
        self.on_row = on_row
        self.sort_by = sort_by
        self.warn_failures = warn_failures
        self._reproduce = reproduce
        self.executor = executor
        self.workers_asked = workers
        self.workers = workers or default_workers()
        self.scheduler_address = scheduler_address
        self._client = self._local = None
        if executor == "dask":  # an unreachable scheduler fails here, before any work
            self._client, self._local = connect_dask(scheduler_address, self.workers)
        try:
            self.ws = [
                SeededWorkload(
                    workload(s) if callable(workload) else workload, cluster, s, overheads, load_base, self.enrich
                )
                for s in range(self.seed, self.seed + self.seeds)
            ]
            self.skip = {n: self.ws[0].skip_reason(n, self.reg[n]) for n in self.names}
            asrpt_rows = any(self.reg[n]["paper"] == "asrpt" and self.skip[n] is None for n in self.names)
            self.bounds: list[SeedBound] = [
                seed_bound(w, asrpt_rows=asrpt_rows, exact_max_jobs=exact_max_jobs, exact_time_limit=exact_time_limit)
                for w in self.ws
            ]
        except BaseException:
            self.close()
            raise
        self.rows: list[dict[str, Any]] = []
        self.per_job: dict[str, Any] = {}
        self._util: dict[str, Any] = {}
        self._own: dict[str, Any] = {}  # bound name -> each job's own length, for the notes
        self._stop = False
        self.seconds = 0.0

    # -- running ---------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask a running :meth:`run` to stop after the results it is collecting (from a signal
        handler, another thread or an ``on_row`` callback); the finished rows stay."""
        self._stop = True

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.names)

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of the policies that raised (``failed``: the reason, ``reproduce``: how to run it alone)."""
        return [r for r in self.rows if r.get("failed") is not None]

    def reproduce(self, name: str) -> str:
        """How to run one policy alone: ``reproduce(name)`` if given, else the Python call."""
        if self._reproduce is not None:
            return self._reproduce(name)
        seed = f", seed={self.seed}" if self.seed else ""
        return f"compare(workload, cluster, policies=[{name!r}], seeds={self.seeds}{seed}, workers=1)"

    def _executor(self, n_tasks: int) -> tuple[str, int]:
        if self.executor == "dask":
            return "dask", self.workers
        if self.executor == "serial" or self.workers == 1:
            return "serial", 1
        n_jobs = len(self.ws[0].table)
        if self.workers_asked is None and n_jobs * n_tasks < SMALL:  # tiny: processes cost more than they save
            return "serial", 1
        return "processes", self.workers

    def run(self) -> Comparison:
        """Run every policy that can run, each on every seed; rows are added (and ``on_row`` called)
        as each policy's last seed ends, in any order. Returns ``self``."""
        t0 = time.perf_counter()
        todo = [n for n in self.names if n not in {r["policy"] for r in self.rows}]
        for n in todo:
            if self.skip[n] is not None:
                self._add(skipped_row(n, self.reg[n], self.skip[n]))
        runnable = [n for n in todo if self.skip[n] is None]
        runnable.sort(key=lambda n: (_COST_ORDER.get(self.reg[n]["paper"], 4), n))
        tasks = [(n, s) for n in runnable for s in range(self.seeds)]
        executor, workers = self._executor(len(tasks))
        got: dict[str, list[RunResult | None]] = {n: [None] * self.seeds for n in runnable}
        bar: _Progress | _Lines | None = None

        def started() -> None:  # after the worker processes forked: no bar thread in them
            nonlocal bar
            if self.progress and tasks:
                bar = _Lines(len(tasks), len(self.names)) if self.progress == "lines" else _Progress(len(tasks))

        try:
            for res in execute(
                tasks,
                self.ws,
                self.reg,
                placement=self.placement,
                sim_options=self.sim_options,
                executor=executor,
                workers=workers,
                client=self._client,
                stopped=lambda: self._stop,
                started=started,
            ):
                runs = got[res.policy]
                runs[res.seed] = res
                if bar:
                    bar.advance()
                if all(r is not None for r in runs):
                    self._finish(res.policy, runs)
                    if isinstance(bar, _Lines):
                        bar.row(res.policy, len(self.rows))
        finally:
            if bar:
                bar.close()
            self.seconds += time.perf_counter() - t0
            self.close()
        ran = [r for r in self.rows if r.get("skipped") is None and r.get("failed") is None]
        if self.complete and ran and all(r["max_queue_delay"] <= 1e-9 for r in ran):
            warnings.warn(
                f"No job ever waited under any policy: the cluster ({self.cluster.n_servers} servers, "
                f"{self.cluster.total_gpus} GPUs) is so large that the policies cannot differ. Use fewer servers "
                f"(--servers N) or size it with --load.",
                stacklevel=2,
            )
        for r in self.failed if self.warn_failures else ():
            warnings.warn(
                f"Policy {r['policy']!r} failed ({r['failed']}); run it alone: {r['reproduce']}", stacklevel=2
            )
        return self

    def _finish(self, name: str, runs: list[RunResult]) -> None:
        spec = self.reg[name]
        if any(r.failed for r in runs):
            self._add(failed_row(name, spec, runs, self.reproduce(name)))
            return
        row = row_of(name, spec, runs, self.ws, self.bounds)
        b = row["bound"]
        if row["ratio_to_bound"] >= FAR and runs[0].frame is not None and b not in self._own:
            self._own[b] = own_lengths(self.ws[0], b)
        row["note"] = note_of(row, runs[0], self.ws[0], self._own.get(b))
        self._add(row)
        if runs[0].frame is not None:
            self.per_job[name] = runs[0].frame
            self._util[name] = runs[0].steps

    def _add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if self.on_row is not None:
            self.on_row(row, list(self.rows))

    def close(self) -> None:
        """Close the Dask client (and the local cluster) this comparison started, if any."""
        if self._client is not None:
            self._client.close()
        if self._local is not None:
            self._local.close()
        self._client = self._local = None

    # -- results ---------------------------------------------------------------------------------
    def table(self):
        """The rows so far as a DataFrame, sorted (``sort_by``; failed then skipped rows last), with
        ``attrs``: ``bound``, ``utilization``, ``gpus``, ``assumptions``, ``offered_load``,
        ``time_origin``, ``complete``, ``seconds``."""
        import pandas as pd

        rows = sort_rows(self.rows, self.sort_by)
        if self.sort_by is None:
            order = {n: i for i, n in enumerate(self.names)}
            rows = sorted(rows, key=lambda r: order[r["policy"]])
        df = pd.DataFrame(rows)
        for col in ("skipped", "failed"):
            if col not in df:
                df[col] = None
        df.attrs.update(attrs(self.ws, self.bounds, dict(self._util), int(self.cluster.total_gpus)))
        df.attrs["complete"] = self.complete
        df.attrs["seconds"] = self.seconds
        return df


class _Progress:
    def __init__(self, total: int):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._p = Progress("compare", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
        self._task = self._p.add_task("compare", total=total)
        self._p.start()

    def advance(self) -> None:
        self._p.advance(self._task)

    def close(self) -> None:
        self._p.stop()


class _Lines:
    """Progress for a log file or a pipe (stderr not a terminal): one line per finished row, with
    the rows done, the time elapsed and the time expected to be left (from the runs done so far)."""

    def __init__(self, total: int, rows: int):
        self.total, self.rows, self.done = total, rows, 0
        self.t0 = time.perf_counter()

    def advance(self) -> None:
        self.done += 1

    def row(self, policy: str, done_rows: int) -> None:
        elapsed = time.perf_counter() - self.t0
        left = self.total - self.done
        expect = f", about {_secs(elapsed / self.done * left)} to go" if left and self.done else ""
        print(
            f"compare: {done_rows}/{self.rows} rows done ({policy}), {_secs(elapsed)} elapsed{expect}",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        pass


def _secs(t: float) -> str:
    return f"{t:.1f} s" if t < 120 else f"{t / 60:.1f} min"
