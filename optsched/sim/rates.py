"""Rate models: how fast a training job makes progress, in work units per second.

A rate model sees the job, its placement and the simulator (hence the set of co-running jobs).
The engine asks for a job's rate when it enters training. If ``corunner_dependent`` is true, the
engine also asks again, after every event time at which the set of training jobs changed, for
every job returned by :meth:`RateModel.affected` (default: all training jobs), and moves their
completion and checkpoint events accordingly.

Tested in ``tests/sim/test_engine.py`` and ``tests/sim/test_invariants.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from optsched.exceptions import SimulationError
from optsched.sim.model.state import TRAINING

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from optsched.sim.model.state import SimJob
    from optsched.sim.view import SimView


class RateModel:
    """Base class. Subclasses override :meth:`rate` (and set ``corunner_dependent``).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import RateModel, get_policy, simulate
    >>> class TwoServersSlower(RateModel):  # a job spread over two servers trains at half speed
    ...     def rate(self, job, placement, sim):
    ...         return 0.5 if len(placement) > 1 else 1.0
    >>> res = simulate(Cluster.homogeneous(2, 1), [Job(0, work=2, gpus=2)], get_policy("fifo"),
    ...                rate_model=TwoServersSlower())
    >>> res.jobs_frame()["completion"].tolist()
    [4.0]
    """

    #: True if a job's rate depends on which other jobs run at the same time.
    corunner_dependent: bool = False

    def rate(self, job: SimJob, placement: Mapping[int, int], sim: SimView) -> float:
        """Work units per second of ``job`` training on ``placement`` (> 0)."""
        return 1.0

    def affected(self, sim: SimView, changed: Iterable[SimJob]) -> Iterable[SimJob]:
        """Training jobs whose rate may have changed because ``changed`` started or stopped training."""
        return sim.training_jobs()


class ConstantRate(RateModel):
    """Every job progresses at ``rate`` (default 1: work is in seconds).

    Examples
    --------
    >>> ConstantRate().rate(None, {0: 1}, None)
    1.0
    """

    compiled_kind = "constant"  #: the compiled kernel runs this model (optsched.sim.policy.compiled_kind)

    def __init__(self, rate: float = 1.0):
        self._rate = float(rate)
        check_rate(self._rate, "ConstantRate")

    def rate(self, job, placement, sim) -> float:
        return self._rate


class PlacementRate(RateModel):
    """Rate from the placement only: ``1 / (1 + penalty * (servers spanned - 1))`` by default.

    Parameters
    ----------
    penalty : float
        Relative slowdown per extra server spanned (>= 0); 0 gives rate 1 everywhere.

    Examples
    --------
    >>> PlacementRate(0.5).rate(None, {0: 2, 3: 2}, None)
    0.6666666666666666
    """

    def __init__(self, penalty: float = 0.0):
        if penalty < 0:
            raise SimulationError(f"The 'penalty' of PlacementRate must be >= 0; got {penalty!r}.")
        self.penalty = float(penalty)

    def rate(self, job, placement, sim) -> float:
        return 1.0 / (1.0 + self.penalty * (len(placement) - 1))


class FunctionRate(RateModel):
    """Wrap a function ``f(job, placement, sim) -> rate``.

    Parameters
    ----------
    f : callable
    corunner_dependent : bool
        Set true if ``f`` looks at other running jobs (``sim.training_jobs()``).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import FunctionRate, get_policy, simulate
    >>> linear = FunctionRate(lambda job, placement, sim: sum(placement.values()) / job.gpus)
    >>> res = simulate(Cluster.homogeneous(1, 2), [Job(0, work=2, gpus=2)], get_policy("fifo"), rate_model=linear)
    >>> res.jobs_frame()["completion"].tolist()
    [2.0]
    """

    def __init__(self, f: Callable[[Any, Mapping[int, int], Any], float], *, corunner_dependent: bool = False):
        self.f = f
        self.corunner_dependent = corunner_dependent

    def rate(self, job, placement, sim) -> float:
        return self.f(job, placement, sim)


class SplitContentionRate(RateModel):
    """Jobs split over servers share those servers' network: each slows with the number of split
    jobs on its servers. ``rate = 1 / (1 + alpha * (p - 1))``, ``p`` = the largest number of split
    training jobs (itself included) on any of its servers; a one-server job runs at rate 1 and
    slows no one (the contention model of paper 002, in its simplest form).

    The per-server counts are kept incrementally, so an event costs time in proportion to the
    jobs sharing a server with the jobs that started or stopped, not to all running jobs.

    Parameters
    ----------
    alpha : float
        Slowdown per extra split job on the busiest shared server (>= 0).

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import Simulator, get_policy
    >>> jobs = [Job(0, work=10, gpus=3), Job(1, work=10, gpus=3)]   # 3 GPUs on 2-GPU servers: split
    >>> res = Simulator(Cluster.homogeneous(3, 2), jobs, get_policy("fifo", placement="first_fit"),
    ...                 rate_model=SplitContentionRate(0.5)).run()
    >>> [sorted(res.schedule().segments(j)[0].placement) for j in (0, 1)]   # both use server 1
    [[0, 1], [1, 2]]
    >>> res.jobs_frame()["completion"].round(6).tolist()   # 2 split jobs there: rate 1 / 1.5
    [15.0, 15.0]
    """

    corunner_dependent = True

    def __init__(self, alpha: float = 0.1):
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (alpha >= 0 and alpha < float("inf")):
            raise SimulationError(f"The 'alpha' of SplitContentionRate must be a finite number >= 0; got {alpha!r}.")
        self.alpha = float(alpha)
        self._sim: Any = None

    def _reset(self, sim: Any) -> None:
        self._sim = sim
        self._on: dict[int, tuple[int, ...]] = {}  # registered split training job -> its servers
        self._members: dict[int, dict[int, Any]] = {}  # server -> {job index: job} registered there
        self._touched: set[int] = set()  # servers whose registrations changed since the last affected()

    def _sync(self, j: Any) -> None:
        """Register ``j`` where it is split and training now (and nowhere else)."""
        cur = tuple(j.placement) if j.phase == TRAINING and j.placement is not None and len(j.placement) > 1 else None
        old = self._on.get(j.index)
        if old == cur:
            return
        members = self._members
        if old is not None:
            for m in old:
                members[m].pop(j.index, None)
            self._touched.update(old)
            del self._on[j.index]
        if cur is not None:
            for m in cur:
                members.setdefault(m, {})[j.index] = j
            self._touched.update(cur)
            self._on[j.index] = cur

    def rate(self, job, placement, sim) -> float:
        if sim is not self._sim:
            self._reset(sim)
        self._sync(job)
        if len(placement) <= 1:
            return 1.0
        members = self._members
        # registered jobs that stopped in this batch (before affected() runs) no longer count
        p = max(sum(1 for o in members.get(m, {}).values() if o.phase == TRAINING) for m in placement)
        return 1.0 / (1.0 + self.alpha * (p - 1))

    def affected(self, sim, changed):
        if sim is not self._sim:
            self._reset(sim)
        changed = list(changed)
        for j in changed:
            self._sync(j)
        servers, self._touched = self._touched, set()
        out = {j.index: j for j in changed if j.phase == TRAINING}
        members = self._members
        for m in servers:
            out.update(members.get(m, {}))
        return list(out.values())


def check_rate(r: Any, who: str) -> float:
    """A rate must be a finite positive number."""
    try:
        x = float(r)
    except (TypeError, ValueError):
        raise SimulationError(f"The rate model returned {r!r} for {who}; it must return a positive number.") from None
    if not (x > 0 and x < float("inf")):
        raise SimulationError(
            f"The rate model returned {r!r} for {who}; it must return a finite positive number (work units per second)."
        )
    return x
