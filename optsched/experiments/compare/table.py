"""The comparison table: one row per policy from its runs (the mean and a 95 % interval over the
seeds), each against its bound, sorted; the notes printed under it for rows far from the bound;
the table's attributes (bound, assumptions, GPU use over time).

Tested in ``tests/experiments/test_compare_run.py`` and ``tests/experiments/test_compare.py``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from optsched.core.bounds import beats_tolerance
from optsched.experiments.compare.bound import ASRPT_MODEL, WORKLOAD, SeedBound, ratio, summary
from optsched.experiments.compare.runner import METRICS, RunResult
from optsched.experiments.compare.workload import SeededWorkload
from optsched.traces.load import offered_load

FAR = 10.0
"""The ratio to its bound from which a row gets a note (``note``, printed under the table by
:func:`notes`): a policy this many times its bound or more."""
SORT_COLUMNS = (*METRICS, "seconds", "cpu_seconds", "policy", "paper")
"""The columns the table may be sorted by (``sort_by=``, ``--sort``), smallest first; ``None`` keeps
the order the policies were asked for."""


def fmt(v) -> str:
    """The table's one number format: every integer digit with thousands separators, four
    significant digits below 1,000, '-' for a missing value.

    >>> fmt(2618805.4), fmt(86.0912), fmt(0.67321), fmt(float("nan")), fmt(223992.56)
    ('2,618,805', '86.09', '0.6732', '-', '223,993')
    """
    if v is None or isinstance(v, str):
        return "-" if v is None else v
    v = float(v)
    if math.isnan(v):
        return "-"
    if v.is_integer() or abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}"


def _ci95(values: Sequence[float]) -> tuple[float, float, float]:
    a = np.asarray([v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))], float)
    if len(a) == 0:
        return float("nan"), float("nan"), float("nan")
    if len(a) == 1:
        return float(a[0]), float("nan"), float("nan")
    from scipy import stats

    h = float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))
    return float(a.mean()), float(a.mean() - h), float(a.mean() + h)


def _slot(spec: dict, w: SeededWorkload) -> float:
    """The slot length the policy's engine rounds times to (s; 0 when it does not)."""
    v = w.views.get(spec["paper"])
    return float(getattr(v, "slot", 0.0) or 0.0) if spec["paper"] in ("elastic", "asrpt") and v is not None else 0.0


def row_of(
    name: str, spec: dict, runs: list[RunResult], ws: list[SeededWorkload], bounds: list[SeedBound]
) -> dict[str, Any]:
    """The row of a policy whose runs (one per seed, in seed order) all finished."""
    seeds = len(runs)
    bound_name = ASRPT_MODEL if spec["paper"] == "asrpt" and ASRPT_MODEL in bounds[0].rows else WORKLOAD
    per = []
    for s, run in enumerate(runs):
        m = dict(run.metrics)
        b = bounds[s].for_row(bound_name)
        m["ratio_to_bound"] = ratio(m["total_jct"], b)
        horizon = m["makespan"] if math.isfinite(m["makespan"]) else 0.0
        tol = beats_tolerance(b.n_jobs, horizon, b.total, _slot(spec, ws[s]))
        m["beats_bound"] = m["total_jct"] < b.total - tol
        npb = bounds[s].nonpreemptive
        rigid_np = spec["paper"] != "elastic" and m["n_preemptions"] == 0 and bound_name == WORKLOAD
        if npb is not None and rigid_np:
            m["ratio_to_np_bound"] = m["total_jct"] / npb.total if npb.total > 0 else math.nan
            m["beats_bound"] |= m["total_jct"] < npb.total - beats_tolerance(npb.n_jobs, horizon, npb.total, npb.slot)
        else:
            m["ratio_to_np_bound"] = math.nan
        per.append(m)
    row: dict[str, Any] = {
        "policy": name,
        "paper": spec["paper"] or "baseline",
        "seeds": seeds,
        "n_jobs": len(ws[0].table),
    }
    for k in METRICS:
        vals = [m[k] for m in per]
        if seeds == 1:
            row[k] = vals[0]
        else:
            row[k], row[f"{k}_ci_lo"], row[f"{k}_ci_hi"] = _ci95(vals)
    if bounds[0].nonpreemptive is not None:
        vals = [m["ratio_to_np_bound"] for m in per]
        row["ratio_to_np_bound"] = float(np.mean(vals)) if not any(math.isnan(v) for v in vals) else math.nan
    row["max_queue_delay"] = max(m["max_queue_delay"] for m in per)
    row["n_unfinished"] = max(m["n_unfinished"] for m in per)
    row["beats_bound"] = any(m["beats_bound"] for m in per)
    row["bound"] = bound_name
    row["seconds"] = float(sum(r.seconds for r in runs))
    row["cpu_seconds"] = float(sum(r.cpu_seconds for r in runs))
    row["skipped"] = None
    row["failed"] = None
    if row["beats_bound"]:
        b = float(np.mean([bb.for_row(bound_name).total for bb in bounds]))
        warnings.warn(
            f"Policy {name!r} has a total JCT below the lower bound ({row['total_jct']:.6g} < {b:.6g}): a bug in the "
            f"policy, the engine or the bound; please report it.",
            stacklevel=3,
        )
    return row


def skipped_row(name: str, spec: dict, reason: str) -> dict[str, Any]:
    return {"policy": name, "paper": spec["paper"] or "baseline", "skipped": reason, "failed": None}


