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


# -- jobs_from_dicts: the column-by-column reading gives the jobs (or the error) of one at a time


def _one_at_a_time(rows):
    try:
        return tuple(Job.from_dict(d, i) for i, d in enumerate(rows))
    except (InvalidInstanceError, OverflowError) as e:  # OverflowError: an int beyond float, in both
        return f"{type(e).__name__}: {e}"


def _columns(rows):
    from optsched.core.job import jobs_from_dicts

    try:
        return jobs_from_dicts(rows)
    except (InvalidInstanceError, OverflowError) as e:
        return f"{type(e).__name__}: {e}"


_values = st.one_of(
    st.integers(-3, 10),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=2),
    st.just(10**400),
    st.just(2e9),
    st.just(5e9),
)
_rows = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "id": st.one_of(st.integers(0, 5), st.text(max_size=2), _values),
                "work": st.one_of(st.integers(1, 9), st.floats(1e-6, 1e9), _values),
            },
            optional={
                "gpus": st.one_of(st.integers(1, 8), _values),
                "arrival": st.one_of(st.floats(0, 100), _values),
                "weight": st.one_of(st.floats(0.5, 3), _values),
                "single_server": st.one_of(st.booleans(), _values),
                "load_time": st.floats(0, 5),
                "resources": st.just({"cpu": 2}),
                "extra": st.just(1),
            },
        ),
        st.dictionaries(st.sampled_from(["id", "work", "gpus"]), st.integers(0, 3), max_size=3),
        st.just([1, 2]),
    ),
    max_size=8,
)


@given(_rows)
@example([{"id": 0, "work": 1}, {"id": 1, "work": 0}])  # the second job's work: 'work' of job 1
@example([{"id": 0, "work": 1, "gpus": True}])  # a bool is not a GPU count
@example([{"id": 0, "work": 10**400}])  # beyond float: one at a time, as before
@example([{"id": 0, "work": 1, "arrival": 4e9}, {"id": 1, "work": 1, "arrival": 4.000001e9}])
def test_jobs_from_dicts_reads_what_one_at_a_time_reads_and_raises_the_same_error(rows):
    fast, slow = _columns(rows), _one_at_a_time(rows)
    assert fast == slow
    if not isinstance(slow, str):
        for a, b in zip(fast, slow, strict=True):
            assert [type(getattr(a, f)) for f in ("id", "work", "gpus", "arrival", "weight")] == [
                type(getattr(b, f)) for f in ("id", "work", "gpus", "arrival", "weight")
            ]
