"""Futile preemptions and deferred scheduling (paper 004, Go et al., DAC '26): Lazer.

Importing this package registers the online policies with the simulator's registry:

* ``lazer`` — Alg. 1/2 with a pluggable deferral chooser (``deferral=None | x | "oracle" | "gp"``);
* ``lazer-zero`` (X = 0), ``lazer-fixed`` (X = ``x``, default 30 s), ``lazer-oracle`` (X = F),
  ``lazer-gp`` (the BO predictor, :class:`~optsched.lazer.predictor.GPDeferral`).

The baselines are the simulator's ``sjf``, ``srtf`` (use ``reserve="best"``) and
``srtf-periodic`` (``period=60/360/600``). Load and save times per model:
:class:`~optsched.lazer.loadsave.LoadSaveModel`. See ``formulations/lazer.md``.

>>> from optsched.core import Cluster, Job
>>> from optsched.sim import simulate, get_policy
>>> res = simulate(Cluster.homogeneous(1, 1), [Job(0, work=9), Job(1, work=1, arrival=2)], get_policy("lazer"))
>>> res.jobs_frame()["jct"].tolist()
[10.0, 1.0]
"""

from optsched.lazer.deferral import (
    Decision,
    DeferralChooser,
    FixedDeferral,
    OracleDeferral,
    ZeroDeferral,
    counterfactual_f,
)
from optsched.lazer.lifecycle import check_lifecycle, is_futile, lifecycle_from_log
from optsched.lazer.loadsave import (
    DEFAULT_VARIANT,
    FAMILIES,
    PARAMETER_COUNTS,
    SOURCES,
    LoadSaveModel,
)
from optsched.lazer.policy import Lazer

PAPER = "lazer"


def _lazer_zero(**options):
    """Lazer with X = 0 (orchestrator and completion handler only)."""
    return Lazer(deferral=None, **options)


def _lazer_fixed(x: float = 30.0, **options):
    """Lazer with a fixed deferral X = x seconds (default 30)."""
    return Lazer(deferral=FixedDeferral(x), **options)


def _lazer_oracle(**options):
    """Lazer with X = F, the counterfactual futile load, read from future arrivals (reference)."""
    return Lazer(deferral=OracleDeferral(), **options)


def _lazer_gp(seed=0, **options):
    """Lazer with the BO deferral predictor (GP, log-EI; Sec. 4.2)."""
    from optsched.lazer.predictor import GPDeferral

    return Lazer(deferral=GPDeferral(seed=seed), **options)


def register() -> None:
    """Register Lazer's policies with the simulator's registry (idempotent)."""
    from optsched.sim import register_policy

    register_policy(
        "lazer",
        Lazer,
        paper=PAPER,
        replace=True,
        description="Lazer (Alg. 1/2): orchestrator, deferral X, completion handler",
    )
    register_policy("lazer-zero", _lazer_zero, paper=PAPER, replace=True)
    register_policy("lazer-fixed", _lazer_fixed, paper=PAPER, replace=True)
    register_policy("lazer-oracle", _lazer_oracle, paper=PAPER, replace=True)
    register_policy("lazer-gp", _lazer_gp, paper=PAPER, replace=True)


register()

__all__ = [
    "Lazer",
    "LoadSaveModel",
    "PARAMETER_COUNTS",
    "SOURCES",
    "FAMILIES",
    "DEFAULT_VARIANT",
    "Decision",
    "DeferralChooser",
    "ZeroDeferral",
    "FixedDeferral",
    "OracleDeferral",
    "counterfactual_f",
    "is_futile",
    "lifecycle_from_log",
    "check_lifecycle",
    "register",
    "PAPER",
]
