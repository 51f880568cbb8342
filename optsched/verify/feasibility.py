"""Independent feasibility checks of cluster schedules, for any kind whose schedules are
:class:`optsched.core.Schedule`s of cluster jobs.

Everything is recomputed from the instance and the schedule alone; the solver's or the
algorithm's own report is never trusted. Labels are those of ``formulations/rigid.md`` (V1)-(V7)
(V for the verifier; the simulator's rules are R1-R12, ``formulations/lazer.md#simulator-rules``).
No kind is registered here: each paper package (``rigid``, ``asrpt``, ``rarddls``, ...) registers
these checks for its kind with :func:`register_cluster_checks` and adds its own.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from optsched.core.units import fmt_number as _n  # every integer digit, not 1.29018e+07
from optsched.verify.common import check_gpu_exclusive
from optsched.verify.registry import register_check
from optsched.verify.report import Violation

TOL = 1e-6


#: Within :func:`shared_columns`: {(what, id(object)): (object, value)}, the one-segment lists and
#: columns computed so far (the object kept, so that its id names it while the block runs).
_SHARED: dict | None = None


@contextlib.contextmanager
def shared_columns() -> Iterator[None]:
    """Within the block, the one-segment lists and the columns that several checks read are
    computed once per schedule and instance instead of once per check (the verifier runs its
    checks in one such block: the schedule does not change while they run).

    >>> with shared_columns():
    ...     _column([1.0, 2.0], "real").tolist()
    [1.0, 2.0]
    """
    global _SHARED
    saved, _SHARED = _SHARED, {}
    try:
        yield
    finally:
        _SHARED = saved


def _shared(what: str, obj: Any, compute: Any) -> Any:
    """``compute()``, once per ``(what, obj)`` within :func:`shared_columns` (every time outside)."""
    if _SHARED is None:
        return compute()
    key = (what, id(obj))
    hit = _SHARED.get(key)
    if hit is None or hit[0] is not obj:
        hit = _SHARED[key] = (obj, compute())
    return hit[1]


def _single_runs(instance: Any, schedule: Any) -> list[Any] | None:
    """:func:`_single_runs_now`, shared within :func:`shared_columns`."""
    return _shared(f"runs of {id(instance)}", schedule, lambda: _single_runs_now(instance, schedule))


def _single_runs_now(instance: Any, schedule: Any) -> list[Any] | None:
    """The one segment of each job of ``instance``, in its order, when every job has exactly one
    and the schedule no other job (a non-preemptive schedule; None otherwise): what the checks
    below test column by column with NumPy before they look at jobs one by one (a large instance
    has millions of jobs). They then look one by one only when a column finds a violation, so
    the violations and their messages are those of the one-by-one checks."""
    if not hasattr(schedule, "segment_lists"):  # another kind's schedule: the checks one by one
        return None
    runs = schedule.segment_lists()
    if len(runs) != instance.n_jobs:
        return None
    get = runs.get
    lists = [get(j.id, ()) for j in instance.jobs]
    if any(len(segs) != 1 for segs in lists):
        return None
    return [segs[0] for segs in lists]


def _segment_lists(schedule: Any) -> Any:
    """{job id: segments} of ``schedule``, without copies where it offers a view."""
    view = getattr(schedule, "segment_lists", None)
    return view() if view is not None else dict(schedule.items())


def _column(items: Any, name: str) -> np.ndarray:
    """``name`` of every item, as floats (shared within :func:`shared_columns`: do not change it)."""
    return _shared(name, items, lambda: np.fromiter((getattr(x, name) for x in items), float, len(items)))


def check_all_scheduled(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(V1) one_schedule_per_job: every job of the instance has segments; no unknown job."""
    if _single_runs(instance, schedule) is not None:
        return
    ids = set(instance.job_ids)
    for j in instance.jobs:
        if j.id not in schedule or not schedule.segments(j.id):
            yield Violation("one_schedule_per_job", f"{j.label} is not scheduled.", job=j.id)
    for jid in schedule.job_ids:
        if jid not in ids:
            yield Violation(
                "one_schedule_per_job", f"The schedule has job {jid!r}, which is not in the instance.", job=jid
            )


