"""Per-iteration training time alpha_i(x) of eq. (4)-(7), alpha^max, and the job graph.

A placement of job i is an integer matrix ``x`` of shape (S_i, n_servers): ``x[s, m]`` = x^m_{i,s},
the replicas of stage s on server m. Only the counts matter for alpha (the model is symmetric in
the replicas of a stage), so every placement function here works on count matrices.

Reading of the garbled eq. (5)-(6) (see ``formulations/asrpt.md#reading``): the x^m_{i,s}
replicas of stage s on server m share the reserved NIC share (x^m_{i,s}/g) B_inter; data that
crosses the NIC goes over that share and data between GPUs of one server goes over B_intra.
Per replica, the share of its activation traffic to stage s-1 that leaves the server is
(k_{s-1} - x^m_{s-1})/k_{s-1}; the x replicas together push x times that through x/g of B_inter,
so x cancels and the NIC time per iteration is g * data / B_inter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from optsched.asrpt.model import AsrptInstance, AsrptJob
from optsched.exceptions import InvalidInstanceError, InvalidOptionError

#: Readings of the garbled eq. (6) (formulations/asrpt.md#reading): ``"nic-share"`` (default: each of the
#: x local replicas pushes its 2(k-1)h/k bytes through the NIC share (x/g) B_inter, time independent of x)
#: and ``"ring-boundary"`` (only the ring's server boundaries cross the NIC: one replica's 2(k-1)h/k bytes
#: per server through (x/g) B_inter, time g 2(k-1)h / (k x B_inter), bottlenecked also by B_intra).
READINGS = ("nic-share", "ring-boundary")


def check_reading(reading: str) -> str:
    """Validate the eq. (6) reading option (InvalidOptionError naming option, value and allowed values)."""
    if reading not in READINGS:
        raise InvalidOptionError(
            f"The 'reading' option (of eq. (6)) must be one of {', '.join(READINGS)}; got {reading!r}."
        )
    return reading


def as_placement(job: AsrptJob, x, *, free: Sequence[int] | None = None) -> np.ndarray:
    """Validate a placement (count matrix, or {stage: {server: count}}) and return it as an int array.

    Raises
    ------
    InvalidInstanceError
        Wrong shape, negative counts, a stage whose counts do not add up to k (eq. 2), or more
        GPUs on a server than ``free`` allows (eq. 3).
    """
    if isinstance(x, dict):
        n_srv = 1 + max((m for row in x.values() for m in row), default=0)
        arr = np.zeros((job.n_stages, n_srv), dtype=np.int64)
        for s, row in x.items():
            for m, v in row.items():
                arr[int(s), int(m)] = int(v)
        x = arr
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] != job.n_stages:
        raise InvalidInstanceError(
            f"A placement of {job.label} must be a matrix with one row per stage "
            f"({job.n_stages}) and one column per server; got shape {x.shape}."
        )
    if not np.all(np.equal(np.mod(x, 1), 0)) or np.any(x < 0):
        raise InvalidInstanceError(
            f"A placement of {job.label} must hold non-negative integer counts; got {x.tolist()}."
        )
    x = x.astype(np.int64)
    for s, st in enumerate(job.stages):
        if x[s].sum() != st.k:
            raise InvalidInstanceError(
                f"Stage {s} of {job.label} has {int(x[s].sum())} replicas placed; eq. (2) needs exactly k = {st.k}."
            )
    if free is not None:
        free = np.asarray(free, dtype=np.int64)
        if len(free) != x.shape[1]:
            raise InvalidInstanceError(f"'free' lists {len(free)} servers but the placement has {x.shape[1]}.")
        over = np.nonzero(x.sum(axis=0) > free)[0]
        if len(over):
            m = int(over[0])
            raise InvalidInstanceError(
                f"The placement of {job.label} puts {int(x[:, m].sum())} GPUs on server {m}, "
                f"which has {int(free[m])} free (eq. 3)."
            )
    return x


def _neighbour_times(job: AsrptJob, s: int, x: np.ndarray, m: int, g: int, b_inter: float, b_intra: float):
    """(comm NIC time, comm intra time) of stage s on server m: eq. (5) under our reading."""
    st = job.stages
    inter = intra = 0.0
    if s > 0:
        kp = st[s - 1].k
        local = x[s - 1, m] / kp
        inter += 2.0 * st[s].d_in * (1.0 - local)
        intra += 2.0 * st[s].d_in * local
    if s + 1 < len(st):
        kn = st[s + 1].k
        local = x[s + 1, m] / kn
        inter += 2.0 * st[s].d_out * (1.0 - local)
        intra += 2.0 * st[s].d_out * local
    return g * inter / b_inter, intra / b_intra


def allreduce_time(
    job: AsrptJob, s: int, xsm: int, g: int, b_inter: float, b_intra: float, reading: str = "nic-share"
) -> float:
    """Eq. (6): each replica moves V = 2(k-1)h/k bytes; over B_intra if all k replicas share the server.
    Otherwise, ``nic-share``: the x local replicas each push V through the NIC share (x/g) B_inter (x
    cancels: g V / B_inter); ``ring-boundary``: only the ring's boundary link leaves the server, V bytes
    through (x/g) B_inter, the ring running at its slowest link: max(g V / (x B_inter), V / B_intra)."""
    k, h = job.stages[s].k, job.stages[s].h
    if k <= 1:
        return 0.0
    vol = 2.0 * (k - 1) * h / k
    if xsm == k:
        return vol / b_intra
    if reading == "ring-boundary":
        return max(g * vol / (xsm * b_inter), vol / b_intra)
    return g * vol / b_inter


def stage_times(job: AsrptJob, x, *, g: int, b_inter: float, b_intra: float, reading: str = "nic-share") -> np.ndarray:
    """beta^m_{i,s} = comp + comm + AllReduce (eq. 4-7) for every stage and server (0 where x = 0).

    Returns
    -------
    ndarray, shape (S_i, n_servers), seconds.
    """
    check_reading(reading)
    x = as_placement(job, x)
    out = np.zeros(x.shape, dtype=float)
    for s, st in enumerate(job.stages):
        for m in np.nonzero(x[s])[0]:
            comp = st.p_f + st.p_b  # (4)
            c_inter, c_intra = _neighbour_times(job, s, x, int(m), g, b_inter, b_intra)  # (5)
            out[s, m] = comp + c_inter + c_intra + allreduce_time(job, s, int(x[s, m]), g, b_inter, b_intra, reading)
    return out


def alpha(
    job: AsrptJob,
    x,
    *,
    instance: AsrptInstance | None = None,
    g: int | None = None,
    b_inter: float | None = None,
    b_intra: float | None = None,
    reading: str = "nic-share",
) -> float:
    """Per-iteration training time alpha_i(x) = max_{m,s} beta^m_{i,s} (eq. 7), seconds.

    Parameters
    ----------
    job : AsrptJob
    x : array (S_i, n_servers) or {stage: {server: count}}
        Replicas of each stage on each server; each row sums to k_{i,s}.
    instance : AsrptInstance, optional
        Supplies g, B_inter, B_intra (or pass them directly).
    reading : {"nic-share", "ring-boundary"}
        Reading of the garbled eq. (6) (:data:`READINGS`, formulations/asrpt.md#reading).

    Guarantee
    ---------
    alpha >= max_s (p^f_s + p^b_s) >= 0; alpha is non-increasing in B_inter and B_intra; when
    B_inter <= g B_intra (every NIC byte costs at least an NVLink byte), alpha(x) <= alpha^max_i and
    alpha(one server) <= alpha(x) (tests/asrpt/test_timing.py).

    References
    ----------
    Luo et al., A-SRPT, Sec. III-B, eq. (4)-(7); formulations/asrpt.md#alpha.

    Examples
    --------
    >>> from optsched.asrpt.model import AsrptJob, Stage
    >>> j = AsrptJob(0, [Stage(k=2, p_f=1.0, p_b=2.0, h=100.0)], iterations=1)
    >>> alpha(j, [[2, 0]], g=2, b_inter=10.0, b_intra=100.0)   # 3 + 2*1*100/2/100
    4.0
    >>> alpha(j, [[1, 1]], g=2, b_inter=10.0, b_intra=100.0)   # 3 + 2 * 100 / 10
    23.0
    >>> j4 = AsrptJob(0, [Stage(k=4, p_f=1.0, p_b=2.0, h=100.0)], iterations=1)
    >>> alpha(j4, [[2, 2]], g=2, b_inter=10.0, b_intra=100.0), alpha(j4, [[2, 2]], g=2, b_inter=10.0,
    ...                                                               b_intra=100.0, reading="ring-boundary")
    (33.0, 18.0)
    """
    g, b_inter, b_intra = params(instance, g, b_inter, b_intra)
    return float(stage_times(job, x, g=g, b_inter=b_inter, b_intra=b_intra, reading=reading).max())


def params(instance, g, b_inter, b_intra):
    if instance is not None:
        g = instance.g if g is None else g
        b_inter = instance.b_inter if b_inter is None else b_inter
        b_intra = instance.b_intra if b_intra is None else b_intra
    if g is None or b_inter is None or b_intra is None:
        raise InvalidInstanceError("alpha needs g, b_inter and b_intra: pass instance= or all three.")
    if not (b_inter > 0 and b_intra > 0 and g >= 1):
        raise InvalidInstanceError(
            f"Bandwidths must be > 0 and g >= 1; got g={g}, b_inter={b_inter}, b_intra={b_intra}."
        )
    return int(g), float(b_inter), float(b_intra)


def spread_placement(job: AsrptJob) -> np.ndarray:
    """One replica per server: g_i servers (the alpha^max placement of Sec. III-B)."""
    x = np.zeros((job.n_stages, job.gpus), dtype=np.int64)
    col = 0
    for s, st in enumerate(job.stages):
        for _ in range(st.k):
            x[s, col] = 1
            col += 1
    return x


def consolidated_placement(job: AsrptJob) -> np.ndarray:
    """Every replica on one server (ignores the server size; the lower end of alpha)."""
    return np.array([[st.k] for st in job.stages], dtype=np.int64)


def alpha_max(
    job: AsrptJob,
    *,
    instance: AsrptInstance | None = None,
    g=None,
    b_inter=None,
    b_intra=None,
    reading: str = "nic-share",
) -> float:
    """alpha^max_i: eq. (7) with each replica alone on its own server, with 1/g of B_inter.

    References
    ----------
    Sec. III-B ("alpha^max_i can be computed using Eq. (7) if the job is assigned to g_i servers");
    formulations/asrpt.md#alpha-max.
    """
    return alpha(job, spread_placement(job), instance=instance, g=g, b_inter=b_inter, b_intra=b_intra, reading=reading)


def beta_upper(job: AsrptJob, s: int, *, g: int, b_inter: float, b_intra: float) -> float:
    """An upper bound on beta^m_{i,s} over all placements (big-M of the placement MILP)."""
    st = job.stages[s]
    unit = max(g / b_inter, 1.0 / b_intra)
    d = (2.0 * st.d_in if s > 0 else 0.0) + (2.0 * st.d_out if s + 1 < job.n_stages else 0.0)
    ar = 0.0 if st.k <= 1 else 2.0 * (st.k - 1) * st.h / st.k * unit
    return st.p_f + st.p_b + unit * d + ar
