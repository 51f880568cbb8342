"""One seed's workload in ``compare``: the generic job table, checked and measured from its first
arrival, with its load/save times, and each paper's view of it (the enrichments).

==========  ================================================  ===============================
paper       enrichment                                        what it adds
==========  ================================================  ===============================
asrpt       :func:`optsched.asrpt.workload.from_table`        model profile, iterations
elastic     :func:`optsched.elastic.workload.from_table`      worker/PS types, slots, weights
sojourn     :func:`optsched.sojourn.workload.from_table`      stages, success probabilities
lazer       :func:`optsched.lazer.workload.with_load_save`    model, load and save times
==========  ================================================  ===============================

Tested in ``tests/experiments/test_compare.py`` and ``tests/experiments/test_compare_bound.py``."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from optsched.asrpt.workload import B_INTRA, check_bandwidths, default_bandwidth_inter
from optsched.asrpt.workload import from_table as asrpt_from_table
from optsched.asrpt.workload import least_processing as asrpt_least_processing
from optsched.core.compat import user_stacklevel
from optsched.elastic.workload import from_table as elastic_from_table
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.lazer.workload import with_load_save
from optsched.sim.model.inputs import job_table_columns
from optsched.sojourn.workload import from_table as sojourn_from_table
from optsched.traces.jobs_file import check_job_table
from optsched.traces.load import work_column

#: Papers whose policies run on an enriched view (lazer's policies run on the plain table).
PAPERS = ("asrpt", "elastic", "sojourn")
OVERHEADS = ("model", "none")
"""The values of ``overheads=``: ``"model"`` makes every policy pay the load and save times of Lazer's
model (a (re)start loads, a preemption saves); ``"none"`` makes (re)starts and preemptions free."""


def check_enrich(enrich: Mapping[str, Mapping[str, Any]] | None, cluster) -> dict[str, dict[str, Any]]:
    """The enrichment options as plain dicts, checked before any run: known papers only, and
    A-SRPT bandwidths that keep its time model's premise (B_inter <= g B_intra)."""
    out = {k: dict(v) for k, v in (enrich or {}).items()}
    bad = sorted(set(out) - {*PAPERS, "lazer"})
    if bad:
        raise InvalidOptionError(f"enrich has options for {bad}; papers with an enrichment: {[*PAPERS, 'lazer']}.")
    a = out.get("asrpt", {})
    if "bandwidth_inter" in a or "bandwidth_intra" in a:
        g = int(cluster.max_server_gpus)
        check_bandwidths(
            g,
            default_bandwidth_inter(g) if a.get("bandwidth_inter") is None else a["bandwidth_inter"],
            B_INTRA if a.get("bandwidth_intra") is None else a["bandwidth_intra"],
        )
    return out


