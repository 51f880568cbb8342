"""Core data model: cluster, job, instance, schedule, result; validation, units, seeds, registries.

``core`` knows nothing above it: no solver, no simulator, no paper.
"""

from optsched.core.cluster import Cluster, Server
from optsched.core.instance import SCHEMA_VERSION, Instance
from optsched.core.io import instance_from_dict, load_instance, save_instance
from optsched.core.job import Job, JobId
from optsched.core.objectives import OBJECTIVES, objective_value
from optsched.core.placement import PLACEMENT_RULES, place
from optsched.core.registry import (
    AlgorithmSpec,
    KindSpec,
    algorithms,
    check_kind,
    default_exact_model,
    get_algorithm,
    get_kind,
    kinds,
    register_algorithm,
    register_kind,
    requires_kind,
)
from optsched.core.result import Result, Status, relative_gap
from optsched.core.schedule import Schedule, Segment
from optsched.core.seeds import SeedLike, as_generator

__all__ = [
    "Cluster",
    "Server",
    "Job",
    "JobId",
    "Instance",
    "SCHEMA_VERSION",
    "Schedule",
    "Segment",
    "Result",
    "Status",
    "relative_gap",
    "load_instance",
    "save_instance",
    "instance_from_dict",
    "OBJECTIVES",
    "objective_value",
    "AlgorithmSpec",
    "algorithms",
    "get_algorithm",
    "get_kind",
    "kinds",
    "register_algorithm",
    "register_kind",
    "KindSpec",
    "check_kind",
    "requires_kind",
    "default_exact_model",
    "SeedLike",
    "as_generator",
    "PLACEMENT_RULES",
    "place",
]
