"""Verifier checks of kind ``elastic``, labelled by the equations of ``formulations/elastic.md#model``.

Each check recomputes from the instance's raw fields and the schedule alone: rho of (1) / (14) is
recomputed here with its own code (not :meth:`ElasticInstance.rho`), the per-slot use of (2h) /
(15b) is summed slot by slot. :func:`violations` runs them all with the options of a max-weight
round ((7a) at most one schedule per job, (7b) completion by tau, no (2j)).

>>> from optsched.elastic.model import ElasticInstance, toy_instance_dict
>>> from optsched.elastic.schedule import ElasticSchedule, Assignment
>>> inst = ElasticInstance.from_dict(toy_instance_dict())
>>> good = ElasticSchedule({0: Assignment(0, 10, 1, 0, 1, {0: 1}, {0: 1}),
...                         1: Assignment(0, 15, 0, 0, 1, {0: 1}, {0: 1})})
>>> violations(inst, good)
[]
>>> short = ElasticSchedule({0: Assignment(0, 9, 1, 0, 1, {0: 1}, {0: 1}),
...                          1: Assignment(0, 15, 0, 0, 1, {0: 1}, {0: 1})})
>>> [v.label for v in violations(inst, short)]
['2f']
>>> evaluate_objective(inst, good, "total_weighted_completion_time")
25.0

Tested in ``tests/elastic/test_exact.py`` and ``tests/elastic/test_baselines.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from optsched.exceptions import UnknownNameError
from optsched.verify import Violation

TOL = 1e-9
LABELS = (
    "2a",
    "horizon",
    "2b",
    "2c",
    "2d",
    "2e",
    "2f",
    "2g",
    "2h",
    "2i",
    "2j",
    "2k",
    "2l",
    "2m",
    "2n",
    "2o",
    "15a",
    "15b",
)


def _is_nonneg_int(x: Any) -> bool:
    return (
        isinstance(x, (int, float, np.integer, np.floating))
        and not isinstance(x, bool)
        and math.isfinite(x)
        and float(x) >= 0
        and float(x).is_integer()
    )


def recomputed_iteration_ms(instance: Any, j: int, m: int, p: Any, q: int, n: float) -> float:
    """(1) / (14) from the raw fields: v + U (+ 2 pi / b with pi MB -> Mbit x 8, b Gbit/s -> Mbit/ms)."""
    job = instance.jobs[j]
    v = job.v[m]
    b_mbit_per_ms = instance.worker_types[m].bandwidth * 1e9 / 1e6 / 1e3  # Gbit/s -> Mbit/ms
    comm = 2.0 * job.grad_mb * 8.0 / b_mbit_per_ms  # ms for 2 pi of MB at b
    if instance.architecture == "ps":
        return v + job.update[p] + (comm if q == 0 else 0.0)
    frac = (n - 1.0) / n
    return v + job.update * frac + (comm * frac if q == 0 else 0.0)


def _assigned(instance: Any, schedule: Any) -> list[tuple[int, Any, Any]]:
    return [(i, j, schedule[j.id]) for i, j in enumerate(instance.jobs) if j.id in schedule]


def _types_ok(instance: Any, a: Any) -> bool:
    return not _type_problems(instance, a)


def _type_problems(instance: Any, a: Any) -> list[str]:
    """What an assignment names that the instance does not have, in words (empty: nothing)."""
    ps = instance.architecture == "ps"
    out = []
    M, P, H = len(instance.worker_types), len(instance.ps_types), len(instance.servers)
    if not (_is_nonneg_int(a.m) and int(a.m) < M):
        out.append(f"worker type {a.m!r} (the instance has types 0..{M - 1})")
    if ps and not (_is_nonneg_int(a.p) and int(a.p) < P):
        out.append(f"PS type {a.p!r} (the instance has types 0..{P - 1})")
    if not ps and a.p is not None:
        out.append(f"PS type {a.p!r} (Ring-AllReduce has no PS type)")
    bad = sorted({h for h in list(a.workers) + list(a.ps) if not (isinstance(h, int) and 0 <= h < H)}, key=str)
    if bad:
        out.append(f"server(s) {bad} (the instance has servers 0..{H - 1})")
    return out


def violations(
    instance: Any, schedule: Any, *, require_all: bool = True, tau: float | None = None, arrivals: bool = True
) -> list[Violation]:
    """Every violated constraint of (2) / (15) (``require_all``, ``arrivals``) or of a round of (7)
    (``require_all=False``: (7a); ``tau``: (7b) completion <= tau; ``arrivals=False``: no (2j))."""
    out: list[Violation] = []
    T = instance.horizon if tau is None else tau
    ids = set(instance.job_ids)
    for jid in schedule.job_ids:
        if jid not in ids:
            out.append(Violation("2a", f"The schedule has job {jid!r}, which is not in the instance.", job=jid))
    if require_all:
        for j in instance.jobs:
            if j.id not in schedule:
                out.append(Violation("2a", f"{j.label} is not scheduled ((2a): every job starts once).", job=j.id))
    ok_jobs = []
    for i, j, a in _assigned(instance, schedule):
        found = _integrality_violations(j, a)
        out.extend(found)
        if not _types_ok(instance, a):
            out.append(_type_violation(instance, j, a))
            continue
        if found:
            continue
        ok_jobs.append((i, j, a))
        out.extend(_job_violations(instance, i, j, a, T, tau is not None, arrivals))
    if ok_jobs:
        out.extend(_capacity_violations(instance, ok_jobs))
    return out


def _integrality_violations(j: Any, a: Any) -> list[Violation]:
    """(2k)-(2o): counts, duration, start and q of job j's assignment ``a`` are integers in range."""
    out: list[Violation] = []
    lab = j.label
    for label, what, vals in (("2k", "workers", a.workers.values()), ("2l", "PSs", a.ps.values())):
        for x in vals:
            if not _is_nonneg_int(x):
                out.append(Violation(label, f"{lab} has {x!r} {what} on a server; counts are integers >= 0.", job=j.id))
    if not _is_nonneg_int(a.d) or a.d < 1:
        out.append(Violation("2m", f"{lab} has duration d = {a.d!r}; it must be an integer >= 1.", job=j.id))
    if not _is_nonneg_int(a.start):
        out.append(Violation("2n", f"{lab} starts at {a.start!r}, not a slot (integer >= 0).", job=j.id))
    if a.q not in (0, 1) or isinstance(a.q, bool):
        out.append(Violation("2o", f"{lab} has q = {a.q!r}; q is 0 or 1.", job=j.id))
    return out


