"""Scheduling to optimise the sojourn time of successful jobs (paper 003, Yao, Paolieri,
Golubchik), kind ``"sojourn"``.

Importing this package registers what :mod:`optsched.sojourn.plugin` declares: the instance kind,
the algorithms (``sojourn-exact`` with back ends ``highs``, ``cpsat``, ``dp``, ``enumerate``;
``sojourn-rank``, ``sojourn-serpt``, ``sojourn-sr``, ``sojourn-random``), the verifier checks and
the online policies. Heavy solver imports happen inside the functions that need them. See
``formulations/sojourn.md``.

>>> import optsched
>>> inst = optsched.load_instance(optsched.toy_path("sojourn-two-jobs"))
>>> round(optsched.solve(inst, backend="dp").objective, 10)
9.1
"""

from optsched.core.plugins import load_plugin
from optsched.sojourn.evaluate import (
    enumerate_outcomes,
    expected_sojourn,
    monte_carlo,
    pair_costs,
)
from optsched.sojourn.exact import solve_exact
from optsched.sojourn.model import KIND, OBJECTIVE, SojournInstance, SojournSchedule, StagedJob
from optsched.sojourn.policies import (
    adjacent_pair_violations,
    random_policy,
    rank,
    serpt,
    sr,
)

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

load_plugin(__name__)
