"""Issue 10 item 1: the shared layers know no kind; the rigid kind, its checks and evaluator are
registered by optsched.rigid, found by the packages present when a kind is first asked for."""

import subprocess
import sys

import optsched
from optsched.core import registry


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_importing_core_and_verify_registers_no_kind_and_no_check():
    out = _run(
        "import optsched.core, optsched.verify, sys\n"
        "from optsched.core.registry import _KINDS\n"
        "from optsched.verify.registry import _CHECKS, _EVALUATORS\n"
        "from optsched.verify.suite import _SUITE\n"
        "print(sorted(_KINDS), sorted(_CHECKS), sorted(_EVALUATORS), sorted(_SUITE), 'optsched.rigid' in sys.modules)"
    )
    assert out == "[] [] [] [] False"


def test_a_rigid_file_loads_and_verifies_without_importing_the_package_first():
    out = _run(
        "from optsched.core import load_instance, Schedule\n"
        "from optsched.core.library import instance_path\n"
        "from optsched.verify import verify, checks_for\n"
        "inst = load_instance(instance_path('toy:rigid-2x2-five'))\n"
        "rep = verify(inst, Schedule())\n"
        "print(inst.kind, rep.ok, [l for l, _ in checks_for('rigid')][:3])"
    )
    assert out == "rigid False ['one_schedule_per_job', 'release', 'demand']"


def test_rigid_registers_its_kind_checks_and_evaluator():
    import optsched.rigid  # noqa: F401
    from optsched.core.objectives import objective_value
    from optsched.rigid.model import KIND_SPEC
    from optsched.verify import checks_for, evaluator_for

    spec = registry.get_kind("rigid")
    assert spec is KIND_SPEC and spec.schema == "rigid.schema.json" and spec.sense == "min"
    assert spec.objective == "total_weighted_completion_time"
    labels = [label for label, _ in checks_for("rigid")]
    assert labels == [
        "one_schedule_per_job",
        "release",
        "demand",
        "no_self_overlap",
        "capacity",
        "resource_capacity",
        "gpu_exclusive",
        "work",
    ]
    assert evaluator_for("rigid") is objective_value


def test_discovery_never_imports_a_shared_layer_or_a_missing_package():
    assert registry.SHARED_PACKAGES is optsched.SHARED_PACKAGES
    assert not registry.discover_kind("sim")
    assert not registry.discover_kind("no_such_kind")
    assert not registry.discover_kind("not a name")
