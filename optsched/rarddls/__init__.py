"""Paper 002, RAR-DDLS (Yu, Ji, Rajan, Liu, MobiHoc '22): ring-all-reduce jobs that slow each other
when they span servers ((6)-(9)), makespan minimization, SJF-BCO (Alg. 1-3), the exact slotted
optimum and the Lemma 2-4 / Theorem 5-6 checks.

Kind ``"rarddls"`` (objective: makespan, in slots). Importing this package registers the kind,
the verifier checks, the algorithms (``rarddls-sjf-bco``, ``rarddls-ff``, ``rarddls-ls``,
``rarddls-rand``, ``rarddls-exact``) and the suite instances. Pyomo loads inside the exact
functions. See ``formulations/rarddls.md``.

>>> from optsched.rarddls import toy_instance, sjf_bco
>>> sjf_bco(toy_instance()).objective
9.0
"""

from optsched.core.registry import KindSpec, register_kind
from optsched.rarddls.model import KIND, OBJECTIVE, RarInstance, RarJob

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

from optsched.rarddls import checks as _checks  # noqa: E402

_checks.register()

from optsched.rarddls import bounds as _bounds  # noqa: E402

_bounds.register()

from optsched.rarddls.evaluate import build_schedule, decisions, replay  # noqa: E402
from optsched.rarddls.exact import solve_exact  # noqa: E402  (registers rarddls-exact)
from optsched.rarddls.sjfbco import first_fit, list_scheduling, random_schedule, sjf_bco  # noqa: E402


def toy_instance(name: str = "rarddls-2x2-three") -> RarInstance:
    """Load ``toy:<name>`` from the instance library.

    >>> toy_instance().n_jobs
    3
    """
    from optsched.core.io import load_instance
    from optsched.core.library import instance_path

    return load_instance(instance_path(f"toy:{name}"))


def _suite():
    return [toy_instance()]


from optsched.verify.suite import register_suite_instances  # noqa: E402

register_suite_instances(KIND, _suite)

__all__ = [
    "RarInstance",
    "RarJob",
    "KIND",
    "OBJECTIVE",
    "toy_instance",
    "solve_exact",
    "replay",
    "build_schedule",
    "decisions",
    "sjf_bco",
    "first_fit",
    "list_scheduling",
    "random_schedule",
]
