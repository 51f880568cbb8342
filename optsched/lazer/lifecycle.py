"""The job lifecycle (1) and the futile-preemption condition (2) of Lazer, as checks.

* :func:`lifecycle_from_log` rebuilds W_k, L_k, T_k, P_k and the futile load time of every job
  from the simulator's event log alone (not from the engine's counters), so that
  ``JCT_k = W_k + L_k + T_k + P_k`` (1) is checked on two independent computations.
* :func:`is_futile` is (2) as a predicate on a three-job chain on one GPU.

See formulations/lazer.md (1), (2).

Tested in ``tests/lazer/test_lifecycle_properties.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


def is_futile(T_k: float, T_k1: float, T_k2: float, p_k: float, l_k1: float, gap: float) -> bool:
    """Condition (2): j_{k+1} (remaining ``T_k1``) preempted training j_k (``T_k``, save ``p_k``);
    j_{k+2} (``T_k2``) arrives ``gap`` = ΔA_{k+2} after j_{k+1}. Futile iff
    ``T_k2 < T_k1 < T_k`` and ``p_k < gap <= p_k + l_k1`` (the boundary: j_{k+1}'s load has just
    ended, it has not trained).

    Examples
    --------
    >>> is_futile(100, 10, 1, p_k=2, l_k1=5, gap=7), is_futile(100, 10, 1, p_k=2, l_k1=5, gap=7.5)
    (True, False)
    """
    return T_k2 < T_k1 < T_k and p_k < gap <= p_k + l_k1


def lifecycle_from_log(log: Iterable[tuple]) -> dict[Any, dict[str, float]]:
    """Per job: ``arrival, completion, jct, W, L, T, P, futile, n_futile`` from an event log.

    W is the time without GPUs (waiting, ① + ⑤), L loading (② + ⑨), T training (③ + ⑩), P
    pause-and-save (④ + ⑪). A preemption during a load, or in the batch a load ended (no training
    since), makes that load futile (2).

    Examples
    --------
    >>> log = [(0.0, "arrival", 1, None), (1.0, "start", 1, {0: 1}), (3.0, "train", 1, 1.0),
    ...        (5.0, "preempt", 1, False), (6.0, "saved", 1, None), (8.0, "start", 1, {0: 1}),
    ...        (9.0, "train", 1, 1.0), (10.0, "complete", 1, 1)]
    >>> r = lifecycle_from_log(log)[1]; [r[k] for k in ("W", "L", "T", "P", "jct")]
    [3.0, 3.0, 3.0, 1.0, 10.0]
    """
    out: dict[Any, dict[str, float]] = {}
    state: dict[Any, tuple[str, float]] = {}
    for t, kind, jid, detail in log:
        if jid is None or kind in ("timer", "checkpoint", "rate"):
            continue
        if kind == "arrival":
            out[jid] = {
                "arrival": t,
                "completion": float("nan"),
                "jct": float("nan"),
                "W": 0.0,
                "L": 0.0,
                "T": 0.0,
                "P": 0.0,
                "futile": 0.0,
                "n_futile": 0,
            }
            state[jid] = ("W", t)
            continue
        r = out[jid]
        ph, since = state[jid]
        if kind == "preempt" and detail == "finish-load":  # the load runs to its end, all futile
            state[jid] = ("Lf", since)
            continue
        if ph == "Lf":  # "saved" of a finished-then-lost load
            r["L"] += t - since
            r["futile"] += t - since
            r["n_futile"] += 1
            state[jid] = ("W", t)
            continue
        r[ph] += t - since
        if kind == "start":
            state[jid] = ("L", t)
        elif kind == "train":
            state[jid] = ("T", t)
            r["_last_load"] = t - since if ph == "L" else 0.0
        elif kind in ("preempt", "migrate"):
            if ph == "L" or (ph == "T" and since == t and r.get("_last_load", 0.0) > 0):
                r["futile"] += (t - since) if ph == "L" else r["_last_load"]
                r["n_futile"] += 1
            state[jid] = ("P", t)
        elif kind == "saved":
            state[jid] = ("W", t)
        elif kind in ("complete", "fail"):
            r["completion"] = t
            r["jct"] = t - r["arrival"]
            state[jid] = ("done", t)
    for r in out.values():
        r.pop("_last_load", None)
        r.pop("done", None)
    return out


def check_lifecycle(result: Any, *, atol: float = 1e-6) -> list[str]:
    """Problems with (1) in a simulation result: JCT ≠ W+L+T+P from the engine's counters or from
    the log, the two disagreeing, negative parts, or futile > L. Empty list: all consistent."""
    df = result.jobs_frame()
    rows = lifecycle_from_log(result.log)
    bad = []
    for rec in df.itertuples(index=False):
        r = rows[rec.job_id]
        eng = (rec.waiting, rec.loading_time, rec.training_time, rec.saving_time)
        if min(eng) < -atol or abs(sum(eng) - rec.jct) > atol:
            bad.append(f"job {rec.job_id}: counters W+L+T+P = {sum(eng)!r} vs JCT {rec.jct!r}")
        mine = (r["W"], r["L"], r["T"], r["P"])
        if min(mine) < -atol or abs(sum(mine) - r["jct"]) > atol or abs(r["jct"] - rec.jct) > atol:
            bad.append(f"job {rec.job_id}: log W+L+T+P = {sum(mine)!r} vs JCT {r['jct']!r} (engine {rec.jct!r})")
        for a, b, name in zip(eng, mine, "WLTP", strict=True):
            if abs(a - b) > atol:
                bad.append(f"job {rec.job_id}: {name} engine {a!r} vs log {b!r}")
        if abs(r["futile"] - rec.futile_time) > atol or r["n_futile"] != rec.n_futile:
            bad.append(
                f"job {rec.job_id}: futile engine {rec.futile_time!r}/{rec.n_futile} vs log "
                f"{r['futile']!r}/{r['n_futile']}"
            )
        if rec.futile_time > rec.loading_time + atol:
            bad.append(f"job {rec.job_id}: futile {rec.futile_time!r} > L {rec.loading_time!r}")
    return bad


def srpt_total_flow(jobs) -> float:
    """Total flow time of SRPT on one machine without overheads (optimal: Schrage 1968), by its own
    event loop (independent of the simulator); ``jobs`` have ``id``, ``work``, ``arrival``.

    Examples
    --------
    >>> from optsched.core import Job
    >>> srpt_total_flow([Job(0, work=1), Job(1, work=1, arrival=1), Job(2, work=2)])
    6.0
    """

    t = 0.0
    rem = {j.id: float(j.work) for j in jobs}
    arr = {j.id: float(j.arrival) for j in jobs}
    total = 0.0
    while rem:
        avail = [i for i in rem if arr[i] <= t + 1e-12]
        if not avail:
            t = min(arr[i] for i in rem)
            continue
        i = min(avail, key=lambda k: (rem[k], arr[k]))
        nxt = min([arr[k] for k in rem if arr[k] > t + 1e-12], default=math.inf)
        step = min(rem[i], nxt - t)
        t += step
        rem[i] -= step
        if rem[i] <= 1e-12:
            del rem[i]
            total += t - arr[i]
    return total
