"""Checks shared by several papers' kinds: ``non_preemptive`` and ``gpu_exclusive``.

``resource_capacity`` (every resource, every server, every instant, by a sweep over segment
ends) is :func:`optsched.verify.feasibility.check_resources`, registered with the cluster checks.
A paper package registers what its model needs::

    from optsched.verify import register_check
    from optsched.verify.common import check_gpu_exclusive, check_non_preemptive

    register_check("mykind", "non_preemptive")(check_non_preemptive)

``gpu_exclusive`` is one of the cluster checks (:func:`register_cluster_checks`): it looks at
segments that name their GPUs (``Segment.gpu_ids``) and says nothing about those that do not;
:func:`gpu_exclusive_check` with ``require_ids=True`` makes the ids compulsory (a model that
places jobs on specific GPUs, e.g. rings).

Tested in ``tests/verify/test_common_checks.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from optsched.core.units import fmt_number as _n  # every integer digit, not 1.29018e+07
from optsched.verify.report import Violation

TOL = 1e-6


def check_non_preemptive(instance: Any, schedule: Any) -> Iterable[Violation]:
    """non_preemptive: each job runs in one segment (one start, one placement, to completion).

    Examples
    --------
    >>> from optsched.core import Cluster, Instance, Job, Schedule
    >>> inst = Instance(Cluster.homogeneous(1, 1), [Job(0, work=2)])
    >>> s = Schedule(); s.add(0, 0, 1, {0: 1}); s.add(0, 2, 3, {0: 1})
    >>> [v.label for v in check_non_preemptive(inst, s)]
    ['non_preemptive']
    """
    for j in instance.jobs:
        if j.id in schedule and len(schedule.segments(j.id)) > 1:
            yield Violation(
                "non_preemptive",
                f"{j.label} runs in {len(schedule.segments(j.id))} segments; jobs of "
                f"this model run once, from start to completion, on one placement.",
                job=j.id,
            )


def gpu_exclusive_check(*, require_ids: bool = False) -> Callable[[Any, Any], Iterable[Violation]]:
    """The ``gpu_exclusive`` check; with ``require_ids`` a segment without ``gpu_ids`` on every
    server it uses is a violation too.

    Examples
    --------
    >>> from optsched.core import Cluster, Instance, Job, Schedule
    >>> from optsched.verify import check_gpu_exclusive  # = gpu_exclusive_check()
    >>> inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=2), Job(1, work=2)])
    >>> sched = Schedule()
    >>> sched.add(0, 0, 2, {0: 1}, gpu_ids={0: [0]})
    >>> sched.add(1, 1, 3, {0: 1}, gpu_ids={0: [0]})  # GPU 0 of server 0 is still job 0's
    >>> [v.label for v in check_gpu_exclusive(inst, sched)]
    ['gpu_exclusive']
    """

    def check(instance: Any, schedule: Any) -> Iterable[Violation]:
        caps = list(instance.cluster.gpus)
        held: dict[tuple[int, int], list[tuple[float, float, Any]]] = {}
        for jid, segs in schedule.items():
            for sg in segs:
                if sg.end <= sg.start:
                    continue
                ids = sg.gpu_ids or {}
                if not ids and not require_ids:  # nothing named, nothing asked (most segments)
                    continue
                used = {m for m, g in sg.placement.items() if g > 0}
                if require_ids and set(ids) != used:
                    yield Violation(
                        "gpu_exclusive",
                        f"Job {jid!r} does not name its GPUs (gpu_ids) on every server "
                        f"it uses in [{_n(sg.start)}, {_n(sg.end)}): servers {sorted(used)}, "
                        f"ids for {sorted(ids)}.",
                        job=jid,
                        time=sg.start,
                    )
                for m, gids in ids.items():
                    for g in gids:
                        if m >= len(caps) or g >= caps[m]:
                            n = caps[m] if m < len(caps) else 0
                            yield Violation(
                                "gpu_exclusive",
                                f"Job {jid!r} uses GPU {g} of server {m}, which has GPUs 0..{n - 1}.",
                                job=jid,
                                time=sg.start,
                            )
                            continue
                        held.setdefault((m, g), []).append((sg.start, sg.end, jid))
        for (m, g), iv in sorted(held.items()):
            iv.sort(key=lambda x: (x[0], x[1]))
            end, owner = iv[0][1], iv[0][2]
            for b0, b1, jb in iv[1:]:
                if b0 < end - TOL:
                    yield Violation(
                        "gpu_exclusive",
                        f"GPU {g} of server {m} is held by jobs {owner!r} and {jb!r} at "
                        f"once, from {_n(b0)} to {_n(min(end, b1))}.",
                        job=(owner, jb),
                        time=b0,
                    )
                if b1 > end:
                    end, owner = b1, jb

    check.__name__ = "check_gpu_exclusive_required" if require_ids else "check_gpu_exclusive"
    check.__doc__ = "gpu_exclusive: no GPU id is held by two jobs at overlapping times, and every id exists" + (
        " (every segment must name its GPUs)." if require_ids else " (segments without ids pass)."
    )
    return check


check_gpu_exclusive = gpu_exclusive_check()
"""``gpu_exclusive`` where ids are given (segments without ``gpu_ids`` are not checked): the check
``check_feasibility`` runs; ``gpu_exclusive_check(require_ids=True)`` also flags segments without ids."""
