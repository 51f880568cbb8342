"""The rigid kind: non-preemptive rigid GPU jobs on a multi-server cluster (``formulations/rigid.md``).

The instance class is the shared :class:`optsched.core.Instance` (cluster + jobs, the data model
the simulator and the traces use as well); this module registers it as the kind ``"rigid"``,
with its schema and objective. :mod:`optsched.rigid.checks` registers its verifier checks.

Tested in ``tests/verify/test_no_kind.py``.
"""

from __future__ import annotations

from optsched.core.instance import Instance
from optsched.core.registry import KindSpec

KIND = "rigid"
OBJECTIVE = "total_weighted_completion_time"
#: The rigid kind's instance class (the shared cluster instance).
RigidInstance = Instance

KIND_SPEC = KindSpec(
    KIND,
    Instance,
    schema="rigid.schema.json",
    objective=OBJECTIVE,
    sense="min",
    schedule_cls=None,  # optsched.core.Schedule
    description="Rigid GPU jobs, non-preemptive, minimum total weighted completion time",
)
