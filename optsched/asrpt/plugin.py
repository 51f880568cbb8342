"""Everything the A-SRPT paper (000) adds to optsched, declared in one place (see
:mod:`optsched.core.plugins`): the kind ``asrpt``, the exact Problem (8), A-SRPT and the five
baselines as algorithms and as simulator policies, the verifier checks (with Lemma 1 corrected and
Lemma 3), the suite instance, the enrichment of a generic job table and the reproductions.
Tested in ``tests/core/test_plugins.py``.
"""

from __future__ import annotations

from typing import Any

from optsched.asrpt.bounds import verifier_lemma_1, verifier_lemma_3
from optsched.asrpt.checks import check_iteration_time
from optsched.asrpt.exact import OBJECTIVE, solve_exact
from optsched.asrpt.model import KIND, AsrptInstance, toy_instance
from optsched.asrpt.online import ASRPT, BASELINE_OPTIONS
from optsched.asrpt.policy import BASELINE_NAMES, baseline_algorithm, baseline_policy, run_asrpt
from optsched.asrpt.workload import from_table
from optsched.core.objectives import objective_value
from optsched.core.plugins import register_enrichment, register_reproduction
from optsched.core.registry import KindSpec, register_algorithm, register_kind
from optsched.sim import register_policy
from optsched.sim.registry import forwards_options
from optsched.solvers import SolveOptions
from optsched.verify import register_check, register_cluster_checks, register_evaluator
from optsched.verify.common import check_non_preemptive
from optsched.verify.suite import register_suite_instances


def suite_instances() -> list[Any]:
    """The common suite's A-SRPT instance: the shipped toy."""
    return [toy_instance()]


@forwards_options(ASRPT, set_here=("backfill",))  # ASRPT's other options, checked by get_policy
def asrpt_backfill(**options: Any) -> ASRPT:
    """The ``asrpt-a-srpt-backfill`` policy: :class:`ASRPT` with ``backfill=True`` (other options passed on)."""
    return ASRPT(backfill=True, **options)


@forwards_options(ASRPT, set_here=("backfill", "split_heavy"))
def asrpt_backfill_no_split(**options: Any) -> ASRPT:
    """The ``asrpt-a-srpt-backfill-no-split`` policy: :class:`ASRPT` with ``backfill=True, split_heavy=False``."""
    return ASRPT(backfill=True, split_heavy=False, **options)


def register() -> None:
    """Register everything of the A-SRPT paper (see the module doc)."""
    register_kind(
        KindSpec(
            KIND,
            AsrptInstance,
            schema="asrpt.schema.json",
            objective=OBJECTIVE,
            schedule_cls=getattr(AsrptInstance, "schedule_class", None),
        )
    )
    # verifier: the shared cluster checks, (7) per segment, the objective; the paper's lemmas
    register_cluster_checks(KIND, work_at_rate_one=False)
    register_check(KIND, "non_preemptive")(check_non_preemptive)
    register_check(KIND, "bottleneck")(check_iteration_time)
    register_evaluator(KIND, objective_value)
    register_check(KIND, "lemma_1_corrected")(verifier_lemma_1)
    register_check(KIND, "lemma_3")(verifier_lemma_3)
    # exact model and algorithms
    register_algorithm(
        "asrpt-exact",
        KIND,
        exact=True,
        backends=("cpsat", "cpsat-ti", "highs"),
        suite_options={"options": SolveOptions(time_limit=30, threads=1)},
    )(solve_exact)
    register_algorithm(
        "asrpt-a-srpt",
        KIND,
        description="A-SRPT (Algorithm 1) on the shared simulator, Heavy-Edge mapping",
    )(run_asrpt)
    for algo, name in BASELINE_NAMES.items():
        register_algorithm(algo, KIND)(baseline_algorithm(algo, name))
    register_suite_instances(KIND, suite_instances)
    # online policies: options only; they run on sim_jobs(instance) (each AsrptJob in
    # job.attrs["asrpt_job"]) with their rate model policy.rate_model
    register_policy(
        "asrpt-a-srpt",
        ASRPT,
        needs=("asrpt_job",),
        paper="asrpt",
        description="A-SRPT, Alg. 1 read literally: the head blocks (Line 25, no backfilling); Heavy-Edge mapping",
    )
    register_policy(
        "asrpt-a-srpt-backfill",
        asrpt_backfill,
        needs=("asrpt_job",),
        paper="asrpt",
        description="A-SRPT with backfilling behind a head that does not fit: the reading that reproduces Fig. 6",
    )
    register_policy(
        "asrpt-a-srpt-backfill-no-split",
        asrpt_backfill_no_split,
        needs=("asrpt_job",),
        paper="asrpt",
        description="diagnostic: A-SRPT with backfilling that never splits a communication-heavy job (Sec. IV-C prose)",
    )
    for name in BASELINE_OPTIONS:
        register_policy(f"asrpt-{name.lower()}-online", baseline_policy(name), needs=("asrpt_job",), paper="asrpt")
    register_enrichment(KIND, from_table, uses_cluster=True, adds="model profile, iterations")
    register_reproduction(
        "asrpt-table2",
        "optsched.experiments.asrpt.table2:run",
        paper=KIND,
        quick_seconds=30,
        description="Table II of paper 000: Heavy-Edge vs the exact placement MILP (PITT, PCT) for the VGG19-like "
        "and GPT-like profiles, the paper's figures beside them",
    )
    register_reproduction(
        "asrpt-fig6-9",
        "optsched.experiments.asrpt.repro:run",
        paper=KIND,
        quick_seconds=60,
        description="Fig. 6-9 trends of paper 000 (A-SRPT vs SPJF/SPWF/WCS-*: jobs, single-GPU share, NIC, "
        "predictors) on a small PAI-like cluster, the paper's claims beside them",
    )
    register_reproduction(
        "asrpt-paper",
        "optsched.experiments.asrpt.paper:run",
        paper=KIND,
        quick_seconds=40,
        description="Fig. 6-9 of paper 000 at the paper's scale (250 x 8 GPUs, 37.5k-150k of a 750k-job "
        "PAI-like trace, 5 seeds, the trace's arrival rate and load 0.9), a resumable sweep (hours)",
    )
