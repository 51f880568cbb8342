"""Futile preemptions and deferred scheduling (paper 004, Go et al., DAC '26): Lazer.

Importing this package registers what :mod:`optsched.lazer.plugin` declares, among them the
online policies of the simulator's registry:

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

from optsched.core.plugins import load_plugin
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
from optsched.lazer.plugin import PAPER
from optsched.lazer.policy import Lazer

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
    "PAPER",
]

load_plugin(__name__)
