"""Why a row of the comparison ends far from its bound, measured on that row's own jobs.

Each job's time in the system (its JCT) is at least its own length: its duration plus the load it
pays once (the ``own_length`` part of the bound, formulations/rigid.md#jct-bound; under the A-SRPT
time model, its least time there when that is shorter). What a job spends beyond its own length
splits exactly into six parts, read from the run's per-job results (:func:`job_costs`):

- ``split``: training beyond its duration on a placement split over servers (the A-SRPT rows run
  the paper's communication model, where a split job trains slower; the elastic rows' rate also
  depends on the workers they chose, so there the part says where the slower training ran, not
  why);
- ``slower``: training beyond its duration on one server (work lost at a preemption and done
  again, a slower rate);
- ``queued_busy``: waiting for its first start while fewer GPUs than it needs were free (behind
  other jobs);
- ``queued_free``: waiting for its first start while at least its GPUs were free in the cluster
  (the policy held it back: its order, Theorem 5's start offsets of A_online, no placement it
  accepts on the free GPUs);
- ``off_gpus``: time after its first start neither loading, training nor saving (preempted, or
  holding its GPUs to the end of a slot);
- ``overheads``: load and save times beyond the first load.

:func:`row_note` turns the shares of these parts over the row's jobs, and the jobs that cost most,
into the note printed under the table (``note`` column of the table, its CSV and JSON), for the rows
at :data:`~optsched.experiments.compare.table.FAR` times their bound or more, on the jobs of the
first seed (the one whose per-job results the comparison keeps). The parts are read from one run;
they say where the time went, not what another policy would have done with it.

Tested in ``tests/experiments/test_notes.py``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optsched.experiments.compare.bound import ASRPT_MODEL, WORKLOAD
from optsched.experiments.compare.runner import RunResult
from optsched.experiments.compare.table import FAR, fmt
from optsched.experiments.compare.workload import SeededWorkload

PARTS = {
    "split": "training beyond their durations split over servers",
    "slower": "training beyond their durations on one server",
    "queued_busy": "waiting to start while other jobs held the GPUs",
    "queued_free": "waiting to start while enough GPUs were free",
    "off_gpus": "idle after starting (preempted, or holding GPUs to the end of a slot)",
    "overheads": "load and save times beyond the first load",
}
"""The parts of a job's time beyond its own length, as :func:`row_note` names them."""

#: Below this share of the row's time beyond own lengths, the jobs that cost most are said to stand out
#: from no others ("spread over many jobs").
SPREAD = 0.1

#: What ``queued_free`` is for a policy whose own rule holds jobs back while GPUs are free.
_HELD_BACK = {
    "elastic-online": "Theorem 5's start offsets alpha_i tau_i",
}


def _free_time(times: np.ndarray, level: np.ndarray, G: float, need: np.ndarray, a: np.ndarray, b: np.ndarray):
    """For each job: the time in [a, b] during which at least ``need`` of the ``G`` GPUs were free,
    given the GPUs held over time (a step function: ``level[k]`` from ``times[k]`` on, none before)."""
    out = np.zeros(len(a))
    if not len(times):
        return np.maximum(b - a, 0.0)
    dt = np.diff(times)
    for g in np.unique(need):
        ind = (G - level >= g).astype(float)
        cum = np.r_[0.0, np.cumsum(ind[:-1] * dt)]
        sel = need == g

        def F(x, ind=ind, cum=cum):
            k = np.searchsorted(times, x, side="right") - 1
            before = k < 0
            kk = np.maximum(k, 0)
            v = cum[kk] + ind[kk] * (x - times[kk])
            return np.where(before, x - times[0], v)  # before the first step every GPU is free

        out[sel] = F(b[sel]) - F(a[sel])
    return np.maximum(out, 0.0)


