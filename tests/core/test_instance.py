"""optsched.core.instance: construction, validation messages, JSON round trip, the shipped toys."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import optsched
from optsched.core import Cluster, Instance, Job, load_instance
from optsched.exceptions import InvalidInstanceError, OptschedError
from tests.strategies import junk, rigid_instances


def test_instance_rejects_job_larger_than_cluster_with_fix():
    c = Cluster.homogeneous(2, 4)
    with pytest.raises(InvalidInstanceError, match=r"'gpus' field of job 3 must be an integer in \[1, 8\]"):
        Instance(c, [Job(3, work=1, gpus=9)])
    with pytest.raises(InvalidInstanceError, match=r"\[1, 4\] \(the largest server\)"):
        Instance(c, [Job(3, work=1, gpus=5, single_server=True)])


def test_instance_rejects_release_after_horizon_and_duplicates():
    c = Cluster.homogeneous(1, 2)
    with pytest.raises(InvalidInstanceError, match="after the instance horizon"):
        Instance(c, [Job(0, work=1, arrival=10)], horizon=5)
    with pytest.raises(InvalidInstanceError, match="appears twice"):
        Instance(c, [Job(0, work=1), Job(0, work=2)])


@given(rigid_instances())
def test_json_round_trip(tmp_path_factory, inst):
    p = tmp_path_factory.mktemp("rt") / "i.json"
    inst.to_json(p)
    back = load_instance(p)
    assert back == inst
    assert back.to_dict() == inst.to_dict()


def test_toy_instances_load_and_carry_optimum(toy_dir):
    files = sorted(toy_dir.glob("rigid-*.json"))
    assert len(files) >= 3
    for f in files:
        inst = optsched.load_instance(f)
        opt = inst.known_optima["total_weighted_completion_time"]
        assert opt["value"] > 0 and "enumeration" in opt["how"]


@given(st.dictionaries(st.sampled_from(["cluster", "jobs", "name", "slot", "horizon", "kind", "x"]), junk))
@example({})
@example({"cluster": {}, "jobs": []})
def test_malformed_instance_dicts_raise_only_optsched_errors(doc):
    """A document of junk values is never an instance (no junk value is a cluster: a cluster
    needs a list of servers), so it is refused, by an InvalidInstanceError naming a field."""
    with pytest.raises(InvalidInstanceError) as e:
        optsched.core.instance_from_dict(doc)
    assert "field" in str(e.value) or "kind" in str(e.value), str(e.value)


def _valid_top_field(doc: dict, field: str, value) -> bool:
    """Whether ``value`` is a valid ``field`` of a rigid document (docs/instances.md), written out
    here, not read from the loader."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return {
        "cluster": False,  # junk has no list of servers
        "jobs": value == [],  # junk lists hold integers, not job objects
        "name": isinstance(value, str),
        "slot": number and 1e-6 <= value <= 1e9,
        "horizon": number and max(j.get("arrival", 0) for j in doc["jobs"]) <= value <= 4e9,
        "kind": value == "rigid",
        "x": False,  # an unknown field
    }[field]


@given(st.sampled_from(["cluster", "jobs", "name", "slot", "horizon", "kind", "x"]), junk)
@example("slot", 1e-6)  # the ends of the ranges: in
@example("slot", 1e9)
@example("horizon", 2)  # the toy's last arrival
@example("slot", 0.99e-6)  # just out
@example("slot", 1.01e9)
@example("horizon", 1.999)
@example("slot", True)
@example("jobs", [])
def test_one_junk_field_in_a_valid_document_is_refused_naming_it(field, value):
    """A shipped rigid toy with one top-level field set to junk: an invalid value is refused with
    an InvalidInstanceError naming the field, a valid one loads and is kept."""
    doc = json.loads(optsched.toy_path("rigid-2x2-five").read_text())
    bad = {**doc, field: value}
    if not _valid_top_field(doc, field, value):
        with pytest.raises(InvalidInstanceError) as e:
            optsched.core.instance_from_dict(bad)
        assert field in str(e.value), (field, value, str(e.value))
        return
    inst = optsched.core.instance_from_dict(bad)
    got = {"jobs": [j.to_dict() for j in inst.jobs], "name": inst.name, "slot": inst.slot, "horizon": inst.horizon}
    assert got.get(field, value) == value, (field, value)


def test_missing_job_is_an_optsched_error_and_still_a_key_error():
    inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=1)])
    with pytest.raises(optsched.exceptions.UnknownNameError, match="No job with id 7") as e:
        inst.job(7)
    assert isinstance(e.value, KeyError) and isinstance(e.value, OptschedError)


@settings(max_examples=80, deadline=None)
@given(
    gpus=st.lists(st.integers(1, 9), min_size=1, max_size=6),
    ids=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    single=st.lists(st.booleans(), min_size=6, max_size=6),
    arrivals=st.lists(st.integers(0, 5), min_size=6, max_size=6),
    horizon=st.one_of(st.none(), st.integers(0, 5)),
)
def test_the_column_check_clears_only_jobs_that_the_one_by_one_check_accepts(gpus, ids, single, arrivals, horizon):
    """Instances check their jobs one by one only when the columns find one that may fail: the
    columns must never clear a job list that the one-by-one check refuses (a repeated id, too
    many GPUs for the cluster or one server, an arrival after the horizon)."""
    cluster = Cluster.homogeneous(2, 4)
    jobs = tuple(Job(ids[k], work=1, gpus=g, arrival=arrivals[k], single_server=single[k]) for k, g in enumerate(gpus))
    inst = Instance(cluster, [Job(0, work=1)], horizon=horizon)
    try:
        inst._check_jobs(jobs)
        refused = False
    except InvalidInstanceError:
        refused = True
    if refused:
        assert not inst._jobs_plainly_fit(jobs)
        with pytest.raises(InvalidInstanceError):
            Instance(cluster, jobs, horizon=horizon)
    else:
        assert Instance(cluster, jobs, horizon=horizon).jobs == jobs
