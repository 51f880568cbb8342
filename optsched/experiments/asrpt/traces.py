"""The traces of the paper-scale A-SRPT sweep (:mod:`optsched.experiments.asrpt.paper`): one PAI-like
table of :data:`TRACE_JOBS` jobs per seed on the paper's cluster (250 servers x 8 GPUs), its
arrival-independent part (job configurations, iterations and the predictors fitted on its first 80 %)
computed once and cached as atomic pickle files shared between processes (:func:`prepare`), and the
A-SRPT instance of a cell built from it. Tested in ``tests/asrpt/test_paper_sweep.py``.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np

from optsched.asrpt.heavy_edge import alpha_min_estimate
from optsched.asrpt.model import AsrptInstance, AsrptJob
from optsched.asrpt.prediction import IterationPredictor, average_prediction_error
from optsched.core.cluster import Cluster
from optsched.core.io import atomic_write
from optsched.core.seeds import as_generator
from optsched.exceptions import InvalidOptionError
from optsched.experiments.asrpt.repro import job_for_group, pai_like_table

N_SERVERS, GPUS = 250, 8
TRACE_JOBS = 750_000  # 37,500 jobs = 5 % of the trace
TRACE_SECONDS = 61 * 86_400.0  # "a two-month trace"


def trace_table(seed: int, single_gpu: float, load, n_total: int):
    kw: dict[str, Any] = {"single_gpu": single_gpu, "cluster_gpus": N_SERVERS * GPUS, "seed": seed}
    if load == "paper":
        kw["arrival_rate"] = TRACE_JOBS / TRACE_SECONDS
    else:
        kw["load"] = float(load)
    return pai_like_table(n_total, **kw)


def first_test_row(n_jobs: int, n_total: int) -> int:
    """First row of the trace's test part (its last 20 %), after checking that ``n_jobs`` fits in it."""
    cut = int(round(0.8 * n_total))
    if not 0 < n_jobs <= n_total - cut:
        raise InvalidOptionError(f"n_jobs must be in 1..{n_total - cut} (the test part of the trace); got {n_jobs}.")
    return cut


def _cache_file(cache_dir, key: dict) -> Path | None:
    if cache_dir is None:
        return None
    text = repr(sorted(key.items()))
    return Path(cache_dir) / f"trace-{hashlib.sha256(text.encode()).hexdigest()[:16]}.pkl"


