"""Verifier checks of the rigid kind: the shared cluster checks (R1)-(R7) of
:mod:`optsched.verify.feasibility` (labels of ``formulations/rigid.md``) and the objective
evaluator :func:`optsched.core.objectives.objective_value`."""

from __future__ import annotations

from optsched.core.objectives import objective_value
from optsched.rigid.model import KIND
from optsched.verify import register_cluster_checks, register_evaluator

__all__ = ["register"]


def register() -> None:
    """Register the cluster checks, (R7) ``work`` at rate 1 included, and the evaluator for ``rigid``."""
    register_cluster_checks(KIND)
    register_evaluator(KIND, objective_value)
