"""Rigid GPU jobs on a multi-server cluster (kind ``rigid``): the common problem of the
foundation, its exact models (HiGHS, CP-SAT), list-scheduling heuristics and enumeration.

See ``formulations/rigid.md``.
"""

from optsched.rigid.brute import brute_force_optimum
from optsched.rigid.exact import solve_exact
from optsched.rigid.formulation import build_cpsat, build_time_indexed, slot_data
from optsched.rigid.heuristics import ORDER_RULES, list_schedule
from optsched.rigid.sgs import decode_placements, serial_sgs

__all__ = ["solve_exact", "build_time_indexed", "build_cpsat", "slot_data", "list_schedule", "ORDER_RULES",
           "serial_sgs", "decode_placements", "brute_force_optimum"]
