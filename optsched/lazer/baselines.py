"""Baselines of the Lazer study, from the shared simulator: SJF, SRTF and periodic SRTF with
``reserve="best"``. Tested in ``tests/lazer/test_policy.py``.
"""

from __future__ import annotations

from optsched.sim import get_policy
from optsched.sim.policies import SRTF, PeriodicSRTF


def baseline(name: str, **options):
    """The study's baselines by name: ``sjf``, ``srtf`` (reserve="best"), ``srtf-60`` / ``-360`` /
    ``-600`` (periodic SRTF, reserve="best"; the intervals of Pollux/Sia, Muri/Gavel, Optimus)."""
    if name == "sjf":
        return get_policy("sjf", **options)
    if name == "srtf":
        return SRTF(reserve="best", **options)
    if name.startswith("srtf-"):
        return PeriodicSRTF(period=float(name.split("-", 1)[1]), reserve="best", **options)
    raise KeyError(name)
