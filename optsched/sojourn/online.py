"""Online multi-server heuristic of Sec. V on the shared simulator (:mod:`optsched.sim`).

W identical servers (one GPU each), jobs arrive over time. A new job takes a free server if
there is one, else it queues. When a server completes a stage of a job that goes on, it runs
the job of least index among the queue *and* that job (preempting it at the checkpoint if a
queued job is better); when a job ends, the server takes the least-index queued job.

Jobs of several GPUs (not in the paper; ``optsched compare`` on GPU traces): queued jobs start
in index order, each where it fits, skipping those that do not (so a smaller job may start ahead
of a better one that does not fit); a job at a checkpoint is preempted for a better queued job
only if its GPUs and the free ones make room for it. With one GPU per job this is the
paper's heuristic unchanged (formulations/sojourn.md#online).

Indices of an alive job after d completed stages (remaining distribution conditioned on
survival, ``formulations/sojourn.md#online``):

* ``rank``  - ``sum_{l>d} (x_l - x_d) p_l / p_M``  (Eq. 23 for the remaining job)
* ``serpt`` - ``E[X - x_d | X > x_d]``
* ``sr``    - SR rank (2) of the remaining job
* ``fifo``  - arrival time, never preempts.

Outcomes (after how many stages a job stops) are known only to the engine
(``terminate_after``); policies see the size distributions in ``job.attrs``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from optsched.core import Cluster, Job
from optsched.core.seeds import SeedLike, as_generator
from optsched.exceptions import InvalidInstanceError, InvalidOptionError, TraceFormatError
from optsched.sim import TRAINING, Simulator
from optsched.sim.policy import Policy
from optsched.sojourn.model import StagedJob
from optsched.sojourn.policies import sr_rank
from optsched.traces import synthetic_workload

#: Table XV: number of attempts (= observed stages) of the Philly jobs used by the paper.
ATTEMPTS_TABLE_XV = {1: 95188, 2: 5465, 3: 1674, 4: 954, 5: 6574, 6: 67, 7: 1}
#: Fraction of Philly jobs that passed (82,445 of 109,967).
PHILLY_PASS_RATE = 82445 / 109967

#: Tables XVI-XVIII (mean delay of successful jobs, seconds), for reference (real trace).
PAPER_ONLINE = {
    "microsoft": {
        5: (3.873e8, 1.216e7, 1.031e7, 1.679e7),
        10: (1.906e8, 5.555e6, 4.705e6, 8.196e6),
        20: (9.266e7, 2.511e6, 2.115e6, 3.759e6),
        50: (3.428e7, 6.553e5, 5.348e5, 1.378e6),
    },
    "synthetic I": {
        5: (5.892e8, 3.870e7, 3.078e7, 4.046e7),
        10: (2.8969e8, 1.725e7, 1.378e7, 1.821e7),
        20: (1.403e8, 7.198e6, 5.781e6, 7.677e6),
        50: (5.053e7, 1.980e6, 1.1548e6, 2.144e6),
    },
    "synthetic II": {
        5: (5.983e8, 3.531e7, 2.695e7, 4.192e7),
        10: (2.946e8, 1.583e7, 1.211e7, 1.973e7),
        20: (1.428e8, 6.671e6, 5.115e6, 9.240e6),
        50: (5.178e7, 1.861e6, 1.394e6, 2.974e6),
    },
}  # columns: FIFO, SERPT, RANK, SR


def _remaining(sizes: Sequence[float], probs: Sequence[float], d: int) -> tuple[np.ndarray, np.ndarray]:
    x0 = sizes[d - 1] if d else 0.0
    return np.asarray(sizes[d:]) - x0, np.asarray(probs[d:])


def _index(kind: str, job) -> float:
    sizes, probs = job.attrs["sizes"], job.attrs["probs"]
    d = job.stage
    if kind == "fifo":
        return job.arrival
    rem, p = _remaining(sizes, probs, d)
    if kind == "rank":
        return float(rem @ p) / probs[-1]
    if kind == "serpt":
        return float(rem @ p) / float(p.sum())
    if kind == "sr":
        return sr_rank(StagedJob(job.id, list(sizes), list(probs)), d)[0]
    raise InvalidOptionError(f"Unknown index {kind!r}; use one of {INDICES}.")


INDICES = ("fifo", "serpt", "rank", "sr")


class StagedOnlinePolicy(Policy):
    """The Sec. V heuristic with a given index (``rank``, ``serpt``, ``sr``; ``fifo``).

    Examples
    --------
    >>> from optsched.core import Cluster
    >>> from optsched.sim import Simulator
    >>> jobs, term = online_workload(30, servers=2, seed=0)
    >>> res = Simulator(Cluster.homogeneous(2, 1), jobs, StagedOnlinePolicy("rank"), terminate_after=term).run()
    >>> df = res.jobs_frame(); sorted(set(df["status"])) <= ["done", "failed"]
    True
    """

    def __init__(self, index: str = "rank"):
        if index not in INDICES:
            raise InvalidOptionError(f"The 'index' option must be one of {INDICES}; got {index!r}.")
        super().__init__(placement="first_fit")
        self.index = index
        self.name = f"sojourn-online-{index}"
        self.preemptive = index != "fifo"

    def on_start(self, sim) -> None:
        if self.index != "fifo":  # the index needs each job's stage sizes and stopping probabilities
            lacking = next((j for j in sim.jobs if not {"sizes", "probs"} <= set(j.attrs or ())), None)
            if lacking is not None:
                raise InvalidInstanceError(
                    f"Policy {self.name!r} needs each job's stage 'sizes' and stopping 'probs' (job attrs or job "
                    f"table columns); {lacking.label} lacks them. Build the workload with "
                    f"optsched.sojourn.online.online_workload or optsched.sojourn.workload.from_table, or use "
                    f"`optsched compare`, which adds them."
                )
        self.queue: list = []
        self.recheck: list = []
        self._cache: dict = {}  # (job index, stage) -> index value: a job's index changes only when it runs

    def on_arrival(self, sim, job) -> None:
        self.queue.append(job)

    def on_preempted(self, sim, job) -> None:
        self.queue.append(job)

    def on_checkpoint(self, sim, job) -> None:
        if self.index != "fifo":
            self.recheck.append(job)

    def _key(self, job):
        k = (job.index, job.stage)
        v = self._cache.get(k)
        if v is None:
            v = self._cache[k] = (_index(self.index, job), job.arrival, job.index)
        return v

    def schedule(self, sim) -> None:
        if self.queue:
            self.queue.sort(key=self._key)
        for job in self.recheck:
            if job.phase != TRAINING or not self.queue:
                continue
            head = self.queue[0]
            # a multi-GPU head is worth a preemption only if the job's GPUs make room for it
            if self._key(head) < self._key(job) and head.gpus <= sim.total_free + job.gpus:
                sim.preempt(job)  # zero save time: its server is free now; on_preempted re-queues it
        self.recheck = []
        started = set()
        for job in self.queue:
            if sim.total_free <= 0:
                break
            pl = sim.place(job)
            if pl is None:  # a multi-GPU job that does not fit now: the next ones may (one GPU each: never)
                continue
            sim.start(job, pl)
            started.add(job.index)
        if started:
            self.queue = [j for j in self.queue if j.index not in started]


# --------------------------------------------------------------------------- workloads
def _stage_probs(m: int, success: float | None, rng: np.random.Generator) -> list[float]:
    """Per-stage stopping probabilities known to the scheduler: uniform draws normalised (Sec. VI-A);
    with ``success`` given, the last one is fixed to it (synthetic sets I and II)."""
    if m == 1:
        return [1.0]
    if success is None:
        w = rng.uniform(1e-3, 1.0, m)
        return (w / w.sum()).tolist()
    w = rng.uniform(1e-3, 1.0, m - 1)
    return (np.append(w / w.sum() * (1 - success), success)).tolist()


def online_workload(
    n_jobs: int,
    *,
    servers: int,
    load: float = 0.9,
    success: float | None = None,
    seed: SeedLike = 0,
    max_duration: float | None = 7 * 86400.0,
):
    """Calibrated synthetic staged workload for the online study (the real Philly trace is not
    shipped): arrivals and durations from :func:`optsched.traces.synthetic_workload` (Philly
    marginals, Poisson arrivals at ``load`` on ``servers`` one-GPU servers); observed stages
    (attempts) from Table XV; the outcome is success with probability ``success`` (default: the
    Philly pass rate 0.75; synthetic sets I and II: 0.5 and 0.25), else termination after the
    observed stages, with 1-3 unseen extra stages drawn from the observed stage lengths (Sec. VI-A).

    Returns ``(jobs, terminate_after)`` for :class:`optsched.sim.Simulator`.
    """
    rng = as_generator(seed)
    table = synthetic_workload(
        n_jobs, cluster_gpus=servers, load=load, gpus={1: 1.0}, durations="philly", max_duration=max_duration, seed=rng
    )
    q = PHILLY_PASS_RATE if success is None else float(success)
    vals = np.array(list(ATTEMPTS_TABLE_XV))
    pk = np.array(list(ATTEMPTS_TABLE_XV.values()), dtype=float)
    k_obs = rng.choice(vals, size=n_jobs, p=pk / pk.sum())
    ok = rng.random(n_jobs) < q
    observed = []
    for dur, k in zip(table["duration"].to_numpy(), k_obs, strict=True):
        observed.append(rng.dirichlet(np.ones(int(k))) * float(dur) if k > 1 else np.array([float(dur)]))
    pool = np.concatenate(observed)
    jobs, term = [], {}
    for i, (arr, st, good) in enumerate(zip(table["arrival"].to_numpy(), observed, ok, strict=True)):
        st = np.maximum(st, 1e-6)
        if not good:
            extra = rng.choice(pool, size=int(rng.integers(1, 4)))
            term[i] = len(st)
            st = np.concatenate([st, np.maximum(extra, 1e-6)])
        sizes = np.cumsum(st)
        probs = _stage_probs(len(st), None if success is None else q, rng)
        jobs.append(
            Job(
                i,
                work=float(sizes[-1]),
                gpus=1,
                arrival=float(arr),
                attrs={"sizes": sizes.tolist(), "probs": probs, "stages": st.tolist()},
            )
        )
    return jobs, term


def simulate_online(jobs, terminate_after, *, servers: int, index: str = "rank"):
    """Run the heuristic; returns ``(mean sojourn of successful jobs, SimResult)``."""
    res = Simulator(
        Cluster.homogeneous(servers, 1),
        jobs,
        StagedOnlinePolicy(index),
        terminate_after=terminate_after,
        record_log=False,
    ).run()
    df = res.jobs_frame()
    done = df[df["status"] == "done"]
    return float(done["jct"].mean()) if len(done) else math.nan, res


def online_table(
    *,
    n_jobs: int = 3000,
    servers: Sequence[int] = (5, 10, 20, 50),
    load: float = 0.9,
    datasets: Sequence[tuple[str, float | None]] = (("calibrated", None), ("synthetic I", 0.5), ("synthetic II", 0.25)),
    reference_servers: int | None = None,
    seed: int = 0,
):
    """Tables XVI-XVIII on the calibrated synthetic workload: mean sojourn time (s) of successful
    jobs per policy and number of servers W, shared workload for the four policies.

    ``reference_servers=None``: one workload per W at offered load ``load``. Else (the paper's
    design: one trace, more or fewer servers) one workload calibrated to ``load`` on
    ``reference_servers`` servers, run on every W (overloaded when W is smaller)."""
    import pandas as pd

    rows = []
    for name, q in datasets:
        for w in servers:
            ref = w if reference_servers is None else reference_servers
            jobs, term = online_workload(
                n_jobs, servers=ref, load=load, success=q, seed=seed + (w if reference_servers is None else 0)
            )
            row = {"dataset": name, "servers": w, "jobs": n_jobs, "successful": n_jobs - len(term)}
            for idx in INDICES:
                row[idx.upper()] = simulate_online(jobs, term, servers=w, index=idx)[0]
            row["RANK vs SERPT"] = row["RANK"] / row["SERPT"] - 1
            rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Philly mapping
def philly_staged_jobs(path, *, success_from_uniform: bool = True, seed: SeedLike = 0):
    """Map a Philly ``cluster_job_log`` to staged jobs (Sec. VI-A): attempts -> stages (stage
    length = attempt run time), ``Pass`` -> success, ``Failed``/``Killed`` -> termination after the
    observed attempts plus 1-3 unseen stages drawn from the observed attempt lengths; per-stage
    probabilities drawn uniformly and normalised. Jobs with no valid attempt are dropped.

    Returns ``(jobs, terminate_after)`` for :class:`optsched.sim.Simulator` (one GPU per job, as in
    the paper's single-server-per-job model).
    """

    rng = as_generator(seed)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise TraceFormatError(f"{path}: not a Philly cluster_job_log JSON file ({e}).") from None
    fmt = "%Y-%m-%d %H:%M:%S"

    def ts(v):
        if v in (None, "None", ""):
            return None
        try:
            return datetime.strptime(str(v), fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            return None

    staged = []
    for job in data if isinstance(data, list) else []:
        sub = ts(job.get("submitted_time"))
        st = []
        for a in job.get("attempts") or []:
            s, e = ts(a.get("start_time")), ts(a.get("end_time"))
            if s is not None and e is not None and e > s:
                st.append(e - s)
        if sub is None or not st or job.get("status") not in ("Pass", "Failed", "Killed"):
            continue
        staged.append((str(job.get("jobid")), sub, st, job["status"] == "Pass"))
    if not staged:
        raise TraceFormatError(f"{path}: no Philly job with a valid attempt and a Pass/Failed/Killed status.")
    t0 = min(s for _, s, _, _ in staged)
    pool = np.concatenate([np.array(st) for _, _, st, _ in staged])
    jobs, term = [], {}
    for jid, sub, st, good in staged:
        st = list(st)
        if not good:
            term[jid] = len(st)
            st += rng.choice(pool, size=int(rng.integers(1, 4))).tolist()
        sizes = np.cumsum(st)
        jobs.append(
            Job(
                jid,
                work=float(sizes[-1]),
                gpus=1,
                arrival=sub - t0,
                attrs={"sizes": sizes.tolist(), "probs": _stage_probs(len(st), None, rng), "stages": st},
            )
        )
    return jobs, term
