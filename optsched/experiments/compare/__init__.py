"""Every online policy on one workload, each beside a lower bound: "which policy, on my trace?"
(``optsched compare``).

The policies come from the simulator's policy registry (the baselines, and every paper's policies
as their packages register them), never from a list here. A generic job table (``arrival``,
``gpus``, ``duration``; optional ``model``, ``status``, ``user``) is turned into what each paper's
policies need by that paper's enrichment function, each assumption documented in
``formulations/<key>.md`` and overridable (``enrich=``):

==========  ================================================  ===============================
paper       enrichment                                        what it adds
==========  ================================================  ===============================
asrpt       :func:`optsched.asrpt.workload.from_table`        model profile, iterations
elastic     :func:`optsched.elastic.workload.from_table`      worker/PS types, slots, weights
sojourn     :func:`optsched.sojourn.workload.from_table`      stages, success probabilities
lazer       :func:`optsched.lazer.workload.with_load_save`    model, load and save times
==========  ================================================  ===============================

With ``overheads="model"`` (the default) every policy pays the load and save times of Lazer's
model (a (re)start loads, a preemption saves), so preemption has a price for all of them.

Every table carries a certified lower bound on the total (and mean) JCT of the workload on the
cluster (:func:`optsched.rigid.bounds.jct_lower_bound`, formulations/rigid.md#jct-bound), and each
row its ratio to it; a row below the bound is flagged (``beats_bound``): that is a bug.

>>> from optsched.core import Cluster
>>> from optsched.traces import synthetic_workload
>>> df = synthetic_workload(200, cluster_gpus=16, max_duration=3600, seed=0)
>>> table, _ = compare(df, Cluster.homogeneous(4, 4), policies=["fifo", "srtf"], progress=False)
>>> list(table["policy"]), bool((table["ratio_to_bound"] >= 1).all())
(['fifo', 'srtf'], True)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from optsched.exceptions import InvalidInstanceError, InvalidOptionError

__all__ = [
    "available_policies",
    "compare",
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
    "METRICS",
    "LOAD_CAP",
    "DEFAULT_MAX_DURATION",
    "OVERHEADS",
]

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
    "total_jct",
    "ratio_to_bound",
)
#: ``--load`` must be in (0, LOAD_CAP).
LOAD_CAP = 5.0
#: Synthetic workloads cap durations at one day by default, so that the longest job is short
#: against the window and the offered load is spread over it (formulations/rigid.md#load).
DEFAULT_MAX_DURATION = 86_400.0
OVERHEADS = ("model", "none")
_PAPERS = ("asrpt", "elastic", "sojourn")  # enriched here; lazer's policies run on the plain table


def available_policies() -> dict[str, dict[str, Any]]:
    """name -> {"factory", "needs", "paper", "description"} for every registered policy.

    Reads the simulator's registry (:func:`optsched.sim.policy_registry`) after loading every
    paper package, so that their policies are registered too.
    """
    from optsched import load_plugins

    load_plugins()
    from optsched.sim import policy_registry

    return {
        name: {"factory": spec.factory, "needs": spec.needs, "paper": spec.paper, "description": spec.description}
        for name, spec in policy_registry().items()
    }


# -- the load ----------------------------------------------------------------------------------
def _check_load(load: Any) -> float:
    try:
        v = float(load)
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(load, bool) or not (0 < v < LOAD_CAP):
        raise InvalidOptionError(
            f"The load must be a number in (0, {LOAD_CAP:g}) (offered GPU-seconds / available GPU-seconds); "
            f"got {load!r}."
        )
    return v


def _work_column(table: Any) -> str:
    cols = list(getattr(table, "columns", table))
    for c in ("duration", "work"):
        if c in cols:
            return c
    raise InvalidInstanceError(f"The job table has no 'duration' (or 'work') column (s); columns: {cols}.")


def replay_window(table: Any) -> tuple[float, float]:
    """(first arrival, last r_i + p_i): the window in which the jobs run if none ever waits.

    >>> import pandas as pd
    >>> replay_window(pd.DataFrame({"arrival": [0.0, 5.0], "duration": [10.0, 1.0], "gpus": [1, 1]}))
    (0.0, 10.0)
    """
    r = np.asarray(table["arrival"], dtype=float)
    p = np.asarray(table[_work_column(table)], dtype=float)
    return float(r.min()), float((r + p).max())


def offered_load(table: Any, total_gpus: int) -> float:
    """sum_i g_i p_i / (G x the replay window): the offered load of ``table`` on G GPUs."""
    a, b = replay_window(table)
    g = np.asarray(table["gpus"], dtype=float)
    p = np.asarray(table[_work_column(table)], dtype=float)
    return float((g * p).sum()) / (total_gpus * (b - a)) if b > a else math.inf


def size_cluster(table: Any, load: float, gpus_per_server: int):
    """Identical servers of ``gpus_per_server`` GPUs, as many as bring the offered load over the
    replay window closest to ``load`` (ties: more servers), at least enough for the largest job.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 0.0], "duration": [100.0, 100.0], "gpus": [4, 4]})
    >>> size_cluster(t, 0.5, 4).n_servers
    4
    """
    from optsched.core import Cluster

    load = _check_load(load)
    if isinstance(gpus_per_server, bool) or not isinstance(gpus_per_server, (int, np.integer)) or gpus_per_server < 1:
        raise InvalidOptionError(f"--gpus-per-server must be an integer >= 1; got {gpus_per_server!r}.")
    a, b = replay_window(table)
    g = np.asarray(table["gpus"], dtype=float)
    p = np.asarray(table[_work_column(table)], dtype=float)
    need = float((g * p).sum()) / (load * (b - a)) if b > a else float(g.max())
    exact = need / gpus_per_server
    lo, hi = max(1, math.floor(exact)), max(1, math.ceil(exact))
    # the load is need * load / (n G_s): compare the two candidates by the load they give
    n = hi if abs(exact / hi - 1) <= abs(exact / lo - 1) else lo
    n = max(n, math.ceil(float(g.max()) / gpus_per_server))
    return Cluster.homogeneous(int(n), int(gpus_per_server))


def calibrate_load(table: Any, load: float, total_gpus: int):
    """A copy of ``table`` with its arrivals scaled (one factor) so that the offered load over the
    window in which the jobs run, [0, max_i (r_i + p_i)], is ``load`` on ``total_gpus`` GPUs.

    Raises
    ------
    InvalidOptionError
        The load cannot be reached: the longest job alone is longer than the window the load allows.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 1.0, 2.0], "duration": [10.0, 10.0, 10.0], "gpus": [1, 1, 1]})
    >>> round(offered_load(calibrate_load(t, 0.5, 2), 2), 9)
    0.5
    """
    load = _check_load(load)
    r = np.asarray(table["arrival"], dtype=float)
    r = r - r.min()
    p = np.asarray(table[_work_column(table)], dtype=float)
    g = np.asarray(table["gpus"], dtype=float)
    target = float((g * p).sum()) / (load * total_gpus)  # the window that gives the load
    if target < p.max() or r.max() <= 0:
        raise InvalidOptionError(
            f"At load {load:g} on {total_gpus} GPUs the {len(p)} jobs fill a window of {target:,.0f} s, shorter "
            f"than the longest job ({p.max():,.0f} s): no arrival process reaches that load. Use more jobs "
            f"(--jobs), a shorter --max-duration, a lower --load or fewer GPUs."
        )
    lo, hi = 0.0, target / r.max()
    for _ in range(200):  # W(s) = max_i (s r_i + p_i) is continuous and increasing: bisection
        mid = (lo + hi) / 2
        if float((mid * r + p).max()) < target:
            lo = mid
        else:
            hi = mid
    out = table.copy()
    out["arrival"] = hi * r
    return out


# -- one seed's workload and its per-paper views -----------------------------------------------
class _Seeded:
    """The workload of one seed: the generic table (with ``job_id``), the cluster, the overheads
    and, built on first use, each paper's view of it."""

    def __init__(self, table, cluster, seed: int, overheads: str, load_base: float, enrich: Mapping[str, dict]):
        import pandas as pd

        table = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table)
        table = table.reset_index(drop=True)
        if "job_id" not in table.columns:
            table = table.assign(job_id=np.arange(len(table)))
        if table["job_id"].duplicated().any():
            dup = table["job_id"][table["job_id"].duplicated()].iloc[0]
            raise InvalidInstanceError(f"Job id {dup!r} appears twice in the job table; job ids must be unique.")
        if len(table) == 0:
            raise InvalidInstanceError("The job table is empty; give at least one job.")
        g = table["gpus"].to_numpy()
        if int(g.max()) > cluster.total_gpus:
            i = int(np.argmax(g))
            raise InvalidInstanceError(
                f"Job {table['job_id'].iloc[i]!r} needs {int(g[i])} GPUs, more than the cluster's "
                f"{cluster.total_gpus}: give a larger cluster (--servers, --gpus-per-server, or --load to size it)."
            )
        if overheads == "model":
            from optsched.lazer.workload import with_load_save

            table = with_load_save(table, base=load_base, seed=seed, **dict(enrich.get("lazer", {})))
        self.table = table
        self.cluster = cluster
        self.seed = seed
        self.overheads = overheads
        self.enrich = enrich
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
        if self.overheads == "none":
            return np.zeros(len(self.table))
        return self.table["load_time"].to_numpy(float)

    def view(self, paper: str) -> Any:
        """The paper's enriched view (built once); raises a typed error if it cannot be built."""
        if paper not in self.views:
            opts = dict(self.enrich.get(paper, {}))
            if paper == "asrpt":
                from optsched.asrpt.workload import from_table

                self.views[paper] = from_table(self.table, self.cluster, seed=self.seed, **opts)
            elif paper == "elastic":
                from optsched.elastic.workload import from_table

                t = self.table
                if self.overheads == "model":  # its slots plan the first load with the training
                    t = t.assign(**{_work_column(t): t[_work_column(t)] + t["load_time"]})
                self.views[paper] = from_table(t, self.cluster, seed=self.seed, **opts)
            elif paper == "sojourn":
                from optsched.sojourn.workload import from_table

                self.views[paper] = from_table(self.table, seed=self.seed, **opts)
            else:  # pragma: no cover - only the papers of _PAPERS are enriched
                raise InvalidOptionError(f"No enrichment for paper {paper!r}.")
        return self.views[paper]

    def least_processing(self, paper: str | None) -> np.ndarray:
        """Each job's least processing time (s) under the paper's view (without overheads)."""
        p = self.table[_work_column(self.table)].to_numpy(float)
        if paper == "asrpt":
            from optsched.asrpt.workload import least_processing

            return np.minimum(p, least_processing(self.view("asrpt")))
        return p  # elastic: >= duration by construction; sojourn: each job runs its observed duration