def _type_violation(instance: Any, j: Any, a: Any) -> Violation:
    """(2b) / (2c): the assignment names a worker or PS type the instance does not have."""
    ps = instance.architecture == "ps"
    label = (
        "2b"
        if not (_is_nonneg_int(a.m) and int(a.m) < len(instance.worker_types))
        else ("2c" if ps or a.p is not None else "2b")
    )
    return Violation(label, f"{j.label} names {' and '.join(_type_problems(instance, a))}.", job=j.id)


def _job_violations(
    instance: Any, i: int, j: Any, a: Any, T: float, round_deadline: bool, arrivals: bool
) -> list[Violation]:
    """(2b)-(2g), (2i), (2j) and the horizon (or a round's deadline) for one well-typed assignment."""
    out: list[Violation] = []
    ps = instance.architecture == "ps"
    lab = j.label
    n = a.n_workers
    if n <= 0:
        return [Violation("2b", f"{lab} has no worker ((2b): exactly one worker type with workers).", job=j.id)]
    if not ps and a.n_ps > 0:
        out.append(Violation("2c", f"{lab} has PSs but the architecture is Ring-AllReduce.", job=j.id))
    used = {h for h, y in a.workers.items() if y > 0} | {h for h, s in a.ps.items() if s > 0}
    one = len(used) == 1
    if a.q != (1 if one else 0):
        out.append(
            Violation(
                "2d" if ps else "15a",
                f"{lab} has q = {a.q} but its workers{' and PSs' if ps else ''} are on server(s) "
                f"{sorted(used)} (q = 1 iff all on one server).",
                job=j.id,
            )
        )
    if ps and a.n_ps < 1:
        out.append(Violation("2e", f"{lab} has no PS ((2e): at least one).", job=j.id))
    t_it = recomputed_iteration_ms(instance, i, int(a.m), a.p, int(a.q), n)
    rho = 1000.0 * instance.slot / t_it
    if a.d * n * rho < j.work * (1 - TOL):
        out.append(
            Violation(
                "2f",
                f"{lab} trains {a.d * n * rho:.6g} mini-batches in d = {a.d} slots with {n} "
                f"workers at rho = {rho:.6g}/slot; it needs E D K = {j.work}.",
                job=j.id,
            )
        )
    if n > j.chunks:
        out.append(Violation("2g", f"{lab} has {n} workers but only D = {j.chunks} data chunks.", job=j.id))
    if ps:
        out.extend(_ps_bandwidth_violations(instance, j, a))
    if arrivals and a.start < j.arrival:
        out.append(Violation("2j", f"{lab} starts at slot {a.start:g} before its arrival {j.arrival}.", job=j.id))
    if a.completion > T:
        what = "the round's deadline tau" if round_deadline else "the horizon T"
        out.append(Violation("horizon", f"{lab} completes at {a.completion:g}, after {what} = {T:g}.", job=j.id))
    return out