def job_costs(frame, own: np.ndarray, own_load: np.ndarray, steps=None, gpus: float | None = None):
    """Each finished job's time beyond its own length, and its parts (see the module doc).

    Parameters
    ----------
    frame : DataFrame
        The per-job results of one run (:class:`~optsched.experiments.compare.runner.RunResult`'s
        ``frame``: arrival, first_start, completion, status, gpus, loading_time, training_time,
        saving_time, servers), in the workload's order.
    own : array
        Each job's own length (its least processing time plus ``own_load``), in the same order.
    own_load : array
        The load each job pays once (part of ``own``).
    steps : (times, GPUs held), optional
        The GPUs held over the run; without it every wait for a first start is ``queued_busy``.
    gpus : float, optional
        The cluster's GPUs (with ``steps``).

    Returns
    -------
    DataFrame
        The finished jobs: ``job_id``, ``gpus``, ``servers``, ``jct``, ``own``, ``training_time``,
        ``excess`` (JCT minus own length) and one column per part of :data:`PARTS`, which add up
        to ``excess``.

    Examples
    --------
    Two jobs: job 0 trained 30 s for a 10 s duration on two servers; job 1 waited 5 s while job 0
    held the only two GPUs:

    >>> import numpy as np, pandas as pd
    >>> f = pd.DataFrame({"job_id": [0, 1], "arrival": [0.0, 0.0], "first_start": [0.0, 30.0],
    ...     "completion": [30.0, 40.0], "status": ["done", "done"], "gpus": [2, 2], "loading_time": [0.0, 0.0],
    ...     "training_time": [30.0, 10.0], "saving_time": [0.0, 0.0], "servers": [2, 1]})
    >>> c = job_costs(f, np.array([10.0, 10.0]), np.zeros(2), (np.array([0.0, 30.0, 40.0]), np.array([2, 2, 0])), 2)
    >>> c[["excess", "split", "queued_busy", "queued_free"]].values.tolist()
    [[20.0, 20.0, 0.0, 0.0], [30.0, 0.0, 30.0, 0.0]]
    """
    import pandas as pd

    fin = frame["status"].isin(["done", "failed"]).to_numpy()
    f = frame[fin]
    own = np.asarray(own, float)[fin]
    load0 = np.asarray(own_load, float)[fin]
    a = f["arrival"].to_numpy(float)
    s = f["first_start"].to_numpy(float)
    c = f["completion"].to_numpy(float)
    load = f["loading_time"].to_numpy(float)
    train = f["training_time"].to_numpy(float)
    save = f["saving_time"].to_numpy(float)
    servers = f["servers"].to_numpy(int)
    need = f["gpus"].to_numpy(float)
    queued = np.maximum(s - a, 0.0)
    if steps is not None and gpus:
        free = np.minimum(
            _free_time(np.asarray(steps[0], float), np.asarray(steps[1], float), gpus, need, a, s), queued
        )
    else:
        free = np.zeros(len(a))
    # an engine that plans whole slots counts the first load in the job's work (training time):
    # what of the first load was not paid as load time is taken from the training instead
    paid = np.minimum(load0, load + save)
    extra_train = train - (own - load0) - (load0 - paid)
    out = pd.DataFrame(
        {
            "job_id": f["job_id"].to_numpy(),
            "gpus": need.astype(int),
            "servers": servers,
            "jct": c - a,
            "own": own,
            "training_time": train,
            "excess": (c - a) - own,
            "split": np.where(servers > 1, extra_train, 0.0),
            "slower": np.where(servers > 1, 0.0, extra_train),
            "queued_busy": queued - free,
            "queued_free": free,
            "off_gpus": (c - s) - load - train - save,
            "overheads": load + save - paid,
        }
    )
    return out.reset_index(drop=True)


def part_shares(costs) -> dict[str, float]:
    """Each part's share of the row's time beyond its jobs' own lengths (summed over the jobs; a
    part below 0 overall, a job that trained faster than its duration, counts 0).

    >>> import pandas as pd
    >>> c = pd.DataFrame({"split": [20.0, 0.0], "slower": [0.0, 0.0], "queued_busy": [0.0, 30.0],
    ...     "queued_free": [0.0, 0.0], "off_gpus": [0.0, 0.0], "overheads": [0.0, 0.0]})
    >>> part_shares(c)
    {'split': 0.4, 'slower': 0.0, 'queued_busy': 0.6, 'queued_free': 0.0, 'off_gpus': 0.0, 'overheads': 0.0}
    """
    tot = {k: max(float(math.fsum(costs[k])), 0.0) for k in PARTS}
    s = math.fsum(tot.values())
    return {k: (v / s if s > 0 else 0.0) for k, v in tot.items()}


def _pct(x: float) -> str:
    """A share as a percentage: whole above 10 %, one decimal below (``<0.1 %`` under that)."""
    v = 100 * x
    return f"{v:.0f} %" if v >= 9.95 or v == 0 else f"{v:.1f} %" if v >= 0.05 else "<0.1 %"


def _secs(v: float) -> str:
    return f"{fmt(v)} s"


