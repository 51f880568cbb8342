"""Independent verification: feasibility checks by equation label, bound checks, the common suite."""

from optsched.verify.common import check_gpu_exclusive, check_non_preemptive, gpu_exclusive_check
from optsched.verify.core import verify, verify_checks, verify_result
from optsched.verify.feasibility import register_cluster_checks, usage_profile
from optsched.verify.registry import checks_for, evaluator_for, register_check, register_evaluator
from optsched.verify.report import Report, Violation

__all__ = [
    "verify",
    "verify_result",
    "verify_checks",
    "Report",
    "Violation",
    "register_check",
    "register_evaluator",
    "checks_for",
    "evaluator_for",
    "register_cluster_checks",
    "usage_profile",
    "check_non_preemptive",
    "check_gpu_exclusive",
    "gpu_exclusive_check",
]