class _Run:
    """One policy run, normalised to seconds: per-job ``frame`` (job_id, arrival, gpus, first_start,
    completion, status, n_preemptions) and GPU use over time ``steps`` (times, GPUs held)."""

    def __init__(self, frame, steps: tuple[np.ndarray, np.ndarray]):
        self.frame = frame
        self.steps = steps


def _steps_from_segments(res, scale: float, resource: str) -> tuple[np.ndarray, np.ndarray]:
    seg = res.segments()
    t, d = [], []
    for a, b, usage in zip(seg["start"], seg["end"], seg["usage"], strict=True):
        g = float(sum(v.get(resource, 0.0) for v in (usage or {}).values()))
        if g:
            t += [a * scale, b * scale]
            d += [g, -g]
    if not t:
        return np.zeros(0), np.zeros(0)
    t_, d_ = np.asarray(t), np.asarray(d)
    o = np.argsort(t_, kind="stable")
    t_, lvl = t_[o], np.cumsum(d_[o])
    last = np.r_[t_[1:] != t_[:-1], True]
    return t_[last], lvl[last]


def _steps(res) -> tuple[np.ndarray, np.ndarray]:
    u = res.utilization()
    return u["time"].to_numpy(float), u["gpus_in_use"].to_numpy(float)


def _frame(res, w: _Seeded, *, scale: float = 1.0, arrival_s=None):
    import pandas as pd

    c = res.job_columns()
    arr = np.asarray(arrival_s, float) if arrival_s is not None else c["arrival"] * scale
    return pd.DataFrame(
        {
            "job_id": c["job_id"].tolist(),
            "arrival": arr,
            "gpus": w.table["gpus"].to_numpy(),
            "first_start": c["first_start"] * scale,
            "completion": c["completion"] * scale,
            "status": c["status"].tolist(),
            "n_preemptions": c["n_preemptions"],
        }
    )