def check_release(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(V2) release: no job starts before its arrival."""
    segs = _single_runs(instance, schedule)
    if segs is not None and not (_column(segs, "start") < _column(instance.jobs, "arrival") - TOL).any():
        return
    for j in instance.jobs:
        if j.id in schedule and schedule.segments(j.id):
            s = schedule.start(j.id)
            if s < j.arrival - TOL:
                yield Violation(
                    "release", f"{j.label} starts at {_n(s)} before its arrival {_n(j.arrival)}.", job=j.id, time=s
                )


def check_demand(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(V3) demand: each segment holds exactly the job's GPUs, on existing servers, on one
    server when the job is single-server."""
    n_srv = instance.cluster.n_servers
    segs = _single_runs(instance, schedule)
    if segs is not None and all(
        max(sg.placement, default=0) < n_srv
        and sum(sg.placement.values()) == j.gpus
        and (not j.single_server or len(sg.placement) - list(sg.placement.values()).count(0) <= 1)
        for j, sg in zip(instance.jobs, segs, strict=True)
    ):
        return
    for j in instance.jobs:
        for seg in schedule.segments(j.id) if j.id in schedule else []:
            bad = [m for m in seg.placement if m >= n_srv]
            if bad:
                yield Violation(
                    "demand",
                    f"{j.label} is placed on server(s) {bad}; the cluster has servers 0..{n_srv - 1}.",
                    job=j.id,
                    time=seg.start,
                )
                continue
            if seg.gpus != j.gpus:
                yield Violation(
                    "demand",
                    f"{j.label} holds {seg.gpus} GPUs in [{_n(seg.start)}, {_n(seg.end)}); it needs {j.gpus}.",
                    job=j.id,
                    time=seg.start,
                )
            if j.single_server and sum(1 for g in seg.placement.values() if g > 0) > 1:
                yield Violation(
                    "demand",
                    f"{j.label} is single-server but spans servers {list(seg.placement)}.",
                    job=j.id,
                    time=seg.start,
                )


def check_no_self_overlap(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(V4) no_self_overlap: segments of one job do not overlap in time."""
    for jid, segs in _segment_lists(schedule).items():
        if len(segs) < 2:  # nothing to compare (most jobs: no list of pairs for them)
            continue
        for a, b in itertools.pairwise(segs):
            if b.start < a.end - TOL:
                yield Violation(
                    "no_self_overlap",
                    f"Job {jid!r} runs twice at once: [{_n(a.start)}, {_n(a.end)}) and [{_n(b.start)}, {_n(b.end)}).",
                    job=jid,
                    time=b.start,
                )


def usage_profile(instance: Any, schedule: Any, resource: str = "gpus") -> tuple[np.ndarray, np.ndarray]:
    """Step function of use per server: ``times`` (k,) and ``use`` (k, n_servers); ``use[i]`` holds
    on ``[times[i], times[i+1])``.

    Examples
    --------
    >>> from optsched.core import Cluster, Instance, Job, Schedule
    >>> from optsched.verify import usage_profile
    >>> inst = Instance(Cluster.homogeneous(1, 4), [Job(0, work=2, gpus=2), Job(1, work=1, gpus=1)])
    >>> sched = Schedule.from_starts({0: 2, 1: 1}, {0: 0, 1: 0}, {0: {0: 2}, 1: {0: 1}})
    >>> times, use = usage_profile(inst, sched)
    >>> times.tolist(), use[:, 0].tolist()
    ([0.0, 1.0, 2.0], [3.0, 2.0, 0.0])
    """
    n = instance.cluster.n_servers
    if resource == "gpus":
        return _gpu_profile(schedule, n)
    ev: list[tuple[float, int, float]] = []
    jobs = {j.id: j for j in instance.jobs}
    for jid, segs in schedule.items():
        job = jobs.get(jid)
        for seg in segs:
            if seg.end <= seg.start:
                continue
            for m, g in seg.placement.items():
                if m >= n:
                    continue
                if resource == "gpus":
                    amount = float(g)
                else:
                    explicit = seg.uses(m, resource)
                    if explicit is not None:  # the segment says what it uses there
                        amount = explicit
                    elif job is None or seg.usage:
                        continue
                    else:
                        # a job's resource demand is shared among its servers in proportion to GPUs
                        amount = job.resources.get(resource, 0.0) * g / max(1, seg.gpus)
                ev.append((seg.start, m, amount))
                ev.append((seg.end, m, -amount))
    if not ev:
        return np.zeros(0), np.zeros((0, n))
    times = np.array(sorted({t for t, _, _ in ev}))
    idx = {t: i for i, t in enumerate(times)}
    delta = np.zeros((len(times), n))
    for t, m, a in ev:
        delta[idx[t], m] += a
    return times, np.cumsum(delta, axis=0)


def _gpu_profile(schedule: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`usage_profile` of the GPUs, with NumPy: the same times and uses (the uses are sums of
    whole GPU counts, exact in any order)."""
    rows = [
        (seg.start, seg.end, m, g)
        for segs in _segment_lists(schedule).values()
        for seg in segs
        if seg.end > seg.start
        for m, g in seg.placement.items()
        if m < n
    ]
    if not rows:
        return np.zeros(0), np.zeros((0, n))
    table = np.array(rows, dtype=float)  # server indices and GPU counts are exact as floats
    t0, t1, a = table[:, 0], table[:, 1], table[:, 3]
    m = table[:, 2].astype(np.int64)
    times = np.unique(np.concatenate([t0, t1]))
    delta = np.zeros((len(times), n))
    np.add.at(delta, (np.searchsorted(times, t0), m), a)
    np.add.at(delta, (np.searchsorted(times, t1), m), -a)
    return times, np.cumsum(delta, axis=0)


def check_capacity(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(V5) capacity: GPUs in use on each server never exceed its GPUs."""
    times, use = usage_profile(instance, schedule)
    cap = instance.cluster.gpus
    for m in range(instance.cluster.n_servers):
        over: list[int] = list(np.nonzero(use[:, m] > cap[m] + TOL)[0]) if len(times) else []
        for i in list(over)[:5]:
            t = float(times[i])
            who = [jid for jid, segs in schedule.items() for s in segs if m in s.placement and s.start <= t < s.end]
            yield Violation(
                "capacity",
                f"Server {m} uses {_n(use[i, m])} GPUs at time {_n(t)} (jobs {who}); it has {cap[m]}.",
                job=tuple(who),
                time=t,
            )


def check_resources(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(V6) resource_capacity: other resources (cpu, memory, ...) within each server's capacity,
    at every instant (a sweep over segment ends), from the segments' explicit resource vectors or
    else the jobs' declared demands shared in proportion to GPUs. A resource no server declares
    has capacity 0."""
    names = sorted(
        {r for j in instance.jobs for r in j.resources}
        | {r for _, segs in schedule.items() for sg in segs for vec in (sg.usage or {}).values() for r in vec}
    )
    for r in names:
        times, use = usage_profile(instance, schedule, resource=r)
        for m, srv in enumerate(instance.cluster.servers):
            cap = srv.resources.get(r, 0.0)
            over: list[int] = list(np.nonzero(use[:, m] > cap + TOL)[0]) if len(times) else []
            for i in list(over)[:3]:
                t = float(times[i])
                who = [
                    jid for jid, segs in schedule.items() for sg in segs if m in sg.placement and sg.start <= t < sg.end
                ]
                yield Violation(
                    "resource_capacity",
                    f"Server {m} uses {_n(use[i, m])} of '{r}' at time {_n(t)} (jobs {who}); it has {_n(cap)}"
                    + ("" if r in srv.resources else f" (server {m} declares no '{r}')")
                    + ".",
                    job=tuple(who),
                    time=t,
                )


def check_work(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(V7) work: at rate 1 the segments of a job add up to its work."""
    segs = _single_runs(instance, schedule)
    if segs is not None:
        done = _column(segs, "end") - _column(segs, "start")  # the sum of one duration, as below
        work = _column(instance.jobs, "work")
        if not (np.abs(done - work) > TOL * np.maximum(1.0, work)).any():
            return
    for j in instance.jobs:
        if j.id not in schedule:
            continue
        done = sum(s.duration for s in schedule.segments(j.id))
        if abs(done - j.work) > TOL * max(1.0, j.work):
            yield Violation("work", f"{j.label} runs {_n(done)} s in total; its work is {_n(j.work)} s.", job=j.id)


_CLUSTER_CHECKS = [
    ("one_schedule_per_job", check_all_scheduled),
    ("release", check_release),
    ("demand", check_demand),
    ("no_self_overlap", check_no_self_overlap),
    ("capacity", check_capacity),
    ("resource_capacity", check_resources),
    ("gpu_exclusive", check_gpu_exclusive),
]


def register_cluster_checks(kind: str, *, work_at_rate_one: bool = True) -> None:
    """Register the cluster-schedule checks (V1)-(V6), ``gpu_exclusive`` (where segments name their
    GPUs), and (V7) if jobs run at rate 1, for ``kind``."""
    for label, f in _CLUSTER_CHECKS:
        register_check(kind, label)(f)
    if work_at_rate_one:
        register_check(kind, "work")(check_work)
