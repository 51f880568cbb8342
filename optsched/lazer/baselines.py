"""Baselines of the Lazer study, from the shared simulator, with one local guard.

:class:`GuardedSRTF` / :class:`GuardedPeriodicSRTF` are the simulator's ``SRTF`` and
``PeriodicSRTF`` with one change in ``on_preempted``: the notification of a zero-save preemption
(a *loading* victim, which has nothing to save) that arrives after the victim was started again
in the same round is ignored. Without it, ``optsched.sim.policies._Preemptive.on_preempted``
pops the victim's start time of its *new* run (``self._since``), so the job started at this
very time becomes a victim again: with ``reserve="best"`` the same job is preempted and
restarted 100,000 times at one instant (``SimulationError: livelock``; 2,000 Earth-like jobs on
64 GPUs with :class:`~optsched.lazer.loadsave.LoadSaveModel`, seed 1, t = 86,110.7 s). Reported
as a defect of the shared layer; once it is fixed there these classes are the same as the
registered ``srtf`` / ``srtf-periodic``.
"""

from __future__ import annotations

from optsched.sim.policies import SRTF, PeriodicSRTF
from optsched.sim.state import WAITING

__all__ = ["GuardedSRTF", "GuardedPeriodicSRTF", "baseline"]


class _Guard:
    def on_preempted(self, sim, job) -> None:
        if job.phase != WAITING and job.index not in self._saving:  # stale: it runs again already
            self._requeued.discard(job.index)
            return
        super().on_preempted(sim, job)


class GuardedSRTF(_Guard, SRTF):
    """``SRTF`` with the stale-notification guard (see the module docstring)."""


class GuardedPeriodicSRTF(_Guard, PeriodicSRTF):
    """``PeriodicSRTF`` with the stale-notification guard (see the module docstring)."""


def baseline(name: str, **options):
    """The study's baselines by name: ``sjf``, ``srtf`` (reserve="best"), ``srtf-60`` / ``-360`` /
    ``-600`` (periodic SRTF, reserve="best"; the intervals of Pollux/Sia, Muri/Gavel, Optimus)."""
    from optsched.sim import get_policy

    if name == "sjf":
        return get_policy("sjf", **options)
    if name == "srtf":
        return GuardedSRTF(reserve="best", **options)
    if name.startswith("srtf-"):
        return GuardedPeriodicSRTF(period=float(name.split("-", 1)[1]), reserve="best", **options)
    raise KeyError(name)