def _run(name: str, spec: dict, w: _Seeded, seed: int, placement: str | None, sim_options: dict) -> _Run:
    from optsched.sim import Simulator

    paper = spec["paper"] if spec["paper"] in _PAPERS else None
    opts = {} if placement is None else {"placement": placement}
    if paper is None:
        pol = _build(spec, opts)
        res = Simulator(
            w.cluster, w.table, pol, seed=seed, record_log=False, **w.overhead_functions(), **sim_options
        ).run()
        return _Run(_frame(res, w), _steps(res))
    view = w.view(paper)
    if paper == "sojourn":
        pol = _build(spec, opts)
        res = Simulator(
            w.cluster,
            view.table,
            pol,
            seed=seed,
            record_log=False,
            **view.sim_options(),
            **w.overhead_functions(),
            **sim_options,
        ).run()
        return _Run(_frame(res, w), _steps(res))
    if paper == "asrpt":
        from optsched.asrpt.policy import sim_jobs

        pol = _build(spec, {})
        res = Simulator(
            view.cluster, sim_jobs(view), pol, seed=seed, record_log=False, **w.overhead_functions(), **sim_options
        ).run()
        return _Run(_frame(res, w), _steps(res))
    # elastic: slotted engine, time in slots, token GPUs; the GPUs are the resource "gpu"
    from optsched.core.seeds import as_generator
    from optsched.elastic.policy import ElasticRate, fifo_shape, ideal_shape, to_sim

    inst = view
    if name == "elastic-fifo":  # FIFO draws N uniformly in [1, 30] (Sec. 7 (i)), seeded
        rng = as_generator(seed)
        shapes = [fifo_shape(inst, j, int(rng.integers(1, 31))) for j in range(inst.n_jobs)]
    else:
        shapes = w.views.setdefault("elastic-ideal", [ideal_shape(inst, j) for j in range(inst.n_jobs)])
    cl, jobs = to_sim(inst, shapes)
    pol = spec["factory"](instance=inst)
    res = Simulator(
        cl,
        jobs,
        pol,
        rate_model=ElasticRate(),
        slot=1.0,
        seed=seed,
        record_log=False,
        **w.overhead_functions(scale=inst.slot, extra_load=pol.load_time, slotted_plan=True),
        **sim_options,
    ).run()
    return _Run(
        _frame(res, w, scale=inst.slot, arrival_s=inst.metadata["arrival_s"]),
        _steps_from_segments(res, inst.slot, "gpu"),
    )


