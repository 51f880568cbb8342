"""Scheduling to optimise the sojourn time of successful jobs (paper 003, Yao, Paolieri,
Golubchik), kind ``"sojourn"``.

Importing this package registers the instance kind, the algorithms (``sojourn-exact`` with
back ends ``highs``, ``cpsat``, ``dp``, ``enumerate``; ``sojourn-rank``, ``sojourn-serpt``,
``sojourn-sr``, ``sojourn-random``) and the verifier checks. Heavy solver imports happen inside
the functions that need them. See ``formulations/sojourn.md``.

>>> import optsched
>>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
>>> round(optsched.solve(inst, backend="dp").objective, 10)
9.1
"""

from optsched.core.registry import register_kind
from optsched.sojourn.model import KIND, OBJECTIVE, SojournInstance, SojournSchedule, StagedJob

register_kind(KIND, SojournInstance, schema="sojourn.schema.json", objective=OBJECTIVE)

from optsched.sojourn import checks as _checks  # noqa: E402,F401  (registers the verifier checks)
from optsched.sojourn.evaluate import (  # noqa: E402
    enumerate_outcomes,
    expected_sojourn,
    monte_carlo,
    pair_costs,
)
from optsched.sojourn.exact import solve_exact  # noqa: E402
from optsched.sojourn.policies import (  # noqa: E402
    adjacent_pair_violations,
    random_policy,
    rank,
    serpt,
    sr,
)


def _suite_instances():
    from optsched.core.io import load_instance
    from optsched.core.library import instance_path
    from optsched.sojourn.generate import random_instance, workload

    return [
        load_instance(instance_path("toy:sojourn-two-jobs")),
        load_instance(instance_path("toy:sojourn-four-jobs")),
        workload(1, 6, seed=3),
        random_instance(5, seed=11),
    ]


def _register_suite() -> None:
    from optsched.verify.suite import register_suite_instances

    register_suite_instances(KIND, _suite_instances)


_register_suite()


def _register_policies() -> None:
    """The Sec. V online heuristic with each index, in the simulator's policy registry. They read
    the stage sizes and probabilities from ``job.attrs`` (``sizes``, ``probs``)."""
    from functools import partial

    from optsched.sim import register_policy
    from optsched.sojourn.online import StagedOnlinePolicy

    for index, what in (("rank", "RANK (23)"), ("serpt", "SERPT"), ("sr", "SR rank (2)")):
        register_policy(
            f"sojourn-online-{index}",
            partial(StagedOnlinePolicy, index),
            needs=("sizes", "probs"),
            paper="sojourn",
            description=f"Sec. V online heuristic, {what} index, preemptive at checkpoints",
        )


_register_policies()

__all__ = [
    "SojournInstance",
    "SojournSchedule",
    "StagedJob",
    "KIND",
    "OBJECTIVE",
    "pair_costs",
    "expected_sojourn",
    "enumerate_outcomes",
    "monte_carlo",
    "solve_exact",
    "rank",
    "serpt",
    "sr",
    "random_policy",
    "adjacent_pair_violations",
]
