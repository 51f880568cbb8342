"""What a policy or a rate model sees of the simulator: :class:`SimView`, a typing protocol.

Every hook of a :class:`~optsched.sim.Policy` and every method of a
:class:`~optsched.sim.RateModel` receives the simulator as ``sim``; this protocol lists what they
may read and call on it. The Python engine (:class:`~optsched.sim.Simulator`) implements it (a
test checks every member); policies and rate models are typed against it, not against the
engine, so that they depend on what they use and nothing imports the engine to annotate a hook.

Tested in ``tests/sim/test_layout.py`` and ``tests/sim/test_engine.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import numpy as np

    from optsched.core.cluster import Cluster
    from optsched.sim.model.resources import FreeGPUs, FreeResources
    from optsched.sim.model.state import SimJob, Timer


class SimView(Protocol):
    """The simulator as a policy's hooks and a rate model see it.

    Read: ``now`` (the current time, s), ``jobs`` (every simulated job, in input order),
    ``cluster``, ``capacity`` (GPUs in all), ``rng`` (the run's NumPy generator), ``slot``
    (``None`` in continuous time), ``free`` (free GPUs per server, with placement queries),
    ``res`` (free amounts of the servers' other resources, or ``None``), ``free_gpus``,
    ``total_free`` and the methods below. Act: :meth:`start`, :meth:`preempt`, :meth:`migrate`,
    :meth:`set_timer`, :meth:`cancel_timer`, or return decision objects from a hook.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Policy, SimView, simulate
    >>> class Greedy(Policy):
    ...     name = "greedy"
    ...     def schedule(self, sim: SimView) -> None:
    ...         for job in sim.jobs:
    ...             if job.phase == "waiting" and sim.fits(job):
    ...                 sim.start(job)
    >>> simulate(Cluster.homogeneous(1, 2), [Job(0, work=2, gpus=2), Job(1, work=1)], Greedy()).end_time
    3.0
    """

    # read-only for a policy (properties, so that the engine's own types conform)
    @property
    def now(self) -> float:
        """The current time (s)."""

    @property
    def jobs(self) -> Sequence[SimJob]:
        """Every simulated job, in input order."""

    @property
    def cluster(self) -> Cluster:
        """The simulated cluster."""

    @property
    def capacity(self) -> int:
        """GPUs in all."""

    @property
    def rng(self) -> np.random.Generator:
        """The run's generator (the ``random`` placement rule draws from it; policies may too)."""

    @property
    def slot(self) -> float | None:
        """The slot length in slotted mode, else None."""

    @property
    def free(self) -> FreeGPUs:
        """Free GPUs per server, with placement queries."""

    @property
    def res(self) -> FreeResources | None:
        """Free amounts of the servers' other resources, or None when no server declares any."""

    @property
    def free_gpus(self) -> list[int]:
        """Free GPUs per server (do not modify)."""

    @property
    def total_free(self) -> int:
        """Free GPUs in all."""

    def job(self, job_or_id: Any) -> SimJob:
        """A simulated job by id (or the job itself, checked)."""

    def training_jobs(self) -> list[SimJob]:
        """Jobs training now, in start order."""

    def running_jobs(self) -> list[SimJob]:
        """Jobs holding GPUs now (loading, training or saving)."""

    def load_time(self, job: Any, placement: Mapping[int, int] | None = None) -> float:
        """Seconds ``job`` would load before training on ``placement``."""

    def save_time(self, job: Any) -> float:
        """Seconds ``job`` would save if preempted now."""

    def fits(self, job: SimJob) -> bool:
        """Whether ``job`` fits in the free GPUs (and resources) now."""

    def place(self, job: Any, rule: str | None = None) -> dict[int, int] | None:
        """A placement on the free GPUs by ``rule`` (default: the policy's), or ``None``."""

    def start(
        self,
        job: Any,
        placement: Mapping[int, Any] | None = None,
        *,
        gpu_ids: Mapping[int, Sequence[int]] | None = None,
        config: Any = None,
    ) -> dict[int, int]:
        """Start a waiting job; returns its placement."""

    def preempt(self, job: Any, *, rollback: bool = False) -> None:
        """Preempt a loading or training job."""

    def migrate(
        self, job: Any, placement: Mapping[int, Any], *, gpu_ids: Mapping[int, Sequence[int]] | None = None
    ) -> dict[int, int]:
        """Move a loading or training job to ``placement``."""

    def set_timer(
        self, delay: float | None = None, *, at: float | None = None, period: float | None = None, data: Any = None
    ) -> Timer:
        """Call the policy's ``on_timer`` after ``delay`` seconds (or at time ``at``)."""

    def cancel_timer(self, timer: Timer) -> None:
        """Cancel a timer (no-op if it already fired or was cancelled)."""

    def apply(self, decisions: Iterable[Any] | None) -> None:
        """Apply decision objects (``Start``, ``Preempt``, ...) in order."""