def _build(spec: dict, opts: dict):
    if not opts:
        return spec["factory"]()
    try:
        return spec["factory"](**opts)
    except (TypeError, InvalidOptionError):
        return spec["factory"]()


def _metrics(run: _Run, G: int) -> dict[str, float]:
    f = run.frame
    fin = f["status"].isin(["done", "failed"]).to_numpy()
    arr = f["arrival"].to_numpy(float)
    comp = f["completion"].to_numpy(float)
    jct = (comp - arr)[fin]
    qd = (f["first_start"].to_numpy(float) - arr)[fin]
    t, lvl = run.steps
    start = float(arr.min())
    end = float(np.nanmax(comp)) if fin.any() else start
    if len(t) and end > start:
        tt = np.clip(np.append(t, end), start, end)
        util = float(np.sum(np.diff(tt) * lvl)) / (G * (end - start))
    else:
        util = 0.0

    def pct(a, q):
        return float(np.percentile(a, q)) if len(a) else float("nan")

    return {
        "mean_jct": float(jct.mean()) if len(jct) else float("nan"),
        "p50_jct": pct(jct, 50),
        "p95_jct": pct(jct, 95),
        "p99_jct": pct(jct, 99),
        "mean_queue_delay": float(qd.mean()) if len(qd) else float("nan"),
        "p95_queue_delay": pct(qd, 95),
        "max_queue_delay": float(qd.max()) if len(qd) else float("nan"),
        "makespan": end,
        "mean_utilization": util,
        "n_preemptions": float(f["n_preemptions"].sum()),
        "total_jct": float(jct.sum()),
        "n_unfinished": int((~fin).sum()),
    }


def _ci95(values: Sequence[float]) -> tuple[float, float, float]:
    a = np.asarray([v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))], float)
    if len(a) == 0:
        return float("nan"), float("nan"), float("nan")
    if len(a) == 1:
        return float(a[0]), float("nan"), float("nan")
    from scipy import stats

    h = float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))
    return float(a.mean()), float(a.mean() - h), float(a.mean() + h)


