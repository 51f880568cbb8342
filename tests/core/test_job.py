"""optsched.core.job: a job's fields checked at construction, errors naming field, value and owner."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given

from optsched.core import Job
from optsched.exceptions import InvalidInstanceError
from tests.strategies import junk


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


@given(junk)
def test_malformed_job_dicts_raise_only_invalid_instance(value):
    for field in ("work", "gpus", "arrival", "weight", "single_server"):
        d = {"id": 1, "work": 1, field: value}
        with contextlib.suppress(InvalidInstanceError):  # the only acceptable failure
            Job.from_dict(d)


@pytest.mark.parametrize(
    "make", [lambda v: v, lambda v: __import__("numpy").int64(v), lambda v: __import__("numpy").uint8(v)]
)
def test_numpy_integer_ids_are_ints(make):
    # an id column of a DataFrame gives numpy integers: Job(np.int64(0), ...) was refused
    job = Job(make(3), work=1)
    assert job.id == 3 and type(job.id) is int and job.to_dict()["id"] == 3


def test_a_bool_id_is_refused():
    with pytest.raises(InvalidInstanceError, match="'id'"):
        Job(True, work=1)
