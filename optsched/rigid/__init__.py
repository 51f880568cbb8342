r"""Rigid GPU jobs on a multi-server cluster (kind ``rigid``): the common problem of the
foundation, its exact models (HiGHS, CP-SAT), list-scheduling heuristics and enumeration.

Each job $j$ runs once, without preemption, on $g_j$ GPUs from $S_j \ge r_j$ to
$C_j = S_j + p_j$; the GPUs in use on server $m$ never exceed $G_m$; the objective is
$\min \sum_j w_j C_j$ (``total_weighted_completion_time``).

See ``formulations/rigid.md``. Importing this package registers the kind (:mod:`optsched.rigid.model`),
its verifier checks (:mod:`optsched.rigid.checks`), the algorithms and the suite instances.
"""

from optsched.rigid import checks as _checks
from optsched.rigid import model as _model
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

_model.register()
_checks.register()


def _suite_instances():
    from optsched.core.io import load_instance
    from optsched.core.library import library_root

    toy = library_root() / "toy"
    out = [load_instance(p) for p in sorted(toy.glob("rigid-*.json"))]
    out += [random_instance(5, n_servers=2, gpus_per_server=2, single_server=0.5, seed=s) for s in (1, 2)]
    return out


def _register_suite() -> None:
    from optsched.verify.suite import register_suite_instances

    register_suite_instances("rigid", _suite_instances)


_register_suite()

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
