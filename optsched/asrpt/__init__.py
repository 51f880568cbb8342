"""Paper 000, A-SRPT (Luo, Liu, Lee, Shroff): mixed-parallelism jobs, per-iteration time alpha_i(x),
Heavy-Edge GPU mapping, exact placement, exact Problem (8) and the Lemma 1-3 / Theorem 1 bounds.

Kind ``"asrpt"``. See ``formulations/asrpt.md``. Heavy dependencies (pyomo, ortools, networkx)
load inside the functions that need them.
"""

from optsched.asrpt import checks as _checks
from optsched.asrpt import exact as _exact
from optsched.asrpt.exact import solve_exact
from optsched.asrpt.model import KIND, AsrptInstance, AsrptJob, Stage
from optsched.asrpt.timing import alpha, alpha_max, stage_times
from optsched.core.registry import register_kind

register_kind(KIND, AsrptInstance, schema="asrpt.schema.json", objective=_exact.OBJECTIVE)
_checks.register()

from optsched.asrpt import bounds as _bounds  # noqa: E402

_bounds.register()

from optsched.asrpt import policy as _policy  # noqa: E402  (A-SRPT and the baselines, on optsched.sim)

_policy.register()


def toy_instance(name: str = "asrpt-2x2-three") -> AsrptInstance:
    """Load ``instances/toy/<name>.json`` (validated against the asrpt schema).

    The toy files' known optima were derived with start slots {0, ..., T} (jobs start at t = 0), so a
    toy file that does not set ``metadata.first_slot`` is loaded with ``first_slot = 0``; every other
    instance defaults to the paper's {1, ..., T} (formulations/asrpt.md#slots).

    >>> toy_instance().n_jobs, toy_instance().first_slot
    (3, 0)
    """
    from optsched.core.io import load_instance
    from optsched.core.library import instance_path

    inst = load_instance(instance_path(f"toy:{name}"))
    if "first_slot" not in inst.metadata:
        inst = inst.with_first_slot(0)
    return inst


def _suite():
    return [toy_instance()]


from optsched.verify.suite import register_suite_instances  # noqa: E402

register_suite_instances(KIND, _suite)

__all__ = [
    "solve_exact",
    "AsrptInstance",
    "AsrptJob",
    "Stage",
    "alpha",
    "alpha_max",
    "stage_times",
    "KIND",
    "toy_instance",
]
