"""Everything the rigid problem adds to optsched, declared in one place (see :mod:`optsched.core.plugins`):
the kind ``rigid``, its verifier checks and evaluator, its algorithms (``rigid-exact``,
:func:`optsched.rigid.exact.solve_exact`, and ``rigid-<rule>`` for each list-scheduling rule of
:mod:`optsched.rigid.heuristics`) and its suite instances. Tested in ``tests/core/test_plugins.py``
and ``tests/verify/test_no_kind.py``.
"""

from __future__ import annotations

from typing import Any

from optsched.core.io import load_instance
from optsched.core.library import library_root
from optsched.core.objectives import objective_value
from optsched.core.registry import register_algorithm, register_kind
from optsched.rigid.exact import solve_exact
from optsched.rigid.generate import random_instance
from optsched.rigid.heuristics import ORDER_RULES, rule_algorithm
from optsched.rigid.model import KIND, KIND_SPEC
from optsched.solvers import SolveOptions
from optsched.verify import register_cluster_checks, register_evaluator
from optsched.verify.suite import register_suite_instances


def suite_instances() -> list[Any]:
    """The common suite's rigid instances: every shipped ``toy:rigid-*`` and two random ones."""
    toy = library_root() / "toy"
    out = [load_instance(p) for p in sorted(toy.glob("rigid-*.json"))]
    out += [random_instance(5, n_servers=2, gpus_per_server=2, single_server=0.5, seed=s) for s in (1, 2)]
    return out


def register() -> None:
    """Register the rigid kind, its checks (the shared cluster checks, ``work`` at rate 1 included),
    its evaluator, its exact model and list-scheduling rules, and its suite instances."""
    register_kind(KIND_SPEC)
    register_cluster_checks(KIND)
    register_evaluator(KIND, objective_value)
    register_algorithm(
        "rigid-exact",
        KIND,
        exact=True,
        backends=("highs", "cpsat", "auto", "portfolio"),
        suite_options={"options": SolveOptions(time_limit=30, threads=1)},
    )(solve_exact)
    for rule in ORDER_RULES:
        register_algorithm(f"rigid-{rule}", KIND, randomized=(rule == "random"))(rule_algorithm(rule))
    register_suite_instances(KIND, suite_instances)
