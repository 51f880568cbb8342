"""The policy interface: react to events, act through the simulator.

A policy subclasses :class:`Policy` and overrides the hooks it needs. Every hook receives the
simulator ``sim`` (what a hook may read and call on it: :class:`~optsched.sim.view.SimView`); the
policy acts by calling ``sim.start(job, placement)``, ``sim.preempt(job)``,
``sim.migrate(job, placement)``, ``sim.set_timer(...)``, ``sim.cancel_timer(timer)``, or by
returning an iterable of decision objects (:class:`Start`, :class:`Preempt`, :class:`Migrate`,
:class:`SetTimer`) which the engine applies in order. Illegal decisions raise
:class:`optsched.exceptions.SimulationError` at once.

Order of calls at one event time ``t``: the hooks of all events at ``t`` (stage ends, saves,
loads, arrivals, timers, in that order; ties by insertion), then :meth:`Policy.schedule` once.
New events at ``t`` (a zero-delay timer, a preemption without save time) join the current batch
if a hook created them, or form a new batch at ``t`` followed by another :meth:`Policy.schedule`
call if ``schedule`` did.

Tested in ``tests/sim/test_engine.py`` and ``tests/sim/test_registry.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from optsched.core.placement import PLACEMENT_RULES
from optsched.exceptions import InvalidOptionError

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from optsched.sim.model.state import SimJob, Timer
    from optsched.sim.view import SimView


@dataclass(frozen=True)
class Start:
    """Start ``job`` (a SimJob or its id) on ``placement`` ({server: GPUs, or server: resource
    vector such as ``{"gpus": 0, "cpu": 4}``}); ``None``: use the policy's placement rule.
    ``gpu_ids`` ({server: ids}) names the GPUs (default: the lowest free); ``config`` is kept on
    the job (``job.config``) for the rate model and the result.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Policy, Start, simulate
    >>> class StartAll(Policy):
    ...     def on_arrival(self, sim, job):
    ...         return [Start(job, {0: job.gpus})]   # the engine rejects a start that does not fit
    >>> res = simulate(Cluster.homogeneous(1, 2), [Job(0, work=2), Job(1, work=1, arrival=1)], StartAll())
    >>> res.jobs_frame()["completion"].tolist()
    [2.0, 2.0]
    """

    job: Any
    placement: Mapping[int, Any] | None = None
    gpu_ids: Mapping[int, Sequence[int]] | None = None
    config: Any = None


@dataclass(frozen=True)
class Preempt:
    """Preempt ``job``; with ``rollback`` its progress goes back to its last checkpoint.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Policy, Preempt, Start, simulate
    >>> class Newest(Policy):  # the newest arrival always runs (1 GPU)
    ...     preemptive = True
    ...     def on_arrival(self, sim, job):
    ...         return [Preempt(j) for j in sim.running_jobs()]
    ...     def schedule(self, sim):
    ...         waiting = [j for j in sim.jobs if j.phase == "waiting"]
    ...         if waiting and sim.total_free >= 1:
    ...             return [Start(waiting[-1], {0: 1})]
    >>> res = simulate(Cluster.homogeneous(1, 1), [Job(0, work=5), Job(1, work=1, arrival=2)], Newest())
    >>> res.jobs_frame()["completion"].tolist()
    [6.0, 3.0]
    """

    job: Any
    rollback: bool = False


@dataclass(frozen=True)
class Migrate:
    """Move a running ``job`` to ``placement`` (save on the old GPUs, then load on the new ones)."""

    job: Any
    placement: Mapping[int, Any]
    gpu_ids: Mapping[int, Sequence[int]] | None = None


@dataclass(frozen=True)
class SetTimer:
    """Fire ``on_timer`` after ``delay`` seconds (and then every ``period`` seconds if given).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Policy, SetTimer, Simulator, Start
    >>> class Delayed(Policy):  # starts the waiting jobs every 10 s only
    ...     def on_start(self, sim):
    ...         return [SetTimer(10.0, period=10.0)]
    ...     def on_timer(self, sim, timer):
    ...         return [Start(j, {0: 1}) for j in sim.jobs if j.phase == "waiting"][: sim.total_free]
    >>> res = Simulator(Cluster.homogeneous(1, 1), [Job(0, work=3)], Delayed()).run(until=30)
    >>> res.jobs_frame()["first_start"].tolist()
    [10.0]
    """

    delay: float
    data: Any = None
    period: float | None = None


@dataclass(frozen=True)
class CancelTimer:
    """Cancel ``timer`` (the handle :meth:`Simulator.set_timer` returned); a timer already fired or
    cancelled is ignored.
    """

    timer: Any


Decision = Start | Preempt | Migrate | SetTimer | CancelTimer


class Policy:
    """Base class of online scheduling policies (all hooks are no-ops).

    Parameters
    ----------
    placement : str
        Default placement rule for :meth:`Simulator.place` (``consolidate``, ``first_fit``,
        ``least_loaded``, ``random``).

    Notes
    -----
    Store only options in ``__init__``; build per-run state in :meth:`on_start`, so one policy
    object can run several simulations.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Policy, Start, simulate
    >>> class OneAtATime(Policy):
    ...     name = "one-at-a-time"
    ...     def schedule(self, sim):
    ...         waiting = [j for j in sim.jobs if j.phase == "waiting"]
    ...         if waiting and sim.total_free >= waiting[0].gpus:
    ...             return [Start(waiting[0], {0: waiting[0].gpus})]
    >>> res = simulate(Cluster.homogeneous(1, 2), [Job(0, work=3, gpus=2), Job(1, work=1)], OneAtATime())
    >>> res.jobs_frame()["completion"].tolist()
    [3.0, 4.0]
    """

    name = "policy"
    preemptive = False
    #: True if the policy names GPU ids (``Start(..., gpu_ids=...)``) or reads them during the run
    #: (``job.gpu_ids``, ``sim.free.free_ids``): the engine then tracks ids as it goes. Otherwise
    #: it gives each start the lowest free ids after the run (the same ids, no cost per event).
    gpu_ids = False
    #: The compiled kernel's counterpart of this class (``"fifo"``, ``"sjf"``, ``"srtf"``, ``"las"``),
    #: or None. Read from the class itself only (:func:`compiled_kind`): a subclass that changes a
    #: hook does not inherit the kernel by accident; it declares the attribute again if it keeps
    #: the parent's behaviour exactly.
    compiled_kind: str | None = None

    def __init__(self, *, placement: str = "consolidate"):
        if placement not in PLACEMENT_RULES:
            raise InvalidOptionError(
                f"The 'placement' option of policy {self.name!r} must be one of {list(PLACEMENT_RULES)}; "
                f"got {placement!r}."
            )
        self.placement = placement

    # -- hooks ----------------------------------------------------------------------------
    def on_start(self, sim: SimView) -> Iterable[Decision] | None:
        """Before the first event (time 0): reset per-run state, set periodic timers."""

    def on_arrival(self, sim: SimView, job: SimJob) -> Iterable[Decision] | None:
        """``job`` arrived (phase ``waiting``)."""

    def on_completion(self, sim: SimView, job: SimJob) -> Iterable[Decision] | None:
        """``job`` finished (phase ``done``) or terminated early at a checkpoint (phase ``failed``);
        its GPUs are free."""

    def on_checkpoint(self, sim: SimView, job: SimJob) -> Iterable[Decision] | None:
        """``job`` finished stage ``job.stage`` and keeps training unless the policy preempts it."""

    def on_loaded(self, sim: SimView, job: SimJob) -> Iterable[Decision] | None:
        """``job`` finished loading and starts training (phase ``training``)."""

    def on_preempted(self, sim: SimView, job: SimJob) -> Iterable[Decision] | None:
        """``job`` released its GPUs after a preemption (phase ``waiting``; after a migration it is
        already loading on its new placement)."""

    def on_timer(self, sim: SimView, timer: Timer) -> Iterable[Decision] | None:
        """A timer set with ``sim.set_timer`` fired."""

    def schedule(self, sim: SimView) -> Iterable[Decision] | None:
        """Called once after the hooks of each event time: start/preempt jobs here."""

    def on_end(self, sim: SimView) -> None:
        """After the last event."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(placement={self.placement!r})"


def compiled_kind(obj: object) -> str | None:
    """The compiled counterpart ``type(obj)`` declares itself (``compiled_kind`` in its own class
    body; inherited declarations do not count), or None.

    >>> from optsched.sim import SRTF
    >>> class MySRTF(SRTF):
    ...     pass
    >>> compiled_kind(SRTF()), compiled_kind(MySRTF())
    ('srtf', None)
    """
    return vars(type(obj)).get("compiled_kind")