def failed_row(name: str, spec: dict, runs: list[RunResult], reproduce: str) -> dict[str, Any]:
    """The row of a policy one of whose runs raised: the first error (and its seed), how to run it alone."""
    bad = next(r for r in runs if r.failed)
    return {
        "policy": name,
        "paper": spec["paper"] or "baseline",
        "skipped": None,
        "failed": f"seed {bad.seed}: {bad.error}",
        "reproduce": reproduce,
        "seconds": float(sum(r.seconds for r in runs)),
    }


def sort_rows(rows: list[dict[str, Any]], by: str | None) -> list[dict[str, Any]]:
    """Rows that ran sorted by ``by`` (smallest first, NaN last; ``policy``/``paper`` by name), then
    the failed ones, then the skipped ones; ``by=None`` keeps the order given."""
    if by is None:
        return list(rows)
    ran = [r for r in rows if r.get("skipped") is None and r.get("failed") is None]
    failed = [r for r in rows if r.get("failed") is not None]
    skipped = [r for r in rows if r.get("skipped") is not None]

    def key(r):
        v = r.get(by)
        if isinstance(v, str):
            return (0, v, r["policy"])
        v = float("nan") if v is None else float(v)
        return (1 if math.isnan(v) else 0, 0.0 if math.isnan(v) else v, r["policy"])

    return sorted(ran, key=key) + failed + skipped


def far_notes(rows: list[dict[str, Any]], far: float = FAR) -> list[str]:
    """One line per row with a ``note`` (the rows at :data:`FAR` times their bound or more: the causes
    measured on their own jobs, :func:`optsched.experiments.compare.notes.note_of`) and at ``far``
    times its bound or more: its ratio and its note.

    Examples
    --------
    >>> rows = [
    ...     {"policy": "fifo", "ratio_to_bound": 12.5, "note": "of the jobs' 900 s beyond ...", "skipped": None,
    ...      "failed": None},
    ...     {"policy": "srtf", "ratio_to_bound": 1.2, "note": None, "skipped": None, "failed": None},
    ... ]
    >>> far_notes(rows)
    ["fifo (12.5 x the bound): of the jobs' 900 s beyond ..."]
    >>> far_notes(rows, far=20.0)
    []
    """
    out = []
    for r in rows:
        v, note = r.get("ratio_to_bound"), r.get("note")
        if isinstance(note, str) and note and v is not None and v >= far:
            out.append(f"{r['policy']} ({fmt(v)} x the bound): {note}")
    return out


def time_model_notes(rows: list[dict[str, Any]], assumptions: dict[str, Any]) -> list[str]:
    """Lines saying under which time model the A-SRPT rows ran, when they ran beside rows that do not
    pay it: its bandwidths and profiles, and the rows that share it (the paper's own baselines).

    Examples
    --------
    >>> rows = [{"policy": "srtf", "paper": "baseline"}, {"policy": "asrpt-a-srpt", "paper": "asrpt"}]
    >>> a = {"asrpt": {"nic_gbps_per_server": 800.0, "bandwidth_intra": 3e11, "profiles": {"BERT": "2 jobs, 1360 MB"}}}
    >>> print("\\n".join(time_model_notes(rows, a)))  # doctest: +ELLIPSIS
    the asrpt-* rows run under the A-SRPT paper's time model (NIC 800 Gbit/s per server, 300 GB/s inside one; ...
    >>> time_model_notes(rows[1:], a)   # A-SRPT rows only: nothing to warn about
    []
    """
    ran = [r for r in rows if r.get("skipped") is None and r.get("failed") is None]
    if not any(r.get("paper") == "asrpt" for r in ran) or all(r.get("paper") == "asrpt" for r in ran):
        return []
    a = assumptions.get("asrpt", {})
    nic = a.get("nic_gbps_per_server")
    intra = a.get("bandwidth_intra")
    bw = (
        f"NIC {fmt(nic)} Gbit/s per server, {fmt(intra / 1e9)} GB/s inside one"
        if nic is not None and intra
        else "its bandwidths"
    )
    prof = "; ".join(f"{k}: {v}" for k, v in (a.get("profiles") or {}).items())
    out = [
        f"the asrpt-* rows run under the A-SRPT paper's time model ({bw}; eq. (5)-(7)): a job split over servers "
        f"trains slower there, while the other rows run every placement at full speed. Read them against each "
        f"other and the asrpt-wcs-* rows (the paper's work-conserving baselines, same model), not against srtf "
        f'or fifo (docs/compare.md, "Which A-SRPT row is which")'
    ]
    if prof:
        out.append(f"A-SRPT profiles: {prof}")
    return out


def attrs(ws: list[SeededWorkload], bounds: list[SeedBound], util: dict, G: int) -> dict[str, Any]:
    """``table.attrs``: the bound (:func:`~optsched.experiments.compare.bound.summary`), GPU use
    over time of seed 0 per policy, the GPUs, the enrichments' assumptions, the offered load and
    the time origin (the first arrival, in the caller's clock)."""
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
    return {
        "bound": summary(bounds),
        "utilization": util,
        "gpus": G,
        "assumptions": assumptions,
        "offered_load": [offered_load(x.table, G) for x in ws],
        "time_origin": [x.origin for x in ws],
    }
