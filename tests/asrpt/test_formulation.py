"""formulations/asrpt.md documents every verifier label of kind asrpt
(model labels: tests/test_formulation_labels.py)."""

from pathlib import Path

MD = Path(__file__).resolve().parents[2] / "formulations" / "asrpt.md"


def test_verifier_labels_are_documented():
    from optsched.verify import checks_for

    text = MD.read_text(encoding="utf-8")
    for label, _ in checks_for("asrpt"):
        if label in ("one_schedule_per_job", "demand", "no_self_overlap", "resource_capacity", "non_preemptive"):
            continue  # shared cluster checks, documented in formulations/rigid.md; non_preemptive below
        assert f"`{label}`" in text, label
