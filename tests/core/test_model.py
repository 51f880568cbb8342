"""Core data model: construction, validation messages, JSON round trip."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import optsched
from optsched.core import Cluster, Instance, Job, Schedule, Segment, Server, load_instance, place
from optsched.core.units import gbit_per_s, to_slots
from optsched.exceptions import InvalidInstanceError, InvalidScheduleError, OptschedError
from tests.strategies import junk, rigid_instances


def test_cluster_basics():
    c = Cluster.homogeneous(3, 4, bandwidth_inter=gbit_per_s(100))
    assert c.total_gpus == 12 and c.n_servers == 3 and c.max_server_gpus == 4
    assert c.bandwidth_inter == pytest.approx(12.5e9)
    assert list(c.gpus) == [4, 4, 4]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"id": 7, "work": 1, "gpus": 0}, ["'gpus'", "job 7", "got 0"]),
        ({"id": 7, "work": -1}, ["'work'", "job 7", "got -1"]),
        ({"id": 7, "work": 1, "arrival": -2}, ["'arrival'", "got -2"]),
        ({"id": 7, "work": "3"}, ["'work'", "got '3'"]),
        ({"id": 7, "work": 1, "gpus": 1.5}, ["'gpus'", "integer"]),
        ({"id": 7, "work": 1, "weight": 0}, ["'weight'", "> 0"]),
        ({"id": 7, "work": float("nan")}, ["'work'", "finite"]),
        ({"id": True, "work": 1}, ["'id'"]),
    ],
)
def test_job_errors_name_field_value_and_owner(kwargs, words):
    with pytest.raises(InvalidInstanceError) as e:
        Job(**kwargs)
    for w in words:
        assert w in str(e.value)


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


def test_empty_cluster_rejected():
    with pytest.raises(InvalidInstanceError, match="empty"):
        Cluster(())
    with pytest.raises(InvalidInstanceError, match="no GPU"):
        Cluster((Server(0),))


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


def test_compact_server_form():
    c = Cluster.from_dict({"servers": {"count": 3, "gpus": 8}})
    assert c.total_gpus == 24


def test_schedule_round_trip_and_queries(tmp_path):
    s = Schedule()
    s.add("a", 0, 2, {0: 2})
    s.add("a", 3, 4, {1: 2})
    s.add("b", 1, 5, {0: 1})
    assert s.completion("a") == 4 and s.start("b") == 1 and s.n_preemptions("a") == 1
    s.to_json(tmp_path / "s.json")
    assert Schedule.load(tmp_path / "s.json") == s
    df = s.to_dataframe()
    assert list(df["job"]) == ["a", "a", "b"]


@pytest.mark.parametrize(
    "bad",
    [
        {"start": 2, "end": 1},
        {"start": 0, "end": 1, "placement": {0: 0}},
        {"start": 0, "end": 1, "placement": {-1: 1}},
        {"start": "x", "end": 1},
    ],
)
def test_segment_errors(bad):
    with pytest.raises(InvalidScheduleError):
        Segment(**bad)


@given(junk)
def test_malformed_job_dicts_raise_only_invalid_instance(value):
    for field in ("work", "gpus", "arrival", "weight", "single_server"):
        d = {"id": 1, "work": 1, field: value}
        with contextlib.suppress(InvalidInstanceError):  # the only acceptable failure
            Job.from_dict(d)


@given(st.dictionaries(st.sampled_from(["cluster", "jobs", "name", "slot", "horizon", "kind", "x"]), junk))
def test_malformed_instance_dicts_raise_only_optsched_errors(doc):
    with contextlib.suppress(OptschedError):
        optsched.core.instance_from_dict(doc)


@given(
    st.lists(st.integers(0, 8), min_size=1, max_size=6),
    st.integers(1, 16),
    st.sampled_from(["consolidate", "first_fit", "least_loaded", "random"]),
    st.booleans(),
)
def test_place_is_within_free_and_exact(free, g, rule, single):
    free = np.array(free)
    pl = place(free, g, rule=rule, single_server=single, rng=np.random.default_rng(0))
    fits = (free.max() >= g) if single else (free.sum() >= g)
    if rule == "consolidate" and not single:
        fits = free.sum() >= g
    assert (pl is not None) == fits
    if pl is not None:
        assert sum(pl.values()) == g
        assert all(0 < v <= free[m] for m, v in pl.items())
        if single:
            assert len(pl) == 1


def test_to_slots():
    assert to_slots(6.0, 2.0) == 3
    with pytest.raises(InvalidInstanceError, match="whole number of slots"):
        to_slots(5.0, 2.0)
    assert to_slots(5.0, 2.0, exact=False) == 3