def _job_line(r: dict[str, Any]) -> str:
    """One job that cost most, with its main part in numbers."""
    main = max(PARTS, key=lambda k: r[k])
    head = f"job {r['job_id']} ({r['gpus']} GPU{'s' if r['gpus'] != 1 else ''}"
    dur = r["training_time"] - r[main]  # its least training time (own length less its first load)
    if main == "split":
        return f"{head} split over {r['servers']} servers: trained {_secs(r['training_time'])} for {_secs(dur)})"
    if main == "slower":
        return f"{head}: trained {_secs(r['training_time'])} for {_secs(dur)})"
    if main == "queued_busy":
        return f"{head}: waited {_secs(r[main])} for GPUs held by other jobs)"
    if main == "queued_free":
        return f"{head}: waited {_secs(r[main])} while its GPUs were free)"
    if main == "off_gpus":
        return f"{head}: idle {_secs(r[main])} after its start)"
    return f"{head}: {_secs(r[main])} of load and save times)"


def row_note(policy: str, costs, *, paper: str | None = None, top: int = 3, seed_note: str = "") -> str:
    """The note of a row far from its bound: the parts of its jobs' time beyond their own lengths
    (largest first, those of 1 % or more), then the jobs that cost most (up to ``top``, with their
    share of it and their main part in numbers).

    Examples
    --------
    >>> import pandas as pd
    >>> c = pd.DataFrame({"job_id": [7, 8], "gpus": [8, 1], "servers": [2, 1], "own": [100.0, 10.0],
    ...     "training_time": [900.0, 10.0], "excess": [800.0, 200.0], "split": [800.0, 0.0], "slower": [0.0, 0.0],
    ...     "queued_busy": [0.0, 200.0], "queued_free": [0.0, 0.0], "off_gpus": [0.0, 0.0], "overheads": [0.0, 0.0]})
    >>> print(row_note("x", c))
    of the jobs' 1,000 s beyond their own lengths: 80 % training beyond their durations split over servers \
(1 job), 20 % waiting to start while other jobs held the GPUs; most: job 7 (8 GPUs split over 2 servers: trained 900 s \
for 100 s) 80 %, job 8 (1 GPU: waited 200 s for GPUs held by other jobs) 20 %
    """
    total = float(math.fsum(costs["excess"].clip(lower=0.0))) if len(costs) else 0.0
    if total <= 0:
        return f"{seed_note}no job spent time beyond its own length: the bound's other parts (load) set it"
    shares = part_shares(costs)
    bits = []
    for k, v in sorted(shares.items(), key=lambda kv: -kv[1]):
        if v < 0.01:
            continue
        what = PARTS[k]
        if k == "queued_free" and policy in _HELD_BACK:
            what += f" ({_HELD_BACK[policy]})"
        if k == "split":
            n = int(((costs["servers"] > 1) & (costs["split"] > 0)).sum())
            what += f" ({n} job{'s' if n != 1 else ''}"
            what += "; under the A-SRPT time model a split job trains slower)" if paper == "asrpt" else ")"
        bits.append(f"{_pct(v)} {what}")
    worst = costs.sort_values("excess", ascending=False, kind="stable").head(top)
    worst = worst[worst["excess"] > 0]
    jobs = ", ".join(f"{_job_line(r)} {_pct(r['excess'] / total)}" for r in worst.to_dict("records"))
    together = float(worst["excess"].sum()) / total
    most = (
        "most" if together >= SPREAD else f"spread over many jobs (the {len(worst)} that cost most: {_pct(together)})"
    )
    return f"{seed_note}of the jobs' {_secs(total)} beyond their own lengths: {', '.join(bits)}; {most}: {jobs}"


def own_lengths(w: SeededWorkload, bound: str) -> tuple[np.ndarray, np.ndarray]:
    """Each job's own length in the bound a row is measured against (``bound``: the row's ``bound``
    column), and the load it pays once: duration plus first load, or under the A-SRPT time model
    its least time there when shorter (:mod:`~optsched.experiments.compare.bound`)."""
    p = w.processing()
    load = w.first_load()
    if bound == ASRPT_MODEL:
        p = np.minimum(p, w.asrpt_least()[0])
    return p + load, load


def note_of(row: dict[str, Any], run: RunResult, w: SeededWorkload, own=None, *, far: float = FAR) -> str | None:
    """The measured note of a row at ``far`` times its bound or more (None below it, or without the
    per-job results): :func:`row_note` on the jobs of ``run`` (the row's first seed, whose per-job
    results the comparison keeps), ``own``: :func:`own_lengths` when already computed."""
    v = row.get("ratio_to_bound")
    if v is None or not v >= far or run.frame is None:
        return None
    own, load = own if own is not None else own_lengths(w, row.get("bound", WORKLOAD))
    costs = job_costs(run.frame, own, load, run.steps, float(w.cluster.total_gpus))
    seed_note = f"seed {w.seed}'s jobs: " if row.get("seeds", 1) > 1 else ""
    return row_note(row["policy"], costs, paper=row.get("paper"), seed_note=seed_note)
