"""Everything the elastic-jobs paper (001) adds to optsched, declared in one place (see
:mod:`optsched.core.plugins`): the kind ``elastic``, the exact (2) over the restricted Gamma_j, the
greedy, A_online and the FIFO / DRF baselines, the verifier checks (2a)-(2o), (15a), (15b) and the
evaluator, the suite instance, the simulator policies, the enrichment of a generic job table and the
reproduction. Tested in ``tests/core/test_plugins.py``.
"""

from __future__ import annotations

from typing import Any

from optsched.core.plugins import register_enrichment, register_reproduction
from optsched.core.registry import KindSpec, doc_summary, register_algorithm, register_kind
from optsched.elastic.baselines import drf, fifo
from optsched.elastic.checks import LABELS, evaluate_objective, label_check
from optsched.elastic.constants import KIND, OBJECTIVE
from optsched.elastic.exact import BACKENDS, greedy, solve_exact
from optsched.elastic.model import ElasticInstance, toy_instance
from optsched.elastic.policy import POLICY_CLASSES
from optsched.elastic.primal_dual import a_online
from optsched.elastic.schedule import ElasticSchedule
from optsched.elastic.workload import from_table
from optsched.sim import register_policy
from optsched.solvers import SolveOptions
from optsched.verify import register_check, register_evaluator
from optsched.verify.suite import register_suite_instances


def suite_instances() -> list[Any]:
    """The common suite's elastic instance: the Sec. 1 toy."""
    return [toy_instance()]


def register() -> None:
    """Register everything of the elastic-jobs paper (see the module doc)."""
    register_kind(
        KindSpec(
            KIND,
            ElasticInstance,
            schema="elastic.schema.json",
            objective=OBJECTIVE,
            sense="min",
            schedule_cls=ElasticSchedule,
            default_exact="elastic-exact",
            description="elastic ML jobs (PS / Ring-AllReduce), sum w_j c_j in slots (paper 001)",
        )
    )
    # verifier: one check per label of formulations/elastic.md#model, the objective
    for label in LABELS:
        register_check(KIND, label)(label_check(label))
    register_evaluator(KIND, evaluate_objective)
    # exact model and algorithms
    register_algorithm(
        f"{KIND}-exact",
        KIND,
        exact=True,
        backends=BACKENDS,
        suite_options={"options": SolveOptions(time_limit=30, threads=1)},
    )(solve_exact)
    register_algorithm(f"{KIND}-greedy", KIND)(greedy)
    register_algorithm(f"{KIND}-online", KIND)(a_online)
    register_algorithm(f"{KIND}-fifo", KIND)(fifo)
    register_algorithm(f"{KIND}-drf", KIND)(drf)
    register_suite_instances(KIND, suite_instances)
    # online policies (elastic-<name>; each needs instance= and the jobs of elastic.policy.to_sim)
    for short, cls in POLICY_CLASSES.items():
        register_policy(
            f"elastic-{short}",
            cls,
            needs=("elastic_index", "shape"),
            paper="elastic",
            description=doc_summary(cls.__doc__),
        )
    register_enrichment(KIND, from_table, uses_cluster=True, adds="worker/PS types, slots, weights")
    register_reproduction(
        "elastic-sec7",
        "optsched.experiments.elastic:run",
        paper=KIND,
        quick_seconds=40,
        description="Figs 2-12 of paper 001 at reduced scale (A_online vs FIFO, DRF, AntMan-like, "
        "Tiresias-like, 2D-LAS; A_maxweight vs Jain; F, H, worker types and counts; runtime)",
    )
