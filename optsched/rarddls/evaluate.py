"""The slotted evaluator of (6)-(9): start slots and placements -> completion slots.

Job j holds its placement from slot a_j on (placement fixed for life, (3)); in every slot it is
active it completes phi_j[t] = floor(1 / tau_j[t]) iterations, tau_j[t] from (8) at the
contention count p_j[t] of (6); it ends in the first slot whose cumulative sum reaches F_j and
frees its GPUs after that slot. Completion C_j is the end of that slot (so a job that needs n
slots from a_j has C_j = a_j + n, and the makespan is max_j C_j in slots).

The evaluator is event driven (rates are constant between starts and completions); the
verifier recomputes the same quantities slot by slot (:mod:`optsched.rarddls.checks`).

Tested in ``tests/rarddls/test_model.py`` and ``tests/rarddls/test_milp_cuts.py``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from optsched.core.schedule import Schedule
from optsched.exceptions import InvalidScheduleError
from optsched.verify import verify_checks

Placement = Mapping[int, int]  # server -> GPUs


def split_servers(placement: Placement, gpus: int) -> list[int]:
    """Servers s with 0 < y_js < G_j (the job is split there, (6))."""
    return [s for s, y in placement.items() if 0 < y < gpus]


def contention_counts(instance, active: Sequence[int], placements: Sequence[Placement]) -> dict[int, int]:
    """(6) p_j for each active job index: max over its split servers of the number of active jobs split there
    (itself included); 0 for a job on one server."""
    per_server: dict[int, int] = {}
    splits = {}
    for j in active:
        sp = split_servers(placements[j], instance.jobs[j].gpus)
        splits[j] = sp
        for s in sp:
            per_server[s] = per_server.get(s, 0) + 1
    return {j: max((per_server[s] for s in splits[j]), default=0) for j in active}


def rates(instance, active: Sequence[int], placements: Sequence[Placement]) -> dict[int, int]:
    """(7)-(9) iterations per slot of each active job index."""
    p = contention_counts(instance, active, placements)
    out = {}
    for j in active:
        r = sum(1 for y in placements[j].values() if y > 0)
        out[j] = instance.phi(j, r, p[j])
    return out


@dataclass
class Replay:
    """Completion slots ``completion[j]`` (end of the last slot) per job index, and the ``makespan``."""

    completion: list[int]

    @property
    def makespan(self) -> int:
        return max(self.completion)


def replay(
    instance,
    starts: Sequence[int],
    placements: Sequence[Placement],
    stop_at: int | None = None,
    *,
    validate: bool = True,
) -> Replay:
    """Event-driven slotted evaluation of (6)-(9), of decisions checked by the verifier first.

    Parameters
    ----------
    starts : sequence of int
        a_j per job index (slot, >= 0).
    placements : sequence of mapping server -> GPUs
        y_js per job index (fixed for life); the GPUs of a job sum to G_j.
    stop_at : int, optional
        Stop once the clock reaches this slot (jobs not done get completion -1; no validation then).
    validate : bool
        True (default): the decisions must form a feasible schedule, checked by the verifier's
        checks of the kind ((1) demand, (2) capacity, slotted starts >= 0, ...) on the replayed
        schedule; False evaluates them as given (what-if evaluations of decisions that need not be
        feasible, e.g. the rate of two jobs forced onto the same GPUs).

    Returns
    -------
    Replay
        Completions C_j = a_j + (slots needed).

    Raises
    ------
    InvalidScheduleError
        Not one start and one placement per job; a start that is not a whole slot >= 0; a server that
        does not exist; or (``validate``) any violation the verifier finds (over capacity, GPUs that do
        not sum to G_j, ...), named by its label.

    Examples
    --------
    >>> from optsched.rarddls import toy_instance
    >>> inst = toy_instance()
    >>> replay(inst, [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}]).completion
    [5, 5, 9]
    >>> replay(inst, [0, 0, 20], [{0: 1, 1: 1}, {0: 1, 1: 1}, {0: 1}]).completion  # both split: p = 2
    [15, 15, 24]
    >>> replay(inst, [0, 0, 20], [{0: 2}, {0: 2}, {0: 1}])
    Traceback (most recent call last):
    ...
    optsched.exceptions.InvalidScheduleError: replay: the decisions are not a feasible schedule: [capacity] ...
    """
    _check_shape(instance, starts, placements, "replay")
    rep = replay_unchecked(instance, starts, placements, stop_at)
    if validate and stop_at is None:
        sched = _schedule_no_ids(instance, starts, placements, rep.completion)
        validate_decisions(instance, sched, "replay")
    return rep


def _check_shape(instance, starts, placements, who: str) -> None:
    """One whole start slot >= 0 and one placement over existing servers per job."""
    n = instance.n_jobs
    if len(starts) != n or len(placements) != n:
        raise InvalidScheduleError(
            f"{who} needs one start and one placement per job ({n}); got {len(starts)} and {len(placements)}."
        )
    S = instance.cluster.n_servers
    for i, (a, pl) in enumerate(zip(starts, placements, strict=True)):
        label = instance.jobs[i].label
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or a != int(a) or a < 0:
            raise InvalidScheduleError(
                f"The start of {label} (index {i}) must be a whole slot >= 0; got {a!r}. Starts are slot indices."
            )
        if not isinstance(pl, Mapping):
            raise InvalidScheduleError(f"The placement of {label} (index {i}) must map server -> GPUs; got {pl!r}.")
        for s_, y in pl.items():
            if isinstance(s_, bool) or not isinstance(s_, numbers.Integral) or not 0 <= s_ < S:
                raise InvalidScheduleError(f"The placement of {label} names server {s_!r}; servers are 0..{S - 1}.")
            if isinstance(y, bool) or not isinstance(y, numbers.Integral) or y < 0:
                raise InvalidScheduleError(
                    f"The placement of {label} puts {y!r} GPUs on server {s_}; give a whole number >= 0."
                )


def _schedule_no_ids(instance, starts, placements, completion) -> Schedule:
    sched = Schedule()
    for i, job in enumerate(instance.jobs):
        pl = {int(s): int(y) for s, y in placements[i].items() if y > 0}
        sched.add(job.id, float(starts[i]), float(completion[i]), pl)
    return sched


def validate_decisions(instance, schedule: Schedule, who: str, *, skip: tuple[str, ...] = ("gpu_exclusive",)) -> None:
    """Run the verifier's checks of the kind on ``schedule`` (except ``skip``: decisions carry no GPU
    ids) and raise :class:`InvalidScheduleError` naming every violated label."""
    bad = verify_checks(instance, schedule, skip=skip)
    if bad:
        shown = "; ".join(f"[{v.label}] {v.message.rstrip('.')}" for v in bad[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise InvalidScheduleError(
            f"{who}: the decisions are not a feasible schedule: {shown}{more}. Fix the starts and placements "
            f"(or pass validate=False to evaluate them as given)."
        )


def replay_unchecked(
    instance, starts: Sequence[int], placements: Sequence[Placement], stop_at: int | None = None
) -> Replay:
    """:func:`replay` without any check (the algorithms' inner loop)."""
    n = instance.n_jobs
    rem = [float(j.iterations) for j in instance.jobs]
    comp: list[int | None] = [None] * n
    order = sorted(range(n), key=lambda j: starts[j])
    nxt = 0
    t = min(starts)
    active: list[int] = []
    while True:
        if stop_at is not None and t >= stop_at:  # the clock reached it: jobs starting there never run
            break
        while nxt < n and starts[order[nxt]] <= t:
            active.append(order[nxt])
            nxt += 1
        if not active:
            if nxt >= n:
                break
            t = starts[order[nxt]]
            continue
        ph = rates(instance, active, placements)
        stuck = [j for j in active if ph[j] <= 0]
        if stuck:
            raise InvalidScheduleError(
                f"{instance.jobs[stuck[0]].label} makes no progress from slot {t} on (phi_j = 0 at its contention "
                f"count (6)): more jobs are split on one of its servers than that server has GPUs, so the "
                f"decisions are over capacity (2) and it would never finish."
            )
        # slots until the first completion (at these rates) or the next start
        k = min(-(-int(rem[j]) // ph[j]) for j in active)
        if nxt < n:
            k = min(k, starts[order[nxt]] - t)
        for j in active:
            rem[j] -= ph[j] * k
        t += k
        still = []
        for j in active:
            if rem[j] <= 0:
                comp[j] = t
            else:
                still.append(j)
        active = still
        if stop_at is not None and t >= stop_at:
            break
    return Replay([int(c) if c is not None else -1 for c in comp])


def assign_gpu_ids(
    instance, starts: Sequence[int], completion: Sequence[int], placements: Sequence[Placement]
) -> list[dict[int, tuple[int, ...]]]:
    """GPU ids per server for each job: the lowest ids free at its start (interval colouring per
    server; always succeeds when the per-slot capacity (2) holds)."""
    n = instance.n_jobs
    free_at = [[0] * g for g in instance.O]
    ids: list[dict[int, tuple[int, ...]]] = [dict() for _ in range(n)]
    for j in sorted(range(n), key=lambda j: (starts[j], j)):
        for s, y in sorted(placements[j].items()):
            cand = [g for g in range(instance.O[s]) if free_at[s][g] <= starts[j]][:y]
            if len(cand) < y:
                raise InvalidScheduleError(
                    f"Server {s} has fewer than {y} GPUs free at slot {starts[j]} for "
                    f"{instance.jobs[j].label}: capacity (2) is violated."
                )
            for g in cand:
                free_at[s][g] = completion[j]
            ids[j][s] = tuple(cand)
    return ids


def build_schedule(
    instance,
    starts: Sequence[int],
    placements: Sequence[Placement],
    gpu_ids: Sequence[Mapping[int, Sequence[int]]] | None = None,
    completion: Sequence[int] | None = None,
    *,
    validate: bool = True,
) -> Schedule:
    """A :class:`~optsched.core.Schedule` with one segment [a_j, C_j) per job, its placement and GPU ids
    (GPU ids from :func:`assign_gpu_ids` unless given).

    Without ``completion`` the completions come from :func:`replay`, which validates the decisions through
    the verifier first (InvalidScheduleError for decisions that cannot run); with ``completion`` the schedule
    is built as given (e.g. to show the verifier a wrong one), and ``optsched.verify`` judges it; so it is
    with ``validate=False``.

    >>> from optsched.rarddls import toy_instance
    >>> build_schedule(toy_instance(), [0, 0, 5], [{0: 2}, {1: 2}, {0: 1}]).segments(2)[0].end
    9.0
    """
    if completion is not None:
        comp = list(completion)
    else:
        comp = replay(instance, starts, placements, validate=validate).completion
    ids = list(gpu_ids) if gpu_ids is not None else assign_gpu_ids(instance, starts, comp, placements)
    sched = Schedule()
    for i, job in enumerate(instance.jobs):
        pl = {int(s): int(y) for s, y in placements[i].items() if y > 0}
        sched.add(job.id, float(starts[i]), float(comp[i]), pl, {int(s): tuple(v) for s, v in ids[i].items()})
    return sched


def decisions(instance, schedule: Schedule) -> tuple[list[int], list[dict[int, int]]]:
    """Start slots and placements per job index (the order of ``instance.jobs``), read from a schedule
    (first segment of each job, found by job id): the inverse of :func:`build_schedule`.

    >>> from optsched.rarddls import toy_instance, sjf_bco
    >>> inst = toy_instance()
    >>> starts, placements = decisions(inst, sjf_bco(inst).schedule)
    >>> replay(inst, starts, placements).makespan
    9
    """
    starts, pls = [], []
    for job in instance.jobs:
        seg = schedule.segments(job.id)[0]
        starts.append(int(round(seg.start)))
        pls.append(dict(seg.placement))
    return starts, pls
