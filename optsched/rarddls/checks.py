"""Verifier checks for kind ``rarddls`` (labels of ``formulations/rarddls.md#verifier``).

The shared cluster checks (``demand`` (1), ``capacity`` (2), ...) plus ``non_preemptive`` (3),
``slotted`` (integer start and end slots), ``gpu_exclusive`` (GPU ids: each GPU holds one job at a
time, ids within the server) and ``contention_progress`` ((6)-(9) recomputed slot by slot from all
segments: each job must end in the first slot its iterations are done). This slot-by-slot
recomputation is written independently of the event-driven :func:`optsched.rarddls.evaluate.replay`
used by the algorithms and the exact decoders; the evaluator registered for ``makespan`` and
``mean_jct`` uses it too.

Tested in ``tests/rarddls/test_model.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from optsched.core.objectives import objective_value
from optsched.verify import Violation
from optsched.verify.common import gpu_exclusive_check

TOL = 1e-9


def _segs(instance, schedule):
    out = {}
    for j in instance.jobs:
        if j.id in schedule and schedule.segments(j.id):
            out[j.id] = schedule.segments(j.id)[0]
    return out


def slot_completions(instance: Any, schedule: Any, *, max_slots: int = 10_000_000) -> dict[Any, int]:
    """Completion slot (end of the last active slot) of every job, recomputed slot by slot from the
    start and the placement of each job's first segment, (6)-(9)."""
    segs = _segs(instance, schedule)
    jobs = [(i, j) for i, j in enumerate(instance.jobs) if j.id in segs]
    start = {j.id: int(round(segs[j.id].start)) for _, j in jobs}
    done = {j.id: 0 for _, j in jobs}
    comp: dict[Any, int] = {}
    if not jobs:
        return comp
    t = min(start.values())
    steps = 0
    while len(comp) < len(jobs):
        active = [(i, j) for i, j in jobs if start[j.id] <= t and j.id not in comp]
        # (6): number of active jobs split on each server
        split_on: dict[int, int] = {}
        for _, j in active:
            for s, y in segs[j.id].placement.items():
                if 0 < y < j.gpus:
                    split_on[s] = split_on.get(s, 0) + 1
        for i, j in active:
            pl = segs[j.id].placement
            mine = [s for s, y in pl.items() if 0 < y < j.gpus]
            p = max((split_on[s] for s in mine), default=0)
            r = sum(1 for y in pl.values() if y > 0)
            done[j.id] += instance.phi(i, r, p)  # (7)-(9)
        for _, j in active:
            if done[j.id] >= j.iterations:
                comp[j.id] = t + 1
        t += 1
        steps += 1
        if steps > max_slots:
            raise RuntimeError(f"slot_completions: more than {max_slots} slots; is phi_j = 0 somewhere?")
    return comp


def check_slotted(instance: Any, schedule: Any) -> Iterable[Violation]:
    """Start and end of every segment are whole slots >= 0."""
    for jid, segs in schedule.items():
        for sg in segs:
            for what, v in (("start", sg.start), ("end", sg.end)):
                if abs(v - round(v)) > TOL or v < 0:
                    yield Violation("slotted", f"Job {jid!r} has {what} {v:g}, not a whole slot >= 0.", job=jid, time=v)


#: (shared) every segment names its GPUs, and no GPU holds two jobs at once
check_gpu_exclusive = gpu_exclusive_check(require_ids=True)


def check_contention_progress(instance: Any, schedule: Any) -> Iterable[Violation]:
    """(6)-(9) each job's segment ends in the first slot its iterations are done, recomputed slot by slot."""
    segs = _segs(instance, schedule)
    comp = slot_completions(instance, schedule)
    for j in instance.jobs:
        if j.id not in segs:
            continue
        end = segs[j.id].end
        if abs(end - comp[j.id]) > TOL:
            yield Violation(
                "contention_progress",
                f"{j.label} ends at slot {end:g}; under (6)-(9) its {j.iterations} "
                f"iterations are done at the end of slot {comp[j.id] - 1} "
                f"(completion {comp[j.id]}).",
                job=j.id,
                time=end,
            )


def evaluate_objective(instance: Any, schedule: Any, name: str) -> float:
    """``makespan`` (max_j C_j) or ``mean_jct`` (mean C_j), from the slot-by-slot completions."""
    comp = slot_completions(instance, schedule)
    if name == "makespan":
        return float(max(comp.values()))
    if name == "mean_jct":
        return float(sum(comp.values()) / len(comp))
    return objective_value(instance, schedule, name)
