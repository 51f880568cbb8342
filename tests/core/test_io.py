"""optsched.core.io: reading and writing instances and schedules, validated at the boundary, written
atomically, with the content hash that tells a schedule's instance apart."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings

import optsched
from optsched.core import Schedule, instance_from_dict, load_instance, save_instance
from optsched.core.io import (
    atomic_write,
    atomic_write_text,
    instance_fingerprint,
    origin_mismatch,
    read_json,
    require_fields,
    save_schedule,
    schedule_origin,
)
from optsched.exceptions import InvalidInstanceError, InvalidScheduleError
from tests.strategies import rigid_instances


def test_read_json_names_the_file_and_the_fault(tmp_path):
    with pytest.raises(InvalidInstanceError, match="does not exist; check the path"):
        read_json(tmp_path / "missing.json")
    with pytest.raises(InvalidInstanceError, match="cannot be read as UTF-8 text"):
        read_json(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "rigid",\n "jobs": [}')
    with pytest.raises(InvalidInstanceError, match=r"is not valid JSON: .* at line 2, column"):
        read_json(bad)
    with pytest.raises(InvalidScheduleError, match="takes the path of a schedule JSON file"):
        read_json(3, what="schedule")


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        ([1, 2], "must be a JSON object"),
        ({"kind": 3}, "'kind' field of the instance must be a string"),
        ({"kind": "no_such_kind"}, "Unknown instance kind 'no_such_kind'"),
    ],
)
def test_instance_from_dict_refuses_what_is_no_instance(doc, words):
    with pytest.raises(InvalidInstanceError, match=words):
        instance_from_dict(doc)


@settings(max_examples=15, deadline=None)
@given(rigid_instances())
def test_save_and_load_give_the_same_instance_and_the_same_fingerprint(tmp_path_factory, inst):
    path = tmp_path_factory.mktemp("io") / "inst.json"
    save_instance(inst, path)
    back = load_instance(path)
    assert back.to_dict() == inst.to_dict()
    assert instance_fingerprint(back) == instance_fingerprint(inst)


def test_the_fingerprint_ignores_the_name_and_sees_the_data():
    inst = optsched.load_instance("toy:rigid-2x2-five")
    renamed = instance_from_dict({**inst.to_dict(), "name": "other", "metadata": {"note": 1}})
    changed = instance_from_dict({**inst.to_dict(), "jobs": inst.to_dict()["jobs"][:-1]})
    assert instance_fingerprint(renamed)["sha256"] == instance_fingerprint(inst)["sha256"]
    assert instance_fingerprint(changed)["sha256"] != instance_fingerprint(inst)["sha256"]
    assert instance_fingerprint(object())["sha256"] is None


def test_a_schedule_file_remembers_its_instance(tmp_path):
    inst = optsched.load_instance("toy:rigid-2x2-five")
    other = instance_from_dict({**inst.to_dict(), "jobs": inst.to_dict()["jobs"][:-1], "name": "other"})
    sched = Schedule()
    sched.add(0, 0, 1, {0: 1})
    path = save_schedule(sched, tmp_path / "s.json", inst)
    origin = schedule_origin(path)
    assert origin == instance_fingerprint(inst)
    assert origin_mismatch(origin, inst) is None
    assert "not for 'other'" in origin_mismatch(origin, other)
    assert schedule_origin(save_schedule(sched, tmp_path / "plain.json")) is None


def test_atomic_writes_leave_nothing_half_written(tmp_path):
    path = tmp_path / "out.txt"
    atomic_write_text(path, "first")

    def fail(tmp):
        with open(tmp, "w") as f:
            f.write("half")
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        atomic_write(path, fail)
    assert path.read_text() == "first" and os.listdir(tmp_path) == ["out.txt"]


def test_require_fields_names_the_missing_field_and_a_list_that_is_not_one():
    require_fields({"jobs": []}, ("jobs",))
    with pytest.raises(InvalidInstanceError, match="'cluster'"):
        require_fields({"jobs": []}, ("cluster", "jobs"))
    with pytest.raises(InvalidInstanceError, match="'jobs'"):
        require_fields({"jobs": {"a": 1}}, ("jobs",))
    with pytest.raises(InvalidInstanceError):
        require_fields(json.loads("[1]"), ("jobs",))


@pytest.mark.parametrize("n", [0, 1, 7])
def test_a_saved_schedule_reads_back_the_same_with_one_job_per_line(tmp_path, n):
    from optsched.core.io import save_schedule
    from optsched.core.schedule import Schedule
    from optsched.rigid import list_schedule, random_instance

    inst = random_instance(max(n, 1), n_servers=2, gpus_per_server=4, seed=n)
    sched = list_schedule(inst).schedule if n else Schedule({})
    path = save_schedule(sched, tmp_path / "s.json", inst)
    text = path.read_text()
    doc = json.loads(text)
    assert doc["jobs"] == json.loads(json.dumps(sched.to_dict()))["jobs"]
    assert doc["instance"]["name"] == inst.name
    assert Schedule.load(path).to_dict() == sched.to_dict()
    assert len(text.splitlines()) == (5 + n if n else 4)  # {, instance, "jobs": [, one line per job, ], }


def test_paused_gc_restores_the_collector_after_an_error_and_nested_blocks():
    import gc

    from optsched.core.io import paused_gc

    assert gc.isenabled()
    with pytest.raises(ValueError), paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block keeps it paused
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # a collector the caller turned off stays off
    finally:
        gc.enable()
