"""Elastic jobs (paper 001) from a generic job table (arrival, gpus, duration): what the elastic
policies need to run on any trace (``optsched compare``). Assumptions, each an option
(formulations/elastic.md#from-a-trace):

* **Resources**: ``gpu`` and ``cpu``; server h has the cluster's G_h GPUs and
  (``cpu_per_gpu`` + ``ps_cpu``) G_h CPUs: room for a parameter server beside every one-GPU
  worker, so that CPUs never bind before GPUs for one-GPU jobs.
* **Worker types** (the type mix): one type per size k in ``worker_gpus`` (GPUs per worker; default
  {1: 1.0}, one GPU per worker), k GPUs and ``cpu_per_gpu`` k CPUs, ``worker_gbps`` Gbit/s. A job's
  own type k_j is drawn from the mix among the sizes that divide g_j and fit a server (else 1);
  it has D_j = g_j / k_j data chunks, so it never runs on more than its g_j GPUs.
* **PS type**: one, 0 GPU, ``ps_cpu`` CPUs, ``ps_gbps`` Gbit/s (architecture ``ps``).
* **Speed**: E_j = 1 epoch, U = ``update_ms``, gradients ``grad_mb`` MB, K_j = ceil(duration_j
  1000 / (``minibatch_ms`` + U)) mini-batches per chunk and v_j = 1000 duration_j / K_j - U ms per
  mini-batch on its own type (about ``minibatch_ms``), so that with D_j workers on one server
  (q = 1) an iteration takes v_j + U and the job trains for ceil(duration_j / slot) slots. Another
  worker type m is no faster: v_jm = v max(1, k_j / k_m) (1 + ``other_type_penalty``), so no
  configuration of job j takes less than duration_j or fewer than g_j duration_j GPU-seconds: the
  lower bound of ``compare`` stays valid (formulations/rigid.md#jct-bound).
* **Time**: slots of ``slot`` seconds (default: :func:`default_slot`, made longer, in whole minutes,
  where the instance's serial horizon would pass the elastic limit of 10^6 slots, as at 100,000
  jobs; a given ``slot`` that passes it is refused with the least one that fits); a_j = ceil(r_j / slot);
  weights all equal (W = the largest least resource use, so that 1 <= w_j / use <= F, the paper's
  first assumption, with F = W / the smallest).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from optsched.core.cluster import Cluster
from optsched.core.limits import MAX_SLOTS as KIND_SLOTS
from optsched.core.seeds import SeedLike, job_uniforms
from optsched.elastic.constants import guarded_ceil, transfer_ms
from optsched.elastic.model import ElasticInstance
from optsched.elastic.shapes import ideal_config
from optsched.exceptions import InvalidInstanceError, InvalidOptionError
from optsched.sim.model.inputs import job_table_columns

#: The default slot keeps the window within about this many slots (the elastic policies decide
#: every slot; A_online prices every slot of every server).
MAX_SLOTS = 2000


def default_slot(window: float) -> float:
    """60 s, or longer (a whole number of minutes) so that ``window`` seconds fit in :data:`MAX_SLOTS` slots.

    >>> default_slot(3600.0), default_slot(1.29e7)
    (60.0, 6480.0)
    """
    return 60.0 * max(1, math.ceil(window / (60.0 * MAX_SLOTS)))


def _least_slot(horizon_of, slot: float, limit: int, n: int) -> float | None:
    """The least whole-minute slot (from ``slot`` on) whose serial horizon fits ``limit`` slots
    (None: none can, every job adds two slots at least)."""
    if 2 * n >= limit:
        return None
    lo, hi = max(1, math.ceil(slot / 60.0)), max(1, math.ceil(slot / 60.0))
    while horizon_of(60.0 * hi) > limit:
        lo, hi = hi, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if horizon_of(60.0 * mid) > limit:
            lo = mid + 1
        else:
            hi = mid
    return 60.0 * hi


def _positive(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(value, bool) or not (v > 0 and math.isfinite(v)):
        raise InvalidOptionError(f"The '{name}' option must be a finite number > 0; got {value!r}.")
    return v


def from_table(
    table: Any,
    cluster: Cluster,
    *,
    slot: float | None = None,
    worker_gpus: Mapping[int, float] | None = None,
    cpu_per_gpu: float = 4.0,
    ps_cpu: float = 4.0,
    worker_gbps: float = 10.0,
    ps_gbps: float = 20.0,
    minibatch_ms: float = 400.0,
    update_ms: float = 50.0,
    grad_mb: float = 100.0,
    other_type_penalty: float = 0.1,
    seed: SeedLike = 0,
) -> ElasticInstance:
    """An :class:`ElasticInstance` (architecture ``ps``) from a job table on ``cluster``'s servers.

    Job ids are the table's ``job_id`` (else the row numbers); ``metadata["arrival_s"]`` keeps each
    job's arrival in seconds and ``metadata["assumptions"]`` every choice above.

    Raises
    ------
    InvalidInstanceError
        A missing column, or a job larger than the cluster.
    InvalidOptionError
        A bad option (named, with its value).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"arrival": [0.0, 90.0], "gpus": [1, 4], "duration": [100.0, 600.0]})
    >>> inst = from_table(t, Cluster.homogeneous(2, 4), slot=60.0)
    >>> [j.arrival for j in inst.jobs], [j.chunks for j in inst.jobs], [inst.min_duration(i) for i in range(2)]
    ([0, 2], [1, 4], [2, 10])
    """
    cols, dcol = job_table_columns(table, who="the elastic policies", prefer="duration")
    arr = table["arrival"].to_numpy(dtype=float)
    gp = table["gpus"].to_numpy().astype(np.int64)
    dur = table[dcol].to_numpy(dtype=float)
    ids = table["job_id"].tolist() if "job_id" in cols else list(range(len(arr)))
    if len(arr) == 0:
        raise InvalidInstanceError("The job table is empty; give at least one job.")
    if int(gp.max()) > cluster.total_gpus:
        i = int(np.argmax(gp))
        raise InvalidInstanceError(
            f"Job {ids[i]!r} needs {int(gp[i])} GPUs, more than the cluster's {cluster.total_gpus}; add servers."
        )
    mix, sizes = _checked_options(
        cpu_per_gpu, ps_cpu, worker_gbps, ps_gbps, minibatch_ms, update_ms, grad_mb, other_type_penalty, worker_gpus
    )
    window = float((arr + dur).max() - arr.min())
    auto_slot = slot is None
    slot = default_slot(window) if auto_slot else _positive(slot, "slot")
    pick = job_uniforms(seed, ids, "elastic-worker-type")  # each job's own draw: by its id, not its row
    largest = int(cluster.max_server_gpus)
    servers = [{"capacity": {"gpu": float(g), "cpu": (cpu_per_gpu + ps_cpu) * float(g)}} for g in cluster.gpus]
    wts = [{"resources": {"gpu": float(k), "cpu": cpu_per_gpu * k}, "bandwidth": float(worker_gbps)} for k in sizes]
    pts = [{"resources": {"gpu": 0.0, "cpu": float(ps_cpu)}, "bandwidth": float(ps_gbps)}]
    jobs, own = _job_dicts(
        ids, gp, dur, pick, mix, sizes, largest, minibatch_ms, update_ms, grad_mb, other_type_penalty
    )

    slot, horizon = _slot_and_horizon(jobs, arr, slot, auto_slot, update_ms, grad_mb, worker_gbps)
    for j, a in zip(jobs, arr, strict=True):
        j["arrival"] = int(math.ceil(a / slot - 1e-9))
    doc = {
        "kind": "elastic",
        "name": "from-table",
        "architecture": "ps",
        "slot": slot,
        "horizon": int(horizon),
        "servers": servers,
        "worker_types": wts,
        "ps_types": pts,
        "jobs": jobs,
    }
    inst = ElasticInstance.from_dict(doc)
    d_min = _memo(inst, lambda j: inst.min_duration(j))
    inst = inst.replace(horizon=int(max(j.arrival for j in inst.jobs) + sum(d_min)))
    use = _memo(inst, lambda j: _least_use(inst, j))
    W = float(max(use))
    F = W / float(min(use))
    new = [j.__class__(**{**j.to_dict(), "weight": W}) for j in inst.jobs]
    return inst.replace(
        jobs=tuple(new),
        F=max(1.0, F) * (1 + 1e-9),
        metadata={
            "arrival_s": [float(a) for a in arr],
            "assumptions": {
                "slot": slot,
                "worker_gpus": {int(k): float(p) for k, p in mix.items()},
                "own_worker_gpus": own,
                "cpu_per_gpu": cpu_per_gpu,
                "ps_cpu": ps_cpu,
                "worker_gbps": worker_gbps,
                "ps_gbps": ps_gbps,
                "minibatch_ms": minibatch_ms,
                "update_ms": update_ms,
                "grad_mb": grad_mb,
                "other_type_penalty": other_type_penalty,
                "weight": W,
            },
        },
    )


def _checked_options(
    cpu_per_gpu, ps_cpu, worker_gbps, ps_gbps, minibatch_ms, update_ms, grad_mb, other_type_penalty, worker_gpus
) -> tuple[dict, list[int]]:
    """:func:`from_table`'s numeric options checked; returns the worker mix (GPUs per worker ->
    weight) and its sizes in order."""
    for name, v in (
        ("cpu_per_gpu", cpu_per_gpu),
        ("ps_cpu", ps_cpu),
        ("worker_gbps", worker_gbps),
        ("ps_gbps", ps_gbps),
        ("minibatch_ms", minibatch_ms),
    ):
        _positive(v, name)
    for name, v in (("update_ms", update_ms), ("grad_mb", grad_mb), ("other_type_penalty", other_type_penalty)):
        if isinstance(v, bool) or not (float(v) >= 0 and math.isfinite(float(v))):
            raise InvalidOptionError(f"The '{name}' option must be a finite number >= 0; got {v!r}.")
    mix = dict(worker_gpus or {1: 1.0})
    sizes = sorted(int(k) for k in mix)
    if not sizes or any(k < 1 for k in sizes) or any(not (float(p) >= 0) for p in mix.values()):
        raise InvalidOptionError(
            f"The 'worker_gpus' option must map GPUs per worker (>= 1) to weights >= 0; got {worker_gpus!r}."
        )
    return mix, sizes


def _job_dicts(ids, gp, dur, pick, mix, sizes, largest, minibatch_ms, update_ms, grad_mb, other_type_penalty):
    """Each job's instance fields (arrival set later, once the slot is known) and the GPUs per
    worker of its own type, drawn by ``pick`` among the sizes that divide its demand."""
    t0 = float(minibatch_ms) + float(update_ms)
    jobs = []
    own = []
    for i in range(len(ids)):
        g = int(gp[i])
        ok = [k for k in sizes if g % k == 0 and k <= largest and float(mix[k]) > 0]
        if ok:
            w = np.array([float(mix[k]) for k in ok])
            cum = np.cumsum(w) / w.sum()
            k = ok[min(int(np.searchsorted(cum, pick[i], side="right")), len(ok) - 1)] if len(ok) > 1 else ok[0]
        else:
            k = 1
        m_own = sizes.index(k) if k in sizes else None
        K = max(1, int(math.ceil(dur[i] * 1000.0 / t0 - 1e-9)))
        # v_j such that K (v_j + U) = 1000 duration_j exactly (ms): d = ceil(duration_j / slot) on one server
        vj = max(1000.0 * float(dur[i]) / K - float(update_ms), 1e-6)
        v = [
            vj * max(1.0, k / km) * (1.0 if m == m_own else 1.0 + float(other_type_penalty))
            for m, km in enumerate(sizes)
        ]
        jobs.append(
            {
                "id": int(ids[i]) if isinstance(ids[i], np.integer) else ids[i],
                "arrival": 0,  # in slots, set below once the slot is known
                "weight": 1.0,
                "epochs": 1,
                "chunks": g // k,
                "minibatches": K,
                "v": v,
                "update": [float(update_ms)],
                "grad_mb": float(grad_mb),
            }
        )
        own.append(k)
    return jobs, own


def _slot_and_horizon(jobs, arr, slot, auto_slot, update_ms, grad_mb, worker_gbps) -> tuple[float, int]:
    """The slot (grown, when it was not given, until the serial horizon fits the elastic limit of
    slots) and that horizon; a workload that cannot fit is refused with the slot that would do."""

    def slowest(j):  # ms per mini-batch of one worker of the slowest type, spread (q = 0)
        return max(j["v"]) + float(update_ms) + 2.0 * transfer_ms(float(grad_mb), float(worker_gbps))

    # a serial schedule of the slowest configurations ends by this horizon (the least-duration one,
    # max a_j + sum_j d_j, is set below); the default slot grows (whole minutes) until it fits the
    # elastic limit of slots (a workload of 100,000 jobs spans more than 10^6 one-minute slots)
    work_ms = [j["chunks"] * j["minibatches"] * slowest(j) for j in jobs]

    def serial_horizon(slot: float) -> int:
        last = int(math.ceil(float(arr.max()) / slot - 1e-9))
        return last + sum(guarded_ceil(w / (1000.0 * slot)) + 1 for w in work_ms)

    horizon = serial_horizon(slot)
    limit = KIND_SLOTS["elastic"]
    while auto_slot and horizon > limit and 2 * len(jobs) < limit:  # each job: 2 slots at least
        slot = 60.0 * math.ceil(slot * horizon / (0.95 * limit) / 60.0)
        horizon = serial_horizon(slot)
    if horizon > limit:
        least = _least_slot(serial_horizon, slot, limit, len(jobs))
        raise InvalidInstanceError(
            f"The elastic policies' instance of this workload would span {horizon:,} slots of {slot:g} s "
            f"(its serial horizon), more than the {limit:,} they may (docs/instances.md#limits); "
            + (
                f"give a longer slot: --elastic-slot {least:g} (in Python enrich={{'elastic': {{'slot': {least:g}}}}})."
                if least is not None
                else f"the workload has {len(jobs):,} jobs, two slots each at least: give them fewer jobs."
            )
        )
    return slot, horizon


def _memo(inst: ElasticInstance, f) -> list:
    """f(j) for every job index, computed once per distinct job data (chunks, mini-batches, speeds)."""
    memo: dict = {}
    out = []
    for j, job in enumerate(inst.jobs):
        key = (job.chunks, job.minibatches, job.v)
        if key not in memo:
            memo[key] = f(j)
        out.append(memo[key])
    return out


def _least_use(inst: ElasticInstance, j: int) -> float:
    """d x total use per slot of job j's ideal configuration (its least duration): an upper bound
    of its least use, the scale of the weights."""
    c = ideal_config(inst, j)
    return float(c.d * c.total_use)
