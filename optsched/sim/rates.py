"""Rate models: how fast a training job makes progress, in work units per second.

A rate model sees the job, its placement and the simulator (hence the set of co-running jobs).
The engine asks for a job's rate when it enters training. If ``corunner_dependent`` is true, the
engine also asks again, after every event time at which the set of training jobs changed, for
every job returned by :meth:`RateModel.affected` (default: all training jobs), and moves their
completion and checkpoint events accordingly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from optsched.exceptions import SimulationError

if TYPE_CHECKING:  # pragma: no cover
    from optsched.sim.engine import Simulator
    from optsched.sim.state import SimJob

__all__ = ["RateModel", "ConstantRate", "PlacementRate", "FunctionRate", "check_rate"]


class RateModel:
    """Base class. Subclasses override :meth:`rate` (and set ``corunner_dependent``)."""

    #: True if a job's rate depends on which other jobs run at the same time.
    corunner_dependent: bool = False

    def rate(self, job: SimJob, placement: Mapping[int, int], sim: Simulator) -> float:
        """Work units per second of ``job`` training on ``placement`` (> 0)."""
        return 1.0

    def affected(self, sim: Simulator, changed: Iterable[SimJob]) -> Iterable[SimJob]:
        """Training jobs whose rate may have changed because ``changed`` started or stopped training."""
        return sim.training_jobs()


class ConstantRate(RateModel):
    """Every job progresses at ``rate`` (default 1: work is in seconds).

    Examples
    --------
    >>> ConstantRate().rate(None, {0: 1}, None)
    1.0
    """

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
    """

    def __init__(self, f: Callable[[Any, Mapping[int, int], Any], float], *, corunner_dependent: bool = False):
        self.f = f
        self.corunner_dependent = corunner_dependent

    def rate(self, job, placement, sim) -> float:
        return self.f(job, placement, sim)


def check_rate(r: Any, who: str) -> float:
    """A rate must be a finite positive number."""
    try:
        x = float(r)
    except (TypeError, ValueError):
        raise SimulationError(f"The rate model returned {r!r} for {who}; it must return a positive number.") from None
    if not (x > 0 and x < float("inf")):
        raise SimulationError(f"The rate model returned {r!r} for {who}; it must return a finite positive number "
                              f"(work units per second).")
    return x
