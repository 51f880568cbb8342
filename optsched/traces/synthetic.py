"""Calibrated synthetic workloads, for when no job-level trace is at hand.

What is real and what is assumed
--------------------------------
* **Durations** are resampled (with replacement) from the 83,152 positive Philly run times of
  ``philly_runtime.csv`` (seconds; median 1,186 s, p90 12,860 s, max 4.6e6 s), or from any
  array you pass.
* **GPU demands**: ``"philly"`` is the mix stated in optsched's issue #3 for Philly-like
  workloads (70% 1 GPU, 10% 2, 15% 4, 5% 8; the Philly job log itself is not redistributable
  here); ``"openb"`` resamples ``num_gpu`` of the GPU pods of the shipped OpenB trace; or pass a
  mapping {gpus: probability}. Demands and durations are drawn independently.
* **Arrivals**: ``"poisson"`` (exponential gaps) or ``"trace"`` (gaps resampled from the
  OpenB creation times of its dense last 35 days, which keeps their burstiness), both scaled so
  that the *offered load* sum(gpus * duration) / (span * cluster GPUs) equals ``load`` in
  expectation: the mean gap is E[gpus * duration] / (load * cluster_gpus), with the expectation
  taken over the drawn jobs.
* **Outcomes** (optional): a ``status`` per job drawn from the completed / cancelled / failed
  fractions of one cluster of Acme's ``cluster_summary.csv`` (Seren, Kalos, Philly, Helios).

Same ``seed``, same table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from optsched.core.seeds import SeedLike, as_generator
from optsched.exceptions import InvalidOptionError, TraceFormatError
from optsched.traces.loaders import ACME_SUMMARY, OPENB_JOBS, PHILLY_RUNTIME

PHILLY_GPU_MIX = {1: 0.70, 2: 0.10, 4: 0.15, 8: 0.05}
"""GPUs per job -> share of jobs: the mix of :func:`synthetic_workload` with ``gpus="philly"`` (the default)."""


@lru_cache(maxsize=1)
def philly_runtimes() -> np.ndarray:
    """The positive run times (s) of the shipped ``philly_runtime.csv`` (one column, ``runtime``).

    Examples
    --------
    >>> from optsched.traces import philly_runtimes
    >>> r = philly_runtimes()
    >>> len(r), bool((r > 0).all())
    (83152, True)
    """
    with open(PHILLY_RUNTIME, encoding="utf-8") as f:
        head, *rows = f.read().split()
    if head.strip() != "runtime":
        raise TraceFormatError(f"{PHILLY_RUNTIME}: expected a 'runtime' column; got the header {head!r}.")
    r = np.array(rows, dtype=float)
    return r[r > 0]


@lru_cache(maxsize=1)
def _openb_marginals() -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    df = pd.read_csv(OPENB_JOBS, usecols=["num_gpu", "creation_time"])
    t = np.sort(df["creation_time"].to_numpy(dtype=float))
    dense = t[t >= t[-1] - 35 * 86400.0]
    gaps = np.diff(dense)
    g = df["num_gpu"].to_numpy()
    return g[g >= 1].astype(np.int64), gaps


def acme_outcome_rates(cluster: str = "Philly") -> dict[str, float]:
    """Completed / killed / failed fractions of GPU jobs in one Acme summary row (normalized).

    Examples
    --------
    >>> r = acme_outcome_rates("Philly"); round(float(r["completed"]), 3), round(float(sum(r.values())), 6)
    (0.605, 1.0)
    """
    import pandas as pd

    df = pd.read_csv(ACME_SUMMARY).set_index("id")
    if cluster not in df.index:
        raise InvalidOptionError(f"Unknown Acme cluster {cluster!r}; choose one of {list(df.index)}.")
    row = df.loc[cluster]
    vals = {"completed": row["complete_rate_gpu"], "killed": row["cancel_rate_gpu"], "failed": row["fail_rate_gpu"]}
    if any(not np.isfinite(v) for v in vals.values()):
        raise InvalidOptionError(
            f"The Acme summary has no outcome rates for {cluster!r}; choose Seren, Kalos, Philly or Helios."
        )
    s = sum(vals.values())
    return {k: float(v / s) for k, v in vals.items()}


def _checked_options(n_jobs, cluster_gpus, load, mean_gap, mean_duration, models, arrivals):
    """:func:`synthetic_workload`'s scalar options checked before anything is drawn: the load (0.8
    when neither it nor ``mean_gap`` is given), and the model names with their probabilities (None
    without ``models``)."""
    names = mp = None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise InvalidOptionError(f"The 'n_jobs' option must be an integer >= 1; got {n_jobs!r}.")
    if isinstance(cluster_gpus, bool) or not isinstance(cluster_gpus, (int, np.integer)) or cluster_gpus < 1:
        raise InvalidOptionError(f"The 'cluster_gpus' option must be an integer >= 1; got {cluster_gpus!r}.")
    if load is not None and mean_gap is not None:
        raise InvalidOptionError(
            "Give 'load' (arrivals calibrated to an offered load) or 'mean_gap' (seconds between arrivals), not both."
        )
    if mean_gap is None:
        load = 0.8 if load is None else load
        if isinstance(load, bool) or not (isinstance(load, (int, float)) and 0 < load <= 10):
            raise InvalidOptionError(f"The 'load' option must be a number in (0, 10]; got {load!r}.")
    elif isinstance(mean_gap, bool) or not (isinstance(mean_gap, (int, float)) and 0 < mean_gap < float("inf")):
        raise InvalidOptionError(f"The 'mean_gap' option must be a positive number of seconds; got {mean_gap!r}.")
    if mean_duration is not None and (
        isinstance(mean_duration, bool)
        or not (isinstance(mean_duration, (int, float)) and 0 < mean_duration < float("inf"))
    ):
        raise InvalidOptionError(
            f"The 'mean_duration' option must be a positive number of seconds; got {mean_duration!r}."
        )
    if models is not None:
        names = list(models)
        if not names or not all(isinstance(m, str) and m for m in names):
            raise InvalidOptionError(
                f"The 'models' option must be a non-empty list of model names (or a mapping "
                f"name -> probability); got {models!r}."
            )
        if isinstance(models, Mapping):
            mp = np.array([float(v) for v in models.values()])
            if not np.isfinite(mp).all() or (mp < 0).any() or abs(float(mp.sum()) - 1.0) > 1e-6:
                raise InvalidOptionError(
                    f"The probabilities of the 'models' mapping must be >= 0 and sum to 1; got {dict(models)}."
                )
        else:
            mp = np.full(len(names), 1.0 / len(names))
    if arrivals not in ("poisson", "trace"):
        raise InvalidOptionError(f"The 'arrivals' option must be 'poisson' or 'trace'; got {arrivals!r}.")
    return load, names, mp


def _gpu_mix(gpus, cluster_gpus: int, max_gpus: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The GPU demands a job may draw and their probabilities, those above the cap left out."""
    if isinstance(gpus, str):
        if gpus == "philly":
            vals, probs = np.array(list(PHILLY_GPU_MIX)), np.array(list(PHILLY_GPU_MIX.values()))
        elif gpus == "openb":
            g, _ = _openb_marginals()
            vals, counts = np.unique(g, return_counts=True)
            probs = counts / counts.sum()
        else:
            raise InvalidOptionError(f"The 'gpus' option must be 'philly', 'openb' or a mapping; got {gpus!r}.")
    elif isinstance(gpus, Mapping) and gpus:
        vals = np.array([int(k) for k in gpus])
        probs = np.array([float(v) for v in gpus.values()])
        if (vals < 1).any() or not np.isfinite(probs).all() or (probs < 0).any():
            raise InvalidOptionError(
                f"The 'gpus' mapping needs keys >= 1 and non-negative probabilities; got {gpus!r}."
            )
        if abs(float(probs.sum()) - 1.0) > 1e-6:
            raise InvalidOptionError(
                f"The probabilities of the 'gpus' mapping must sum to 1; they sum to {float(probs.sum()):.6g}. "
                f"Fix the mix (e.g. divide each by their sum)."
            )
    else:
        raise InvalidOptionError(f"The 'gpus' option must be 'philly', 'openb' or a mapping; got {gpus!r}.")
    cap = min(cluster_gpus, max_gpus) if max_gpus is not None else cluster_gpus
    keep = vals <= cap
    if not keep.any():
        raise InvalidOptionError(f"No GPU demand in {sorted(vals.tolist())} fits max_gpus/cluster_gpus = {cap}.")
    vals, probs = vals[keep], probs[keep] / probs[keep].sum()
    return vals, probs


