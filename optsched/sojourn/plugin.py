"""Everything the sojourn-time paper (003) adds to optsched, declared in one place (see
:mod:`optsched.core.plugins`): the kind ``sojourn``, the exact order (four back ends), RANK, SERPT,
SR and the random order, the verifier checks and the evaluator, the suite instances, the online
heuristic of Sec. V with each index as simulator policies, the enrichment of a generic job table
and the reproduction. Tested in ``tests/core/test_plugins.py``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from optsched.core.io import load_instance
from optsched.core.library import instance_path
from optsched.core.plugins import register_enrichment, register_reproduction
from optsched.core.registry import KindSpec, register_algorithm, register_kind
from optsched.sim import register_policy
from optsched.sojourn.checks import (
    check_pairwise_lower_bound,
    check_permutation,
    check_stage_order,
    check_static_setting,
    evaluate,
)
from optsched.sojourn.exact import BACKENDS, solve_exact
from optsched.sojourn.generate import random_instance, workload
from optsched.sojourn.model import KIND, OBJECTIVE, SojournInstance
from optsched.sojourn.online import StagedOnlinePolicy
from optsched.sojourn.policies import random_policy, rank, serpt, sr
from optsched.sojourn.workload import from_table
from optsched.solvers import SolveOptions
from optsched.verify import register_check, register_evaluator
from optsched.verify.suite import register_suite_instances


def suite_instances() -> list[Any]:
    """The common suite's sojourn instances: the two shipped toys and two random ones."""
    return [
        load_instance(instance_path("toy:sojourn-two-jobs")),
        load_instance(instance_path("toy:sojourn-four-jobs")),
        workload(1, 6, seed=3),
        random_instance(5, seed=11),
    ]


def register() -> None:
    """Register everything of the sojourn-time paper (see the module doc)."""
    register_kind(
        KindSpec(
            KIND,
            SojournInstance,
            schema="sojourn.schema.json",
            objective=OBJECTIVE,
            schedule_cls=getattr(SojournInstance, "schedule_class", None),
        )
    )
    # verifier
    register_check(KIND, "permutation")(check_permutation)
    register_check(KIND, "stage_order")(check_stage_order)
    register_check(KIND, "static_setting")(check_static_setting)
    register_check(KIND, "pairwise_lower_bound")(check_pairwise_lower_bound)
    register_evaluator(KIND, evaluate)
    # exact model and algorithms
    register_algorithm(
        "sojourn-exact",
        KIND,
        exact=True,
        backends=BACKENDS,
        suite_options={"options": SolveOptions(time_limit=30, threads=1)},
    )(solve_exact)
    register_algorithm("sojourn-rank", KIND)(rank)
    register_algorithm("sojourn-serpt", KIND)(serpt)
    register_algorithm("sojourn-sr", KIND)(sr)
    register_algorithm("sojourn-random", KIND, randomized=True)(random_policy)
    register_suite_instances(KIND, suite_instances)
    # the Sec. V online heuristic with each index; the policies read the stage sizes and
    # probabilities from job.attrs (sizes, probs)
    for index, what in (("rank", "RANK (23)"), ("serpt", "SERPT"), ("sr", "SR rank (2)")):
        register_policy(
            f"sojourn-online-{index}",
            partial(StagedOnlinePolicy, index),
            needs=("sizes", "probs"),
            paper=KIND,
            description=f"Sec. V online heuristic, {what} index, preemptive at checkpoints",
        )
    register_enrichment(KIND, from_table, uses_cluster=False, adds="stages, success probabilities")
    register_reproduction(
        "sojourn-tables",
        "optsched.experiments.sojourn:reproduce",
        paper=KIND,
        quick_seconds=60,
        seeds=False,  # trials play that role
        description="Tables IV-XIV (+ U9 sets 2-3), RANK vs exact optimum to N = 40, adaptive "
        "study, online Tables XVI-XVIII (paper 003)",
    )
