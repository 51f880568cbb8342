"""Everything the RAR-DDLS paper (002) adds to optsched, declared in one place (see
:mod:`optsched.core.plugins`): the kind ``rarddls``, the exact slotted optimum, SJF-BCO and its
baselines, the verifier checks (with the Lemma 2-4 bounds), the suite instance and the reproduction.
Tested in ``tests/core/test_plugins.py``.
"""

from __future__ import annotations

from typing import Any

from optsched.core.plugins import register_reproduction
from optsched.core.registry import KindSpec, register_algorithm, register_kind
from optsched.rarddls.bounds import check_gpu_load, check_rho_range
from optsched.rarddls.checks import check_contention_progress, check_gpu_exclusive, check_slotted, evaluate_objective
from optsched.rarddls.exact import solve_exact
from optsched.rarddls.model import KIND, OBJECTIVE, RarInstance, toy_instance
from optsched.rarddls.sjfbco import first_fit, list_scheduling, random_schedule, sjf_bco
from optsched.solvers import SolveOptions
from optsched.verify import register_check, register_cluster_checks, register_evaluator
from optsched.verify.common import check_non_preemptive
from optsched.verify.suite import register_suite_instances


def suite_instances() -> list[Any]:
    """The common suite's RAR-DDLS instance: the shipped toy."""
    return [toy_instance()]


def register() -> None:
    """Register everything of the RAR-DDLS paper (see the module doc)."""
    register_kind(
        KindSpec(
            KIND,
            RarInstance,
            schema="rarddls.schema.json",
            objective=OBJECTIVE,
            sense="min",
            default_exact="rarddls-exact",
            description="RAR jobs under communication contention, makespan in slots (paper 002)",
        )
    )
    # verifier: the shared cluster checks, (3), whole slots, GPU ids, (6)-(9) slot by slot; the bounds
    register_cluster_checks(KIND, work_at_rate_one=False)
    register_check(KIND, "non_preemptive")(check_non_preemptive)
    register_check(KIND, "slotted")(check_slotted)
    register_check(KIND, "gpu_exclusive")(check_gpu_exclusive)
    register_check(KIND, "contention_progress")(check_contention_progress)
    register_evaluator(KIND, evaluate_objective)
    register_check(KIND, "rho_range")(check_rho_range)
    register_check(KIND, "gpu_load")(check_gpu_load)
    # exact model and algorithms
    register_algorithm(
        "rarddls-exact",
        KIND,
        exact=True,
        backends=("highs", "cpsat", "enumerate"),
        suite_options={"options": SolveOptions(time_limit=30, threads=1)},
    )(solve_exact)
    register_algorithm("rarddls-sjf-bco", KIND)(sjf_bco)
    register_algorithm("rarddls-ff", KIND)(first_fit)
    register_algorithm("rarddls-ls", KIND)(list_scheduling)
    register_algorithm("rarddls-rand", KIND, randomized=True)(random_schedule)
    register_suite_instances(KIND, suite_instances)
    register_reproduction(
        "rarddls-sec7",
        "optsched.experiments.rarddls:run",
        paper=KIND,
        quick_seconds=40,
        description="Fig. 4-7 of paper 002 (SJF-BCO vs FF, LS, RAND; kappa; servers; lambda), "
        "50 % contention run, Sec. 1 slowdown preset",
    )
