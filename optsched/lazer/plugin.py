"""Everything the Lazer paper (004) adds to optsched, declared in one place (see
:mod:`optsched.core.plugins`): its online policies in the simulator's registry, the enrichment that
gives a generic job table its models and load/save times, and the reproduction. Lazer studies an
online scheduler, so it has no instance kind and no exact model. Tested in
``tests/core/test_plugins.py``.
"""

from __future__ import annotations

from optsched.core.plugins import register_enrichment, register_reproduction
from optsched.lazer.policy import Lazer, lazer_fixed, lazer_gp, lazer_oracle, lazer_zero
from optsched.lazer.workload import with_load_save
from optsched.sim import register_policy

PAPER = "lazer"
"""The key of this paper in the registries (policies, reproductions, enrichment)."""


def register() -> None:
    """Register Lazer's policies (``lazer``, ``lazer-zero``, ``lazer-fixed``, ``lazer-oracle``,
    ``lazer-gp``), its enrichment and its reproduction."""
    register_policy(
        "lazer",
        Lazer,
        paper=PAPER,
        replace=True,
        description="Lazer (Alg. 1/2): orchestrator, deferral X, completion handler",
    )
    register_policy("lazer-zero", lazer_zero, paper=PAPER, replace=True)
    register_policy("lazer-fixed", lazer_fixed, paper=PAPER, replace=True)
    register_policy("lazer-oracle", lazer_oracle, paper=PAPER, replace=True)
    register_policy("lazer-gp", lazer_gp, paper=PAPER, replace=True)
    register_enrichment(PAPER, with_load_save, uses_cluster=False, adds="model, load and save times")
    register_reproduction(
        "lazer",
        "optsched.experiments.lazer.study:run",
        paper=PAPER,
        quick_seconds=40,
        description="Table 2, Fig. 3-5 of paper 004 (SJF, SRTF, periodic SRTF 60/360/600 s, "
        "Lazer), load-time sweep, deferral ablation, share of X > 0, decision delay",
    )
