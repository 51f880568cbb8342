r"""Rigid GPU jobs on a multi-server cluster (kind ``rigid``): the common problem of the
foundation, its exact models (HiGHS, CP-SAT), list-scheduling heuristics and enumeration.

Each job $j$ runs once, without preemption, on $g_j$ GPUs from $S_j \ge r_j$ to
$C_j = S_j + p_j$; the GPUs in use on server $m$ never exceed $G_m$; the objective is
$\min \sum_j w_j C_j$ (``total_weighted_completion_time``).

See ``formulations/rigid.md``. Importing this package registers what :mod:`optsched.rigid.plugin`
declares: the kind, its verifier checks, the algorithms and the suite instances.
"""

from optsched.core.plugins import load_plugin
from optsched.rigid.brute import brute_force_optimum
from optsched.rigid.exact import solve_exact
from optsched.rigid.formulation import (
    build_cpsat,
    build_interval_cpsat,
    build_time_indexed,
    slot_data,
)
from optsched.rigid.generate import random_instance
from optsched.rigid.heuristics import ORDER_RULES, list_schedule
from optsched.rigid.pyjobshop import to_pyjobshop
from optsched.rigid.sgs import decode_placements, serial_sgs

__all__ = [
    "solve_exact",
    "build_time_indexed",
    "build_interval_cpsat",
    "build_cpsat",
    "slot_data",
    "list_schedule",
    "ORDER_RULES",
    "serial_sgs",
    "decode_placements",
    "brute_force_optimum",
    "random_instance",
    "to_pyjobshop",
]

load_plugin(__name__)
