"""optsched.core.instance: construction, validation messages, JSON round trip, the shipped toys."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
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
def test_malformed_instance_dicts_raise_only_optsched_errors(doc):
    with contextlib.suppress(OptschedError):
        optsched.core.instance_from_dict(doc)


def test_missing_job_is_an_optsched_error_and_still_a_key_error():
    inst = Instance(Cluster.homogeneous(1, 2), [Job(0, work=1)])
    with pytest.raises(optsched.exceptions.UnknownNameError, match="No job with id 7") as e:
        inst.job(7)
    assert isinstance(e.value, KeyError) and isinstance(e.value, OptschedError)