def _checked_table(table, cluster):
    """The job table checked as every job table is (:func:`optsched.traces.check_job_table`: ids,
    numbers, ranges), in (arrival, id) order, with a ``job_id``; a job larger than the cluster refused."""
    import pandas as pd

    table = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table)
    if len(table) == 0:
        raise InvalidInstanceError("The job table is empty; give at least one job.")
    _, wcol = job_table_columns(table, who="compare", prefer="duration")
    if wcol == "duration" and "work" in table.columns:
        # one processing time per job for every row: the bound and the enrichments read 'duration',
        # and the simulator's job reader prefers 'work' (a table with both ran two workloads)
        warnings.warn(
            "The job table has both a 'duration' and a 'work' column; compare reads 'duration' for every "
            "policy and the bound, and ignores the 'work' column (drop it, or rename it to 'duration' to use it).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        table = table.drop(columns=["work"])
    table = check_job_table(table, error=InvalidInstanceError)
    if "work" in table.columns:  # the same numbers as 'duration': one processing-time column
        table = table.drop(columns=["work"])
    g = table["gpus"].to_numpy()
    if int(g.max()) > cluster.total_gpus:
        i = int(np.argmax(g))
        raise InvalidInstanceError(
            f"Job {table['job_id'].iloc[i]!r} needs {int(g[i])} GPUs, more than the cluster's {cluster.total_gpus}: "
            f"give a larger cluster (--servers, --gpus-per-server, or --load to size it)."
        )
    return table


class SeededWorkload:
    """The workload of one seed: the generic table (with ``job_id``, arrivals measured from the
    first one, ``origin`` s in the caller's clock), the cluster, the overheads and, built on first
    use, each paper's view of it.

    Measuring from the first arrival keeps every time small: a trace in Unix time (1.6e9 s) has
    completion times whose last float digit is 2.4e-7 s, and sums of 10^4 of them lose seconds;
    periodic policies then tick from the first arrival too.
    """

    def __init__(
        self, table, cluster, seed: int, overheads: str, load_base: float, enrich: Mapping[str, Mapping[str, Any]]
    ):
        table = _checked_table(table, cluster)
        r = table["arrival"].to_numpy(dtype=float)
        self.origin = float(r.min())
        if self.origin != 0.0:
            table = table.assign(arrival=r - self.origin)
        if overheads == "model":
            table = with_load_save(table, base=load_base, seed=seed, **dict(enrich.get("lazer", {})))
        self.table = table
        self.cluster = cluster
        self.seed = seed
        self.overheads = overheads
        self.enrich = {k: dict(v) for k, v in enrich.items()}
        self.ids = table["job_id"].tolist()
        self.views: dict[str, Any] = {}

    # overheads: per-job load/save times keyed by job id. The generic table carries them as columns
    # (Job.load_time/save_time, which the engine prefers to these functions); the functions serve the
    # papers' views (whose jobs are built from the view, not the table), the slot scale and the
    # slotted plan's resume cost, which depends on the job's starts: built in this one place.
    def overhead_functions(
        self, scale: float = 1.0, extra_load: Callable | None = None, slotted_plan: bool = False
    ) -> dict[str, Any]:
        """``load_time``/``save_time`` for the Simulator (seconds / ``scale``), plus ``extra_load``.

        ``slotted_plan`` (the elastic policies, which plan whole slots and re-plan a preempted job's
        resources at once): the first load is part of the job's work (:meth:`view`), a resumed job
        pays its save and load time when it restarts, and there is no save time on its old
        resources (the same total time; formulations/rigid.md#jct-bound)."""
        if self.overheads == "none":
            return {"load_time": extra_load} if extra_load is not None else {}
        load = dict(zip(self.ids, (self.table["load_time"].to_numpy(float) / scale).tolist(), strict=True))
        save = dict(zip(self.ids, (self.table["save_time"].to_numpy(float) / scale).tolist(), strict=True))

        def lt(job, placement=None):
            if slotted_plan:
                v = load[job.id] + save[job.id] if job.n_starts > 1 else 0.0
            else:
                v = load[job.id]
            return v + (extra_load(job, placement) if extra_load is not None else 0.0)

        def st(job, placement=None):
            return save[job.id]

        return {"load_time": lt} if slotted_plan else {"load_time": lt, "save_time": st}

    def first_load(self) -> np.ndarray:
        """The load every job pays once before it trains (s; zeros without overheads)."""
        if self.overheads == "none":
            return np.zeros(len(self.table))
        return self.table["load_time"].to_numpy(float)

    def processing(self) -> np.ndarray:
        """Each job's duration (s): its least processing time on the cluster for every policy whose
        jobs are rigid or slower in every other configuration (formulations/rigid.md#jct-bound)."""
        return self.table[work_column(self.table)].to_numpy(float)

    def view(self, paper: str) -> Any:
        """The paper's enriched view (built once); raises a typed error if it cannot be built."""
        if paper not in self.views:
            opts = dict(self.enrich.get(paper, {}))
            if paper == "asrpt":
                self.views[paper] = asrpt_from_table(self.table, self.cluster, seed=self.seed, **opts)
            elif paper == "elastic":
                t = self.table
                if self.overheads == "model":  # its slots plan the first load with the training
                    t = t.assign(**{work_column(t): t[work_column(t)] + t["load_time"]})
                self.views[paper] = elastic_from_table(t, self.cluster, seed=self.seed, **opts)
            elif paper == "sojourn":
                self.views[paper] = sojourn_from_table(self.table, seed=self.seed, **opts)
            else:  # pragma: no cover - only the papers of PAPERS are enriched
                raise InvalidOptionError(f"No enrichment for paper {paper!r}.")
        return self.views[paper]

    def asrpt_least(self) -> tuple[np.ndarray, list[str]]:
        """Each job's least time under the A-SRPT model on this cluster (s, without the load), and how
        it was found (:func:`optsched.asrpt.workload.least_processing`)."""
        return asrpt_least_processing(self.view("asrpt"), detail=True)

    def skip_reason(self, name: str, spec: dict) -> str | None:
        """Why ``name`` cannot run on this workload (None: it can), and how to supply what it needs.
        A bad option (an :class:`InvalidOptionError` of the enrichment) is raised, not a skip."""
        paper = spec["paper"]
        if paper in PAPERS:
            try:
                self.view(paper)
            except InvalidInstanceError as e:
                return f"{e} (needed by {name})"
            return None
        cols = set(self.table.columns)
        miss = [n for n in spec["needs"] if n not in cols]
        if miss:
            return (
                f"the workload has no {', '.join(repr(m) for m in miss)} column (needed by {name}); add "
                f"{'it' if len(miss) == 1 else 'them'} to the job table"
            )
        return None