def _cached_or_lock(path: Path, *, stale_s: float = 600.0, poll_s: float = 2.0):
    """The cached trace at ``path``, or None after taking its lock (another process preparing the same
    trace is waited for; a lock older than ``stale_s`` is taken over)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_suffix(".lock")
    while True:
        if path.exists():
            with path.open("rb") as fh:
                return pickle.load(fh)
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return None
        except FileExistsError:
            try:
                if time.time() - lock.stat().st_mtime > stale_s:
                    lock.unlink(missing_ok=True)
                    continue
            except FileNotFoundError:
                continue
            time.sleep(poll_s)


def prepare(
    seed: int,
    *,
    single_gpu: float = 0.7,
    nic_gbps: float = 10.0,
    n_total: int = TRACE_JOBS,
    train_fraction: float = 0.8,
    max_samples: float | None = 0.1,
    cache_dir=None,
) -> dict[str, Any]:
    """The arrival-independent part of a trace: per test job its model configuration, iterations
    n_i = duration / alpha~min_i and the predictions of the random forest, median and mean predictors
    fitted on the first ``train_fraction`` (eps_bar of each). Same draws as
    :func:`~optsched.experiments.asrpt.repro.build_instance` (tested equal); alpha~min of a one-GPU,
    one-stage job is p_f + p_b (eq. (7) with no communication, equal to Heavy-Edge's), others are
    memoised per configuration.

    ``max_samples``: bootstrap fraction of each of the 100 trees (0.1: a 600,000-row fit in ~50 s on
    one core; ``None`` is scikit-learn's full bootstrap)."""
    key = {
        "seed": int(seed),
        "single_gpu": float(single_gpu),
        "nic_gbps": float(nic_gbps),
        "n_total": int(n_total),
        "train_fraction": float(train_fraction),
        "max_samples": max_samples,
        "v": 1,
    }
    path = _cache_file(cache_dir, key)
    if path is None:
        return _prepare(key)
    got = _cached_or_lock(path)
    if got is not None:
        return got
    try:
        out = _prepare(key)
        atomic_write(path, lambda t: Path(t).write_bytes(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)))
    finally:
        path.with_suffix(".lock").unlink(missing_ok=True)
    return out


def _prepare(key: dict) -> dict[str, Any]:
    seed, single_gpu, nic_gbps, n_total = key["seed"], key["single_gpu"], key["nic_gbps"], key["n_total"]
    train_fraction, max_samples = key["train_fraction"], key["max_samples"]
    table = trace_table(seed, single_gpu, 0.9, n_total)  # arrivals unused here
    rng = as_generator(seed)
    cl = Cluster.homogeneous(N_SERVERS, GPUS, bandwidth_inter=nic_gbps * 1e9 / 8, bandwidth_intra=300e9)
    probe = AsrptInstance(cl, [], name="probe")
    cfg_index: dict = {}
    configs: list = []
    alphas: list[float] = []
    memo: dict = {}
    gmax = GPUS * N_SERVERS
    groups = table["group"].tolist()
    gpus_col = table["gpus"].to_numpy()
    dur = table["duration"].to_numpy(float)
    cfg_of_row = np.empty(len(table), dtype=np.int64)
    for r in range(len(table)):
        g = int(min(gpus_col[r], gmax))
        k = (groups[r], g)
        c = cfg_index.get(k)
        if c is None:
            stages = tuple(job_for_group(g if g in (1, 2, 4, 8) else 1, rng)["stages"])
            if len(stages) == 1 and stages[0].k == 1:
                a = stages[0].p_f + stages[0].p_b
            else:
                a = memo.get(stages)
                if a is None:
                    a = memo[stages] = alpha_min_estimate(AsrptJob("x", list(stages), iterations=1), probe)
            c = cfg_index[k] = len(configs)
            configs.append(stages)
            alphas.append(a)
        cfg_of_row[r] = c
    n = np.maximum(1, np.rint(dur / np.asarray(alphas)[cfg_of_row])).astype(np.int64)
    cut = int(round(train_fraction * len(table)))
    users = table["user"].tolist()
    hist = list(zip(groups[:cut], users[:cut], n[:cut].tolist(), strict=True))
    test_keys = list(zip(groups[cut:], users[cut:], strict=True))
    n_test = n[cut:]
    pred, eps, fit_s = {}, {}, {}
    for kind in ("rf", "median", "mean"):
        t = time.process_time()
        p = IterationPredictor(kind, seed=0, max_samples=max_samples if kind == "rf" else None).fit(hist)
        pred[kind] = p.predict(test_keys, actual=n_test)
        eps[kind] = average_prediction_error(n_test, pred[kind])
        fit_s[kind] = time.process_time() - t
    pred["perfect"] = n_test.copy()
    eps["perfect"] = 0.0
    return {
        "key": key,
        "cut": cut,
        "configs": configs,
        "cfg": cfg_of_row[cut:],
        "n": n_test,
        "group": groups[cut:],
        "user": users[cut:],
        "pred": pred,
        "eps": eps,
        "fit_cpu_s": fit_s,
    }


def cell_instance(prep: dict, arrivals: np.ndarray, n_jobs: int, predictor: str, nic_gbps: float):
    cl = Cluster.homogeneous(N_SERVERS, GPUS, bandwidth_inter=nic_gbps * 1e9 / 8, bandwidth_intra=300e9)
    arr = arrivals[:n_jobs] - arrivals[0]
    pr = prep["pred"][predictor]
    jobs = [
        AsrptJob(
            i,
            list(prep["configs"][prep["cfg"][i]]),
            iterations=int(prep["n"][i]),
            arrival=float(round(arr[i])),
            predicted_iterations=int(pr[i]),
            group=prep["group"][i],
            user=prep["user"][i],
        )
        for i in range(n_jobs)
    ]
    return AsrptInstance(cl, jobs, name=f"pai-like-paper-{n_jobs}", slot=1.0)