def _duration_pool(durations) -> np.ndarray:
    """The run times (seconds) durations are resampled from."""
    if isinstance(durations, str):
        if durations != "philly":
            raise InvalidOptionError(
                f"The 'durations' option must be 'philly' or an array of seconds; got {durations!r}."
            )
        return philly_runtimes()
    pool = np.asarray(durations, dtype=float)
    if pool.ndim != 1 or not len(pool) or not (pool > 0).all() or not np.isfinite(pool).all():
        raise InvalidOptionError("The 'durations' array must be a non-empty list of positive finite seconds.")
    return pool


def synthetic_workload(
    n_jobs: int,
    *,
    cluster_gpus: int,
    load: float | None = None,
    arrivals: str = "poisson",
    gpus: str | Mapping[int, float] = "philly",
    durations: str | Sequence[float] = "philly",
    max_gpus: int | None = None,
    max_duration: float | None = None,
    outcomes: str | None = None,
    seed: SeedLike = 0,
    frame: bool = True,
    mean_gap: float | None = None,
    mean_duration: float | None = None,
    models: Sequence[str] | Mapping[str, float] | None = None,
):
    """A job table (as the trace loaders return) with calibrated marginals.

    Parameters
    ----------
    n_jobs : int
        Number of jobs (>= 1).
    cluster_gpus : int
        GPUs of the cluster the load is calibrated for.
    load : float, optional
        Offered load in (0, 10]; 0.8 (the default) means jobs bring 80% of the cluster's
        GPU-seconds. Not with ``mean_gap``.
    mean_gap : float, optional
        Mean seconds between arrivals (instead of calibrating them to ``load``), e.g. the mean
        inter-arrival time of a trace (Helios Earth: 39 s).
    mean_duration : float, optional
        Scale the drawn durations so that their mean is this many seconds (before
        ``max_duration``).
    models : sequence of str or mapping str -> probability, optional
        Model names drawn for the ``model`` column (uniformly from a sequence), which the
        simulator copies into ``job.attrs["model"]`` (e.g. for load and save times per model).
    arrivals : {"poisson", "trace"}
        Exponential gaps, or gaps resampled from the shipped OpenB trace; both scaled to the mean
        gap that ``load`` (or ``mean_gap``) asks for.
    gpus : str or mapping
        ``"philly"`` (:data:`PHILLY_GPU_MIX`), ``"openb"`` (the demands of the shipped OpenB trace),
        or {GPUs: probability}.
    durations : str or sequence of float
        ``"philly"`` (the shipped Philly run times) or positive seconds to resample from.
    max_gpus : int, optional
        Demands above this are drawn again from the allowed part (e.g. the largest server).
    max_duration : float, optional
        Cap on durations (seconds).
    outcomes : str, optional
        Acme cluster name (``"Philly"``, ``"Helios"``, ...) for a drawn ``status`` column.
    seed : int, Generator or None
    frame : bool
        Return a DataFrame (default) or a dict of NumPy columns (what the simulator also takes;
        no pandas import, for a fast command line).

    Returns
    -------
    pandas.DataFrame or dict
        Columns ``job_id, arrival, duration, gpus, status, user, group, queue_delay,
        submit_time`` (``attrs['trace'] == 'synthetic'``, with the options).

    Examples
    --------
    >>> df = synthetic_workload(5, cluster_gpus=16, seed=1)
    >>> list(df["gpus"]), bool((df["arrival"].diff().dropna() >= 0).all())
    ([1, 8, 1, 4, 1], True)
    """
    load, names, mp = _checked_options(n_jobs, cluster_gpus, load, mean_gap, mean_duration, models, arrivals)
    rng = as_generator(seed)
    vals, probs = _gpu_mix(gpus, cluster_gpus, max_gpus)
    g = rng.choice(vals, size=n_jobs, p=probs).astype(np.int64)
    pool = _duration_pool(durations)
    d = rng.choice(pool, size=n_jobs)
    if mean_duration is not None:
        d = d * (float(mean_duration) / float(d.mean()))
    if max_duration is not None:
        d = np.minimum(d, float(max_duration))
    # arrivals
    if mean_gap is None:
        mean_gap = float(np.mean(g * d)) / (load * cluster_gpus)
    if arrivals == "poisson":
        gaps = rng.exponential(mean_gap, size=n_jobs)
    else:  # "trace" (checked above)
        _, pool_gaps = _openb_marginals()
        gaps = rng.choice(pool_gaps, size=n_jobs)
        m = gaps.mean()
        gaps = gaps * (mean_gap / m) if m > 0 else np.full(n_jobs, mean_gap)
    gaps[0] = 0.0
    arr = np.cumsum(gaps)
    status = "completed"
    if outcomes is not None:
        rates = acme_outcome_rates(outcomes)
        status = rng.choice(list(rates), size=n_jobs, p=list(rates.values()))
    model = rng.choice(np.array(names, dtype=object), size=n_jobs, p=mp) if models is not None else None
    if not frame:
        out = {
            "job_id": np.arange(n_jobs).astype(str),
            "arrival": arr,
            "duration": d,
            "gpus": g,
            "status": np.full(n_jobs, status, dtype=object) if isinstance(status, str) else status,
        }
        if model is not None:
            out["model"] = model
        return out
    import pandas as pd

    df = pd.DataFrame(
        {
            "job_id": np.arange(n_jobs).astype(str),
            "arrival": arr,
            "duration": d,
            "gpus": g,
            "status": status,
            "user": None,
            "group": None,
            "queue_delay": np.nan,
            "submit_time": arr,
        }
    )
    if model is not None:
        df["model"] = model
    df.attrs.update(
        {
            "trace": "synthetic",
            "n_jobs": int(n_jobs),
            "cluster_gpus": int(cluster_gpus),
            "load": load,
            "mean_gap": mean_gap,
            "arrivals": arrivals,
            "gpus": gpus if isinstance(gpus, str) else dict(gpus),
            "durations": durations if isinstance(durations, str) else "custom",
            "seed": seed if isinstance(seed, int) else None,
        }
    )
    return df
