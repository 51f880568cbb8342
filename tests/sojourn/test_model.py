"""Instances of kind 'sojourn': validation at the boundary, clear messages, round trips."""

from __future__ import annotations

import json

import pytest

import optsched
from optsched.exceptions import InvalidInstanceError, InvalidScheduleError
from optsched.sojourn.model import SojournInstance, SojournSchedule, StagedJob

TOY = optsched.toy_path("sojourn-two-jobs")


def test_load_toy_and_round_trip(tmp_path):
    inst = optsched.load_instance(TOY)
    assert inst.kind == "sojourn" and inst.n_jobs == 2 and inst.static
    p = tmp_path / "x.json"
    inst.save(p)
    again = optsched.load_instance(p)
    assert again.to_dict() == inst.to_dict()


@pytest.mark.parametrize(
    "sizes, probs, words",
    [
        ([1, 1], [0.5, 0.5], ["'sizes'", "strictly increasing", "cumulative"]),
        ([2, 1], [0.5, 0.5], ["'sizes'", "strictly increasing"]),
        ([0, 1], [0.5, 0.5], ["'sizes[0]'", "> 0", "got 0"]),
        ([1, 2], [0.5, 0.6], ["'probs'", "sum to 1", "1.1"]),
        ([1, 2], [0.0, 1.0], ["'probs[0]'", "> 0"]),
        ([1, 2], [1.5, -0.5], ["'probs[0]'", "<= 1"]),
        ([1, 2, 3], [0.5, 0.5], ["same length", "3 sizes", "2 probabilities"]),
        ([], [], ["'sizes'", "at least one"]),
    ],
)
def test_bad_job_messages_name_field_value_fix(sizes, probs, words):
    with pytest.raises(InvalidInstanceError) as e:
        StagedJob("j7", sizes, probs)
    msg = str(e.value)
    assert "job 'j7'" in msg or "j7" in msg
    for w in words:
        assert w in msg, (w, msg)


def test_probabilities_within_tolerance_are_accepted():
    StagedJob(0, [1, 2, 3], [0.1, 0.2, 0.7 + 5e-10])


def test_duplicate_ids_and_servers():
    j = StagedJob(1, [1], [1.0])
    with pytest.raises(InvalidInstanceError, match="appears twice"):
        SojournInstance((j, j))
    with pytest.raises(InvalidInstanceError, match="'servers'"):
        SojournInstance((j,), servers=0)


def test_schema_errors_from_file(tmp_path):
    doc = json.loads(TOY.read_text())
    doc["jobs"][0]["probs"] = [0.25, 1.75]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InvalidInstanceError, match=r"probs.*<= 1.*sojourn.schema.json"):
        optsched.load_instance(p)
    doc = json.loads(TOY.read_text())
    del doc["jobs"][1]["sizes"]
    p.write_text(json.dumps(doc))
    with pytest.raises(InvalidInstanceError, match="'sizes'"):
        optsched.load_instance(p)
    doc = json.loads(TOY.read_text())
    doc["jobs"][0]["size"] = 3
    p.write_text(json.dumps(doc))
    with pytest.raises(InvalidInstanceError, match="unknown field"):
        optsched.load_instance(p)


def test_static_setting_required_by_exact_evaluation():
    inst = SojournInstance((StagedJob(1, [1], [1.0], arrival=2.0), StagedJob(2, [1], [1.0])))
    from optsched.sojourn.evaluate import pair_costs

    with pytest.raises(InvalidInstanceError, match="one server, every arrival 0"):
        pair_costs(inst)


def test_schedule_files(tmp_path):
    s = SojournSchedule(stages=[(1, 1), (2, 1), (2, 2), (1, 2)])
    s.to_json(tmp_path / "s.json")
    assert SojournSchedule.load(tmp_path / "s.json") == s
    with pytest.raises(InvalidScheduleError, match="exactly one of"):
        SojournSchedule()
    with pytest.raises(InvalidScheduleError, match="pair"):
        SojournSchedule(stages=[(1,)])
    inst = optsched.load_instance(TOY)
    from optsched.sojourn.evaluate import expected_sojourn

    with pytest.raises(InvalidScheduleError, match="every job exactly once"):
        expected_sojourn(inst, [1, 1])
    with pytest.raises(InvalidScheduleError, match="stage 2 of job 1"):
        expected_sojourn(inst, SojournSchedule(stages=[(1, 2), (1, 1), (2, 1), (2, 2)]))


def test_verifier_reports_bad_schedules_by_label():
    inst = optsched.load_instance(TOY)
    rep = optsched.verify(inst, SojournSchedule(order=[1]))
    assert not rep.ok and "permutation" in rep.by_label()
    rep = optsched.verify(inst, SojournSchedule(stages=[(1, 1), (2, 1), (2, 2)]))
    assert not rep.ok and "stage_order" in rep.by_label()
    rep = optsched.verify(inst, SojournSchedule(order=[2, 1]), objective="successful_sojourn_time", claimed=9.1)
    assert not rep.ok and "objective" in rep.by_label()
    assert rep.objectives["successful_sojourn_time"] == pytest.approx(9.75)
