"""optsched.core.validation: the field checks every kind's constructors use (value returned, or an
error naming the field, the owner, the allowed range and the value)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.core.validation import check_bool, check_int, check_mapping, check_number
from optsched.exceptions import InvalidInstanceError, InvalidOptionError


@given(st.integers(-100, 100), st.integers(-100, 100), st.integers(-100, 100))
def test_check_int_accepts_exactly_the_integers_in_range(v, lo, hi):
    if lo <= v <= hi:
        assert check_int(v, "n", lo=lo, hi=hi) == v
        assert check_int(float(v), "n", lo=lo, hi=hi) == v  # a whole float is an integer
    else:
        with pytest.raises(InvalidInstanceError, match=rf"'n' field must be an integer in \[{lo}, {hi}\]; got {v}"):
            check_int(v, "n", lo=lo, hi=hi)


@pytest.mark.parametrize("bad", [True, 1.5, "3", None, float("nan"), float("inf")])
def test_check_int_refuses_what_is_no_integer(bad):
    with pytest.raises(InvalidInstanceError, match=r"of job 3 must be an integer >= 1 .*; got"):
        check_int(bad, "gpus", "job 3", lo=1, hint=" (GPUs)")


@given(st.floats(allow_nan=True, allow_infinity=True), st.booleans())
def test_check_number_accepts_exactly_the_finite_numbers_in_range(v, lo_open):
    ok = math.isfinite(v) and (v > 0 if lo_open else v >= 0) and v <= 10
    if ok:
        assert check_number(v, "w", lo=0.0, hi=10.0, lo_open=lo_open) == v
    else:
        with pytest.raises(InvalidInstanceError, match="'w' field must be a finite number"):
            check_number(v, "w", lo=0.0, hi=10.0, lo_open=lo_open)


def test_check_number_allows_inf_only_when_asked_and_raises_the_given_error():
    assert check_number(float("inf"), "limit", allow_inf=True) == math.inf
    with pytest.raises(InvalidOptionError, match="'limit' field of the options must be a finite number <= 5"):
        check_number(7, "limit", "the options", hi=5, exc=InvalidOptionError)
    with pytest.raises(InvalidInstanceError):
        check_number(True, "limit")


def test_check_bool_and_check_mapping():
    assert check_bool(False, "flag") is False
    with pytest.raises(InvalidInstanceError, match="'flag' field must be true or false; got 1"):
        check_bool(1, "flag")
    assert check_mapping(None, "meta") == {} and check_mapping({"a": 1}, "meta") == {"a": 1}
    with pytest.raises(InvalidInstanceError, match=r"'meta' field of x must be an object \(mapping\); got \[1\]"):
        check_mapping([1], "meta", "x")
