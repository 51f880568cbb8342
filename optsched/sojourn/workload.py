"""Staged jobs (paper 003) from a generic job table (arrival, gpus, duration; optional status,
user): what the Sec. V online policies need to run on any trace (``optsched compare``).
Assumptions, each an option (formulations/sojourn.md#from-a-trace):

* **Stages**: every job has ``n_stages`` equal stages (checkpoints) of its full size X_i.
* **Outcomes**: a job whose ``status`` is a failure (:data:`FAILURE`: failed, killed, timeout, ...)
  stopped after k_i stages, k_i uniform in 1..M-1, so its full size is X_i = duration_i M / k_i and
  it runs exactly its observed duration; any other job (completed, and also running or pending:
  no failure was seen) runs to its end, X_i = duration_i. Without a status column the outcomes
  are drawn from the prior: failure with probability 1 - ``prior`` (then k_i as above).
* **Probabilities** known to the policies: p_{i,M} = q_i, the success rate of the job's user
  (successes / (successes + failures) among the user's jobs with a known outcome, shrunk toward
  the trace's rate with ``prior_strength`` pseudo-jobs), or of the whole trace (``by=None``), or
  ``prior`` (default: Philly's pass rate, 82,445 of 109,967) when the trace has no status column;
  the failure mass 1 - q_i is spread evenly over stages 1..M-1, as the outcomes are drawn.

The engine alone knows k_i (``terminate_after``); every job processes exactly its trace duration,
so the lower bound of ``compare`` holds for these policies with the trace's durations.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optsched.core.seeds import SeedLike, job_uniforms
from optsched.exceptions import InvalidInstanceError, InvalidOptionError

#: Status values read as a success / a failure (lower case); anything else has no known outcome.
SUCCESS = frozenset({"completed", "succeeded", "success", "done", "pass", "passed", "finished", "ok"})
FAILURE = frozenset({"failed", "fail", "killed", "timeout", "cancelled", "canceled", "error", "terminated"})
#: Philly's pass rate (Sec. VI-A of the paper: 82,445 of 109,967 jobs passed).
PHILLY_PASS_RATE = 82445 / 109967


class StagedTable:
    """What :func:`from_table` returns: ``table`` (a copy with ``work`` = X_i, and ``sizes``,
    ``probs`` list columns), ``stages`` {job id: per-stage work}, ``terminate_after`` {job id: k_i}
    for the simulator, and ``assumptions`` (a dict of the choices made)."""

    def __init__(self, table: Any, stages: dict, terminate_after: dict, assumptions: dict):
        self.table = table
        self.stages = stages
        self.terminate_after = terminate_after
        self.assumptions = assumptions

    def sim_options(self) -> dict[str, Any]:
        """Keyword arguments for :class:`optsched.sim.Simulator`."""
        return {
            "stages": self.stages,
            "terminate_after": self.terminate_after,
            "attrs_columns": ["sizes", "probs"],
        }


def from_table(
    table: Any,
    *,
    n_stages: int = 4,
    status_column: str = "status",
    by: str | None = "user",
    prior: float = PHILLY_PASS_RATE,
    prior_strength: float = 5.0,
    seed: SeedLike = 0,
) -> StagedTable:
    """Stage sizes, stopping probabilities and the hidden outcomes of every job of ``table``.

    Raises
    ------
    InvalidInstanceError
        No ``arrival``/``gpus``/``duration`` column.
    InvalidOptionError
        ``n_stages`` < 2, ``prior`` outside (0, 1], ``prior_strength`` < 0.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 1.0], "gpus": [1, 1], "duration": [10.0, 3.0],
    ...                   "status": ["completed", "failed"]})
    >>> s = from_table(t, n_stages=2, by=None)
    >>> s.table["work"].tolist(), s.terminate_after, s.table["probs"][0]
    ([10.0, 6.0], {1: 1}, [0.5, 0.5])
    """
    cols = list(getattr(table, "columns", ()))
    for c in ("arrival", "gpus"):
        if c not in cols:
            raise InvalidInstanceError(
                f"The job table has no '{c}' column, which the sojourn policies need (columns: {cols})."
            )
    dcol = "duration" if "duration" in cols else "work" if "work" in cols else None
    if dcol is None:
        raise InvalidInstanceError(f"The job table has no 'duration' column (s) (columns: {cols}).")
    if isinstance(n_stages, bool) or not isinstance(n_stages, (int, np.integer)) or n_stages < 2:
        raise InvalidOptionError(
            f"The 'n_stages' option must be an integer >= 2 (a job must be able to stop early); got {n_stages!r}."
        )
    if isinstance(prior, bool) or not (0 < float(prior) <= 1):
        raise InvalidOptionError(f"The 'prior' option (a success probability) must be in (0, 1]; got {prior!r}.")
    if isinstance(prior_strength, bool) or not (float(prior_strength) >= 0 and math.isfinite(prior_strength)):
        raise InvalidOptionError(f"The 'prior_strength' option must be a number >= 0; got {prior_strength!r}.")
    M = int(n_stages)
    dur = table[dcol].to_numpy(dtype=float)
    n = len(dur)
    ids = table["job_id"].tolist() if "job_id" in cols else list(range(n))
    # each job's own draws (its outcome, its failing stage): by its id and the seed, not its row
    if status_column in cols:
        st = [str(s).strip().lower() for s in table[status_column].tolist()]
        ok = np.array([s in SUCCESS for s in st])
        bad = np.array([s in FAILURE for s in st])
        known = int(ok.sum() + bad.sum())
        base = float(ok.sum()) / known if known else float(prior)
        source = (
            f"the '{status_column}' column ({int(ok.sum())} successes, {int(bad.sum())} failures, {n - known} unknown)"
        )
        codes = None
        if by is not None and by in cols and known:
            import pandas as pd

            codes, _ = pd.factorize(table[by], use_na_sentinel=True)  # -1: no user (None, NaN)
        if codes is not None and (codes >= 0).any():
            a = float(prior_strength)
            c = np.maximum(codes, 0)
            n_ok = np.bincount(c, weights=ok & (codes >= 0))
            n_all = np.bincount(c, weights=(ok | bad) & (codes >= 0))
            with np.errstate(invalid="ignore", divide="ignore"):
                per = np.where(n_all + a > 0, (n_ok + a * base) / (n_all + a), base)
            q = np.where(codes >= 0, per[c], base)
            source += (
                f", per '{by}' shrunk toward the trace's rate {base:.3f} with {prior_strength:g} pseudo-jobs "
                f"({int((codes < 0).sum())} jobs without a '{by}': the trace's rate)"
            )
        else:
            q = np.full(n, base)
            if by is not None and by in cols:
                source += f"; the '{by}' column is empty: the trace's rate {base:.3f} for every job"
        fails = bad
    else:
        q = np.full(n, float(prior))
        fails = job_uniforms(seed, ids, "sojourn-outcome") >= float(prior)
        source = f"no '{status_column}' column: the prior {float(prior):.4f}, outcomes drawn from it"
    # every stage keeps a positive probability (RANK divides by p_M; the model needs p > 0): within 10^-6 of 0 and 1
    q = np.clip(q, 1e-6, 1.0 - 1e-6)
    stage = 1 + np.minimum((job_uniforms(seed, ids, "sojourn-stage") * (M - 1)).astype(np.int64), M - 2)
    k = np.where(fails, stage, M)
    full = dur * M / k
    out = table.copy()
    out["work"] = full
    out["sizes"] = [[float(x * (s + 1) / M) for s in range(M)] for x in full]
    out["probs"] = [[float((1 - qi) / (M - 1))] * (M - 1) + [float(qi)] for qi in q]
    stages = {jid: [float(x / M)] * M for jid, x in zip(ids, full, strict=True)}
    term = {jid: int(ki) for jid, ki, f in zip(ids, k, fails, strict=True) if f}
    return StagedTable(
        out,
        stages,
        term,
        {
            "n_stages": M,
            "success_probability": source,
            "failed_jobs": int(fails.sum()),
            "mean_success_probability": float(q.mean()) if n else float("nan"),
        },
    )