def _skip_reason(name: str, spec: dict, w: _Seeded) -> str | None:
    """Why ``name`` cannot run on this workload (None: it can), and how to supply what it needs."""
    paper = spec["paper"]
    if paper in _PAPERS:
        try:
            w.view(paper)
        except (InvalidInstanceError, InvalidOptionError) as e:
            return f"{e} (needed by {name})"
        return None
    cols = set(w.table.columns)
    miss = [n for n in spec["needs"] if n not in cols]
    if miss:
        return (
            f"the workload has no {', '.join(repr(m) for m in miss)} column (needed by {name}); add "
            f"{'it' if len(miss) == 1 else 'them'} to the job table"
        )
    return None


def compare(
    workload: Any | Callable[[int], Any],
    cluster: Any,
    *,
    policies: Sequence[str] | str = "all",
    seeds: int = 1,
    placement: str | None = None,
    progress: bool = True,
    sim_options: dict[str, Any] | None = None,
    overheads: str = "model",
    load_base: float = 60.0,
    enrich: Mapping[str, Mapping[str, Any]] | None = None,
    on_row: Callable[[dict, list], None] | None = None,
    exact_max_jobs: int = 12,
    exact_time_limit: float = 10.0,
):
    """Run each policy on the same workload; one row per policy, each with its ratio to a lower bound.

    Parameters
    ----------
    workload : job table, or ``seed -> job table``
        A trace (the same table for every seed; the enrichments draw with the seed) or a generator
        called with each seed. Columns ``arrival``, ``gpus``, ``duration`` (or ``work``); optional
        ``job_id``, ``model``, ``status``, ``user``.
    cluster : Cluster
    policies : "all" or names
        Unknown names raise :class:`InvalidOptionError` listing the known ones (before any run).
    seeds : int
        Runs per policy (seeds 0..seeds-1); with more than one, each metric is the mean and the
        table has ``<metric>_ci_lo`` / ``<metric>_ci_hi`` (95% t-interval).
    placement : str, optional
        Placement rule passed to every policy that takes one.
    overheads : {"model", "none"}
        ``"model"``: load and save times from each job's model size (Lazer's (L1)-(L2), base
        ``load_base`` s) for every policy; ``"none"``: free (re)starts and preemptions.
    enrich : mapping paper -> options, optional
        Options of each paper's enrichment function (``{"elastic": {"slot": 600}}``,
        ``{"sojourn": {"n_stages": 8}}``, ``{"lazer": {"model_column": "arch"}}``, ...).
    on_row : callable(row, rows), optional
        Called after each policy's row is complete (e.g. to write the table so far).
    exact_max_jobs, exact_time_limit : int, float
        With at most ``exact_max_jobs`` jobs, the exact rigid model also bounds the total JCT of
        every *non-preemptive* schedule (:func:`optsched.rigid.bounds.nonpreemptive_lower_bound`,
        ``exact_time_limit`` s per seed); the rows that never preempted and whose jobs are rigid
        (all but the elastic policies) get ``ratio_to_np_bound``. 0 turns it off.

    Returns
    -------
    (table, per_job)
        ``table``: DataFrame, one row per policy (``skipped`` holds the reason a policy could not
        run, ``beats_bound`` flags a row below the lower bound); ``table.attrs`` holds ``bound``
        (per seed and mean), ``utilization`` {policy: (times, GPUs held) of seed 0}, ``gpus`` and
        ``assumptions``. ``per_job``: {policy: per-job DataFrame of seed 0, in seconds}.

    Raises
    ------
    InvalidOptionError, InvalidInstanceError
        Before any run: unknown policy or option, an empty table, a job larger than the cluster.
    """
    import pandas as pd

    from optsched.rigid.bounds import jct_lower_bound

    reg = available_policies()
    names = sorted(reg) if policies == "all" else [str(p).strip().lower().replace("_", "-") for p in policies]
    unknown = [n for n in names if n not in reg]
    if unknown:
        raise InvalidOptionError(f"Unknown policy {unknown[0]!r}; known: {sorted(reg)}.")
    if isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer)) or seeds < 1:
        raise InvalidOptionError(f"seeds must be an integer >= 1; got {seeds!r}.")
    if overheads not in OVERHEADS:
        raise InvalidOptionError(f"overheads must be one of {OVERHEADS}; got {overheads!r}.")
    enrich = {k: dict(v) for k, v in (enrich or {}).items()}
    bad = sorted(set(enrich) - {*_PAPERS, "lazer"})
    if bad:
        raise InvalidOptionError(f"enrich has options for {bad}; papers with an enrichment: {[*_PAPERS, 'lazer']}.")
    sim_options = dict(sim_options or {})
    G = int(cluster.total_gpus)
    ws = [
        _Seeded(workload(s) if callable(workload) else workload, cluster, s, overheads, load_base, enrich)
        for s in range(seeds)
    ]
    skip = {n: _skip_reason(n, reg[n], ws[0]) for n in names}
    families = {reg[n]["paper"] if reg[n]["paper"] in _PAPERS else None for n in names if skip[n] is None}
    bounds, np_bounds = [], []
    for w in ws:
        p = np.min([w.least_processing(f) for f in families] or [w.least_processing(None)], axis=0)
        r, g = w.table["arrival"].to_numpy(float), w.table["gpus"].to_numpy(float)
        bounds.append(jct_lower_bound(r, g, p + w.first_load(), G))
        if len(r) <= exact_max_jobs:
            from optsched.rigid.bounds import nonpreemptive_lower_bound

            np_bounds.append(nonpreemptive_lower_bound(r, g, p + w.first_load(), cluster, time_limit=exact_time_limit))
    rows: list[dict[str, Any]] = []
    per_job: dict[str, Any] = {}
    util: dict[str, Any] = {}
    bar = None
    if progress:
        from rich.progress import Progress

        bar = Progress(transient=True)
        task = bar.add_task("compare", total=len(names) * seeds)
        bar.start()
    try:
        for name in names:
            spec = reg[name]
            if skip[name] is not None:
                rows.append({"policy": name, "paper": spec["paper"] or "baseline", "skipped": skip[name]})
                if bar:
                    bar.advance(task, seeds)
                if on_row:
                    on_row(rows[-1], rows)
                continue
            runs = []
            for s, w in enumerate(ws):
                run = _run(name, spec, w, s, placement, sim_options)
                m = _metrics(run, G)
                m["ratio_to_bound"] = m["total_jct"] / bounds[s].total if bounds[s].total > 0 else float("nan")
                m["beats_bound"] = m["total_jct"] < bounds[s].total * (1 - 1e-9)
                if np_bounds and spec["paper"] != "elastic" and m["n_preemptions"] == 0:
                    m["ratio_to_np_bound"] = m["total_jct"] / np_bounds[s].total
                    m["beats_bound"] |= m["total_jct"] < np_bounds[s].total * (1 - 1e-9)
                else:
                    m["ratio_to_np_bound"] = float("nan")
                runs.append(m)
                if s == 0:
                    per_job[name] = run.frame
                    util[name] = run.steps
                if bar:
                    bar.advance(task)
            row: dict[str, Any] = {
                "policy": name,
                "paper": spec["paper"] or "baseline",
                "seeds": seeds,
                "n_jobs": len(ws[0].table),
            }
            for k in METRICS:
                vals = [r[k] for r in runs]
                if seeds == 1:
                    row[k] = vals[0]
                else:
                    row[k], row[f"{k}_ci_lo"], row[f"{k}_ci_hi"] = _ci95(vals)
            if np_bounds:
                vals = [r["ratio_to_np_bound"] for r in runs]
                row["ratio_to_np_bound"] = float(np.mean(vals)) if not any(math.isnan(v) for v in vals) else math.nan
            row["max_queue_delay"] = max(r["max_queue_delay"] for r in runs)
            row["n_unfinished"] = max(r["n_unfinished"] for r in runs)
            row["beats_bound"] = any(r["beats_bound"] for r in runs)
            row["skipped"] = None
            rows.append(row)
            if row["beats_bound"]:
                warnings.warn(
                    f"Policy {name!r} has a total JCT below the lower bound ({row['total_jct']:.6g} < "
                    f"{np.mean([b.total for b in bounds]):.6g}): a bug in the policy, the engine or the bound; "
                    f"please report it.",
                    stacklevel=2,
                )
            if on_row:
                on_row(row, rows)
    finally:
        if bar:
            bar.stop()
        table = pd.DataFrame(rows)
        table.attrs.update(_attrs(ws, bounds, util, G, np_bounds))
        _store_partial(table, per_job)
    ran = [r for r in rows if r.get("skipped") is None]
    if ran and all(r["max_queue_delay"] <= 1e-9 for r in ran):
        warnings.warn(
            f"No job ever waited under any policy: the cluster ({cluster.n_servers} servers, {G} GPUs) is so large "
            f"that the policies cannot differ. Use fewer servers (--servers N) or size it with --load.",
            stacklevel=2,
        )
    return table, per_job


