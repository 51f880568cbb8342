"""optsched.core.job: a job's fields checked at construction, errors naming field, value and owner."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

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


def _valid(field: str, value) -> bool:
    """The documented domain of each field (docs/instances.md#limits), written out here, not
    read from the code under test."""
    if field == "single_server":
        return isinstance(value, bool)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    return {
        "work": 1e-6 <= value <= 1e9,
        "gpus": float(value).is_integer() and 1 <= value <= 10**9,
        "arrival": 0 <= value <= 4e9,
        "weight": 0 < value <= 1e6,
    }[field]


FIELDS = ("work", "gpus", "arrival", "weight", "single_server")


@given(st.sampled_from(FIELDS), junk)
@example("work", 1e-6)  # the ends of each range: in
@example("work", 1e9)
@example("gpus", 1)
@example("arrival", 0)
@example("weight", 1e6)
@example("work", 0.99e-6)  # just out
@example("work", 1.01e9)
@example("gpus", 0)
@example("gpus", 1.5)
@example("arrival", -1e-9)
@example("weight", 0)
@example("work", True)  # a bool is not a number here
@example("single_server", 1)  # nor a number a bool
@example("work", "3")
@example("gpus", None)
def test_malformed_job_dicts_raise_only_invalid_instance(field, value):
    """Junk is refused with an InvalidInstanceError naming the field; a valid value is accepted
    and kept as given."""
    d = {"id": 1, "work": 1, field: value}
    if not _valid(field, value):
        with pytest.raises(InvalidInstanceError) as e:
            Job.from_dict(d)
        assert f"'{field}'" in str(e.value), (field, value, str(e.value))
    else:
        job = Job.from_dict(d)
        assert getattr(job, field) == value and type(getattr(job, field)) is not str


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
