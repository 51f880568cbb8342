"""Paper 001 (Zhou et al., IEEE TCC): online scheduling of heterogeneous elastic ML jobs, PS and
Ring-AllReduce; exact (2) / (8) over the restricted Gamma_j.

Kind ``"elastic"`` (objective: sum_j w_j c_j, slots, minimised). Importing this package registers
the kind, the verifier checks (2a)-(2o), (15a), (15b), the evaluator, the algorithms and the suite
instances. Pyomo and OR-Tools load inside the exact functions. See ``formulations/elastic.md``.

>>> from optsched.elastic import toy_instance
>>> toy_instance().n_jobs
2
"""

from optsched.core.registry import KindSpec, register_kind
from optsched.elastic.model import (
    KIND,
    OBJECTIVE,
    Assignment,
    ElasticInstance,
    ElasticJob,
    ElasticSchedule,
    PsType,
    WorkerType,
)

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

from optsched.elastic import checks as _checks  # noqa: E402

_checks.register()

from optsched.elastic import policy as _policy  # noqa: E402
from optsched.elastic.baselines import BASELINES, jain_greedy, run_baseline  # noqa: E402  (elastic-fifo, elastic-drf)
from optsched.elastic.direct import solve_direct, solve_direct_maxweight  # noqa: E402
from optsched.elastic.exact import greedy, solve_exact, solve_maxweight  # noqa: E402  (registers the algorithms)
from optsched.elastic.lp import column_generation, solve_dual9, solve_lp8  # noqa: E402
from optsched.elastic.primal_dual import a_maxweight, a_online  # noqa: E402  (registers elastic-online)

_policy.register()  # the baselines as simulator policies (elastic-fifo, ..., elastic-2d-las)


def toy_instance(name: str = "elastic-intro") -> ElasticInstance:
    """Load ``toy:<name>`` from the instance library.

    >>> toy_instance().horizon
    400
    """
    from optsched.core.io import load_instance
    from optsched.core.library import instance_path

    return load_instance(instance_path(f"toy:{name}"))


def _suite():
    return [toy_instance()]


from optsched.verify.suite import register_suite_instances  # noqa: E402

register_suite_instances(KIND, _suite)

__all__ = [
    "solve_exact",
    "solve_maxweight",
    "greedy",
    "solve_direct",
    "solve_direct_maxweight",
    "solve_lp8",
    "solve_dual9",
    "column_generation",
    "a_maxweight",
    "a_online",
    "run_baseline",
    "jain_greedy",
    "BASELINES",
    "ElasticInstance",
    "ElasticJob",
    "ElasticSchedule",
    "Assignment",
    "WorkerType",
    "PsType",
    "KIND",
    "OBJECTIVE",
    "toy_instance",
]
