"""Running one policy on one seed's workload: the simulator run, its per-job frame in seconds, the
GPUs held over time and the row's metrics; a policy that raises gives a failed run (its reason),
never an exception that would lose the other rows.

Tested in ``tests/experiments/test_compare_run.py`` and ``tests/experiments/test_compare_bound.py``."""

from __future__ import annotations

import math
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.asrpt.rate import sim_jobs
from optsched.core.plugins import load_plugins
from optsched.core.seeds import job_uniforms
from optsched.elastic.policy_base import ElasticRate, to_sim
from optsched.elastic.shapes import fifo_shape, ideal_shape
from optsched.exceptions import EngineFallbackWarning, InvalidOptionError
from optsched.experiments.compare.workload import PAPERS, SeededWorkload
from optsched.sim import Simulator, policy_registry

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
"""The metric columns of the comparison table, one value per policy (the mean over the seeds, with a
95% interval when there are several); seconds unless the name says otherwise."""


def available_policies() -> dict[str, dict[str, Any]]:
    """name -> {"factory", "needs", "paper", "description"} for every registered policy.

    Reads the simulator's registry (:func:`optsched.sim.policy_registry`) after loading every
    paper package, so that their policies are registered too.

    Examples
    --------
    >>> reg = available_policies()
    >>> {"fifo", "srtf", "lazer", "asrpt-a-srpt"} <= set(reg)
    True
    >>> sorted(reg["fifo"])
    ['description', 'factory', 'needs', 'paper']
    >>> reg["fifo"]["paper"] is None, reg["asrpt-a-srpt"]["paper"]  # a baseline; a paper's policy
    (True, 'asrpt')
    """

    load_plugins()

    return {
        name: {"factory": spec.factory, "needs": spec.needs, "paper": spec.paper, "description": spec.description}
        for name, spec in policy_registry().items()
    }


@dataclass
class RunResult:
    """One policy on one seed: ``metrics`` (seconds), the per-job ``frame`` (job_id, arrival, gpus,
    first_start, completion, status, n_preemptions, loading_time, training_time, saving_time, servers
    (the most servers the job ran on at once); seconds from the first arrival) and GPUs held
    over time ``steps`` (times, GPUs), or ``error`` (type and message) if the policy raised;
    ``seconds`` and ``cpu_seconds``: the wall and CPU time of the run (in its process)."""

    policy: str
    seed: int
    metrics: dict[str, float] = field(default_factory=dict)
    frame: Any = None
    steps: tuple[np.ndarray, np.ndarray] | None = None
    error: str | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error is not None


def run_policy(
    name: str,
    spec: dict,
    w: SeededWorkload,
    seed: int,
    placement: str | None,
    sim_options: dict,
    *,
    keep_frame: bool,
) -> RunResult:
    """Run ``name`` on ``w``; any exception of the policy, the engine or an enrichment becomes
    ``error`` ("Type: message", with the innermost frame), the other rows go on."""
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        with warnings.catch_warnings():  # which engine runs a row is the table's business, not a warning's
            warnings.simplefilter("ignore", EngineFallbackWarning)
            frame, steps = _simulate(name, spec, w, seed, placement, sim_options)
        m = metrics(frame, steps, int(w.cluster.total_gpus))
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as e:  # a policy's failure is a failed row, reported with its reason
        tb = traceback.extract_tb(e.__traceback__)
        where = f" (at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
        return RunResult(
            name,
            seed,
            error=f"{type(e).__name__}: {e}{where}",
            seconds=time.perf_counter() - t0,
            cpu_seconds=time.process_time() - c0,
        )
    return RunResult(
        name,
        seed,
        metrics=m,
        frame=frame if keep_frame else None,
        steps=steps if keep_frame else None,
        seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
    )


def _build(spec: dict, opts: dict):
    if not opts:
        return spec["factory"]()
    try:
        return spec["factory"](**opts)
    except (TypeError, InvalidOptionError):
        return spec["factory"]()


def _simulate(name: str, spec: dict, w: SeededWorkload, seed: int, placement: str | None, sim_options: dict):
    paper = spec["paper"] if spec["paper"] in PAPERS else None
    opts = {} if placement is None else {"placement": placement}
    common = {"seed": w.seed, "record_log": False}
    if paper is None:  # the table carries each job's load_time/save_time: the compiled kernel runs them
        res = Simulator(w.cluster, w.table, _build(spec, opts), **common, **sim_options).run()
        return _frame(res, w), _steps(res)
    view = w.view(paper)
    if paper == "sojourn":
        pol = _build(spec, opts)
        res = Simulator(
            w.cluster, view.table, pol, **common, **view.sim_options(), **w.overhead_functions(), **sim_options
        ).run()
        return _frame(res, w), _steps(res)
    if paper == "asrpt":
        res = Simulator(
            view.cluster, sim_jobs(view), _build(spec, {}), **common, **w.overhead_functions(), **sim_options
        ).run()
        return _frame(res, w), _steps(res)
    # elastic: slotted engine, time in slots, token GPUs; the GPUs are the resource "gpu"

    inst = view
    if name == "elastic-fifo":  # FIFO draws N uniformly in [1, 30] (Sec. 7 (i)), seeded
        u = job_uniforms(w.seed, w.ids, "elastic-fifo-workers")  # each job's own draw: by its id
        shapes = [fifo_shape(inst, j, 1 + min(int(u[j] * 30), 29)) for j in range(inst.n_jobs)]
    else:
        shapes = w.views.get("elastic-ideal")
        if shapes is None:
            shapes = w.views["elastic-ideal"] = [ideal_shape(inst, j) for j in range(inst.n_jobs)]
    cl, jobs = to_sim(inst, shapes)
    pol = spec["factory"](instance=inst)
    res = Simulator(
        cl,
        jobs,
        pol,
        rate_model=ElasticRate(),
        slot=1.0,
        **common,
        **w.overhead_functions(scale=inst.slot, extra_load=pol.load_time, slotted_plan=True),
        **sim_options,
    ).run()
    return (
        _frame(res, w, scale=inst.slot, arrival_s=inst.metadata["arrival_s"]),
        _steps_from_segments(res, inst.slot, "gpu"),
    )


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


def _frame(res, w: SeededWorkload, *, scale: float = 1.0, arrival_s=None):
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
            "loading_time": c["loading_time"] * scale,
            "training_time": c["training_time"] * scale,
            "saving_time": c["saving_time"] * scale,
            "servers": res.job_servers(),
        }
    )


def metrics(f, steps: tuple[np.ndarray, np.ndarray], G: int) -> dict[str, float]:
    """The row's metrics of one run (seconds from the first arrival)."""
    fin = f["status"].isin(["done", "failed"]).to_numpy()
    arr = f["arrival"].to_numpy(float)
    comp = f["completion"].to_numpy(float)
    jct = (comp - arr)[fin]
    qd = (f["first_start"].to_numpy(float) - arr)[fin]
    t, lvl = steps
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
        "total_jct": float(math.fsum(jct)),
        "n_unfinished": int((~fin).sum()),
    }
