"""Mutable simulation-time objects: :class:`SimJob` (a job as the engine tracks it) and :class:`Timer`.

Policies read these objects (and may keep references to them) but change them only through the
simulator's actions (:meth:`Simulator.start`, :meth:`Simulator.preempt`, ...).

Tested in ``tests/sim/test_engine_structure.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from operator import attrgetter
from types import MappingProxyType
from typing import Any

import numpy as np

from optsched.exceptions import SimulationError
from optsched.sim.model.resources import ids_of

_NO_RESOURCES: Mapping[str, float] = MappingProxyType({})  # shared, read-only: most jobs use GPUs only


class Phase(StrEnum):
    """A job's phase (``SimJob.phase``, R1 of :mod:`optsched.sim.rules`); members compare equal to
    their strings (``"waiting"``).

    Examples
    --------
    >>> from optsched.sim import Phase
    >>> Phase.WAITING == "waiting", str(Phase.DONE)
    (True, 'done')
    """

    PENDING = "pending"  # not arrived yet
    WAITING = "waiting"  # arrived, holds no GPU
    LOADING = "loading"  # holds GPUs, loading (model, data, checkpoint) before training
    TRAINING = "training"  # holds GPUs, making progress at its rate
    SAVING = "saving"  # holds GPUs, pause-and-save after a preemption
    DONE = "done"  # finished all its work
    FAILED = "failed"  # terminated early at a checkpoint (its outcome, known only to the engine)


PENDING = Phase.PENDING
"""Not arrived yet."""
WAITING = Phase.WAITING
"""Arrived; holds no GPU."""
LOADING = Phase.LOADING
"""Holds GPUs, loading (model, data, checkpoint) before training."""
TRAINING = Phase.TRAINING
"""Holds GPUs, making progress at its rate."""
SAVING = Phase.SAVING
"""Holds GPUs, pausing and saving after a preemption."""
DONE = Phase.DONE
"""Finished all its work."""
FAILED = Phase.FAILED
"""Terminated early at a checkpoint (an outcome known only to the engine)."""
PHASES = (PENDING, WAITING, LOADING, TRAINING, SAVING, DONE, FAILED)
"""Every phase of a simulated job, in life order."""


class SimJob:
    """A job inside the simulator.

    Static attributes (from the input): ``id``, ``index`` (position in the input), ``arrival``,
    ``work`` (total work in work units; seconds at rate 1), ``gpus``, ``weight``, ``single_server``,
    ``stages`` (cumulative work at each stage end; the last equals ``work``), ``attrs`` (user,
    group, predictions, trace fields; free-form).

    Dynamic attributes: ``phase`` (one of :data:`PHASES`), ``placement`` ({server: GPUs} while it
    holds GPUs, else ``None``), ``gpu_ids`` ({server: GPU ids} while it holds GPUs), ``usage``
    ({server: {resource: amount}} of other resources while it holds them), ``config`` (what the
    policy attached to its start), ``rate`` (work units per second while training), ``stage`` (number
    of completed stages), ``first_start``, ``completion``, and the accumulators ``loading_time``,
    ``training_time``, ``saving_time``, ``lost_work`` (work rolled back on preemption),
    ``futile_time`` (loading time wasted by preemptions: a load cut short, or a whole load followed
    by no training before the preemption, Lazer's eq. (2)), ``n_futile``, ``n_preemptions``,
    ``n_starts``.

    Use :meth:`done_work` / :meth:`remaining` for progress at the current time (the engine updates
    the stored ``_done`` lazily).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Simulator, get_policy
    >>> sim = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=4)], get_policy("fifo"))
    >>> res = sim.run(until=1)
    >>> job = sim.job(0)
    >>> str(job.phase), job.remaining(1.0), job.done_work(2.5)
    ('training', 3.0, 2.5)
    """

    __slots__ = (
        "id",
        "index",
        "arrival",
        "work",
        "gpus",
        "weight",
        "single_server",
        "stages",
        "attrs",
        "_phase",
        "placement",
        "rate",
        "stage",
        "first_start",
        "completion",
        "loading_time",
        "training_time",
        "saving_time",
        "lost_work",
        "futile_time",
        "n_preemptions",
        "n_starts",
        "n_futile",
        "finish",
        "resources",
        "gpu_masks",
        "usage",
        "config",
        "load_s",
        "save_s",
        "_done",
        "_exact_end",
        "_last_load",
        "_load_end",
        "_t",
        "_phase_start",
        "_version",
        "_hold_start",
        "_next_placement",
        "_sim",
    )

    @property
    def phase(self) -> Phase:
        """One of :data:`PHASES`; the engine alone changes it (a policy returns decisions)."""
        return self._phase

    @phase.setter
    def phase(self, value: Any) -> None:
        raise SimulationError(
            f"A policy set the phase of {self.label} to {value!r}; the engine alone changes a job's phase. Return "
            f"a decision instead (Start, Preempt or Migrate from optsched.sim)."
        )

    def __init__(
        self,
        id: Any,
        index: int,
        arrival: float,
        work: float,
        gpus: int,
        weight: float = 1.0,
        single_server: bool = False,
        stages: tuple[float, ...] | None = None,
        attrs: Mapping[str, Any] | None = None,
    ):
        self.id = id
        self.index = index
        self.arrival = arrival
        self.work = work
        self.gpus = gpus
        self.weight = weight
        self.single_server = single_server
        self.stages = stages if stages is not None else (work,)
        self.attrs = attrs if attrs is not None else {}
        self._phase = PENDING
        self.placement: dict[int, int] | None = None
        self.rate = 0.0
        self.stage = 0
        self.first_start: float | None = None
        self.completion: float | None = None
        self.loading_time = 0.0
        self.training_time = 0.0
        self.saving_time = 0.0
        self.lost_work = 0.0
        self.futile_time = 0.0
        self.n_preemptions = 0
        self.n_starts = 0
        self.resources: Mapping[str, float] = _NO_RESOURCES  # declared demands of other resources
        self.gpu_masks: dict[int, int] | None = None  # while holding GPUs: {server: bit mask of GPU ids}
        self.usage: dict[int, dict[str, float]] | None = None  # while holding: {server: {resource: amount}}
        self.config: Any = None  # what the policy chose at start (worker/PS types, ...), for the rate model
        self.load_s: float | None = None  # its own load / save seconds (Job.load_time / save_time), or None
        self.save_s: float | None = None
        self.n_futile = 0  # preemptions that wasted a load: during it, or before any training after it
        self._last_load = 0.0  # length of the load that ended last (0 if none since the last start)
        self._load_end = 0.0  # end of the load in progress
        self.finish: float | None = None  # when its work was done (before its slot ended, in slotted mode)
        self._exact_end = 0.0  # slotted mode: unrounded time of the pending last stage end
        self._done = 0.0  # work done as of time self._t
        self._t = 0.0
        self._phase_start = 0.0
        self._version = 0  # bumps when the pending stage-end event becomes stale
        self._hold_start = 0.0
        self._next_placement: tuple | None = None  # migration: (placement, gpu masks, usage)
        self._sim = None

    # -- progress ---------------------------------------------------------------------------
    def done_work(self, now: float | None = None) -> float:
        """Work done by time ``now`` (default: the simulator's current time)."""
        if self._phase != TRAINING:
            return self._done
        if now is None:
            now = self._sim.now if self._sim is not None else self._t
        d = self._done + self.rate * (now - self._t)
        return d if d < self.work else self.work  # slotted mode: no more than its work while its slot ends

    @property
    def gpu_ids(self) -> dict[int, tuple[int, ...]] | None:
        """{server: GPU ids} while the job holds GPUs, under a policy with ``gpu_ids = True`` (the
        engine picks the lowest free ids unless the policy names them); else ``None``."""
        if self.gpu_masks is None:
            return None
        return {m: ids_of(k) for m, k in self.gpu_masks.items()}

    def remaining(self, now: float | None = None) -> float:
        """Work left (work units) at ``now``."""
        if self._phase != TRAINING:  # (done_work inlined: policies call this in their inner loops)
            return self.work - self._done
        return self.work - self.done_work(now)

    @property
    def attained(self) -> float:
        """Work done so far (attained service, work units)."""
        return self.done_work()

    @property
    def checkpointed_work(self) -> float:
        """Work at the last completed stage (what survives a rollback)."""
        return self.stages[self.stage - 1] if self.stage > 0 else 0.0

    @property
    def holds_gpus(self) -> bool:
        return self.placement is not None

    @property
    def is_active(self) -> bool:
        """Arrived and not finished."""
        return self._phase in (WAITING, LOADING, TRAINING, SAVING)

    @property
    def label(self) -> str:
        return f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"

    def __repr__(self) -> str:
        return (
            f"SimJob(id={self.id!r}, phase={self._phase}, gpus={self.gpus}, work={self.work:g}, "
            f"done={self._done:g}, placement={self.placement})"
        )


_PHASE, _DONE, _RATE, _T, _WORK = (attrgetter(a) for a in ("_phase", "_done", "rate", "_t", "work"))
_TRAINING_CODE = PHASES.index(TRAINING)


def progress_of(jobs: Sequence[SimJob], now: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The phases of ``jobs`` (as positions in :data:`PHASES`), their :meth:`SimJob.done_work` at
    ``now`` and the rates of those that train (0 for the others), read at once (for policies that
    look at every active job at every slot): the same arithmetic as ``done_work`` job by job, so
    the same floats to the last bit.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import PHASES, Simulator, get_policy
    >>> from optsched.sim.model.state import progress_of
    >>> class Look(type(get_policy("fifo"))):
    ...     def on_start(self, sim):
    ...         super().on_start(sim)
    ...         sim.set_timer(2.5)
    ...     def on_timer(self, sim, timer):
    ...         codes, done, rate = progress_of(sim.jobs, sim.now)
    ...         self.seen = ([str(PHASES[c]) for c in codes], done.tolist(), rate.tolist())
    ...         assert self.seen[1] == [j.done_work() for j in sim.jobs]
    >>> look = Look()
    >>> _ = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=4), Job(1, work=1, arrival=9)], look).run()
    >>> look.seen
    (['training', 'pending'], [2.5, 0.0], [1.0, 0.0])
    """
    n = len(jobs)
    ids = np.fromiter(map(id, map(_PHASE, jobs)), np.intp, n)  # a phase is one of the PHASES objects
    codes = np.full(n, -1, dtype=np.int8)
    for c, ph in enumerate(PHASES):
        codes[ids == id(ph)] = c
    done = np.fromiter(map(_DONE, jobs), float, n)
    rate = np.zeros(n)
    k = np.flatnonzero(codes == _TRAINING_CODE)
    if len(k):
        sub = [jobs[i] for i in k.tolist()]
        m = len(sub)
        rate[k] = r = np.fromiter(map(_RATE, sub), float, m)
        work = np.fromiter(map(_WORK, sub), float, m)
        d = done[k] + r * (now - np.fromiter(map(_T, sub), float, m))
        done[k] = np.where(d < work, d, work)  # done_work's ``d if d < work else work``
    return codes, done, rate


class Timer:
    """A timer set by a policy; passed to ``Policy.on_timer``.

    Attributes: ``id``, ``time`` (when it fires), ``period`` (``None`` for one-shot), ``data``
    (anything the policy attached), ``active`` (false once cancelled or, for one-shot, fired).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Policy, SetTimer, Simulator
    >>> class Record(Policy):
    ...     def on_start(self, sim):
    ...         self.seen = []
    ...         return [SetTimer(5.0, data="check")]
    ...     def on_timer(self, sim, timer):
    ...         self.seen.append((timer.time, timer.data, timer.period))
    >>> policy = Record()
    >>> _ = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=1, arrival=8)], policy).run(until=9)
    >>> policy.seen
    [(5.0, 'check', None)]
    """

    __slots__ = ("id", "time", "period", "data", "active")

    def __init__(self, id: int, time: float, period: float | None, data: Any):
        self.id = id
        self.time = time
        self.period = period
        self.data = data
        self.active = True

    def __repr__(self) -> str:
        return f"Timer(id={self.id}, time={self.time:g}, period={self.period}, data={self.data!r})"