_PARTIAL: dict[str, Any] = {}


def _store_partial(table, per_job) -> None:
    """Keep the last (possibly interrupted) comparison, for a caller that catches KeyboardInterrupt."""
    _PARTIAL["table"], _PARTIAL["per_job"] = table, per_job


def last_partial():
    """(table, per_job) of the last :func:`compare` call, complete or interrupted (Ctrl-C)."""
    return _PARTIAL.get("table"), _PARTIAL.get("per_job", {})


def _attrs(ws, bounds, util, G, np_bounds=()) -> dict[str, Any]:
    assumptions: dict[str, Any] = {}
    w = ws[0]
    if w.overheads == "model":
        assumptions["lazer"] = dict(w.table.attrs.get("assumptions", {}))
    for paper, v in w.views.items():
        if paper == "asrpt":
            assumptions[paper] = dict(v.metadata.get("assumptions", {}))
            drawn = assumptions.get("lazer", {}).get("models_drawn", 0)
            if drawn:  # the Lazer enrichment ran first: one model per job for both
                assumptions[paper]["model_column"] = (
                    f"{drawn} model names drawn by the Lazer enrichment (the trace had none for them); "
                    f"the same model sets each job's load/save times and its A-SRPT profile"
                )
        elif paper == "elastic":
            a = dict(v.metadata.get("assumptions", {}))
            a.pop("own_worker_gpus", None)
            assumptions[paper] = a
        elif paper == "sojourn":
            assumptions[paper] = dict(v.assumptions)
    tot = [b.total for b in bounds]
    return {
        "bound": {
            "total_jct": float(np.mean(tot)),
            "mean_jct": float(np.mean([b.mean for b in bounds])),
            "fluid": float(np.mean([b.fluid for b in bounds])),
            "own_length": float(np.mean([b.own_length for b in bounds])),
            "which": bounds[0].which,
            "per_seed_total_jct": tot,
            "nonpreemptive": (
                {
                    "total_jct": float(np.mean([b.total for b in np_bounds])),
                    "mean_jct": float(np.mean([b.mean for b in np_bounds])),
                    "proven_optimal": all(b.optimal for b in np_bounds),
                    "slot": [b.slot for b in np_bounds],
                    "applies_to": "rows that never preempted and whose jobs are rigid (not the elastic policies)",
                }
                if np_bounds
                else None
            ),
        },
        "utilization": util,
        "gpus": G,
        "assumptions": assumptions,
        "offered_load": [offered_load(x.table, G) for x in ws],
    }


