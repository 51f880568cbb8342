"""Baseline online policies: FIFO, SJF (:mod:`.baselines`), SRTF (preemptive, :mod:`.preemptive`),
periodic SRTF (:mod:`.periodic`) and LAS (preemptive, quantum-based, :mod:`.las`).

Each takes a placement rule (``consolidate``, ``first_fit``, ``least_loaded``, ``random``,
``whole_node``) and ``backfill`` (default true: when the best waiting job does not fit, later jobs
that fit may start; false: strict order, the head of the queue blocks everyone behind it). The
preemptive ones follow the rules R1-R12 (:mod:`optsched.sim.rules`); the claims they make are
:mod:`.claims`. Importing this package registers them (``get_policy("srtf")``).
"""

from optsched.sim.policies.baselines import FIFO, SJF, WaitQueue
from optsched.sim.policies.las import LAS
from optsched.sim.policies.periodic import PeriodicSRTF
from optsched.sim.policies.preemptive import SRTF
from optsched.sim.policy import Policy
from optsched.sim.registry import get_policy, register_policy

__all__ = ["FIFO", "SJF", "SRTF", "LAS", "PeriodicSRTF", "POLICIES", "get_policy", "WaitQueue"]

POLICIES: dict[str, type[Policy]] = {"fifo": FIFO, "sjf": SJF, "srtf": SRTF, "las": LAS, "srtf-periodic": PeriodicSRTF}
"""The baseline policies (every registered policy: :func:`optsched.sim.policy_registry`)."""

for _name, _cls in POLICIES.items():
    register_policy(_name, _cls)
