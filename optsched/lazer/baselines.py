"""Baselines of the Lazer study, from the shared simulator.

:class:`GuardedSRTF` / :class:`GuardedPeriodicSRTF` were the simulator's ``SRTF`` and
``PeriodicSRTF`` with a guard against a stale zero-save preemption notice (a victim started again
in the same round was preempted again: a livelock with ``reserve="best"``, 2,000 Earth-like jobs on
64 GPUs, seed 1). The shared policies now ignore that notice themselves
(``optsched.sim.policies._Preemptive.on_preempted``), so these names are the shared classes.
"""

from __future__ import annotations

from optsched.sim.policies import SRTF, PeriodicSRTF

__all__ = ["GuardedSRTF", "GuardedPeriodicSRTF", "baseline"]

#: The shared SRTF (the guard moved into the simulator).
GuardedSRTF = SRTF
#: The shared periodic SRTF (the guard moved into the simulator).
GuardedPeriodicSRTF = PeriodicSRTF


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
