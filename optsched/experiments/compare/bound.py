"""The lower bound of one seed's workload on the cluster (formulations/rigid.md#jct-bound).

One bound for every row, whatever rows were asked for: each job's duration (its least processing
time in every configuration the cluster can give it, for every policy family whose jobs are rigid
or slower elsewhere) plus the load every job pays once. The A-SRPT rows run their own time model,
in which a job may train faster than its trace duration (a better split than the one the
calibration assumed); when it does for some job, those rows get their own bound, with that job's
least time under the model, and say so (``bound`` column), instead of lowering every row.

Tested in ``tests/experiments/test_compare.py`` and ``tests/experiments/test_compare_bound.py``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from optsched.core.bounds import JctBound, jct_lower_bound
from optsched.experiments.compare.workload import SeededWorkload
from optsched.rigid.trace_bounds import NonPreemptiveBound, nonpreemptive_lower_bound

WORKLOAD = "workload"  #: ``bound`` of a row measured against the workload's bound
ASRPT_MODEL = "asrpt-model"  #: ``bound`` of an A-SRPT row when its model lets some job beat its duration

#: A job is faster under a model than its duration when its least time is below duration x (1 - this).
FASTER = 1e-9


@dataclass
class SeedBound:
    """The bounds of one seed: ``workload`` (every row), ``rows`` {bound name: JctBound} for rows
    whose model lets jobs run faster than their durations (with ``faster`` {name: jobs}), and the
    non-preemptive bound of small workloads (``nonpreemptive``, or None)."""

    workload: JctBound
    rows: dict[str, JctBound] = field(default_factory=dict)
    faster: dict[str, int] = field(default_factory=dict)
    how: dict[str, dict[str, int]] = field(default_factory=dict)
    nonpreemptive: NonPreemptiveBound | None = None

    def for_row(self, name: str) -> JctBound:
        return self.rows.get(name, self.workload)


def seed_bound(w: SeededWorkload, *, asrpt_rows: bool, exact_max_jobs: int, exact_time_limit: float) -> SeedBound:
    """The bounds of one seed's workload (see the module doc)."""
    r = w.table["arrival"].to_numpy(float)
    g = w.table["gpus"].to_numpy(float)
    load = w.first_load()
    p = w.processing()
    G = int(w.cluster.total_gpus)
    out = SeedBound(jct_lower_bound(r, g, p + load, G))
    if asrpt_rows:
        least, how = w.asrpt_least()
        fast = least < p * (1 - FASTER)
        counts: dict[str, int] = {}
        for h in how:
            counts[h] = counts.get(h, 0) + 1
        out.how[ASRPT_MODEL] = counts
        if fast.any():
            out.rows[ASRPT_MODEL] = jct_lower_bound(r, g, np.minimum(p, least) + load, G)
            out.faster[ASRPT_MODEL] = int(fast.sum())
    if len(r) <= exact_max_jobs:
        out.nonpreemptive = nonpreemptive_lower_bound(r, g, p + load, w.cluster, time_limit=exact_time_limit)
    return out


def summary(bounds: list[SeedBound]) -> dict:
    """The bound as ``table.attrs["bound"]`` and bound.json hold it: the mean over the seeds of the
    total, the mean JCT and each named part, the per-seed totals, the row bounds and the
    non-preemptive bound."""
    wl = [b.workload for b in bounds]
    out = {
        "total_jct": float(np.mean([b.total for b in wl])),
        "mean_jct": float(np.mean([b.mean for b in wl])),
        "parts": {k: float(np.mean([b.parts[k] for b in wl])) for k in wl[0].parts},
        "which": wl[0].which,
        "per_seed_total_jct": [b.total for b in wl],
        "time_origin": "the first arrival",
    }
    # the former names of the parts, kept for readers of bound.json
    out["own_length"], out["fluid"], out["mean_busy"] = (out["parts"][k] for k in ("own_length", "fluid", "mean_busy"))
    rows = {}
    for name in sorted({k for b in bounds for k in b.rows}):
        per = [b.for_row(name) for b in bounds]
        rows[name] = {
            "total_jct": float(np.mean([x.total for x in per])),
            "mean_jct": float(np.mean([x.mean for x in per])),
            "which": per[0].which,
            "per_seed_total_jct": [x.total for x in per],
            "jobs_faster_than_their_duration": [b.faster.get(name, 0) for b in bounds],
            "applies_to": "the A-SRPT rows: under their time model these jobs may train faster than the trace "
            "duration (a better split than the calibration's), so their least time replaces the duration",
        }
    out["row_bounds"] = rows
    how = [b.how.get(ASRPT_MODEL) for b in bounds if b.how.get(ASRPT_MODEL)]
    if how:
        out["asrpt_least_time"] = how[0]
    nps = [b.nonpreemptive for b in bounds if b.nonpreemptive is not None]
    out["nonpreemptive"] = (
        {
            "total_jct": float(np.mean([b.total for b in nps])),
            "mean_jct": float(np.mean([b.mean for b in nps])),
            "proven_optimal": all(b.optimal for b in nps),
            "exact_data": all(b.exact_data for b in nps),
            "description": nps[0].description if len({b.description for b in nps}) == 1 else "proven bound",
            "slot": [b.slot for b in nps],
            "applies_to": "rows that never preempted and whose jobs are rigid (not the elastic policies)",
        }
        if nps and len(nps) == len(bounds)
        else None
    )
    return out


def ratio(total: float, bound: JctBound) -> float:
    return total / bound.total if bound.total > 0 else math.nan