# -- pictures ----------------------------------------------------------------------------------
def _label(name: str) -> str:
    return name


def _colors(names):
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(names)}


def plot_jct_cdf(per_job: dict[str, Any], ax=None, *, log: bool = True, column: str = "jct"):
    """One CDF per policy of JCT (``column="jct"``) or queueing delay (``"queue_delay"``) of the
    finished jobs, on one axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    col = _colors(per_job)
    for name, df in per_job.items():
        fin = df["status"].isin(["done", "failed"]) if "status" in df else np.ones(len(df), bool)
        if column == "jct" and "jct" not in df:
            v = (df["completion"] - df["arrival"])[fin]
        elif column == "queue_delay" and "queue_delay" not in df:
            v = (df["first_start"] - df["arrival"])[fin]
        else:
            v = df.loc[fin, column]
        v = np.sort(np.asarray(v, dtype=float))
        if len(v) == 0:
            continue
        if log:
            v = np.maximum(v, 1e-3)
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=_label(name), color=col[name])
    if log:
        ax.set_xscale("log")
    label = "job completion time (s)" if column == "jct" else "queueing delay (s, first start - arrival)"
    ax.set_xlabel(label + (" (0 drawn at 1e-3)" if log and column != "jct" else ""))
    ax.set_ylabel("fraction of jobs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    ax.figure.tight_layout()
    return ax


def plot_queue_delay_cdf(per_job: dict[str, Any], ax=None, *, log: bool = True):
    """CDF of the queueing delay (first start - arrival) per policy."""
    return plot_jct_cdf(per_job, ax, log=log, column="queue_delay")


def plot_summary(table, ax=None):
    """Mean and P95 JCT per policy (bars, with the seeds' 95% intervals when there are several),
    the lower bound on the mean JCT as a line."""
    import matplotlib.pyplot as plt

    ran = table[table["skipped"].isna()] if "skipped" in table else table
    ran = ran.sort_values("mean_jct")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(7, 0.45 * len(ran) + 2), 4.5))
    x = np.arange(len(ran))
    for k, (m, off, c) in enumerate((("mean_jct", -0.2, "tab:blue"), ("p95_jct", 0.2, "tab:orange"))):
        y = ran[m].to_numpy(float)
        err = None
        if f"{m}_ci_lo" in ran:
            lo, hi = ran[f"{m}_ci_lo"].to_numpy(float), ran[f"{m}_ci_hi"].to_numpy(float)
            err = np.vstack([np.nan_to_num(y - lo), np.nan_to_num(hi - y)])
        ax.bar(x + off, y, 0.4, yerr=err, capsize=2, color=c, label=("mean JCT", "P95 JCT")[k])
    b = table.attrs.get("bound", {}).get("mean_jct")
    if b is not None:
        ax.axhline(b, color="k", ls="--", lw=1, label=f"lower bound on the mean ({b:,.0f} s)")
    ax.set_xticks(x)
    ax.set_xticklabels(ran["policy"], rotation=60, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("seconds")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    ax.figure.tight_layout()
    return ax


def plot_utilization(table, ax=None, *, policies: Sequence[str] | None = None, bins: int = 200):
    """Fraction of GPUs held over time (seed 0), one line per policy, averaged over ``bins`` windows."""
    import matplotlib.pyplot as plt

    util = table.attrs.get("utilization", {})
    G = table.attrs.get("gpus", 1)
    names = list(policies) if policies is not None else list(util)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    col = _colors(list(util))
    ends = sorted(float(util[n][0][-1]) for n in names if len(util[n][0]))
    # up to three times the median policy's end: one policy that runs for ages does not squash the rest
    end = min(ends[-1], 3 * ends[len(ends) // 2]) if ends else 1.0
    edges = np.linspace(0.0, end, bins + 1)
    for name in names:
        t, lvl = util[name]
        if not len(t):
            continue
        tt = np.append(t, end)
        cum = np.concatenate([[0.0], np.cumsum(np.diff(tt) * lvl)])
        at = np.interp(edges, tt, cum, left=0.0)
        ax.plot(edges[:-1] / 3600.0, np.diff(at) / (G * np.diff(edges)), lw=0.8, label=_label(name), color=col[name])
    ax.set_xlabel("time (h)")
    ax.set_ylabel("fraction of GPUs held")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    ax.figure.tight_layout()
    return ax


def best_of_each_paper(table) -> list[str]:
    """The policy of least mean JCT of each paper (and of the baselines), then FIFO: the lines the
    CDF and utilisation pictures show (``jct_summary`` shows every row)."""
    ran = table[table["skipped"].isna()] if "skipped" in table else table
    ran = ran.sort_values("mean_jct")
    out = list(dict.fromkeys(ran.groupby("paper", sort=False)["policy"].first()))
    if "fifo" in set(ran["policy"]) and "fifo" not in out:
        out.append("fifo")
    return out


def save_figures(
    table, per_job, out, *, formats: Sequence[str] = ("png", "svg"), policies: Sequence[str] | None = None
) -> list:
    """``jct_summary`` (every policy), ``jct_cdf``, ``queue_delay_cdf`` and ``utilization`` (the
    ``policies`` given, default :func:`best_of_each_paper`) as PNG and SVG in ``out``."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out = Path(out)
    show = [p for p in (policies or best_of_each_paper(table)) if p in per_job]
    sub = {k: per_job[k] for k in show}
    paths = []
    for fname, draw in (
        ("jct_cdf", lambda: plot_jct_cdf(sub)),
        ("jct_summary", lambda: plot_summary(table)),
        ("queue_delay_cdf", lambda: plot_queue_delay_cdf(sub)),
        ("utilization", lambda: plot_utilization(table, policies=show)),
    ):
        ax = draw()
        for ext in formats:
            p = out / f"{fname}.{ext}"
            ax.figure.savefig(p, dpi=120)
            paths.append(p)
        plt.close(ax.figure)
    return paths