def _ps_bandwidth_violations(instance: Any, j: Any, a: Any) -> list[Violation]:
    """(2i): the PSs on a server carry the traffic of the job's workers on other servers."""
    out: list[Violation] = []
    b, B = instance.worker_types[int(a.m)].bandwidth, instance.ps_types[int(a.p)].bandwidth
    for h, s in a.ps.items():
        if s > 0:
            outside = sum(y for h2, y in a.workers.items() if h2 != h)
            if outside * b > s * B * (1 + TOL) + TOL:
                out.append(
                    Violation(
                        "2i",
                        f"{j.label} has {s} PS(s) on server {h} with {s * B:g} Gbit/s for "
                        f"{outside} worker(s) elsewhere needing {outside * b:g} Gbit/s.",
                        job=j.id,
                    )
                )
    return out


def _capacity_violations(instance: Any, ok_jobs: list) -> list[Violation]:
    """(2h) / (15b): per slot, per server, per resource (the first 10 found)."""
    out: list[Violation] = []
    ps = instance.architecture == "ps"
    end = int(max(max(a.completion for _, _, a in ok_jobs), 1))
    R = instance.resources
    use = np.zeros((end, len(instance.servers), len(R)))
    for _, _, a in ok_jobs:
        wt = instance.worker_types[int(a.m)].resources
        for h, y in a.workers.items():
            use[int(a.start) : int(a.completion), h, :] += [y * wt[r] for r in R]
        if ps:
            pt = instance.ps_types[int(a.p)].resources
            for h, s in a.ps.items():
                use[int(a.start) : int(a.completion), h, :] += [s * pt[r] for r in R]
    cap = np.array([[srv.capacity[r] for r in R] for srv in instance.servers])
    over = np.argwhere(use > cap[None, :, :] + 1e-9)
    for t, h, r in over[:10]:
        who = [
            j.id
            for _, j, a in ok_jobs
            if a.start <= t < a.completion and (a.workers.get(int(h), 0) > 0 or a.ps.get(int(h), 0) > 0)
        ]
        out.append(
            Violation(
                "2h" if ps else "15b",
                f"Server {h} uses {use[t, h, r]:g} of '{R[r]}' in slot {t} (jobs {who}); it has {cap[h, r]:g}.",
                job=tuple(who),
                time=float(t),
            )
        )
    return out


def evaluate_objective(instance: Any, schedule: Any, name: str) -> float:
    """``total_weighted_completion_time`` (sum w_j (t_j + d_j), every job must be scheduled),
    ``mean_completion_time``, ``makespan``, or ``scheduled_weight`` (sum of w_j over scheduled jobs, (8))."""
    if name == "scheduled_weight":
        return float(sum(j.weight for j in instance.jobs if j.id in schedule))
    missing = [j.id for j in instance.jobs if j.id not in schedule]
    if missing:
        raise ValueError(f"jobs {missing} are not scheduled; {name} needs every job")
    comps = [(j.weight, float(schedule[j.id].completion)) for j in instance.jobs]
    if name == "total_weighted_completion_time":
        return float(sum(w * c for w, c in comps))
    if name == "mean_completion_time":
        return float(sum(c for _, c in comps) / len(comps))
    if name == "makespan":
        return float(max(c for _, c in comps))
    raise UnknownNameError(
        f"Unknown objective {name!r} for kind 'elastic'; use total_weighted_completion_time, "
        f"mean_completion_time, makespan or scheduled_weight."
    )


def label_check(label: str) -> Callable[[Any, Any], Iterable[Violation]]:
    """The verifier's check of one label of ``formulations/elastic.md#model``: the violations of
    :func:`violations` that carry it."""

    def check(instance: Any, schedule: Any) -> Iterable[Violation]:
        return [v for v in violations(instance, schedule) if v.label == label]

    check.__name__ = f"check_{label}"
    check.__doc__ = f"({label}) of formulations/elastic.md#model."
    return check
